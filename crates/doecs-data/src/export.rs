//! Export back to JSON, through the optional name dictionary.
//!
//! Keys are hashes, so a record can only be turned back into JSON when the
//! store kept the names of its paths (`DataStore::with_names`). Each path's
//! segments rebuild the nested objects. A key without a name (names off, or
//! it arrived in raw record bytes) or a path that is both a value and an
//! object is a typed error.

use crate::error::DataError;
use crate::store::DataStore;
use doecs::Entity;
use serde_json::{Map, Value as Json};

impl DataStore {
    /// `entity`'s record as a JSON object (`None` without a record).
    pub fn to_json(&self, entity: Entity) -> Result<Option<Json>, DataError> {
        let Some(rec) = self.arena.record(entity) else {
            return Ok(None);
        };
        let mut root = Map::new();
        for entry in rec.entries() {
            let segments = self
                .registry
                .name(entry.key)
                .ok_or(DataError::UnnamedKey(entry.key))?;
            let conflict = || DataError::ExportConflict(segments.join("."));
            let (last, parents) = segments.split_last().ok_or_else(conflict)?;
            let mut obj = &mut root;
            for seg in parents {
                let child = obj
                    .entry(seg.to_string())
                    .or_insert_with(|| Json::Object(Map::new()));
                obj = child.as_object_mut().ok_or_else(conflict)?;
            }
            if obj.contains_key(&**last) {
                return Err(conflict());
            }
            obj.insert(last.to_string(), entry.value.to_json());
        }
        Ok(Some(Json::Object(root)))
    }
}
