//! JSON import and export through the optional name dictionary.

use doecs::Entity;
use doecs_data::{DataError, DataStore, Key, Record};
use serde_json::json;

fn e(i: u32) -> Entity {
    Entity::from_parts(i, 1)
}

#[test]
fn export_rebuilds_nested_objects_and_dotted_keys() {
    let mut store = DataStore::with_names();
    let sheet = json!({
        "name": "The One",
        "stats": {"health": 100, "mana": 200.5},
        "status_effects": {"drunk": true},
        "color": [0, 0.5, 0.25],
        "a.b": "one segment with a dot",
        "a": {"b": "a real path"}
    });
    store.set_json(e(0), &sheet).unwrap();
    assert_eq!(store.get_str(e(0), "a.b"), Some("a real path"));
    assert_eq!(
        store.get_str(e(0), &["a.b"]),
        Some("one segment with a dot")
    );
    assert_eq!(store.to_json(e(0)).unwrap(), Some(sheet));
    assert_eq!(store.to_json(e(1)).unwrap(), None);
}

#[test]
fn export_errors_are_typed() {
    let mut store = DataStore::with_names();
    store.set(e(0), "stats", 1.0).unwrap();
    store.set(e(0), "stats.health", 2.0).unwrap();
    assert!(matches!(
        store.to_json(e(0)),
        Err(DataError::ExportConflict(_))
    ));
    // A key that arrived as a pre-hashed Key has no name.
    store
        .set(e(1), Key::parse("secret").unwrap(), true)
        .unwrap();
    assert!(matches!(store.to_json(e(1)), Err(DataError::UnnamedKey(_))));
    // Names off: nothing is kept, so nothing can be exported.
    let mut plain = DataStore::new();
    assert!(!plain.keeps_names());
    plain.set(e(0), "hp", 1.0).unwrap();
    assert!(matches!(plain.to_json(e(0)), Err(DataError::UnnamedKey(_))));
}

#[test]
fn apply_json_keeps_other_keys_and_refusals_change_nothing() {
    let mut store = DataStore::new();
    store.set(e(0), "hp", 5.0).unwrap();
    store
        .apply_json(e(0), &json!({"stats": {"mana": 3}, "name": "x"}))
        .unwrap();
    assert_eq!(store.get_f32(e(0), "hp"), Some(5.0));
    assert_eq!(store.get_f32(e(0), "stats.mana"), Some(3.0));
    let before = store.to_bytes(e(0)).unwrap();
    let clock = store.clock();
    for bad in [
        json!({"ok": 1, "bad": [1, {"x": 2}]}),
        json!({"ok": 1, "bad": null}),
        json!({"ok": 1, "bad": 1e39}),
        json!(7),
    ] {
        assert!(store.apply_json(e(0), &bad).is_err());
        assert!(store.set_json(e(0), &bad).is_err());
        assert!(Record::from_json(&bad).is_err());
    }
    assert_eq!(store.to_bytes(e(0)).unwrap(), before);
    assert_eq!(store.clock(), clock);
    assert!(!store.has(e(0), "ok"));
    store.check_invariants();
}

#[test]
fn set_json_replaces_the_whole_record() {
    let mut store = DataStore::new();
    store.set(e(0), "old", 1.0).unwrap();
    store.set_json(e(0), &json!({"new": true})).unwrap();
    assert!(!store.has(e(0), "old"));
    assert_eq!(store.get_bool(e(0), "new"), Some(true));
    store.set_json(e(0), &json!({})).unwrap();
    assert!(store.contains(e(0)));
    assert_eq!(store.record(e(0)).unwrap().len(), 0);
}

#[test]
fn typed_getters_refuse_other_types() {
    let mut store = DataStore::new();
    store.set(e(0), "f", 1.5).unwrap();
    store.set(e(0), "b", false).unwrap();
    store.set(e(0), "s", "text").unwrap();
    store.set(e(0), "a", &[1.0, 2.0]).unwrap();
    assert_eq!(store.get_bool(e(0), "f"), None);
    assert_eq!(store.get_f32(e(0), "b"), None);
    assert_eq!(store.get_str(e(0), "a"), None);
    assert!(store.get_f32s(e(0), "s").is_none());
    // Changing a key's type in place works in every direction.
    store.set(e(0), "s", 2.0).unwrap();
    store.set(e(0), "f", "now a string").unwrap();
    store.set(e(0), "a", true).unwrap();
    store.set(e(0), "b", &[3.0]).unwrap();
    assert_eq!(store.get_f32(e(0), "s"), Some(2.0));
    assert_eq!(store.get_str(e(0), "f"), Some("now a string"));
    assert_eq!(store.get_bool(e(0), "a"), Some(true));
    assert_eq!(store.get_f32s(e(0), "b").unwrap().to_vec(), vec![3.0]);
    assert!(store.set(e(0), "x", &[1.0, f32::INFINITY]).is_err());
    assert!(store.set(e(0), "a..b", 1.0).is_err());
    store.check_invariants();
}
