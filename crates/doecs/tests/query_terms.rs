//! Query terms beyond plain columns: `Has<T>`, `AnyOf<(..)>`, `Ref<T>`
//! (a read that sees its change stamps), `Mut<T>` (a write stamped only
//! when written through), and the exact length of queries that skip no
//! row.

use doecs::prelude::*;
use doecs::Changed;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Armor(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shield(u32);

#[test]
fn has_and_any_of() {
    let mut world = World::new();
    let a = world.spawn((Hp(1),));
    let b = world.spawn((Hp(2), Armor(5)));
    let c = world.spawn((Shield(3),));
    let d = world.spawn((Armor(1), Shield(1)));
    let mut has: Vec<(Entity, bool)> = world.query::<(Entity, Has<Armor>)>().iter().collect();
    has.sort();
    assert_eq!(has, [(a, false), (b, true), (c, false), (d, true)]);
    // Has reads nothing: beside a write of the same type it is no conflict.
    world
        .query_mut::<(&mut Armor, Has<Armor>)>()
        .for_each(|(armor, has)| {
            assert!(has);
            armor.0 += 1;
        });
    let mut any: Vec<(Entity, Option<u32>, Option<u32>)> = world
        .query::<(Entity, AnyOf<(&Armor, &Shield)>)>()
        .iter()
        .map(|(e, (armor, shield))| (e, armor.map(|x| x.0), shield.map(|x| x.0)))
        .collect();
    any.sort();
    assert_eq!(
        any,
        [
            (b, Some(6), None),
            (c, None, Some(3)),
            (d, Some(2), Some(1))
        ]
    );
    // Mutable terms inside AnyOf write.
    world
        .query_mut::<AnyOf<(&mut Armor, &mut Shield)>>()
        .for_each(|(armor, shield)| {
            if let Some(armor) = armor {
                armor.0 = 0;
            }
            if let Some(shield) = shield {
                shield.0 = 0;
            }
        });
    assert_eq!(world.get::<Shield>(d), Ok(&Shield(0)));
    assert_eq!(world.get::<Armor>(b), Ok(&Armor(0)));
}

/// What a reader system saw: the hp of each row `Changed<Hp>` passed.
#[derive(Default)]
struct Seen(Vec<u32>);

fn changed_reader(q: Query<&Hp, Changed<Hp>>, mut seen: ResMut<Seen>) {
    seen.0 = q.iter().map(|h| h.0).collect();
    seen.0.sort_unstable();
}

/// Whether the writers write (only in the second run).
struct Armed(bool);

/// Runs `writer` then the reader twice, the writer writing only the
/// second time, and returns what the reader saw then.
fn run_writer<M>(writer: impl IntoSystemDesc<M>) -> Vec<u32> {
    let writer = writer.into_desc().named("writer");
    let mut world = World::new();
    world.spawn_batch((0..200).map(|i| (Hp(i),)));
    world.insert_resource(Seen::default());
    world.insert_resource(Armed(false));
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(writer)
        .unwrap()
        .add_system(changed_reader.after("writer"))
        .unwrap();
    schedule.run(&mut world).unwrap(); // the first run sees every spawn
    world.resource_mut::<Armed>().unwrap().0 = true;
    schedule.run(&mut world).unwrap();
    world.resource::<Seen>().unwrap().0.clone()
}

#[test]
fn mut_stamps_only_the_rows_written_through_it() {
    // Writes 2 of 200 rows.
    let by_mut = run_writer(|mut q: Query<Mut<Hp>>, armed: Res<Armed>| {
        if !armed.0 {
            return;
        }
        for mut hp in q.iter_mut() {
            if hp.0 % 100 == 7 {
                hp.0 += 1000;
            }
        }
    });
    assert_eq!(by_mut, [1007, 1107]);
    // The same loop over `&mut Hp` marks every row it hands out.
    let by_ref = run_writer(|mut q: Query<&mut Hp>, armed: Res<Armed>| {
        if !armed.0 {
            return;
        }
        for hp in q.iter_mut() {
            if hp.0 % 100 == 7 {
                hp.0 += 1000;
            }
        }
    });
    assert_eq!(by_ref.len(), 200);
    // `for_each` and `par_for_each` with `Mut` stamp per write too; the
    // chunk form stamps whole runs (it hands out `&mut [Hp]`).
    let by_for_each = run_writer(|mut q: Query<Mut<Hp>>, armed: Res<Armed>| {
        if !armed.0 {
            return;
        }
        q.par_for_each(|mut hp| {
            if hp.0 == 3 {
                hp.0 = 3000;
            }
        })
    });
    assert_eq!(by_for_each, [3000]);
    let by_chunk = run_writer(|mut q: Query<Mut<Hp>>, armed: Res<Armed>| {
        if armed.0 {
            q.for_each_chunk(|_| {})
        }
    });
    assert_eq!(by_chunk.len(), 200);
    // Reading through `Mut` stamps nothing; set_changed stamps without a write.
    let reads = run_writer(|mut q: Query<Mut<Hp>>, armed: Res<Armed>| {
        if !armed.0 {
            return;
        }
        for mut hp in q.iter_mut() {
            if hp.0 == 9 {
                hp.set_changed();
            }
            let _ = hp.0 + 1;
        }
    });
    assert_eq!(reads, [9]);
}

#[test]
fn ref_tells_added_and_changed_in_the_readers_window() {
    let mut world = World::new();
    let old = world.spawn((Hp(1),));
    let touched = world.spawn((Hp(2),));
    #[derive(Default)]
    struct Flags(Vec<(u32, bool, bool)>);
    world.insert_resource(Flags::default());
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(|q: Query<Ref<Hp>>, mut flags: ResMut<Flags>| {
            flags.0 = q
                .iter()
                .map(|hp| (hp.0, hp.is_added(), hp.is_changed()))
                .collect();
            flags.0.sort_unstable_by_key(|f| f.0);
        })
        .unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(
        world.resource::<Flags>().unwrap().0,
        [(1, true, true), (2, true, true)]
    );
    world.get_mut::<Hp>(touched).unwrap().0 = 20;
    let fresh = world.spawn((Hp(3),));
    schedule.run(&mut world).unwrap();
    assert_eq!(
        world.resource::<Flags>().unwrap().0,
        [(1, false, false), (3, true, true), (20, false, true)]
    );
    // Outside a schedule, a query with `Ref` sees changes since its own
    // last use, like a change filter.
    world.get_mut::<Hp>(old).unwrap().0 = 10;
    let flags = |world: &mut World| -> Vec<(u32, bool)> {
        let mut v: Vec<(u32, bool)> = world
            .query_mut::<Ref<Hp>>()
            .iter()
            .map(|hp| (hp.0, hp.is_changed()))
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(
        flags(&mut world),
        [(3, true), (10, true), (20, true)],
        "first use"
    );
    world.get_mut::<Hp>(fresh).unwrap().0 = 30;
    assert_eq!(flags(&mut world), [(10, false), (20, false), (30, true)]);
}

#[test]
fn queries_that_skip_no_row_know_their_length() {
    let mut world = World::new();
    world.spawn_batch((0..10).map(|i| (Hp(i),)));
    world.spawn_batch((0..5).map(|i| (Hp(i), Armor(i))));
    world.spawn((Armor(1),));
    let q = world.query::<&Hp>();
    let mut it = q.iter();
    assert_eq!(it.len(), 15);
    it.next();
    it.nth(10);
    assert_eq!(it.len(), 3);
    assert_eq!(
        world
            .query_filtered::<(Entity, Has<Armor>), With<Hp>>()
            .iter()
            .len(),
        15
    );
    assert_eq!(world.query::<AnyOf<(&Hp, &Armor)>>().iter().len(), 16);
    // A change filter can skip rows: only an upper bound.
    let mut changed = world.query_filtered_mut::<&Hp, Changed<Hp>>();
    assert_eq!(changed.iter_mut().size_hint(), (0, Some(15)));
}
