//! The transform component of doecs: one scene graph per world (Bitsquid,
//! seed 001 part 3).
//!
//! A [`TransformManager`] stores, for every instance, the owning entity, the
//! local and world transforms and four hierarchy links (`parent`,
//! `first_child`, `next_sibling`, `prev_sibling`) as a structure of arrays in
//! **one allocation**. Links are instance indices. Transforms are
//! [`glam::Affine3A`]: on the same 81,000-node propagation workload
//! (`benches/transform.rs`, group `full_propagation_81k`, `arrays_affine3a` vs
//! `arrays_mat4`) it is about 1.25× faster than `Mat4` at the same 64 bytes,
//! and a scene graph never needs a projective row.
//!
//! - **Immediate by default:** [`TransformManager::set_local`] updates the
//!   world transforms of the node and its whole subtree before it returns
//!   (iteratively; a 100,000-long chain is fine).
//! - **Batches:** [`TransformManager::set_local_many`] and
//!   [`TransformManager::create_many`] do one O(n) world update.
//! - **Deferred mode:** [`TransformManager::deferred`] keeps moving nodes in a
//!   dirty partition at the end of the arrays, updated by
//!   [`TransformManager::propagate`].
//! - **Locality:** [`TransformManager::compact`] lays instances out parents
//!   first, siblings together, with the seed's three-step swap through the spare
//!   slot at `[len]`.
//! - **Destruction:** children of a destroyed node become roots that keep their
//!   world transform. The manager implements [`doecs::ComponentManager`], so a
//!   world can forward despawns to [`ComponentManager::on_destroy`].
//!
//! **In a world:** keep one manager per world, add it with
//! `DestroyNotice::Callback` and call `on_destroy` with each batch of despawned
//! entities (unknown entities are ignored), or with `DestroyNotice::LazyGc` and
//! call `collect_garbage(&entities)` now and then. The resource spawner should
//! use [`TransformManager::create_many`] with the blob's `parent_index` array.
//!
//! ```
//! use doecs::Entities;
//! use doecs_transform::TransformManager;
//! use glam::{Affine3A, Vec3};
//!
//! let mut entities = Entities::new();
//! let mut tm = TransformManager::new();
//! let body = tm.create(entities.alloc(), Affine3A::from_translation(Vec3::X)).unwrap();
//! let arm = tm.create(entities.alloc(), Affine3A::from_translation(Vec3::Y)).unwrap();
//! tm.link(arm, body).unwrap();
//! assert_eq!(tm.world(arm).unwrap().translation, Vec3::new(1.0, 1.0, 0.0).into());
//!
//! // Immediate: the child's world is correct as soon as the parent moves.
//! tm.set_local(body, Affine3A::from_translation(Vec3::Z)).unwrap();
//! assert_eq!(tm.world(arm).unwrap().translation, Vec3::new(0.0, 1.0, 1.0).into());
//!
//! // Cycles are refused, never a hang.
//! assert!(tm.link(body, arm).is_err());
//!
//! // Handles survive compaction (they re-resolve through the entity map).
//! tm.compact();
//! assert_eq!(tm.parent(arm).unwrap().entity(), body.entity());
//! tm.check_invariants();
//! ```
//!
//! [`ComponentManager::on_destroy`]: doecs::ComponentManager::on_destroy

mod deferred;
mod error;
mod invariants;
mod link;
mod manager;
mod propagate;
mod reorder;
mod storage;

pub use deferred::IDLE_PROPAGATIONS;
pub use error::TransformError;
pub use link::Instance;
pub use manager::{Ancestors, Children, TransformManager};
