//! Component hooks fire exactly once per event on every structural path,
//! see a consistent world, and the commands they record apply afterwards in
//! a fixed order.
//!
//! Every hook here records `(kind, entity, component, value)`, the value read
//! from the world inside the hook (the new value for `on_add`/`on_insert`,
//! the old one for `on_replace`/`on_remove`), and checks that the component
//! is on the entity while the hook runs.
//!
//! Nothing here starts a thread pool (so the file runs under Miri's Stacked
//! Borrows); hooks fired by a schedule's commands are tested in
//! `hooks_determinism.rs`.

use doecs::prelude::*;
use doecs::{
    CommandFailure, ComponentDescriptor, ComponentHooks, ComponentId, EntityBuilder, EntityError,
    EntityTemplate, HookContext, HookKind, MAX_HOOK_ROUNDS,
};
use std::alloc::Layout;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct B(u32);
/// No hooks.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Plain(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct C(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Link(Entity);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum K {
    Add,
    Insert,
    Replace,
    Remove,
}
use K::*;

/// One hook call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Rec {
    kind: K,
    entity: Entity,
    component: ComponentId,
    value: Option<u32>,
}

fn rec(kind: K, entity: Entity, component: ComponentId, value: u32) -> Rec {
    Rec {
        kind,
        entity,
        component,
        value: Some(value),
    }
}

type Log = Arc<Mutex<Vec<Rec>>>;
type Read = fn(&WorldCore, Entity, ComponentId) -> Option<u32>;

fn read_a(w: &WorldCore, e: Entity, _: ComponentId) -> Option<u32> {
    w.get::<A>(e).ok().map(|v| v.0)
}
fn read_b(w: &WorldCore, e: Entity, _: ComponentId) -> Option<u32> {
    w.get::<B>(e).ok().map(|v| v.0)
}
fn read_bytes(w: &WorldCore, e: Entity, id: ComponentId) -> Option<u32> {
    w.get_bytes(e, id)
        .ok()
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
}

/// A hook that records its call into `log`.
fn recording(
    log: &Log,
    kind: K,
    read: Read,
) -> impl Fn(&mut HookContext<'_>) + Send + Sync + 'static {
    let log = log.clone();
    move |ctx: &mut HookContext<'_>| {
        assert!(
            ctx.world.has_id(ctx.entity, ctx.component),
            "{kind:?} hook of {:?} on {:?}: the component is on the entity while it runs",
            ctx.component,
            ctx.entity
        );
        let value = read(ctx.world, ctx.entity, ctx.component);
        log.lock().unwrap().push(Rec {
            kind,
            entity: ctx.entity,
            component: ctx.component,
            value,
        });
    }
}

/// All four hooks, recording into `log`.
fn recorder(log: &Log, read: Read) -> ComponentHooks {
    ComponentHooks::new()
        .on_add(recording(log, Add, read))
        .on_insert(recording(log, Insert, read))
        .on_replace(recording(log, Replace, read))
        .on_remove(recording(log, Remove, read))
}

/// A world with recording hooks on `A`, `B` and the runtime component `R`
/// (four plain bytes, a little-endian `u32`); `Plain` has none.
struct Fx {
    world: World,
    log: Log,
    a: ComponentId,
    b: ComponentId,
    r: ComponentId,
}

fn fx() -> Fx {
    let mut world = World::new();
    let log = Log::default();
    world.set_hooks::<A>(recorder(&log, read_a));
    world.set_hooks::<B>(recorder(&log, read_b));
    let r = world
        .register_component(ComponentDescriptor::dynamic(
            "hooks::R",
            Layout::new::<u32>(),
        ))
        .unwrap();
    world
        .set_hooks_by_id(r, recorder(&log, read_bytes))
        .unwrap();
    let a = world.component_id::<A>();
    let b = world.component_id::<B>();
    assert!(a < b && b < r, "archetypes list components in id order");
    Fx {
        world,
        log,
        a,
        b,
        r,
    }
}

impl Fx {
    /// The calls recorded since the last `take`, in order.
    fn take(&self) -> Vec<Rec> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    /// `take`, sorted (for paths whose order among components is not fixed).
    fn take_sorted(&self) -> Vec<Rec> {
        let mut v = self.take();
        v.sort();
        v
    }

    /// What spawning `e` with `A(x)` and `B(y)` fires.
    fn spawned_ab(&self, e: Entity, x: u32, y: u32) -> Vec<Rec> {
        vec![
            rec(Add, e, self.a, x),
            rec(Add, e, self.b, y),
            rec(Insert, e, self.a, x),
            rec(Insert, e, self.b, y),
        ]
    }

    /// What despawning `e` holding `A(x)` and `B(y)` fires.
    fn despawned_ab(&self, e: Entity, x: u32, y: u32) -> Vec<Rec> {
        vec![
            rec(Replace, e, self.a, x),
            rec(Replace, e, self.b, y),
            rec(Remove, e, self.a, x),
            rec(Remove, e, self.b, y),
        ]
    }
}

fn sorted(mut v: Vec<Rec>) -> Vec<Rec> {
    v.sort();
    v
}

fn bytes(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

#[test]
fn hooks_are_set_replaced_and_cleared() {
    let mut fx = fx();
    let a = fx.a;
    let hooks = fx.world.hooks_of(a).unwrap();
    for kind in [
        HookKind::Add,
        HookKind::Insert,
        HookKind::Replace,
        HookKind::Remove,
    ] {
        assert!(hooks.get(kind).is_some());
    }
    let plain = fx.world.component_id::<Plain>();
    assert!(fx.world.hooks_of(plain).is_none());
    // An unknown id (one registered only in a world with more components)
    // is refused.
    let unknown = {
        let mut w = World::new();
        let mut last = None;
        for i in 0..9 {
            last = Some(
                w.register_component(ComponentDescriptor::dynamic(
                    &format!("c{i}"),
                    Layout::new::<u8>(),
                ))
                .unwrap(),
            );
        }
        last.unwrap()
    };
    assert!(fx.world.components().get_info(unknown).is_none());
    assert_eq!(
        fx.world.set_hooks_by_id(unknown, ComponentHooks::new()),
        Err(EntityError::UnknownComponent(unknown))
    );
    // Only some kinds: the others fire nothing.
    let log = fx.log.clone();
    fx.world
        .set_hooks::<A>(ComponentHooks::new().on_remove(recording(&log, Remove, read_a)));
    let e = fx.world.spawn((A(1),));
    fx.world.insert_one(e, A(2)).unwrap();
    assert!(fx.take().is_empty());
    fx.world.despawn(e).unwrap();
    assert_eq!(fx.take(), vec![rec(Remove, e, a, 2)]);
    // Cleared: nothing fires, and the archetype forgets it had hooks.
    fx.world.set_hooks::<A>(ComponentHooks::new());
    assert!(fx.world.hooks_of(a).is_none());
    let e = fx.world.spawn((A(1),));
    fx.world.despawn(e).unwrap();
    assert!(fx.take().is_empty());
}

#[test]
fn hooks_set_after_entities_exist_fire_for_them() {
    let mut world = World::new();
    let log = Log::default();
    let e = world.spawn((A(1), Plain(0)));
    let f = world.spawn((A(2),));
    world.set_hooks::<A>(recorder(&log, read_a));
    let a = world.component_id::<A>();
    world.insert_one(e, A(3)).unwrap();
    world.despawn(f).unwrap();
    assert_eq!(
        std::mem::take(&mut *log.lock().unwrap()),
        vec![
            rec(Replace, e, a, 1),
            rec(Insert, e, a, 3),
            rec(Replace, f, a, 2),
            rec(Remove, f, a, 2),
        ]
    );
}

#[test]
fn every_spawn_path_fires_add_then_insert_once_per_component() {
    let mut fx = fx();
    let (a, r) = (fx.a, fx.r);

    let e = fx.world.spawn((A(1), B(2), Plain(0)));
    assert_eq!(fx.take(), fx.spawned_ab(e, 1, 2));

    let e = fx.world.try_spawn((A(3), B(4))).unwrap();
    assert_eq!(fx.take(), fx.spawned_ab(e, 3, 4));

    let e = fx.world.spawn((Plain(0), A(5)));
    assert_eq!(fx.take(), vec![rec(Add, e, a, 5), rec(Insert, e, a, 5)]);

    fx.world.spawn((Plain(1),));
    fx.world.spawn(());
    assert!(fx.take().is_empty(), "no hooked component, no call");

    let expect = |fx: &Fx, es: &[Entity], base: u32| -> Vec<Rec> {
        es.iter()
            .enumerate()
            .flat_map(|(i, &e)| fx.spawned_ab(e, base + i as u32, base + 100 + i as u32))
            .collect()
    };
    let es = fx
        .world
        .spawn_batch((0..3).map(|i| (A(10 + i), B(110 + i))));
    assert_eq!(fx.take(), expect(&fx, &es, 10));

    let es = fx
        .world
        .try_spawn_batch((0..2).map(|i| (A(30 + i), B(130 + i))))
        .unwrap();
    assert_eq!(fx.take(), expect(&fx, &es, 30));

    let mut builder = EntityBuilder::new();
    builder.add(B(150)).add(Plain(0)).add(A(50));
    let e = fx.world.spawn(&mut builder);
    assert_eq!(fx.take(), fx.spawned_ab(e, 50, 150));

    let mut template = EntityTemplate::new();
    template.add(A(60)).add(B(160));
    let e = fx.world.spawn(&template);
    assert_eq!(fx.take(), fx.spawned_ab(e, 60, 160));
    let es = (0..3)
        .map(|_| fx.world.spawn(&template))
        .collect::<Vec<_>>();
    let want: Vec<Rec> = es.iter().flat_map(|&e| fx.spawned_ab(e, 60, 160)).collect();
    assert_eq!(fx.take(), want);

    assert_eq!(fx.world.spawn_batch((0..2).map(|_| ())).len(), 2);
    assert!(fx.take().is_empty());

    // Runtime component, from columns.
    let data: Vec<u8> = [7u32, 8].iter().flat_map(|v| v.to_le_bytes()).collect();
    let es = doecs::raw::spawn_columns_bytes(&mut fx.world, &[r], 2, &[&data]).unwrap();
    assert_eq!(
        fx.take(),
        vec![
            rec(Add, es[0], r, 7),
            rec(Insert, es[0], r, 7),
            rec(Add, es[1], r, 8),
            rec(Insert, es[1], r, 8),
        ]
    );
    // A typed and a runtime component from raw columns, listed out of id order.
    let av = [A(70), A(71)];
    let rv: [u8; 8] = [9, 0, 0, 0, 10, 0, 0, 0];
    // SAFETY: two valid `A`s (plain data, nothing to drop) and two `R`s.
    let es = unsafe {
        doecs::raw::spawn_columns(
            &mut fx.world,
            &[r, a],
            2,
            &[rv.as_ptr(), av.as_ptr().cast()],
        )
        .unwrap()
    };
    assert_eq!(
        fx.take(),
        vec![
            rec(Add, es[0], a, 70),
            rec(Add, es[0], r, 9),
            rec(Insert, es[0], a, 70),
            rec(Insert, es[0], r, 9),
            rec(Add, es[1], a, 71),
            rec(Add, es[1], r, 10),
            rec(Insert, es[1], a, 71),
            rec(Insert, es[1], r, 10),
        ]
    );
    fx.world.check_invariants();
}

#[test]
fn refused_spawns_fire_nothing() {
    let mut fx = fx();
    let r = fx.r;
    let len = fx.world.len();
    assert!(fx.world.try_spawn((A(1), A(2))).is_err());
    assert!(fx.world.try_spawn((A(1), B(2), A(3))).is_err());
    assert!(fx
        .world
        .try_spawn_batch((0..3).map(|i| (B(i), B(i))))
        .is_err());
    let w = &mut fx.world;
    assert!(catch_unwind(AssertUnwindSafe(|| w.spawn((B(1), B(2))))).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| w.spawn_batch([(A(1), A(2))]))).is_err());
    assert!(doecs::raw::spawn_columns_bytes(&mut fx.world, &[r], 2, &[&[0u8; 4]]).is_err());
    assert!(
        doecs::raw::spawn_columns_bytes(&mut fx.world, &[r, r], 1, &[&[0u8; 4], &[0u8; 4]])
            .is_err()
    );
    assert_eq!(fx.world.len(), len);
    assert!(fx.take().is_empty());
    fx.world.check_invariants();
}

#[test]
fn inserts_add_then_insert_new_components_and_replace_then_insert_old_ones() {
    let mut fx = fx();
    let (a, b, r) = (fx.a, fx.b, fx.r);
    let e = fx.world.spawn((Plain(0),));
    assert!(fx.take().is_empty());

    fx.world.insert(e, (A(1),)).unwrap();
    assert_eq!(fx.take(), vec![rec(Add, e, a, 1), rec(Insert, e, a, 1)]);

    fx.world.insert_one(e, A(2)).unwrap();
    assert_eq!(fx.take(), vec![rec(Replace, e, a, 1), rec(Insert, e, a, 2)]);

    // One new, one replaced: replace first (old value), then add, then insert.
    fx.world.insert(e, (A(3), B(4))).unwrap();
    assert_eq!(
        fx.take(),
        vec![
            rec(Replace, e, a, 2),
            rec(Add, e, b, 4),
            rec(Insert, e, a, 3),
            rec(Insert, e, b, 4),
        ]
    );

    // Inserting a component without hooks fires nothing, even on a hooked entity.
    fx.world.insert_one(e, Plain(9)).unwrap();
    assert!(fx.take().is_empty());

    fx.world.insert_bytes(e, r, &bytes(5)).unwrap();
    assert_eq!(fx.take(), vec![rec(Add, e, r, 5), rec(Insert, e, r, 5)]);
    fx.world.insert_bytes(e, r, &bytes(6)).unwrap();
    assert_eq!(fx.take(), vec![rec(Replace, e, r, 5), rec(Insert, e, r, 6)]);

    let value = A(7);
    // SAFETY: a valid `A`, plain data, which the world copies.
    unsafe { doecs::raw::insert(&mut fx.world, e, a, (&value as *const A).cast()).unwrap() };
    assert_eq!(fx.take(), vec![rec(Replace, e, a, 3), rec(Insert, e, a, 7)]);

    let mut builder = EntityBuilder::new();
    builder.add(B(8)).add(A(9));
    fx.world.insert_built(e, &mut builder).unwrap();
    assert_eq!(
        fx.take_sorted(),
        sorted(vec![
            rec(Replace, e, a, 7),
            rec(Replace, e, b, 4),
            rec(Insert, e, a, 9),
            rec(Insert, e, b, 8),
        ])
    );

    let mut view = fx.world.entity_mut(e).unwrap();
    view.insert_one(A(10)).unwrap().insert((B(11),)).unwrap();
    assert_eq!(
        fx.take(),
        vec![
            rec(Replace, e, a, 9),
            rec(Insert, e, a, 10),
            rec(Replace, e, b, 8),
            rec(Insert, e, b, 11),
        ]
    );

    // A fresh entity through EntityWorldMut, from nothing.
    let f = fx.world.spawn(());
    fx.world
        .entity_mut(f)
        .unwrap()
        .insert((A(1), B(2)))
        .unwrap();
    assert_eq!(fx.take(), fx.spawned_ab(f, 1, 2));
    fx.world.check_invariants();
}

#[test]
fn refused_inserts_fire_nothing_and_change_nothing() {
    let mut fx = fx();
    let (a, r) = (fx.a, fx.r);
    let e = fx.world.spawn((A(1),));
    let dead = fx.world.spawn((A(2),));
    fx.world.despawn(dead).unwrap();
    fx.take();

    assert!(fx.world.insert(e, (B(1), B(2))).is_err());
    assert!(fx.world.insert(e, (A(5), B(1), A(6))).is_err());
    assert_eq!(
        fx.world.insert_one(dead, A(3)),
        Err(EntityError::NoSuchEntity(dead))
    );
    assert!(fx.world.insert(dead, (A(3), B(3))).is_err());
    assert!(fx.world.insert_bytes(e, r, &[1, 2, 3]).is_err());
    assert!(
        fx.world.insert_bytes(e, a, &bytes(3)).is_err(),
        "not plain bytes"
    );
    assert!(fx.world.insert_bytes(dead, r, &bytes(3)).is_err());
    let mut builder = EntityBuilder::new();
    builder.add(B(1));
    assert!(fx.world.insert_built(dead, &mut builder).is_err());
    assert!(fx.take().is_empty());
    assert_eq!(fx.world.get::<A>(e), Ok(&A(1)));
    assert!(!fx.world.contains::<B>(e));
    fx.world.check_invariants();
}

#[test]
fn removals_fire_replace_then_remove_with_the_old_value() {
    let mut fx = fx();
    let (a, b, r) = (fx.a, fx.b, fx.r);
    let e = fx.world.spawn((A(1), B(2), Plain(3)));
    fx.world.insert_bytes(e, r, &bytes(4)).unwrap();
    fx.take();

    assert_eq!(fx.world.remove_one::<A>(e), Ok(A(1)));
    assert_eq!(fx.take(), vec![rec(Replace, e, a, 1), rec(Remove, e, a, 1)]);

    assert_eq!(fx.world.remove_one::<Plain>(e), Ok(Plain(3)));
    assert!(fx.take().is_empty());

    fx.world.remove_by_id(e, r).unwrap();
    assert_eq!(fx.take(), vec![rec(Replace, e, r, 4), rec(Remove, e, r, 4)]);

    fx.world.insert(e, (A(5),)).unwrap();
    fx.take();
    assert_eq!(fx.world.remove::<(A, B)>(e), Ok((A(5), B(2))));
    assert_eq!(fx.take(), fx.despawned_ab(e, 5, 2));

    fx.world.insert(e, (A(6), B(7))).unwrap();
    fx.take();
    assert_eq!(fx.world.entity_mut(e).unwrap().remove_one::<B>(), Ok(B(7)));
    assert_eq!(fx.take(), vec![rec(Replace, e, b, 7), rec(Remove, e, b, 7)]);
    assert_eq!(
        fx.world.entity_mut(e).unwrap().remove::<(A,)>(),
        Ok((A(6),))
    );
    assert_eq!(fx.take(), vec![rec(Replace, e, a, 6), rec(Remove, e, a, 6)]);

    // Refused: missing components, a dead entity.
    fx.world.insert_one(e, B(8)).unwrap();
    fx.take();
    assert!(fx.world.remove_one::<A>(e).is_err());
    assert!(fx.world.remove::<(A, B)>(e).is_err());
    assert!(fx.world.remove::<(B, C)>(e).is_err(), "C never registered");
    assert!(fx.world.remove_by_id(e, r).is_err());
    fx.world.despawn(e).unwrap();
    fx.take();
    assert!(fx.world.remove_one::<B>(e).is_err());
    assert!(fx.world.remove_by_id(e, r).is_err());
    assert!(fx.take().is_empty());
    fx.world.check_invariants();
}

#[test]
fn exchange_fires_the_leaving_and_arriving_hooks_once() {
    let mut fx = fx();
    let (a, b) = (fx.a, fx.b);

    // A leaves, B arrives.
    let e = fx.world.spawn((A(1), Plain(0)));
    fx.take();
    let old: (A,) = fx.world.exchange(e, (B(2),)).unwrap();
    assert_eq!(old, (A(1),));
    assert_eq!(
        fx.take(),
        vec![
            rec(Replace, e, a, 1),
            rec(Remove, e, a, 1),
            rec(Add, e, b, 2),
            rec(Insert, e, b, 2),
        ]
    );

    // B leaves, A arrives, and a kept Plain has no hooks.
    let old: (B,) = fx.world.exchange(e, (A(3), Plain(4))).unwrap();
    assert_eq!(old, (B(2),));
    assert_eq!(
        fx.take(),
        vec![
            rec(Replace, e, b, 2),
            rec(Remove, e, b, 2),
            rec(Add, e, a, 3),
            rec(Insert, e, a, 3),
        ]
    );

    // A leaves and B, which the entity keeps, is replaced.
    fx.world.insert_one(e, B(5)).unwrap();
    fx.take();
    let old: (A,) = fx.world.exchange(e, (B(6),)).unwrap();
    assert_eq!(old, (A(3),));
    assert_eq!(
        fx.take(),
        vec![
            rec(Replace, e, a, 3),
            rec(Remove, e, a, 3),
            rec(Replace, e, b, 5),
            rec(Insert, e, b, 6),
        ]
    );

    // B leaves and comes back.
    let old: (B,) = fx.world.exchange(e, (B(7),)).unwrap();
    assert_eq!(old, (B(6),));
    assert_eq!(
        fx.take(),
        vec![
            rec(Replace, e, b, 6),
            rec(Remove, e, b, 6),
            rec(Add, e, b, 7),
            rec(Insert, e, b, 7),
        ]
    );
    assert_eq!(fx.world.get::<B>(e), Ok(&B(7)));

    // Refused: the entity lacks A; dead entity.
    assert!(fx.world.exchange::<(A,), (B,)>(e, (B(8),)).is_err());
    assert!(fx.world.exchange::<(C,), (B,)>(e, (B(8),)).is_err());
    let dead = fx.world.spawn((Plain(0),));
    fx.world.despawn(dead).unwrap();
    assert!(fx.world.exchange::<(Plain,), (A,)>(dead, (A(1),)).is_err());
    assert!(fx.take().is_empty());
    assert_eq!(fx.world.get::<B>(e), Ok(&B(7)));
    fx.world.check_invariants();
}

#[test]
fn despawn_take_and_batches_fire_replace_then_remove_once() {
    let mut fx = fx();
    let (a, b, r) = (fx.a, fx.b, fx.r);
    let e = fx.world.spawn((A(1), B(2), Plain(0)));
    fx.world.insert_bytes(e, r, &bytes(3)).unwrap();
    fx.take();
    fx.world.despawn(e).unwrap();
    assert_eq!(
        fx.take(),
        vec![
            rec(Replace, e, a, 1),
            rec(Replace, e, b, 2),
            rec(Replace, e, r, 3),
            rec(Remove, e, a, 1),
            rec(Remove, e, b, 2),
            rec(Remove, e, r, 3),
        ]
    );
    // Stale: refused, nothing fires.
    assert_eq!(fx.world.despawn(e), Err(EntityError::NoSuchEntity(e)));
    assert!(fx.take().is_empty());

    // A batch with a repeat and a dead entity: each live one once.
    let es = fx.world.spawn_batch((0..3).map(|i| (A(i), B(10 + i))));
    fx.take();
    assert_eq!(fx.world.despawn_batch(&[es[1], es[0], es[1], e, es[2]]), 3);
    let want: Vec<Rec> = [(1, 1), (0, 0), (2, 2)]
        .iter()
        .flat_map(|&(k, v)| fx.despawned_ab(es[k], v, 10 + v))
        .collect();
    assert_eq!(fx.take(), want);
    assert_eq!(fx.world.despawn_batch(&es), 0);
    assert!(fx.take().is_empty());

    // take: the bundle's components first, then the rest.
    let e = fx.world.spawn((A(4), B(5)));
    fx.take();
    assert_eq!(fx.world.take::<(B,)>(e), Ok((B(5),)));
    assert!(!fx.world.alive(e));
    assert_eq!(
        fx.take(),
        vec![
            rec(Replace, e, b, 5),
            rec(Remove, e, b, 5),
            rec(Replace, e, a, 4),
            rec(Remove, e, a, 4),
        ]
    );
    // A refused take fires nothing and keeps the entity.
    let e = fx.world.spawn((A(6),));
    fx.take();
    assert!(fx.world.take::<(A, B)>(e).is_err());
    assert!(fx.world.take::<(B,)>(e).is_err());
    assert!(fx.take().is_empty());
    assert!(fx.world.alive(e));

    // Through EntityWorldMut.
    let view = fx.world.entity_mut(e).unwrap();
    let Err((view, _)) = view.take::<(B,)>() else {
        panic!("refused")
    };
    assert_eq!(view.take::<(A,)>().ok(), Some((A(6),)));
    assert_eq!(fx.take(), vec![rec(Replace, e, a, 6), rec(Remove, e, a, 6)]);
    let e = fx.world.spawn((B(7),));
    fx.take();
    fx.world.entity_mut(e).unwrap().despawn();
    assert_eq!(fx.take(), vec![rec(Replace, e, b, 7), rec(Remove, e, b, 7)]);
    fx.world.check_invariants();
}

#[test]
fn clear_and_dropping_the_world_remove_every_live_component_once() {
    let mut fx = fx();
    let (a, b, r) = (fx.a, fx.b, fx.r);
    let e1 = fx.world.spawn((A(1), B(2)));
    let e2 = fx.world.spawn((A(3),));
    let e3 = fx.world.spawn((Plain(0),));
    let dead = fx.world.spawn((A(9),));
    fx.world.despawn(dead).unwrap();
    fx.take();
    fx.world.clear();
    assert!(fx.world.is_empty());
    assert_eq!(
        fx.take_sorted(),
        sorted(
            fx.despawned_ab(e1, 1, 2)
                .into_iter()
                .chain([rec(Replace, e2, a, 3), rec(Remove, e2, a, 3)])
                .collect()
        )
    );
    let _ = e3;
    fx.world.clear();
    assert!(fx.take().is_empty());

    let e1 = fx.world.spawn((A(4), B(5), Plain(0)));
    let e2 = fx.world.spawn(());
    fx.world.insert_bytes(e2, r, &bytes(6)).unwrap();
    fx.world.spawn((Plain(7),));
    fx.take();
    let Fx { world, log, .. } = fx;
    drop(world);
    let mut calls = std::mem::take(&mut *log.lock().unwrap());
    calls.sort();
    let want = sorted(vec![
        rec(Replace, e1, a, 4),
        rec(Remove, e1, a, 4),
        rec(Replace, e1, b, 5),
        rec(Remove, e1, b, 5),
        rec(Replace, e2, r, 6),
        rec(Remove, e2, r, 6),
    ]);
    assert_eq!(calls, want);
}

#[test]
fn dropping_a_world_without_hooks_on_its_entities_fires_nothing() {
    let fx = fx();
    let Fx { mut world, log, .. } = fx;
    world.spawn((Plain(1),));
    drop(world);
    assert!(log.lock().unwrap().is_empty());
}

#[test]
fn command_buffers_fire_each_hook_once_per_applied_command() {
    let mut fx = fx();
    let (a, b) = (fx.a, fx.b);
    let mut cmd = CommandBuffer::new();
    let e = cmd.spawn(&fx.world, (A(1),));
    cmd.insert_one(e, B(2));
    cmd.insert(e, (A(3),));
    cmd.remove_one::<B>(e);
    cmd.remove::<(A,)>(e);
    cmd.insert_one(e, A(4));
    cmd.despawn(e);
    cmd.despawn(e); // fails: nothing fires
    cmd.insert_one(e, B(5)); // fails too
    assert!(fx.take().is_empty(), "recording fires nothing");
    let report = fx.world.apply(&mut cmd);
    assert_eq!(report.applied, 7);
    assert_eq!(
        report.failed,
        vec![
            CommandFailure {
                index: 7,
                error: EntityError::NoSuchEntity(e)
            },
            CommandFailure {
                index: 8,
                error: EntityError::NoSuchEntity(e)
            },
        ]
    );
    assert_eq!(
        fx.take(),
        vec![
            rec(Add, e, a, 1),
            rec(Insert, e, a, 1),
            rec(Add, e, b, 2),
            rec(Insert, e, b, 2),
            rec(Replace, e, a, 1),
            rec(Insert, e, a, 3),
            rec(Replace, e, b, 2),
            rec(Remove, e, b, 2),
            rec(Replace, e, a, 3),
            rec(Remove, e, a, 3),
            rec(Add, e, a, 4),
            rec(Insert, e, a, 4),
            rec(Replace, e, a, 4),
            rec(Remove, e, a, 4),
        ]
    );
    // A refused spawn fires nothing.
    let bad = cmd.spawn(&fx.world, (A(1), A(2)));
    let report = fx.world.apply(&mut cmd);
    assert_eq!(report.failed.len(), 1);
    assert!(!fx.world.alive(bad));
    assert!(fx.take().is_empty());

    // Several buffers.
    let mut first = CommandBuffer::new();
    let mut second = CommandBuffer::new();
    let x = first.spawn(&fx.world, (A(6),));
    second.despawn(x);
    let y = second.spawn(&fx.world, (B(7),));
    fx.world.apply_all([&mut first, &mut second]);
    assert_eq!(
        fx.take(),
        vec![
            rec(Add, x, a, 6),
            rec(Insert, x, a, 6),
            rec(Replace, x, a, 6),
            rec(Remove, x, a, 6),
            rec(Add, y, b, 7),
            rec(Insert, y, b, 7),
        ]
    );
    assert_eq!(fx.world.entities().reserved_count(), 0);
    fx.world.check_invariants();
}

#[test]
fn hook_commands_chain_breadth_first_in_recorded_order() {
    // A's on_add inserts B (A's value times 10); B's on_add spawns an entity
    // with C (B's value plus 1) linked back; C's on_add logs.
    fn world_with_chain(order: &Arc<Mutex<Vec<(&'static str, Entity)>>>) -> World {
        let mut world = World::new();
        let o = order.clone();
        world.set_hooks::<A>(ComponentHooks::new().on_add(move |ctx| {
            o.lock().unwrap().push(("A", ctx.entity));
            let v = ctx.world.get::<A>(ctx.entity).unwrap().0;
            ctx.commands.insert_one(ctx.entity, B(v * 10));
        }));
        let o = order.clone();
        world.set_hooks::<B>(ComponentHooks::new().on_add(move |ctx| {
            o.lock().unwrap().push(("B", ctx.entity));
            let v = ctx.world.get::<B>(ctx.entity).unwrap().0;
            let c = ctx.spawn((C(v + 1), Link(ctx.entity)));
            assert!(!ctx.world.contains_entity(c), "spawned after the operation");
        }));
        let o = order.clone();
        world.set_hooks::<C>(ComponentHooks::new().on_add(move |ctx| {
            o.lock().unwrap().push(("C", ctx.entity));
        }));
        world
    }
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut world = world_with_chain(&order);
    let e = world.spawn((A(1),));
    // The whole chain applied before `spawn` returned.
    assert_eq!(world.get::<B>(e), Ok(&B(10)));
    let cs: Vec<(Entity, C, Link)> = world
        .query::<(Entity, &C, &Link)>()
        .iter()
        .map(|(e, c, l)| (e, *c, *l))
        .collect();
    assert_eq!(cs.len(), 1);
    assert_eq!((cs[0].1, cs[0].2), (C(11), Link(e)));
    assert_eq!(world.len(), 2);
    assert_eq!(
        std::mem::take(&mut *order.lock().unwrap()),
        vec![("A", e), ("B", e), ("C", cs[0].0)]
    );

    // A batch: every A hook first, then every B hook (round one), then every
    // C hook (round two), each round in recorded order.
    let es = world.spawn_batch((1..=3).map(|i| (A(i),)));
    let log = std::mem::take(&mut *order.lock().unwrap());
    let kinds: Vec<&str> = log.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, ["A", "A", "A", "B", "B", "B", "C", "C", "C"]);
    let by_kind = |k: &str| -> Vec<Entity> {
        log.iter()
            .filter(|(x, _)| *x == k)
            .map(|(_, e)| *e)
            .collect()
    };
    assert_eq!(by_kind("A"), es);
    assert_eq!(by_kind("B"), es);
    let cs = by_kind("C");
    assert!(cs.windows(2).all(|w| w[0] < w[1]), "spawned in hook order");
    for (k, (&c, &parent)) in cs.iter().zip(&es).enumerate() {
        assert_eq!(world.get::<C>(c), Ok(&C((k as u32 + 1) * 10 + 1)));
        assert_eq!(world.get::<Link>(c), Ok(&Link(parent)));
        assert_eq!(world.get::<B>(parent), Ok(&B((k as u32 + 1) * 10)));
    }
    assert_eq!(world.entities().reserved_count(), 0);
    world.check_invariants();

    // The same operations on a fresh world give the same ids.
    let again = Arc::new(Mutex::new(Vec::new()));
    let mut other = world_with_chain(&again);
    other.spawn((A(1),));
    let es2 = other.spawn_batch((1..=3).map(|i| (A(i),)));
    assert_eq!(es2, es);
    type Row = (Entity, Option<u32>, Option<u32>, Option<u32>);
    let ids = |w: &World| -> Vec<Row> {
        w.query::<(Entity, Option<&A>, Option<&B>, Option<&C>)>()
            .iter()
            .map(|(e, a, b, c)| (e, a.map(|v| v.0), b.map(|v| v.0), c.map(|v| v.0)))
            .collect()
    };
    assert_eq!(ids(&other), ids(&world));
}

#[test]
fn hook_commands_from_a_command_buffer_apply_right_after_the_command() {
    // A's on_add despawns its entity. The command after the spawn in the
    // same buffer therefore finds it dead, whether A arrived by insert or by
    // spawn.
    let log = Log::default();
    let mut world = World::new();
    world.set_hooks::<A>(ComponentHooks::new().on_add(|ctx| ctx.commands.despawn(ctx.entity)));
    world.set_hooks::<B>(recorder(&log, read_b));

    let x = world.spawn((Plain(0),));
    let mut cmd = CommandBuffer::new();
    cmd.insert_one(x, A(1));
    cmd.insert_one(x, B(1));
    let report = world.apply(&mut cmd);
    assert_eq!(report.applied, 1);
    assert_eq!(report.failed[0].error, EntityError::NoSuchEntity(x));

    let y = cmd.spawn(&world, (A(2),));
    cmd.insert_one(y, B(2));
    let report = world.apply(&mut cmd);
    assert!(!world.alive(y));
    assert_eq!(report.applied, 1, "{report:?}");
    assert_eq!(report.failed[0].error, EntityError::NoSuchEntity(y));
    assert!(log.lock().unwrap().is_empty(), "B never arrived");
    assert!(world.is_empty());

    // A buffer of several spawns applied with apply_all: each one's hook
    // commands are applied before apply_all returns.
    let mut first = CommandBuffer::new();
    let z = first.spawn(&world, (A(3),));
    world.apply_all([&mut first]);
    assert!(!world.alive(z), "the hook's despawn was applied");
    assert!(world.is_empty());
    world.check_invariants();
}

#[test]
fn failed_hook_commands_are_reported_by_take_hook_failures() {
    let mut world = World::new();
    // On removal, A asks for B to be inserted on its entity: fails when the
    // entity is being despawned, works when only A is removed.
    world.set_hooks::<A>(
        ComponentHooks::new().on_remove(|ctx| ctx.commands.insert_one(ctx.entity, B(1))),
    );
    let e = world.spawn((A(1),));
    world.remove_one::<A>(e).unwrap();
    assert_eq!(world.get::<B>(e), Ok(&B(1)));
    assert!(world.take_hook_failures().is_empty());

    world.insert_one(e, A(2)).unwrap();
    let f = world.spawn((A(3),));
    world.despawn_batch(&[e, f]);
    assert_eq!(
        world.take_hook_failures(),
        vec![
            CommandFailure {
                index: 0,
                error: EntityError::NoSuchEntity(e)
            },
            CommandFailure {
                index: 1,
                error: EntityError::NoSuchEntity(f)
            },
        ]
    );
    assert!(
        world.take_hook_failures().is_empty(),
        "taking empties the list"
    );
    assert!(world.is_empty());
    world.check_invariants();
}

#[test]
fn endless_hook_commands_stop_after_max_rounds_and_resume_later() {
    // Every A spawns another A: one round each.
    let mut world = World::new();
    world.set_hooks::<A>(ComponentHooks::new().on_add(|ctx| {
        let v = ctx.world.get::<A>(ctx.entity).unwrap().0;
        ctx.spawn((A(v + 1),));
    }));
    if cfg!(miri) {
        // MAX_HOOK_ROUNDS spawns is too slow under Miri.
        return;
    }
    world.spawn((A(0),));
    assert_eq!(world.len(), 1 + MAX_HOOK_ROUNDS);
    world.flush_hooks();
    assert_eq!(world.len(), 1 + 2 * MAX_HOOK_ROUNDS);
    world.check_invariants();
    if cfg!(feature = "sanitize") {
        // Dropping it clears it up to MAX_HOOK_ROUNDS times, each clear
        // followed by MAX_HOOK_ROUNDS spawns on fresh ids: a million
        // slots, each of the thousand checks walking them all (a minute).
        world.set_hooks::<A>(ComponentHooks::new());
    }
    // Dropping the world with a spawn still queued is fine.
    drop(world);
}

/// Hooks that panic while `armed` is set, one per kind, counting calls.
struct Panicky {
    armed: [Arc<AtomicBool>; 4],
    calls: Arc<AtomicUsize>,
}

fn panicky(world: &mut World) -> Panicky {
    let armed: [Arc<AtomicBool>; 4] = Default::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let hook = |k: usize| {
        let armed = armed[k].clone();
        let calls = calls.clone();
        move |ctx: &mut HookContext<'_>| {
            calls.fetch_add(1, Ordering::SeqCst);
            // Record a command first: it must survive the panic.
            ctx.commands.insert_one(ctx.entity, Plain(k as u32));
            if armed.load(Ordering::SeqCst) {
                panic!("hook {k} failed");
            }
        }
    };
    world.set_hooks::<A>(
        ComponentHooks::new()
            .on_add(hook(0))
            .on_insert(hook(1))
            .on_replace(hook(2))
            .on_remove(hook(3)),
    );
    Panicky { armed, calls }
}

impl Panicky {
    fn arm(&self, k: usize, on: bool) {
        self.armed[k].store(on, Ordering::SeqCst);
    }
}

#[test]
fn a_panicking_add_or_insert_hook_leaves_the_operation_complete() {
    let mut world = World::new();
    let p = panicky(&mut world);
    p.arm(1, true);
    let w = &mut world;
    let err = catch_unwind(AssertUnwindSafe(|| w.spawn((A(1), B(1))))).unwrap_err();
    assert_eq!(err.downcast_ref::<String>().unwrap(), "hook 1 failed");
    world.check_invariants();
    assert_eq!(world.len(), 1, "the spawn was complete before on_insert");
    let e = world.iter_entities().next().unwrap();
    assert_eq!(world.get::<A>(e), Ok(&A(1)));
    assert_eq!(world.get::<B>(e), Ok(&B(1)));
    assert_eq!(p.calls.load(Ordering::SeqCst), 2);
    // The commands recorded before the panic stay queued for the next flush.
    assert!(!world.contains::<Plain>(e));
    world.flush_hooks();
    assert_eq!(world.get::<Plain>(e), Ok(&Plain(1)), "add's then insert's");
    assert!(world.take_hook_failures().is_empty());

    // on_add panics in a template's spawn: its row is there.
    p.arm(1, false);
    p.arm(0, true);
    let mut template = EntityTemplate::new();
    template.add(A(2));
    let w = &mut world;
    assert!(catch_unwind(AssertUnwindSafe(|| w.spawn(&template))).is_err());
    world.check_invariants();
    assert_eq!(world.query::<&A>().iter().filter(|a| a.0 == 2).count(), 1);

    // on_add panics in a typed batch: the rows placed so far stay.
    let w = &mut world;
    assert!(catch_unwind(AssertUnwindSafe(|| w.spawn_batch((0..3).map(|_| (A(3),))))).is_err());
    world.check_invariants();
    assert_eq!(world.query::<&A>().iter().filter(|a| a.0 == 3).count(), 1);

    // on_insert panics on a replacing insert: the new value is in.
    p.arm(0, false);
    p.arm(1, true);
    let w = &mut world;
    assert!(catch_unwind(AssertUnwindSafe(|| w.insert_one(e, A(4)))).is_err());
    assert_eq!(world.get::<A>(e), Ok(&A(4)));
    world.check_invariants();

    // Disarmed, everything works again, and the world drops cleanly.
    p.arm(1, false);
    let f = world.spawn((A(5),));
    world.insert_one(f, A(6)).unwrap();
    world.take_hook_failures();
    world.despawn(f).unwrap();
    // on_replace and on_remove each asked for Plain on the dead entity.
    let failures = world.take_hook_failures();
    assert_eq!(failures.len(), 2);
    assert!(failures
        .iter()
        .all(|f2| f2.error == EntityError::NoSuchEntity(f)));
    world.check_invariants();
}

#[test]
fn a_panicking_replace_or_remove_hook_leaves_the_world_unchanged() {
    let mut world = World::new();
    let p = panicky(&mut world);
    let e = world.spawn((A(1), B(1)));
    let f = world.spawn((A(2),));
    let g = world.spawn((A(3),));
    world.flush_hooks();
    world.take_hook_failures();
    let calls = p.calls.load(Ordering::SeqCst);

    // on_replace panics: insert, remove, despawn and take change nothing.
    p.arm(2, true);
    let w = &mut world;
    assert!(catch_unwind(AssertUnwindSafe(|| w.insert_one(e, A(9)))).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| w.remove_one::<A>(e))).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| w.exchange::<(A,), (C,)>(e, (C(0),)))).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| w.despawn(e))).is_err());
    assert!(catch_unwind(AssertUnwindSafe(|| w.take::<(A,)>(e))).is_err());
    world.check_invariants();
    assert_eq!(world.get::<A>(e), Ok(&A(1)));
    assert_eq!(world.get::<B>(e), Ok(&B(1)));
    assert!(!world.contains::<C>(e));
    assert_eq!(p.calls.load(Ordering::SeqCst), calls + 5);
    p.arm(2, false);

    // on_remove panics in a batch: the entities before the panicking one
    // are gone, the panicking one and those after it are untouched.
    p.arm(3, true);
    let plain = world.spawn((Plain(7),));
    let w = &mut world;
    assert!(catch_unwind(AssertUnwindSafe(|| w.despawn_batch(&[plain, f, g]))).is_err());
    world.check_invariants();
    assert!(!world.alive(plain));
    assert_eq!(world.get::<A>(f), Ok(&A(2)));
    assert_eq!(world.get::<A>(g), Ok(&A(3)));
    let w = &mut world;
    assert!(catch_unwind(AssertUnwindSafe(|| w.clear())).is_err());
    world.check_invariants();
    p.arm(3, false);

    // Disarmed: the queued commands and later operations apply.
    world.flush_hooks();
    world.take_hook_failures();
    world.despawn(f).unwrap();
    assert_eq!(world.remove_one::<A>(g), Ok(A(3)));
    world.clear();
    assert!(world.is_empty());
    world.check_invariants();
}

#[test]
fn a_panicking_hook_inside_a_flush_round_keeps_flushing_usable() {
    let mut world = World::new();
    let armed = Arc::new(AtomicBool::new(true));
    world.set_hooks::<A>(
        ComponentHooks::new().on_add(|ctx| ctx.commands.insert_one(ctx.entity, B(1))),
    );
    let a = armed.clone();
    world.set_hooks::<B>(ComponentHooks::new().on_add(move |ctx| {
        ctx.commands.insert_one(ctx.entity, Plain(1));
        if a.load(Ordering::SeqCst) {
            panic!("B failed");
        }
    }));
    let w = &mut world;
    assert!(catch_unwind(AssertUnwindSafe(|| w.spawn((A(1),)))).is_err());
    world.check_invariants();
    let e = world.iter_entities().next().unwrap();
    assert_eq!(world.get::<B>(e), Ok(&B(1)), "B was in before its hook ran");
    armed.store(false, Ordering::SeqCst);
    // Flushing is not stuck: the next operation applies what is queued.
    let f = world.spawn((A(2),));
    assert_eq!(world.get::<B>(f), Ok(&B(1)));
    assert_eq!(world.get::<Plain>(f), Ok(&Plain(1)));
    assert_eq!(world.get::<Plain>(e), Ok(&Plain(1)));
    world.check_invariants();
}

#[test]
fn a_panicking_hook_during_command_apply_keeps_the_world_and_ids_sound() {
    let mut world = World::new();
    let p = panicky(&mut world);
    p.arm(0, true);
    let mut cmd = CommandBuffer::new();
    let x = cmd.spawn(&world, (A(1),));
    let y = cmd.spawn(&world, (B(2),));
    let w = &mut world;
    assert!(catch_unwind(AssertUnwindSafe(|| w.apply(&mut cmd))).is_err());
    world.check_invariants();
    assert!(world.alive(x), "the spawn was complete before on_add");
    assert!(!world.alive(y), "the rest of the buffer was dropped");
    assert_eq!(world.entities().reserved_count(), 0);
    assert!(cmd.is_empty());
    p.arm(0, false);
    let z = world.spawn((A(3),));
    assert!(world.alive(z));
    world.check_invariants();
}

/// A tiny deterministic generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

/// Where one (entity, component) is in its hook life cycle.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Life {
    Absent,
    Adding(Option<u32>),
    Present(Option<u32>),
    Replacing(Option<u32>),
}

/// Checks that the calls form, for every entity and component, a sequence
/// of add, insert, (replace, insert)*, replace, remove, and that values
/// match: replace and remove see the value the last insert wrote. Returns
/// how many pairs are still present.
fn check_life_cycles(calls: &[Rec]) -> usize {
    use std::collections::HashMap;
    let mut state: HashMap<(Entity, ComponentId), Life> = HashMap::new();
    for (i, c) in calls.iter().enumerate() {
        let s = state.entry((c.entity, c.component)).or_insert(Life::Absent);
        *s = match (*s, c.kind) {
            (Life::Absent, Add) => Life::Adding(c.value),
            (Life::Adding(v), Insert) if v == c.value => Life::Present(v),
            (Life::Replacing(_), Insert) => Life::Present(c.value),
            (Life::Present(v), Replace) if v == c.value => Life::Replacing(v),
            (Life::Replacing(v), Remove) if v == c.value => Life::Absent,
            (s, k) => panic!("call {i} {c:?}: {k:?} after {s:?}"),
        };
    }
    state.values().filter(|s| **s != Life::Absent).count()
}

#[test]
fn random_operations_pair_every_add_with_one_remove_by_the_time_the_world_drops() {
    let steps = if cfg!(miri) { 60 } else { 3000 };
    let log = Log::default();
    let mut world = World::new();
    // A with all hooks, plus: a new A divisible by 5 gets B through a hook.
    let l = log.clone();
    world.set_hooks::<A>(recorder(&log, read_a).on_add(move |ctx| {
        recording(&l, Add, read_a)(ctx);
        let v = ctx.world.get::<A>(ctx.entity).unwrap().0;
        if v % 5 == 0 {
            ctx.commands.insert_one(ctx.entity, B(v));
        }
    }));
    // B, plus: a removed B whose value is divisible by 3 spawns an A.
    let l = log.clone();
    world.set_hooks::<B>(recorder(&log, read_b).on_remove(move |ctx| {
        recording(&l, Remove, read_b)(ctx);
        let v = ctx.world.get::<B>(ctx.entity).unwrap().0;
        if v % 3 == 0 {
            ctx.spawn((A(v + 1),));
        }
    }));
    let r = world
        .register_component(ComponentDescriptor::dynamic("R", Layout::new::<u32>()))
        .unwrap();
    world
        .set_hooks_by_id(r, recorder(&log, read_bytes))
        .unwrap();

    let mut rng = Rng(7);
    let mut cmd = CommandBuffer::new();
    for step in 0..steps {
        let live: Vec<Entity> = world.iter_entities().collect();
        let pick = |rng: &mut Rng| -> Option<Entity> {
            (!live.is_empty()).then(|| live[rng.below(live.len() as u32) as usize])
        };
        let v = rng.below(1000);
        match rng.below(16) {
            0 => {
                world.spawn((A(v),));
            }
            1 => {
                world.spawn((A(v), B(v + 1), Plain(v)));
            }
            2 => {
                world.spawn_batch((0..3).map(|i| (B(v + i),)));
            }
            3 => {
                let data: Vec<u8> = (0..2u32).flat_map(|i| (v + i).to_le_bytes()).collect();
                doecs::raw::spawn_columns_bytes(&mut world, &[r], 2, &[&data]).unwrap();
            }
            4 | 5 => {
                if let Some(e) = pick(&mut rng) {
                    world.insert_one(e, A(v)).unwrap();
                }
            }
            6 => {
                if let Some(e) = pick(&mut rng) {
                    world.insert(e, (B(v), Plain(v))).unwrap();
                }
            }
            7 => {
                if let Some(e) = pick(&mut rng) {
                    world.insert_bytes(e, r, &v.to_le_bytes()).unwrap();
                }
            }
            8 => {
                if let Some(e) = pick(&mut rng) {
                    let _ = world.remove_one::<A>(e);
                    let _ = world.remove_by_id(e, r);
                }
            }
            9 => {
                if let Some(e) = pick(&mut rng) {
                    let _ = world.remove::<(A, B)>(e);
                }
            }
            10 => {
                if let Some(e) = pick(&mut rng) {
                    let _ = world.exchange::<(B,), (A,)>(e, (A(v),));
                }
            }
            11 => {
                if let Some(e) = pick(&mut rng) {
                    world.despawn(e).unwrap();
                }
            }
            12 => {
                if let Some(e) = pick(&mut rng) {
                    let _ = world.take::<(A,)>(e);
                }
            }
            13 => {
                if let Some(e) = pick(&mut rng) {
                    cmd.insert_one(e, B(v));
                    cmd.remove_one::<A>(e);
                    cmd.despawn(e);
                }
                let n = cmd.spawn(&world, (A(v), B(v)));
                cmd.insert_one(n, A(v + 1));
                world.apply(&mut cmd);
            }
            14 => {
                let es: Vec<Entity> = (0..3).filter_map(|_| pick(&mut rng)).collect();
                world.despawn_batch(&es);
            }
            _ => {
                if step % 97 == 0 {
                    world.clear();
                }
            }
        }
        // Hook commands may target entities that died meanwhile.
        world.take_hook_failures();
    }
    world.check_invariants();
    let present = check_life_cycles(&log.lock().unwrap());
    let components: usize = world
        .iter_entities()
        .map(|e| {
            world.contains::<A>(e) as usize
                + world.contains::<B>(e) as usize
                + world.has_id(e, r) as usize
        })
        .sum();
    assert_eq!(
        present, components,
        "one open life cycle per hooked component held"
    );
    drop(world);
    assert_eq!(check_life_cycles(&log.lock().unwrap()), 0);
}
