//! The worlds of the hierarchy-shape test, benchmark and example: `n`
//! entities in one `ChildOf` hierarchy, each with a transform one unit
//! along x from its parent, as a chain (`deep`: every entity the parent of
//! the next) or a star (every entity a child of the first).
#![allow(dead_code)]

use doecs::{DestroyNotice, Entity, World};
use doecs_registry::ComponentRegistry;
use doecs_transform::{TransformManager, WorldTransforms};
use glam::{Affine3A, Vec3};

/// A registry that saves the transform manager.
pub fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register_manager::<TransformManager>("transform", DestroyNotice::Callback)
        .unwrap();
    r
}

/// The world and its entities, in spawn order.
pub fn hierarchy(n: usize, deep: bool) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let es = world.spawn_batch((0..n).map(|_| ()));
    let parents: Vec<Option<u32>> = (0..n as u32)
        .map(|k| match k {
            0 => None,
            _ if deep => Some(k - 1),
            _ => Some(0),
        })
        .collect();
    world.set_parents_in_batch(&es, &parents).unwrap();
    let locals = vec![Affine3A::from_translation(Vec3::X); n];
    world.add_transforms(&es, &locals).unwrap();
    (world, es)
}
