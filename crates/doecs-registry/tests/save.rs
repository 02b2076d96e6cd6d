//! Save and load: round trips in both formats compare every component and
//! every id; unknown and unregistered components; bad files of every kind
//! are typed errors; a property test against random worlds (sparse
//! components included); truncations and byte flips never panic. Sparse
//! sections in detail: `sparse_saves.rs`.

use doecs::{Entity, World};
use doecs_registry::{
    load_world_from_bytes, save_world, ComponentRegistry, LoadError, LoadOptions, SaveError,
    SaveFormat, SaveOptions, WorldSaveExt,
};
use proptest::prelude::*;

mod common {
    pub mod fuzz_registry;
}

// The component types and registry the loader fuzz target uses too: plain,
// marker, serde-only (a `Vec` and a `String`), entity-holding and
// 64-byte-aligned (with padding) components, and the transform manager.
use common::fuzz_registry::{
    registry, Aligned, Frozen, Hp, Inventory, Label, Marked, Pos, Stunned, Target,
};

/// Not registered anywhere.
#[derive(Debug, PartialEq)]
struct Secret(#[allow(dead_code)] u8);

/// A world with several archetypes, sparse components, freed ids waiting
/// in the FIFO, and references between entities.
fn sample_world() -> (World, Vec<Entity>) {
    let mut world = World::with_config(doecs::WorldConfig {
        min_free_indices: 2,
        ..Default::default()
    });
    registry().install(&mut world).unwrap();
    let mut es = Vec::new();
    for i in 0..40u32 {
        let e = match i % 5 {
            0 => world.spawn((Pos([i as f32, 1.0, 2.0]), Hp(i))),
            1 => world.spawn((Hp(i), Frozen)),
            2 => world.spawn((
                Inventory {
                    owner: format!("npc{i}"),
                    items: (0..i as u16 % 4).map(|k| (k, i as u8)).collect(),
                },
                Pos([0.0, i as f32, 0.0]),
            )),
            3 => world.spawn((Aligned {
                a: i as u8,
                b: u64::from(i) << 40,
            },)),
            _ => world.spawn(()),
        };
        es.push(e);
    }
    for i in (0..40).step_by(7) {
        world.despawn(es[i]).unwrap();
    }
    // References, including one to a dead entity (kept as is).
    let live: Vec<Entity> = es.iter().copied().filter(|&e| world.alive(e)).collect();
    for (k, &e) in live.iter().enumerate().take(10) {
        world
            .insert_one(e, Target(live[(k * 3 + 1) % live.len()]))
            .unwrap();
    }
    world.insert_one(live[11], Target(es[0])).unwrap();
    for (k, &e) in live.iter().enumerate().step_by(3) {
        world.insert_one(e, Stunned(k as u32)).unwrap();
        if k.is_multiple_of(2) {
            world
                .insert_one(
                    e,
                    Label {
                        text: format!("l{k}"),
                        level: k as u8,
                    },
                )
                .unwrap();
        }
    }
    world.insert_one(live[1], Marked).unwrap();
    (world, es)
}

/// Every id, every component, the free-queue order and row order.
fn assert_same_world(a: &World, b: &World) {
    assert_eq!(
        a.entities().image().unwrap(),
        b.entities().image().unwrap(),
        "ids, generations, free FIFO"
    );
    let mut ea: Vec<Entity> = a.iter_entities().collect();
    let mut eb: Vec<Entity> = b.iter_entities().collect();
    ea.sort();
    eb.sort();
    assert_eq!(ea, eb, "same live entities");
    for &e in &ea {
        assert_eq!(a.get::<Pos>(e).ok(), b.get::<Pos>(e).ok(), "{e:?}");
        assert_eq!(a.get::<Hp>(e).ok(), b.get::<Hp>(e).ok());
        assert_eq!(a.get::<Frozen>(e).ok(), b.get::<Frozen>(e).ok());
        assert_eq!(a.get::<Inventory>(e).ok(), b.get::<Inventory>(e).ok());
        assert_eq!(a.get::<Target>(e).ok(), b.get::<Target>(e).ok());
        assert_eq!(a.get::<Aligned>(e).ok(), b.get::<Aligned>(e).ok());
        assert_eq!(a.get::<Stunned>(e).ok(), b.get::<Stunned>(e).ok());
        assert_eq!(a.get::<Label>(e).ok(), b.get::<Label>(e).ok());
        assert_eq!(a.get::<Marked>(e).ok(), b.get::<Marked>(e).ok());
        let na: Vec<&str> = a
            .entity(e)
            .unwrap()
            .components()
            .map(|c| c.name())
            .collect();
        let nb: Vec<&str> = b
            .entity(e)
            .unwrap()
            .components()
            .map(|c| c.name())
            .collect();
        assert_eq!(
            na.len(),
            nb.len(),
            "{e:?} has the same number of components"
        );
    }
    // Same iteration order over a query.
    let qa: Vec<Entity> = a.query::<(Entity, &Pos)>().iter().map(|(e, _)| e).collect();
    let qb: Vec<Entity> = b.query::<(Entity, &Pos)>().iter().map(|(e, _)| e).collect();
    assert_eq!(qa, qb, "same row order");
    // Same sparse sets, in the same slot order.
    let sets = |w: &World| -> Vec<(String, Vec<Entity>)> {
        doecs::raw::sparse_columns(w)
            .iter()
            .filter(|c| !c.entities.is_empty())
            .map(|c| {
                let name = w.components().info(c.component).name().to_owned();
                (name, c.entities.to_vec())
            })
            .collect()
    };
    assert_eq!(sets(a), sets(b), "same sparse sets");
}

fn round_trip(world: &World, format: SaveFormat) -> World {
    let registry = registry();
    let mut bytes = Vec::new();
    world.save(&mut bytes, format, &registry).unwrap();
    let loaded = World::load(&bytes[..], &registry).unwrap();
    loaded.check_invariants();
    loaded
}

#[test]
fn binary_round_trip_is_exact() {
    let (mut world, _) = sample_world();
    let mut loaded = round_trip(&world, SaveFormat::Binary);
    assert_same_world(&world, &loaded);
    // The next ids are the ones the saved world would have handed out.
    let a: Vec<Entity> = (0..8).map(|_| world.spawn((Hp(1),))).collect();
    let b: Vec<Entity> = (0..8).map(|_| loaded.spawn((Hp(1),))).collect();
    assert_eq!(a, b);
}

#[test]
fn json_round_trip_is_exact() {
    let (world, _) = sample_world();
    let loaded = round_trip(&world, SaveFormat::Json);
    assert_same_world(&world, &loaded);
    let again = round_trip(&loaded, SaveFormat::Binary);
    assert_same_world(&world, &again);
}

#[test]
fn entity_references_survive() {
    let (world, _) = sample_world();
    let loaded = round_trip(&world, SaveFormat::Binary);
    for (e, t) in loaded.query::<(Entity, &Target)>().iter() {
        assert_eq!(world.alive(t.0), loaded.alive(t.0), "{e:?} -> {:?}", t.0);
        if loaded.alive(t.0) {
            assert_eq!(world.get::<Hp>(t.0).ok(), loaded.get::<Hp>(t.0).ok());
        }
    }
}

#[test]
fn json_is_readable() {
    let registry = registry();
    let mut world = World::new();
    let e = world.spawn((Hp(5), Pos([1.0, 2.0, 3.0])));
    let mut bytes = Vec::new();
    world.save(&mut bytes, SaveFormat::Json, &registry).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["format"], "doecs-world");
    let table = &v["tables"][0];
    assert_eq!(table["entities"][0], e.to_bits());
    assert_eq!(table["components"]["hp"][0], 5);
    assert_eq!(
        table["components"]["pos"][0],
        serde_json::json!([1.0, 2.0, 3.0])
    );
}

#[test]
fn an_empty_world_round_trips() {
    let world = World::new();
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let loaded = round_trip(&world, format);
        assert_eq!(loaded.len(), 0);
    }
}

#[test]
fn unregistered_components_are_refused_or_skipped() {
    let registry = registry();
    let mut world = World::new();
    let e = world.spawn((Hp(1), Secret(3)));
    let err = world
        .save(Vec::new(), SaveFormat::Binary, &registry)
        .unwrap_err();
    assert!(
        matches!(&err, SaveError::Unregistered(name) if name.contains("Secret")),
        "{err}"
    );
    let mut bytes = Vec::new();
    let skip = SaveOptions {
        skip_unregistered: true,
    };
    save_world(&world, &registry, &mut bytes, SaveFormat::Binary, skip).unwrap();
    let loaded = World::load(&bytes[..], &registry).unwrap();
    assert_eq!(loaded.get::<Hp>(e), Ok(&Hp(1)));
    assert!(loaded.get::<Secret>(e).is_err());
}

#[test]
fn unknown_components_are_refused_or_skipped() {
    let (world, es) = sample_world();
    let mut bytes = Vec::new();
    world
        .save(&mut bytes, SaveFormat::Binary, &registry())
        .unwrap();
    let mut smaller = ComponentRegistry::new();
    smaller.register::<Pos>("pos").plain();
    smaller.register::<Hp>("hp").plain();
    smaller.register::<Frozen>("frozen").plain();
    smaller.register::<Target>("target");
    smaller.register::<Aligned>("aligned");
    let err = World::load(&bytes[..], &smaller).unwrap_err();
    assert!(
        matches!(&err, LoadError::UnknownComponent(n) if n == "inventory"),
        "{err}"
    );
    let options = LoadOptions {
        skip_unknown: true,
        ..Default::default()
    };
    let loaded = load_world_from_bytes(&bytes, &smaller, options).unwrap();
    loaded.check_invariants();
    let e = es[2];
    assert!(loaded.alive(e));
    assert_eq!(loaded.get::<Pos>(e).ok(), world.get::<Pos>(e).ok());
    assert!(loaded.get::<Inventory>(e).is_err());
}

#[test]
fn reserved_ids_refuse_a_save() {
    let registry = registry();
    let mut world = World::new();
    world.spawn((Hp(1),));
    let _pending = world.reserve_entity();
    let err = world
        .save(Vec::new(), SaveFormat::Json, &registry)
        .unwrap_err();
    assert!(matches!(err, SaveError::Ids(_)), "{err}");
}

fn json_of(world: &World) -> serde_json::Value {
    let mut bytes = Vec::new();
    world
        .save(&mut bytes, SaveFormat::Json, &registry())
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn load_json(v: &serde_json::Value) -> Result<World, LoadError> {
    World::load(v.to_string().as_bytes(), &registry())
}

#[test]
fn inconsistent_files_are_typed_errors() {
    let mut world = World::new();
    let a = world.spawn((Hp(1),));
    let b = world.spawn((Hp(2), Pos([0.0; 3])));
    let good = json_of(&world);
    assert!(load_json(&good).is_ok());

    // An entity in two tables.
    let mut v = good.clone();
    v["tables"][1]["entities"][0] = a.to_bits().into();
    let err = load_json(&v).unwrap_err();
    assert!(matches!(err, LoadError::Entity(_)), "{err}");
    // A live entity in no table.
    let mut v = good.clone();
    v["tables"].as_array_mut().unwrap().pop();
    let err = load_json(&v).unwrap_err();
    assert!(matches!(err, LoadError::Unplaced(e) if e == b), "{err}");
    // An entity that is not live in the ids.
    let mut v = good.clone();
    v["tables"][0]["entities"][0] = Entity::from_parts(0, 9).to_bits().into();
    assert!(matches!(load_json(&v).unwrap_err(), LoadError::Entity(_)));
    // A column of the wrong length.
    let mut v = good.clone();
    v["tables"][0]["components"]["hp"] = serde_json::json!([1, 2]);
    assert!(matches!(
        load_json(&v).unwrap_err(),
        LoadError::ColumnLength { .. }
    ));
    // A value of the wrong shape.
    let mut v = good.clone();
    v["tables"][0]["components"]["hp"] = serde_json::json!(["x"]);
    let err = load_json(&v).unwrap_err();
    assert!(
        matches!(&err, LoadError::Value { name, .. } if name == "hp"),
        "{err}"
    );
    // Free index listed twice; out of range.
    let mut v = good.clone();
    v["ids"]["free"] = serde_json::json!([5]);
    assert!(matches!(load_json(&v).unwrap_err(), LoadError::Ids(_)));
    // Unknown field, wrong version, wrong format tag.
    let mut v = good.clone();
    v["extra"] = 1.into();
    assert!(matches!(load_json(&v).unwrap_err(), LoadError::Corrupt(_)));
    let mut v = good.clone();
    v["version"] = 99.into();
    assert!(matches!(load_json(&v).unwrap_err(), LoadError::Version(99)));
    let mut v = good;
    v["format"] = "other".into();
    assert!(matches!(load_json(&v).unwrap_err(), LoadError::NotASave));
    // Not a save at all.
    assert!(matches!(
        World::load(&b"hello"[..], &registry()).unwrap_err(),
        LoadError::NotASave
    ));
    assert!(matches!(
        World::load(&b""[..], &registry()).unwrap_err(),
        LoadError::NotASave
    ));
}

#[test]
fn every_truncation_of_a_binary_save_is_an_error() {
    let (world, _) = sample_world();
    let mut bytes = Vec::new();
    world
        .save(&mut bytes, SaveFormat::Binary, &registry())
        .unwrap();
    let registry = registry();
    // Every length (a sample under Miri, which is slow).
    let step = if cfg!(miri) { 37 } else { 1 };
    for len in (0..bytes.len()).step_by(step) {
        let r = load_world_from_bytes(&bytes[..len], &registry, LoadOptions::default());
        assert!(
            r.is_err(),
            "a save cut at {len} of {} bytes loaded",
            bytes.len()
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        load_world_from_bytes(&longer, &registry, LoadOptions::default()).unwrap_err(),
        LoadError::Corrupt(_)
    ));
}

#[test]
fn every_truncation_of_a_json_save_is_an_error() {
    let (world, _) = sample_world();
    let mut bytes = Vec::new();
    world
        .save(&mut bytes, SaveFormat::Json, &registry())
        .unwrap();
    let registry = registry();
    for len in (0..bytes.len()).step_by(if cfg!(miri) { 97 } else { 7 }) {
        let r = load_world_from_bytes(&bytes[..len], &registry, LoadOptions::default());
        assert!(r.is_err(), "a save cut at {len} bytes loaded");
    }
}

/// A random world: spawns of random component sets (dense and sparse),
/// despawns, inserts and removes.
fn random_world(ops: &[(u8, u32)]) -> World {
    let mut world = World::with_config(doecs::WorldConfig {
        min_free_indices: 3,
        ..Default::default()
    });
    registry().install(&mut world).unwrap();
    let mut live: Vec<Entity> = Vec::new();
    for &(op, x) in ops {
        match op % 8 {
            0 | 1 => {
                let mut b = doecs::EntityBuilder::new();
                if x & 1 != 0 {
                    b.add(Hp(x));
                }
                if x & 2 != 0 {
                    b.add(Pos([x as f32; 3]));
                }
                if x & 4 != 0 {
                    b.add(Frozen);
                }
                if x & 8 != 0 {
                    b.add(Inventory {
                        owner: x.to_string(),
                        items: vec![(x as u16, 1)],
                    });
                }
                if x & 16 != 0 {
                    if let Some(&t) = live.get(x as usize % live.len().max(1)) {
                        b.add(Target(t));
                    }
                }
                if x & 32 != 0 {
                    b.add(Stunned(x));
                }
                if x & 64 != 0 {
                    b.add(Marked);
                }
                live.push(world.spawn(&mut b));
            }
            2 if !live.is_empty() => {
                let e = live.swap_remove(x as usize % live.len());
                world.despawn(e).unwrap();
            }
            3 if !live.is_empty() => {
                let e = live[x as usize % live.len()];
                world
                    .insert_one(
                        e,
                        Aligned {
                            a: x as u8,
                            b: u64::from(x),
                        },
                    )
                    .unwrap();
            }
            4 if !live.is_empty() => {
                let e = live[x as usize % live.len()];
                let _ = world.remove_one::<Hp>(e);
            }
            5 if !live.is_empty() => {
                let e = live[x as usize % live.len()];
                match x % 3 {
                    0 => world.insert_one(e, Stunned(x)).unwrap(),
                    1 => world
                        .insert_one(
                            e,
                            Label {
                                text: format!("x{x}"),
                                level: x as u8,
                            },
                        )
                        .unwrap(),
                    _ => world.insert_one(e, Marked).unwrap(),
                }
            }
            6 if !live.is_empty() => {
                let e = live[x as usize % live.len()];
                let _ = match x % 3 {
                    0 => world.remove_one::<Stunned>(e).map(drop),
                    1 => world.remove_one::<Label>(e).map(drop),
                    _ => world.remove_one::<Marked>(e).map(drop),
                };
            }
            _ => {}
        }
    }
    world
}

proptest! {
    #![proptest_config(if cfg!(miri) {
        // Miri is slow, and its isolation has no working directory to
        // persist failures in.
        ProptestConfig { cases: 2, failure_persistence: None, ..ProptestConfig::default() }
    } else {
        ProptestConfig::with_cases(64)
    })]

    #[test]
    fn random_worlds_round_trip(ops in prop::collection::vec((any::<u8>(), any::<u32>()), 0..120)) {
        let world = random_world(&ops);
        for format in [SaveFormat::Binary, SaveFormat::Json] {
            let loaded = round_trip(&world, format);
            assert_same_world(&world, &loaded);
        }
    }

    #[test]
    fn flipped_bytes_never_panic(
        ops in prop::collection::vec((any::<u8>(), any::<u32>()), 0..40),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        json in any::<bool>(),
    ) {
        let world = random_world(&ops);
        let format = if json { SaveFormat::Json } else { SaveFormat::Binary };
        let mut bytes = Vec::new();
        world.save(&mut bytes, format, &registry()).unwrap();
        for (at, x) in flips {
            let n = bytes.len();
            bytes[at % n] ^= x.max(1);
        }
        // Either a typed error or a consistent world.
        if let Ok(w) = load_world_from_bytes(&bytes, &registry(), LoadOptions::default()) {
            w.check_invariants();
        }
    }
}

// --- Managers. ---

/// A manager keeping a name per entity.
#[derive(Debug, Default, PartialEq)]
struct Names(std::collections::BTreeMap<Entity, String>);

impl doecs::ComponentManager for Names {
    fn on_destroy(&mut self, destroyed: &[Entity]) {
        for e in destroyed {
            self.0.remove(e);
        }
    }
}

impl doecs::SaveManager for Names {
    type Saved = Vec<(Entity, String)>;
    fn to_saved(&self) -> Self::Saved {
        self.0.iter().map(|(e, n)| (*e, n.clone())).collect()
    }
    fn from_saved(saved: Self::Saved, world: &World) -> Result<Self, String> {
        let mut names = Names::default();
        for (e, n) in saved {
            if !world.alive(e) {
                return Err(format!("{e:?} is not alive"));
            }
            names.0.insert(e, n);
        }
        Ok(names)
    }
}

fn registry_with_names() -> ComponentRegistry {
    let mut r = registry();
    r.register_manager::<Names>("names", doecs::DestroyNotice::Callback)
        .unwrap();
    r
}

fn world_with_names() -> World {
    let (mut world, _) = sample_world();
    let mut names = Names::default();
    for (i, e) in world.iter_entities().enumerate().take(5) {
        names.0.insert(e, format!("n{i}"));
    }
    world.add_manager(names, doecs::DestroyNotice::Callback);
    world
}

#[test]
fn registered_managers_round_trip() {
    let world = world_with_names();
    let registry = registry_with_names();
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let mut bytes = Vec::new();
        world.save(&mut bytes, format, &registry).unwrap();
        let mut loaded = World::load(&bytes[..], &registry).unwrap();
        assert_same_world(&world, &loaded);
        assert_eq!(loaded.manager::<Names>(), world.manager::<Names>());
        // It hears of despawns, as registered.
        let e = *loaded.manager::<Names>().unwrap().0.keys().next().unwrap();
        loaded.despawn(e).unwrap();
        assert!(!loaded.manager::<Names>().unwrap().0.contains_key(&e));
    }
}

#[test]
fn unregistered_and_unknown_managers() {
    let world = world_with_names();
    let err = world
        .save(Vec::new(), SaveFormat::Binary, &registry())
        .unwrap_err();
    assert!(matches!(err, SaveError::UnregisteredManager(n) if n.contains("Names")));
    let mut bytes = Vec::new();
    world
        .save(&mut bytes, SaveFormat::Binary, &registry_with_names())
        .unwrap();
    let err = World::load(&bytes[..], &registry()).unwrap_err();
    assert!(
        matches!(&err, LoadError::UnknownManager(n) if n == "names"),
        "{err}"
    );
    let options = LoadOptions {
        skip_unknown: true,
        ..Default::default()
    };
    let loaded = load_world_from_bytes(&bytes, &registry(), options).unwrap();
    assert!(loaded.manager::<Names>().is_none());
}

#[test]
fn a_manager_naming_a_dead_entity_is_refused() {
    let world = world_with_names();
    let mut bytes = Vec::new();
    world
        .save(&mut bytes, SaveFormat::Json, &registry_with_names())
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    v["managers"]["names"][0][0] = Entity::from_parts(0, 77).to_bits().into();
    let err = World::load(v.to_string().as_bytes(), &registry_with_names()).unwrap_err();
    assert!(
        matches!(&err, LoadError::Manager { name, .. } if name == "names"),
        "{err}"
    );
}

#[test]
fn registered_checks_run_on_load() {
    let mut strict = ComponentRegistry::new();
    strict.register::<Hp>("hp").plain().validate(|hp| {
        if hp.0 <= 100 {
            Ok(())
        } else {
            Err(format!("{} > 100", hp.0))
        }
    });
    let mut world = World::new();
    world.spawn((Hp(50),));
    world.spawn((Hp(150),));
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let mut bytes = Vec::new();
        world.save(&mut bytes, format, &strict).unwrap();
        let err = World::load(&bytes[..], &strict).unwrap_err();
        assert!(
            matches!(&err, LoadError::Value { name, message } if name == "hp" && message.contains("150 > 100")),
            "{err}"
        );
    }
}

#[test]
fn disabled_and_prefab_entities_stay_so_through_a_save() {
    let mut world = World::new();
    let on = world.spawn((Hp(1),));
    let off = world.spawn((Hp(2),));
    world.disable(off).unwrap();
    let prefab = world.spawn((doecs::Prefab, Hp(3)));
    for format in [SaveFormat::Binary, SaveFormat::Json] {
        let loaded = round_trip(&world, format);
        assert!(!loaded.is_disabled(on) && loaded.is_disabled(off));
        assert!(loaded.get::<doecs::Prefab>(prefab).is_ok());
        let visible: Vec<u32> = loaded.query::<&Hp>().iter().map(|h| h.0).collect();
        assert_eq!(visible, [1], "{format:?}");
    }
}
