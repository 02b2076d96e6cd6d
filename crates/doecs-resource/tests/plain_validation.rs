//! Plain components registered with a validation function: bad values are
//! refused when a blob is loaded (naming the block, instance and entity) and
//! when JSON is compiled (naming the entity's path), and nothing is spawned.

use doecs::raw::name_hash;

use doecs::World;
use doecs_resource::{
    BlobBuilder, Compiler, LoadError, Problem, SpawnError, SpawnOptions, Spawner, TypeBlock,
};

fn positive(m: &f32) -> Result<(), String> {
    if m.is_finite() && *m > 0.0 {
        Ok(())
    } else {
        Err(format!("mass must be finite and greater than 0, got {m}"))
    }
}

fn finite(v: &[f32; 3]) -> Result<(), String> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(format!("velocity must be finite, got {v:?}"))
    }
}

fn spawner() -> Spawner {
    let mut s = Spawner::new();
    s.register_plain_validated::<f32>("mass", positive).unwrap();
    s.register_plain_validated::<[f32; 3]>("velocity", finite)
        .unwrap();
    s
}

fn le(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Three entities: masses on entities 0 and 2, velocities on all.
fn blob(masses: [f32; 2], velocity_1: [f32; 3]) -> Vec<u8> {
    let mut b = BlobBuilder::roots(3);
    b.push_block(TypeBlock {
        component: name_hash("mass"),
        instance_size: 4,
        entity_index: vec![0, 2],
        data: le(&masses),
    });
    b.push_dense(
        name_hash("velocity"),
        12,
        le(&[[0.0, 1.0, 0.0], velocity_1, [1.0, 0.0, 0.0]].concat()),
    );
    b.to_bytes()
}

fn refused(bytes: &[u8]) -> LoadError {
    let mut world = World::new();
    let err = spawner()
        .spawn(&mut world, bytes, SpawnOptions::default())
        .unwrap_err();
    assert!(world.is_empty(), "nothing spawned");
    match err {
        SpawnError::Load(e) => e,
        other => panic!("expected a load error, got {other}"),
    }
}

#[test]
fn valid_values_spawn() {
    let mut world = World::new();
    let out = spawner()
        .spawn(
            &mut world,
            &blob([2.0, 0.5], [0.0, 0.0, 3.0]),
            SpawnOptions::default(),
        )
        .unwrap();
    assert_eq!(world.get::<f32>(out.entities[2]), Ok(&0.5));
    assert_eq!(world.get::<[f32; 3]>(out.entities[1]), Ok(&[0.0, 0.0, 3.0]));
}

#[test]
fn bad_plain_values_are_refused_on_load() {
    let e = refused(&blob([2.0, 0.0], [0.0, 0.0, 3.0]));
    assert_eq!(e.field, "block[0].instance_data");
    assert_eq!(
        e.problem,
        Problem::Rejected {
            name: "mass".into(),
            instance: 1,
            message: "mass must be finite and greater than 0, got 0 (blob entity 2)".into(),
        }
    );
    let view_offset = doecs_resource::BlobView::parse(&blob([2.0, 0.0], [0.0; 3]))
        .unwrap()
        .blocks()[0]
        .data_offset;
    assert_eq!(e.offset, view_offset + 4, "the offending instance");
    for bad in [f32::NAN, -1.0, f32::INFINITY] {
        let e = refused(&blob([bad, 1.0], [0.0; 3]));
        assert!(
            matches!(&e.problem, Problem::Rejected { name, instance: 0, .. } if name == "mass"),
            "{e}"
        );
    }
    let e = refused(&blob([1.0, 1.0], [0.0, f32::NAN, 0.0]));
    assert!(
        e.to_string().ends_with(
            "`velocity` instance 1: velocity must be finite, got [0.0, NaN, 0.0] (blob entity 1)"
        ),
        "{e}"
    );
    // `load` + `spawn_loaded` checks the same way.
    let bytes = blob([0.0, 1.0], [0.0; 3]);
    assert!(spawner().load(&bytes, SpawnOptions::default()).is_err());
}

#[test]
fn compile_time_checks_name_the_entity() {
    let mut compiler = Compiler::new();
    compiler
        .register_f32s_validated("mass", 0, 1, |m| positive(&m[0]))
        .unwrap();
    let err = compiler
        .compile_str(
            r#"{"entities": [{"name": "ship", "children": [{"components": {"mass": 0}}]}]}"#,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "entities[0].children[0]: component `mass`: mass must be finite and greater than 0, got 0"
    );
    compiler
        .compile_str(r#"{"entities": [{"components": {"mass": 3}}]}"#)
        .unwrap();
}
