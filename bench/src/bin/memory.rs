//! Peak memory of 1,000,000 entities with four components (the simple_iter
//! bundle: Transform, Position, Rotation, Velocity; 100 bytes of component
//! data per entity), spawned through each library's batch path.
//!
//! Two measures, each library in turn in one process:
//! - **peak heap**: the most bytes the Rust global allocator had handed out
//!   at once while the library spawned (a counting allocator wraps the
//!   system one). flecs_ecs allocates in C, outside Rust's allocator, so it
//!   has no heap figure;
//! - **peak RSS**: the rise of the process's resident-set high-water mark
//!   (`VmHWM`, reset between libraries through `/proc/self/clear_refs`), which
//!   sees every allocation, flecs's included.
//!
//! The `doecs` row spawns with `World::spawn_batch` and drops the `Vec` of
//! ids it returns, like hecs's `spawn_batch` (an iterator the caller need
//! not consume); the `doecs_spawn_batch` row keeps the million ids (8 bytes
//! each). The hand-written baseline is four plain
//! `Vec`s of the components.
//!
//! ```text
//! cargo run --release -p doecs-bench --bin memory        # prints a table
//! cargo run --release -p doecs-bench --bin memory -- --json target/doecs-memory.json
//! ```

use doecs_bench::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting live and peak bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator with the caller's
// arguments; the counters are only statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Entities spawned.
const N: usize = 1_000_000;

/// The resident-set high-water mark in bytes, if the kernel reports it.
fn hwm() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Current resident set in bytes.
fn rss() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resets the high-water mark to the current resident set.
fn reset_hwm() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// One library's figures.
struct Measured {
    library: &'static str,
    /// Peak heap bytes above the start, if the allocator saw the library.
    heap: Option<usize>,
    /// Peak RSS rise, if measurable.
    rss: Option<usize>,
}

fn measure<W>(library: &'static str, rust_heap: bool, spawn: impl FnOnce() -> W) -> Measured {
    let base_live = LIVE.load(Ordering::Relaxed);
    PEAK.store(base_live, Ordering::Relaxed);
    let base_rss = rss();
    let resettable = reset_hwm();
    let world = spawn();
    let heap = PEAK.load(Ordering::Relaxed) - base_live;
    let peak_rss = match (resettable, hwm(), base_rss) {
        (true, Some(h), Some(b)) => Some(h.saturating_sub(b)),
        _ => None,
    };
    std::hint::black_box(&world);
    drop(world);
    Measured {
        library,
        heap: rust_heap.then_some(heap),
        rss: peak_rss,
    }
}

fn main() {
    let json = std::env::args().skip_while(|a| a != "--json").nth(1);
    let n = sized(N);
    let mut results = vec![
        measure("doecs", true, || {
            let mut world = doecs::World::new();
            drop(world.spawn_batch((0..n).map(|_| bundle())));
            world
        }),
        measure("doecs_spawn_batch", true, || {
            let mut world = doecs::World::new();
            let ids = world.spawn_batch((0..n).map(|_| bundle()));
            (world, ids)
        }),
        measure("hecs", true, || {
            let mut world = hecs::World::new();
            world.spawn_batch((0..n).map(|_| bundle()));
            world
        }),
        measure("bevy_ecs", true, || {
            let mut world = bevy_ecs::world::World::new();
            world.spawn_batch((0..n).map(|_| bundle())).for_each(drop);
            world
        }),
        measure("shipyard", true, || {
            let mut world = shipyard::World::new();
            world
                .bulk_add_entity((0..n).map(|_| bundle()))
                .for_each(drop);
            world
        }),
        measure("flecs_ecs", false, || {
            let world = flecs_ecs::prelude::World::new();
            flecs_spawn_bundles(&world, n);
            world
        }),
        measure("soa_baseline", true, || {
            let (t, p, r, v) = bundle();
            (vec![t; n], vec![p; n], vec![r; n], vec![v; n])
        }),
    ];
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    let doecs_heap = results[0].heap;
    println!("peak memory, {n} entities x (Transform, Position, Rotation, Velocity), batch spawn");
    println!(
        "{:<18} {:>12} {:>10} {:>12}",
        "library", "heap MiB", "vs doecs", "RSS MiB"
    );
    for m in &results {
        let heap = m
            .heap
            .map_or("n/a".to_owned(), |h| format!("{:.1}", mib(h)));
        let ratio = match (m.heap, doecs_heap) {
            (Some(h), Some(d)) if d > 0 => format!("{:.3}x", h as f64 / d as f64),
            _ => "n/a".to_owned(),
        };
        let rss = m.rss.map_or("n/a".to_owned(), |r| format!("{:.1}", mib(r)));
        println!("{:<18} {:>12} {:>10} {:>12}", m.library, heap, ratio, rss);
    }
    // The demo level's shape with and without its hierarchy as `ChildOf`.
    let ships = sized(DEMO_SHIPS);
    let flat = measure("doecs_demo_flat", true, || {
        let mut world = doecs::World::new();
        spawn_demo_ships(&mut world, ships, false);
        world
    });
    let child_of = measure("doecs_demo_child_of", true, || {
        let mut world = doecs::World::new();
        spawn_demo_ships(&mut world, ships, true);
        world
    });
    println!();
    println!("peak heap, demo level of {ships} ships (13 entities each, three levels deep)");
    let (f, c) = (flat.heap.unwrap_or(0), child_of.heap.unwrap_or(0));
    println!(
        "{:<22} {:>12}",
        "no hierarchy",
        format!("{:.3} MiB", mib(f))
    );
    println!(
        "{:<22} {:>12} {:>10}",
        "ChildOf hierarchy",
        format!("{:.3} MiB", mib(c)),
        format!("{:.3}x", c as f64 / f.max(1) as f64)
    );
    if let Some(path) = json {
        let mut out = String::from("{\n  \"entities\": ");
        out.push_str(&n.to_string());
        out.push_str(",\n  \"libraries\": [\n");
        let rows: Vec<String> = results
            .drain(..)
            .map(|m| {
                format!(
                    "    {{\"library\": \"{}\", \"heap_bytes\": {}, \"rss_bytes\": {}}}",
                    m.library,
                    m.heap.map_or("null".into(), |h| h.to_string()),
                    m.rss.map_or("null".into(), |r| r.to_string())
                )
            })
            .collect();
        out.push_str(&rows.join(",\n"));
        out.push_str("\n  ]\n}\n");
        std::fs::write(&path, out).expect("write the JSON report");
        println!("wrote {path}");
    }
}
