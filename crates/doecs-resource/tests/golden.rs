//! Endianness: golden bytes written by an independent writer of the format
//! (`fuzz/make_seeds.py`, Python `struct` with explicit little-endian
//! codes) must equal what [`BlobBuilder`] writes, and must read back to the
//! same values on any host.

mod common;

use doecs::raw::name_hash;

use doecs::World;
use doecs_resource::{standard_spawner, BlobBuilder, BlobView, SpawnOptions, TypeBlock, NO_PARENT};
use doecs_transform::TransformManager;
use std::alloc::Layout;

/// The "tree" seed: 5 entities, parents [root, 0, 1, 1, root], blocks
/// transform, position, mass, tag and an unknown 3-byte type.
const GOLDEN_HEX: &str = concat!(
    "444f4543534c564c020000000000000030020000000000000500000005000000ffffffff000000000100000001000000",
    "ffffffff0000000000000000000000009bc803304e53dcc0040000004000000000000000010000000200000003000000",
    "0000803f000000000000000000000000000000000000803f000000000000000000000000000000000000803f00000000",
    "000000000000000000000000000000000000803f000000000000000000000000000000000000803f0000000000000000",
    "00000000000000000000803f000000000000803f0000004000004040000000000000803f000000000000000000000000",
    "000000000000803f000000000000000000000000000000000000803f0000000000000000000000000000000000000000",
    "0000803f000000000000000000000000000000000000803f000000000000000000000000000000000000803f00000000",
    "0000803f0000004000004040000000004ad7a1fc263abf4c020000000c00000000000000040000000000000000000000",
    "0000803f0000004000004040000080400000a0400000c0400000000000000000b10a7bcea257371f0300000004000000",
    "010000000300000004000000000000000000803f000000400000404000000000f3a4484419abd7560100000004000000",
    "020000000000000000000000000000000700090000000000000000000000000059391fbdc76588490200000003000000",
    "0000000002000000000000000000000061626364656600000000000000000000",
);

fn golden() -> Vec<u8> {
    (0..GOLDEN_HEX.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&GOLDEN_HEX[i..i + 2], 16).unwrap())
        .collect()
}

fn le_f32s(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn builder() -> BlobBuilder {
    let ident = [
        1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 0.,
    ];
    let moved = [
        1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 1., 2., 3., 0.,
    ];
    let transforms: Vec<f32> = [ident, moved, ident, moved].concat();
    let mut b = BlobBuilder::new(vec![NO_PARENT, 0, 1, 1, NO_PARENT]);
    let block = |name: &str, size: u32, idx: Vec<u32>, data: Vec<u8>| TypeBlock {
        component: name_hash(name),
        instance_size: size,
        entity_index: idx,
        data,
    };
    b.push_block(block(
        "transform",
        64,
        vec![0, 1, 2, 3],
        le_f32s(&transforms),
    ))
    .push_block(block(
        "position",
        12,
        vec![0, 4],
        le_f32s(&[1., 2., 3., 4., 5., 6.]),
    ))
    .push_block(block("mass", 4, vec![1, 3, 4], le_f32s(&[1., 2., 3.])))
    .push_block(block(
        "tag",
        4,
        vec![2],
        [7u16.to_le_bytes(), 9u16.to_le_bytes()].concat(),
    ))
    .push_block(block("unknown", 3, vec![0, 2], b"abcdef".to_vec()));
    b
}

#[test]
fn builder_writes_the_golden_bytes() {
    assert_eq!(builder().to_bytes(), golden());
}

#[test]
fn golden_bytes_read_back_on_any_host() {
    let bytes = golden();
    let view = BlobView::parse(&bytes).unwrap();
    assert_eq!(view.num_entities(), 5);
    assert_eq!(
        view.parent_index().iter().collect::<Vec<_>>(),
        vec![NO_PARENT, 0, 1, 1, NO_PARENT]
    );
    assert_eq!(view.hierarchy_depth(), 3);
    let b = view.blocks();
    assert_eq!(b.len(), 5);
    assert_eq!(b[1].component, name_hash("position"));
    assert_eq!(b[1].data_offset % 16, 0);
    assert_eq!(b[2].entity_index.iter().collect::<Vec<_>>(), vec![1, 3, 4]);

    let mut spawner = standard_spawner();
    spawner.register_plain::<[f32; 3]>("position").unwrap();
    spawner.register_plain::<f32>("mass").unwrap();
    spawner
        .register_plain_dynamic("tag", Layout::from_size_align(4, 2).unwrap(), 2)
        .unwrap();
    let mut world = World::new();
    let out = spawner
        .spawn(&mut world, &bytes, SpawnOptions::default())
        .unwrap();
    let e = &out.entities;
    assert_eq!(world.get::<[f32; 3]>(e[4]), Ok(&[4.0, 5.0, 6.0]));
    assert_eq!(world.get::<f32>(e[3]), Ok(&2.0));
    let tag = world.components().id_by_name("tag").unwrap();
    // Native u16s, whatever the host's byte order.
    let raw = world.get_bytes(e[2], tag).unwrap();
    assert_eq!(
        [
            u16::from_ne_bytes([raw[0], raw[1]]),
            u16::from_ne_bytes([raw[2], raw[3]])
        ],
        [7, 9]
    );
    let tm = world.manager::<TransformManager>().unwrap();
    let t3 = tm.lookup(e[3]).unwrap();
    assert_eq!(tm.parent(t3).unwrap().entity(), e[1]);
    assert_eq!(
        tm.world(t3).unwrap().translation.to_array(),
        [2.0, 4.0, 6.0]
    );
    assert_eq!(out.skipped.len(), 1);
    assert_eq!(out.skipped[0].component, name_hash("unknown"));
    assert_eq!((out.skipped[0].instances, out.skipped[0].bytes), (2, 6));
}
