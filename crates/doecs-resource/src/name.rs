//! The built-in `name` component: an entity's [`Name`].
//!
//! A level entity's `"name"` (which error messages and `is_a` already
//! use) is compiled into a `name` block, so the spawned entity carries it
//! as a [`Name`]: the inspector shows it and
//! [`lookup`](doecs::WorldCore::lookup) finds it by path. Names are UTF-8
//! text of at most [`MAX_NAME_BYTES`] bytes, in length-prefixed slots
//! ([`crate::format::variable_instance`]); loading checks every one
//! before anything is created.

use crate::format::variable_instance;
use crate::spawner::{ComponentSpawner, SpawnBatch};
use crate::view::BlockView;
use doecs::{Name, World};
use serde_json::Value;

/// The component name of the built-in name.
pub const NAME: &str = "name";
/// Its spawn order: before everything else, so hooks of later components
/// see the name.
pub const NAME_SPAWN_ORDER: i32 = -200;
/// The longest name, in bytes.
pub const MAX_NAME_BYTES: usize = 1024;

/// The name's compile function: a JSON string to its UTF-8 bytes.
pub fn compile_name(v: &Value) -> Result<Vec<u8>, String> {
    let Value::String(name) = v else {
        return Err(format!("a name is a string, not {v}"));
    };
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "a name is at most {MAX_NAME_BYTES} bytes, this one has {}",
            name.len()
        ));
    }
    Ok(name.as_bytes().to_vec())
}

/// The name in a slot, checked.
fn name(slot: &[u8]) -> Result<&str, String> {
    let bytes =
        variable_instance(slot).ok_or_else(|| "name length runs past its slot".to_string())?;
    if bytes.len() > MAX_NAME_BYTES {
        return Err(format!("a name is at most {MAX_NAME_BYTES} bytes"));
    }
    std::str::from_utf8(bytes).map_err(|e| format!("a name is UTF-8 text: {e}"))
}

/// Gives each entity of a `name` block its [`Name`].
#[derive(Copy, Clone, Debug, Default)]
pub struct NameSpawner;

impl ComponentSpawner for NameSpawner {
    fn instance_size(&self) -> Option<usize> {
        None
    }

    fn validate(&self, block: &BlockView<'_>) -> Result<(), (usize, String)> {
        for i in 0..block.num_instances() {
            let slot = block.instance(i).unwrap_or(&[]);
            name(slot).map_err(|m| (i, m))?;
        }
        Ok(())
    }

    fn spawn(&self, world: &mut World, batch: &SpawnBatch<'_>) {
        for (k, slot) in batch
            .data
            .chunks_exact(batch.instance_size.max(1))
            .take(batch.num_instances())
            .enumerate()
        {
            let entity = batch.owner(k).expect("validated entity index");
            let text = name(slot).expect("validated before spawning");
            world
                .insert_one(entity, Name::new(text.to_owned()))
                .expect("a level entity is alive while its level spawns");
        }
    }
}
