//! Recording a frame costs next to nothing: once the histories are full,
//! `Inspector::record_frame` (system times and the world's counts)
//! allocates nothing. Counted with a global allocator that counts the
//! allocations of the thread that asks (the server's threads allocate as
//! they like meanwhile).

use doecs::{SystemTime, World};
use doecs_inspect::{Inspector, InspectorConfig};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; counting touches only
// const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    COUNT.with(|c| c.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    COUNT.with(Cell::get)
}

#[test]
#[cfg_attr(miri, ignore)] // sockets
fn a_full_history_records_frames_without_allocating() {
    const KEPT: usize = 50;
    let mut world = World::new();
    world.spawn_batch((0..1000u32).map(|i| (i,)));
    world.spawn_batch((0..100u32).map(|i| (i, i as f32)));
    world.spawn((1u8,));
    let mut config = InspectorConfig::new("127.0.0.1:0");
    config.history = KEPT;
    let mut inspector = Inspector::start(config).unwrap();
    let systems: Vec<SystemTime> = ["physics", "render"]
        .into_iter()
        .map(|n| SystemTime {
            name: Arc::from(n),
            time: Duration::from_micros(40),
        })
        .collect();
    let filling = allocations(|| {
        for _ in 0..KEPT {
            inspector.record_frame(&world, Duration::from_micros(100), &systems);
        }
    });
    assert!(
        filling > 0,
        "filling the system history allocates its samples"
    );
    let full = allocations(|| {
        for _ in 0..1000 {
            inspector.record_frame(&world, Duration::from_micros(100), &systems);
        }
    });
    assert_eq!(full, 0, "recording into full histories allocates nothing");
    assert_eq!(inspector.frame(), (KEPT + 1000) as u64);
}
