//! Raw record bytes: round trips, and mutation/property tests of
//! `RecordRef::from_bytes` — every mutation of a valid record either loads
//! (and then behaves like any record in a store) or is refused with a typed
//! error. Never a panic.

use doecs::Entity;
use doecs_data::{DataStore, LoadError, Record, RecordRef, Value};
use proptest::prelude::*;
use serde_json::json;

fn sheet() -> serde_json::Value {
    json!({
        "name": "The One",
        "stats": {"health": 100, "mana": 200},
        "status_effects": {"drunk": true, "delirious": true},
        "color": [0, 0.5, 0.5, 0.7],
        "empty": [],
        "blank": ""
    })
}

#[test]
fn round_trip_through_bytes_is_exact() {
    let mut store = DataStore::new();
    let e = Entity::from_parts(0, 1);
    store.set_json(e, &sheet()).unwrap();
    store.set(e, "name", "The One, renamed at length").unwrap(); // leaves a hole
    let bytes = store.to_bytes(e).unwrap();
    let rec = RecordRef::from_bytes(&bytes).unwrap();
    assert_eq!(rec.free(), 0, "saved records are tight");
    assert_eq!(rec.tail(), rec.live_data(), "no holes");
    // Load into another store and compare every key.
    let mut other = DataStore::new();
    let f = Entity::from_parts(7, 3);
    other.insert_record(f, rec).unwrap();
    for entry in store.entries(e) {
        let i = other.record(f).unwrap().find(entry.key).unwrap();
        assert_eq!(other.record(f).unwrap().entry(i), entry);
    }
    // Saving again gives the same bytes.
    assert_eq!(other.to_bytes(f).unwrap(), bytes);
    other.check_invariants();
}

#[test]
fn relocation_is_a_plain_byte_copy() {
    let mut store = DataStore::new();
    let e = Entity::from_parts(0, 1);
    store.set_json(e, &sheet()).unwrap();
    // The whole block, free space included, copied as bytes.
    let block = store.record(e).unwrap().as_bytes().to_vec();
    let copy = RecordRef::from_bytes(&block).unwrap();
    assert_eq!(copy.get("stats.mana"), Some(Value::F32(200.0)));
    assert_eq!(copy.get("name"), Some(Value::Str("The One")));
}

#[test]
fn typed_errors_for_broken_records() {
    assert_eq!(
        RecordRef::from_bytes(&[]).unwrap_err(),
        LoadError::BadLength(0)
    );
    assert!(matches!(
        RecordRef::from_bytes(&vec![0u8; 70_000]).unwrap_err(),
        LoadError::BadLength(70_000)
    ));
    assert!(matches!(
        RecordRef::from_bytes(&[5, 0, 0, 0, 1, 2]).unwrap_err(),
        LoadError::Overflow { .. }
    ));
    let good = Record::from_json(&json!({"a": true, "b": "xy"})).unwrap();
    let rec = good.as_ref();
    let n = rec.len();
    // Type code of entry 0 set to 9.
    let mut bad = good.as_bytes().to_vec();
    bad[4 + 12 * n] = 9;
    assert!(matches!(
        RecordRef::from_bytes(&bad).unwrap_err(),
        LoadError::BadType { code: 9, .. }
    ));
    // Duplicate keys.
    let mut dup = good.as_bytes().to_vec();
    let k0 = dup[4..8].to_vec();
    dup[8..12].copy_from_slice(&k0);
    assert!(matches!(
        RecordRef::from_bytes(&dup).unwrap_err(),
        LoadError::DuplicateKey { .. }
    ));
    // Invalid UTF-8 in the string.
    let mut utf = good.as_bytes().to_vec();
    let last = utf.len() - 1;
    utf[last] = 0xff;
    assert!(matches!(
        RecordRef::from_bytes(&utf).unwrap_err(),
        LoadError::NotUtf8 { .. }
    ));
}

/// Exercises a loaded record in a store: every read and a few writes.
fn exercise(bytes: &[u8]) {
    let Ok(rec) = RecordRef::from_bytes(bytes) else {
        return;
    };
    let mut store = DataStore::with_names();
    let e = Entity::from_parts(1, 1);
    store.insert_record(e, rec).unwrap();
    let keys: Vec<_> = store.entries(e).map(|en| en.key).collect();
    for entry in store.entries(e) {
        let _ = entry.value.to_json();
    }
    assert!(
        store.to_json(e).is_err() || keys.is_empty(),
        "loaded keys have no names"
    );
    store.set(e, "added", "a new string value").unwrap();
    store.merge(Entity::from_parts(2, 1), rec).unwrap();
    store.check_invariants();
    let saved = store.to_bytes(Entity::from_parts(2, 1)).unwrap();
    assert_eq!(RecordRef::from_bytes(&saved).unwrap().len(), rec.len());
    store.compact();
    store.check_invariants();
}

fn valid_record() -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(|b| json!(b)),
        (-1e6f32..1e6).prop_map(|f| json!(f as f64)),
        "[a-zé]{0,12}".prop_map(|s| json!(s)),
        prop::collection::vec(-10f32..10.0, 0..6).prop_map(|v| json!(v)),
    ];
    prop::collection::btree_map("[a-d]{1,3}", leaf, 0..8).prop_map(|m| {
        let obj: serde_json::Map<String, serde_json::Value> = m.into_iter().collect();
        Record::from_json(&serde_json::Value::Object(obj))
            .unwrap()
            .as_bytes()
            .to_vec()
    })
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Set(usize, u8),
    Truncate(usize),
    Extend(Vec<u8>),
    Word(usize, u32),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Mutation::Set(i, v)),
        any::<usize>().prop_map(Mutation::Truncate),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(Mutation::Extend),
        (any::<usize>(), any::<u32>()).prop_map(|(i, w)| Mutation::Word(i, w)),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    match m {
        Mutation::Flip(i, b) if len > 0 => bytes[i % len] ^= 1 << b,
        Mutation::Set(i, v) if len > 0 => bytes[i % len] = *v,
        Mutation::Truncate(n) => bytes.truncate(n % (len + 1)),
        Mutation::Extend(more) => bytes.extend_from_slice(more),
        Mutation::Word(i, w) if len >= 4 => {
            let at = i % (len - 3);
            bytes[at..at + 4].copy_from_slice(&w.to_le_bytes());
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 8 } else { 2000 }, ..ProptestConfig::default() })]

    #[test]
    fn valid_records_round_trip(bytes in valid_record()) {
        let rec = RecordRef::from_bytes(&bytes).unwrap();
        prop_assert_eq!(rec.to_vec(), bytes.clone());
        exercise(&bytes);
    }

    #[test]
    fn mutated_records_load_or_error(bytes in valid_record(), muts in prop::collection::vec(mutation(), 1..4)) {
        let mut bytes = bytes;
        for m in &muts {
            apply(&mut bytes, m);
        }
        exercise(&bytes);
    }

    #[test]
    fn random_bytes_load_or_error(bytes in prop::collection::vec(any::<u8>(), 0..96)) {
        exercise(&bytes);
    }

    #[test]
    fn random_headers_load_or_error(count in 0u16..6, tail in 0u16..40, body in prop::collection::vec(any::<u8>(), 0..120)) {
        let mut bytes = count.to_le_bytes().to_vec();
        bytes.extend_from_slice(&tail.to_le_bytes());
        bytes.extend_from_slice(&body);
        exercise(&bytes);
    }
}
