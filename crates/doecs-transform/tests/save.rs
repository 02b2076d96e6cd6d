//! The transform manager through a world save: the hierarchy, child order,
//! locals and world transforms come back exactly; bad saved states are
//! refused with the reason.

use doecs::{DestroyNotice, Entity, World};
use doecs_registry::{ComponentRegistry, LoadError, SaveFormat, WorldSaveExt};
use doecs_transform::TransformManager;
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
    let mut tm = if deferred {
        TransformManager::deferred()
    } else {
        TransformManager::new()
    };
    let insts: Vec<_> = es
        .iter()
        .enumerate()
        .map(|(i, &e)| {
            let local = Affine3A::from_rotation_y(i as f32 * 0.3)
                * Affine3A::from_translation(Vec3::new(i as f32, 1.0, -0.5));
            tm.create(e, local).unwrap()
        })
        .collect();
    // Three levels, several children per parent, linked out of order.
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
        tm.link(insts[c], insts[p]).unwrap();
    }
    tm.propagate();
    world.add_manager(tm, DestroyNotice::Callback);
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
    // A cycle: 0 under 9, which is under 7, 3, 0.
    let mut v = good.clone();
    v["managers"]["transform"]["links"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!([es[0].to_bits(), es[9].to_bits()]));
    let err = load(&v).unwrap_err();
    assert!(
        matches!(&err, LoadError::Manager { name, .. } if name == "transform"),
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
