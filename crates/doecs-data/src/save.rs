//! The DataComponent in save files (`doecs::SaveManager`).
//!
//! A record is already a self-contained block of bytes (Bitsquid's
//! "Allocation Adventures 1: The DataComponent": relocatable by `memcpy`),
//! so the saved form is each entity's record bytes as they are, plus what
//! the store knows beside them: the settings, the Lamport clock and the key
//! registry (the collision table, and the names when they are kept, so
//! export to JSON still works after a load). Loading checks everything:
//! each record's bytes through the same validation as any record from
//! outside ([`RecordRef::from_bytes`](crate::RecordRef::from_bytes)), each
//! entity alive in the loaded world, and each key and name against its
//! hash.

use crate::names::{KeyRegistry, SavedKeys};
use crate::record::RecordRef;
use crate::store::{DataStore, StoreConfig};
use doecs::{Entity, World};
use serde::{Deserialize, Serialize};

/// A DataStore as a save holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedStore {
    /// Keep path names.
    pub keep_names: bool,
    /// Compaction threshold: dead fraction.
    pub compact_dead_fraction: f32,
    /// Compaction threshold: dead bytes.
    pub compact_min_dead_bytes: u64,
    /// The Lamport clock.
    pub clock: u32,
    /// The key registry.
    pub keys: SavedKeys,
    /// Every record, by entity, in entity-index order.
    pub records: Vec<(Entity, serde_bytes::ByteBuf)>,
}

impl doecs::SaveManager for DataStore {
    type Saved = SavedStore;

    fn to_saved(&self) -> SavedStore {
        let config = self.config();
        let records = self
            .arena
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.cap.is_some())
            .filter_map(|(i, s)| {
                let e = Entity::from_parts(i as u32, s.generation);
                Some((e, serde_bytes::ByteBuf::from(self.to_bytes(e)?)))
            })
            .collect();
        SavedStore {
            keep_names: config.keep_names,
            compact_dead_fraction: config.compact_dead_fraction,
            compact_min_dead_bytes: config.compact_min_dead_bytes as u64,
            clock: self.clock,
            keys: self.registry.to_saved(),
            records,
        }
    }

    fn from_saved(saved: SavedStore, world: &World) -> Result<Self, String> {
        if saved.keep_names != saved.keys.names.is_some() {
            return Err("keep_names disagrees with the saved names".into());
        }
        if !(0.0..=1.0).contains(&saved.compact_dead_fraction) {
            return Err("compact_dead_fraction must lie in 0..=1".into());
        }
        let mut store = DataStore::with_config(StoreConfig {
            keep_names: saved.keep_names,
            compact_dead_fraction: saved.compact_dead_fraction,
            compact_min_dead_bytes: usize::try_from(saved.compact_min_dead_bytes)
                .map_err(|_| "compact_min_dead_bytes does not fit".to_string())?,
        });
        store.registry = KeyRegistry::from_saved(&saved.keys)?;
        for (e, bytes) in &saved.records {
            if !world.alive(*e) {
                return Err(format!("record of entity {e}, which is not alive"));
            }
            let record =
                RecordRef::from_bytes(bytes).map_err(|err| format!("record of {e}: {err}"))?;
            store
                .insert_record(*e, record)
                .map_err(|err| format!("record of {e}: {err}"))?;
        }
        store.clock = store.clock.max(saved.clock);
        Ok(store)
    }
}
