//! Merging records key by key (the collaborative-workflow argument of
//! Bitsquid's "Allocation Adventures 1: The DataComponent").
//!
//! Every change to data is "set one key" (objects are flattened; strings and
//! float arrays are monolithic), so two versions of a record merge key by
//! key. **Newer** is decided per key by its **stamp**, a Lamport clock:
//!
//! 1. Every `set` stamps its key with the store's clock + 1; `set_json` and
//!    `apply_json` give all their keys one new stamp. Loading or merging a
//!    record advances the clock past every stamp in it, so a later local
//!    edit is newer than everything the store has seen.
//! 2. `merge(entity, other)`: for each key of `other`,
//!    - absent in `entity` → taken (with its stamp);
//!    - present → the value with the **higher stamp** wins;
//!    - equal stamps → a deterministic tie-break: the larger value in
//!      [`Value::merge_order`] (type code, then stored bytes) wins, so
//!      merging is commutative, associative and idempotent: two stores that
//!      exchange records in any order converge on the same data.
//! 3. Keys only in `entity` stay. `remove` is not a merge operation: a
//!    removed key comes back if the other side still has it. To delete in a
//!    collaborative setting, set a tombstone value (e.g. `false`).
//! 4. Records compiled from resources have stamp 0, so any edit beats them.
//!
//! A merge is planned completely (winners and the resulting size) before
//! anything is written, so a refused merge changes nothing.

use crate::error::DataError;
use crate::record::RecordRef;
use crate::store::DataStore;
use crate::value::Value;
use doecs::Entity;
use std::cmp::Ordering;

/// Whether `(stamp, value)` from the incoming side beats the stored one.
pub fn incoming_wins(
    stored_stamp: u32,
    stored: &Value<'_>,
    incoming_stamp: u32,
    incoming: &Value<'_>,
) -> bool {
    match incoming_stamp.cmp(&stored_stamp) {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => incoming.merge_order(stored) == Ordering::Greater,
    }
}

impl DataStore {
    /// Merges `other` into `entity`'s record key by key, the newer value
    /// winning (see the module docs of `merge` for the exact rules). Creates
    /// the record if needed. Returns how many keys were taken from `other`.
    ///
    /// ```
    /// use doecs::Entity;
    /// use doecs_data::DataStore;
    /// let (a, b) = (Entity::from_parts(0, 1), Entity::from_parts(1, 1));
    /// let mut store = DataStore::new();
    /// store.set(a, "hp", 10.0).unwrap();
    /// store.set(b, "hp", 20.0).unwrap(); // newer
    /// store.set(a, "name", "A").unwrap(); // newer still
    /// store.set(b, "mana", 5.0).unwrap();
    /// let theirs = store.to_record(b).unwrap();
    /// assert_eq!(store.merge(a, theirs.as_ref()).unwrap(), 2);
    /// assert_eq!(store.get_f32(a, "hp"), Some(20.0));
    /// assert_eq!(store.get_str(a, "name"), Some("A"));
    /// assert_eq!(store.get_f32(a, "mana"), Some(5.0));
    /// ```
    pub fn merge(&mut self, entity: Entity, other: RecordRef<'_>) -> Result<usize, DataError> {
        let winners: Vec<usize> = {
            let mine = self.arena.record(entity);
            (0..other.len())
                .filter(|&j| {
                    let key = other.key(j);
                    match mine.and_then(|m| m.find(key).map(|i| (m, i))) {
                        None => true,
                        Some((m, i)) => {
                            incoming_wins(m.stamp(i), &m.value(i), other.stamp(j), &other.value(j))
                        }
                    }
                })
                .collect()
        };
        self.plan_edits(
            entity,
            winners
                .iter()
                .map(|&j| (other.key(j), other.value(j).data_len())),
        )?;
        if self.arena.record(entity).is_none() {
            self.create(entity)?;
        }
        self.clock = self.clock.max(other.max_stamp());
        self.apply_checked(
            entity,
            winners
                .iter()
                .map(|&j| (other.key(j), other.stamp(j), other.value(j))),
        )?;
        Ok(winners.len())
    }
}
