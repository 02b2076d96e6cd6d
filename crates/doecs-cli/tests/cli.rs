//! The `doecs` binary end to end: help everywhere, the compile → inspect →
//! run flow on files, and one-line errors with a non-zero exit.

mod common;

use common::run::{assert_one_line_error, doecs, doecs_within, temp_dir, text};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// `doecs compile json -o blob`.
fn compile_to(json: &Path, blob: &Path) -> Output {
    doecs(&[
        "compile",
        json.to_str().unwrap(),
        "-o",
        blob.to_str().unwrap(),
    ])
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

    let out = compile_to(&json, &blob);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("260 entities, 7 component types"),
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
        // The frame is a schedule of function systems; the table has one
        // row per system, in the order they were added.
        let rows = [
            "gravity_drag",
            "integrate",
            "spin_parts",
            "ship_transforms",
            "propagate",
        ];
        let mut last = 0;
        for row in rows {
            let at = s
                .find(&format!("\n{row} "))
                .unwrap_or_else(|| panic!("{row} missing in {s}"));
            assert!(at > last, "{row} out of order in {s}");
            last = at;
        }
        assert!(s.contains("p99"), "{s}");
        assert!(s.contains("mean height of point masses"), "{s}");
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
    assert!(compile_to(&bad_json, &blob).status.success());
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

const QUICK: Duration = Duration::from_secs(30);

#[test]
fn too_many_threads_are_refused_with_the_limit() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let limit = (4 * cores).min(1024);
    for args in [
        &["run", "--threads", "100000", "--frames", "1", "-q"][..],
        &["--threads", "100000", "--frames", "1", "-q"],
    ] {
        let out = doecs_within(QUICK, None, args);
        assert_one_line_error(
            &out,
            &format!("--threads 100000 is more than the limit of {limit} ("),
        );
        if limit < 1024 {
            assert!(
                text(&out.stderr).contains(&format!("(4 × the {cores} cores here)")),
                "{}",
                text(&out.stderr)
            );
        }
    }
    let at_limit = limit.to_string();
    let out = doecs_within(
        QUICK,
        None,
        &[
            "run",
            "--threads",
            &at_limit,
            "--ships",
            "2",
            "--frames",
            "2",
            "-q",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("on {limit} threads")));
    let help = text(&doecs(&["run", "--help"]).stdout);
    assert!(
        help.contains("at most 4 × the cores, never more than 1024"),
        "{help}"
    );
}

#[test]
fn ships_beyond_the_limit_are_refused_quickly() {
    let dir = temp_dir("ships");
    let json = dir.join("huge.json");
    let message = "--ships 100000000 is more than the limit of 1000000 (13000000 entities)";
    let out = doecs_within(
        QUICK,
        None,
        &[
            "demo-level",
            "-o",
            json.to_str().unwrap(),
            "--ships",
            "100000000",
        ],
    );
    assert_one_line_error(&out, message);
    assert!(!json.exists(), "nothing written");
    for args in [
        &["run", "--ships", "100000000", "--frames", "1", "-q"][..],
        &["--ships", "100000000", "-q"],
    ] {
        assert_one_line_error(&doecs_within(QUICK, None, args), message);
    }
    let help = text(&doecs(&["demo-level", "--help"]).stdout);
    assert!(help.contains("at most 1,000,000"), "{help}");
    std::fs::remove_dir_all(dir).ok();
}

/// `depth` entities nested in `children`, each with a transform.
fn nested_chain(depth: usize) -> String {
    let entity = r#"{"components":{"transform":{"translation":[0,1,0]}},"children":["#;
    format!(
        r#"{{"entities":[{}{}]}}"#,
        entity.repeat(depth),
        "]}".repeat(depth)
    )
}

#[test]
fn deep_hierarchies_use_the_flat_form() {
    let dir = temp_dir("deep");
    let nested = dir.join("nested.json");
    std::fs::write(&nested, nested_chain(10_000)).unwrap();
    let out = doecs_within(QUICK, None, &["compile", nested.to_str().unwrap()]);
    assert_one_line_error(
        &out,
        "level nests children deeper than the limit of 60 entity levels",
    );
    assert!(text(&out.stderr).contains("use the flat form with \"parent\""));

    let depth = 20_000;
    let mut flat = String::from(r#"{"entities":[{"name":"root","components":{"transform":{}}}"#);
    for i in 1..depth {
        flat.push_str(&format!(
            r#",{{"parent":{},"components":{{"transform":{{"translation":[0,1,0]}},"spin":0.5}}}}"#,
            i - 1
        ));
    }
    flat.push_str("]}");
    let json = dir.join("flat.json");
    let blob = dir.join("flat.doecs");
    std::fs::write(&json, flat).unwrap();
    let out = doecs_within(
        QUICK,
        None,
        &[
            "compile",
            json.to_str().unwrap(),
            "-o",
            blob.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = doecs(&["inspect", blob.to_str().unwrap()]);
    assert!(
        text(&out.stdout).contains(&format!(
            "entities: {depth} (1 roots), hierarchy depth {depth}"
        )),
        "{}",
        text(&out.stdout)
    );
    let out = doecs_within(
        QUICK,
        None,
        &["run", blob.to_str().unwrap(), "--frames", "2", "-q"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!("{depth} entities")),
        "{}",
        text(&out.stdout)
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn duplicate_keys_are_refused_with_their_line() {
    let dir = temp_dir("duplicates");
    let json = dir.join("dup.json");
    std::fs::write(
        &json,
        "{\"entities\": [\n  {\"name\": \"ship\",\n   \"components\": {\n     \"mass\": 2,\n     \"mass\": 3\n   }}\n]}\n",
    )
    .unwrap();
    assert_one_line_error(
        &doecs(&["compile", json.to_str().unwrap()]),
        "duplicate key \"mass\" at line 5 column 11",
    );
    assert_one_line_error(
        &doecs(&["run", json.to_str().unwrap(), "-q"]),
        "duplicate key \"mass\" at line 5",
    );
    std::fs::remove_dir_all(dir).ok();
}

fn le(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn meaningless_physics_values_are_refused() {
    let dir = temp_dir("physics");
    let json = dir.join("zero.json");
    let ships: Vec<String> = (0..5)
        .map(|i| {
            let mass = if i == 3 { 0 } else { 2 };
            format!(
                r#"{{"name":"ship{i}","components":{{"position":[0,10,0],"velocity":[1,0,0],"mass":{mass}}}}}"#
            )
        })
        .collect();
    std::fs::write(&json, format!(r#"{{"entities":[{}]}}"#, ships.join(","))).unwrap();
    let message =
        "entities[3] (\"ship3\"): component `mass`: mass must be finite and greater than 0, got 0";
    assert_one_line_error(&doecs(&["compile", json.to_str().unwrap()]), message);
    let out = doecs(&["run", json.to_str().unwrap(), "--frames", "2", "-q"]);
    assert_one_line_error(&out, message);
    assert!(!text(&out.stdout).contains("NaN"), "{}", text(&out.stdout));

    // A hand-made blob with the same values is refused when loaded.
    let blob = |mass: f32, position: [f32; 3]| {
        let mut b = doecs_resource::BlobBuilder::roots(2);
        b.push_dense(
            doecs::raw::name_hash("position"),
            12,
            le(&[position, [0.0, 5.0, 0.0]].concat()),
        );
        b.push_dense(doecs::raw::name_hash("velocity"), 12, le(&[1.0; 6]));
        b.push_dense(doecs::raw::name_hash("mass"), 4, le(&[2.0, mass]));
        b.to_bytes()
    };
    let path = dir.join("hand.doecs");
    std::fs::write(&path, blob(1.0, [0.0, 10.0, 0.0])).unwrap();
    let out = doecs(&["run", path.to_str().unwrap(), "--frames", "2", "-q"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for (mass, position, expect) in [
        (
            0.0,
            [0.0, 10.0, 0.0],
            "`mass` instance 1: mass must be finite and greater than 0, got 0 (blob entity 1)",
        ),
        (-1.0, [0.0, 10.0, 0.0], "got -1"),
        (
            1.0,
            [f32::NAN, 10.0, 0.0],
            "`position` instance 0: position must be finite, got [NaN, 10.0, 0.0]",
        ),
    ] {
        std::fs::write(&path, blob(mass, position)).unwrap();
        let out = doecs(&["run", path.to_str().unwrap(), "--frames", "2", "-q"]);
        assert_one_line_error(&out, expect);
        assert!(!text(&out.stdout).contains("NaN"), "{}", text(&out.stdout));
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn mistyped_subcommands_get_a_suggestion() {
    let dir = temp_dir("typos");
    for (args, suggestion) in [
        (
            &["compil", "x.json"][..],
            "'compil'; did you mean 'compile'?",
        ),
        (&["inspct", "x.doecs"], "'inspct'; did you mean 'inspect'?"),
        (&["rnu", "--frames", "3"], "'rnu'; did you mean 'run'?"),
        (
            &["-q", "demo", "-o", "x.json"],
            "'demo'; did you mean 'demo-level'?",
        ),
        (
            &["--frames", "3", "Compile"],
            "'Compile'; did you mean 'compile'?",
        ),
    ] {
        let out = doecs_within(QUICK, Some(&dir), args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.lines().next(),
            Some(format!("error: unknown subcommand {suggestion}").as_str()),
            "{args:?}: {err}"
        );
        assert!(!err.contains("cannot be used with"), "{err}");
    }
    let out = doecs_within(QUICK, Some(&dir), &["nosuchthing"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with(
            "error: 'nosuchthing' is neither a subcommand (compile, inspect, run, play, query, demo-level) \
             nor an existing level file"
        ),
        "{}",
        text(&out.stderr)
    );
    // A missing file with an extension is still read as a level...
    assert_one_line_error(
        &doecs_within(QUICK, Some(&dir), &["missing.json"]),
        "cannot read missing.json",
    );
    // ...and an existing file runs, even one named like a subcommand typo.
    let level = r#"{"entities":[{"components":{"position":[0,1,0],"velocity":[0,0,0],"mass":1}}]}"#;
    std::fs::write(dir.join("compil"), level).unwrap();
    std::fs::write(dir.join("level.json"), level).unwrap();
    for file in ["compil", "level.json"] {
        let out = doecs_within(QUICK, Some(&dir), &[file, "--frames", "2", "-q"]);
        assert!(out.status.success(), "{file}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains(&format!("{file}: 1 entities")));
    }
    std::fs::remove_dir_all(dir).ok();
}

#[cfg(unix)]
#[test]
fn large_demo_levels_say_what_they_are_doing() {
    let out = doecs_within(
        QUICK,
        None,
        &["demo-level", "-o", "/dev/null", "--ships", "100000"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.starts_with("writing the demo level to /dev/null: 100000 ships, 1300000 entities\n"),
        "{s}"
    );
    assert!(s.contains("wrote /dev/null (1300000 entities, 1"), "{s}");
    // Not a terminal: no progress bar drawn, nothing on stderr.
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

/// A level that declares prefabs and instances: compiled into the blob,
/// shown by `inspect`, and run.
#[test]
fn prefabs_in_a_level_compile_inspect_and_run() {
    let dir = temp_dir("prefabs");
    let json = dir.join("prefabs.json");
    let blob = dir.join("prefabs.doecs");
    std::fs::write(
        &json,
        r#"{"entities": [
            {"name": "crate", "components": {"prefab": true, "transform": {"translation": [0, 1, 0]}}},
            {"name": "big crate", "components": {"prefab": true, "is_a": "crate"}},
            {"components": {"is_a": "crate", "transform": {}}},
            {"components": {"is_a": "crate", "transform": {}}},
            {"components": {"is_a": "big crate", "transform": {}}}
        ]}"#,
    )
    .unwrap();
    let out = compile_to(&json, &blob);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = doecs(&["inspect", blob.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("prefabs: 2, instances of prefabs: 4"), "{s}");
    assert!(s.contains("  prefab 0: 3 instances"), "{s}");
    assert!(s.contains("  prefab 1: 1 instance\n"), "{s}");
    let out = doecs(&["run", blob.to_str().unwrap(), "--frames", "2", "-q"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // An instance of a prefab declared later is a compile error, one line.
    std::fs::write(
        &json,
        r#"{"entities": [{"components": {"is_a": "crate"}}, {"name": "crate", "components": {"prefab": true}}]}"#,
    )
    .unwrap();
    let out = compile_to(&json, &blob);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no earlier entity is named `crate`"),
        "{}",
        text(&out.stderr)
    );
}
