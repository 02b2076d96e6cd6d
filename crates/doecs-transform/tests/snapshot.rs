//! The transform manager in world snapshots: a restore puts the whole scene
//! graph back (world transforms, parents, lookups, the deferred partition,
//! the lazy collector), and the frames that follow a restore give
//! bit-identical world transforms to the frames that followed the snapshot.

use doecs::{DestroyNotice, Entity, Snapshot, World};
use doecs_transform::{TransformManager, WorldTransforms};
use glam::{Affine3A, Quat, Vec3};

/// A plain component, so entities live in archetypes too.
#[derive(Copy, Clone, Debug, PartialEq)]
struct Tag(u32);

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn f(&mut self) -> f32 {
        (self.next() % 1000) as f32 / 100.0 - 5.0
    }
}

fn affine(rng: &mut Rng) -> Affine3A {
    Affine3A::from_scale_rotation_translation(
        Vec3::splat(1.0 + rng.f().abs() / 10.0),
        Quat::from_rotation_y(rng.f()),
        Vec3::new(rng.f(), rng.f(), rng.f()),
    )
}

/// One instance: entity bits, local and world transform bits, parent's
/// entity bits, children's entity bits.
type Node = (u64, Vec<u32>, Vec<u32>, Option<u64>, Vec<u64>);

/// Everything observable about the manager, exact to the bit: per instance
/// in array order its entity, local and world transform bits, parent and
/// children; then every entity's lookup; then the sizes.
#[derive(Debug, PartialEq, Eq)]
struct State {
    instances: Vec<Node>,
    lookups: Vec<Option<u32>>,
    len: usize,
    dirty: usize,
}

/// Asserts equal states, naming the first difference (the full dump is long).
#[track_caller]
fn assert_same(a: &State, b: &State) {
    assert_eq!((a.len, a.dirty), (b.len, b.dirty), "len and dirty_len");
    for (k, (x, y)) in a.instances.iter().zip(&b.instances).enumerate() {
        assert_eq!(x, y, "instance {k}");
    }
    for (k, (x, y)) in a.lookups.iter().zip(&b.lookups).enumerate() {
        assert_eq!(x, y, "lookup of known entity {k}");
    }
    assert_eq!(a.lookups.len(), b.lookups.len());
}

fn bits(a: Affine3A) -> Vec<u32> {
    a.to_cols_array().iter().map(|x| x.to_bits()).collect()
}

fn state(world: &World, known: &[Entity]) -> State {
    let tm = world.manager::<TransformManager>().unwrap();
    tm.check_invariants();
    let instances = tm
        .iter()
        .map(|i| {
            (
                i.entity().to_bits(),
                bits(tm.local(i).unwrap()),
                bits(tm.world(i).unwrap()),
                tm.parent(i).map(|p| p.entity().to_bits()),
                tm.children(i).map(|c| c.entity().to_bits()).collect(),
            )
        })
        .collect();
    let lookups = known
        .iter()
        .map(|&e| tm.lookup(e).map(|i| i.index()))
        .collect();
    State {
        instances,
        lookups,
        len: tm.len(),
        dirty: tm.dirty_len(),
    }
}

/// A world whose manager holds a random forest of `n` nodes.
fn world_with(manager: TransformManager, notice: DestroyNotice, n: u32) -> (World, Vec<Entity>) {
    let mut world = World::new();
    world.snapshot_by_copy::<Tag>();
    world.add_manager(manager, notice);
    let es = world.spawn_batch((0..n).map(|i| (Tag(i),)));
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let locals: Vec<Affine3A> = (0..n).map(|_| affine(&mut rng)).collect();
    let parents: Vec<Option<u32>> = (0..n)
        .map(|k| (k > 0 && rng.below(4) != 0).then(|| rng.below(k as usize) as u32))
        .collect();
    world.set_parents_in_batch(&es, &parents).unwrap();
    world.add_transforms(&es, &locals).unwrap();
    world.transforms_mut().propagate();
    (world, es)
}

/// `frames` frames of random work seeded by `seed`: spawns with new nodes,
/// links, unlinks, moves, despawns, lazy collection, compaction and a
/// propagation per frame. Every entity it spawns is pushed onto `known`.
fn frames(world: &mut World, known: &mut Vec<Entity>, seed: u64, frames: usize) {
    let mut rng = Rng(seed);
    for _ in 0..frames {
        for _ in 0..20 {
            let op = rng.below(100);
            let e = known[rng.below(known.len())];
            let other = known[rng.below(known.len())];
            let local = affine(&mut rng);
            if op < 10 {
                let new = world.spawn((Tag(known.len() as u32),));
                known.push(new);
                let _ = world.set_parent(new, other); // `other` may be dead
                world.add_transform(new, local).unwrap();
            } else if op < 16 {
                let _ = world.despawn(e);
            } else if op <= 40 {
                let _ = world.set_parent(e, other); // cycles and the dead are refused
            } else if op <= 48 {
                world.remove_parent(e);
            } else {
                let tm = world.manager_mut::<TransformManager>().unwrap();
                let (Some(a), Some(b)) = (tm.lookup(e), tm.lookup(other)) else {
                    continue;
                };
                let _ = b;
                match op {
                    49 => tm.compact(),
                    _ => tm.set_local(a, local).unwrap(),
                }
            }
        }
        world.collect_garbage();
        world.manager_mut::<TransformManager>().unwrap().propagate();
    }
}

/// Snapshot, run, restore, compare; run the same frames again and compare
/// with the first run; then a second snapshot into the same buffer.
fn round_trip(manager: fn() -> TransformManager, notice: DestroyNotice) {
    let (mut world, mut known) = world_with(manager(), notice, 300);
    frames(&mut world, &mut known, 7, 5);
    let at_snapshot = known.len();
    let mut snapshot = Snapshot::new();
    world.snapshot_into(&mut snapshot).unwrap();
    let before = state(&world, &known);

    frames(&mut world, &mut known, 99, 12);
    let after_first = state(&world, &known);
    assert_ne!(after_first, before, "the frames changed something");

    world.restore(&snapshot).unwrap();
    world.check_invariants();
    assert_same(&state(&world, &known[..at_snapshot]), &before);
    let tm = world.manager::<TransformManager>().unwrap();
    for &e in &known[at_snapshot..] {
        assert!(!world.alive(e), "spawned after the snapshot");
        assert!(tm.lookup(e).is_none(), "no instance for {e:?}");
    }

    // The same frames again: bit-identical, entity ids included.
    let mut again = known[..at_snapshot].to_vec();
    frames(&mut world, &mut again, 99, 12);
    assert_eq!(again, known);
    assert_same(&state(&world, &known), &after_first);

    // A second snapshot into the same buffer, another divergence, restore.
    world.snapshot_into(&mut snapshot).unwrap();
    frames(&mut world, &mut again, 5, 6);
    world.restore(&snapshot).unwrap();
    world.check_invariants();
    assert_same(&state(&world, &known), &after_first);
    // Restoring the same snapshot twice is fine.
    frames(&mut world, &mut known[..].to_vec(), 11, 3);
    world.restore(&snapshot).unwrap();
    assert_same(&state(&world, &known), &after_first);
}

#[test]
fn immediate_manager_round_trips() {
    round_trip(TransformManager::new, DestroyNotice::Callback);
}

#[test]
fn deferred_manager_round_trips() {
    round_trip(TransformManager::deferred, DestroyNotice::Callback);
}

#[test]
fn lazy_gc_manager_round_trips() {
    // The collector's random state is part of the snapshot: the same sweeps
    // probe the same slots after a restore.
    round_trip(TransformManager::deferred, DestroyNotice::LazyGc);
}

#[test]
fn pending_and_dirty_state_come_back() {
    let (mut world, es) = world_with(TransformManager::deferred(), DestroyNotice::Callback, 50);
    {
        let tm = world.manager_mut::<TransformManager>().unwrap();
        for _ in 0..8 {
            tm.propagate(); // idle nodes leave the partition
        }
        assert_eq!(tm.dirty_len(), 0);
        let a = tm.lookup(es[10]).unwrap();
        tm.set_local(a, Affine3A::from_translation(Vec3::X))
            .unwrap();
    }
    let mut snapshot = Snapshot::new();
    world.snapshot_into(&mut snapshot).unwrap();
    let before = state(&world, &es);
    let w_before = {
        let tm = world.manager_mut::<TransformManager>().unwrap();
        tm.propagate();
        state(&world, &es)
    };
    assert_ne!(before, w_before, "the pending move reached the partition");
    world.restore(&snapshot).unwrap();
    assert_same(&state(&world, &es), &before);
    // The pending move is still pending: propagating applies it the same way.
    world.manager_mut::<TransformManager>().unwrap().propagate();
    assert_same(&state(&world, &es), &w_before);
}

#[test]
fn restore_before_any_instance_empties_the_manager() {
    let mut world = World::new();
    world.snapshot_by_copy::<Tag>();
    world.add_manager(TransformManager::new(), DestroyNotice::Callback);
    let mut snapshot = Snapshot::new();
    world.snapshot_into(&mut snapshot).unwrap();
    let mut grown = Vec::new();
    for i in 0..100 {
        let e = world.spawn((Tag(i),));
        grown.push(e);
        world.add_transform(e, Affine3A::IDENTITY).unwrap();
    }
    world.restore(&snapshot).unwrap();
    let tm = world.manager::<TransformManager>().unwrap();
    tm.check_invariants();
    assert!(tm.is_empty());
    assert!(grown.iter().all(|&e| tm.lookup(e).is_none()));
}

use doecs_benchkit::alloc_count as counting;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

#[test]
fn steady_state_save_and_restore_allocate_nothing() {
    use doecs::ComponentManager;
    let (mut world, mut known) =
        world_with(TransformManager::deferred(), DestroyNotice::Callback, 400);
    frames(&mut world, &mut known, 21, 3);
    let mut tm = world.remove_manager::<TransformManager>().unwrap();
    let mut saved = None;
    assert!(tm.save_state(&mut saved));
    // Moves that keep the sizes: the saved buffers fit.
    for inst in tm.iter().step_by(7).collect::<Vec<_>>() {
        tm.set_local(inst, Affine3A::from_translation(Vec3::Y))
            .unwrap();
    }
    tm.propagate();
    let n = counting::allocations(|| {
        assert!(tm.save_state(&mut saved));
        tm.restore_state(&**saved.as_ref().unwrap());
        assert!(tm.save_state(&mut saved));
    });
    assert_eq!(n, 0, "allocations in a steady-state save and restore");
    // The counter counts: a save into an empty buffer allocates.
    let mut fresh = None;
    assert!(
        counting::allocations(|| {
            tm.save_state(&mut fresh);
        }) > 0
    );
    tm.check_invariants();
}
