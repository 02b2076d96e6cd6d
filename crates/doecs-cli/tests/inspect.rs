//! `doecs run --inspect` end to end, without a browser: the address is
//! printed, the JSON API shows the running world, pause and step hold the
//! simulation between frames, edits need `--inspect-write`, the end-of-run
//! report counts the inspector's cost, and bad options are one-line errors.

mod common;

use common::{get_json, http, start_inspected};
use std::time::{Duration, Instant};

fn frame(url: &str) -> u64 {
    get_json(url, "/api/controls")["frame"].as_u64().unwrap()
}

#[test]
fn serves_the_running_world_read_only() {
    let (_doecs, url) = start_inspected(&[
        "run",
        "--ships",
        "10",
        "--frames",
        "1000000",
        "--fps",
        "200",
        "-q",
        "--inspect",
        "127.0.0.1:0",
    ]);
    let world = get_json(&url, "/api/world");
    assert_eq!(world["entities"], 130);
    assert_eq!(world["write"], false);
    let ship = get_json(&url, "/api/entity/0v0");
    let names: Vec<&str> = ship["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mass", "position", "velocity", "Name"]);
    assert_eq!(ship["components"][1]["kind"], "json");
    assert_eq!(ship["children_total"], 4);
    let child = ship["children"][0]["id"].as_str().unwrap().to_owned();
    let part = get_json(&url, &format!("/api/entity/{child}"));
    assert_eq!(part["parent"]["id"], "0v0");
    let q = get_json(&url, "/api/query?with=spin&limit=5");
    assert_eq!(q["total"], 120);
    // The system list comes from the frames' reports: on a loaded machine
    // the first frame may not have finished yet.
    let deadline = Instant::now() + Duration::from_secs(20);
    let s = loop {
        let s = get_json(&url, "/api/systems?last=10");
        if !s["frames"].as_array().unwrap().is_empty() {
            break s;
        }
        assert!(Instant::now() < deadline, "no frame ran");
        std::thread::sleep(Duration::from_millis(5));
    };
    let systems: Vec<&str> = s["systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        systems,
        [
            "gravity_drag",
            "integrate",
            "spin_parts",
            "ship_transforms",
            "propagate"
        ]
    );
    assert!(s["plan"].as_str().unwrap().contains("stage 0"));

    // Pause holds the frames; step runs exactly one.
    assert_eq!(http(&url, "POST", "/api/controls/pause", "").0, 200);
    let f0 = frame(&url);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(frame(&url), f0);
    assert_eq!(http(&url, "POST", "/api/controls/step", "").0, 200);
    let deadline = Instant::now() + Duration::from_secs(20);
    while frame(&url) == f0 {
        assert!(Instant::now() < deadline, "the step never ran");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(frame(&url), f0 + 1);
    assert_eq!(http(&url, "POST", "/api/controls/resume", "").0, 200);

    // Read-only: edits are refused.
    let (status, _) = http(&url, "PUT", "/api/entity/0v0/components/mass", "2.0");
    assert_eq!(status, 403);
    assert_eq!(http(&url, "DELETE", "/api/entity/0v0", "").0, 403);
    assert_eq!(http(&url, "GET", "/api/entity/999999v0", "").0, 404);
    let (status, page) = http(&url, "GET", "/", "");
    assert_eq!(status, 200);
    assert!(page.contains("doecs inspector"));
}

#[test]
fn edits_with_inspect_write() {
    let (_doecs, url) = start_inspected(&[
        "run",
        "--ships",
        "10",
        "--frames",
        "1000000",
        "--fps",
        "200",
        "-q",
        "--inspect-write",
        "--inspect=127.0.0.1:0",
    ]);
    assert_eq!(get_json(&url, "/api/world")["write"], true);
    assert_eq!(http(&url, "POST", "/api/controls/pause", "").0, 200);
    let (status, body) = http(
        &url,
        "PUT",
        "/api/entity/0v0/components/position",
        "[1,2,3]",
    );
    assert_eq!(status, 200, "{body}");
    let ship = get_json(&url, "/api/entity/0v0");
    assert_eq!(
        ship["components"][1]["value"],
        serde_json::json!([1.0, 2.0, 3.0])
    );
    let (status, _) = http(&url, "PUT", "/api/entity/0v0/components/mass", "\"heavy\"");
    assert_eq!(status, 422);
    assert_eq!(http(&url, "DELETE", "/api/entity/1v0", "").0, 200);
    assert_eq!(http(&url, "GET", "/api/entity/1v0", "").0, 404);
    // The level's hierarchy is ChildOf: the ship goes with its 12 parts.
    assert_eq!(get_json(&url, "/api/world")["entities"], 130 - 13);
    assert_eq!(http(&url, "POST", "/api/controls/resume", "").0, 200);
}

#[test]
fn the_report_counts_the_inspectors_time() {
    let (doecs, url) = start_inspected(&[
        "run",
        "--ships",
        "10",
        "--frames",
        "200",
        "--fps",
        "50",
        "-q",
        "--inspect",
        "127.0.0.1:0",
    ]);
    get_json(&url, "/api/world");
    get_json(&url, "/api/archetypes");
    let rest = doecs.finish(Duration::from_secs(120));
    assert!(rest.contains("frames 200:"), "{rest}");
    let line = rest
        .lines()
        .find(|l| l.starts_with("inspector: "))
        .unwrap_or_else(|| panic!("no inspector line: {rest}"));
    assert!(line.contains("requests answered between frames"), "{line}");
}

#[test]
fn bad_inspector_options_are_one_line_errors() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_doecs"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        "run",
        "--ships",
        "1",
        "--frames",
        "1",
        "-q",
        "--inspect",
        "no-such-host-:x",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid inspector address"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let out = run(&["run", "--ships", "1", "--frames", "1", "--fps", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--fps must be between 0.001 and 10000"));
}
