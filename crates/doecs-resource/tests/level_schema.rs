//! The level schema's input rules: deep hierarchies (nested form limited
//! with a typed error, flat `"parent"` form unlimited), bad `parent`
//! indices, and duplicate keys anywhere in a level.

mod common;

use doecs::World;
use doecs_resource::{
    BlobView, CompileError, LevelDesc, ParentProblem, SpawnOptions, MAX_NESTED_DEPTH, NO_PARENT,
};
use doecs_transform::TransformManager;

/// A chain of `depth` entities, each nested in the previous one's
/// `children`, each with a transform one metre above its parent.
fn nested_chain(depth: usize) -> String {
    let entity = r#"{"components":{"transform":{"translation":[0,1,0]}},"children":["#;
    let mut s = String::from(r#"{"entities":["#);
    for _ in 0..depth {
        s.push_str(entity);
    }
    for _ in 0..depth {
        s.push_str("]}");
    }
    s.push_str("]}");
    s
}

/// The same chain in the flat form: entity `i` names `i - 1` as its parent.
fn flat_chain(depth: usize) -> String {
    let mut s = String::with_capacity(depth * 64);
    s.push_str(r#"{"entities":["#);
    for i in 0..depth {
        if i > 0 {
            s.push_str(&format!(r#",{{"parent":{},"#, i - 1));
        } else {
            s.push('{');
        }
        s.push_str(r#""components":{"transform":{"translation":[0,1,0]}}}"#);
    }
    s.push_str("]}");
    s
}

#[test]
fn nested_form_up_to_the_limit_compiles() {
    let (compiler, spawner) = common::registry();
    let blob = compiler
        .compile_str(&nested_chain(MAX_NESTED_DEPTH))
        .unwrap();
    let view = BlobView::parse(&blob).unwrap();
    assert_eq!(view.hierarchy_depth(), MAX_NESTED_DEPTH);
    let mut world = World::new();
    let out = spawner
        .spawn(&mut world, &blob, SpawnOptions::default())
        .unwrap();
    let tm = world.manager::<TransformManager>().unwrap();
    let last = tm.lookup(*out.entities.last().unwrap()).unwrap();
    assert_eq!(
        tm.world(last).unwrap().translation.y,
        MAX_NESTED_DEPTH as f32
    );
}

#[test]
fn nested_form_beyond_the_limit_is_a_typed_error() {
    let (compiler, _) = common::registry();
    // One level past the limit, and far past serde_json's recursion limit
    // (no stack overflow, no panic: refused at level MAX_NESTED_DEPTH + 1).
    for depth in [MAX_NESTED_DEPTH + 1, 100, 100_000] {
        let err = compiler.compile_str(&nested_chain(depth)).unwrap_err();
        match &err {
            CompileError::TooDeep { limit, line, .. } => {
                assert_eq!((*limit, *line), (MAX_NESTED_DEPTH, 1), "{err}");
            }
            other => panic!("depth {depth}: expected TooDeep, got {other}"),
        }
        let text = err.to_string();
        assert!(
            text.contains(&format!(
                "level nests children deeper than the limit of {MAX_NESTED_DEPTH} entity levels"
            )) && text.contains("use the flat form with \"parent\""),
            "{text}"
        );
        // The serde path (serde_json::from_str) refuses it the same way.
        let serde_err = serde_json::from_str::<LevelDesc>(&nested_chain(depth)).unwrap_err();
        assert!(
            serde_err.to_string().contains("deeper than the limit of"),
            "{serde_err}"
        );
    }
}

#[test]
fn flat_form_chain_compiles_and_spawns_at_any_depth() {
    // A million levels in release. A debug build takes about 9 s and 290 MB
    // for a million, so it checks 100,000 (about 1 s).
    let depth = if cfg!(debug_assertions) {
        100_000
    } else {
        1_000_000
    };
    let (compiler, spawner) = common::registry();
    let json = flat_chain(depth);
    let blob = compiler.compile_str(&json).unwrap();
    drop(json);
    let view = BlobView::parse(&blob).unwrap();
    assert_eq!(view.num_entities(), depth);
    assert_eq!(view.hierarchy_depth(), depth);
    assert_eq!(view.parent_of(0), None);
    assert_eq!(view.parent_of(depth - 1), Some(depth as u32 - 2));
    let mut world = World::new();
    let out = spawner
        .spawn(&mut world, &blob, SpawnOptions { strict: true })
        .unwrap();
    assert_eq!(out.entities.len(), depth);
    let tm = world.manager::<TransformManager>().unwrap();
    let last = tm.lookup(out.entities[depth - 1]).unwrap();
    assert_eq!(tm.world(last).unwrap().translation.y, depth as f32);
    let parent = tm.parent(last).unwrap();
    assert_eq!(parent.entity(), out.entities[depth - 2]);
}

#[test]
fn flat_form_levels_parse_walk_and_round_trip() {
    let level = LevelDesc::from_json(&flat_chain(10_000)).unwrap();
    assert_eq!(level.entity_count(), 10_000);
    let mut parents = Vec::new();
    level
        .visit_preorder(|i, p, _, _| {
            assert_eq!(i, parents.len());
            parents.push(p);
        })
        .unwrap();
    assert_eq!(parents[0], None);
    assert!((1..10_000).all(|i| parents[i] == Some(i - 1)));
    let text = serde_json::to_string(&level).unwrap();
    assert_eq!(LevelDesc::from_json(&text).unwrap(), level);
}

#[test]
fn flat_and_nested_forms_mix() {
    let (compiler, _) = common::registry();
    // `a` has a nested child; `b` names `a` (top-level index 0) as its
    // parent; `c` names `b` (top-level index 1) and has a nested child.
    let blob = compiler
        .compile_str(
            r#"{"entities": [
                {"name": "a", "children": [{"name": "a.kid"}]},
                {"name": "b", "parent": 0},
                {"name": "c", "parent": 1, "children": [{"name": "c.kid"}]},
                {"name": "d"}
            ]}"#,
        )
        .unwrap();
    let view = BlobView::parse(&blob).unwrap();
    let parents: Vec<u32> = view.parent_index().iter().collect();
    // Blob order: a, a.kid, b, c, c.kid, d.
    assert_eq!(parents, [NO_PARENT, 0, 0, 2, 3, NO_PARENT]);
    assert_eq!(view.hierarchy_depth(), 4);
}

#[test]
fn bad_parents_are_typed_errors_naming_the_entity() {
    let (compiler, _) = common::registry();
    let compile = |entities: &str| {
        compiler
            .compile_str(&format!(r#"{{"entities": [{entities}]}}"#))
            .unwrap_err()
    };
    let err = compile(r#"{"name": "a"}, {"name": "b", "parent": 1}"#);
    assert_eq!(
        err,
        CompileError::Parent {
            entity: "entities[1] (\"b\")".into(),
            problem: ParentProblem::SelfParent(1),
        }
    );
    assert_eq!(
        err.to_string(),
        "entities[1] (\"b\"): \"parent\": 1 is the entity itself"
    );
    let err = compile(r#"{"parent": 2}, {}, {}"#);
    assert_eq!(
        err,
        CompileError::Parent {
            entity: "entities[0]".into(),
            problem: ParentProblem::NotEarlier {
                parent: 2,
                index: 0
            },
        }
    );
    assert!(
        err.to_string()
            .contains("2 is not the index of an earlier entity"),
        "{err}"
    );
    let err = compile(r#"{}, {"name": "far", "parent": 99}"#);
    assert!(
        matches!(&err, CompileError::Parent { entity, problem: ParentProblem::NotEarlier { parent: 99, index: 1 } } if entity == "entities[1] (\"far\")"),
        "{err}"
    );
    let err = compile(r#"{}, {"children": [{}, {"name": "x", "parent": 0}]}"#);
    assert_eq!(
        err,
        CompileError::Parent {
            entity: "entities[1].children[1] (\"x\")".into(),
            problem: ParentProblem::Nested,
        }
    );
    for bad in [
        r#"{"parent": -1}"#,
        r#"{"parent": 0.5}"#,
        r#"{"parent": "0"}"#,
    ] {
        assert!(
            matches!(compile(bad), CompileError::Schema(_)),
            "{bad}: {}",
            compile(bad)
        );
    }
    // The same checks on a level built in code.
    let mut level = LevelDesc::from_json(r#"{"entities": [{}, {}]}"#).unwrap();
    level.entities[0].parent = Some(1);
    assert!(matches!(
        compiler.compile(&level),
        Err(CompileError::Parent { .. })
    ));
    assert!(level.visit_preorder(|_, _, _, _| {}).is_err());
}

#[test]
fn duplicate_keys_are_errors_with_line_and_column() {
    let (compiler, _) = common::registry();
    let cases = [
        // (level, duplicated key, line)
        (
            "{\"entities\": [\n  {\"name\": \"a\",\n   \"name\": \"b\"}\n]}",
            "name",
            3,
        ),
        (
            "{\"entities\": [{\"components\": {\n  \"mass\": 1,\n  \"position\": [0, 0, 0],\n  \"mass\": 2\n}}]}",
            "mass",
            4,
        ),
        (
            "{\"entities\": [{\"components\": {\"transform\": {\n  \"translation\": [1, 2, 3],\n  \"translation\": [4, 5, 6]}}}]}",
            "translation",
            3,
        ),
        (
            "{\"entities\": [{\"children\": [{\"components\": {\"data\":\n  {\"stats\": {\"hp\": 1,\n   \"hp\": 2}}}}]}]}",
            "hp",
            3,
        ),
        ("{\"entities\": [],\n \"entities\": [{}]}", "entities", 2),
        (
            "{\"entities\": [{\"parent\": null, \"children\": [], \"children\": []}]}",
            "children",
            1,
        ),
    ];
    for (json, key, line) in cases {
        let err = compiler.compile_str(json).unwrap_err();
        match &err {
            CompileError::DuplicateKey {
                key: k,
                line: l,
                column,
            } => {
                assert_eq!((k.as_str(), *l), (key, line), "{json}");
                // The column is just past the second occurrence of the key.
                let text = json.lines().nth(line - 1).unwrap();
                let at = text.rfind(&format!("\"{key}\"")).unwrap() + key.len() + 2;
                assert_eq!(*column, at, "{json}");
            }
            other => panic!("{json}: expected DuplicateKey, got {other}"),
        }
        assert!(
            err.to_string()
                .starts_with(&format!("duplicate key \"{key}\" at line {line} column ")),
            "{err}"
        );
        let serde_err = serde_json::from_str::<LevelDesc>(json).unwrap_err();
        assert!(
            serde_err
                .to_string()
                .starts_with(&format!("duplicate key \"{key}\" at line {line}")),
            "{serde_err}"
        );
    }
    // Equal keys in different objects are fine.
    compiler
        .compile_str(r#"{"entities": [{"components": {"mass": 1}}, {"components": {"mass": 2}}]}"#)
        .unwrap();
}

#[test]
fn schema_errors_still_read_well() {
    let (compiler, _) = common::registry();
    let err = compiler
        .compile_str(r#"{"entities":[{"childern":[]}]}"#)
        .unwrap_err();
    assert!(
        err.to_string().contains("unknown field `childern`"),
        "{err}"
    );
    let err = compiler.compile_str(r#"{"entity":[]}"#).unwrap_err();
    assert!(err.to_string().contains("unknown field `entity`"), "{err}");
    let err = compiler.compile_str(r#"[]"#).unwrap_err();
    assert!(matches!(err, CompileError::Schema(_)), "{err}");
    let err = compiler.compile_str(r#"{"entities":[]} x"#).unwrap_err();
    assert!(err.to_string().contains("trailing characters"), "{err}");
    // Component JSON too deep for serde_json's limit gets a hint.
    let deep_data = format!(
        r#"{{"entities":[{{"components":{{"data":{}1{}}}}}]}}"#,
        r#"{"a":"#.repeat(130),
        "}".repeat(130)
    );
    let err = compiler.compile_str(&deep_data).unwrap_err();
    assert!(
        err.to_string().contains("recursion limit exceeded")
            && err.to_string().contains("flat form"),
        "{err}"
    );
}
