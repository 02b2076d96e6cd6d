#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod arena;
mod edit;
mod error;
mod export;
mod invariants;
mod json;
mod key;
mod manager;
pub mod merge;
mod names;
mod plugin;
mod record;
mod save;
mod snapshot;
mod store;
mod value;

pub use error::{DataError, LoadError};
pub use key::{Key, KeyHash, Path};
pub use merge::incoming_wins;
pub use names::SavedKeys;
pub use plugin::DataPlugin;
pub use record::{
    header_len, Entry, Record, RecordRef, ENTRY_BYTES, HEADER_BYTES, MAX_RECORD_BYTES,
};
pub use save::SavedStore;
pub use store::{DataStore, StoreConfig};
pub use value::{Floats, Value, ValueType};
