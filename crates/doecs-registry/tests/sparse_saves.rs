//! Sparse components through the registry and saves: `Registering::sparse`
//! makes a component sparse in every world the registry installs into;
//! worlds mixing dense and sparse components (sparse only, both, a
//! serde-only sparse component with a `String`, a marker) round-trip
//! exactly through JSON and binary, with no archetype for the sparse ones;
//! every bad sparse section and every storage mismatch is a typed error;
//! unregistered sparse components are refused or skipped on save; and
//! version 2 files (from before sparse sections) still load.

use doecs::{Entity, Sparse, World};
use doecs_registry::{
    load_world_from_bytes, save_world, ComponentRegistry, LoadError, LoadOptions, RegistryError,
    SaveError, SaveFormat, SaveOptions, Storage, WorldSaveExt, SAVE_MAGIC, SAVE_VERSION,
};
use serde_json::{json, Value};

mod common {
    pub mod fuzz_registry;
}

use common::fuzz_registry::{
    registry, Aligned, Frozen, Hp, Inventory, Label, Marked, Pos, Stunned,
};

/// Not registered anywhere.
#[derive(Debug, PartialEq)]
struct Secret(#[allow(dead_code)] u8);

fn label(i: u32) -> Label {
    Label {
        text: format!("label {i}: ünïcode"),
        level: i as u8,
    }
}

/// A world of dense and sparse components: entities with dense ones only,
/// both, sparse ones only, and none; sparse values inserted, replaced and
/// removed after the spawn, and despawns in between. With `sparse` false
/// the same world without any sparse value.
fn mixed_world(sparse: bool) -> (World, Vec<Entity>) {
    let mut world = World::new();
    registry().install(&mut world).unwrap();
    let mut es = Vec::new();
    for i in 0..30u32 {
        let e = match i % 6 {
            0 => world.spawn((Pos([i as f32, 0.0, 1.0]), Hp(i))),
            1 => world.spawn((Hp(i), Frozen)),
            2 => world.spawn((Inventory {
                owner: format!("npc {i}"),
                items: vec![(i as u16, 1)],
            },)),
            3 => world.spawn((Aligned {
                a: i as u8,
                b: u64::from(i),
            },)),
            _ => world.spawn(()),
        };
        es.push(e);
    }
    for i in (0..30).step_by(7) {
        world.despawn(es[i]).unwrap();
    }
    if sparse {
        for (i, &e) in es.iter().enumerate() {
            if !world.alive(e) {
                continue;
            }
            let i = i as u32;
            if i.is_multiple_of(2) {
                world.insert_one(e, Stunned(i * 10)).unwrap();
            }
            if i.is_multiple_of(3) {
                world.insert_one(e, label(i)).unwrap();
            }
            if i % 4 == 1 {
                world.insert_one(e, Marked).unwrap();
            }
        }
        // Sparse-only entities, spawned with a sparse bundle.
        es.push(world.spawn((Stunned(7), label(99))));
        es.push(world.spawn((Marked,)));
        // A bundle of both storages.
        es.push(world.spawn((Hp(5), Stunned(8), Marked)));
    } else {
        es.push(world.spawn(()));
        es.push(world.spawn(()));
        es.push(world.spawn((Hp(5),)));
    }
    if sparse {
        // Replaced and removed values, so slots move.
        world.insert_one(es[2], Stunned(1234)).unwrap();
        world.remove_one::<Stunned>(es[4]).unwrap();
        world.remove_one::<Label>(es[3]).unwrap();
        // A despawn with sparse values.
        world.despawn(es[12]).unwrap();
    }
    (world, es)
}

fn save(world: &World, format: SaveFormat) -> Vec<u8> {
    let mut bytes = Vec::new();
    world.save(&mut bytes, format, &registry()).unwrap();
    bytes
}

fn load(bytes: &[u8]) -> Result<World, LoadError> {
    load_world_from_bytes(bytes, &registry(), LoadOptions::default())
}

/// Each sparse component's entities (with values) in slot order.
type SparseLists = (Vec<(Entity, u32)>, Vec<(Entity, Label)>, Vec<Entity>);

/// Each sparse component's entities (with values) in slot order.
fn sparse_lists(world: &World) -> SparseLists {
    let stunned = doecs::raw::sparse_columns(world)
        .iter()
        .find(|c| Some(c.component) == world.components().id_of::<Stunned>())
        .map(|c| c.entities.to_vec())
        .unwrap_or_default();
    let labels = doecs::raw::sparse_columns(world)
        .iter()
        .find(|c| Some(c.component) == world.components().id_of::<Label>())
        .map(|c| c.entities.to_vec())
        .unwrap_or_default();
    let marked = doecs::raw::sparse_columns(world)
        .iter()
        .find(|c| Some(c.component) == world.components().id_of::<Marked>())
        .map(|c| c.entities.to_vec())
        .unwrap_or_default();
    (
        (stunned.iter())
            .map(|&e| (e, world.get::<Stunned>(e).unwrap().0))
            .collect(),
        (labels.iter())
            .map(|&e| (e, world.get::<Label>(e).unwrap().clone()))
            .collect(),
        marked,
    )
}

/// Same ids, same values of every component, same sparse slot order, same
/// query results.
fn assert_same_world(a: &World, b: &World) {
    assert_eq!(a.entities().image().unwrap(), b.entities().image().unwrap());
    let mut ea: Vec<Entity> = a.iter_entities().collect();
    let mut eb: Vec<Entity> = b.iter_entities().collect();
    ea.sort();
    eb.sort();
    assert_eq!(ea, eb);
    for &e in &ea {
        assert_eq!(a.get::<Pos>(e).ok(), b.get::<Pos>(e).ok(), "{e:?}");
        assert_eq!(a.get::<Hp>(e).ok(), b.get::<Hp>(e).ok());
        assert_eq!(a.get::<Frozen>(e).ok(), b.get::<Frozen>(e).ok());
        assert_eq!(a.get::<Inventory>(e).ok(), b.get::<Inventory>(e).ok());
        assert_eq!(a.get::<Aligned>(e).ok(), b.get::<Aligned>(e).ok());
        assert_eq!(a.get::<Stunned>(e).ok(), b.get::<Stunned>(e).ok());
        assert_eq!(a.get::<Label>(e).ok(), b.get::<Label>(e).ok());
        assert_eq!(a.get::<Marked>(e).ok(), b.get::<Marked>(e).ok());
        let names = |w: &World| -> Vec<String> {
            let mut n: Vec<String> = (w.entity(e).unwrap().components())
                .map(|c| c.name().to_owned())
                .collect();
            n.sort();
            n
        };
        assert_eq!(names(a), names(b), "{e:?}");
    }
    assert_eq!(sparse_lists(a), sparse_lists(b), "same sparse slot order");
    let q = |w: &World| -> Vec<(Entity, u32, bool)> {
        let mut v: Vec<_> = (w.query::<(Entity, Sparse<&Stunned>, Sparse<doecs::Has<Marked>>)>())
            .iter()
            .map(|(e, s, m)| (e, s.0, m))
            .collect();
        v.sort();
        v
    };
    assert_eq!(q(a), q(b));
}

/// The ids of the sparse components in `world`.
fn sparse_ids(world: &World) -> Vec<doecs::ComponentId> {
    let c = world.components();
    let ids = [
        c.id_of::<Stunned>(),
        c.id_of::<Label>(),
        c.id_of::<Marked>(),
    ];
    ids.into_iter().map(Option::unwrap).collect()
}

// --- The registration. ---

#[test]
fn a_sparse_registration_installs_sparse() {
    let registry = registry();
    assert!(registry.by_name("stunned").unwrap().is_sparse());
    assert!(registry.by_name("label").unwrap().is_sparse());
    assert!(!registry.by_name("hp").unwrap().is_sparse());
    assert!(registry
        .by_name("stunned")
        .unwrap()
        .descriptor()
        .is_sparse());
    let mut world = World::new();
    registry.install(&mut world).unwrap();
    registry.install(&mut world).unwrap(); // idempotent
    for id in sparse_ids(&world) {
        assert!(world.components().info(id).is_sparse());
    }
    let hp = world.components().id_of::<Hp>().unwrap();
    assert!(!world.components().info(hp).is_sparse());
    // Values go to the sparse sets, not to archetypes.
    let before = doecs::raw::archetypes(&world).len();
    let e = world.spawn((Hp(1), Stunned(2), label(3), Marked));
    assert_eq!(
        doecs::raw::archetypes(&world).len(),
        before + 1,
        "(Hp) only"
    );
    assert_eq!(world.get::<Stunned>(e), Ok(&Stunned(2)));
    // JSON through the registration reaches sparse values too.
    let reg = registry.by_name("label").unwrap();
    assert_eq!(reg.value_json(&world, e).unwrap()["level"], json!(3));
    reg.insert_json(&mut world, e, &json!({"text": "x", "level": 9}))
        .unwrap();
    assert_eq!(world.get::<Label>(e).unwrap().level, 9);
    world.check_invariants();
}

#[test]
fn installing_sparse_after_dense_use_is_refused() {
    let mut world = World::new();
    world.spawn((Stunned(1),)); // stored in an archetype now
    let err = registry().install(&mut world).unwrap_err();
    assert!(
        matches!(
            err,
            RegistryError::Register(doecs::RegisterError::StorageFixed(_))
        ),
        "{err}"
    );
}

// --- Round trips. ---

#[test]
fn mixed_worlds_round_trip_in_both_formats() {
    let (world, es) = mixed_world(true);
    world.check_invariants();
    let (dense_twin, _) = mixed_world(false);
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let bytes = save(&world, format);
        let loaded = load(&bytes).unwrap();
        loaded.check_invariants();
        assert_same_world(&world, &loaded);
        // Saving the loaded world gives the same file.
        assert_eq!(save(&loaded, format), bytes, "{format:?}");
        // Sparse components take no archetype: as many archetypes as the
        // same world without them, and none holds a sparse id.
        let twin = load(&save(&dense_twin, format)).unwrap();
        assert_eq!(
            doecs::raw::archetypes(&loaded).len(),
            doecs::raw::archetypes(&twin).len(),
            "{format:?}"
        );
        for arch in doecs::raw::archetypes(&loaded).iter() {
            for id in sparse_ids(&loaded) {
                assert!(!arch.components().contains(&id));
            }
        }
        // Spot checks: sparse only, both, replaced, removed.
        let sparse_only = es[es.len() - 3];
        assert_eq!(loaded.get::<Stunned>(sparse_only), Ok(&Stunned(7)));
        assert_eq!(loaded.get::<Label>(sparse_only), Ok(&label(99)));
        assert!(loaded.entity(sparse_only).unwrap().components().count() == 2);
        assert_eq!(loaded.get::<Marked>(es[es.len() - 2]), Ok(&Marked));
        assert_eq!(loaded.get::<Hp>(es[es.len() - 1]), Ok(&Hp(5)));
        assert_eq!(loaded.get::<Stunned>(es[2]), Ok(&Stunned(1234)));
        assert!(loaded.get::<Stunned>(es[4]).is_err());
        assert!(loaded.get::<Label>(es[3]).is_err());
        assert!(!loaded.alive(es[12]));
        // The loaded world keeps working: sparse changes, then a check.
        let mut loaded = loaded;
        loaded.insert_one(es[1], Stunned(1)).unwrap();
        loaded.remove_one::<Stunned>(es[2]).unwrap();
        loaded.despawn(sparse_only).unwrap();
        loaded.check_invariants();
    }
}

#[test]
fn the_json_form_of_sparse_sections() {
    let mut world = World::new();
    registry().install(&mut world).unwrap();
    let a = world.spawn((Hp(1), Stunned(4)));
    let b = world.spawn((label(2), Marked));
    let v: Value = serde_json::from_slice(&save(&world, SaveFormat::Json)).unwrap();
    assert_eq!(v["version"], json!(SAVE_VERSION));
    assert_eq!(
        v["sparse"]["stunned"],
        json!({"entities": [a.to_bits()], "values": [4]})
    );
    assert_eq!(
        v["sparse"]["label"],
        json!({"entities": [b.to_bits()], "values": [{"text": "label 2: ünïcode", "level": 2}]})
    );
    assert_eq!(
        v["sparse"]["marked"],
        json!({"entities": [b.to_bits()], "values": [null]})
    );
    // `b` has only sparse components: it is in the table without columns.
    let tables = v["tables"].as_array().unwrap();
    assert!(tables
        .iter()
        .any(|t| t["entities"] == json!([b.to_bits()]) && t["components"] == json!({})));
    // No table names a sparse component.
    for t in tables {
        for name in ["stunned", "label", "marked"] {
            assert!(t["components"].get(name).is_none());
        }
    }
    // A file without the section loads (older files).
    let mut older = v.clone();
    older.as_object_mut().unwrap().remove("sparse");
    let loaded = load_json(&older).unwrap();
    assert!(loaded.get::<Stunned>(a).is_err());
    assert_eq!(loaded.get::<Hp>(a), Ok(&Hp(1)));
}

#[test]
fn sparse_values_are_checked_on_load() {
    let mut checked = registry();
    checked
        .register::<Secret2>("secret2")
        .validate(|s| {
            if s.0 > 9 {
                Err("too big".into())
            } else {
                Ok(())
            }
        })
        .sparse();
    let mut world = World::new();
    checked.install(&mut world).unwrap();
    let e = world.spawn((Secret2(3),));
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let mut bytes = Vec::new();
        world.save(&mut bytes, format, &checked).unwrap();
        let loaded = load_world_from_bytes(&bytes, &checked, LoadOptions::default()).unwrap();
        assert_eq!(loaded.get::<Secret2>(e), Ok(&Secret2(3)));
    }
    world.insert_one(e, Secret2(10)).unwrap();
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let mut bytes = Vec::new();
        world.save(&mut bytes, format, &checked).unwrap();
        let err = load_world_from_bytes(&bytes, &checked, LoadOptions::default()).unwrap_err();
        assert!(
            matches!(&err, LoadError::Value { name, message } if name == "secret2" && message.contains("too big")),
            "{err}"
        );
    }
}

/// A sparse component with a registered check.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Secret2(u8);

// --- Saving refusals. ---

#[test]
fn unregistered_sparse_components_are_refused_or_skipped() {
    let mut world = World::new();
    registry().install(&mut world).unwrap();
    world.register_sparse::<Secret>().unwrap();
    // An empty set is nothing to save.
    let e = world.spawn((Hp(1), Stunned(2)));
    assert!(world
        .save(Vec::new(), SaveFormat::Json, &registry())
        .is_ok());
    world.insert_one(e, Secret(3)).unwrap();
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let err = world.save(Vec::new(), format, &registry()).unwrap_err();
        assert!(
            matches!(&err, SaveError::Unregistered(name) if name.contains("Secret")),
            "{err}"
        );
        let mut bytes = Vec::new();
        let skip = SaveOptions {
            skip_unregistered: true,
        };
        save_world(&world, &registry(), &mut bytes, format, skip).unwrap();
        let loaded = load(&bytes).unwrap();
        assert_eq!(loaded.get::<Stunned>(e), Ok(&Stunned(2)));
        assert!(loaded.get::<Secret>(e).is_err());
    }
}

// --- Loading refusals: JSON. ---

fn load_json(v: &Value) -> Result<World, LoadError> {
    load(v.to_string().as_bytes())
}

#[test]
fn bad_json_sparse_sections_are_typed_errors() {
    let mut world = World::new();
    registry().install(&mut world).unwrap();
    let a = world.spawn((Hp(1), Stunned(4)));
    let b = world.spawn((label(2),));
    let good: Value = serde_json::from_slice(&save(&world, SaveFormat::Json)).unwrap();
    assert!(load_json(&good).is_ok());

    // An entity that is not live in the saved ids.
    let dead = Entity::from_parts(7, 3);
    let mut v = good.clone();
    v["sparse"]["stunned"]["entities"][0] = dead.to_bits().into();
    let err = load_json(&v).unwrap_err();
    assert!(
        matches!(&err, LoadError::SparseEntity { name, entity } if name == "stunned" && *entity == dead),
        "{err}"
    );
    // A live index with an old generation.
    let mut v = good.clone();
    v["sparse"]["stunned"]["entities"][0] = Entity::from_parts(a.index(), 5).to_bits().into();
    assert!(matches!(
        load_json(&v).unwrap_err(),
        LoadError::SparseEntity { .. }
    ));
    // An entity listed twice.
    let mut v = good.clone();
    v["sparse"]["stunned"] = json!({"entities": [a.to_bits(), a.to_bits()], "values": [1, 2]});
    let err = load_json(&v).unwrap_err();
    assert!(
        matches!(&err, LoadError::SparseRepeated { name, entity } if name == "stunned" && *entity == a),
        "{err}"
    );
    // More or fewer values than entities.
    for values in [json!([1, 2]), json!([])] {
        let mut v = good.clone();
        v["sparse"]["stunned"]["values"] = values;
        let err = load_json(&v).unwrap_err();
        assert!(
            matches!(&err, LoadError::ColumnLength { name, expected: 1, .. } if name == "stunned"),
            "{err}"
        );
    }
    // A value of the wrong shape.
    let mut v = good.clone();
    v["sparse"]["label"]["values"][0] = json!("not a label");
    let err = load_json(&v).unwrap_err();
    assert!(
        matches!(&err, LoadError::Value { name, .. } if name == "label"),
        "{err}"
    );
    // A malformed section.
    for section in [
        json!([1]),
        json!({"entities": []}),
        json!({"entities": [], "values": [], "x": 1}),
    ] {
        let mut v = good.clone();
        v["sparse"]["stunned"] = section;
        assert!(matches!(load_json(&v).unwrap_err(), LoadError::Corrupt(_)));
    }
    // An unknown name: refused, or skipped on request.
    let mut v = good.clone();
    v["sparse"]["ghost"] = json!({"entities": [b.to_bits()], "values": [1]});
    let err = load_json(&v).unwrap_err();
    assert!(
        matches!(&err, LoadError::UnknownComponent(n) if n == "ghost"),
        "{err}"
    );
    let skip = LoadOptions {
        skip_unknown: true,
        ..Default::default()
    };
    let loaded = load_world_from_bytes(v.to_string().as_bytes(), &registry(), skip).unwrap();
    loaded.check_invariants();
    assert_eq!(loaded.get::<Stunned>(a), Ok(&Stunned(4)));
    // A sparse section of a component the registry keeps in tables.
    let mut v = good.clone();
    v["sparse"]["hp"] = json!({"entities": [b.to_bits()], "values": [3]});
    let err = load_json(&v).unwrap_err();
    assert!(
        matches!(&err, LoadError::Storage { name, saved: Storage::Sparse, registered: Storage::Table } if name == "hp"),
        "{err}"
    );
    assert!(err.to_string().contains("sparse"), "{err}");
    // A table column of a component the registry keeps sparse.
    let mut v = good.clone();
    v["tables"][0]["components"]["stunned"] = json!([5]);
    let err = load_json(&v).unwrap_err();
    assert!(
        matches!(&err, LoadError::Storage { name, saved: Storage::Table, registered: Storage::Sparse } if name == "stunned"),
        "{err}"
    );
}

#[test]
fn storage_mismatches_between_programs_are_typed_errors() {
    // The saving program keeps `stunned` in tables, the loading one sparse.
    let mut dense = ComponentRegistry::new();
    dense.register::<Stunned>("stunned").plain();
    dense.register::<Label>("label");
    let mut world = World::new();
    dense.install(&mut world).unwrap();
    world.spawn((Stunned(1), label(1)));
    let skip = LoadOptions {
        skip_unknown: true,
        ..Default::default()
    };
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let mut bytes = Vec::new();
        world.save(&mut bytes, format, &dense).unwrap();
        let err = load(&bytes).unwrap_err();
        assert!(
            matches!(
                &err,
                LoadError::Storage {
                    saved: Storage::Table,
                    registered: Storage::Sparse,
                    ..
                }
            ),
            "{err}"
        );
        // And the other way round (the smaller registry skips the others).
        let (sparse_world, _) = mixed_world(true);
        let err = load_world_from_bytes(&save(&sparse_world, format), &dense, skip).unwrap_err();
        assert!(
            matches!(
                &err,
                LoadError::Storage {
                    saved: Storage::Sparse,
                    registered: Storage::Table,
                    ..
                }
            ),
            "{err}"
        );
        // Storage is not "unknown": skip_unknown does not hide it.
        assert!(matches!(
            load_world_from_bytes(&bytes, &registry(), skip).unwrap_err(),
            LoadError::Storage { .. }
        ));
    }
}

// --- Loading refusals: binary. ---

/// A postcard varint.
fn varint(mut n: usize, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A postcard byte string (or `str`).
fn bytes(b: &[u8], out: &mut Vec<u8>) {
    varint(b.len(), out);
    out.extend_from_slice(b);
}

/// One binary sparse section: entity ids, then the column (name, raw flag,
/// bytes).
struct Section<'a> {
    entities: Vec<Entity>,
    name: &'a str,
    raw: bool,
    bytes: Vec<u8>,
}

/// `world` (which holds no sparse value) saved in binary, with its empty
/// list of sparse sections replaced by `sections`, encoded by hand as the
/// module docs describe them.
fn binary_with(world: &World, sections: &[Section<'_>]) -> Vec<u8> {
    let mut file = save(world, SaveFormat::Binary);
    assert_eq!(file.pop(), Some(0), "an empty list of sparse sections");
    varint(sections.len(), &mut file);
    for s in sections {
        let ids: Vec<u8> = (s.entities.iter())
            .flat_map(|e| e.to_bits().to_le_bytes())
            .collect();
        bytes(&ids, &mut file);
        bytes(s.name.as_bytes(), &mut file);
        file.push(u8::from(s.raw));
        bytes(&s.bytes, &mut file);
    }
    file
}

fn raw_stunned(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn bad_binary_sparse_sections_are_typed_errors() {
    let mut world = World::new();
    registry().install(&mut world).unwrap();
    let a = world.spawn((Hp(1),));
    let b = world.spawn(());
    let section = |entities: Vec<Entity>, name, raw, bytes| Section {
        entities,
        name,
        raw,
        bytes,
    };
    // The hand-made file loads: the layout is the documented one.
    let label_bytes = |l: &Label| {
        let mut out = Vec::new();
        bytes(l.text.as_bytes(), &mut out);
        out.push(l.level);
        out
    };
    let good = binary_with(
        &world,
        &[
            section(vec![b, a], "stunned", true, raw_stunned(&[5, 6])),
            section(vec![a], "label", false, label_bytes(&label(4))),
            section(vec![a, b], "marked", true, Vec::new()),
        ],
    );
    let loaded = load(&good).unwrap();
    loaded.check_invariants();
    assert_eq!(loaded.get::<Stunned>(b), Ok(&Stunned(5)));
    assert_eq!(loaded.get::<Stunned>(a), Ok(&Stunned(6)));
    assert_eq!(loaded.get::<Label>(a), Ok(&label(4)));
    assert_eq!(loaded.get::<Marked>(b), Ok(&Marked));
    assert_eq!(sparse_lists(&loaded).0, vec![(b, 5), (a, 6)], "file order");
    assert_eq!(doecs::raw::archetypes(&loaded).len(), 2, "() and (Hp)");

    let err_of = |sections: &[Section<'_>]| load(&binary_with(&world, sections)).unwrap_err();
    // Not alive, twice.
    let dead = Entity::from_parts(9, 0);
    let err = err_of(&[section(
        vec![a, dead],
        "stunned",
        true,
        raw_stunned(&[1, 2]),
    )]);
    assert!(
        matches!(&err, LoadError::SparseEntity { entity, .. } if *entity == dead),
        "{err}"
    );
    let err = err_of(&[section(
        vec![a, b, a],
        "stunned",
        true,
        raw_stunned(&[1, 2, 3]),
    )]);
    assert!(
        matches!(&err, LoadError::SparseRepeated { entity, .. } if *entity == a),
        "{err}"
    );
    // Value counts that differ from the entity count: raw and postcard.
    let err = err_of(&[section(vec![a, b], "stunned", true, raw_stunned(&[1]))]);
    assert!(
        matches!(
            &err,
            LoadError::ColumnLength {
                expected: 2,
                actual: 1,
                ..
            }
        ),
        "{err}"
    );
    let err = err_of(&[section(vec![a, b], "label", false, label_bytes(&label(1)))]);
    assert!(
        matches!(&err, LoadError::Value { name, .. } if name == "label"),
        "{err}"
    );
    let mut two = label_bytes(&label(1));
    two.extend(label_bytes(&label(2)));
    let err = err_of(&[section(vec![a], "label", false, two)]);
    assert!(
        matches!(&err, LoadError::Value { name, .. } if name == "label"),
        "{err}"
    );
    // A non-plain component stored raw.
    let err = err_of(&[section(vec![a], "label", true, vec![0; 4])]);
    assert!(matches!(err, LoadError::Corrupt(_)), "{err}");
    // A section listed twice.
    let err = err_of(&[
        section(vec![a], "stunned", true, raw_stunned(&[1])),
        section(vec![b], "stunned", true, raw_stunned(&[2])),
    ]);
    assert!(matches!(err, LoadError::Corrupt(_)), "{err}");
    // Entity ids that are not whole u64s.
    let mut file = save(&world, SaveFormat::Binary);
    file.pop();
    file.extend([1, 3, 1, 2, 3]);
    bytes(b"stunned", &mut file);
    file.extend([1, 0]);
    assert!(matches!(load(&file).unwrap_err(), LoadError::Corrupt(_)));
    // A storage mismatch.
    let err = err_of(&[section(vec![a], "hp", true, raw_stunned(&[1]))]);
    assert!(
        matches!(
            &err,
            LoadError::Storage {
                saved: Storage::Sparse,
                registered: Storage::Table,
                ..
            }
        ),
        "{err}"
    );
    // An unknown name: refused, or skipped.
    let ghost = binary_with(&world, &[section(vec![dead], "ghost", false, vec![1, 2])]);
    let err = load(&ghost).unwrap_err();
    assert!(
        matches!(&err, LoadError::UnknownComponent(n) if n == "ghost"),
        "{err}"
    );
    let skip = LoadOptions {
        skip_unknown: true,
        ..Default::default()
    };
    let loaded = load_world_from_bytes(&ghost, &registry(), skip).unwrap();
    loaded.check_invariants();
    // Bytes after the sections.
    let mut longer = good.clone();
    longer.push(0);
    assert!(matches!(load(&longer).unwrap_err(), LoadError::Corrupt(_)));
}

#[test]
fn cut_and_flipped_saves_with_sparse_sections_never_panic() {
    let (world, _) = mixed_world(true);
    let registry = registry();
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let bytes = save(&world, format);
        let step = match (format, cfg!(miri)) {
            (_, true) => 97,
            (SaveFormat::Binary, false) => 1,
            (SaveFormat::Json, false) => 5,
        };
        for len in (0..bytes.len()).step_by(step) {
            let r = load_world_from_bytes(&bytes[..len], &registry, LoadOptions::default());
            assert!(
                r.is_err(),
                "{format:?} cut at {len} of {} loaded",
                bytes.len()
            );
        }
        for i in (0..bytes.len()).step_by(step.max(3)) {
            for x in [0x01, 0x5a, 0xff] {
                let mut flipped = bytes.clone();
                flipped[i] ^= x;
                for skip_unknown in [false, true] {
                    let options = LoadOptions {
                        skip_unknown,
                        ..Default::default()
                    };
                    if let Ok(w) = load_world_from_bytes(&flipped, &registry, options) {
                        w.check_invariants();
                    }
                }
            }
        }
    }
}

// --- Older files. ---

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(path).unwrap()
}

#[test]
fn version_2_files_still_load() {
    for name in ["save_v2.bin", "save_v2.json"] {
        let bytes = fixture(name);
        if name.ends_with(".bin") {
            assert_eq!(&bytes[..8], &SAVE_MAGIC);
            assert_eq!(bytes[8..12], 2u32.to_le_bytes());
        } else {
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(v["version"], json!(2));
            assert!(v.get("sparse").is_none());
        }
        let world = load(&bytes).unwrap();
        world.check_invariants();
        let e = |i| Entity::from_parts(i, 0);
        assert_eq!(world.len(), 5, "{name}");
        assert_eq!(world.get::<Hp>(e(0)), Ok(&Hp(7)));
        assert_eq!(world.get::<Pos>(e(0)), Ok(&Pos([1.0, 2.0, 3.0])));
        assert_eq!(world.get::<Frozen>(e(1)), Ok(&Frozen));
        assert_eq!(world.get::<Aligned>(e(2)), Ok(&Aligned { a: 1, b: 2 }));
        assert_eq!(world.get::<Inventory>(e(2)).unwrap().owner, "x");
        assert_eq!(world.parent(e(1)), Some(e(0)));
        assert!(doecs::raw::sparse_columns(&world)
            .iter()
            .all(|c| c.entities.is_empty()));
        // Saved again, it is a version 3 file that loads the same.
        let again = load(&save(&world, SaveFormat::Binary)).unwrap();
        assert_eq!(again.get::<Hp>(e(0)), Ok(&Hp(7)));
    }
    // A version 2 file made from a version 3 one: the same bytes without the
    // (empty) sparse sections.
    let (world, _) = mixed_world(false);
    let mut v2 = save(&world, SaveFormat::Binary);
    assert_eq!(v2.pop(), Some(0));
    v2[8..12].copy_from_slice(&2u32.to_le_bytes());
    let loaded = load(&v2).unwrap();
    assert_same_world(&world, &loaded);
    // A version 2 file cannot carry sparse sections: the bytes are extra.
    let (sparse_world, _) = mixed_world(true);
    let mut v3 = save(&sparse_world, SaveFormat::Binary);
    v3[8..12].copy_from_slice(&2u32.to_le_bytes());
    assert!(matches!(load(&v3).unwrap_err(), LoadError::Corrupt(_)));
}
