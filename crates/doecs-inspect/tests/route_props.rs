//! Property test of the whole API surface: any method and any target built
//! from the API's own words, ids and junk, answered on a small world, gives
//! a 200 or a 4xx error, never a panic or a 5xx.

use doecs::World;
use doecs_inspect::{answer_directly, Method};
use doecs_registry::ComponentRegistry;
use proptest::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
struct Health(i32);

/// Every entity, with its components' names and its health.
fn contents(world: &World) -> Vec<(doecs::Entity, Vec<String>, Option<i32>)> {
    let mut all: Vec<_> = doecs::raw::archetypes(world)
        .iter()
        .flat_map(|a| a.entities().to_vec())
        .map(|e| {
            let names = world
                .entity(e)
                .map(|r| r.components().map(|c| c.name().to_owned()).collect())
                .unwrap_or_default();
            (e, names, world.get::<Health>(e).ok().map(|h| h.0))
        })
        .collect();
    all.sort_by_key(|c| c.0);
    all
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("api".to_owned()),
        Just("entity".to_owned()),
        Just("world".to_owned()),
        Just("archetypes".to_owned()),
        Just("components".to_owned()),
        Just("query".to_owned()),
        Just("roots".to_owned()),
        Just("systems".to_owned()),
        Just("history".to_owned()),
        Just("prefabs".to_owned()),
        Just("lookup".to_owned()),
        Just("controls".to_owned()),
        Just("pause".to_owned()),
        Just("step".to_owned()),
        Just("health".to_owned()),
        Just("0v0".to_owned()),
        Just("3v0".to_owned()),
        Just("0v9".to_owned()),
        Just("4294967296".to_owned()),
        "[0-9]{1,21}",
        "[a-z%0-9.]{0,8}",
    ]
}

/// Paths of the API's edits, with ids and names good and bad.
fn edit_path() -> impl Strategy<Value = Vec<String>> {
    let id = prop_oneof![
        Just("0v0".to_owned()),
        Just("4v0".to_owned()),
        Just("9v0".to_owned()),
        Just("0v3".to_owned()),
        "[a-z0-9]{1,4}",
    ];
    let name = prop_oneof![
        Just("health".to_owned()),
        Just("Name".to_owned()),
        Just("Prefab".to_owned()),
        Just("nope".to_owned()),
    ];
    (id, name, 0..3usize).prop_map(|(id, name, shape)| {
        let mut path = vec!["api".to_owned(), "entity".to_owned()];
        if shape > 0 {
            path.push(id);
        }
        if shape > 1 {
            path.extend(["components".to_owned(), name]);
        }
        path
    })
}

fn query() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("with"),
        Just("without"),
        Just("offset"),
        Just("limit"),
        Just("values"),
        Just("last"),
        Just("since"),
        Just("frames"),
        Just("empty"),
        Just("x"),
    ];
    let value = prop_oneof![
        Just("health".to_owned()),
        Just("true".to_owned()),
        "[0-9]{0,22}",
        "[a-z,%+-]{0,8}",
    ];
    proptest::collection::vec((key, value), 0..4).prop_map(|pairs| {
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    })
}

fn method() -> impl Strategy<Value = Method> {
    prop_oneof![
        Just(Method::Get),
        Just(Method::Post),
        Just(Method::Put),
        Just(Method::Delete),
        Just(Method::Other),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn every_answer_is_200_or_4xx(
        method in method(),
        words in prop_oneof![proptest::collection::vec(word(), 0..6), edit_path()],
        query in query(),
        body in prop_oneof![
            Just(String::new()),
            Just("7".to_owned()),
            Just(r#"{"health": 3}"#.to_owned()),
            Just(r#"{"health": "x", "nope": 1}"#.to_owned()),
            "[\\[\\]{}0-9a-z\",:]{0,12}",
        ],
        write in any::<bool>(),
    ) {
        let mut registry = ComponentRegistry::new();
        registry.register::<Health>("health");
        let mut world = World::new();
        registry.install(&mut world).unwrap();
        world.spawn_batch((0..5).map(|i| (Health(i),)));
        let target = format!("/{}?{}", words.join("/"), query);
        let before = contents(&world);
        match answer_directly(&mut world, &registry, write, method, &target, body.as_bytes()) {
            Ok(_) => {}
            Err(e) => {
                prop_assert!((400..500).contains(&e.status), "{target}: {e}");
                // A refused request, edit or not, changes nothing.
                prop_assert_eq!(contents(&world), before, "{} {}", method.as_str(), target);
            }
        }
        world.check_invariants();
    }
}
