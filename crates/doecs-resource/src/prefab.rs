//! The built-in `prefab` and `is_a` components: prefabs and their instances
//! declared in a level, compiled into the blob.
//!
//! JSON: `"prefab": true` makes an entity a prefab (the `doecs::Prefab`
//! tag: hidden from queries that do not ask for it). `"is_a": "name"` makes
//! an entity an instance of the **earlier** entity of that name (an
//! `(IsA, prefab)` pair): it reads the prefab's components as its own until
//! it overrides one, which it does by naming the component itself. The
//! compiler resolves the name to the prefab's blob index; a name that is
//! unknown, declared twice, or not declared before the instance is a
//! compile error. A level instance inherits its prefab's components; the
//! prefab's children are not copied (that is `World::instantiate`, which
//! copies the prefab's whole `ChildOf` subtree at run time).
//!
//! Blob: `prefab` is a block of zero-byte instances; `is_a` holds one
//! little-endian `u32` per instance, the blob index of the prefab, which
//! must come before the instance (checked on load). That one compare per
//! instance rules out `IsA` cycles, as `parent_index[i] < i` does for the
//! hierarchy.

use crate::spawner::{ComponentSpawner, SpawnBatch};
use crate::view::BlockView;
use doecs::{IsA, Prefab, World};
use serde_json::Value;

/// The component name that makes a level entity a prefab.
pub const PREFAB: &str = "prefab";
/// The component name that makes a level entity an instance of a prefab.
pub const IS_A: &str = "is_a";
/// Spawn order of both: before the components that may look for them.
pub const PREFAB_SPAWN_ORDER: i32 = -150;

/// `prefab`'s compile function: `true` (an empty instance).
pub fn compile_prefab(v: &Value) -> Result<Vec<u8>, String> {
    match v {
        Value::Bool(true) => Ok(Vec::new()),
        other => Err(format!("expected `true`, found {other}")),
    }
}

/// `is_a`'s compile function, for a value already resolved to the
/// prefab's blob index by the compiler (see [`encode_is_a`]). Called
/// directly on a level's JSON it refuses: the name needs the level.
pub fn compile_is_a(v: &Value) -> Result<Vec<u8>, String> {
    Err(format!(
        "`is_a` names an earlier entity and is resolved by the level compiler, not alone ({v})"
    ))
}

/// The instance bytes of `is_a` for the prefab at blob index `prefab`.
pub fn encode_is_a(prefab: u32) -> Vec<u8> {
    prefab.to_le_bytes().to_vec()
}

/// Adds the `Prefab` tag to every owner.
#[derive(Copy, Clone, Debug, Default)]
pub struct PrefabSpawner;

impl ComponentSpawner for PrefabSpawner {
    fn instance_size(&self) -> Option<usize> {
        Some(0)
    }

    fn spawn(&self, world: &mut World, batch: &SpawnBatch<'_>) {
        for i in 0..batch.num_instances() {
            let e = batch
                .owner(i)
                .expect("entity_index < num_entities (checked on load)");
            world
                .insert(e, (Prefab,))
                .expect("a freshly spawned entity");
        }
    }
}

/// Adds `(IsA, prefab)` to every owner.
#[derive(Copy, Clone, Debug, Default)]
pub struct IsASpawner;

/// The prefab index of `is_a` instance `i` of `block`.
fn prefab_of(block_data: &[u8], i: usize) -> Option<u32> {
    let b = block_data.get(i * 4..i * 4 + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl ComponentSpawner for IsASpawner {
    fn instance_size(&self) -> Option<usize> {
        Some(4)
    }

    fn validate(&self, block: &BlockView<'_>) -> Result<(), (usize, String)> {
        for (i, owner) in block.entity_index.iter().enumerate() {
            let prefab = prefab_of(block.data, i).ok_or((i, "truncated instance".to_string()))?;
            if prefab >= owner {
                return Err((
                    i,
                    format!("entity {owner} is an instance of entity {prefab}, which does not come before it"),
                ));
            }
        }
        Ok(())
    }

    fn spawn(&self, world: &mut World, batch: &SpawnBatch<'_>) {
        for i in 0..batch.num_instances() {
            let e = batch
                .owner(i)
                .expect("entity_index < num_entities (checked on load)");
            let prefab = prefab_of(batch.data, i).expect("validated") as usize;
            // An earlier entity of this blob: alive, and no cycle can form
            // among fresh entities whose prefabs all come before them.
            world
                .add_pair(e, batch.entity_lookup[prefab], IsA)
                .expect("validated: an earlier entity of the blob");
        }
    }
}
