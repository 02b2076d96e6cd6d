//! Malformed blobs: each is refused with the right field, offset and
//! problem, and the world is left untouched.

mod common;

use doecs::World;
use doecs_resource::{BlobBuilder, LoadError, Problem, SpawnError, SpawnOptions, TypeBlock};

fn valid() -> Vec<u8> {
    let (compiler, _) = common::registry();
    compiler.compile_str(common::MIXED_LEVEL).unwrap()
}

fn refuse(bytes: &[u8]) -> LoadError {
    let (_, spawner) = common::registry();
    let mut world = World::new();
    world.spawn((1u8,));
    let err = spawner
        .spawn(&mut world, bytes, SpawnOptions::default())
        .unwrap_err();
    assert_eq!(world.len(), 1, "world untouched");
    assert!(world
        .manager::<doecs_transform::TransformManager>()
        .is_none());
    world.check_invariants();
    match err {
        SpawnError::Load(e) => e,
        other => panic!("expected a load error, got {other}"),
    }
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn header_errors() {
    let v = valid();
    let e = refuse(&v[..31]);
    assert_eq!((e.field.as_str(), e.offset), ("header", 0));
    let mut b = v.clone();
    b[0] = b'X';
    assert_eq!(refuse(&b).problem, Problem::BadMagic);
    let mut b = v.clone();
    put_u32(&mut b, 8, 1);
    let e = refuse(&b);
    assert_eq!(
        (e.field.as_str(), e.offset, e.problem),
        ("header.version", 8, Problem::UnsupportedVersion(1))
    );
    let mut b = v.clone();
    put_u32(&mut b, 12, 1);
    assert_eq!(refuse(&b).problem, Problem::ReservedFlags(1));
    let e = refuse(&v[..v.len() - 16]);
    assert_eq!((e.field.as_str(), e.offset), ("header.total_length", 16));
    let mut b = v.clone();
    put_u32(&mut b, 24, u32::MAX);
    assert_eq!(refuse(&b).field, "header.num_entities");
}

#[test]
fn huge_counts_are_refused_without_allocating() {
    let mut b = valid();
    put_u32(&mut b, 24, u32::MAX - 1);
    let e = refuse(&b);
    assert_eq!(e.field, "parent_index");
    assert!(matches!(e.problem, Problem::Truncated { .. }));
    let mut b = valid();
    put_u32(&mut b, 28, u32::MAX);
    assert!(refuse(&b).field.starts_with("block[7]"));
}

#[test]
fn parent_must_come_first() {
    let b = BlobBuilder::new(vec![u32::MAX, 2, 0]).to_bytes();
    let e = refuse(&b);
    assert_eq!((e.field.as_str(), e.offset), ("parent_index[1]", 36));
    assert_eq!(
        e.problem,
        Problem::ParentNotBefore {
            parent: 2,
            child: 1
        }
    );
    let e = refuse(&BlobBuilder::new(vec![0]).to_bytes());
    assert_eq!(
        e.problem,
        Problem::ParentNotBefore {
            parent: 0,
            child: 0
        }
    );
}

fn one_block(idx: Vec<u32>, size: u32, data: Vec<u8>, name: &str) -> Vec<u8> {
    let mut b = BlobBuilder::roots(4);
    b.push_block(TypeBlock {
        component: doecs::raw::name_hash(name),
        instance_size: size,
        entity_index: idx,
        data,
    });
    b.to_bytes()
}

#[test]
fn entity_index_errors() {
    let e = refuse(&one_block(vec![0, 4], 4, vec![0; 8], "mass"));
    assert_eq!(
        (e.field.as_str(), e.offset),
        ("block[0].entity_index[1]", 48 + 20)
    );
    assert_eq!(e.problem, Problem::OutOfRange { value: 4, limit: 4 });
    let e = refuse(&one_block(vec![1, 1], 4, vec![0; 8], "mass"));
    assert_eq!(
        e.problem,
        Problem::NotIncreasing {
            previous: 1,
            value: 1
        }
    );
    let e = refuse(&one_block(vec![0, 1, 2, 3, 3], 4, vec![0; 20], "mass"));
    assert_eq!(e.field, "block[0].num_instances");
}

#[test]
fn size_errors() {
    let e = refuse(&one_block(vec![0, 1], 8, vec![0; 16], "mass"));
    assert_eq!(e.field, "block[0].instance_size");
    assert!(matches!(
        e.problem,
        Problem::InstanceSize {
            expected: 4,
            actual: 8,
            ..
        }
    ));
    // instance_size * num_instances larger than the blob.
    let mut b = one_block(vec![0, 1], 4, vec![0; 8], "mass");
    put_u32(&mut b, 48 + 12, u32::MAX);
    let e = refuse(&b);
    assert_eq!(e.field, "block[0].instance_data");
    assert!(matches!(e.problem, Problem::Truncated { .. }));
    // Trailing bytes after the last block.
    let mut b = one_block(vec![0], 4, vec![0; 4], "mass");
    b.extend_from_slice(&[0; 16]);
    let len = b.len() as u64;
    b[16..24].copy_from_slice(&len.to_le_bytes());
    assert!(matches!(refuse(&b).problem, Problem::TrailingBytes(16)));
}

#[test]
fn duplicate_types_and_bad_transforms() {
    let mut b = BlobBuilder::roots(2);
    let block = TypeBlock {
        component: doecs::raw::name_hash("mass"),
        instance_size: 4,
        entity_index: vec![0],
        data: vec![0; 4],
    };
    b.push_block(block.clone()).push_block(block);
    let e = refuse(&b.to_bytes());
    assert_eq!(e.field, "block[1].component_identifier");
    let mut data = vec![0u8; 128];
    data[64 + 8..64 + 12].copy_from_slice(&f32::NAN.to_le_bytes());
    let e = refuse(&one_block(vec![0, 2], 64, data, "transform"));
    assert_eq!(e.field, "block[0].instance_data");
    assert!(matches!(e.problem, Problem::Rejected { instance: 1, .. }));
    assert!(e.to_string().contains("NaN"), "{e}");
}

#[test]
fn corrupt_data_records_are_refused() {
    // A record slot whose length runs past the slot.
    let mut slot = vec![0u8; 16];
    slot[..4].copy_from_slice(&100u32.to_le_bytes());
    let e = refuse(&one_block(vec![1], 16, slot, "data"));
    assert_eq!(e.field, "block[0].instance_data");
    assert!(e.to_string().contains("past its slot"), "{e}");
    // A slot with a valid length but garbage record bytes.
    let mut slot = vec![0xffu8; 16];
    slot[..4].copy_from_slice(&12u32.to_le_bytes());
    let e = refuse(&one_block(vec![1], 16, slot, "data"));
    assert!(
        matches!(e.problem, Problem::Rejected { instance: 0, .. }),
        "{e}"
    );
}
