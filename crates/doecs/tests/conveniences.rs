//! Command, builder and bundle conveniences: `Commands::insert_resource`,
//! `remove_resource`, `spawn_batch` and `entity(e)` chains; builders and
//! templates taking bundles and handing their values back; and nested
//! bundles flattened with `#[bundle]`.

use doecs::prelude::*;
use doecs::{EntityBuilder, EntityTemplate};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(i32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(i32);
#[derive(Debug, Clone, PartialEq)]
struct Label(String);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Burning;
#[derive(Debug, Clone, Copy, PartialEq)]
struct Wet;

#[derive(Debug, PartialEq)]
struct Score(u32);

#[test]
fn commands_record_resources_batches_and_entity_chains() {
    let mut world = World::new();
    let target = world.spawn((Pos(0), Wet));
    let doomed = world.spawn((Pos(1),));
    world.insert_resource(Score(1));
    let mut schedule = Schedule::with_threads(1);
    schedule
        .add_system(move |mut commands: Commands| {
            commands.insert_resource(Score(5));
            commands.insert_resource(String::from("level 2"));
            commands.remove_resource::<String>();
            let spawned = commands.spawn_batch((0..3).map(|i| (Pos(10 + i), Vel(i))));
            commands.insert_one(spawned[0], Burning);
            commands
                .entity(target)
                .insert((Burning, Vel(7)))
                .remove_one::<Wet>()
                .insert_one(Label("hit".into()));
            commands.entity(doomed).despawn();
        })
        .unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Score>(), Some(&Score(5)));
    assert!(world.resource::<String>().is_none());
    assert!(!world.alive(doomed));
    assert_eq!(world.get::<Vel>(target), Ok(&Vel(7)));
    assert!(world.get::<Burning>(target).is_ok() && world.get::<Wet>(target).is_err());
    assert_eq!(world.get::<Label>(target), Ok(&Label("hit".into())));
    let mut batch: Vec<(i32, bool)> = world
        .query::<(&Pos, Option<&Burning>, &Vel)>()
        .iter()
        .filter(|(p, _, _)| p.0 >= 10)
        .map(|(p, b, _)| (p.0, b.is_some()))
        .collect();
    batch.sort_unstable();
    assert_eq!(batch, [(10, true), (11, false), (12, false)]);
}

#[test]
fn builders_take_bundles_and_hand_values_back() {
    let mut world = World::new();
    let mut builder = EntityBuilder::new();
    builder.add(Pos(1)).add_bundle((Vel(2), Label("a".into())));
    assert_eq!(builder.get::<Pos>(), Some(&Pos(1)));
    builder.get_mut::<Vel>().unwrap().0 = 3;
    assert!(builder.get::<Wet>().is_none());
    builder.add_bundle((Pos(9),)); // replaces
    assert_eq!(builder.len(), 3);
    let e = world.spawn(&mut builder);
    assert!(builder.is_empty());
    assert_eq!(world.get::<Pos>(e), Ok(&Pos(9)));
    assert_eq!(world.get::<Vel>(e), Ok(&Vel(3)));

    let mut template = EntityTemplate::new();
    template.add_bundle((Pos(1), Label("orc".into())));
    template.get_mut::<Label>().unwrap().0.push_str(" chief");
    let copy = template.clone();
    template.add(Vel(4));
    assert!(template.has::<Vel>() && !copy.has::<Vel>());
    let a = world.spawn(&template);
    let b = world.spawn(&copy);
    assert_eq!(world.get::<Label>(a), Ok(&Label("orc chief".into())));
    assert_eq!(world.get::<Label>(b), Ok(&Label("orc chief".into())));
    assert_eq!(world.get::<Vel>(a), Ok(&Vel(4)));
    assert!(world.get::<Vel>(b).is_err());
    assert_eq!(copy.get::<Pos>(), Some(&Pos(1)));
}

#[derive(Bundle, Debug, PartialEq)]
struct Body {
    pos: Pos,
    vel: Vel,
}

#[derive(Bundle, Debug, PartialEq)]
struct Ship {
    #[bundle]
    body: Body,
    label: Label,
}

#[derive(Bundle, Debug, PartialEq)]
struct Burner(Burning, #[bundle] Ship);

#[test]
fn nested_bundles_are_flattened() {
    let mut world = World::new();
    let ship = || Ship {
        body: Body {
            pos: Pos(1),
            vel: Vel(2),
        },
        label: Label("frigate".into()),
    };
    let e = world.spawn(ship());
    assert_eq!(world.get::<Pos>(e), Ok(&Pos(1)));
    assert_eq!(world.get::<Vel>(e), Ok(&Vel(2)));
    assert_eq!(world.get::<Label>(e), Ok(&Label("frigate".into())));
    assert!(world.get::<Body>(e).is_err(), "not stored as one component");
    // Two levels deep, spawned in a batch, removed whole.
    let es = world.spawn_batch((0..3).map(|_| Burner(Burning, ship())));
    assert_eq!(
        world
            .query::<(&Burning, &Pos, &Vel, &Label)>()
            .iter()
            .count(),
        3
    );
    let back = world.remove::<Burner>(es[1]).unwrap();
    assert_eq!(back, Burner(Burning, ship()));
    assert_eq!(world.entity(es[1]).unwrap().components().count(), 0);
    // Inserted onto an entity, and taken apart by a builder.
    let plain = world.spawn((Wet,));
    world.insert(plain, ship()).unwrap();
    assert_eq!(world.get::<Vel>(plain), Ok(&Vel(2)));
    let mut builder = EntityBuilder::new();
    builder.add_bundle(ship());
    assert_eq!(builder.len(), 3);
    assert_eq!(<Burner as Bundle>::FIELD_COUNT, 4);
}

#[test]
fn resource_scope_init_resource_and_what_clear_keeps() {
    let mut world = World::new();
    assert_eq!(world.resource_scope(|_, _: &mut Score| ()), None);
    *world.init_resource::<u64>() += 2;
    assert_eq!(*world.init_resource::<u64>(), 2, "kept, not reset");
    world.insert_resource(Score(1));
    let e = world.spawn((Pos(1),));
    let got = world.resource_scope(|world, score: &mut Score| {
        assert!(world.resource::<Score>().is_none(), "taken out meanwhile");
        score.0 += world.get::<Pos>(e).unwrap().0 as u32;
        world.despawn(e).unwrap();
        score.0
    });
    assert_eq!(got, Some(2));
    assert_eq!(world.resource::<Score>(), Some(&Score(2)));
    // `clear` despawns every entity and keeps the rest of the world.
    world.spawn_batch((0..4).map(|i| (Pos(i),)));
    world.clear();
    assert!(world.is_empty());
    assert_eq!(world.resource::<Score>(), Some(&Score(2)));
    world.clear_resources();
    assert!(world.resource::<Score>().is_none() && world.resources().is_empty());
}
