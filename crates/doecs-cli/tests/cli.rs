//! The `doecs` binary end to end: help everywhere, the compile → inspect →
//! run flow on files, and one-line errors with a non-zero exit.

use std::path::PathBuf;
use std::process::{Command, Output};

fn doecs(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doecs"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("doecs-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Asserts a failure with exactly one line on stderr, no panic text.
fn assert_one_line_error(out: &Output, contains: &str) {
    assert_eq!(out.status.code(), Some(1), "stderr: {}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(
        err.contains(contains),
        "{err:?} should contain {contains:?}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}

#[test]
fn help_works_for_every_subcommand() {
    for args in [
        vec!["--help"],
        vec!["compile", "--help"],
        vec!["inspect", "--help"],
        vec!["run", "--help"],
        vec!["demo-level", "--help"],
    ] {
        let out = doecs(&args);
        assert!(out.status.success(), "{args:?}");
        assert!(text(&out.stdout).contains("Usage: doecs"), "{args:?}");
    }
}

#[test]
fn compile_inspect_run_flow() {
    let dir = temp_dir("flow");
    let json = dir.join("level.json");
    let blob = dir.join("level.doecs");
    let out = doecs(&["demo-level", "-o", json.to_str().unwrap(), "--ships", "20"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("260 entities"));

    let out = doecs(&[
        "compile",
        json.to_str().unwrap(),
        "-o",
        blob.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("260 entities, 6 component types"),
        "{}",
        text(&out.stdout)
    );

    let out = doecs(&["inspect", blob.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("entities: 260 (20 roots), hierarchy depth 3"),
        "{s}"
    );
    let transform_line = s
        .lines()
        .find(|l| l.trim_start().starts_with("transform"))
        .unwrap();
    let cols: Vec<&str> = transform_line.split_whitespace().collect();
    assert_eq!(cols, ["transform", "260", "64", "16640"]);
    assert!(s.contains("spin"), "{s}");
    let data_line = s
        .lines()
        .find(|l| l.trim_start().starts_with("data"))
        .unwrap();
    assert_eq!(
        data_line.split_whitespace().nth(1),
        Some("20"),
        "{data_line}"
    );

    for level in [&blob, &json] {
        let out = doecs(&[
            "run",
            level.to_str().unwrap(),
            "--frames",
            "5",
            "--threads",
            "2",
            "-q",
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let s = text(&out.stdout);
        assert!(s.contains("260 entities"), "{s}");
        for row in [
            "gravity+drag",
            "integrate",
            "gather locals",
            "transform update",
            "p99",
        ] {
            assert!(s.contains(row), "{row} missing in {s}");
        }
        let update = s
            .lines()
            .find(|l| l.starts_with("transform update"))
            .unwrap();
        assert_eq!(update.split_whitespace().nth(2), Some("260"), "{update}");
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn no_arguments_runs_the_bundled_level_options() {
    let out = doecs(&["--ships", "5", "--frames", "3", "-q"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("bundled demo level (5 ships): 65 entities"),
        "{s}"
    );
    assert!(s.contains("frames 3:"), "{s}");
}

#[test]
fn errors_are_one_line_with_exit_code_one() {
    let dir = temp_dir("errors");
    assert_one_line_error(
        &doecs(&["inspect", dir.join("missing.doecs").to_str().unwrap()]),
        "cannot read",
    );
    let bad_json = dir.join("bad.json");
    std::fs::write(
        &bad_json,
        r#"{"entities":[{"components":{"mass":"heavy"}}]}"#,
    )
    .unwrap();
    assert_one_line_error(
        &doecs(&["compile", bad_json.to_str().unwrap()]),
        "component `mass`",
    );
    let blob = dir.join("good.doecs");
    std::fs::write(&bad_json, r#"{"entities":[{"components":{"mass":2}}]}"#).unwrap();
    assert!(doecs(&[
        "compile",
        bad_json.to_str().unwrap(),
        "-o",
        blob.to_str().unwrap()
    ])
    .status
    .success());
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[8] = 7;
    std::fs::write(&blob, &bytes).unwrap();
    assert_one_line_error(
        &doecs(&["inspect", blob.to_str().unwrap()]),
        "header.version at byte 8",
    );
    assert_one_line_error(
        &doecs(&["run", blob.to_str().unwrap(), "-q"]),
        "unsupported format version 7",
    );
    assert_one_line_error(
        &doecs(&["run", "--frames", "0"]),
        "--frames must be at least 1",
    );
    std::fs::remove_dir_all(dir).ok();
}
