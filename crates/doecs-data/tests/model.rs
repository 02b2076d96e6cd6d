//! Model test: random set/get/remove/merge/compact/json/bytes sequences on a
//! `DataStore`, checked after every step against a naive model, a
//! `HashMap<String, serde_json::Value>` per entity (plus each key's stamp,
//! which merges need). The model implements the documented merge rules on
//! its own, from JSON values.

use doecs::Entity;
use doecs_data::{DataStore, Record, RecordRef, StoreConfig};
use proptest::prelude::*;
use serde_json::{json, Value as Json};
use std::cmp::Ordering;
use std::collections::HashMap;

const ENTITIES: u32 = 4;

/// The path pool: (how the store is called, the model's key string).
/// `["a.b"]` is one segment containing a dot, distinct from the path `a.b`.
fn path_names() -> Vec<(Vec<&'static str>, &'static str)> {
    vec![
        (vec!["hp"], "hp"),
        (vec!["stats", "health"], "stats.health"),
        (vec!["stats", "mana"], "stats.mana"),
        (vec!["name"], "name"),
        (vec!["a", "b"], "a.b"),
        (vec!["a.b"], "[a.b]"),
        (vec!["effects", "drunk"], "effects.drunk"),
        (vec!["color"], "color"),
    ]
}

#[derive(Clone, Debug)]
enum V {
    Bool(bool),
    F(f32),
    S(String),
    A(Vec<f32>),
}

impl V {
    fn json(&self) -> Json {
        match self {
            V::Bool(b) => json!(b),
            V::F(f) => json!(*f as f64),
            V::S(s) => json!(s),
            V::A(a) => Json::Array(a.iter().map(|&f| json!(f as f64)).collect()),
        }
    }
}

fn value() -> impl Strategy<Value = V> {
    prop_oneof![
        any::<bool>().prop_map(V::Bool),
        prop::sample::select(vec![0.0f32, 1.0, -2.5, 100.0, 1e-3, 3.25e7]).prop_map(V::F),
        "[a-z]{0,40}".prop_map(V::S),
        prop::collection::vec(prop::sample::select(vec![0.0f32, 0.5, -1.0, 7.0]), 0..12)
            .prop_map(V::A),
    ]
}

#[derive(Clone, Debug)]
enum Op {
    Set(u32, usize, V),
    Remove(u32, usize),
    Merge(u32, u32),
    Compact,
    Destroy(u32),
    SetJson(u32, Vec<(usize, V)>),
    ApplyJson(u32, Vec<(usize, V)>),
    CopyBytes(u32, u32),
    Respawn(u32),
}

fn op() -> impl Strategy<Value = Op> {
    let e = 0..ENTITIES;
    let p = 0..path_names().len();
    let kv = || prop::collection::vec((0..path_names().len(), value()), 0..5);
    prop_oneof![
        8 => (e.clone(), p.clone(), value()).prop_map(|(e, p, v)| Op::Set(e, p, v)),
        2 => (e.clone(), p).prop_map(|(e, p)| Op::Remove(e, p)),
        2 => (e.clone(), e.clone()).prop_map(|(a, b)| Op::Merge(a, b)),
        1 => Just(Op::Compact),
        1 => e.clone().prop_map(Op::Destroy),
        1 => (e.clone(), kv()).prop_map(|(e, kv)| Op::SetJson(e, kv)),
        1 => (e.clone(), kv()).prop_map(|(e, kv)| Op::ApplyJson(e, kv)),
        1 => (e.clone(), e.clone()).prop_map(|(a, b)| Op::CopyBytes(a, b)),
        1 => e.prop_map(Op::Respawn),
    ]
}

type Naive = HashMap<String, (Json, u32)>;

#[derive(Default)]
struct Model {
    clock: u32,
    records: HashMap<u32, Naive>,
}

/// The documented tie-break order, computed from JSON: type (bool < float <
/// string < array), then stored bytes.
fn order(a: &Json, b: &Json) -> Ordering {
    fn rank(j: &Json) -> u8 {
        match j {
            Json::Bool(_) => 1,
            Json::Number(_) => 2,
            Json::String(_) => 3,
            _ => 4,
        }
    }
    fn bytes(j: &Json) -> Vec<u8> {
        match j {
            Json::Bool(b) => (*b as u32).to_le_bytes().to_vec(),
            Json::Number(n) => (n.as_f64().unwrap() as f32)
                .to_bits()
                .to_be_bytes()
                .to_vec(),
            Json::String(s) => s.as_bytes().to_vec(),
            Json::Array(a) => a
                .iter()
                .flat_map(|x| (x.as_f64().unwrap() as f32).to_le_bytes())
                .collect(),
            _ => unreachable!(),
        }
    }
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (Json::Number(x), Json::Number(y)) => (x.as_f64().unwrap() as f32)
            .to_bits()
            .cmp(&(y.as_f64().unwrap() as f32).to_bits()),
        _ => bytes(a).cmp(&bytes(b)),
    })
}

fn nested_json(kv: &[(usize, V)]) -> (Json, Vec<(String, Json)>) {
    let names = path_names();
    let mut root = serde_json::Map::new();
    let mut flat: Vec<(String, Json)> = Vec::new();
    for (p, v) in kv {
        let (segs, name) = &names[*p];
        if flat.iter().any(|(n, _)| n == name) {
            continue;
        }
        let mut obj = &mut root;
        for s in &segs[..segs.len() - 1] {
            obj = obj
                .entry(s.to_string())
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .unwrap();
        }
        obj.insert(segs[segs.len() - 1].to_string(), v.json());
        flat.push((name.to_string(), v.json()));
    }
    (Json::Object(root), flat)
}

fn check(store: &DataStore, model: &Model, gens: &[u32]) {
    store.check_invariants();
    let names = path_names();
    for e in 0..ENTITIES {
        let ent = Entity::from_parts(e, gens[e as usize]);
        let naive = model.records.get(&e);
        assert_eq!(store.contains(ent), naive.is_some(), "entity {e} presence");
        let count = store.record(ent).map_or(0, |r| r.len());
        assert_eq!(count, naive.map_or(0, |m| m.len()), "entity {e} key count");
        for (segs, name) in &names {
            let path: &[&str] = segs;
            let want = naive.and_then(|m| m.get(*name));
            assert_eq!(store.has(ent, path), want.is_some(), "has {e} {name}");
            assert_eq!(
                store.stamp(ent, path),
                want.map(|w| w.1),
                "stamp {e} {name}"
            );
            match want.map(|w| &w.0) {
                None => assert!(store.get(ent, path).is_none()),
                Some(Json::Bool(b)) => assert_eq!(store.get_bool(ent, path), Some(*b)),
                Some(Json::Number(n)) => {
                    assert_eq!(store.get_f32(ent, path), Some(n.as_f64().unwrap() as f32))
                }
                Some(Json::String(s)) => assert_eq!(store.get_str(ent, path), Some(s.as_str())),
                Some(Json::Array(a)) => {
                    let got = store.get_f32s(ent, path).unwrap().to_vec();
                    let want: Vec<f32> = a.iter().map(|x| x.as_f64().unwrap() as f32).collect();
                    assert_eq!(got, want, "array {e} {name}");
                }
                Some(other) => panic!("model holds {other}"),
            }
        }
        if let Some(bytes) = store.to_bytes(ent) {
            let back = RecordRef::from_bytes(&bytes).expect("saved records load");
            assert_eq!(back.len(), count);
        }
    }
}

fn run(ops: Vec<Op>, config: StoreConfig) {
    let names = path_names();
    let mut store = DataStore::with_config(config);
    let mut model = Model::default();
    let mut gens = vec![1u32; ENTITIES as usize];
    let ent = |gens: &[u32], e: u32| Entity::from_parts(e, gens[e as usize]);
    for op in ops {
        match op {
            Op::Set(e, p, v) => {
                let path: &[&str] = &names[p].0;
                let r = match &v {
                    V::Bool(b) => store.set(ent(&gens, e), path, *b),
                    V::F(f) => store.set(ent(&gens, e), path, *f),
                    V::S(s) => store.set(ent(&gens, e), path, s.as_str()),
                    V::A(a) => store.set(ent(&gens, e), path, a.as_slice()),
                };
                r.unwrap();
                model.clock += 1;
                let stamp = model.clock;
                model
                    .records
                    .entry(e)
                    .or_default()
                    .insert(names[p].1.to_string(), (v.json(), stamp));
            }
            Op::Remove(e, p) => {
                let path: &[&str] = &names[p].0;
                let removed = store.remove(ent(&gens, e), path).unwrap();
                let was = model
                    .records
                    .get_mut(&e)
                    .and_then(|m| m.remove(names[p].1))
                    .is_some();
                assert_eq!(removed, was);
            }
            Op::Merge(dst, src) => {
                let Some(theirs) = store.to_record(ent(&gens, src)) else {
                    assert!(!model.records.contains_key(&src));
                    continue;
                };
                let taken = store.merge(ent(&gens, dst), theirs.as_ref()).unwrap();
                let incoming = model.records[&src].clone();
                let mine = model.records.entry(dst).or_default();
                let mut expect_taken = 0;
                for (k, (v, s)) in incoming {
                    let wins = match mine.get(&k) {
                        None => true,
                        Some((mv, ms)) => s > *ms || (s == *ms && order(&v, mv).is_gt()),
                    };
                    if wins {
                        expect_taken += 1;
                        model.clock = model.clock.max(s);
                        mine.insert(k, (v, s));
                    }
                }
                assert_eq!(taken, expect_taken);
            }
            Op::Compact => {
                store.compact();
                assert_eq!(store.dead_bytes(), 0);
            }
            Op::Destroy(e) => {
                assert_eq!(
                    store.destroy(ent(&gens, e)),
                    model.records.remove(&e).is_some()
                );
            }
            Op::SetJson(e, kv) => {
                let (json, flat) = nested_json(&kv);
                store.set_json(ent(&gens, e), &json).unwrap();
                model.clock += 1;
                let stamp = model.clock;
                model
                    .records
                    .insert(e, flat.into_iter().map(|(k, v)| (k, (v, stamp))).collect());
            }
            Op::ApplyJson(e, kv) => {
                let (json, flat) = nested_json(&kv);
                store.apply_json(ent(&gens, e), &json).unwrap();
                model.clock += 1;
                let stamp = model.clock;
                let m = model.records.entry(e).or_default();
                for (k, v) in flat {
                    m.insert(k, (v, stamp));
                }
            }
            Op::CopyBytes(src, dst) => {
                let Some(bytes) = store.to_bytes(ent(&gens, src)) else {
                    continue;
                };
                let rec = Record::from_bytes(bytes).unwrap();
                store.insert_record(ent(&gens, dst), rec.as_ref()).unwrap();
                let copy = model.records[&src].clone();
                model.records.insert(dst, copy);
            }
            Op::Respawn(e) => {
                // The entity dies without telling the store; a new one takes
                // its index. The old record must be invisible to it.
                gens[e as usize] += 1;
                model.records.remove(&e);
                if let Some(old) = store.record(Entity::from_parts(e, gens[e as usize] - 1)) {
                    let _ = old.len();
                }
                // Reads through the dead handle are allowed to see the old
                // record until it is dropped; writes through it after a new
                // generation wrote are refused.
                store.create(ent(&gens, e)).unwrap();
                model.records.insert(e, Naive::new());
                let stale = Entity::from_parts(e, gens[e as usize] - 1);
                assert!(store.set(stale, "hp", 1.0).is_err(), "stale writes refused");
            }
        }
        check(&store, &model, &gens);
        assert_eq!(store.clock(), model.clock, "Lamport clock");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 256 }, ..ProptestConfig::default() })]

    #[test]
    fn store_matches_naive_model(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 12 } else { 80 })) {
        run(ops, StoreConfig { keep_names: false, compact_dead_fraction: 0.3, compact_min_dead_bytes: 0 });
    }

    #[test]
    fn store_matches_naive_model_never_compacting(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 12 } else { 60 })) {
        run(ops, StoreConfig { keep_names: true, compact_dead_fraction: 1e9, compact_min_dead_bytes: usize::MAX });
    }
}
