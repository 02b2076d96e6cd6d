//! Names and paths: `Name`, `lookup` along `ChildOf` with typed errors
//! for missing, ambiguous and malformed paths, `path_of`, and names kept
//! through snapshots.

use doecs::prelude::*;
use doecs::{LookupError, Snapshot};

fn fleet() -> (World, [Entity; 5]) {
    let mut world = World::new();
    let frigate = world.spawn((Name::new("frigate"),));
    let turret = world.spawn((Name::new("turret"),));
    let barrel = world.spawn((Name::new(String::from("barrel")),));
    let other = world.spawn((Name::new("turret"),));
    let unnamed = world.spawn((7u32,));
    world.set_parent(turret, frigate).unwrap();
    world.set_parent(barrel, turret).unwrap();
    world.set_parent(other, frigate).unwrap();
    world.set_parent(unnamed, frigate).unwrap();
    (world, [frigate, turret, barrel, other, unnamed])
}

#[test]
fn paths_lead_along_the_hierarchy() {
    let (mut world, [frigate, turret, barrel, other, unnamed]) = fleet();
    assert_eq!(world.lookup("frigate"), Ok(frigate));
    assert_eq!(
        world.lookup("frigate/turret"),
        Err(LookupError::Ambiguous {
            path: "frigate/turret".into(),
            count: 2
        })
    );
    world.insert_one(other, Name::new("radar")).unwrap();
    assert_eq!(world.lookup("frigate/turret/barrel"), Ok(barrel));
    assert_eq!(world.lookup("frigate/radar"), Ok(other));
    assert_eq!(
        world.lookup("frigate/engine/x"),
        Err(LookupError::NotFound("frigate/engine".into()))
    );
    assert_eq!(
        world.lookup("turret"),
        Err(LookupError::NotFound("turret".into())),
        "not a root"
    );
    for bad in ["", "/frigate", "frigate//turret", "frigate/"] {
        assert!(
            matches!(world.lookup(bad), Err(LookupError::BadPath(_))),
            "{bad:?}"
        );
    }
    assert_eq!(
        world.path_of(barrel).as_deref(),
        Some("frigate/turret/barrel")
    );
    assert_eq!(world.path_of(unnamed), None);
    assert_eq!(world.name_of(turret), Some("turret"));
    // Disabled entities are still found by path.
    world.disable(turret).unwrap();
    assert_eq!(world.lookup("frigate/turret/barrel"), Ok(barrel));
    // A moved entity is found at its new path.
    world.set_parent(barrel, other).unwrap();
    assert_eq!(world.lookup("frigate/radar/barrel"), Ok(barrel));
    assert!(world.lookup("frigate/turret/barrel").is_err());
}

#[test]
fn names_survive_snapshots_and_are_queried_like_any_component() {
    let (mut world, [_, turret, ..]) = fleet();
    let mut snapshot = Snapshot::default();
    world.snapshot_by_copy::<u32>();
    world.snapshot_into(&mut snapshot).unwrap();
    *world.get_mut::<Name>(turret).unwrap() = Name::new("gun");
    assert_eq!(world.lookup("frigate/gun"), Ok(turret));
    world.restore(&snapshot).unwrap();
    assert_eq!(world.name_of(turret), Some("turret"));
    let mut names: Vec<String> = world
        .query::<&Name>()
        .iter()
        .map(|n| n.to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["barrel", "frigate", "turret", "turret"]);
}

#[test]
fn clone_from_keeps_an_owned_names_memory_when_it_fits() {
    let mut a = Name::new(String::from("ship12.part3.sub1"));
    let ptr = a.as_str().as_ptr();
    a.clone_from(&Name::new(String::from("ship7.part1")));
    assert_eq!(a.as_str(), "ship7.part1");
    assert_eq!(a.as_str().as_ptr(), ptr, "the same buffer, overwritten");
    // Borrowed names are copied as they are.
    a.clone_from(&Name::new("static"));
    assert_eq!(a.as_str(), "static");
    let b = a.clone();
    assert_eq!(b, a);
}
