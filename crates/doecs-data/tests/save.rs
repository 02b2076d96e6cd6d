//! The DataComponent through a world save: records, names, clock and key
//! registry come back; corrupt saved records are refused.

use doecs::{DestroyNotice, World};
use doecs_data::DataStore;
use doecs_registry::{ComponentRegistry, LoadError, SaveFormat, WorldSaveExt};
use serde_json::json;

fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register_manager::<DataStore>("data", DestroyNotice::Callback)
        .unwrap();
    r
}

fn world(names: bool) -> World {
    let mut world = World::new();
    let es: Vec<_> = (0..10).map(|_| world.spawn(())).collect();
    let mut store = if names {
        DataStore::with_names()
    } else {
        DataStore::new()
    };
    for (i, &e) in es.iter().enumerate().step_by(2) {
        store
            .set_json(
                e,
                &json!({"health": i, "name": format!("e{i}"), "stats": {"speed": 1.5}}),
            )
            .unwrap();
    }
    world.despawn(es[4]).unwrap();
    store.destroy(es[4]);
    world.add_manager(store, DestroyNotice::Callback);
    world
}

#[test]
fn the_store_round_trips() {
    for names in [false, true] {
        let world = world(names);
        for format in [SaveFormat::Binary, SaveFormat::Json] {
            let mut bytes = Vec::new();
            world.save(&mut bytes, format, &registry()).unwrap();
            let loaded = World::load(&bytes[..], &registry()).unwrap();
            let (a, b) = (
                world.manager::<DataStore>().unwrap(),
                loaded.manager::<DataStore>().unwrap(),
            );
            assert_eq!(a.len(), b.len());
            assert_eq!(a.clock(), b.clock());
            assert_eq!(a.known_paths(), b.known_paths());
            for e in world.iter_entities() {
                assert_eq!(a.to_bytes(e), b.to_bytes(e), "{e:?}");
                if names {
                    assert_eq!(a.to_json(e).unwrap(), b.to_json(e).unwrap());
                }
                assert_eq!(a.get_f32(e, "stats.speed"), b.get_f32(e, "stats.speed"));
            }
            b.check_invariants();
        }
    }
}

#[test]
fn corrupt_saved_stores_are_refused() {
    let world = world(true);
    let mut bytes = Vec::new();
    world
        .save(&mut bytes, SaveFormat::Json, &registry())
        .unwrap();
    let good: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let load = |v: &serde_json::Value| World::load(v.to_string().as_bytes(), &registry());
    assert!(load(&good).is_ok());
    let mut v = good.clone();
    v["managers"]["data"]["records"][0][1] = json!([1, 2, 3]);
    let err = load(&v).unwrap_err();
    assert!(
        matches!(&err, LoadError::Manager { name, .. } if name == "data"),
        "{err}"
    );
    let mut v = good.clone();
    v["managers"]["data"]["keys"]["full"][0][1] = json!(12345);
    assert!(matches!(load(&v).unwrap_err(), LoadError::Manager { .. }));
    let mut v = good;
    v["managers"]["data"]["keys"]["names"][0][1] = json!(["not", "this"]);
    assert!(matches!(load(&v).unwrap_err(), LoadError::Manager { .. }));
}
