//! Shared by `benches/data.rs` and `tests/memory.rs`: a counting global
//! allocator and the workloads, built the same way for the DataStore and the
//! naive peer, a `HashMap<String, serde_json::Value>` per entity (held in a
//! `Vec` indexed by entity, the cheapest container for the naive side).
#![allow(dead_code)]

use doecs::Entity;
use doecs_data::DataStore;
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::sync::atomic::{AtomicIsize, Ordering};

/// Counts live heap bytes (requested sizes).
pub struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments,
// so `System`'s guarantees carry over; the counter is only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc`/`realloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: forwarded unchanged; the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Live heap bytes now.
pub fn live_bytes() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Heap bytes retained by the value `build` returns.
pub fn retained<T>(build: impl FnOnce() -> T) -> (T, usize) {
    let before = live_bytes();
    let value = build();
    (value, (live_bytes() - before).max(0) as usize)
}

/// The naive peer.
pub type Naive = Vec<HashMap<String, Value>>;

/// The character sheet of Bitsquid's "Allocation Adventures 1: The
/// DataComponent", flattened.
pub fn sheet_pairs() -> Vec<(&'static str, Value)> {
    vec![
        ("name", json!("The One")),
        ("stats.health", json!(100.0)),
        ("stats.mana", json!(200.0)),
        ("status_effects.drunk", json!(true)),
        ("status_effects.delirious", json!(true)),
    ]
}

/// The article's character sheet as nested JSON.
pub fn sheet_json() -> Value {
    json!({
        "name": "The One",
        "stats": {"health": 100.0, "mana": 200.0},
        "status_effects": {"drunk": true, "delirious": true}
    })
}

/// Eight keys per entity: the sheet plus three more floats.
pub fn eight_pairs() -> Vec<(&'static str, Value)> {
    let mut v = sheet_pairs();
    v.push(("stats.stamina", json!(50.0)));
    v.push(("position.x", json!(1.0)));
    v.push(("position.y", json!(2.0)));
    v
}

/// Entity `i` (generation 1).
pub fn entity(i: usize) -> Entity {
    Entity::from_parts(i as u32, 1)
}

/// The naive store with `pairs` (flattened keys) on each of `n` entities.
pub fn naive_flat(n: usize, pairs: &[(&str, Value)]) -> Naive {
    let mut v = Vec::new();
    for _ in 0..n {
        let mut m = HashMap::new();
        for (k, val) in pairs {
            m.insert(k.to_string(), val.clone());
        }
        v.push(m);
    }
    v
}

/// The naive store holding the nested sheet (top-level keys, nested objects).
pub fn naive_nested(n: usize, json: &Value) -> Naive {
    let mut v = Vec::new();
    for _ in 0..n {
        let mut m = HashMap::new();
        for (k, val) in json.as_object().unwrap() {
            m.insert(k.clone(), val.clone());
        }
        v.push(m);
    }
    v
}

/// The DataStore with `pairs` set key by key on each of `n` entities.
pub fn store_by_set(n: usize, pairs: &[(&str, Value)]) -> DataStore {
    let mut s = DataStore::new();
    for i in 0..n {
        for (k, val) in pairs {
            match val {
                Value::Bool(b) => s.set(entity(i), *k, *b),
                Value::Number(x) => s.set(entity(i), *k, x.as_f64().unwrap() as f32),
                Value::String(t) => s.set(entity(i), *k, t.as_str()),
                _ => unreachable!(),
            }
            .unwrap();
        }
    }
    s
}

/// The DataStore with `json` imported on each of `n` entities.
pub fn store_by_json(n: usize, json: &Value) -> DataStore {
    let mut s = DataStore::new();
    for i in 0..n {
        s.set_json(entity(i), json).unwrap();
    }
    s
}
