//! Model-based test: random sequences of world operations run against both a
//! `World` and a naive `HashMap<Entity, Row>` model, checking after every step
//! that results agree and that `World::check_invariants` holds.
//!
//! The op mix covers spawn (several bundle shapes), spawn_batch, spawning from
//! byte columns, despawn, insert (one component and bundles), remove (one,
//! bundle, by id), get, get_mut, byte access to a runtime-registered
//! component, and typed queries with `With`/`Without`/`Option`, held across
//! operations so their caches must learn of new archetypes. Entity handles are
//! picked from every handle ever issued, so dead and reused-index (stale)
//! handles are exercised constantly; small `min_free_indices` make indices come
//! back quickly, and small chunk sizes make many chunks.

use doecs::{
    ComponentDescriptor, ComponentId, Entity, EntityError, QueryState, With, Without, World,
    WorldConfig,
};
use proptest::prelude::*;
use std::alloc::Layout;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, PartialEq)]
struct B(String);
#[derive(Debug, Clone, Copy, PartialEq)]
struct C;
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(64))]
struct D(u64);

/// Bytes per value of the runtime component `E` (align 2).
const E_SIZE: usize = 6;

/// What the model knows of one live entity.
#[derive(Debug, Clone, Default, PartialEq)]
struct Row {
    a: Option<u32>,
    b: Option<String>,
    c: bool,
    d: Option<u64>,
    e: Option<[u8; E_SIZE]>,
}

#[derive(Debug, Clone, Copy)]
enum Shape {
    Empty,
    A,
    AB,
    Bcd,
    Abcd,
    DA,
}

#[derive(Debug, Clone, Copy)]
enum Which {
    A,
    B,
    C,
    D,
}

#[derive(Debug, Clone)]
enum Op {
    Spawn(Shape, u32),
    SpawnBatch(Shape, u32, usize),
    SpawnBytes(usize, u8),
    Despawn(usize),
    DespawnBatch(Vec<usize>),
    InsertOne(usize, Which, u32),
    InsertBundleAD(usize, u32),
    InsertBundleBC(usize, u32),
    InsertBytes(usize, u8),
    RemoveOne(usize, Which),
    RemoveBundleAB(usize),
    RemoveE(usize),
    Get(usize),
    GetMut(usize, u32),
    BytesMut(usize, u8),
    QueryAll,
    QueryMutWithoutC(u32),
    QueryWithB,
    QueryChunks,
    QueryOptionMut,
    QueryGet(usize),
    Clear,
    FreeUnusedChunks,
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Empty),
        Just(Shape::A),
        Just(Shape::AB),
        Just(Shape::Bcd),
        Just(Shape::Abcd),
        Just(Shape::DA),
    ]
}

fn which() -> impl Strategy<Value = Which> {
    prop_oneof![
        Just(Which::A),
        Just(Which::B),
        Just(Which::C),
        Just(Which::D)
    ]
}

fn op(max_batch: usize) -> impl Strategy<Value = Op> {
    let h = any::<usize>();
    prop_oneof![
        4 => (shape(), any::<u32>()).prop_map(|(s, v)| Op::Spawn(s, v)),
        1 => (shape(), any::<u32>(), 0..max_batch).prop_map(|(s, v, n)| Op::SpawnBatch(s, v, n)),
        1 => (0..max_batch, any::<u8>()).prop_map(|(n, v)| Op::SpawnBytes(n, v)),
        3 => h.prop_map(Op::Despawn),
        1 => proptest::collection::vec(any::<usize>(), 0..6).prop_map(Op::DespawnBatch),
        4 => (h, which(), any::<u32>()).prop_map(|(e, w, v)| Op::InsertOne(e, w, v)),
        1 => (h, any::<u32>()).prop_map(|(e, v)| Op::InsertBundleAD(e, v)),
        1 => (h, any::<u32>()).prop_map(|(e, v)| Op::InsertBundleBC(e, v)),
        2 => (h, any::<u8>()).prop_map(|(e, v)| Op::InsertBytes(e, v)),
        3 => (h, which()).prop_map(|(e, w)| Op::RemoveOne(e, w)),
        1 => h.prop_map(Op::RemoveBundleAB),
        1 => h.prop_map(Op::RemoveE),
        3 => h.prop_map(Op::Get),
        2 => (h, any::<u32>()).prop_map(|(e, v)| Op::GetMut(e, v)),
        1 => (h, any::<u8>()).prop_map(|(e, v)| Op::BytesMut(e, v)),
        1 => Just(Op::QueryAll),
        1 => any::<u32>().prop_map(Op::QueryMutWithoutC),
        1 => Just(Op::QueryWithB),
        1 => Just(Op::QueryChunks),
        1 => Just(Op::QueryOptionMut),
        2 => h.prop_map(Op::QueryGet),
        // Rare: wipes everything (but keeps the handles, which go stale).
        1 => Just(Op::Clear),
        1 => Just(Op::FreeUnusedChunks),
    ]
}

fn row_of(shape: Shape, v: u32) -> Row {
    let mut r = Row::default();
    match shape {
        Shape::Empty => {}
        Shape::A => r.a = Some(v),
        Shape::AB => {
            r.a = Some(v);
            r.b = Some(v.to_string());
        }
        Shape::Bcd => {
            r.b = Some(v.to_string());
            r.c = true;
            r.d = Some(v as u64 * 3);
        }
        Shape::Abcd => {
            r.a = Some(v);
            r.b = Some(v.to_string());
            r.c = true;
            r.d = Some(v as u64 * 3);
        }
        Shape::DA => {
            r.a = Some(v);
            r.d = Some(v as u64 * 3);
        }
    }
    r
}

fn e_bytes(v: u8) -> [u8; E_SIZE] {
    std::array::from_fn(|i| v.wrapping_add(i as u8 * 17))
}

fn assert_aligned<T>(r: &T) {
    assert_eq!(
        (r as *const T as usize) % std::mem::align_of::<T>(),
        0,
        "misaligned {}",
        std::any::type_name::<T>()
    );
}

struct Harness {
    world: World,
    model: HashMap<Entity, Row>,
    /// Every handle ever issued, dead ones included (stale handles).
    handles: Vec<Entity>,
    e_id: ComponentId,
    /// Held across operations: its cache must pick up new archetypes.
    held: QueryState<(Entity, &'static A, Option<&'static B>)>,
}

impl Harness {
    fn new(config: WorldConfig) -> Self {
        let mut world = World::with_config(config);
        let e_id = world
            .register_component(ComponentDescriptor::dynamic(
                "model::E",
                Layout::from_size_align(E_SIZE, 2).unwrap(),
            ))
            .unwrap();
        let held = QueryState::new(&world);
        Harness {
            world,
            model: HashMap::new(),
            handles: Vec::new(),
            e_id,
            held,
        }
    }

    fn pick(&self, h: usize) -> Option<Entity> {
        if self.handles.is_empty() {
            None
        } else {
            Some(self.handles[h % self.handles.len()])
        }
    }

    fn spawn_shape(&mut self, shape: Shape, v: u32) -> Entity {
        let w = &mut self.world;
        let (a, b, d) = (A(v), B(v.to_string()), D(v as u64 * 3));
        match shape {
            Shape::Empty => w.spawn(()),
            Shape::A => w.spawn((a,)),
            Shape::AB => w.spawn((a, b)),
            Shape::Bcd => w.spawn((b, C, d)),
            Shape::Abcd => w.spawn((a, b, C, d)),
            Shape::DA => w.spawn((d, a)),
        }
    }

    fn spawn_batch_shape(&mut self, shape: Shape, v: u32, n: usize) -> Vec<Entity> {
        let w = &mut self.world;
        let vals = (0..n as u32).map(move |i| v.wrapping_add(i));
        match shape {
            Shape::Empty => w.spawn_batch(vals.map(|_| ())),
            Shape::A => w.spawn_batch(vals.map(|v| (A(v),))),
            Shape::AB => w.spawn_batch(vals.map(|v| (A(v), B(v.to_string())))),
            Shape::Bcd => w.spawn_batch(vals.map(|v| (B(v.to_string()), C, D(v as u64 * 3)))),
            Shape::Abcd => {
                w.spawn_batch(vals.map(|v| (A(v), B(v.to_string()), C, D(v as u64 * 3))))
            }
            Shape::DA => w.spawn_batch(vals.map(|v| (D(v as u64 * 3), A(v)))),
        }
    }

    /// Expected error for an operation on `e` when the model says it is dead.
    fn dead(&self, e: Entity) -> bool {
        !self.model.contains_key(&e)
    }

    fn check_entity(&self, e: Entity) {
        let w = &self.world;
        match self.model.get(&e) {
            None => {
                assert!(!w.alive(e), "{e} should be dead");
                assert_eq!(w.get::<A>(e), Err(EntityError::NoSuchEntity(e)));
                assert!(w.get::<B>(e).is_err());
                assert!(w.get_bytes(e, self.e_id).is_err());
            }
            Some(row) => {
                assert!(w.alive(e), "{e} should be alive");
                assert_eq!(w.get::<A>(e).ok().map(|a| a.0), row.a, "A of {e}");
                assert_eq!(w.get::<B>(e).ok().map(|b| b.0.clone()), row.b, "B of {e}");
                assert_eq!(w.get::<C>(e).is_ok(), row.c, "C of {e}");
                let d = w.get::<D>(e).ok();
                if let Some(d) = d {
                    assert_aligned(d);
                }
                assert_eq!(d.map(|d| d.0), row.d, "D of {e}");
                let bytes = w.get_bytes(e, self.e_id).ok();
                assert_eq!(bytes.map(|b| <[u8; E_SIZE]>::try_from(b).unwrap()), row.e);
                if row.a.is_none() {
                    assert!(matches!(
                        w.get::<A>(e),
                        Err(EntityError::MissingComponent { entity, .. }) if entity == e
                    ));
                }
            }
        }
    }

    fn check_all(&mut self) {
        self.world.check_invariants();
        assert_eq!(self.world.len(), self.model.len(), "live count");
        for &e in &self.handles {
            self.check_entity(e);
        }
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Spawn(shape, v) => {
                let e = self.spawn_shape(shape, v);
                assert!(!self.model.contains_key(&e), "{e} handed out twice");
                assert!(!self.handles.contains(&e), "{e} reissued");
                self.model.insert(e, row_of(shape, v));
                self.handles.push(e);
            }
            Op::SpawnBatch(shape, v, n) => {
                let es = self.spawn_batch_shape(shape, v, n);
                assert_eq!(es.len(), n);
                for (i, e) in es.into_iter().enumerate() {
                    assert!(!self.handles.contains(&e), "{e} reissued");
                    self.model
                        .insert(e, row_of(shape, v.wrapping_add(i as u32)));
                    self.handles.push(e);
                }
            }
            Op::SpawnBytes(n, v) => {
                let data: Vec<u8> = (0..n)
                    .flat_map(|i| e_bytes(v.wrapping_add(i as u8)))
                    .collect();
                let es =
                    doecs::raw::spawn_columns_bytes(&mut self.world, &[self.e_id], n, &[&data])
                        .unwrap();
                assert_eq!(es.len(), n);
                for (i, e) in es.into_iter().enumerate() {
                    let row = Row {
                        e: Some(e_bytes(v.wrapping_add(i as u8))),
                        ..Row::default()
                    };
                    self.model.insert(e, row);
                    self.handles.push(e);
                }
                // Wrong lengths are refused with a typed error and change nothing.
                let before = self.world.len();
                let err =
                    doecs::raw::spawn_columns_bytes(&mut self.world, &[self.e_id], n + 1, &[&data])
                        .unwrap_err();
                assert!(matches!(err, EntityError::WrongSize { .. }));
                assert_eq!(self.world.len(), before);
            }
            Op::Despawn(h) => {
                let Some(e) = self.pick(h) else { return };
                let res = self.world.despawn(e);
                if self.model.remove(&e).is_some() {
                    assert_eq!(res, Ok(()));
                } else {
                    assert_eq!(res, Err(EntityError::NoSuchEntity(e)));
                }
            }
            Op::DespawnBatch(ref hs) => {
                let es: Vec<Entity> = hs.iter().filter_map(|&h| self.pick(h)).collect();
                let n = self.world.despawn_batch(&es);
                let mut expect = 0;
                for e in es {
                    if self.model.remove(&e).is_some() {
                        expect += 1;
                    }
                }
                assert_eq!(n, expect);
            }
            Op::InsertOne(h, which, v) => {
                let Some(e) = self.pick(h) else { return };
                let dead = self.dead(e);
                let res = match which {
                    Which::A => self.world.insert_one(e, A(v)),
                    Which::B => self.world.insert_one(e, B(v.to_string())),
                    Which::C => self.world.insert_one(e, C),
                    Which::D => self.world.insert_one(e, D(v as u64)),
                };
                if dead {
                    assert_eq!(res, Err(EntityError::NoSuchEntity(e)));
                    return;
                }
                assert_eq!(res, Ok(()));
                let row = self.model.get_mut(&e).unwrap();
                match which {
                    Which::A => row.a = Some(v),
                    Which::B => row.b = Some(v.to_string()),
                    Which::C => row.c = true,
                    Which::D => row.d = Some(v as u64),
                }
            }
            Op::InsertBundleAD(h, v) => {
                let Some(e) = self.pick(h) else { return };
                let res = self.world.insert(e, (A(v), D(v as u64 + 1)));
                match self.model.get_mut(&e) {
                    None => assert_eq!(res, Err(EntityError::NoSuchEntity(e))),
                    Some(row) => {
                        assert_eq!(res, Ok(()));
                        row.a = Some(v);
                        row.d = Some(v as u64 + 1);
                    }
                }
            }
            Op::InsertBundleBC(h, v) => {
                let Some(e) = self.pick(h) else { return };
                let res = self.world.insert(e, (C, B(format!("bc{v}"))));
                match self.model.get_mut(&e) {
                    None => assert_eq!(res, Err(EntityError::NoSuchEntity(e))),
                    Some(row) => {
                        assert_eq!(res, Ok(()));
                        row.b = Some(format!("bc{v}"));
                        row.c = true;
                    }
                }
            }
            Op::InsertBytes(h, v) => {
                let Some(e) = self.pick(h) else { return };
                let res = self.world.insert_bytes(e, self.e_id, &e_bytes(v));
                match self.model.get_mut(&e) {
                    None => assert_eq!(res, Err(EntityError::NoSuchEntity(e))),
                    Some(row) => {
                        assert_eq!(res, Ok(()));
                        row.e = Some(e_bytes(v));
                    }
                }
                // A wrong length is a typed error, never a partial write.
                let short = self.world.insert_bytes(e, self.e_id, &[1, 2]);
                assert!(short.is_err());
            }
            Op::RemoveOne(h, which) => {
                let Some(e) = self.pick(h) else { return };
                let w = &mut self.world;
                let got = match which {
                    Which::A => w.remove_one::<A>(e).map(|a| Some(a.0 as u64)),
                    Which::B => w
                        .remove_one::<B>(e)
                        .map(|b| Some(b.0.parse::<u64>().unwrap_or(u64::MAX))),
                    Which::C => w.remove_one::<C>(e).map(|_| None),
                    Which::D => w.remove_one::<D>(e).map(|d| Some(d.0)),
                };
                let Some(row) = self.model.get_mut(&e) else {
                    assert_eq!(got, Err(EntityError::NoSuchEntity(e)));
                    return;
                };
                let expect = match which {
                    Which::A => row.a.take().map(|a| Some(a as u64)),
                    Which::B => row
                        .b
                        .take()
                        .map(|b| Some(b.parse::<u64>().unwrap_or(u64::MAX))),
                    Which::C => std::mem::take(&mut row.c).then_some(None),
                    Which::D => row.d.take().map(Some),
                };
                match expect {
                    Some(v) => assert_eq!(got, Ok(v)),
                    None => assert!(
                        matches!(got, Err(EntityError::MissingComponent { entity, .. }) if entity == e),
                        "{got:?}"
                    ),
                }
            }
            Op::RemoveBundleAB(h) => {
                let Some(e) = self.pick(h) else { return };
                let got = self.world.remove::<(A, B)>(e);
                match self.model.get_mut(&e) {
                    None => assert!(matches!(got, Err(EntityError::NoSuchEntity(_)))),
                    Some(row) if row.a.is_some() && row.b.is_some() => {
                        let (a, b) = got.unwrap();
                        assert_eq!(Some(a.0), row.a.take());
                        assert_eq!(Some(b.0), row.b.take());
                    }
                    Some(_) => {
                        // All or nothing: the row is unchanged (checked below).
                        assert!(matches!(got, Err(EntityError::MissingComponent { .. })));
                    }
                }
            }
            Op::RemoveE(h) => {
                let Some(e) = self.pick(h) else { return };
                let res = self.world.remove_by_id(e, self.e_id);
                match self.model.get_mut(&e) {
                    None => assert_eq!(res, Err(EntityError::NoSuchEntity(e))),
                    Some(row) => match row.e.take() {
                        Some(_) => assert_eq!(res, Ok(())),
                        None => assert_eq!(
                            res,
                            Err(EntityError::MissingComponentId {
                                entity: e,
                                id: self.e_id
                            })
                        ),
                    },
                }
            }
            Op::Get(h) => {
                if let Some(e) = self.pick(h) {
                    self.check_entity(e);
                }
            }
            Op::GetMut(h, v) => {
                let Some(e) = self.pick(h) else { return };
                let got = self.world.get_mut::<A>(e).map(|a| {
                    a.0 = a.0.wrapping_add(v);
                    a.0
                });
                let expect = self.model.get_mut(&e).and_then(|r| r.a.as_mut()).map(|a| {
                    *a = a.wrapping_add(v);
                    *a
                });
                assert_eq!(got.ok(), expect);
                if let Ok(d) = self.world.get_mut::<D>(e) {
                    assert_aligned(d);
                    d.0 = d.0.wrapping_mul(3);
                    let row = self.model.get_mut(&e).unwrap();
                    row.d = row.d.map(|d| d.wrapping_mul(3));
                }
            }
            Op::BytesMut(h, v) => {
                let Some(e) = self.pick(h) else { return };
                let got = self.world.get_bytes_mut(e, self.e_id).map(|b| {
                    b[0] = v;
                    b[E_SIZE - 1] ^= v;
                });
                match self.model.get_mut(&e).and_then(|r| r.e.as_mut()) {
                    Some(b) => {
                        assert!(got.is_ok());
                        b[0] = v;
                        b[E_SIZE - 1] ^= v;
                    }
                    None => assert!(got.is_err()),
                }
            }
            Op::QueryAll => {
                let mut got: Vec<(Entity, u32, Option<String>, Option<u64>)> = self
                    .world
                    .query::<(Entity, &A, Option<&B>, Option<&D>)>()
                    .iter()
                    .map(|(e, a, b, d)| {
                        if let Some(d) = d {
                            assert_aligned(d);
                        }
                        (e, a.0, b.map(|b| b.0.clone()), d.map(|d| d.0))
                    })
                    .collect();
                got.sort_by_key(|x| x.0);
                let mut expect: Vec<_> = self
                    .model
                    .iter()
                    .filter_map(|(&e, r)| Some((e, r.a?, r.b.clone(), r.d)))
                    .collect();
                expect.sort_by_key(|x| x.0);
                assert_eq!(got, expect);
                // The held query (built before most archetypes existed) agrees.
                let mut held: Vec<(Entity, u32, Option<String>)> = self
                    .held
                    .iter(&self.world)
                    .map(|(e, a, b)| (e, a.0, b.map(|b| b.0.clone())))
                    .collect();
                held.sort_by_key(|x| x.0);
                let expect: Vec<_> = expect.into_iter().map(|(e, a, b, _)| (e, a, b)).collect();
                assert_eq!(held, expect);
            }
            Op::QueryMutWithoutC(k) => {
                let mut touched = Vec::new();
                self.world
                    .query_filtered_mut::<(Entity, &mut A), Without<C>>()
                    .for_each(|(e, a)| {
                        a.0 = a.0.wrapping_add(k);
                        touched.push(e);
                    });
                touched.sort();
                let mut expect: Vec<Entity> = Vec::new();
                for (&e, r) in self.model.iter_mut() {
                    if let (Some(a), false) = (r.a.as_mut(), r.c) {
                        *a = a.wrapping_add(k);
                        expect.push(e);
                    }
                }
                expect.sort();
                assert_eq!(touched, expect);
            }
            Op::QueryWithB => {
                let mut q = QueryState::<(Entity, &D), With<B>>::new(&self.world);
                let mut got: Vec<(Entity, u64)> = q
                    .iter(&self.world)
                    .map(|(e, d)| {
                        assert_aligned(d);
                        (e, d.0)
                    })
                    .collect();
                got.sort();
                let mut expect: Vec<_> = self
                    .model
                    .iter()
                    .filter(|(_, r)| r.b.is_some())
                    .filter_map(|(&e, r)| Some((e, r.d?)))
                    .collect();
                expect.sort();
                assert_eq!(got, expect);
            }
            Op::QueryChunks => {
                let cap_rows = doecs::raw::archetypes(&self.world)
                    .iter()
                    .map(|a| a.chunk_rows())
                    .max();
                let mut seen = Vec::new();
                self.world
                    .query_mut::<(Entity, &mut A)>()
                    .for_each_chunk(|(es, as_)| {
                        assert_eq!(es.len(), as_.len());
                        assert!(!es.is_empty(), "chunks in use are never empty");
                        assert!(es.len() <= cap_rows.unwrap());
                        for (e, a) in es.iter().zip(as_.iter_mut()) {
                            a.0 = a.0.wrapping_mul(3);
                            seen.push(*e);
                        }
                    });
                seen.sort();
                let mut expect = Vec::new();
                for (&e, r) in self.model.iter_mut() {
                    if let Some(a) = r.a.as_mut() {
                        *a = a.wrapping_mul(3);
                        expect.push(e);
                    }
                }
                expect.sort();
                assert_eq!(seen, expect);
            }
            Op::QueryOptionMut => {
                let mut n = 0;
                self.world
                    .query_mut::<(Entity, Option<&mut B>, &C)>()
                    .iter_mut()
                    .for_each(|(_, b, _)| {
                        if let Some(b) = b {
                            b.0.push('!');
                        }
                        n += 1;
                    });
                let mut expect = 0;
                for r in self.model.values_mut() {
                    if r.c {
                        expect += 1;
                        if let Some(b) = r.b.as_mut() {
                            b.push('!');
                        }
                    }
                }
                assert_eq!(n, expect);
            }
            Op::QueryGet(h) => {
                let Some(e) = self.pick(h) else { return };
                let got = self
                    .held
                    .get(&self.world, e)
                    .map(|(ge, a, b)| (ge, a.0, b.map(|b| b.0.clone())));
                match self.model.get(&e) {
                    None => assert_eq!(got, Err(EntityError::NoSuchEntity(e))),
                    Some(r) => match r.a {
                        Some(a) => assert_eq!(got, Ok((e, a, r.b.clone()))),
                        None => assert!(matches!(got, Err(EntityError::MissingComponent { .. }))),
                    },
                }
                let qm = self.world.query_mut::<&mut A>();
                let got_mut = qm.get(e).map(|a| a.0);
                assert_eq!(got_mut.ok(), self.model.get(&e).and_then(|r| r.a));
            }
            Op::Clear => {
                self.world.clear();
                self.model.clear();
            }
            Op::FreeUnusedChunks => {
                let before = self.world.chunk_memory_bytes();
                let freed = self.world.free_unused_chunk_memory();
                assert_eq!(self.world.chunk_memory_bytes(), before - freed);
                if self.model.is_empty() {
                    assert_eq!(self.world.chunk_memory_bytes(), 0, "nothing in use");
                }
            }
        }
    }
}

fn run(config: WorldConfig, ops: &[Op]) {
    let mut h = Harness::new(config);
    for op in ops {
        h.apply(op);
        h.world.check_invariants();
        // A full comparison is O(entities); do it every step natively, and
        // under Miri only while the world is small.
        if !cfg!(miri) || h.handles.len() < 16 {
            h.check_all();
        }
    }
    h.check_all();
}

fn proptest_config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        ..ProptestConfig::default()
    }
}

/// Op sequence length and batch size of the proptest cases.
const MAX_OPS: usize = 160;
const MAX_BATCH: usize = 120;

fn config_strategy() -> impl Strategy<Value = WorldConfig> {
    (
        prop_oneof![Just(16 * 1024usize), Just(512), Just(64), Just(1)],
        prop_oneof![Just(0usize), Just(1), Just(4), Just(1024)],
    )
        .prop_map(|(chunk_bytes, min_free_indices)| WorldConfig {
            chunk_bytes,
            min_free_indices,
        })
}

proptest! {
    #![proptest_config(proptest_config())]

    /// Default world settings.
    #[test]
    #[cfg_attr(miri, ignore = "proptest's generation is too slow under Miri; see model_seeded")]
    fn model_default_config(ops in proptest::collection::vec(op(MAX_BATCH), 1..MAX_OPS)) {
        run(WorldConfig::default(), &ops);
    }

    /// Tiny chunks (many chunks per archetype) and fast index reuse (many
    /// stale handles whose index is alive again).
    #[test]
    #[cfg_attr(miri, ignore = "proptest's generation is too slow under Miri; see model_seeded")]
    fn model_small_chunks_fast_reuse(
        config in config_strategy(),
        ops in proptest::collection::vec(op(MAX_BATCH), 1..MAX_OPS),
    ) {
        run(config, &ops);
    }
}

/// A small xorshift generator, so sequences can be made without proptest
/// (whose generation machinery is too slow to interpret under Miri).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn u32(&mut self) -> u32 {
        self.next() as u32
    }
}

/// A random op sequence from `seed`, with the same mix as the proptest strategy.
fn seeded_ops(seed: u64, len: usize, max_batch: usize) -> Vec<Op> {
    let mut r = XorShift(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let shapes = [
        Shape::Empty,
        Shape::A,
        Shape::AB,
        Shape::Bcd,
        Shape::Abcd,
        Shape::DA,
    ];
    let whiches = [Which::A, Which::B, Which::C, Which::D];
    (0..len)
        .map(|_| {
            let h = r.next() as usize;
            let shape = shapes[r.below(shapes.len())];
            let which = whiches[r.below(whiches.len())];
            let v = r.u32();
            match r.below(40) {
                0..=5 => Op::Spawn(shape, v),
                6 => Op::SpawnBatch(shape, v, r.below(max_batch)),
                7 => Op::SpawnBytes(r.below(max_batch), v as u8),
                8..=11 => Op::Despawn(h),
                12 => Op::DespawnBatch((0..r.below(6)).map(|_| r.next() as usize).collect()),
                13..=16 => Op::InsertOne(h, which, v),
                17 => Op::InsertBundleAD(h, v),
                18 => Op::InsertBundleBC(h, v),
                19 | 20 => Op::InsertBytes(h, v as u8),
                21..=23 => Op::RemoveOne(h, which),
                24 => Op::RemoveBundleAB(h),
                25 => Op::RemoveE(h),
                26..=28 => Op::Get(h),
                29 | 30 => Op::GetMut(h, v),
                31 => Op::BytesMut(h, v as u8),
                32 => Op::QueryAll,
                33 => Op::QueryMutWithoutC(v),
                34 => Op::QueryWithB,
                35 => Op::QueryChunks,
                36 => Op::QueryOptionMut,
                37 | 38 => Op::QueryGet(h),
                _ => Op::Clear,
            }
        })
        .collect()
}

/// Seeded random sequences over several world settings. This is the model
/// test Miri runs (with short sequences); natively it adds breadth.
#[test]
fn model_seeded() {
    let (seeds, len, batch) = if cfg!(miri) {
        (1, 40, 5)
    } else {
        (12, 200, 40)
    };
    let configs = [
        WorldConfig::default(),
        WorldConfig {
            chunk_bytes: 256,
            min_free_indices: 1,
        },
        WorldConfig {
            chunk_bytes: 1,
            min_free_indices: 0,
        },
    ];
    for seed in 0..seeds {
        for config in configs {
            run(config, &seeded_ops(seed, len, batch));
        }
    }
}

/// A fixed churn sequence that certainly reuses indices with tiny chunks, so
/// stale handles to reused indices are checked even if proptest is unlucky.
#[test]
fn model_fixed_churn() {
    let n = if cfg!(miri) { 4 } else { 60 };
    let mut ops = Vec::new();
    for round in 0..3u32 {
        ops.push(Op::SpawnBatch(Shape::Abcd, round * 1000, n));
        ops.push(Op::SpawnBytes(n / 2, round as u8));
        for i in 0..n {
            ops.push(Op::InsertOne(i * 7, Which::A, i as u32));
            ops.push(Op::RemoveOne(i * 3, Which::C));
            ops.push(Op::InsertBytes(i * 5, i as u8));
            ops.push(Op::Despawn(i * 11 + round as usize));
        }
        ops.push(Op::QueryAll);
        ops.push(Op::QueryChunks);
        ops.push(Op::QueryWithB);
        ops.push(Op::Spawn(Shape::DA, round));
    }
    run(
        WorldConfig {
            chunk_bytes: 256,
            min_free_indices: 1,
        },
        &ops,
    );
}
