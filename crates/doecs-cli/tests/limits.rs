//! Hostile arguments and inputs end to end: frame counts past the limit,
//! frame rates whose time per frame a `Duration` cannot hold, endless
//! devices and files over `--max-input-bytes` as levels, blobs and saves.
//! Each is refused quickly with one line on stderr and exit status 1: no
//! panic, no abort, no memory filled.

mod common;

use common::run::{assert_ok, assert_one_line_error, doecs_within, s, temp_dir, text};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// Long enough for a debug build on a busy machine; a refusal takes
/// milliseconds.
const QUICK: Duration = Duration::from_secs(30);

/// Runs the binary within [`QUICK`].
fn doecs(args: &[&str]) -> Output {
    doecs_within(QUICK, None, args)
}

#[test]
fn frame_counts_past_the_limit_are_refused_at_once() {
    for frames in ["18446744073709551615", "1000000000000", "1000000001"] {
        for args in [
            &["--ships", "2", "-q", "--frames", frames][..],
            &["run", "--ships", "2", "-q", "--frames", frames],
            &[
                "run",
                "--ships",
                "2",
                "-q",
                "--rollback",
                "2",
                "--frames",
                frames,
            ],
        ] {
            let out = doecs(args);
            assert_one_line_error(
                &out,
                &format!("--frames must be at most 1000000000, got {frames}"),
            );
            assert!(text(&out.stdout).is_empty(), "refused before running");
        }
    }
}

#[test]
fn frame_rates_out_of_range_are_refused() {
    for (fps, shown) in [
        ("1e-20", "1e-20"),
        ("5e-324", "5e-324"),
        ("0.0009", "0.0009"),
        ("0", "0.0"),
        ("1e9", "1000000000.0"),
        ("inf", "inf"),
        ("NaN", "NaN"),
    ] {
        for args in [
            &["--ships", "2", "-q", "--frames", "1", "--fps", fps][..],
            &[
                "run",
                "--ships",
                "2",
                "-q",
                "--frames",
                "2",
                "--rollback",
                "1",
                "--fps",
                fps,
            ],
        ] {
            assert_one_line_error(
                &doecs(args),
                &format!("--fps must be between 0.001 and 10000, got {shown}"),
            );
        }
    }
}

#[cfg(unix)]
#[test]
fn endless_devices_are_refused_at_the_input_limit() {
    for device in ["/dev/zero", "/dev/urandom"] {
        let refused = format!("error: {device} is larger than the limit of 4096 bytes");
        for args in [
            &[device, "--max-input-bytes", "4096", "-q"][..],
            &["run", device, "--max-input-bytes", "4096", "-q"],
            &["run", "--load", device, "--max-input-bytes", "4096", "-q"],
            &["inspect", device, "--max-input-bytes", "4096"],
            &[
                "compile",
                device,
                "-o",
                "/dev/null",
                "--max-input-bytes",
                "4096",
            ],
        ] {
            let out = doecs(args);
            assert_one_line_error(&out, &refused);
            assert!(
                text(&out.stderr).contains("(raise it with --max-input-bytes)"),
                "{}",
                text(&out.stderr)
            );
        }
    }
}

#[test]
fn files_one_byte_over_the_limit_are_refused_and_at_it_read() {
    let dir = temp_dir("over-by-one");
    let json = dir.join("level.json");
    let blob = dir.join("level.doecs");
    let save = dir.join("world.doecs");
    assert_ok(&doecs(&["demo-level", "-o", s(&json), "--ships", "3"]));
    assert_ok(&doecs(&["compile", s(&json), "-o", s(&blob)]));
    assert_ok(&doecs(&[
        "run",
        s(&blob),
        "--frames",
        "2",
        "-q",
        "--save",
        s(&save),
    ]));
    let len = |p: &Path| std::fs::metadata(p).unwrap().len();
    let (json_len, blob_len, save_len) = (len(&json), len(&blob), len(&save));
    let at = |n: u64| n.to_string();
    let under = |n: u64| (n - 1).to_string();
    let refused = |p: &Path, n: u64| {
        format!(
            "error: {} is larger than the limit of {} bytes",
            p.display(),
            n - 1
        )
    };
    let out_blob = dir.join("again.doecs");

    // The JSON level, to `compile` and to `run`.
    let compile = |limit: &str| {
        doecs(&[
            "compile",
            s(&json),
            "-o",
            s(&out_blob),
            "--max-input-bytes",
            limit,
        ])
    };
    assert_one_line_error(&compile(&under(json_len)), &refused(&json, json_len));
    assert_ok(&compile(&at(json_len)));
    let run = |level: &Path, limit: &str| {
        doecs(&[
            "run",
            s(level),
            "--frames",
            "3",
            "-q",
            "--max-input-bytes",
            limit,
        ])
    };
    assert_one_line_error(&run(&json, &under(json_len)), &refused(&json, json_len));
    assert_ok(&run(&json, &at(json_len)));

    // The blob, to `inspect` and to `run` (the report keeps its percentiles).
    let inspect = |limit: &str| doecs(&["inspect", s(&blob), "--max-input-bytes", limit]);
    assert_one_line_error(&inspect(&under(blob_len)), &refused(&blob, blob_len));
    assert_ok(&inspect(&at(blob_len)));
    assert_one_line_error(&run(&blob, &under(blob_len)), &refused(&blob, blob_len));
    let report = assert_ok(&run(&blob, &at(blob_len)));
    assert!(
        report.contains("frames 3: mean ")
            && report.contains(" ms, p50 ")
            && report.contains(" ms, p90 ")
            && report.contains(" ms, p99 ")
            && report.contains(" ms, max "),
        "{report}"
    );

    // The save, to `--load` (the top-level command takes the flag too).
    let load = |limit: &str| {
        doecs(&[
            "--load",
            s(&save),
            "--frames",
            "2",
            "-q",
            "--max-input-bytes",
            limit,
        ])
    };
    assert_one_line_error(&load(&under(save_len)), &refused(&save, save_len));
    assert_ok(&load(&at(save_len)));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn help_documents_the_input_limit() {
    for sub in ["compile", "inspect", "run"] {
        let help = assert_ok(&doecs(&[sub, "--help"]));
        assert!(
            help.contains("--max-input-bytes <BYTES>") && help.contains("[default: 2147483648]"),
            "{sub}: {help}"
        );
    }
}
