//! `doecs query LEVEL QUERY` end to end on the demo level, as a blob and
//! as JSON: counts, names, variable bindings, values and paging, and the
//! failures (a query that does not parse, an unknown name, a missing
//! level), each one line on stderr with exit status 1 and the column.
//!
//! The demo level names its ships `shipN` and their parts `shipN.partK`;
//! ships have `position`, `velocity` and `mass`, parts and their unnamed
//! sub-parts `spin`.

mod common;

use common::run::{assert_ok, assert_one_line_error, doecs, s, temp_dir};
use std::path::{Path, PathBuf};

/// The demo level of `ships` ships in `dir`: its JSON and its blob.
fn demo(dir: &Path, ships: usize) -> (PathBuf, PathBuf) {
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
    (json, blob)
}

#[test]
fn queries_list_matching_entities() {
    let dir = temp_dir("query-list");
    let (json, blob) = demo(&dir, 5);
    for level in [&json, &blob] {
        let out = assert_ok(&doecs(&["query", s(level), "position, velocity, !spin"]));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0], "5 entities match \"position, velocity, !spin\"",
            "{out}"
        );
        assert_eq!(lines.len(), 6, "{out}");
        assert!(lines[1].ends_with(" (ship0)"), "{out}");
    }
    // A join through the hierarchy: ship2's sub-parts, with their part.
    let out = assert_ok(&doecs(&[
        "query",
        s(&blob),
        "spin, !Name, (ChildOf, $part), ?mass",
    ]));
    assert!(out.starts_with("40 entities match"), "{out}");
    assert!(
        out.contains("$part=") && out.contains("(ship0.part0)"),
        "{out}"
    );
    assert!(out.lines().nth(1).unwrap().ends_with("?[]"), "{out}");
    let out = assert_ok(&doecs(&["query", s(&blob), "(ChildOf, ship2/ship2.part1)"]));
    assert!(out.starts_with("2 entities match"), "{out}");
    // Values, and pages.
    let out = assert_ok(&doecs(&[
        "query",
        s(&blob),
        "mass",
        "--values",
        "--limit",
        "2",
        "--offset",
        "1",
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[1].ends_with("(ship1)"), "{out}");
    assert!(lines.iter().any(|l| l.starts_with("    mass = ")), "{out}");
    assert!(
        lines.iter().any(|l| l.starts_with("    position = [")),
        "{out}"
    );
    assert_eq!(
        *lines.last().unwrap(),
        "… and 2 more (--offset 3 shows the next; --limit N shows up to N)"
    );
    let out = assert_ok(&doecs(&["query", s(&blob), "spin", "--limit", "0"]));
    assert!(
        out.starts_with("60 entities match \"spin\"\n… and 60 more"),
        "{out}"
    );
    // Change filters: the spawn is a change, unless --since is past it.
    let out = assert_ok(&doecs(&["query", s(&blob), "Added(mass)"]));
    assert!(out.starts_with("5 entities match"), "{out}");
    let out = assert_ok(&doecs(&[
        "query",
        s(&blob),
        "Added(mass)",
        "--since",
        "1000000",
    ]));
    assert!(out.starts_with("0 entities match"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn query_errors_are_one_line_with_the_column() {
    let dir = temp_dir("query-errors");
    let (_, blob) = demo(&dir, 2);
    let cases = [
        (
            "position, (ChildOf $p)",
            "error: query: expected ',' at column 20, found '$p'",
        ),
        (
            "position, velocity,",
            "query: expected a term (a component name, '(' or Changed(...)) at column 20",
        ),
        (
            "position, nope",
            "query: unknown component \"nope\" at column 11",
        ),
        (
            "(ChildOf, ship9)",
            "query: no one entity \"ship9\" at column 11",
        ),
        (
            "!Added(mass)",
            "query: '!' at column 1 cannot apply to a change filter",
        ),
    ];
    for (query, says) in cases {
        assert_one_line_error(&doecs(&["query", s(&blob), query]), says);
    }
    // A query that does not parse is refused before the level is read.
    assert_one_line_error(
        &doecs(&["query", "/nonexistent/level.doecs", "a,"]),
        "column 3",
    );
    assert_one_line_error(
        &doecs(&["query", "/nonexistent/level.doecs", "position"]),
        "/nonexistent/level.doecs",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_help_lists_the_query_command() {
    let out = assert_ok(&doecs(&["--help"]));
    assert!(out.contains("query"), "{out}");
    let out = assert_ok(&doecs(&["query", "--help"]));
    assert!(out.contains("(ChildOf,"), "{out}");
    assert!(out.contains("--values"), "{out}");
}
