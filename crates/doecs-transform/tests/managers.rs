//! The core's component-manager machinery, exercised by the transform manager
//! and a call-counting manager: one destroy callback per batch, lazy collection
//! (four probes when nothing died, stopping after four live ones in a row),
//! entities with archetype *and* managed components, and a universe of worlds
//! sharing one id space whose despawns reach every world.

use doecs::raw::Entities;

use doecs::{ComponentManager, DestroyNotice, Entity, GcReport, LazyGc, Probe, Universe, World};
use doecs_transform::{TransformManager, WorldTransforms};
use glam::{Affine3A, Vec3};

fn t(x: f32) -> Affine3A {
    Affine3A::from_translation(Vec3::new(x, 0.0, 0.0))
}

/// Records every `on_destroy` call and every lazy collection.
#[derive(Default)]
struct Recorder {
    calls: Vec<Vec<Entity>>,
    collections: usize,
}

impl ComponentManager for Recorder {
    fn on_destroy(&mut self, destroyed: &[Entity]) {
        self.calls.push(destroyed.to_vec());
    }
    fn collect_garbage(&mut self, _entities: &Entities) -> usize {
        self.collections += 1;
        0
    }
}

/// A second type, so a world can hold a callback and a lazy recorder at once.
#[derive(Default)]
struct LazyRecorder(Recorder);

impl ComponentManager for LazyRecorder {
    fn on_destroy(&mut self, destroyed: &[Entity]) {
        self.0.on_destroy(destroyed);
    }
    fn collect_garbage(&mut self, entities: &Entities) -> usize {
        self.0.collect_garbage(entities)
    }
}

#[test]
fn batch_destruction_makes_one_callback_with_the_whole_slice() {
    let mut world = World::new();
    world.add_manager(Recorder::default(), DestroyNotice::Callback);
    world.add_manager(LazyRecorder::default(), DestroyNotice::LazyGc);
    let es = world.spawn_batch((0..10u32).map(|i| (i,)));
    let dead = world.spawn((99u32,));
    world.despawn(dead).unwrap();
    // Dead and repeated entities in a batch are skipped, not reported twice.
    let batch = [es[1], es[3], es[5], dead, es[3]];
    assert_eq!(world.despawn_batch(&batch), 3);
    let rec = world.manager::<Recorder>().unwrap();
    assert_eq!(rec.calls, vec![vec![dead], vec![es[1], es[3], es[5]]]);
    // The lazy manager is never called on destroy, only when collection runs.
    let lazy = world.manager::<LazyRecorder>().unwrap();
    assert!(lazy.0.calls.is_empty());
    assert_eq!(lazy.0.collections, 0);
    world.collect_garbage();
    assert_eq!(world.manager::<LazyRecorder>().unwrap().0.collections, 1);
    // An empty batch makes no call at all.
    assert_eq!(world.despawn_batch(&[]), 0);
    assert_eq!(world.manager::<Recorder>().unwrap().calls.len(), 2);
}

#[test]
fn an_entity_with_archetype_and_managed_components_loses_both_on_despawn() {
    let mut world = World::new();
    world.add_manager(TransformManager::new(), DestroyNotice::Callback);
    let e = world.spawn((7u32, 2.5f32));
    let other = world.spawn((8u32,));
    world.add_transform(e, t(1.0)).unwrap();
    world.add_transform(other, t(2.0)).unwrap();
    assert_eq!(world.get::<u32>(e), Ok(&7));
    assert!(world
        .manager::<TransformManager>()
        .unwrap()
        .lookup(e)
        .is_some());

    world.despawn(e).unwrap();
    assert!(world.get::<u32>(e).is_err());
    assert!(world.get::<f32>(e).is_err());
    let tm = world.manager::<TransformManager>().unwrap();
    assert!(tm.lookup(e).is_none());
    assert_eq!(tm.len(), 1);
    assert_eq!(tm.world(tm.lookup(other).unwrap()), Some(t(2.0)));
    assert_eq!(world.get::<u32>(other), Ok(&8));
    tm.check_invariants();
    world.check_invariants();
}

#[test]
fn lazy_gc_stops_after_four_live_in_a_row() {
    // Scripted probes: the run of live ones is reset by each destroyed one.
    let script = [
        Probe::Alive,
        Probe::Alive,
        Probe::Alive,
        Probe::Destroyed,
        Probe::Alive,
        Probe::Destroyed,
        Probe::Alive,
        Probe::Alive,
        Probe::Alive,
        Probe::Alive,
        Probe::Destroyed, // never reached
    ];
    let mut k = 0;
    let report = LazyGc::new().sweep(|_| {
        k += 1;
        script[k - 1]
    });
    assert_eq!(
        report,
        GcReport {
            probes: 10,
            destroyed: 2
        }
    );
    assert_eq!(LazyGc::ALIVE_IN_A_ROW, 4);
    // Nothing alive and nothing left: an empty manager costs no probe.
    assert_eq!(LazyGc::new().sweep(|_| Probe::Empty), GcReport::default());
}

#[test]
fn lazy_gc_on_the_transform_manager_probes_four_when_nothing_died() {
    let n = if cfg!(miri) { 100 } else { 100_000 };
    let mut entities = Entities::new();
    let mut tm = TransformManager::new();
    for _ in 0..n {
        tm.create(entities.alloc(), t(0.0)).unwrap();
    }
    for _ in 0..10 {
        assert_eq!(
            tm.sweep_garbage(&entities),
            GcReport {
                probes: 4,
                destroyed: 0
            }
        );
    }
    assert_eq!(tm.len(), n);
    // When everything died, one sweep empties the manager.
    let all: Vec<Entity> = tm.iter().map(|h| h.entity()).collect();
    for e in all {
        entities.free(e);
    }
    let report = tm.sweep_garbage(&entities);
    assert_eq!(report.destroyed, n);
    assert!(tm.is_empty());
    tm.check_invariants();
}

#[test]
fn universe_batch_despawn_reaches_every_world_storage_and_managers_once() {
    let mut universe = Universe::new();
    let game = universe.add_world();
    let inventory = universe.add_world();
    for key in [game, inventory] {
        let mut w = universe.world_mut(key);
        w.add_manager(Recorder::default(), DestroyNotice::Callback);
        w.add_manager(TransformManager::new(), DestroyNotice::Callback);
    }
    let es = universe.spawn_many(6);
    // Everything is in the game world; only the even ones are in the inventory.
    {
        let mut w = universe.world_mut(game);
        for (k, &e) in es.iter().enumerate() {
            w.insert_one(e, k as u32).unwrap();
        }
        // Two chains: es[0] <- es[1] <- es[2] and es[3] <- es[4] <- es[5].
        let parents = [None, Some(0), Some(1), None, Some(3), Some(4)];
        w.set_parents_in_batch(&es, &parents).unwrap();
        w.add_transforms(&es, &[t(1.0); 6]).unwrap();
    }
    {
        let mut w = universe.world_mut(inventory);
        for &e in es.iter().step_by(2) {
            w.insert_one(e, 1.0f32).unwrap();
            w.add_transform(e, t(5.0)).unwrap();
        }
    }
    let gone = [es[0], es[1], es[2]];
    assert_eq!(universe.despawn_batch(&gone), 3);
    for key in [game, inventory] {
        let world = universe.world(key);
        let rec = world.manager::<Recorder>().unwrap();
        assert_eq!(rec.calls, vec![gone.to_vec()], "one call per world");
        let tm = world.manager::<TransformManager>().unwrap();
        for &e in &gone {
            assert!(tm.lookup(e).is_none());
            assert!(world.get::<u32>(e).is_err());
            assert!(world.get::<f32>(e).is_err());
        }
        tm.check_invariants();
    }
    // In the game world the other chain is untouched.
    let game_tm = universe.world(game).manager::<TransformManager>().unwrap();
    let h3 = game_tm.lookup(es[3]).unwrap();
    assert!(game_tm.parent(h3).is_none());
    assert_eq!(game_tm.world(h3), Some(t(1.0)));
    assert_eq!(game_tm.world(game_tm.lookup(es[5]).unwrap()), Some(t(3.0)));
    // The inventory kept es[4] only.
    let inv = universe.world(inventory);
    assert_eq!(inv.get::<f32>(es[4]), Ok(&1.0));
    assert_eq!(inv.manager::<TransformManager>().unwrap().len(), 1);
    universe.check_invariants();
    // The ids are dead everywhere: re-despawning fails, entering a world fails.
    assert!(universe.despawn(es[0]).is_err());
    assert!(universe.world_mut(game).insert_one(es[0], 1u32).is_err());
}

#[test]
fn universe_lazy_gc_managers_see_the_shared_allocator() {
    let mut universe = Universe::new();
    let a = universe.add_world();
    let b = universe.add_world();
    for key in [a, b] {
        universe
            .world_mut(key)
            .add_manager(TransformManager::new(), DestroyNotice::LazyGc);
    }
    let es = universe.spawn_many(4);
    for key in [a, b] {
        let mut w = universe.world_mut(key);
        for &e in &es {
            w.add_transform(e, t(0.0)).unwrap();
        }
    }
    universe.despawn(es[2]).unwrap();
    // Lazy: nobody was told yet.
    for key in [a, b] {
        assert_eq!(
            universe
                .world(key)
                .manager::<TransformManager>()
                .unwrap()
                .len(),
            4
        );
    }
    let mut collected = 0;
    for _ in 0..1000 {
        collected += universe.collect_garbage();
        if collected == 2 {
            break;
        }
    }
    assert_eq!(collected, 2, "one instance per world");
    for key in [a, b] {
        let tm = universe.world(key).manager::<TransformManager>().unwrap();
        assert!(tm.lookup(es[2]).is_none());
        assert_eq!(tm.len(), 3);
    }
}

#[test]
fn a_world_with_its_own_allocator_stays_the_simple_case() {
    // Two plain worlds hand out ids independently; despawning in one does not
    // touch the other even when the ids collide.
    let mut w1 = World::new();
    let mut w2 = World::new();
    let a = w1.spawn((1u32,));
    let b = w2.spawn((2u32,));
    assert_eq!(a, b, "separate id spaces");
    w1.despawn(a).unwrap();
    assert_eq!(w2.get::<u32>(b), Ok(&2));
}
