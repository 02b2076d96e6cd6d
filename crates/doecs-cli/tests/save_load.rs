//! `doecs run --save` / `--load` end to end: running 10 frames, saving,
//! loading and running 10 more gives the same world (every id, every
//! component value, the scene graph) as running 20 frames straight, in
//! either format; bad files are one-line errors.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn doecs(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doecs"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the binary runs")
}

#[track_caller]
fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("doecs-save-load-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A JSON save in a form that ignores storage order: the ids, each
/// entity's components, each node's local transform and the links.
#[derive(Debug, PartialEq)]
struct Content {
    ids: Value,
    components: BTreeMap<u64, BTreeMap<String, Value>>,
    locals: BTreeMap<u64, Value>,
    links: BTreeSet<(u64, u64)>,
}

fn content(path: &Path) -> Content {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut components: BTreeMap<u64, BTreeMap<String, Value>> = BTreeMap::new();
    for t in v["tables"].as_array().unwrap() {
        let es = t["entities"].as_array().unwrap();
        for (i, e) in es.iter().enumerate() {
            let row = components.entry(e.as_u64().unwrap()).or_default();
            for (name, col) in t["components"].as_object().unwrap() {
                row.insert(name.clone(), col[i].clone());
            }
        }
    }
    let tm = &v["managers"]["transform"];
    let locals = tm["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n[0].as_u64().unwrap(), n[1].clone()))
        .collect();
    let links = tm["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l[0].as_u64().unwrap(), l[1].as_u64().unwrap()))
        .collect();
    Content {
        ids: v["ids"].clone(),
        components,
        locals,
        links,
    }
}

#[test]
fn saving_and_loading_midway_changes_nothing() {
    let d = dir("midway");
    let straight = d.join("straight.json");
    let base = ["run", "--ships", "12", "--threads", "2", "--quiet"];
    let out = ok(&doecs(
        &[&base[..], &["--frames", "20", "--save", s(&straight)]].concat(),
    ));
    assert!(out.contains("saved 156 entities"), "{out}");
    for mid in ["mid.bin", "mid.json"] {
        let mid = d.join(mid);
        let resumed = d.join("resumed.json");
        ok(&doecs(
            &[&base[..], &["--frames", "10", "--save", s(&mid)]].concat(),
        ));
        let out = ok(&doecs(
            &[
                &base[..],
                &["--frames", "10", "--load", s(&mid), "--save", s(&resumed)],
            ]
            .concat(),
        ));
        assert!(out.contains("loaded 156 entities"), "{out}");
        let (a, b) = (content(&straight), content(&resumed));
        assert_eq!(a.ids, b.ids, "same ids and free list");
        assert_eq!(a.components, b.components, "same component values");
        assert_eq!(a.locals, b.locals, "same local transforms");
        assert_eq!(a.links, b.links, "same hierarchy");
        assert_eq!(a.links.len(), 12 * 12, "every part linked");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_saves_are_one_line_errors() {
    let d = dir("bad");
    let good = d.join("good.bin");
    ok(&doecs(&[
        "run",
        "--ships",
        "2",
        "--frames",
        "1",
        "--quiet",
        "--save",
        s(&good),
    ]));
    let bytes = std::fs::read(&good).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", bytes[..bytes.len() / 2].to_vec()),
        ("not a save", b"hello".to_vec()),
        ("json garbage", b"{\"format\": 1}".to_vec()),
    ];
    for (what, data) in cases {
        let path = d.join("bad.bin");
        std::fs::write(&path, data).unwrap();
        let out = doecs(&["run", "--frames", "1", "--quiet", "--load", s(&path)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(
            err.starts_with("error: ") && !err.contains("panicked"),
            "{what}: {err}"
        );
    }
    let out = doecs(&["run", "--frames", "1", "--load", s(&d.join("missing.bin"))]);
    assert_eq!(out.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&d);
}
