//! The registry the loader fuzz target and its regression test use: plain,
//! marker, serde-only, entity-holding and 64-byte-aligned components,
//! sparse ones (plain, marker and serde-only with a `String`), and the
//! transform manager.

use doecs::{DestroyNotice, Entity};
use doecs_registry::ComponentRegistry;
use serde::{Deserialize, Serialize};

#[derive(
    Clone, Copy, Debug, PartialEq, Serialize, Deserialize, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(C)]
pub struct Pos(pub [f32; 3]);

#[derive(
    Clone, Copy, Debug, PartialEq, Serialize, Deserialize, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(C)]
pub struct Hp(pub u32);

#[derive(
    Clone, Copy, Debug, PartialEq, Serialize, Deserialize, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(C)]
pub struct Frozen;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inventory {
    pub owner: String,
    pub items: Vec<(u16, u8)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Target(pub Entity);

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[repr(align(64))]
pub struct Aligned {
    pub a: u8,
    pub b: u64,
}

/// Stored sparse, plain.
#[derive(
    Clone, Copy, Debug, PartialEq, Serialize, Deserialize, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(C)]
pub struct Stunned(pub u32);

/// Stored sparse, serde-only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Label {
    pub text: String,
    pub level: u8,
}

/// Stored sparse, a plain marker.
#[derive(
    Clone, Copy, Debug, PartialEq, Serialize, Deserialize, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(C)]
pub struct Marked;

pub fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register::<Pos>("pos").plain();
    r.register::<Hp>("hp").plain();
    r.register::<Frozen>("frozen").plain();
    r.register::<Inventory>("inventory").cloned();
    r.register::<Target>("target");
    r.register::<Aligned>("aligned");
    r.register::<Stunned>("stunned").plain().sparse();
    r.register::<Label>("label").cloned().sparse();
    r.register::<Marked>("marked").plain().sparse();
    r.register_manager::<doecs_transform::TransformManager>("transform", DestroyNotice::Callback)
        .expect("fresh");
    r
}
