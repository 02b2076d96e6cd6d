//! Relationship pairs in saves: the hierarchy, prefab links and a user
//! relation with data round-trip in both formats with every list in its
//! order; unregistered relations are refused or skipped; unknown names and
//! every kind of bad pair are typed errors; truncations never load; and
//! version 1 files (from before relations) and version 2 files (from
//! before sparse sections) still load.

use doecs::{ChildOf, Entity, IsA, Prefab, Relation, World};
use doecs_registry::{
    load_world_from_bytes, save_world, ComponentRegistry, LoadError, LoadOptions, SaveError,
    SaveFormat, SaveOptions, WorldSaveExt, SAVE_MAGIC,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Hp(u32);

/// A user relation carrying data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Escorts {
    distance: f32,
}
impl Relation for Escorts {}

/// A relation no registry knows.
#[derive(Clone, Debug, PartialEq)]
struct Secret;
impl Relation for Secret {}

fn registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    registry.register::<Hp>("hp");
    registry.register_relation::<Escorts>("escorts").unwrap();
    registry
}

/// A world whose lists are not in id order: children attached out of
/// order, one detached and re-attached, escorts added and removed.
fn world_with_pairs() -> (World, Vec<Entity>) {
    let mut w = World::new();
    let e: Vec<Entity> = (0..8).map(|i| w.spawn((Hp(i),))).collect();
    let prefab = w.spawn((Prefab, Hp(100)));
    for &c in &[e[3], e[1], e[2]] {
        w.set_parent(c, e[0]).unwrap();
    }
    w.remove_parent(e[1]);
    w.set_parent(e[1], e[0]).unwrap();
    w.set_parent(e[4], e[3]).unwrap();
    w.add_pair(e[5], e[0], Escorts { distance: 1.5 }).unwrap();
    w.add_pair(e[5], e[3], Escorts { distance: 2.5 }).unwrap();
    w.add_pair(e[6], e[0], Escorts { distance: 3.5 }).unwrap();
    w.remove_pair::<Escorts>(e[5], e[0]).unwrap();
    w.add_pair(e[5], e[0], Escorts { distance: 4.5 }).unwrap();
    let instance = w.spawn(());
    w.add_pair(instance, prefab, IsA).unwrap();
    let mut all = e;
    all.extend([prefab, instance]);
    (w, all)
}

/// Every list of every entity, in order.
fn lists(w: &World, es: &[Entity]) -> Vec<Value> {
    es.iter()
        .map(|&e| {
            json!({
                "children": w.children(e).map(|c| c.to_string()).collect::<Vec<_>>(),
                "parent": w.parent(e).map(|p| p.to_string()),
                "escorts": w.targets::<Escorts>(e).map(|(t, v)| (t.to_string(), v.distance)).collect::<Vec<_>>(),
                "escorted_by": w.sources::<Escorts>(e).map(|s| s.to_string()).collect::<Vec<_>>(),
                "prefab": w.prefab_of(e).map(|p| p.to_string()),
            })
        })
        .collect()
}

fn save(w: &World, format: SaveFormat) -> Vec<u8> {
    let mut bytes = Vec::new();
    w.save(&mut bytes, format, &registry()).unwrap();
    bytes
}

#[test]
fn pairs_round_trip_in_both_formats_with_every_list_in_order() {
    let (w, es) = world_with_pairs();
    for format in [SaveFormat::Json, SaveFormat::Binary] {
        let loaded = World::load(&save(&w, format)[..], &registry()).unwrap();
        loaded.check_invariants();
        assert_eq!(lists(&loaded, &es), lists(&w, &es), "{format:?}");
        let instance = es[9];
        assert_eq!(loaded.get::<Hp>(instance), Ok(&Hp(100)), "inherited");
        assert_eq!(
            loaded.query::<&Hp>().iter().count(),
            8,
            "the prefab stays hidden"
        );
        // The loaded hierarchy despawns as a hierarchy.
        let mut loaded = loaded;
        loaded.despawn(es[0]).unwrap();
        assert!(!loaded.alive(es[4]));
    }
}

#[test]
fn unregistered_relations_are_refused_or_skipped() {
    let (mut w, es) = world_with_pairs();
    w.add_pair(es[7], es[6], Secret).unwrap();
    let mut bytes = Vec::new();
    let refused = save_world(
        &w,
        &registry(),
        &mut bytes,
        SaveFormat::Json,
        SaveOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(refused, SaveError::UnregisteredRelation(name) if name.ends_with("Secret")));
    let mut bytes = Vec::new();
    save_world(
        &w,
        &registry(),
        &mut bytes,
        SaveFormat::Binary,
        SaveOptions {
            skip_unregistered: true,
        },
    )
    .unwrap();
    let loaded = World::load(&bytes[..], &registry()).unwrap();
    assert_eq!(loaded.relations().len(), w.relations().len() - 1);
}

fn load_json(v: &Value) -> Result<World, LoadError> {
    World::load(v.to_string().as_bytes(), &registry())
}

#[test]
fn bad_pairs_and_unknown_relations_are_typed_errors() {
    let (w, _) = world_with_pairs();
    let good: Value = serde_json::from_slice(&save(&w, SaveFormat::Json)).unwrap();
    assert!(load_json(&good).is_ok());
    let relation_error = |edit: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        edit(&mut v);
        match load_json(&v) {
            Err(LoadError::Relation { message, .. }) => message,
            other => panic!("expected a relation error, got {:?}", other.map(|_| ())),
        }
    };
    let pairs = |v: &mut Value, name: &str| v["relations"][name].as_array_mut().unwrap().clone();
    // A dead entity.
    let m = relation_error(&|v| {
        v["relations"]["ChildOf"][0][0] = json!(Entity::from_bits(999).to_bits())
    });
    assert!(m.contains("pair 0"), "{m}");
    // A pair listed twice.
    relation_error(&|v| {
        let mut p = pairs(v, "escorts");
        p.push(p[0].clone());
        v["relations"]["escorts"] = Value::Array(p);
    });
    // Two parents for one child.
    let m = relation_error(&|v| {
        let mut p = pairs(v, "ChildOf");
        let mut second = p[0].clone();
        second[1] = p[3][0].clone();
        p.push(second);
        v["relations"]["ChildOf"] = Value::Array(p);
    });
    assert!(m.contains("exclusive"), "{m}");
    // A cycle: the parent made a child of its child.
    let m = relation_error(&|v| {
        let mut p = pairs(v, "ChildOf");
        let (child, parent) = (p[0][0].clone(), p[0][1].clone());
        p.insert(0, json!([parent, child, null]));
        v["relations"]["ChildOf"] = Value::Array(p);
    });
    assert!(m.contains("cycle") || m.contains("Cycle"), "{m}");
    // Not a list of pairs, or a value of the wrong shape.
    relation_error(&|v| v["relations"]["escorts"] = json!({"no": "pairs"}));
    relation_error(&|v| v["relations"]["escorts"][0][2] = json!("far"));
    // An unknown relation: refused, or dropped with skip_unknown.
    let mut v = good.clone();
    v["relations"]["rivals"] = json!([]);
    assert!(matches!(load_json(&v), Err(LoadError::UnknownRelation(n)) if n == "rivals"));
    let skipped = load_world_from_bytes(
        v.to_string().as_bytes(),
        &registry(),
        LoadOptions {
            skip_unknown: true,
            ..LoadOptions::default()
        },
    );
    assert!(skipped.is_ok());
}

#[test]
fn every_truncation_of_a_binary_save_with_pairs_is_an_error() {
    let (w, _) = world_with_pairs();
    let bytes = save(&w, SaveFormat::Binary);
    let registry = registry();
    let step = if cfg!(miri) { 41 } else { 1 };
    for len in (0..bytes.len()).step_by(step) {
        let r = load_world_from_bytes(&bytes[..len], &registry, LoadOptions::default());
        assert!(r.is_err(), "cut at {len} of {} bytes loaded", bytes.len());
    }
    // Flipped bytes load or fail, never panic.
    for i in (0..bytes.len()).step_by(step.max(3)) {
        let mut flipped = bytes.clone();
        flipped[i] ^= 0x5a;
        let _ = load_world_from_bytes(&flipped, &registry, LoadOptions::default());
    }
}

#[test]
fn version_1_and_2_files_still_load() {
    let mut w = World::new();
    let e = w.spawn((Hp(3),));
    let v3 = save(&w, SaveFormat::Binary);
    // Version 3 ends with the relation sections and the sparse sections,
    // both empty here (an empty list is one zero byte). Version 2 is the
    // same without the sparse sections, version 1 without either.
    assert_eq!(&v3[v3.len() - 2..], &[0, 0]);
    for (version, cut) in [(2u32, 1), (1, 2)] {
        let mut old = v3[..v3.len() - cut].to_vec();
        old[SAVE_MAGIC.len()..SAVE_MAGIC.len() + 4].copy_from_slice(&version.to_le_bytes());
        let loaded = World::load(&old[..], &registry()).unwrap();
        assert_eq!(loaded.get::<Hp>(e), Ok(&Hp(3)), "version {version}");
    }
    let mut json: Value = serde_json::from_slice(&save(&w, SaveFormat::Json)).unwrap();
    json["version"] = json!(1);
    json.as_object_mut().unwrap().remove("relations");
    json.as_object_mut().unwrap().remove("sparse");
    assert!(load_json(&json).is_ok());
    let _ = ChildOf;
}
