//! Property tests of the request-target parsers: any input gives a value or
//! an error (never a panic), what is accepted respects the limits, and
//! encoding then parsing gives back what was encoded.

use doecs::Entity;
use doecs_inspect::parse::{
    parse_entity, parse_path, parse_query, parse_target, percent_decode, percent_encode,
    MAX_PARAMS, MAX_SEGMENTS, MAX_TARGET_BYTES,
};
use proptest::prelude::*;

/// Arbitrary text, weighted towards the characters URLs are made of.
fn urlish() -> impl Strategy<Value = String> {
    prop_oneof![
        "[/?&=%+a-z0-9.#v-]{0,64}",
        ".{0,64}",
        proptest::collection::vec(any::<u8>(), 0..64)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

/// A path segment the parser keeps as it is: not empty, `.` or `..`.
fn segment() -> impl Strategy<Value = String> {
    ".{1,12}".prop_filter("not a dot segment", |s| s != "." && s != "..")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parsers_are_total(s in urlish()) {
        if let Ok(segments) = parse_path(&s) {
            prop_assert!(segments.len() <= MAX_SEGMENTS);
            prop_assert!(segments.iter().all(|x| !x.is_empty() && x != "." && x != ".."));
        }
        if let Ok(q) = parse_query(&s) {
            prop_assert!(q.pairs().len() <= MAX_PARAMS);
            prop_assert!(q.pairs().iter().all(|(k, _)| !k.is_empty()));
            for (i, (k, _)) in q.pairs().iter().enumerate() {
                prop_assert!(q.pairs()[..i].iter().all(|(other, _)| other != k));
            }
        }
        let _ = parse_target(&s);
        let _ = parse_entity(&s);
        let _ = percent_decode(&s, true);
    }

    #[test]
    fn long_targets_are_refused(extra in 1usize..200, c in "[a-z/]") {
        let s = format!("/{}", c.repeat(MAX_TARGET_BYTES + extra));
        prop_assert!(parse_target(&s).is_err());
    }

    #[test]
    fn percent_round_trip(s in ".{0,64}") {
        let encoded = percent_encode(&s);
        prop_assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.~%".contains(&b)));
        prop_assert_eq!(percent_decode(&encoded, false).unwrap(), s.clone());
        prop_assert_eq!(percent_decode(&encoded, true).unwrap(), s);
    }

    #[test]
    fn path_round_trip(segments in proptest::collection::vec(segment(), 0..=MAX_SEGMENTS)) {
        let path = format!(
            "/{}",
            segments.iter().map(|s| percent_encode(s)).collect::<Vec<_>>().join("/")
        );
        prop_assert_eq!(parse_path(&path).unwrap(), segments);
    }

    #[test]
    fn query_round_trip(pairs in proptest::collection::btree_map(".{1,10}", ".{0,10}", 0..=MAX_PARAMS)) {
        let query = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let parsed = parse_query(&query).unwrap();
        let got: Vec<(String, String)> = parsed.pairs().to_vec();
        let want: Vec<(String, String)> = pairs.into_iter().collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn entity_ids_round_trip(index in any::<u32>(), generation in any::<u32>()) {
        let e = Entity::from_parts(index, generation);
        prop_assert_eq!(parse_entity(&e.to_string()).unwrap(), e);
        prop_assert_eq!(parse_entity(&e.to_bits().to_string()).unwrap(), e);
        let target = format!("/api/entity/{}?values=true", e);
        let t = parse_target(&target).unwrap();
        prop_assert_eq!(parse_entity(&t.path[2]).unwrap(), e);
    }
}
