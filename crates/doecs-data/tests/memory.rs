//! Memory against the naive peer, measured with a counting global allocator
//! (live heap bytes retained by each structure), not estimated.
//! One test function, so no other test allocates concurrently.

#[path = "../benches/common.rs"]
mod common;

use common::*;

#[global_allocator]
static ALLOC: Counting = Counting;

const N: usize = if cfg!(miri) { 100 } else { 100_000 };

#[test]
fn memory_against_naive_hashmaps() {
    let (naive, naive_health) = retained(|| naive_flat(N, &[("health", serde_json::json!(100.0))]));
    drop(naive);
    let (store, ours_health) =
        retained(|| store_by_set(N, &[("health", serde_json::json!(100.0))]));
    assert_eq!(store.get_f32(entity(N - 1), "health"), Some(100.0));
    drop(store);
    let ratio = ours_health as f64 / naive_health as f64;
    println!(
        "health x{N}: naive {naive_health} B ({:.1} B/entity), DataStore {ours_health} B ({:.1} B/entity), ratio {ratio:.3}",
        naive_health as f64 / N as f64,
        ours_health as f64 / N as f64
    );
    assert!(ratio <= 1.0 / 8.0, "health: {ratio:.3} > 1/8");

    let (naive, naive_flat_sheet) = retained(|| naive_flat(N, &sheet_pairs()));
    drop(naive);
    let (naive, naive_nested_sheet) = retained(|| naive_nested(N, &sheet_json()));
    drop(naive);
    let (store, ours_set) = retained(|| store_by_set(N, &sheet_pairs()));
    assert_eq!(store.get_str(entity(N - 1), "name"), Some("The One"));
    drop(store);
    let (store, ours_json) = retained(|| store_by_json(N, &sheet_json()));
    assert_eq!(
        store.get_bool(entity(N - 1), "status_effects.drunk"),
        Some(true)
    );
    drop(store);
    let naive_best = naive_flat_sheet.min(naive_nested_sheet);
    for (label, ours) in [("set key by key", ours_set), ("set_json", ours_json)] {
        let ratio = ours as f64 / naive_best as f64;
        println!(
            "sheet x{N} ({label}): naive flat {naive_flat_sheet} B, naive nested {naive_nested_sheet} B, DataStore {ours} B ({:.1} B/entity), ratio vs smaller naive {ratio:.3}",
            ours as f64 / N as f64
        );
        assert!(ratio <= 0.25, "sheet ({label}): {ratio:.3} > 1/4");
    }
}
