//! The transform manager through a world save: the hierarchy, child order,
//! locals and world transforms come back exactly; links that disagree with
//! the `ChildOf` pairs are rebuilt from the pairs; bad saved states are
//! refused with the reason.

use doecs::{DestroyNotice, Entity, World};
use doecs_registry::{ComponentRegistry, LoadError, SaveFormat, WorldSaveExt};
use doecs_transform::{TransformManager, WorldTransforms};
use glam::{Affine3A, Vec3};

fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register_manager::<TransformManager>("transform", DestroyNotice::Callback)
        .unwrap();
    r
}

fn scene(deferred: bool) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let es: Vec<Entity> = (0..20).map(|_| world.spawn(())).collect();
    world.add_manager(
        if deferred {
            TransformManager::deferred()
        } else {
            TransformManager::new()
        },
        DestroyNotice::Callback,
    );
    // Three levels, several children per parent, linked out of order; the
    // hierarchy is ChildOf, which the manager follows.
    for (c, p) in [
        (3, 0),
        (1, 0),
        (2, 0),
        (7, 3),
        (5, 3),
        (9, 7),
        (11, 2),
        (4, 1),
    ] {
        world.set_parent(es[c], es[p]).unwrap();
    }
    let locals: Vec<Affine3A> = (0..es.len())
        .map(|i| {
            Affine3A::from_rotation_y(i as f32 * 0.3)
                * Affine3A::from_translation(Vec3::new(i as f32, 1.0, -0.5))
        })
        .collect();
    world.add_transforms(&es, &locals).unwrap();
    world.transforms_mut().propagate();
    (world, es)
}

fn assert_same_graph(a: &TransformManager, b: &TransformManager) {
    assert_eq!(a.len(), b.len());
    assert_eq!(a.is_deferred(), b.is_deferred());
    for ia in a.iter() {
        let e = ia.entity();
        let ib = b.lookup(e).expect("node kept");
        assert_eq!(a.local(ia), b.local(ib), "{e:?} local");
        assert_eq!(a.world(ia), b.world(ib), "{e:?} world, bit for bit");
        assert_eq!(
            a.parent(ia).map(|p| p.entity()),
            b.parent(ib).map(|p| p.entity())
        );
        let ca: Vec<Entity> = a.children(ia).map(|c| c.entity()).collect();
        let cb: Vec<Entity> = b.children(ib).map(|c| c.entity()).collect();
        assert_eq!(ca, cb, "{e:?} children in order");
    }
    b.check_invariants();
}

#[test]
fn the_scene_graph_round_trips() {
    for deferred in [false, true] {
        let (world, _) = scene(deferred);
        for format in [SaveFormat::Binary, SaveFormat::Json] {
            let mut bytes = Vec::new();
            world.save(&mut bytes, format, &registry()).unwrap();
            let loaded = World::load(&bytes[..], &registry()).unwrap();
            assert_same_graph(
                world.manager::<TransformManager>().unwrap(),
                loaded.manager::<TransformManager>().unwrap(),
            );
        }
    }
}

#[test]
fn bad_saved_graphs_are_refused() {
    let (world, es) = scene(false);
    let mut bytes = Vec::new();
    world
        .save(&mut bytes, SaveFormat::Json, &registry())
        .unwrap();
    let good: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let load = |v: &serde_json::Value| World::load(v.to_string().as_bytes(), &registry());
    assert!(load(&good).is_ok());
    // A link naming an entity that has no node.
    let mut v = good.clone();
    let stranger = Entity::from_parts(500, 0).to_bits();
    v["managers"]["transform"]["links"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!([es[0].to_bits(), stranger]));
    let err = load(&v).unwrap_err();
    assert!(
        matches!(&err, LoadError::Manager { name, message } if name == "transform" && message.contains("has no node")),
        "{err}"
    );
    // A node of an entity that is not alive.
    let mut v = good.clone();
    v["managers"]["transform"]["nodes"][0][0] = Entity::from_parts(500, 0).to_bits().into();
    assert!(matches!(load(&v).unwrap_err(), LoadError::Manager { .. }));
    // A non-finite local transform.
    let mut v = good;
    v["managers"]["transform"]["nodes"][1][1][0] = serde_json::Value::Null;
    assert!(load(&v).is_err());
}

/// A save without `ChildOf` pairs (written before the hierarchy was saved
/// as pairs) held its hierarchy in the manager's links alone: a load turns
/// them into `ChildOf` pairs, children in their saved order.
#[test]
fn links_of_a_save_without_pairs_become_child_of() {
    let (world, es) = scene(false);
    let mut bytes = Vec::new();
    world
        .save(&mut bytes, SaveFormat::Json, &registry())
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    v.as_object_mut().unwrap().remove("relations");
    v["version"] = 1.into();
    let loaded = World::load(v.to_string().as_bytes(), &registry()).unwrap();
    let tm = world.manager::<TransformManager>().unwrap();
    for &e in &es {
        assert_eq!(loaded.parent(e), world.parent(e), "{e:?}");
        // The saved links kept the manager's sibling order.
        let kids: Vec<Entity> = loaded.children(e).collect();
        let want: Vec<Entity> = tm
            .children(tm.lookup(e).unwrap())
            .map(|i| i.entity())
            .collect();
        assert_eq!(kids, want, "{e:?} children in order");
    }
    assert_same_graph(
        world.manager::<TransformManager>().unwrap(),
        loaded.manager::<TransformManager>().unwrap(),
    );
    // Links that disagree with the pairs of a newer save lose to the pairs
    // (sibling order inside the manager then follows the relinking).
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    v["managers"]["transform"]["links"] = serde_json::json!([]);
    let loaded = World::load(v.to_string().as_bytes(), &registry()).unwrap();
    let tm2 = loaded.manager::<TransformManager>().unwrap();
    for &e in &es {
        let (a, b) = (tm.lookup(e).unwrap(), tm2.lookup(e).unwrap());
        assert_eq!(
            tm.parent(a).map(|p| p.entity()),
            tm2.parent(b).map(|p| p.entity())
        );
        assert_eq!(tm.world(a), tm2.world(b), "{e:?} world, bit for bit");
    }
    tm2.check_invariants();
}

/// The pairs are the one truth: a save whose transform links disagree with
/// its `ChildOf` pairs (hand-edited or corrupt: every node under one leaf,
/// or a link closing a cycle) loads with every node linked as the pairs
/// say and world transforms computed from them as soon as the load
/// returns, in both modes. The disagreeing links are never followed.
#[test]
fn links_that_disagree_with_the_pairs_are_rebuilt_from_child_of() {
    for deferred in [false, true] {
        let (world, es) = scene(deferred);
        let mut bytes = Vec::new();
        world
            .save(&mut bytes, SaveFormat::Json, &registry())
            .unwrap();
        let good: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let leaf = es[19].to_bits();
        let mut under_a_leaf = good.clone();
        for link in under_a_leaf["managers"]["transform"]["links"]
            .as_array_mut()
            .unwrap()
        {
            link[1] = leaf.into();
        }
        let mut cycle = good.clone();
        // 0 under 9, which the pairs put under 7, 3 and 0.
        cycle["managers"]["transform"]["links"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!([es[0].to_bits(), es[9].to_bits()]));
        for edited in [under_a_leaf, cycle] {
            let loaded = World::load(edited.to_string().as_bytes(), &registry())
                .unwrap_or_else(|e| panic!("deferred {deferred}: {e}"));
            let (a, b) = (
                world.manager::<TransformManager>().unwrap(),
                loaded.manager::<TransformManager>().unwrap(),
            );
            b.check_invariants();
            for &e in &es {
                let (ia, ib) = (a.lookup(e).unwrap(), b.lookup(e).unwrap());
                assert_eq!(
                    b.parent(ib).map(|p| p.entity()),
                    loaded.parent(e),
                    "deferred {deferred}: {e:?} follows ChildOf"
                );
                // No propagation: a load leaves world transforms current.
                assert_eq!(b.world(ib), a.world(ia), "deferred {deferred}: {e:?} world");
            }
        }
    }
}
