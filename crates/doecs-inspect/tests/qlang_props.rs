//! Property tests of the query language's parser: random trees print and
//! parse back to themselves, and random text (grammar pieces, arbitrary
//! characters, and mutations of valid queries) never makes it panic.
//! Every error points at a column inside the text (or just past its end).
//! The inputs the fuzz target once found problems with
//! (`fuzz/regressions/parse_query`) and its starting corpus
//! (`fuzz/corpus/parse_query`) are replayed here on stable Rust.

use doecs::Entity;
use doecs_inspect::qlang::{
    parse, ChangeKind, Ident, Oper, Query, QueryError, Target, TargetKind, Term, TermKind,
    MAX_QUERY_BYTES, MAX_TERMS,
};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// A name: mostly bare words, sometimes anything printable (quoted when
/// printed), keywords included.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[A-Za-z_][A-Za-z0-9_.:/<>-]{0,10}",
        2 => "\\PC{1,8}",
        1 => Just("Changed".to_owned()),
        1 => Just("Added".to_owned()),
        1 => "[0-9][0-9v]{0,5}",
        1 => "[ \"\\\\$*(),!?]{1,4}",
    ]
}

fn target() -> impl Strategy<Value = TargetKind> {
    prop_oneof![
        Just(TargetKind::Any),
        "[A-Za-z_][A-Za-z0-9_]{0,6}".prop_map(TargetKind::Variable),
        name().prop_map(TargetKind::Name),
        (any::<u32>(), any::<u32>()).prop_map(|(i, g)| TargetKind::Id(Entity::from_parts(i, g))),
    ]
}

fn term() -> impl Strategy<Value = Term> {
    let oper = prop_oneof![Just(Oper::And), Just(Oper::Not), Just(Oper::Optional)];
    let kind = prop_oneof![
        name().prop_map(|n| TermKind::Component(Ident::new(n, 0))),
        (name(), target()).prop_map(|(r, t)| TermKind::Pair {
            relation: Ident::new(r, 0),
            target: Target { kind: t, column: 0 },
        }),
        (any::<bool>(), name()).prop_map(|(added, c)| TermKind::Change {
            kind: if added {
                ChangeKind::Added
            } else {
                ChangeKind::Changed
            },
            component: Ident::new(c, 0),
        }),
    ];
    (oper, kind).prop_map(|(oper, kind)| Term {
        oper,
        kind,
        column: 0,
    })
}

/// A random tree that obeys the rules the grammar leaves to
/// `Query::check`: change filters are required, and a variable in a `!`
/// term is bound by a required one (else the term looks for any target).
fn query() -> impl Strategy<Value = Query> {
    proptest::collection::vec(term(), 1..=MAX_TERMS).prop_map(|mut terms| {
        let bound: Vec<String> = terms
            .iter()
            .filter(|t| t.oper == Oper::And)
            .filter_map(|t| match &t.kind {
                TermKind::Pair {
                    target:
                        Target {
                            kind: TargetKind::Variable(v),
                            ..
                        },
                    ..
                } => Some(v.clone()),
                _ => None,
            })
            .collect();
        for t in &mut terms {
            match &mut t.kind {
                TermKind::Change { .. } => t.oper = Oper::And,
                TermKind::Pair { target, .. } if t.oper == Oper::Not => {
                    if matches!(&target.kind, TargetKind::Variable(v) if !bound.contains(v)) {
                        target.kind = TargetKind::Any;
                    }
                }
                _ => {}
            }
        }
        Query { terms }
    })
}

/// Text that is mostly made of the grammar's pieces.
fn texty() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("position".to_owned()),
        Just("Changed".to_owned()),
        Just("Added".to_owned()),
        Just("ChildOf".to_owned()),
        Just("$p".to_owned()),
        Just("12v0".to_owned()),
        Just("4294967308".to_owned()),
        Just("\"q\\\"x\"".to_owned()),
        "[(),!?*$ \"\\\\]",
        "\\PC",
        "[a-z0-9_]{1,4}",
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

/// Checks what must hold for any text: no panic (the test would fail),
/// and an error's column lies within the text or just past it. A query
/// that parses prints as text that parses to the same tree.
fn check_text(text: &str) {
    let chars = text.chars().count();
    match parse(text) {
        Ok(q) => {
            assert!(!q.terms.is_empty() && q.terms.len() <= MAX_TERMS);
            let printed = q.to_string();
            let again = parse(&printed).unwrap_or_else(|e| panic!("{printed:?}: {e}"));
            assert_eq!(again.without_columns(), q.without_columns(), "{printed:?}");
            for t in &q.terms {
                assert!(t.column >= 1 && t.column <= chars, "{text:?}: {t:?}");
            }
        }
        Err(e) => {
            assert!(
                e.column() >= 1 && e.column() <= chars + 1,
                "{text:?}: {e} (column {})",
                e.column()
            );
            assert!(e.to_string().contains(&format!("column {}", e.column())));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn trees_print_and_parse_back(q in query()) {
        let text = q.to_string();
        let parsed = parse(&text);
        if text.len() > MAX_QUERY_BYTES {
            let is_too_long = matches!(parsed, Err(QueryError::TooLong { .. }));
            prop_assert!(is_too_long);
            return Ok(());
        }
        let parsed = parsed.map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        prop_assert_eq!(parsed.without_columns(), q.without_columns());
        // And printing is stable.
        prop_assert_eq!(parsed.to_string(), text);
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        check_text(&text);
    }

    #[test]
    fn grammar_shaped_text_never_panics(text in texty()) {
        check_text(&text);
    }

    #[test]
    fn mutated_queries_never_panic(
        q in query(),
        cuts in proptest::collection::vec((any::<prop::sample::Index>(), "\\PC{0,3}"), 1..4),
    ) {
        let mut text: Vec<char> = q.to_string().chars().collect();
        for (at, insert) in cuts {
            if text.is_empty() {
                break;
            }
            let at = at.index(text.len());
            text.remove(at);
            for (k, c) in insert.chars().enumerate() {
                text.insert((at + k).min(text.len()), c);
            }
        }
        check_text(&text.into_iter().collect::<String>());
    }
}

#[test]
fn long_and_many_are_refused_with_a_column() {
    check_text(&"x".repeat(MAX_QUERY_BYTES + 7));
    check_text(&"a,".repeat(100));
    check_text(&"(".repeat(5000));
    check_text(&"\"".repeat(3000));
    check_text(&"!".repeat(3000));
}

fn fuzz_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(sub)
        .join("parse_query")
}

#[test]
fn the_fuzz_corpus_and_regressions_parse_or_fail_cleanly() {
    let mut files = 0;
    for dir in [fuzz_dir("corpus"), fuzz_dir("regressions")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            // The fuzz target reads its bytes as UTF-8, lossily.
            check_text(&String::from_utf8_lossy(&bytes));
            files += 1;
        }
    }
    assert!(files >= 5, "the corpus is there ({files} files)");
}
