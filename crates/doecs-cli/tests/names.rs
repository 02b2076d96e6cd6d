//! `doecs inspect` and names, end to end on compiled levels: the summary's
//! tree of named entities (paths, blob entity indices, component counts,
//! bounded by `--names`), `--find` by name and by path (path, components,
//! parent), names several entities share, and the failures: a miss, an
//! ambiguous or malformed path, an empty or over-long query, a blob whose
//! values the spawner refuses. Each failure is one line on stderr with exit
//! status 1.
//!
//! The demo level names its ships `shipN` and their parts `shipN.partK`
//! (blob entities `13 N` and `13 N + 1 + 3 K`); sub-parts are unnamed.

mod common;

use common::run::{assert_ok, assert_one_line_error, doecs, s, temp_dir, text};
use std::path::{Path, PathBuf};

/// Writes the demo level of `ships` ships to `dir` and compiles it; returns
/// the blob.
fn demo_blob(dir: &Path, ships: usize) -> PathBuf {
    let json = dir.join("demo.json");
    let blob = dir.join("demo.doecs");
    assert_ok(&doecs(&[
        "demo-level",
        "-o",
        s(&json),
        "--ships",
        &ships.to_string(),
    ]));
    assert_ok(&doecs(&["compile", s(&json), "-o", s(&blob)]));
    blob
}

/// The lines of `out` from the one starting with `from` on.
fn lines_from<'t>(out: &'t str, from: &str) -> Vec<&'t str> {
    out.lines().skip_while(|l| !l.starts_with(from)).collect()
}

#[test]
fn the_summary_lists_the_demo_levels_names_as_a_bounded_tree() {
    let dir = temp_dir("names-tree");
    let blob = demo_blob(&dir, 20);
    let out = assert_ok(&doecs(&["inspect", s(&blob)]));
    let tree = lines_from(&out, "named entities:");
    assert_eq!(
        tree[..8],
        [
            "named entities: 100 of 260, as a tree (path, blob entity index, components):",
            "  ship0  (entity 0, 6 components)",
            "    ship0/ship0.part0  (entity 1, 3 components)",
            "    ship0/ship0.part1  (entity 4, 3 components)",
            "    ship0/ship0.part2  (entity 7, 3 components)",
            "    ship0/ship0.part3  (entity 10, 3 components)",
            "  ship1  (entity 13, 6 components)",
            "    ship1/ship1.part0  (entity 14, 3 components)",
        ],
        "{out}"
    );
    // 20 named entities by default, then the count of the rest.
    assert_eq!(tree.len(), 1 + 20 + 1, "{out}");
    assert_eq!(tree[21], "  … and 80 more (--names N lists more)");

    let out = assert_ok(&doecs(&["inspect", s(&blob), "--names", "1000"]));
    let tree = lines_from(&out, "named entities:");
    assert_eq!(tree.len(), 1 + 100, "{out}");
    assert_eq!(
        tree[100],
        "    ship19/ship19.part3  (entity 257, 3 components)"
    );
    assert!(!out.contains("more (--names"), "{out}");

    let out = assert_ok(&doecs(&["inspect", s(&blob), "--names", "0"]));
    assert_eq!(
        lines_from(&out, "named entities:"),
        ["named entities: 100 (--names N lists them)"]
    );
    std::fs::remove_dir_all(dir).ok();
}

/// The default demo level, 13,000 entities: the summary stays short.
#[test]
fn the_tree_of_a_13000_entity_level_is_bounded() {
    let dir = temp_dir("names-large");
    let blob = demo_blob(&dir, 1000);
    let out = assert_ok(&doecs(&["inspect", s(&blob)]));
    let tree = lines_from(&out, "named entities:");
    assert_eq!(tree.len(), 22, "{out}");
    assert!(
        tree[0].starts_with("named entities: 5000 of 13000,"),
        "{out}"
    );
    assert_eq!(tree[21], "  … and 4980 more (--names N lists more)");
    assert!(out.lines().count() < 40, "{out}");
    let out = assert_ok(&doecs(&["inspect", s(&blob), "--find", "ship999.part3"]));
    assert!(
        out.contains("ship999/ship999.part3  (entity 12997, 3 components)"),
        "{out}"
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn find_by_name_and_by_path_shows_path_components_and_parent() {
    let dir = temp_dir("names-find");
    let blob = demo_blob(&dir, 5);
    let part = "ship3/ship3.part1  (entity 43, 3 components)\n\
                \x20 components: name, transform, spin\n\
                \x20 parent: ship3  (entity 39)\n";
    let out = assert_ok(&doecs(&[
        "inspect",
        s(&blob),
        "--find",
        "ship3/ship3.part1",
    ]));
    assert_eq!(
        out,
        format!("found 1 entity at path \"ship3/ship3.part1\":\n{part}")
    );
    let out = assert_ok(&doecs(&["inspect", s(&blob), "--find", "ship3.part1"]));
    assert_eq!(
        out,
        format!("found 1 entity named \"ship3.part1\":\n{part}")
    );
    // A ship: a root, with its physics and DataComponent record.
    let out = assert_ok(&doecs(&["inspect", s(&blob), "--find", "ship3"]));
    assert_eq!(
        out,
        "found 1 entity named \"ship3\":\n\
         ship3  (entity 39, 6 components)\n\
         \x20 components: name, transform, data, mass, position, velocity\n\
         \x20 parent: none (a root)\n"
    );
    // `--find` prints the entity, not the summary.
    assert!(!out.contains("component types"), "{out}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_name_several_entities_share_lists_each_and_an_ambiguous_path_fails() {
    let dir = temp_dir("names-shared");
    let json = dir.join("fleet.json");
    let blob = dir.join("fleet.doecs");
    std::fs::write(
        &json,
        r#"{"entities": [
            {"name": "fleet", "components": {"transform": {}}, "children": [
                {"name": "frigate", "components": {"mass": 2}, "children": [
                    {"name": "turret", "components": {"spin": 1}}
                ]},
                {"name": "frigate"},
                {"children": [{"name": "turret"}]}
            ]},
            {"name": "turret"}
        ]}"#,
    )
    .unwrap();
    assert_ok(&doecs(&["compile", s(&json), "-o", s(&blob)]));
    let out = assert_ok(&doecs(&["inspect", s(&blob), "--find", "turret"]));
    assert_eq!(
        out,
        "found 3 entities named \"turret\":\n\
         fleet/frigate/turret  (entity 2, 2 components)\n\
         \x20 components: name, spin\n\
         \x20 parent: fleet/frigate  (entity 1)\n\
         …/turret  (entity 5, 1 component; no path: an ancestor has no name)\n\
         \x20 components: name\n\
         \x20 parent: entity 4, no name\n\
         turret  (entity 6, 1 component)\n\
         \x20 components: name\n\
         \x20 parent: none (a root)\n"
    );
    // `--names` caps the matches too.
    let out = assert_ok(&doecs(&[
        "inspect",
        s(&blob),
        "--find",
        "turret",
        "--names",
        "1",
    ]));
    assert!(
        out.ends_with("… and 2 more (--names N lists more)\n"),
        "{out}"
    );
    let out = assert_ok(&doecs(&["inspect", s(&blob)]));
    assert_eq!(
        lines_from(&out, "named entities:"),
        [
            "named entities: 6 of 7, as a tree (path, blob entity index, components):",
            "  fleet  (entity 0, 2 components)",
            "    fleet/frigate  (entity 1, 2 components)",
            "      fleet/frigate/turret  (entity 2, 2 components)",
            "    fleet/frigate  (entity 3, 1 component)",
            "      …/turret  (entity 5, 1 component; no path: an ancestor has no name)",
            "  turret  (entity 6, 1 component)",
        ]
    );
    assert_one_line_error(
        &doecs(&["inspect", s(&blob), "--find", "fleet/frigate/turret"]),
        "2 entities at path \"fleet/frigate\": the path is ambiguous",
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_miss_fails_with_a_message() {
    let dir = temp_dir("names-miss");
    let blob = demo_blob(&dir, 5);
    let out = doecs(&["inspect", s(&blob), "--find", "ship99"]);
    assert_one_line_error(&out, "no entity is named \"ship99\"");
    assert!(text(&out.stderr).contains(s(&blob)), "names the file");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert_one_line_error(
        &doecs(&["inspect", s(&blob), "--find", "ship3/engine/mount"]),
        "no entity at path \"ship3/engine/mount\" (nothing at \"ship3/engine\")",
    );
    // A path starts at a root: a part's name alone is no path.
    assert_one_line_error(
        &doecs(&["inspect", s(&blob), "--find", "ship3.part1/x"]),
        "nothing at \"ship3.part1\"",
    );
    for bad in ["ship3//x", "/ship3", "ship3/"] {
        assert_one_line_error(
            &doecs(&["inspect", s(&blob), "--find", bad]),
            "is not a path of names separated by `/`",
        );
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn empty_and_over_long_queries_are_refused() {
    let dir = temp_dir("names-bad-query");
    let blob = demo_blob(&dir, 2);
    assert_one_line_error(
        &doecs(&["inspect", s(&blob), "--find", ""]),
        "--find needs a name or a path of names",
    );
    let long = "n".repeat(1025);
    assert_one_line_error(
        &doecs(&["inspect", s(&blob), "--find", &long]),
        "a name is at most 1024 bytes (levels allow no longer), the query has one of 1025",
    );
    assert_one_line_error(
        &doecs(&["inspect", s(&blob), "--find", &format!("ship0/{long}")]),
        "the query has one of 1025",
    );
    let huge = vec!["n".repeat(1000); 10].join("/");
    assert_one_line_error(
        &doecs(&["inspect", s(&blob), "--find", &huge]),
        "--find takes at most 8192 bytes, got 10009",
    );
    // The query is checked before the blob is read.
    assert_one_line_error(
        &doecs(&["inspect", "/nonexistent.doecs", "--find", ""]),
        "--find needs a name or a path of names",
    );
    // ... and the blob keeps its size limit.
    assert_one_line_error(
        &doecs(&[
            "inspect",
            s(&blob),
            "--find",
            "ship0",
            "--max-input-bytes",
            "100",
        ]),
        "is larger than the limit of 100 bytes",
    );
    std::fs::remove_dir_all(dir).ok();
}

/// A blob whose values the spawner refuses (a mass of 0, written into the
/// bytes) gets its summary, then one error line; `--names 0` skips the
/// spawn.
#[test]
fn a_blob_that_does_not_spawn_keeps_its_summary() {
    let dir = temp_dir("names-bad-blob");
    let json = dir.join("heavy.json");
    let blob = dir.join("heavy.doecs");
    std::fs::write(
        &json,
        r#"{"entities": [{"name": "heavy", "components": {"mass": 2.5}}]}"#,
    )
    .unwrap();
    assert_ok(&doecs(&["compile", s(&json), "-o", s(&blob)]));
    let mut bytes = std::fs::read(&blob).unwrap();
    let mass = 2.5f32.to_le_bytes();
    let at = bytes.windows(4).position(|w| w == mass).expect("the mass");
    bytes[at..at + 4].copy_from_slice(&0f32.to_le_bytes());
    std::fs::write(&blob, &bytes).unwrap();
    let out = doecs(&["inspect", s(&blob)]);
    assert_one_line_error(&out, "mass must be finite and greater than 0, got 0");
    assert!(text(&out.stderr).contains("(--names 0 skips the list)"));
    assert!(text(&out.stdout).contains("component types"));
    let out = assert_ok(&doecs(&["inspect", s(&blob), "--names", "0"]));
    assert!(
        out.ends_with("named entities: 1 (--names N lists them)\n"),
        "{out}"
    );
    assert_one_line_error(
        &doecs(&["inspect", s(&blob), "--find", "heavy"]),
        "cannot spawn the blob to read its names",
    );
    std::fs::remove_dir_all(dir).ok();
}
