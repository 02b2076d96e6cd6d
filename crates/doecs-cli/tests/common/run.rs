//! Helpers for the tests that run the `doecs` binary to completion: run it
//! (with a time limit where bad input must be refused, not run), read its
//! output, and assert a one-line error or a success.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary with `args` and waits for it.
pub fn doecs(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doecs"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the binary runs")
}

/// Runs the binary in `dir` and fails the test (killing it) if it takes
/// longer than `limit`: bad input must be refused, not hang.
pub fn doecs_within(limit: Duration, dir: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_doecs"));
    cmd.args(args)
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().expect("the binary runs");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("doecs {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh folder for one test's files.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("doecs-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A path as an argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Asserts a failure with exactly one line on stderr, no panic text.
#[track_caller]
pub fn assert_one_line_error(out: &Output, contains: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
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

/// Asserts a success and returns stdout.
#[track_caller]
pub fn assert_ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}
