//! The transform manager inside worlds: despawns reach it through the world's
//! destroy callback, and a universe's worlds each keep their own scene graph.

use doecs::{DestroyNotice, Universe, World};
use doecs_transform::{TransformError, TransformManager, WorldTransforms};
use glam::{Affine3A, Vec3};

fn t(x: f32) -> Affine3A {
    Affine3A::from_translation(Vec3::new(x, 0.0, 0.0))
}

#[test]
fn the_manager_follows_child_of_and_despawns_take_whole_subtrees() {
    let mut world = World::new();
    world.add_manager(TransformManager::new(), DestroyNotice::Callback);
    let parent = world.spawn((1u32,));
    let child = world.spawn((2u32,));
    let grandchild = world.spawn(());
    world.set_parent(child, parent).unwrap();
    world.set_parent(grandchild, child).unwrap();
    world.add_transform(parent, t(1.0)).unwrap();
    world.add_transform(child, t(2.0)).unwrap();
    world.add_transform(grandchild, t(4.0)).unwrap();
    let tm = world.manager::<TransformManager>().unwrap();
    assert_eq!(
        tm.world(tm.lookup(grandchild).unwrap())
            .unwrap()
            .translation
            .x,
        7.0
    );

    // The manager's own structural calls are refused: ChildOf drives it.
    let tm = world.transforms_mut();
    let (c, p) = (tm.lookup(child).unwrap(), tm.lookup(parent).unwrap());
    assert_eq!(tm.unlink(c), Err(TransformError::FollowsHierarchy));
    assert_eq!(tm.link(p, c), Err(TransformError::FollowsHierarchy));
    assert_eq!(
        tm.create(world_spawned_later(), t(0.0)),
        Err(TransformError::FollowsHierarchy)
    );

    // Taking the parent's transform away: its child becomes a root that
    // keeps its world transform, while ChildOf still says "child of".
    let tm = world.transforms_mut();
    tm.destroy(tm.lookup(parent).unwrap()).unwrap();
    let c = tm.lookup(child).unwrap();
    assert!(tm.parent(c).is_none());
    assert_eq!(tm.world(c).unwrap().translation.x, 3.0);
    tm.check_invariants();
    assert_eq!(world.parent(child), Some(parent));
    // A new transform for the parent adopts the child at once.
    world.add_transform(parent, t(10.0)).unwrap();
    let tm = world.manager::<TransformManager>().unwrap();
    let c = tm.lookup(child).unwrap();
    assert_eq!(tm.parent(c).map(|i| i.entity()), Some(parent));
    assert_eq!(tm.world(c).unwrap().translation.x, 13.0);
    assert_eq!(
        tm.world(tm.lookup(grandchild).unwrap())
            .unwrap()
            .translation
            .x,
        17.0
    );

    // Despawning the parent despawns the subtree, instances and all.
    world.despawn(parent).unwrap();
    assert!(!world.alive(child) && !world.alive(grandchild));
    let tm = world.manager::<TransformManager>().unwrap();
    tm.check_invariants();
    assert!(tm.is_empty());
    world.check_invariants();
}

/// An entity id that was never given to the manager.
fn world_spawned_later() -> doecs::Entity {
    doecs::Entity::from_parts(1000, 0)
}

#[test]
fn batch_despawn_is_one_call_and_every_instance_goes() {
    let mut world = World::new();
    world.add_manager(TransformManager::new(), DestroyNotice::Callback);
    let es = world.spawn_batch((0..100u32).map(|i| (i,)));
    // Two chains: 0..50 and 50..100.
    let parents: Vec<Option<u32>> = (0..100u32)
        .map(|i| if i % 50 == 0 { None } else { Some(i - 1) })
        .collect();
    world.set_parents_in_batch(&es, &parents).unwrap();
    world.add_transforms(&es, &vec![t(1.0); 100]).unwrap();
    world.despawn_batch(&es[..1]);
    let tm = world.manager::<TransformManager>().unwrap();
    tm.check_invariants();
    assert_eq!(tm.len(), 50, "the first chain went with its root");
    let n50 = tm.lookup(es[50]).unwrap();
    assert!(tm.parent(n50).is_none());
    assert_eq!(tm.world(n50).unwrap().translation.x, 1.0);
    assert_eq!(
        tm.world(tm.lookup(es[99]).unwrap()).unwrap().translation.x,
        50.0
    );
}

#[test]
fn lazy_gc_manager_cleans_up_when_asked() {
    let mut world = World::new();
    world.add_manager(TransformManager::new(), DestroyNotice::LazyGc);
    let es = world.spawn_batch((0..10u32).map(|i| (i,)));
    for &e in &es {
        world.add_transform(e, t(0.0)).unwrap();
    }
    world.despawn(es[3]).unwrap();
    assert_eq!(
        world.manager::<TransformManager>().unwrap().len(),
        10,
        "lazy: not told"
    );
    let mut collected = 0;
    for _ in 0..100 {
        collected += world.collect_garbage();
        if collected == 1 {
            break;
        }
    }
    assert_eq!(collected, 1);
    assert!(world
        .manager::<TransformManager>()
        .unwrap()
        .lookup(es[3])
        .is_none());
}

#[test]
fn two_worlds_share_ids_and_each_keeps_its_own_graph() {
    let mut universe = Universe::new();
    let game = universe.add_world();
    let inventory = universe.add_world();
    for key in [game, inventory] {
        universe
            .world_mut(key)
            .add_manager(TransformManager::new(), DestroyNotice::Callback);
    }
    let player = universe.spawn();
    let sword = universe.spawn();
    // In the game world the sword hangs off the player's hand.
    {
        let mut w = universe.world_mut(game);
        w.insert_one(player, 100u32).unwrap();
        w.insert_one(sword, 1u16).unwrap();
        w.set_parent(sword, player).unwrap();
        w.add_transform(player, t(10.0)).unwrap();
        w.add_transform(sword, t(1.0)).unwrap();
    }
    // In the inventory world it is an icon at slot 3, unrelated to the player.
    {
        let mut w = universe.world_mut(inventory);
        w.insert_one(sword, 3u8).unwrap();
        w.add_transform(sword, t(3.0)).unwrap();
    }
    let game_tm = universe.world(game).manager::<TransformManager>().unwrap();
    assert_eq!(
        game_tm
            .world(game_tm.lookup(sword).unwrap())
            .unwrap()
            .translation
            .x,
        11.0
    );
    let inv_tm = universe
        .world(inventory)
        .manager::<TransformManager>()
        .unwrap();
    assert_eq!(
        inv_tm
            .world(inv_tm.lookup(sword).unwrap())
            .unwrap()
            .translation
            .x,
        3.0
    );

    universe.despawn(sword).unwrap();
    for key in [game, inventory] {
        let tm = universe.world(key).manager::<TransformManager>().unwrap();
        assert!(tm.lookup(sword).is_none());
        tm.check_invariants();
    }
    assert!(universe.world(inventory).get::<u8>(sword).is_err());
    assert_eq!(universe.world(game).get::<u32>(player), Ok(&100));
    assert_eq!(universe.world(inventory).len(), 0);
    universe.check_invariants();
    assert!(universe.despawn(sword).is_err(), "stale handle");
}

#[test]
fn lazy_gc_costs_four_probes_when_nothing_died() {
    let mut entities = doecs::raw::Entities::new();
    let mut tm = TransformManager::new();
    for _ in 0..if cfg!(miri) { 200 } else { 10_000 } {
        tm.create(entities.alloc(), t(0.0)).unwrap();
    }
    let report = tm.sweep_garbage(&entities);
    assert_eq!(
        report,
        doecs::GcReport {
            probes: 4,
            destroyed: 0
        }
    );
    // Kill a tenth; repeated sweeps find them all.
    let dead: Vec<_> = tm.iter().map(|i| i.entity()).step_by(10).collect();
    for &e in &dead {
        entities.free(e);
    }
    let mut destroyed = 0;
    for _ in 0..100_000 {
        destroyed += tm.sweep_garbage(&entities).destroyed;
        if destroyed == dead.len() {
            break;
        }
    }
    assert_eq!(destroyed, dead.len());
    tm.check_invariants();
}
