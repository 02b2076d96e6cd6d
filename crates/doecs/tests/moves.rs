//! Rows that move keep their bytes exactly: pointer provenance, padding and
//! all. Every path that moves a row is driven with components that hold
//! pointers (`Box`, `&str`, `Vec`, `Arc`), structs with padding, and plain
//! byte arrays of every size from 1 to 64 bytes. Run under Miri (also with
//! `-Zmiri-strict-provenance`), these tests catch a move that copies a value
//! as integers (losing provenance) or reads padding as initialised bytes.
//!
//! The paths: insert of another component (the row moves to a new
//! archetype), removal of another component (it moves back), despawn of an
//! earlier row (the last row is swapped into the hole), batch spawn,
//! command buffers, and spawning from per-component columns (the path level
//! spawns use).

use doecs::{CommandBuffer, ComponentDescriptor, Entity, World, WorldConfig};
use std::alloc::Layout;
use std::sync::Arc;

/// Bytes of every size, no pointers.
#[derive(Clone, Debug, PartialEq)]
struct Bytes<const N: usize>([u8; N]);

/// A pointer followed by `N` bytes: the pointer's provenance must survive.
#[derive(Clone, Debug, PartialEq)]
struct Pointer<const N: usize> {
    boxed: Box<u64>,
    tail: [u8; N],
}

/// A byte, then padding, then `N` words: padding must never be read.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Padded<const N: usize> {
    tag: u8,
    words: [u32; N],
}

/// The struct from the original report: one byte, three of padding, a word.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct P(u8, u32);

#[derive(Clone, Debug, PartialEq)]
struct Name(&'static str);

#[derive(Clone, Debug, PartialEq)]
struct List(Vec<u32>);

#[derive(Clone, Debug, PartialEq)]
struct Shared(Arc<String>);

/// A component added and removed to make rows move.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Other(u16);

/// Small chunks, so that a few rows span several chunks and swap-removes
/// cross chunk boundaries.
fn world() -> World {
    World::with_config(WorldConfig {
        chunk_bytes: 256,
        min_free_indices: 0,
    })
}

/// Rows per archetype: enough to span chunks and swap across them (fewer
/// under Miri, which runs every size).
const ROWS: usize = if cfg!(miri) { 3 } else { 5 };

/// Drives value `make(i)` through every row-moving path, checking after each
/// step that every live value still reads back exactly.
fn exercise<T: Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static>(
    make: impl Fn(usize) -> T,
) {
    let mut world = world();
    // Batch spawn.
    let mut live: Vec<(Entity, usize)> = world
        .spawn_batch((0..ROWS).map(|i| (make(i),)))
        .into_iter()
        .zip(0..)
        .collect();
    // Single spawns with a second component in the row.
    for i in ROWS..2 * ROWS {
        live.push((world.spawn((make(i), Other(i as u16))), i));
    }
    let check = |world: &World, live: &[(Entity, usize)]| {
        for &(e, i) in live {
            assert_eq!(world.get::<T>(e).unwrap(), &make(i), "value {i}");
        }
        world.check_invariants();
    };
    check(&world, &live);
    // Insert: each row of the first archetype moves to (T, Other).
    for &(e, i) in &live[..ROWS] {
        world.insert_one(e, Other(i as u16)).unwrap();
    }
    check(&world, &live);
    // Remove: rows move back, and the swap-remove fills holes.
    for &(e, _) in live.iter().step_by(2) {
        world.remove_one::<Other>(e).unwrap();
    }
    check(&world, &live);
    // Despawn from the front: the last row is swapped into each hole.
    for _ in 0..2 {
        let (e, _) = live.remove(0);
        world.despawn(e).unwrap();
        check(&world, &live);
    }
    // Command buffers: spawn, insert (a move) and despawn (a swap-remove).
    let mut commands = CommandBuffer::new();
    let spawned = commands.spawn(&world, (make(100),));
    commands.insert_one(spawned, Other(1));
    commands.insert_one(live[0].0, Other(7));
    commands.despawn(live[1].0);
    let report = world.apply(&mut commands);
    assert!(report.failed.is_empty(), "{report:?}");
    live.remove(1);
    live.push((spawned, 100));
    check(&world, &live);
    // Take every value back out through a removal and compare.
    for (e, i) in live.drain(..) {
        let value = world.remove_one::<T>(e).unwrap();
        assert_eq!(value, make(i));
    }
    world.check_invariants();
}

fn bytes<const N: usize>(i: usize) -> Bytes<N> {
    Bytes(std::array::from_fn(|k| (i + k) as u8))
}

fn pointer<const N: usize>(i: usize) -> Pointer<N> {
    Pointer {
        boxed: Box::new(i as u64 * 3),
        tail: std::array::from_fn(|k| (i * 7 + k) as u8),
    }
}

fn padded<const N: usize>(i: usize) -> Padded<N> {
    Padded {
        tag: i as u8,
        words: std::array::from_fn(|k| (i * 31 + k) as u32),
    }
}

macro_rules! every_size {
    ($($n:literal)*) => {
        #[test]
        fn byte_arrays_of_every_size_from_1_to_64() {
            $(exercise(bytes::<$n>);)*
        }
    };
}
every_size!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30
    31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
    61 62 63 64);

#[test]
fn pointers_followed_by_tails_of_every_size() {
    // Sizes 8 (no tail) to 64 bytes in steps of 8, and the odd tails between.
    exercise(pointer::<0>);
    exercise(pointer::<1>);
    exercise(pointer::<4>);
    exercise(pointer::<8>);
    exercise(pointer::<13>);
    exercise(pointer::<16>);
    exercise(pointer::<24>);
    exercise(pointer::<32>);
    exercise(pointer::<40>);
    exercise(pointer::<48>);
    exercise(pointer::<56>);
}

#[test]
fn padded_structs_of_every_word_count() {
    exercise(|i| P(i as u8, i as u32 * 1000));
    exercise(padded::<1>);
    exercise(padded::<2>);
    exercise(padded::<3>);
    exercise(padded::<5>);
    exercise(padded::<7>);
    exercise(padded::<15>);
}

#[test]
fn boxes_strs_vecs_and_arcs() {
    exercise(|i| Box::new(i as u64));
    exercise(|i| Name(["zero", "one", "two", "three", "many"][i.min(4)]));
    exercise(|i| List((0..i as u32).collect()));
    exercise(|i| Shared(Arc::new(format!("shared {i}"))));
    exercise(|i| (Box::new(i as u8), P(1, 2)));
}

#[test]
fn runtime_component_holding_a_str_moves_with_its_provenance() {
    /// # Safety
    /// `ptr` points at a `&'static str`, which needs no drop.
    unsafe fn drop_str(_ptr: *mut u8) {}
    let mut world = world();
    // SAFETY: `drop_str` may be called on any value of the component (it does nothing).
    let descriptor = unsafe {
        ComponentDescriptor::dynamic_with_drop("name", Layout::new::<&'static str>(), drop_str)
    };
    let name = world.register_component(descriptor).unwrap();
    let words = ["alpha", "beta", "gamma", "delta"];
    let es: Vec<Entity> = (0..words.len()).map(|_| world.spawn((Other(0),))).collect();
    for (e, w) in es.iter().zip(words) {
        let value: &'static str = w;
        // SAFETY: the pointer addresses a valid `&'static str`, the component's layout.
        unsafe { doecs::raw::insert(&mut world, *e, name, (&raw const value).cast()).unwrap() };
    }
    // Move every row: add a component, then despawn the first entity.
    for &e in &es {
        world.insert_one(e, 1u64).unwrap();
    }
    world.despawn(es[0]).unwrap();
    for (e, w) in es.iter().zip(words).skip(1) {
        let ptr = doecs::raw::get_ptr(&world, *e, name).unwrap();
        // SAFETY: the slot holds the `&'static str` written above.
        let read: &'static str = unsafe { ptr.cast::<&'static str>().as_ptr().read() };
        assert_eq!(read, w);
    }
    world.check_invariants();
}

#[test]
fn spawning_from_columns_keeps_pointers() {
    let mut world = world();
    let id = world.component_id::<Box<u64>>();
    let values: Vec<Box<u64>> = (0..7).map(Box::new).collect();
    let values = std::mem::ManuallyDrop::new(values);
    let es = {
        let src = [values.as_ptr().cast::<u8>()];
        // SAFETY: `src` holds 7 initialised `Box<u64>`s, whose ownership moves
        // to the world (the `Vec` is never dropped as such, only freed below).
        unsafe { doecs::raw::spawn_columns(&mut world, &[id], 7, &src).unwrap() }
    };
    // Free the Vec's buffer without dropping the moved-out boxes.
    let mut values = values;
    // SAFETY: the elements were moved into the world above.
    unsafe { values.set_len(0) };
    drop(std::mem::ManuallyDrop::into_inner(values));
    for (i, &e) in es.iter().enumerate() {
        world.insert_one(e, Other(i as u16)).unwrap();
    }
    world.despawn(es[0]).unwrap();
    for (i, &e) in es.iter().enumerate().skip(1) {
        assert_eq!(**world.get::<Box<u64>>(e).unwrap(), i as u64);
    }
    world.check_invariants();
}
