//! No safe function is undefined behaviour, whatever its arguments: every
//! safe function that takes a row, a column, a chunk, an index, a length or
//! a raw id checks it, and an argument out of range panics cleanly or is
//! refused with an error. Row, column and archetype indices are public
//! newtypes anyone can build, so these tests build them out of range on
//! purpose. Run under Miri (CI does), a check that let an argument through
//! to pointer arithmetic would be reported as undefined behaviour even
//! where the test's assertion could not see it.

use doecs::raw::{Archetype, ArchetypeId, ColumnIndex, Row};
use doecs::raw::{Entities, EntityTableImage, ImageError, ParentsFirst};
use doecs::{
    ComponentDescriptor, Entity, EntityError, QueryState, RelationError, Snapshot, SnapshotError,
    World, WorldConfig,
};
use std::alloc::Layout;
use std::panic::{catch_unwind, AssertUnwindSafe};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(u64);

/// Whether `f` panics (unwinding, not aborting or worse).
fn panics<R>(f: impl FnOnce() -> R) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

/// A world with `n` entities of `(Pos, Vel)`, and those entities.
fn world_of(n: u32) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let es = (0..n)
        .map(|i| world.spawn((Pos(i), Vel(i.into()))))
        .collect();
    (world, es)
}

/// Rows that are not live in `arch`: its length and the row after, its
/// capacity, and the largest row there is.
fn dead_rows(arch: &Archetype) -> [Row; 4] {
    let len = arch.len() as u32;
    [
        Row(len),
        Row(len + 1),
        Row(arch.capacity() as u32),
        Row(u32::MAX),
    ]
}

#[test]
fn archetype_rows_are_checked() {
    let (world, es) = world_of(3);
    let location = doecs::raw::location(&world, es[0]).unwrap();
    let arch = doecs::raw::archetypes(&world).get(location.archetype);
    let pos = world.components().id_of::<Pos>().unwrap();
    let column = arch.column_of(pos).unwrap();
    // In range: the checked forms give the live slots.
    for (k, &e) in es.iter().enumerate() {
        let row = doecs::raw::location(&world, e).unwrap().row;
        let slot = arch.slot_ptr(row, column);
        assert_eq!(Some(slot), arch.component_slot_ptr(pos, row));
        // SAFETY: a live row's slot of the `Pos` column, read through a
        // shared borrow of the world.
        assert_eq!(unsafe { slot.cast::<Pos>().as_ptr().read() }, Pos(k as u32));
        assert_eq!(arch.entity_at(row), e);
        let _ = arch.row_ticks(row, column);
    }
    // Out of range: a clean panic from each.
    for row in dead_rows(arch) {
        assert!(panics(|| arch.slot_ptr(row, column)), "slot_ptr {row:?}");
        assert!(panics(|| arch.component_slot_ptr(pos, row)), "{row:?}");
        assert!(panics(|| arch.entity_at(row)), "entity_at {row:?}");
        assert!(panics(|| arch.row_ticks(row, column)), "row_ticks {row:?}");
    }
}

#[test]
fn rows_freed_by_a_despawn_are_refused() {
    let (mut world, es) = world_of(4);
    let last = doecs::raw::location(&world, es[3]).unwrap();
    world.despawn(es[3]).unwrap();
    world.despawn(es[2]).unwrap();
    let arch = doecs::raw::archetypes(&world).get(last.archetype);
    assert_eq!(arch.len(), 2);
    assert!(
        arch.capacity() > last.row.index(),
        "the memory is still there"
    );
    let pos = world.components().id_of::<Pos>().unwrap();
    let column = arch.column_of(pos).unwrap();
    for row in [Row(2), last.row] {
        assert!(panics(|| arch.slot_ptr(row, column)));
        assert!(panics(|| arch.component_slot_ptr(pos, row)));
        assert!(panics(|| arch.row_ticks(row, column)));
    }
}

#[test]
fn archetype_columns_and_chunks_are_checked() {
    let (world, es) = world_of(3);
    let arch =
        doecs::raw::archetypes(&world).get(doecs::raw::location(&world, es[0]).unwrap().archetype);
    let live = Row(0);
    let columns = arch.components().len() as u32;
    for column in [ColumnIndex(columns), ColumnIndex(u32::MAX)] {
        assert!(panics(|| arch.slot_ptr(live, column)), "{column:?}");
        assert!(panics(|| arch.column_ptr(column)));
        assert!(panics(|| arch.column_ticks(column)));
        assert!(panics(|| arch.column_size(column)));
        assert!(panics(|| arch.tracks_rows(column)));
        assert!(panics(|| arch.row_ticks(live, column)));
        assert!(panics(|| arch.chunk_ticks(column, 0)));
    }
    assert_eq!(arch.chunk_count(), 1);
    assert_eq!(arch.chunk_rows_of(0), (0, 3));
    let _ = arch.chunk_ticks(ColumnIndex(0), 0);
    for chunk in [1, 2, usize::MAX / arch.chunk_rows() + 1, usize::MAX] {
        assert!(panics(|| arch.chunk_rows_of(chunk)), "chunk {chunk}");
    }
    for chunk in [usize::MAX / 2, usize::MAX] {
        assert!(panics(|| arch.chunk_ticks(ColumnIndex(0), chunk)));
    }
}

#[test]
fn the_empty_archetype_has_no_rows_or_columns() {
    let mut world = World::new();
    let e = world.spawn(());
    let arch = doecs::raw::archetypes(&world).get(ArchetypeId::EMPTY);
    assert_eq!(
        doecs::raw::location(&world, e).unwrap().archetype,
        ArchetypeId::EMPTY
    );
    assert_eq!(arch.entity_at(Row(0)), e);
    assert!(panics(|| arch.entity_at(Row(1))));
    assert!(panics(|| arch.slot_ptr(Row(0), ColumnIndex(0))));
    assert!(panics(|| arch.column_ptr(ColumnIndex(0))));
    let pos = world.component_id::<Pos>();
    let arch = doecs::raw::archetypes(&world).get(ArchetypeId::EMPTY);
    assert_eq!(arch.component_slot_ptr(pos, Row(0)), None, "no such column");
    assert!(panics(|| arch.component_slot_ptr(pos, Row(1))));
    // An archetype with no rows has no chunks.
    let empty = World::new();
    let arch = doecs::raw::archetypes(&empty).get(ArchetypeId::EMPTY);
    assert_eq!(arch.chunk_count(), 0);
    assert!(panics(|| arch.chunk_rows_of(0)));
    assert!(panics(|| arch.entity_at(Row(0))));
}

#[test]
fn archetype_ids_are_checked() {
    let (world, _) = world_of(1);
    let archetypes = doecs::raw::archetypes(&world);
    let past = ArchetypeId::from_index(archetypes.len());
    assert!(panics(|| archetypes.get(past)));
    assert!(panics(
        || archetypes.get(ArchetypeId::from_index(u32::MAX as usize - 1))
    ));
    assert!(panics(|| ArchetypeId::from_index(u32::MAX as usize)));
    assert!(panics(|| ArchetypeId::from_index(usize::MAX)));
    assert!(archetypes.since(archetypes.len()).is_empty());
    assert!(archetypes.since(usize::MAX).is_empty());
    let bundle = doecs::raw::bundles(&world).id_of::<(Pos, Vel)>().unwrap();
    assert!(panics(|| archetypes.cached_insert_target(past, bundle)));
    assert!(panics(|| archetypes.cached_remove_target(past, bundle)));
}

#[test]
fn entity_indices_are_checked() {
    let (world, es) = world_of(2);
    let entities: &Entities = world.entities();
    let far = Entity::from_parts(u32::MAX - 1, 0);
    assert_eq!(entities.slot_state(u32::MAX), None);
    assert_eq!(entities.entity_at(u32::MAX), None);
    assert_eq!(entities.location(far), None);
    assert!(!entities.alive(far) && !entities.is_reserved(far));
    // A live index with another generation is no entity either.
    let wrong = Entity::from_parts(es[0].index(), es[0].generation() + 1);
    assert_eq!(entities.location(wrong), None);

    let mut own = Entities::new();
    let e = own.alloc();
    assert!(!own.free(far));
    assert_eq!(own.debug_set_generation(far, 3), None);
    assert!(panics(|| own.reserve_fresh_up_to(u32::MAX as usize + 1)));
    assert!(own.alive(e));
    own.check_invariants();
}

#[test]
fn entity_images_are_checked() {
    let image = |generations: usize, free: Vec<u32>, retired: Vec<u32>| EntityTableImage {
        generations: vec![0; generations],
        free,
        retired,
        min_free_indices: 0,
    };
    let out = image(2, vec![2], vec![]);
    let expected = ImageError::OutOfRange { index: 2, slots: 2 };
    assert_eq!(Entities::from_image(&out).unwrap_err(), expected);
    let far = image(2, vec![], vec![u32::MAX]);
    assert!(matches!(
        Entities::from_image(&far),
        Err(ImageError::OutOfRange { .. })
    ));
    let twice = image(3, vec![1], vec![1]);
    assert_eq!(
        Entities::from_image(&twice).unwrap_err(),
        ImageError::Repeated(1)
    );
    assert!(doecs::raw::world_from_entity_image(&out, WorldConfig::default()).is_err());
    // A good image's entities have no row until placed: nothing reads one.
    let mut world =
        doecs::raw::world_from_entity_image(&image(2, vec![], vec![]), WorldConfig::default())
            .expect("a valid image");
    let e = Entity::from_parts(1, 0);
    assert!(world.entities().is_unlocated(e));
    assert!(world.get::<Pos>(e).is_err());
    assert!(world.insert_one(e, Pos(1)).is_err());
    assert_eq!(
        doecs::raw::finish_placing(&world),
        Err(Entity::from_parts(0, 0))
    );
}

#[test]
fn untyped_access_checks_ids_and_lengths() {
    let mut world = World::new();
    let heat = world
        .register_component(ComponentDescriptor::dynamic("Heat", Layout::new::<u32>()))
        .unwrap();
    let es = doecs::raw::spawn_columns_bytes(&mut world, &[heat], 2, &[&[1, 0, 0, 0, 2, 0, 0, 0]])
        .unwrap();
    assert_eq!(world.get_bytes(es[1], heat).unwrap(), &[2, 0, 0, 0]);
    // Ids from a world with more components are unknown here.
    let mut other = World::new();
    for name in ["a", "b", "c", "d"] {
        let layout = Layout::new::<u8>();
        other
            .register_component(ComponentDescriptor::dynamic(name, layout))
            .unwrap();
    }
    let foreign = other.components().id_by_name("d").unwrap();
    let unknown = EntityError::UnknownComponent(foreign);
    assert_eq!(
        doecs::raw::get_ptr(&world, es[0], foreign).unwrap_err(),
        unknown
    );
    assert_eq!(world.get_bytes(es[0], foreign).unwrap_err(), unknown);
    assert_eq!(world.get_bytes_mut(es[0], foreign).unwrap_err(), unknown);
    assert_eq!(
        world.insert_bytes(es[0], foreign, &[0]).unwrap_err(),
        unknown
    );
    assert_eq!(world.remove_by_id(es[0], foreign).unwrap_err(), unknown);
    assert_eq!(
        doecs::raw::spawn_columns_bytes(&mut world, &[foreign], 1, &[&[0]]).unwrap_err(),
        unknown
    );
    // Lengths: too short, too long, and a count whose byte length
    // overflows (which must not wrap round to the slice's length).
    for bytes in [&[1u8, 2][..], &[0; 5][..]] {
        assert!(matches!(
            world.insert_bytes(es[0], heat, bytes),
            Err(EntityError::WrongSize { .. })
        ));
    }
    for (count, bytes) in [
        (3, &[0u8; 8][..]),
        (1, &[0u8; 8][..]),
        (usize::MAX / 4 + 1, &[][..]),
        (usize::MAX / 2 + 1, &[][..]),
        (usize::MAX, &[0u8; 4][..]),
    ] {
        let refused = doecs::raw::spawn_columns_bytes(&mut world, &[heat], count, &[bytes]);
        assert!(
            matches!(refused, Err(EntityError::WrongSize { .. })),
            "count {count}, {} bytes",
            bytes.len()
        );
    }
    assert!(panics(|| doecs::raw::spawn_columns_bytes(
        &mut world,
        &[heat],
        1,
        &[]
    )));
    assert_eq!(world.len(), 2, "nothing was spawned");
    // Dead and far entities.
    let far = Entity::from_parts(u32::MAX - 1, 0);
    for e in [far, Entity::from_parts(es[0].index(), 9)] {
        let dead = EntityError::NoSuchEntity(e);
        assert_eq!(doecs::raw::get_ptr(&world, e, heat).unwrap_err(), dead);
        assert_eq!(world.get_bytes(e, heat).unwrap_err(), dead);
        assert_eq!(world.get_bytes_mut(e, heat).unwrap_err(), dead);
        assert_eq!(world.insert_bytes(e, heat, &[0; 4]).unwrap_err(), dead);
        assert_eq!(world.mark_changed_by_id(e, heat).unwrap_err(), dead);
        assert_eq!(doecs::raw::debug_set_generation(&mut world, e, 1), None);
    }
    world.check_invariants();
}

#[test]
fn lookups_by_entity_check_the_entity() {
    let (mut big, _) = world_of(5);
    let (small, small_es) = world_of(1);
    // An entity of a bigger world, its index past this world's table, is
    // refused by every lookup.
    let from_big = big.spawn((Pos(9), Vel(9)));
    assert!(small.get::<Pos>(from_big).is_err());
    assert!(small.view::<Pos>().get(from_big).is_err());
    assert!(small.query::<&Pos>().get(from_big).is_err());
    assert_eq!(small.get::<Pos>(small_es[0]), Ok(&Pos(0)));
    // A query state learnt on one world (six rows), used on another (one
    // row), learns again instead of reading rows that are not there.
    let mut state = QueryState::<&Pos>::new(&big);
    assert_eq!(state.iter(&big).count(), 6);
    assert_eq!(state.iter(&small).copied().collect::<Vec<_>>(), [Pos(0)]);
    assert!(state.get(&small, from_big).is_err());
    assert_eq!(state.get(&small, small_es[0]), Ok(&Pos(0)));
    let mut batches = big.query_mut::<&Pos>();
    assert_eq!(batches.iter_batched(0).map(|b| b.count()).sum::<usize>(), 6);
}

#[test]
fn batch_parent_indices_are_checked() {
    for parents in [
        vec![Some(0)],
        vec![None, Some(1)],
        vec![None, Some(2), None],
        vec![Some(u32::MAX)],
    ] {
        assert!(matches!(
            ParentsFirst::new(parents.clone()),
            Err(RelationError::ParentNotBefore { .. })
        ));
        assert!(!ParentsFirst::holds(&parents));
    }
}

/// A snapshot names archetypes and columns by index: it goes back only
/// into the world it was taken of, and only once finished.
#[test]
fn snapshots_restore_only_into_their_world() {
    let (mut a, _) = world_of(3);
    a.snapshot_by_copy::<Pos>();
    a.snapshot_by_copy::<Vel>();
    let mut snapshot = Snapshot::new();
    assert_eq!(a.restore(&snapshot), Err(SnapshotError::Unfinished));
    a.snapshot_into(&mut snapshot).unwrap();
    let (mut b, b_es) = world_of(1);
    assert_eq!(b.restore(&snapshot), Err(SnapshotError::OtherWorld));
    assert_eq!(b.get::<Pos>(b_es[0]), Ok(&Pos(0)));
    a.restore(&snapshot).unwrap();
    assert_eq!(a.len(), 3);
    a.check_invariants();
    b.check_invariants();
}

/// A view finds an entity's value from its slot's code alone: every id
/// that has no row here (despawned, stale, reserved, never issued, or
/// spawned empty) must be refused with the same error `world.get` gives,
/// never read through a table entry of another archetype.
#[test]
fn views_refuse_every_entity_without_a_row_of_the_type() {
    let (mut world, entities) = world_of(3);
    let dead = entities[1];
    world.despawn(dead).unwrap();
    let reserved = world.reserve_entity();
    let never = Entity::from_parts(10_000, 0);
    let stale = Entity::from_parts(entities[0].index(), entities[0].generation() + 1);
    let bare = world.spawn(());
    let other = world.spawn((Vel(9),));
    let view = world.view::<Pos>();
    for e in [dead, reserved, never, stale] {
        assert_eq!(view.get(e), Err(EntityError::NoSuchEntity(e)), "{e:?}");
        assert_eq!(world.get::<Pos>(e).map(|_| ()), view.get(e).map(|_| ()));
    }
    for e in [bare, other] {
        assert!(
            matches!(view.get(e), Err(EntityError::MissingComponent { .. })),
            "{e:?}"
        );
        assert!(!view.contains(e));
    }
    assert_eq!(view.get(entities[2]), Ok(&Pos(2)));
    let mut view = world.view_mut::<Pos>();
    assert_eq!(view.get_mut(dead), Err(EntityError::NoSuchEntity(dead)));
    assert!(view.get_mut(other).is_err());
    view.get_mut(entities[0]).unwrap().0 = 77;
    assert_eq!(world.get::<Pos>(entities[0]), Ok(&Pos(77)));
}
