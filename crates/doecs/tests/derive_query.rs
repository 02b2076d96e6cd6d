//! `#[derive(QueryData)]`: structs and enums that are both a query and its
//! item. The first tests port hecs's `#[derive(Query)]` tests (its
//! `query_one_mut::<Q>(e)` is doecs's `world.query_mut::<Q>().get_mut(e)`);
//! the rest cover doecs's loop forms, the read-only twin, change stamps,
//! aliasing and system parameters.

use doecs::prelude::*;
use doecs::{EntityError, ScheduleError};

// ---- ported from hecs ----

#[test]
fn derived_struct_query() {
    #[derive(QueryData, Debug, PartialEq)]
    struct Foo<'a> {
        x: &'a i32,
        y: &'a mut bool,
    }

    let mut world = World::new();
    let e = world.spawn((42, false));
    let mut q = world.query_mut::<Foo>();
    assert_eq!(
        q.get_mut(e).unwrap(),
        Foo {
            x: &42,
            y: &mut false
        }
    );
}

#[derive(QueryData, Debug, PartialEq)]
enum NumberOrBool<'a> {
    NumberAndString(&'a i32, &'a String),
    Number(&'a i32),
    Boolean(&'a mut bool),
}

#[test]
fn derived_enum_query_takes_the_first_matching_variant() {
    let mut world = World::new();
    let e1 = world.spawn((42, false));
    let e2 = world.spawn((String::from("Hello"), false));
    let e3 = world.spawn((String::from("Hello"), 42));
    let e4 = world.spawn((String::from("Hello"), 0_usize));
    let mut q = world.query_mut::<NumberOrBool>();
    assert_eq!(q.get_mut(e1).unwrap(), NumberOrBool::Number(&42));
    assert_eq!(q.get_mut(e2).unwrap(), NumberOrBool::Boolean(&mut false));
    assert_eq!(
        q.get_mut(e3).unwrap(),
        NumberOrBool::NumberAndString(&42, &String::from("Hello"))
    );
    assert!(matches!(
        q.get_mut(e4),
        Err(EntityError::MissingComponent { .. })
    ));
}

#[test]
fn derived_enum_query_with_an_empty_variant() {
    #[derive(QueryData, Debug, PartialEq)]
    enum Foo<'a> {
        Number(&'a i32),
        Empty,
        Impossible(&'a String),
    }

    let mut world = World::new();
    let e1 = world.spawn((42, false));
    let e2 = world.spawn((false, 0_usize));
    let e3 = world.spawn((String::from("Hello"), false));
    let mut q = world.query_mut::<Foo>();
    assert_eq!(q.get_mut(e1).unwrap(), Foo::Number(&42));
    assert_eq!(q.get_mut(e2).unwrap(), Foo::Empty);
    assert_eq!(
        q.get_mut(e3).unwrap(),
        Foo::Empty,
        "the unit variant comes first"
    );
    assert_eq!(
        q.iter_mut().count(),
        3,
        "the unit variant matches everything"
    );
}

#[test]
fn derived_bundle_and_derived_query_over_its_fields() {
    #[derive(Bundle)]
    struct Foo {
        x: i32,
        y: bool,
        z: String,
    }

    #[derive(PartialEq, Debug, QueryData)]
    struct FooQuery<'a> {
        x: &'a i32,
        y: &'a bool,
        z: &'a String,
    }

    let mut world = World::new();
    let e = world.spawn(Foo {
        x: 42,
        y: false,
        z: String::from("Foo"),
    });
    let mut q = world.query_mut::<FooQuery>();
    assert_eq!(
        q.get_mut(e).unwrap(),
        FooQuery {
            x: &42,
            y: &false,
            z: &String::from("Foo"),
        }
    );
}

#[test]
fn tuple_structs_and_nested_queries() {
    #[derive(QueryData, Debug, PartialEq)]
    struct Quux<'a>(&'a i32, Option<&'a mut bool>);

    #[derive(QueryData, Debug, PartialEq)]
    struct Outer<'a> {
        foo: &'a i32,
        bar: Inner<'a>,
    }

    #[derive(QueryData, Debug, PartialEq)]
    struct Inner<'a> {
        baz: &'a mut bool,
    }

    #[derive(QueryData, Debug, PartialEq)]
    enum Baz<'a> {
        Foo(Outer<'a>),
        Bar(Inner<'a>),
    }

    let mut world = World::new();
    let both = world.spawn((7, true));
    let only_bool = world.spawn((false,));
    let only_int = world.spawn((3,));

    let mut q = world.query_mut::<Quux>();
    assert_eq!(q.get_mut(both).unwrap(), Quux(&7, Some(&mut true)));
    assert_eq!(q.get_mut(only_int).unwrap(), Quux(&3, None));
    if let Ok(Quux(_, Some(b))) = q.get_mut(both) {
        *b = false;
    }

    let mut q = world.query_mut::<Outer>();
    q.for_each(|o| *o.bar.baz = !*o.bar.baz);
    assert_eq!(
        q.get_mut(both).unwrap(),
        Outer {
            foo: &7,
            bar: Inner { baz: &mut true }
        }
    );

    let mut q = world.query_mut::<Baz>();
    assert!(matches!(q.get_mut(both).unwrap(), Baz::Foo(_)));
    assert_eq!(
        q.get_mut(only_bool).unwrap(),
        Baz::Bar(Inner { baz: &mut false })
    );
    assert!(q.get_mut(only_int).is_err());
}

mod inner {
    use doecs::QueryData;

    /// A query visible outside its module, with its read-only twin.
    #[derive(QueryData)]
    pub struct Bar<'a> {
        /// The value.
        pub foo: &'a mut i32,
    }
}

type Bar<'a> = inner::Bar<'a>;

#[test]
fn an_exported_query_and_its_twin() {
    let mut world = World::new();
    world.spawn((5,));
    for bar in world.query_mut::<Bar>().iter_mut() {
        *bar.foo += 1;
    }
    let q = world.query_mut::<Bar>();
    let twins: Vec<inner::BarReadOnly> = q.iter().collect();
    assert_eq!(*twins[0].foo, 6);
}

// ---- doecs ----

#[derive(Clone, Copy, Debug, PartialEq)]
struct Hp(i32);
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Team(u8);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Armor(i32);
#[derive(Debug, PartialEq)]
struct Boss;

#[derive(QueryData)]
struct Unit<'a> {
    id: Entity,
    hp: &'a mut Hp,
    team: &'a Team,
    armor: Option<&'a Armor>,
}

/// A read-only derived query, whose twin derives comparisons too.
#[derive(QueryData, Debug, PartialEq)]
#[query_data(derive(Debug, PartialEq))]
struct Stats<'a> {
    hp: &'a Hp,
    armor: Option<&'a Armor>,
}

fn army() -> (World, Vec<Entity>) {
    let mut world = World::new();
    let es = vec![
        world.spawn((Hp(10), Team(1))),
        world.spawn((Hp(20), Team(2), Armor(5))),
        world.spawn((Hp(30), Team(1), Armor(1), Boss)),
        world.spawn((Team(3),)),
    ];
    (world, es)
}

fn hps(world: &World, es: &[Entity]) -> Vec<i32> {
    es[..3]
        .iter()
        .map(|&e| world.get::<Hp>(e).unwrap().0)
        .collect()
}

#[test]
fn mutable_fields_are_written_through_every_loop() {
    let (mut world, es) = army();
    let mut q = world.query_mut::<Unit>();
    for unit in q.iter_mut() {
        unit.hp.0 -= 1 + unit.armor.map_or(0, |a| a.0);
    }
    q.for_each(|unit| {
        if unit.team.0 == 1 {
            unit.hp.0 *= 2;
        }
    });
    let boss = q.get_mut(es[2]).unwrap();
    assert_eq!(boss.id, es[2]);
    boss.hp.0 += 1000;
    for unit in &mut q {
        assert_ne!(unit.team.0, 3, "no Hp, no match");
    }
    assert_eq!(hps(&world, &es), [18, 14, 1056]);
}

#[test]
fn read_only_iteration_hands_out_the_twin() {
    let (mut world, es) = army();
    let q = world.query_mut::<Unit>();
    // Any number of read-only items at once, through `&self`.
    let all: Vec<UnitReadOnly> = q.iter().collect();
    let more: Vec<UnitReadOnly> = (&q).into_iter().collect();
    assert_eq!(all.len(), 3);
    assert_eq!(more.len(), 3);
    let boss: UnitReadOnly = q.get(es[2]).unwrap();
    let hp: &Hp = boss.hp;
    assert_eq!(
        (boss.id, hp.0, boss.team.0, boss.armor),
        (es[2], 30, 1, Some(&Armor(1)))
    );
    assert_eq!(q.iter().len(), 3, "every field has every row: exact size");
    assert_eq!(q.count(), 3);
    assert!(q.contains(es[0]) && !q.contains(es[3]));
}

#[test]
fn a_read_only_derived_query_runs_on_a_shared_world() {
    let (world, es) = army();
    let shared: &World = &world;
    let q = shared.query::<Stats>();
    let mut seen: Vec<(i32, Option<i32>)> =
        q.iter().map(|s| (s.hp.0, s.armor.map(|a| a.0))).collect();
    seen.sort();
    assert_eq!(seen, [(10, None), (20, Some(5)), (30, Some(1))]);
    assert_eq!(
        q.get(es[1]).unwrap(),
        StatsReadOnly {
            hp: &Hp(20),
            armor: Some(&Armor(5))
        }
    );
    let filtered = shared.query_filtered::<Stats, With<Boss>>();
    assert_eq!(filtered.single().unwrap().hp, &Hp(30));
}

#[test]
fn chunks_are_the_fields_slices() {
    let (mut world, es) = army();
    let mut q = world.query_mut::<Unit>();
    let mut rows = 0;
    q.for_each_chunk(|(ids, hp, team, armor)| {
        assert_eq!(ids.len(), hp.len());
        assert_eq!(team.len(), hp.len());
        if let Some(armor) = armor {
            assert_eq!(armor.len(), hp.len());
        }
        for h in hp.iter_mut() {
            h.0 += 100;
        }
        rows += ids.len();
    });
    assert_eq!(rows, 3);
    q.par_for_each(|unit| unit.hp.0 += 1);
    assert_eq!(hps(&world, &es), [111, 121, 131]);
}

#[test]
fn writes_are_stamped_changed() {
    #[derive(QueryData)]
    struct Tracked<'a> {
        hp: Mut<'a, Hp>,
        team: Ref<'a, Team>,
    }
    fn damage_team_one(mut q: Query<Tracked>) {
        for mut unit in q.iter_mut() {
            assert!(!unit.team.is_changed() || unit.team.is_added());
            if unit.team.0 == 1 {
                unit.hp.0 -= 1;
            }
        }
    }
    fn hurt(q: Query<Entity, Changed<Hp>>, mut log: ResMut<Vec<usize>>) {
        log.push(q.iter().count());
    }
    let (mut world, _) = army();
    world.insert_resource(Vec::<usize>::new());
    let mut schedule = Schedule::new();
    schedule.add_system(damage_team_one.before(hurt)).unwrap();
    schedule.add_system(hurt).unwrap();
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    // First run: all three were added; then only the two of team 1 were
    // written (`Mut` stamps only what is written through).
    assert_eq!(*world.resource::<Vec<usize>>().unwrap(), [3, 2]);

    // `&mut` fields stamp every row handed out.
    world.query_mut::<Unit>().for_each(|_| {});
    let changed = world
        .query_filtered_mut::<Entity, Changed<Hp>>()
        .iter()
        .count();
    assert_eq!(changed, 3);
}

#[test]
fn a_derived_query_aliasing_itself_is_refused() {
    #[derive(QueryData)]
    #[allow(dead_code)]
    struct Bad<'a> {
        hp: &'a mut Hp,
        again: &'a Hp,
    }
    let mut world = World::new();
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.query_mut::<Bad>().iter_mut().count();
    }));
    let message = *refused.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("both mutably and immutably"), "{message}");
    fn system(_q: Query<Bad>) {}
    assert!(matches!(
        Schedule::new().add_system(system),
        Err(ScheduleError::InvalidParam { .. })
    ));
}

#[test]
fn enum_variants_are_checked_on_their_own() {
    /// Bosses are healed, everyone else with a team is read.
    #[derive(QueryData, Debug, PartialEq)]
    enum Target<'a> {
        Boss(&'a mut Hp, &'a Boss),
        Other { hp: &'a Hp, team: &'a Team },
    }
    let (mut world, es) = army();
    let mut q = world.query_mut::<Target>();
    let mut others = 0;
    for target in q.iter_mut() {
        match target {
            Target::Boss(hp, _) => hp.0 += 5,
            Target::Other { hp, .. } => others += hp.0,
        }
    }
    assert_eq!(others, 30);
    assert!(matches!(
        q.get(es[2]).unwrap(),
        TargetReadOnly::Boss(&Hp(35), _)
    ));
    assert!(matches!(
        q.get(es[0]).unwrap(),
        TargetReadOnly::Other {
            hp: &Hp(10),
            team: &Team(1)
        }
    ));
    drop(q);
    // Beside data that conflicts with one variant: refused.
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.query_mut::<(Target, &Hp)>().iter_mut().count();
    }));
    assert!(refused.is_err());
    // Beside data that conflicts with none: fine.
    assert_eq!(
        world
            .query_mut::<(Target, Option<&Armor>)>()
            .iter_mut()
            .count(),
        3
    );
}

#[derive(QueryData)]
enum Health<'a> {
    Armored(&'a mut Hp, &'a Armor),
    Plain(&'a mut Hp),
}

fn armor_soaks(mut q: Query<Health, Without<Boss>>) {
    q.for_each(|h| match h {
        Health::Armored(hp, armor) => hp.0 -= 10 - armor.0,
        Health::Plain(hp) => hp.0 -= 10,
    });
}

fn total(q: Query<Stats>, mut out: ResMut<Vec<i32>>) {
    out.push(q.iter().map(|s| s.hp.0).sum());
}

fn heal_units(mut q: Query<Unit, With<Boss>>) {
    for unit in &mut q {
        unit.hp.0 += unit.armor.map_or(0, |a| a.0);
    }
}

#[test]
fn derived_queries_as_system_parameters() {
    let (mut world, es) = army();
    world.insert_resource(Vec::<i32>::new());
    let mut schedule = Schedule::with_threads(2);
    schedule
        .add_system(armor_soaks.before(total))
        .unwrap()
        .add_system(heal_units.before(total))
        .unwrap()
        .add_system(total)
        .unwrap();
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(hps(&world, &es), [-10, 10, 32]);
    // Totals after each run: (0, 15, 31) then (-10, 10, 32).
    assert_eq!(*world.resource::<Vec<i32>>().unwrap(), [46, 32]);

    fn conflicting(_a: Query<Unit>, _b: Query<&Hp>) {}
    assert!(matches!(
        Schedule::new().add_system(conflicting),
        Err(ScheduleError::ConflictingParams { .. })
    ));
    fn kept_apart(_a: Query<Unit, With<Boss>>, _b: Query<&mut Hp, Without<Boss>>) {}
    Schedule::new().add_system(kept_apart).unwrap();
    fn two_readers(_a: Query<Stats>, _b: Query<&Hp>) {}
    Schedule::new().add_system(two_readers).unwrap();
    // An enum requires only what every variant requires: `Hp` here,
    // not `Armor`, so it is not kept apart from a writer without `Armor`.
    fn enum_apart(_a: Query<Health>, _b: Query<&mut Hp, Without<Armor>>) {}
    assert!(matches!(
        Schedule::new().add_system(enum_apart),
        Err(ScheduleError::ConflictingParams { .. })
    ));
    fn enum_apart_hp(_a: Query<Health>, _b: Query<&mut Armor, Without<Hp>>) {}
    Schedule::new().add_system(enum_apart_hp).unwrap();
}

#[test]
fn a_query_of_many_fields() {
    #[derive(QueryData)]
    struct Wide<'a> {
        a: &'a u8,
        b: &'a u16,
        c: &'a u32,
        d: &'a u64,
        e: &'a i8,
        f: &'a i16,
        g: &'a i32,
        h: &'a i64,
        i: &'a f32,
        j: &'a f64,
        k: &'a mut bool,
        l: Option<&'a char>,
        m: Entity,
    }
    let mut world = World::new();
    let e = world.spawn((
        1u8, 2u16, 3u32, 4u64, 5i8, 6i16, 7i32, 8i64, 9f32, 10f64, false,
    ));
    let mut q = world.query_mut::<Wide>();
    for w in q.iter_mut() {
        let sum = *w.a as f64
            + *w.b as f64
            + *w.c as f64
            + *w.d as f64
            + *w.e as f64
            + *w.f as f64
            + *w.g as f64
            + *w.h as f64
            + *w.i as f64
            + *w.j;
        *w.k = sum == 55.0 && w.l.is_none() && w.m == e;
    }
    assert!(*q.get(e).unwrap().k);
    assert_eq!(q.iter().len(), 1);
}
