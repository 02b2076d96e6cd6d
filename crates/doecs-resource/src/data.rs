//! The built-in `data` component: the DataComponent of `doecs-data` (after
//! Bitsquid's "Allocation Adventures 1: The DataComponent"), small dynamic
//! per-entity data spawned into the world's [`DataStore`].
//!
//! JSON: any object of the restricted kinds the DataComponent stores (bool,
//! number, string, nested objects, arrays of numbers), e.g.
//! `{"stats": {"health": 100}, "name": "orc"}`. The compiler turns it into a
//! record with [`Record::from_json`]; records vary in size, so the block uses
//! length-prefixed slots ([`crate::format::variable_instance`]). Loading
//! validates every record with [`RecordRef::from_bytes`] before anything is
//! created; the spawner then reserves the arena once and copies each record
//! in, in one call for the whole block.

use crate::format::variable_instance;
use crate::spawner::{ComponentSpawner, SpawnBatch};
use crate::view::BlockView;
use doecs::{DestroyNotice, World};
use doecs_data::{DataStore, Record, RecordRef};
use serde_json::Value;

/// The component name of the built-in DataComponent.
pub const DATA: &str = "data";
/// Its spawn order: after transforms, before plain gameplay components.
pub const DATA_SPAWN_ORDER: i32 = -50;

/// The DataComponent's compile function: a JSON object to record bytes.
pub fn compile_data(v: &Value) -> Result<Vec<u8>, String> {
    Record::from_json(v)
        .map(|r| r.as_bytes().to_vec())
        .map_err(|e| e.to_string())
}

fn record(slot: &[u8]) -> Result<RecordRef<'_>, String> {
    let bytes =
        variable_instance(slot).ok_or_else(|| "record length runs past its slot".to_string())?;
    RecordRef::from_bytes(bytes).map_err(|e| e.to_string())
}

/// Spawns records into the world's [`DataStore`] (added, with despawn
/// callbacks, if the world has none).
#[derive(Copy, Clone, Debug, Default)]
pub struct DataSpawner;

impl ComponentSpawner for DataSpawner {
    fn instance_size(&self) -> Option<usize> {
        None
    }

    fn validate(&self, block: &BlockView<'_>) -> Result<(), (usize, String)> {
        for i in 0..block.num_instances() {
            let slot = block.instance(i).unwrap_or(&[]);
            record(slot).map_err(|m| (i, m))?;
        }
        Ok(())
    }

    fn spawn(&self, world: &mut World, batch: &SpawnBatch<'_>) {
        if world.manager::<DataStore>().is_none() {
            world.add_manager(DataStore::new(), DestroyNotice::Callback);
        }
        let store = world.manager_mut::<DataStore>().expect("added just above");
        let n = batch.num_instances();
        let max_index = batch
            .entity_lookup
            .iter()
            .map(|e| e.index() as usize)
            .max()
            .unwrap_or(0);
        store.reserve(n, batch.instance_size, max_index);
        for (k, slot) in batch
            .data
            .chunks_exact(batch.instance_size.max(1))
            .take(n)
            .enumerate()
        {
            let entity = batch.owner(k).expect("validated entity index");
            let rec = record(slot).expect("validated before spawning");
            store
                .insert_record(entity, rec)
                .expect("a fresh entity has no record and the record was validated");
        }
    }
}
