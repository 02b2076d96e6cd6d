//! `doecs run --rollback N` end to end: the sync test passes on the demo
//! level at two threads and prints its figures; bad values are one-line
//! errors.

mod common;

use common::run::{assert_one_line_error, doecs, text};

#[test]
fn rollback_sync_test_passes_on_the_demo_level() {
    let out = doecs(&[
        "run",
        "--frames",
        "30",
        "--rollback",
        "4",
        "--threads",
        "2",
        "--quiet",
        "--ships",
        "20",
    ]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "stderr: {}\nstdout: {stdout}",
        text(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("rollback 4:"))
        .unwrap_or_else(|| panic!("no rollback line in {stdout}"));
    assert!(line.contains("27 frames checked, hashes equal"), "{line}");
    for part in [
        "snapshot",
        "restore",
        "re-simulate 4 frames",
        "forward frame",
    ] {
        assert!(line.contains(part), "{part:?} in {line}");
    }
    // The usual report is there too.
    assert!(stdout.contains("frames 30: mean"), "{stdout}");
    assert!(stdout.contains("260 entities"), "{stdout}");
}

#[test]
fn rollback_zero_is_an_error() {
    assert_one_line_error(
        &doecs(&["run", "--frames", "5", "--rollback", "0", "-q"]),
        "--rollback must be at least 1",
    );
}

#[test]
fn rollback_values_out_of_range_are_errors() {
    assert_one_line_error(
        &doecs(&["run", "--frames", "5", "--rollback", "1001", "-q"]),
        "limit of 1000",
    );
    assert_one_line_error(
        &doecs(&["run", "--frames", "3", "--rollback", "8", "-q"]),
        "at least 8 frames",
    );
    assert_one_line_error(
        &doecs(&[
            "run",
            "--frames",
            "3",
            "--rollback",
            "2",
            "--inspect=127.0.0.1:0",
            "-q",
        ]),
        "--inspect",
    );
}

#[test]
fn rollback_runs_on_a_level_with_prefabs() {
    // The built-in `Prefab` tag snapshots with no registration, and the
    // demo's registry installs over a world that already used it.
    let dir = std::env::temp_dir().join(format!("doecs-rollback-prefab-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let level = dir.join("prefabs.json");
    std::fs::write(
        &level,
        r#"{"entities": [
            {"name": "crate", "components": {"prefab": true, "mass": 5.0, "position": [0, 0, 0]}},
            {"components": {"is_a": "crate", "position": [1, 0, 0]}},
            {"components": {"is_a": "crate", "position": [2, 0, 0], "mass": 7.0}}
        ]}"#,
    )
    .unwrap();
    let out = doecs(&[
        "run",
        level.to_str().unwrap(),
        "--frames",
        "10",
        "--rollback",
        "2",
        "--quiet",
    ]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "stderr: {}\nstdout: {stdout}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains("rollback 2: 9 frames checked, hashes equal"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
