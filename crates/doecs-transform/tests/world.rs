//! The transform manager inside worlds: despawns reach it through the world's
//! destroy callback, and a universe's worlds each keep their own scene graph.

use doecs::{DestroyNotice, Universe, World};
use doecs_transform::TransformManager;
use glam::{Affine3A, Vec3};

fn t(x: f32) -> Affine3A {
    Affine3A::from_translation(Vec3::new(x, 0.0, 0.0))
}

#[test]
fn despawning_a_parent_through_the_world_leaves_no_dangling_links() {
    let mut world = World::new();
    world.add_manager(TransformManager::new(), DestroyNotice::Callback);
    let parent = world.spawn((1u32,));
    let child = world.spawn((2u32,));
    let grandchild = world.spawn(());
    let tm = world.manager_mut::<TransformManager>().unwrap();
    let p = tm.create(parent, t(1.0)).unwrap();
    let c = tm.create(child, t(2.0)).unwrap();
    let g = tm.create(grandchild, t(4.0)).unwrap();
    tm.link(c, p).unwrap();
    tm.link(g, c).unwrap();
    assert_eq!(tm.world(g).unwrap().translation.x, 7.0);

    world.despawn(parent).unwrap();
    let tm = world.manager::<TransformManager>().unwrap();
    tm.check_invariants();
    assert!(tm.lookup(parent).is_none());
    let c = tm.lookup(child).unwrap();
    assert!(tm.parent(c).is_none(), "orphaned child becomes a root");
    // It keeps its world transform.
    assert_eq!(tm.world(c).unwrap().translation.x, 3.0);
    let g = tm.lookup(grandchild).unwrap();
    assert_eq!(tm.world(g).unwrap().translation.x, 7.0);
    world.check_invariants();
}

#[test]
fn batch_despawn_is_one_call_and_every_instance_goes() {
    let mut world = World::new();
    world.add_manager(TransformManager::new(), DestroyNotice::Callback);
    let es = world.spawn_batch((0..100u32).map(|i| (i,)));
    let tm = world.manager_mut::<TransformManager>().unwrap();
    let parents: Vec<Option<u32>> = (0..100u32)
        .map(|i| if i == 0 { None } else { Some(i - 1) })
        .collect();
    let locals = vec![t(1.0); 100];
    tm.create_many(&es, &locals, &parents).unwrap();
    world.despawn_batch(&es[..50]);
    let tm = world.manager::<TransformManager>().unwrap();
    tm.check_invariants();
    assert_eq!(tm.len(), 50);
    // Node 50 lost its parent and keeps its world translation of 51.
    let n50 = tm.lookup(es[50]).unwrap();
    assert!(tm.parent(n50).is_none());
    assert_eq!(tm.world(n50).unwrap().translation.x, 51.0);
}

#[test]
fn lazy_gc_manager_cleans_up_when_asked() {
    let mut world = World::new();
    world.add_manager(TransformManager::new(), DestroyNotice::LazyGc);
    let es = world.spawn_batch((0..10u32).map(|i| (i,)));
    for &e in &es {
        world
            .manager_mut::<TransformManager>()
            .unwrap()
            .create(e, t(0.0))
            .unwrap();
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
        let tm = w.manager_mut::<TransformManager>().unwrap();
        let p = tm.create(player, t(10.0)).unwrap();
        let s = tm.create(sword, t(1.0)).unwrap();
        tm.link(s, p).unwrap();
    }
    // In the inventory world it is an icon at slot 3, unrelated to the player.
    {
        let mut w = universe.world_mut(inventory);
        w.insert_one(sword, 3u8).unwrap();
        w.manager_mut::<TransformManager>()
            .unwrap()
            .create(sword, t(3.0))
            .unwrap();
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
    let mut entities = doecs::Entities::new();
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
