//! Drop discipline: every component value is dropped exactly once, never
//! during a move between archetypes, and a user `Drop` that panics in the
//! middle of a structural change (despawn, remove, overwrite by insert, clear,
//! dropping the world) leaves the world consistent and still drops every
//! other value exactly once.
//!
//! Each value carries an id and a shared ledger; the ledger counts drops per id.

use doecs::{ComponentDescriptor, Entity, World, WorldConfig};
use std::alloc::Layout;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Drop counts per value id.
#[derive(Default)]
struct Ledger {
    drops: Mutex<Vec<usize>>,
    next: AtomicUsize,
}

impl Ledger {
    fn new() -> Arc<Self> {
        Arc::new(Ledger::default())
    }
    fn value(self: &Arc<Self>) -> Tracked {
        self.make(false)
    }
    fn bomb(self: &Arc<Self>) -> Tracked {
        self.make(true)
    }
    fn make(self: &Arc<Self>, panics: bool) -> Tracked {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.drops.lock().unwrap().push(0);
        Tracked {
            id,
            panics,
            ledger: Arc::clone(self),
        }
    }
    fn dropped(&self, id: usize) -> usize {
        self.drops.lock().unwrap()[id]
    }
    fn total_dropped(&self) -> usize {
        self.drops.lock().unwrap().iter().sum()
    }
    /// Every value ever made was dropped exactly once.
    fn assert_all_dropped_once(&self) {
        let drops = self.drops.lock().unwrap();
        for (id, &n) in drops.iter().enumerate() {
            assert_eq!(n, 1, "value {id} dropped {n} times");
        }
    }
}

/// A component that records its drop, and panics in `Drop` if it is a bomb.
struct Tracked {
    id: usize,
    panics: bool,
    ledger: Arc<Ledger>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.ledger.drops.lock().unwrap()[self.id] += 1;
        if self.panics {
            panic!("Tracked {} panics in Drop (on purpose)", self.id);
        }
    }
}

/// A second tracked type, so an entity can carry several tracked columns.
struct Tracked2(Tracked);
/// A third.
struct Tracked3(Tracked);

/// `native` entities natively, fewer under Miri (which interprets slowly).
fn sized(native: usize) -> usize {
    if cfg!(miri) {
        (native / 4).max(6)
    } else {
        native
    }
}

fn small_world() -> World {
    World::with_config(WorldConfig {
        chunk_bytes: 256,
        min_free_indices: 2,
    })
}

#[test]
fn despawn_and_world_drop_drop_each_value_once() {
    let ledger = Ledger::new();
    let mut world = small_world();
    let es: Vec<Entity> = (0..sized(40))
        .map(|i| {
            if i % 2 == 0 {
                world.spawn((ledger.value(), i as u32))
            } else {
                world.spawn((ledger.value(), Tracked2(ledger.value()), String::from("x")))
            }
        })
        .collect();
    for &e in es.iter().step_by(3) {
        world.despawn(e).unwrap();
        world.check_invariants();
    }
    let despawned = es.iter().step_by(3).count();
    let expected: usize = es
        .iter()
        .enumerate()
        .step_by(3)
        .map(|(i, _)| if i % 2 == 0 { 1 } else { 2 })
        .sum();
    assert_eq!(ledger.total_dropped(), expected);
    assert_eq!(world.len(), es.len() - despawned);
    drop(world);
    ledger.assert_all_dropped_once();
}

#[test]
fn moves_never_drop_or_clone() {
    let ledger = Ledger::new();
    let mut world = small_world();
    let es: Vec<Entity> = (0..sized(30))
        .map(|i| world.spawn((ledger.value(), vec![i as u8; 4])))
        .collect();
    let buffers: Vec<*const u8> = es
        .iter()
        .map(|&e| world.get::<Vec<u8>>(e).unwrap().as_ptr())
        .collect();
    let rounds = if cfg!(miri) { 2 } else { 5 };
    for round in 0..rounds {
        for &e in &es {
            world.insert_one(e, round).unwrap();
            world.insert(e, (Tracked2(ledger.value()), 1.5f64)).unwrap();
            world.check_invariants();
        }
        for &e in &es {
            assert_eq!(world.remove_one::<u32>(e), Ok(round));
            let (t2, _) = world.remove::<(Tracked2, f64)>(e).unwrap();
            drop(t2);
            world.check_invariants();
        }
    }
    // Only the removed-and-returned Tracked2 values were dropped, by us.
    assert_eq!(ledger.total_dropped(), rounds as usize * es.len());
    for (i, &e) in es.iter().enumerate() {
        let t = world.get::<Tracked>(e).unwrap();
        assert_eq!(ledger.dropped(t.id), 0, "moved value was dropped");
        let v = world.get::<Vec<u8>>(e).unwrap();
        // Moved bitwise: same heap buffer, same contents.
        assert_eq!(v.as_ptr(), buffers[i]);
        assert_eq!(v, &vec![i as u8; 4]);
    }
    drop(world);
    ledger.assert_all_dropped_once();
}

#[test]
fn panic_in_drop_during_despawn() {
    let ledger = Ledger::new();
    let mut world = small_world();
    // Many rows, so the despawned row is refilled by the last row (a move).
    let es: Vec<Entity> = (0..sized(20))
        .map(|i| {
            world.spawn((
                if i == 3 {
                    ledger.bomb()
                } else {
                    ledger.value()
                },
                Tracked2(ledger.value()),
                Tracked3(ledger.value()),
                i as u64,
            ))
        })
        .collect();
    let victim = es[3];
    let (victim_ids, _) = {
        let t = world.get::<Tracked>(victim).unwrap();
        (t.id, ())
    };
    let t2 = world.get::<Tracked2>(victim).unwrap().0.id;
    let t3 = world.get::<Tracked3>(victim).unwrap().0.id;
    let result = catch_unwind(AssertUnwindSafe(|| world.despawn(victim)));
    assert!(result.is_err(), "the bomb's panic propagates");
    world.check_invariants();
    assert!(
        !world.alive(victim),
        "the entity died even though a drop panicked"
    );
    // Each value of the row dropped exactly once, the panicking one included.
    assert_eq!(ledger.dropped(victim_ids), 1);
    assert_eq!(ledger.dropped(t2), 1);
    assert_eq!(ledger.dropped(t3), 1);
    // The entity that moved into the hole is intact.
    for (i, &e) in es.iter().enumerate() {
        if e != victim {
            assert_eq!(world.get::<u64>(e), Ok(&(i as u64)));
        }
    }
    // The world keeps working.
    let e = world.spawn((ledger.value(), 7u64));
    world.insert_one(e, Tracked2(ledger.value())).unwrap();
    world.check_invariants();
    drop(world);
    ledger.assert_all_dropped_once();
}

#[test]
fn panic_in_drop_during_despawn_of_last_row_in_chunk() {
    // The despawned row is the only row of the last chunk: the chunk is freed
    // (or kept as spare) while a drop panics.
    let ledger = Ledger::new();
    let mut world = World::with_config(WorldConfig {
        chunk_bytes: 1,
        min_free_indices: 0,
    });
    let a = world.spawn((ledger.value(), Tracked2(ledger.value())));
    let b = world.spawn((ledger.bomb(), Tracked2(ledger.value())));
    assert_eq!(
        doecs::raw::archetypes(&world)
            .get(doecs::raw::location(&world, b).unwrap().archetype)
            .chunk_count(),
        2
    );
    assert!(catch_unwind(AssertUnwindSafe(|| world.despawn(b))).is_err());
    world.check_invariants();
    assert!(world.alive(a) && !world.alive(b));
    let c = world.spawn((ledger.value(), Tracked2(ledger.value())));
    world.check_invariants();
    assert!(world.alive(c));
    drop(world);
    ledger.assert_all_dropped_once();
}

#[test]
fn panic_in_drop_during_remove_by_id() {
    let ledger = Ledger::new();
    let mut world = small_world();
    let es: Vec<Entity> = (0..10)
        .map(|i| {
            let t = if i == 4 {
                ledger.bomb()
            } else {
                ledger.value()
            };
            world.spawn((t, Tracked2(ledger.value()), i as u32))
        })
        .collect();
    let id = world.component_id::<Tracked>();
    let bomb_id = world.get::<Tracked>(es[4]).unwrap().id;
    let result = catch_unwind(AssertUnwindSafe(|| world.remove_by_id(es[4], id)));
    assert!(result.is_err());
    world.check_invariants();
    assert_eq!(ledger.dropped(bomb_id), 1);
    // The component is gone, the entity and its other components are not.
    assert!(world.get::<Tracked>(es[4]).is_err());
    assert!(world.get::<Tracked2>(es[4]).is_ok());
    assert_eq!(world.get::<u32>(es[4]), Ok(&4));
    for (i, &e) in es.iter().enumerate() {
        assert_eq!(world.get::<u32>(e), Ok(&(i as u32)));
    }
    drop(world);
    ledger.assert_all_dropped_once();
}

#[test]
fn panic_in_drop_during_insert_one_overwrite() {
    let ledger = Ledger::new();
    let mut world = small_world();
    let e = world.spawn((ledger.bomb(), 1u8));
    let old = world.get::<Tracked>(e).unwrap().id;
    let new = ledger.value();
    let new_id = new.id;
    let result = catch_unwind(AssertUnwindSafe(|| world.insert_one(e, new)));
    assert!(result.is_err());
    world.check_invariants();
    assert_eq!(ledger.dropped(old), 1);
    assert_eq!(ledger.dropped(new_id), 0);
    assert_eq!(
        world.get::<Tracked>(e).unwrap().id,
        new_id,
        "new value in place"
    );
    drop(world);
    ledger.assert_all_dropped_once();
}

#[test]
fn panic_in_drop_during_bundle_insert_overwrite() {
    let ledger = Ledger::new();
    let mut world = small_world();
    // Replaces a bomb and a normal value, and adds a new column (a move).
    let e = world.spawn((ledger.bomb(), Tracked2(ledger.value())));
    let others: Vec<Entity> = (0..5)
        .map(|_| world.spawn((ledger.value(), Tracked2(ledger.value()))))
        .collect();
    let old1 = world.get::<Tracked>(e).unwrap().id;
    let old2 = world.get::<Tracked2>(e).unwrap().0.id;
    let (n1, n2, n3) = (
        ledger.value(),
        Tracked2(ledger.value()),
        Tracked3(ledger.value()),
    );
    let new_ids = (n1.id, n2.0.id, n3.0.id);
    let result = catch_unwind(AssertUnwindSafe(|| world.insert(e, (n1, n2, n3))));
    assert!(result.is_err());
    world.check_invariants();
    assert_eq!(ledger.dropped(old1), 1);
    assert_eq!(
        ledger.dropped(old2),
        1,
        "the other replaced value still dropped"
    );
    assert_eq!(world.get::<Tracked>(e).unwrap().id, new_ids.0);
    assert_eq!(world.get::<Tracked2>(e).unwrap().0.id, new_ids.1);
    assert_eq!(world.get::<Tracked3>(e).unwrap().0.id, new_ids.2);
    for &o in &others {
        assert!(world.get::<Tracked>(o).is_ok());
    }
    drop(world);
    ledger.assert_all_dropped_once();
}

#[test]
fn panic_in_drop_during_clear() {
    let ledger = Ledger::new();
    let mut world = small_world();
    let n = sized(30);
    for i in 0..n {
        let t = if i == n / 2 {
            ledger.bomb()
        } else {
            ledger.value()
        };
        world.spawn((t, i as u16));
        world.spawn((Tracked2(ledger.value()),));
    }
    let result = catch_unwind(AssertUnwindSafe(|| world.clear()));
    assert!(result.is_err());
    world.check_invariants();
    // The panic did not stop the clear: every entity is gone.
    assert_eq!(world.len(), 0);
    ledger.assert_all_dropped_once();
}

#[test]
fn panic_in_drop_during_despawn_batch_despawns_every_listed_entity() {
    let ledger = Ledger::new();
    let mut world = small_world();
    let a = world.spawn((ledger.bomb(),));
    let rest: Vec<Entity> = (0..3).map(|_| world.spawn((ledger.value(),))).collect();
    let keep = world.spawn((ledger.value(),));
    let listed = [a, rest[0], rest[1], rest[2]];
    let result = catch_unwind(AssertUnwindSafe(|| world.despawn_batch(&listed)));
    assert!(result.is_err(), "the first panic goes on");
    for e in listed {
        assert!(!world.alive(e), "{e:?} was listed and must be despawned");
    }
    assert!(world.alive(keep));
    world.check_invariants();
    assert_eq!(ledger.total_dropped(), 4);
    drop(world);
    ledger.assert_all_dropped_once();
}

#[test]
fn panic_in_drop_during_a_command_buffers_despawns_despawns_the_whole_run() {
    let ledger = Ledger::new();
    let mut world = small_world();
    let a = world.spawn((ledger.bomb(),));
    let b = world.spawn((ledger.value(),));
    let c = world.spawn((ledger.value(),));
    let mut buffer = doecs::CommandBuffer::new();
    buffer.despawn(a);
    buffer.despawn(b);
    buffer.despawn(c);
    let result = catch_unwind(AssertUnwindSafe(|| world.apply(&mut buffer)));
    assert!(result.is_err());
    assert!(!world.alive(b) && !world.alive(c));
    world.check_invariants();
    drop(world);
    ledger.assert_all_dropped_once();
}

#[test]
fn panic_in_drop_while_dropping_the_world() {
    let ledger = Ledger::new();
    let mut world = small_world();
    let n = sized(25);
    for i in 0..n {
        let t = if i == n / 2 {
            ledger.bomb()
        } else {
            ledger.value()
        };
        world.spawn((t, Tracked2(ledger.value())));
        world.spawn((Tracked3(ledger.value()), i as u8));
    }
    let result = catch_unwind(AssertUnwindSafe(move || drop(world)));
    assert!(result.is_err());
    ledger.assert_all_dropped_once();
}

#[test]
fn panic_in_spawn_batch_iterator_keeps_written_rows() {
    let ledger = Ledger::new();
    let mut world = small_world();
    let l = Arc::clone(&ledger);
    let result = catch_unwind(AssertUnwindSafe(|| {
        world.spawn_batch((0..50u32).map(|i| {
            if i == 33 {
                panic!("iterator panics (on purpose)");
            }
            (l.value(), i)
        }))
    }));
    assert!(result.is_err());
    world.check_invariants();
    assert_eq!(world.len(), 33);
    let mut seen: Vec<u32> = world.query::<&u32>().iter().copied().collect();
    seen.sort();
    assert_eq!(seen, (0..33).collect::<Vec<_>>());
    assert_eq!(ledger.total_dropped(), 0);
    drop(world);
    ledger.assert_all_dropped_once();
}

#[test]
fn replaced_values_drop_once_without_panics() {
    let ledger = Ledger::new();
    let mut world = small_world();
    let e = world.spawn((ledger.value(),));
    for _ in 0..10 {
        world.insert_one(e, ledger.value()).unwrap();
        world
            .insert(e, (ledger.value(), Tracked2(ledger.value())))
            .unwrap();
        world.check_invariants();
    }
    // 1 + 10 * 2 Tracked made, 10 Tracked2: all but the two live ones dropped.
    assert_eq!(ledger.total_dropped(), 31 - 2);
    let removed = world.remove_one::<Tracked>(e).unwrap();
    assert_eq!(
        ledger.dropped(removed.id),
        0,
        "remove hands the value back undropped"
    );
    drop(removed);
    drop(world);
    ledger.assert_all_dropped_once();
}

// A runtime component with a drop function: dropped once on despawn, remove,
// overwrite and world drop. The counter is per thread (each test has its own).
thread_local! {
    static DYN_DROPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// # Safety
/// `ptr` must point to a `u64` value of the runtime component.
unsafe fn count_dyn_drop(ptr: *mut u8) {
    // SAFETY: the world passes a pointer to one initialised value, aligned to its layout.
    let v = unsafe { ptr.cast::<u64>().read() };
    assert_ne!(v, 0xdead, "value dropped twice (it was poisoned)");
    // SAFETY: as above; poison it so a second drop would be noticed.
    unsafe { ptr.cast::<u64>().write(0xdead) };
    DYN_DROPS.with(|d| d.set(d.get() + 1));
}

#[test]
fn runtime_component_drop_fn_runs_once() {
    let mut world = small_world();
    // SAFETY: `count_dyn_drop` accepts any u64 value written through the raw API.
    let desc = unsafe {
        ComponentDescriptor::dynamic_with_drop("drops::Dyn", Layout::new::<u64>(), count_dyn_drop)
    };
    let id = world.register_component(desc).unwrap();
    let es: Vec<Entity> = (0..12).map(|i| world.spawn((i as u32,))).collect();
    for (i, &e) in es.iter().enumerate() {
        let v = i as u64 + 1;
        // SAFETY: `v` is a valid value of the component, which the world takes over.
        unsafe { doecs::raw::insert(&mut world, e, id, (&v as *const u64).cast()) }.unwrap();
    }
    // Byte access is refused for a component with a drop function.
    assert!(world.get_bytes(es[0], id).is_err());
    assert!(world.insert_bytes(es[0], id, &[0; 8]).is_err());
    world.check_invariants();
    let drops = || DYN_DROPS.with(|d| d.get());
    assert_eq!(drops(), 0);
    // Overwrite drops the old value.
    let v = 100u64;
    // SAFETY: as above.
    unsafe { doecs::raw::insert(&mut world, es[0], id, (&v as *const u64).cast()) }.unwrap();
    assert_eq!(drops(), 1);
    let ptr = doecs::raw::get_ptr(&world, es[0], id)
        .unwrap()
        .cast::<u64>();
    // SAFETY: the pointer is to a live u64 value of the component.
    assert_eq!(unsafe { ptr.read() }, 100);
    world.remove_by_id(es[1], id).unwrap();
    assert_eq!(drops(), 2);
    world.despawn(es[2]).unwrap();
    assert_eq!(drops(), 3);
    // Moves (adding another component) do not drop.
    world.insert_one(es[3], 1.0f32).unwrap();
    assert_eq!(drops(), 3);
    world.check_invariants();
    drop(world);
    // 12 values, plus the overwrite.
    assert_eq!(drops(), 13);
}
