//! The inspector in a real browser: starts `doecs run --inspect-write` on a
//! free loopback port and runs `crates/doecs-inspect/browser-test/test.mjs`,
//! which drives headless Chromium (playwright-core) and checks that every
//! panel shows the world's real data and that the editors edit it. The
//! level is the demo level with two prefabs and their instances added
//! (`drone`, `beacon`), so the prefab panel has something to list.
//!
//! Runs only with `DOECS_BROWSER_TEST=1` (set by
//! `crates/doecs-inspect/browser-test/run.sh`, which installs Chromium and
//! the npm package when missing, and by CI through it), so a plain `cargo
//! test` on a machine without a browser skips it. With the variable set, a
//! missing browser or npm package is a failure. The screenshot goes to
//! `DOECS_SCREENSHOT` (default: `inspector.png` in Cargo's temporary
//! directory for tests).

mod common;

use common::start_inspected;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn the_page_shows_the_worlds_real_data() {
    if std::env::var("DOECS_BROWSER_TEST").as_deref() != Ok("1") {
        eprintln!(
            "skipped: set DOECS_BROWSER_TEST=1 to run the browser test \
             (crates/doecs-inspect/browser-test/run.sh does)"
        );
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../doecs-inspect/browser-test");
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "DOECS_BROWSER_TEST=1 but no browser at {chromium}: apt-get install chromium (run.sh does)"
    );
    assert!(
        dir.join("node_modules/playwright-core").exists(),
        "DOECS_BROWSER_TEST=1 but playwright-core is not installed: npm ci in {} (run.sh does)",
        dir.display()
    );
    let screenshot = std::env::var_os("DOECS_SCREENSHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspector.png"));
    let screenshot = std::path::absolute(&screenshot).expect("a path");
    let level = level_with_prefabs();
    // Long enough for the test, paced so it leaves the cores to the browser.
    let (_doecs, url) = start_inspected(&[
        "run",
        level.to_str().expect("a UTF-8 path"),
        "--inspect=127.0.0.1:0",
        "--inspect-write",
        "--frames",
        "1000000",
        "--fps",
        "30",
        "-q",
    ]);
    let out = Command::new("node")
        .arg("test.mjs")
        .arg(&url)
        .arg(&screenshot)
        .current_dir(&dir)
        .env("CHROMIUM", &chromium)
        .output()
        .expect("node runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(out.status.success(), "the browser test failed:\n{text}");
    assert!(
        screenshot.exists(),
        "no screenshot at {}",
        screenshot.display()
    );
}

/// Prefabs and instances added to the demo level: a `drone` prefab with
/// five instances, a `beacon` with one.
const PREFABS: &str = r#"{"name":"drone","components":{"prefab":true,"mass":2.0,"position":[0,50,0],"velocity":[0,0,0]}},
{"name":"drone1","components":{"is_a":"drone"}},
{"name":"drone2","components":{"is_a":"drone"}},
{"name":"drone3","components":{"is_a":"drone"}},
{"name":"drone4","components":{"is_a":"drone"}},
{"name":"drone5","components":{"is_a":"drone"}},
{"name":"beacon","components":{"prefab":true,"spin":0.5}},
{"name":"beacon1","components":{"is_a":"beacon"}}"#;

/// The demo level (`doecs demo-level`, 1,000 ships) with [`PREFABS`]
/// appended, written to Cargo's temporary directory for tests.
fn level_with_prefabs() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let demo = dir.join("browser-demo.json");
    let made = Command::new(env!("CARGO_BIN_EXE_doecs"))
        .args(["demo-level", "--ships", "1000", "-o"])
        .arg(&demo)
        .output()
        .expect("doecs runs");
    assert!(made.status.success(), "{made:?}");
    let text = std::fs::read_to_string(&demo).expect("the demo level");
    let body = text
        .trim_end()
        .strip_suffix("]}")
        .expect("the level ends its entity list");
    let level = dir.join("browser-level.json");
    std::fs::write(&level, format!("{body},\n{PREFABS}]}}")).expect("writes");
    level
}
