//! Property tests: every mutation of a valid blob either spawns a world
//! that passes its invariant checks or is refused, leaving the world empty.
//! Never a panic.

mod common;

use doecs::World;
use doecs_resource::SpawnOptions;
use doecs_transform::TransformManager;
use proptest::prelude::*;

fn base_blobs() -> Vec<Vec<u8>> {
    let (compiler, _) = common::registry();
    vec![
        compiler.compile_str(common::MIXED_LEVEL).unwrap(),
        compiler
            .compile_str(
                r#"{"entities":[{"components":{"mass":1}},{"components":{"position":[1,2,3]}}]}"#,
            )
            .unwrap(),
    ]
}

#[derive(Clone, Debug)]
enum Mutation {
    SetByte(usize, u8),
    SetU32(usize, u32),
    Truncate(usize),
    Insert(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::SetByte(i, b)),
        (
            any::<usize>(),
            prop_oneof![any::<u32>(), 0u32..16, Just(u32::MAX), Just(u32::MAX - 1)]
        )
            .prop_map(|(i, v)| Mutation::SetU32(i, v)),
        any::<usize>().prop_map(Mutation::Truncate),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..20)
        )
            .prop_map(|(i, v)| Mutation::Insert(i, v)),
    ]
}

fn apply(b: &mut Vec<u8>, m: &Mutation) {
    let n = b.len();
    if n < 4 {
        return;
    }
    match m {
        Mutation::SetByte(i, v) => b[i % n] = *v,
        Mutation::SetU32(i, v) => {
            // Word-aligned, where every field of the format is.
            let at = (i % (n / 4)) * 4;
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        Mutation::Truncate(i) => b.truncate(i % n),
        Mutation::Insert(i, v) => {
            let at = i % n;
            b.splice(at..at, v.iter().copied());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
    #[test]
    fn mutated_blobs_spawn_or_error(which in 0usize..2, muts in proptest::collection::vec(mutation(), 1..4), fix_len in any::<bool>(), strict in any::<bool>()) {
        let mut b = base_blobs().swap_remove(which);
        for m in &muts { apply(&mut b, m); }
        if fix_len && b.len() >= 24 {
            // Keep the declared length right so mutations reach deeper fields.
            let len = b.len() as u64;
            b[16..24].copy_from_slice(&len.to_le_bytes());
        }
        let (_, spawner) = common::registry();
        let mut world = World::new();
        match spawner.spawn(&mut world, &b, SpawnOptions { strict }) {
            Ok(out) => {
                prop_assert_eq!(world.len(), out.entities.len());
                world.check_invariants();
                if let Some(tm) = world.manager::<TransformManager>() { tm.check_invariants(); }
            }
            Err(e) => {
                prop_assert!(world.is_empty());
                prop_assert!(world.manager::<TransformManager>().is_none());
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }
}
