//! Unit tests of one archetype's rows, chunks, moves and drops.

use super::*;
use std::cell::Cell;

thread_local! {
    static DROPS: Cell<usize> = const { Cell::new(0) };
}

struct Counted(#[allow(dead_code)] u32);
impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.with(|d| d.set(d.get() + 1));
    }
}

fn drops() -> usize {
    DROPS.with(|d| d.get())
}

/// `column_of` (a scan up to eight components, a binary search past
/// them) finds exactly the archetype's components at every size.
#[test]
fn column_of_finds_exactly_the_components_at_every_size() {
    let mut registry = Components::default();
    macro_rules! register { ($($n:literal),*) => { [$( registry.register::<[u8; $n]>() ),*] } }
    let all = register!(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20);
    for size in 0..=12 {
        // Every other id, so absent ids sit between present ones.
        let present: Vec<ComponentId> = all.iter().copied().step_by(2).take(size).collect();
        let mut arch = Archetype::new(
            ArchetypeId::from_index(1),
            present.clone().into(),
            &registry,
            crate::storage::DEFAULT_CHUNK_BYTES,
        );
        arch.reserve(1);
        for &id in &all {
            let expected = present
                .iter()
                .position(|&p| p == id)
                .map(|i| ColumnIndex(i as u32));
            assert_eq!(arch.column_of(id), expected, "size {size}, {id:?}");
            // SAFETY: row 0 is below the capacity reserved above.
            let slot = unsafe { arch.component_slot_ptr_unchecked(id, Row(0)) };
            assert_eq!(slot.is_some(), expected.is_some());
        }
    }
}

/// An archetype of (u32, Counted) with chunks of about `chunk_bytes`.
fn archetype(chunk_bytes: usize) -> Archetype {
    let mut registry = Components::default();
    let a = registry.register::<u32>();
    let c = registry.register::<Counted>();
    Archetype::new(
        ArchetypeId::from_index(1),
        [a, c].into(),
        &registry,
        chunk_bytes,
    )
}

fn push(arch: &mut Archetype, i: u32) -> Row {
    let e = Entity::from_parts(i, 0);
    // SAFETY: both columns of the new row are written just below.
    let row = unsafe { arch.push_uninit(e) };
    // SAFETY: column 0 is u32 and column 1 is Counted; the row is fresh.
    unsafe {
        arch.slot_ptr(row, ColumnIndex(0))
            .cast::<u32>()
            .as_ptr()
            .write(i);
        arch.slot_ptr(row, ColumnIndex(1))
            .cast::<Counted>()
            .as_ptr()
            .write(Counted(i));
    }
    row
}

fn value(arch: &Archetype, row: usize) -> u32 {
    // SAFETY: callers pass live rows; column 0 is u32.
    unsafe {
        arch.slot_ptr(Row(row as u32), ColumnIndex(0))
            .cast::<u32>()
            .as_ptr()
            .read()
    }
}

#[test]
fn rows_fill_in_order_and_chunks_are_views() {
    let mut arch = archetype(64);
    let rows = arch.chunk_rows();
    assert_eq!(rows, 4, "64 bytes / 16-byte rows");
    for i in 0..(2 * rows + 1) as u32 {
        assert_eq!(push(&mut arch, i).index(), i as usize);
        arch.check_invariants();
    }
    assert_eq!(arch.chunk_count(), 3);
    assert_eq!(arch.chunk_rows_of(0), (0, rows));
    assert_eq!(arch.chunk_rows_of(2), (2 * rows, 1));
    assert_eq!(arch.entities()[rows], Entity::from_parts(rows as u32, 0));
    assert_eq!(value(&arch, 2 * rows), 2 * rows as u32);
    assert!(arch.capacity() >= arch.len());
}

#[test]
fn swap_remove_moves_the_last_row_and_drops_once() {
    let mut arch = archetype(64);
    let n = 6u32;
    for i in 0..n {
        push(&mut arch, i);
    }
    let before = drops();
    // Forget row 0's values (we "moved them out" by hand); the last row fills it.
    // SAFETY: row 0 is live; read out its Counted so it is owned here.
    let taken = unsafe {
        arch.slot_ptr(Row(0), ColumnIndex(1))
            .cast::<Counted>()
            .as_ptr()
            .read()
    };
    // SAFETY: row 0 is live and its values were moved out above.
    let moved = unsafe { arch.swap_remove_forget(Row(0)) };
    assert_eq!(moved, Some(Entity::from_parts(n - 1, 0)));
    assert_eq!(value(&arch, 0), n - 1);
    assert_eq!(drops(), before, "forget drops nothing");
    drop(taken);
    arch.check_invariants();
    // swap_remove_drop: relocation is reported before the drop.
    let mut relocated = None;
    // SAFETY: row 1 is live.
    unsafe {
        arch.swap_remove_drop(Row(1), |m| {
            relocated = Some((m, drops()));
        })
    };
    assert_eq!(
        relocated,
        Some((Some(Entity::from_parts(4, 0)), before + 1))
    );
    assert_eq!(
        drops(),
        before + 2,
        "exactly the removed row's value dropped"
    );
    assert_eq!(value(&arch, 1), 4);
    // Removing the last row itself moves nothing.
    let mut relocated = Some(None);
    let last = Row(arch.len() as u32 - 1);
    // SAFETY: `last` is the last live row.
    unsafe { arch.swap_remove_drop(last, |m| relocated = Some(m)) };
    assert_eq!(relocated, Some(None));
    assert_eq!(arch.len(), n as usize - 3);
    arch.check_invariants();
    let left = arch.len();
    assert!(arch.shrink_to_fit() > 0);
    assert_eq!(arch.capacity(), left);
    drop(arch);
    assert_eq!(drops(), before + 3 + left, "drop clears every row once");
}

#[test]
fn copy_value_copies_every_size() {
    for size in [0usize, 1, 3, 4, 8, 12, 16, 17, 64] {
        let src: Vec<u8> = (0..size as u8).collect();
        let mut dst = vec![0xffu8; size];
        // SAFETY: both buffers hold `size` bytes and do not overlap.
        unsafe { copy_value(src.as_ptr(), dst.as_mut_ptr(), size) };
        assert_eq!(src, dst);
    }
}
