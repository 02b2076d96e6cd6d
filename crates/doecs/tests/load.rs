//! The load path: a world built from saved ids, rows placed column by
//! column (values moved in, dropped exactly once), refusals that change
//! nothing, and the check that every live entity got a row. Runs under
//! Miri with strict provenance.

use doecs::raw::EntityTableImage;

use doecs::{Entity, EntityError, World, WorldConfig};
use std::mem::ManuallyDrop;
use std::sync::Arc as Rc;

#[derive(Debug, PartialEq)]
struct Hp(u32);

/// Counts its drops through a shared counter.
#[derive(Debug)]
struct Tracked(#[allow(dead_code)] Rc<()>);

fn image() -> EntityTableImage {
    EntityTableImage {
        generations: vec![3, 0, 7, 1],
        free: vec![1],
        retired: vec![],
        min_free_indices: 0,
    }
}

#[test]
fn rows_are_placed_for_the_saved_ids() {
    let mut world = doecs::raw::world_from_entity_image(&image(), WorldConfig::default()).unwrap();
    let live: Vec<Entity> = image().live().collect();
    assert_eq!(
        live,
        [
            Entity::from_parts(0, 3),
            Entity::from_parts(2, 7),
            Entity::from_parts(3, 1)
        ]
    );
    assert_eq!(doecs::raw::unplaced_count(&world), 3);
    assert_eq!(doecs::raw::finish_placing(&world), Err(live[0]));
    let hp = world
        .register_component(doecs::ComponentDescriptor::of::<Hp>())
        .unwrap();
    let tr = world
        .register_component(doecs::ComponentDescriptor::of::<Tracked>())
        .unwrap();
    let counter = Rc::new(());
    let hps = ManuallyDrop::new(vec![Hp(10), Hp(20)]);
    let trs = ManuallyDrop::new(vec![Tracked(counter.clone()), Tracked(counter.clone())]);
    // SAFETY: two values of each type; on `Ok` they belong to the world.
    unsafe {
        doecs::raw::place_columns(
            &mut world,
            &live[..2],
            &[hp, tr],
            &[hps.as_ptr().cast(), trs.as_ptr().cast()],
        )
        .unwrap();
    }
    // Free the vectors' memory without dropping the moved values.
    // SAFETY: the values were moved into the world above.
    unsafe {
        let mut hps = ManuallyDrop::into_inner(hps);
        hps.set_len(0);
        let mut trs = ManuallyDrop::into_inner(trs);
        trs.set_len(0);
    }
    // SAFETY: no columns, so no values.
    unsafe { doecs::raw::place_columns(&mut world, &live[2..], &[], &[]) }.unwrap();
    doecs::raw::finish_placing(&world).unwrap();
    world.check_invariants();
    assert_eq!(world.get::<Hp>(live[1]), Ok(&Hp(20)));
    assert_eq!(Rc::strong_count(&counter), 3);
    // The next spawn reuses the saved free index with its generation.
    let next = world.spawn((Hp(1),));
    assert_eq!(next, Entity::from_parts(1, 0));
    drop(world);
    assert_eq!(Rc::strong_count(&counter), 1, "each value dropped once");
}

#[test]
fn refused_placements_change_nothing() {
    let mut world = doecs::raw::world_from_entity_image(&image(), WorldConfig::default()).unwrap();
    let hp = world
        .register_component(doecs::ComponentDescriptor::of::<Hp>())
        .unwrap();
    let live: Vec<Entity> = image().live().collect();
    let values = [0u32; 3];
    let src = [values.as_ptr().cast::<u8>()];
    let place =
        |world: &mut World, es: &[Entity], ids: &[doecs::ComponentId], srcs: &[*const u8]| {
            // SAFETY: every source is `values`, three `u32`s, which are valid
            // `Hp`s (a `u32` with no drop) for the at most two entities placed;
            // refused calls move nothing, and a placed `Hp` needs no drop, so
            // the copies the world takes leave `values` as it was.
            unsafe { doecs::raw::place_columns(world, es, ids, srcs) }
        };
    let dead = Entity::from_parts(1, 0);
    assert_eq!(
        place(&mut world, &[dead], &[hp], &src),
        Err(EntityError::NoSuchEntity(dead))
    );
    assert_eq!(
        place(&mut world, &[live[0], live[0]], &[hp], &src),
        Err(EntityError::AliasedEntity(live[0]))
    );
    assert_eq!(
        place(&mut world, &[live[0]], &[hp, hp], &[src[0], src[0]]),
        Err(EntityError::DuplicateComponent(hp))
    );
    assert_eq!(doecs::raw::unplaced_count(&world), 3);
    // Placed once, an entity cannot be placed again.
    place(&mut world, &[live[0]], &[hp], &src).unwrap();
    assert_eq!(
        place(&mut world, &[live[0]], &[hp], &src),
        Err(EntityError::NoSuchEntity(live[0]))
    );
    assert_eq!(doecs::raw::unplaced_count(&world), 2);
}

#[test]
fn bad_images_build_no_world() {
    let mut bad = image();
    bad.free.push(9);
    assert!(doecs::raw::world_from_entity_image(&bad, WorldConfig::default()).is_err());
}
