//! `par_update_locals` (fed by a query, run over its chunks in parallel)
//! gives exactly what the sequential `update_locals` gives, in immediate and
//! deferred mode, with clean and dirty nodes, and with entities that have no
//! instance.

use doecs::{Entity, World};
use doecs_transform::TransformManager;
use glam::{Affine3A, Vec3};

struct Turn(f32);

/// A forest of `roots` roots with `fanout` children each, three levels deep;
/// every node's entity has a `Turn`, and so do `extra` entities with no node.
fn setup(deferred: bool, roots: usize, fanout: usize, extra: usize) -> (World, TransformManager) {
    let mut world = World::new();
    let mut tm = if deferred {
        TransformManager::deferred()
    } else {
        TransformManager::new()
    };
    let mut k = 0.0f32;
    let mut node = |world: &mut World, tm: &mut TransformManager, parent: Option<Entity>| {
        k += 1.0;
        let e = world.spawn((Turn(k * 0.01),));
        let inst = tm
            .create(e, Affine3A::from_translation(Vec3::new(k, 0.0, 0.0)))
            .unwrap();
        if let Some(p) = parent {
            tm.link(inst, tm.lookup(p).unwrap()).unwrap();
        }
        e
    };
    for _ in 0..roots {
        let r = node(&mut world, &mut tm, None);
        for _ in 0..fanout {
            let c = node(&mut world, &mut tm, Some(r));
            for _ in 0..fanout {
                node(&mut world, &mut tm, Some(c));
            }
        }
    }
    for _ in 0..extra {
        world.spawn((Turn(9.0),));
    }
    tm.propagate();
    (world, tm)
}

fn worlds(world: &World, tm: &TransformManager) -> Vec<(Entity, Affine3A)> {
    let mut out: Vec<_> = world
        .query::<(Entity, &Turn)>()
        .iter()
        .filter_map(|(e, _)| Some((e, tm.world(tm.lookup(e)?).unwrap())))
        .collect();
    out.sort_by_key(|(e, _)| *e);
    out
}

fn turn(local: &mut Affine3A, t: &Turn) {
    *local *= Affine3A::from_rotation_y(t.0);
}

#[test]
fn parallel_and_sequential_updates_agree() {
    for deferred in [false, true] {
        let (mut wa, mut a) = setup(deferred, 40, 4, 300);
        let (wb, mut b) = setup(deferred, 40, 4, 300);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for frame in 0..8 {
            let n = pool.install(|| a.par_update_locals(&mut wa.query_mut(), turn));
            let items: Vec<(Entity, f32)> = wb
                .query::<(Entity, &Turn)>()
                .iter()
                .map(|(e, t)| (e, t.0))
                .collect();
            let m = b.update_locals(items, |l, t| turn(l, &Turn(t)));
            assert_eq!(n, m, "frame {frame}");
            assert_eq!(n, 40 * (1 + 4 + 16));
            a.propagate();
            b.propagate();
            a.check_invariants();
            b.check_invariants();
            assert_eq!(
                worlds(&wa, &a),
                worlds(&wb, &b),
                "deferred {deferred}, frame {frame}"
            );
            // Some frames touch only a filtered part, so nodes go idle,
            // leave the dirty partition and come back through the pending list.
            if frame % 3 == 2 {
                for _ in 0..6 {
                    a.propagate();
                    b.propagate();
                }
                if deferred {
                    assert_eq!(a.dirty_len(), 0, "idle nodes left the partition");
                }
            }
        }
    }
}
