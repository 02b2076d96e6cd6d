//! The inspector in a real browser: starts `doecs run --inspect` on a free
//! loopback port and runs `crates/doecs-inspect/browser-test/test.mjs`,
//! which drives headless Chromium (playwright-core) and checks that the
//! archetype table and one entity's detail show the world's real data.
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
    // Long enough for the test, paced so it leaves the cores to the browser.
    let (_doecs, url) = start_inspected(&[
        "run",
        "--inspect",
        "127.0.0.1:0",
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
