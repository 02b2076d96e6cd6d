//! Save and load whole worlds through the registry, in JSON for people and
//! in a compact binary format for games.
//!
//! A save holds the entity table's ids ([`EntityTableImage`]: generations,
//! the free FIFO in order, retired slots), one **table** per non-empty
//! archetype: its entities and one column per component, named by the
//! component's registered name, and one **sparse section** per sparse
//! component that some entity has ([`Registering::sparse`](crate::Registering::sparse)):
//! its entities and one value per entity, in the same column form as a
//! table's. Loading builds a world whose entity table holds exactly the
//! saved ids, then places each table's rows with one copy per column
//! ([`raw::place_columns`](doecs::raw::place_columns)), then inserts each
//! sparse value into its entity's sparse set, so every entity keeps its
//! id, references to entities inside components (an [`Entity`] is written
//! as its 64 bits) stay valid, and the next spawn after a load gets the id
//! the saved world would have given it. An entity whose components are all
//! sparse is in the table of the archetype without components.
//!
//! **Binary** files start with [`SAVE_MAGIC`] and a little-endian `u32`
//! version, followed by postcard documents: the world's (ids, tables,
//! managers), then the relations' sections (version 2 on), then the sparse
//! sections (version 3 on). Columns of plain
//! ([`Registering::plain`](crate::Registering::plain), `bytemuck::Pod`)
//! components are the column's memory as is, written and read with one
//! copy; other columns are the postcard encodings of their values, one
//! after the other. Entity ids are little-endian `u64`s. A sparse section
//! is its entity ids followed by one column (name, raw flag, bytes) of as
//! many values. (Plain columns are written as raw memory only on
//! little-endian hosts; a big-endian host writes them through postcard and
//! refuses raw columns it reads.)
//!
//! **JSON** files are one object: `{"format": "doecs-world", "version": 3,
//! "ids": {...}, "tables": [{"entities": [...], "components": {"name":
//! [values]}}], "managers": {...}, "relations": {"ChildOf": [[source,
//! target, value], ...]}, "sparse": {"name": {"entities": [...],
//! "values": [...]}}}`, every value in its serde JSON form. `relations` and
//! `sparse` may be left out (older files have neither).
//!
//! Everything read is checked before it is trusted: a truncated or corrupt
//! file, an id listed twice, an entity in no table or in two, a column of
//! the wrong length, or a value that does not parse is a typed
//! [`LoadError`], never a panic. So is a sparse section that names an
//! entity the saved ids do not hold alive ([`LoadError::SparseEntity`]),
//! names one twice ([`LoadError::SparseRepeated`]), or holds a different
//! number of values ([`LoadError::ColumnLength`]), and a component saved
//! with one storage that the registry gives the other (a sparse section of
//! a component registered for tables, or a table column of one registered
//! sparse: [`LoadError::Storage`]). An unknown component name is an error,
//! or its column or sparse section is dropped with
//! [`LoadOptions::skip_unknown`]. A refused load drops the world it was
//! building, values included. Saving refuses a component the registry
//! cannot write, dense or sparse ([`SaveError::Unregistered`]), unless
//! [`SaveOptions::skip_unregistered`] says to leave it out.
//! Managers registered with
//! [`ComponentRegistry::register_manager`] are saved in their own form and
//! rebuilt after the entities are placed (see [`SaveManager`](doecs::SaveManager));
//! an unregistered manager is refused like an unregistered component.
//! Relationship pairs are saved per relation, in an order that rebuilds
//! every entity's targets and sources in their saved order (see
//! [`crate::relations`]); a relation without a registration is refused
//! likewise. Version 1 files (from before relations) and version 2 files
//! (from before sparse sections) still load. Resources are not part of a
//! save.

use crate::{ComponentRegistry, Registration, RegistryError};
use doecs::raw::{EntityTableImage, ImageError};
use doecs::{ComponentId, Entity, EntityError, World, WorldConfig};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{Read, Write};

mod fns;
mod load;
mod sparse;
pub(crate) use fns::SaveFns;
use fns::{Decoded, DecodedColumn};
pub use load::{load_world, load_world_from_bytes};

/// The first bytes of a binary save.
pub const SAVE_MAGIC: [u8; 8] = *b"DOECSWLD";
/// The format version this build writes and reads.
pub const SAVE_VERSION: u32 = 3;
/// The oldest format version this build reads (version 1 saves hold no
/// relationship pairs, version 2 saves no sparse sections).
const OLDEST_VERSION: u32 = 1;
/// The `format` field of a JSON save.
const JSON_FORMAT: &str = "doecs-world";

/// Which format [`save_world`] writes. [`load_world`] tells them apart by
/// their first bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SaveFormat {
    /// One JSON object, for people and diffs.
    Json,
    /// Postcard with raw plain columns, for games.
    Binary,
}

/// How [`save_world`] treats components it cannot write.
#[derive(Copy, Clone, Debug, Default)]
pub struct SaveOptions {
    /// Leave out components with no serde registration instead of refusing.
    pub skip_unregistered: bool,
}

/// How [`load_world`] treats what it does not know.
#[derive(Copy, Clone, Debug, Default)]
pub struct LoadOptions {
    /// Drop columns of component names the registry does not know, instead
    /// of refusing the file.
    pub skip_unknown: bool,
    /// Settings of the new world (its reuse threshold comes from the file).
    pub config: WorldConfig,
}

/// Why a save failed.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// A component has no serde registration.
    #[error("component \"{0}\" has no serde registration, so it cannot be saved (register it, or save with skip_unregistered)")]
    Unregistered(String),
    /// A manager has no save registration.
    #[error(
        "manager {0} is not registered for saving (register it, or save with skip_unregistered)"
    )]
    UnregisteredManager(&'static str),
    /// The ids cannot be saved (reserved ids pending).
    #[error(transparent)]
    Ids(#[from] ImageError),
    /// A relation has no save registration.
    #[error("relation {0} is not registered for saving (register_relation, or save with skip_unregistered)")]
    UnregisteredRelation(&'static str),
    /// A value could not be written.
    #[error("component \"{name}\": {message}")]
    Encode {
        /// The component.
        name: String,
        /// What the encoder said.
        message: String,
    },
    /// The writer failed.
    #[error("cannot write the save: {0}")]
    Io(#[from] std::io::Error),
}

/// Why a load failed. The world being built is dropped; nothing else changes.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The reader failed.
    #[error("cannot read the save: {0}")]
    Io(#[from] std::io::Error),
    /// Neither a binary save nor a JSON one.
    #[error("not a doecs world save (it starts neither with DOECSWLD nor with a JSON object)")]
    NotASave,
    /// A version this build does not read.
    #[error("save format version {0} is not supported (this build reads versions {OLDEST_VERSION} to {SAVE_VERSION})")]
    Version(u32),
    /// The file's structure is broken (truncated, corrupt).
    #[error("corrupt save: {0}")]
    Corrupt(String),
    /// A component name the registry does not know.
    #[error("the save has component \"{0}\", which is not registered (load with skip_unknown to drop it)")]
    UnknownComponent(String),
    /// A manager name the registry does not know.
    #[error(
        "the save has manager \"{0}\", which is not registered (load with skip_unknown to drop it)"
    )]
    UnknownManager(String),
    /// A relation name the registry does not know.
    #[error(
        "the save has relation \"{0}\", which is not registered (load with skip_unknown to drop it)"
    )]
    UnknownRelation(String),
    /// A relation's saved pairs were refused.
    #[error("relation \"{name}\": {message}")]
    Relation {
        /// The relation.
        name: String,
        /// Why.
        message: String,
    },
    /// A manager's saved state was refused.
    #[error("manager \"{name}\": {message}")]
    Manager {
        /// The manager.
        name: String,
        /// Why.
        message: String,
    },
    /// A component the registry knows but cannot read (no serde).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A value did not parse as its component.
    #[error("component \"{name}\": {message}")]
    Value {
        /// The component.
        name: String,
        /// What the decoder said.
        message: String,
    },
    /// A column does not hold one value per entity of its table.
    #[error("component \"{name}\": {actual} values for {expected} entities")]
    ColumnLength {
        /// The component.
        name: String,
        /// Entities in the table.
        expected: usize,
        /// Values found.
        actual: usize,
    },
    /// A raw column on a big-endian host.
    #[error("component \"{0}\" is stored as little-endian raw memory, which this big-endian host cannot read")]
    RawOnBigEndian(String),
    /// The saved ids are inconsistent.
    #[error("saved ids: {0}")]
    Ids(#[from] ImageError),
    /// A table names an entity that is not live in the saved ids, or twice,
    /// or a component twice.
    #[error("saved table: {0}")]
    Entity(#[from] EntityError),
    /// A live entity is in no table.
    #[error("entity {0} is live in the saved ids but in no table")]
    Unplaced(Entity),
    /// A component is saved with one storage and registered with the other.
    #[error("component \"{name}\" is saved with {saved} storage, but the registry gives it {registered} storage (register it as the saving program did)")]
    Storage {
        /// The component.
        name: String,
        /// How the file stores it.
        saved: Storage,
        /// How the registry stores it ([`Registering::sparse`](crate::Registering::sparse)).
        registered: Storage,
    },
    /// A sparse section names an entity that is not alive in the saved ids.
    #[error("sparse component \"{name}\": entity {entity} is not live in the saved ids")]
    SparseEntity {
        /// The component.
        name: String,
        /// The entity.
        entity: Entity,
    },
    /// A sparse section names an entity twice.
    #[error("sparse component \"{name}\" lists entity {entity} twice")]
    SparseRepeated {
        /// The component.
        name: String,
        /// The entity.
        entity: Entity,
    },
}

/// Where a component's values live: in archetype tables (the default) or
/// in a sparse set of their own ([`Registering::sparse`](crate::Registering::sparse)).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Storage {
    /// In archetype tables, one column per archetype.
    Table,
    /// In a sparse set keyed by entity.
    Sparse,
}

impl Storage {
    /// The storage of a component that is (`true`) or is not sparse.
    pub fn of_sparse(sparse: bool) -> Storage {
        if sparse {
            Storage::Sparse
        } else {
            Storage::Table
        }
    }

    /// `"table"` or `"sparse"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Storage::Table => "table",
            Storage::Sparse => "sparse",
        }
    }
}

impl std::fmt::Display for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

// --- The file model. ---

#[derive(Serialize, Deserialize)]
struct SavedIds {
    generations: Vec<u32>,
    free: Vec<u32>,
    retired: Vec<u32>,
    min_free_indices: u64,
}

impl SavedIds {
    fn of(image: EntityTableImage) -> SavedIds {
        SavedIds {
            generations: image.generations,
            free: image.free,
            retired: image.retired,
            min_free_indices: image.min_free_indices as u64,
        }
    }

    fn image(self) -> Result<EntityTableImage, LoadError> {
        Ok(EntityTableImage {
            generations: self.generations,
            free: self.free,
            retired: self.retired,
            min_free_indices: usize::try_from(self.min_free_indices)
                .map_err(|_| LoadError::Corrupt("min_free_indices does not fit".into()))?,
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonSave {
    format: String,
    version: u32,
    ids: SavedIds,
    tables: Vec<JsonTable>,
    #[serde(default)]
    managers: serde_json::Map<String, Value>,
    #[serde(default)]
    relations: serde_json::Map<String, Value>,
    /// Sparse sections by component name (version 3 on).
    #[serde(default)]
    sparse: std::collections::BTreeMap<String, sparse::JsonSparse>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonTable {
    entities: Vec<Entity>,
    components: serde_json::Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
struct BinarySave<'a> {
    ids: SavedIds,
    #[serde(borrow)]
    tables: Vec<BinaryTable<'a>>,
    #[serde(borrow)]
    managers: Vec<BinarySection<'a>>,
}

/// A named section of postcard bytes: a manager's state, or a relation's
/// pairs.
#[derive(Serialize, Deserialize)]
struct BinarySection<'a> {
    name: &'a str,
    #[serde(with = "serde_bytes")]
    bytes: &'a [u8],
}

#[derive(Serialize, Deserialize)]
struct BinaryTable<'a> {
    /// Little-endian `u64` entity bits.
    #[serde(with = "serde_bytes")]
    entities: &'a [u8],
    #[serde(borrow)]
    columns: Vec<BinaryColumn<'a>>,
}

#[derive(Serialize, Deserialize)]
struct BinaryColumn<'a> {
    name: &'a str,
    /// Raw little-endian memory (plain types) or postcard values.
    raw: bool,
    #[serde(with = "serde_bytes")]
    bytes: &'a [u8],
}

// --- Saving. ---

/// Columns ready to write: an archetype's, or a sparse component's (one
/// column then).
struct TableOut<'w> {
    entities: &'w [Entity],
    /// (name, functions, first value); each column holds one value per
    /// entity, packed at the type's size.
    columns: Vec<(&'w str, SaveFns, *const u8)>,
}

/// The registered name and save functions of component `id`, `None` when
/// the options say to leave it out, or why it cannot be saved.
fn save_fns<'w>(
    world: &'w World,
    registry: &'w ComponentRegistry,
    id: ComponentId,
    options: SaveOptions,
) -> Result<Option<(&'w str, SaveFns)>, SaveError> {
    let reg = registry.for_component(world, id);
    match reg.and_then(|r| r.save.map(|f| (r.name(), f))) {
        Some(found) => Ok(Some(found)),
        None if options.skip_unregistered => Ok(None),
        None => {
            let name = world
                .components()
                .get_info(id)
                .map_or_else(|| format!("{id:?}"), |i| i.name().to_owned());
            Err(SaveError::Unregistered(name))
        }
    }
}

/// The world's non-empty archetypes with each component's save functions.
fn tables<'w>(
    world: &'w World,
    registry: &'w ComponentRegistry,
    options: SaveOptions,
) -> Result<Vec<TableOut<'w>>, SaveError> {
    let mut out = Vec::new();
    for arch in doecs::raw::archetypes(world)
        .iter()
        .filter(|a| !a.is_empty())
    {
        let mut columns = Vec::new();
        for (i, &id) in arch.components().iter().enumerate() {
            if let Some((name, fns)) = save_fns(world, registry, id, options)? {
                let column = doecs::raw::ColumnIndex(i as u32);
                columns.push((name, fns, arch.column_ptr(column).as_ptr().cast_const()));
            }
        }
        out.push(TableOut {
            entities: arch.entities(),
            columns,
        });
    }
    Ok(out)
}

fn encode_error(name: &str, message: String) -> SaveError {
    SaveError::Encode {
        name: name.to_owned(),
        message,
    }
}

/// The JSON values of one column of `t`.
fn json_column(
    t: &TableOut<'_>,
    name: &str,
    fns: SaveFns,
    ptr: *const u8,
) -> Result<Vec<Value>, SaveError> {
    let mut values = Vec::with_capacity(t.entities.len());
    // SAFETY: `ptr` is a column (of an archetype, or a sparse set's
    // values) holding one live value per entity of `t`, and `&World`
    // keeps writers away.
    unsafe { (fns.to_json)(ptr, t.entities.len(), &mut values) }
        .map_err(|m| encode_error(name, m))?;
    Ok(values)
}

/// The postcard encodings of one column of `t`; empty for a column
/// written raw.
fn postcard_column(
    t: &TableOut<'_>,
    name: &str,
    fns: SaveFns,
    ptr: *const u8,
) -> Result<Vec<u8>, SaveError> {
    let mut buf = Vec::new();
    if !fns.writes_raw() {
        // SAFETY: as in `json_column`.
        unsafe { (fns.to_postcard)(ptr, t.entities.len(), &mut buf) }
            .map_err(|m| encode_error(name, m))?;
    }
    Ok(buf)
}

/// One column of `t` as written: its raw memory, or `buf` (from
/// [`postcard_column`]).
fn binary_column<'a>(
    t: &TableOut<'a>,
    (name, fns, ptr): (&'a str, SaveFns, *const u8),
    buf: &'a [u8],
) -> BinaryColumn<'a> {
    let raw = fns.writes_raw();
    let bytes = if raw {
        // SAFETY: a plain (`Pod`) column of one live value per entity: its
        // memory is `len * size` initialised bytes with no padding, borrowed
        // from `&World` for as long as `t` is.
        unsafe { std::slice::from_raw_parts(ptr, t.entities.len() * fns.size) }
    } else {
        buf
    };
    BinaryColumn { name, raw, bytes }
}

/// Writes `world` to `writer` in `format`. See the module docs.
pub fn save_world(
    world: &World,
    registry: &ComponentRegistry,
    writer: impl Write,
    format: SaveFormat,
    options: SaveOptions,
) -> Result<(), SaveError> {
    let mut relations = Vec::new();
    for (type_id, type_name, _) in world.relations().kinds() {
        match registry.relation_of(type_id) {
            Some(r) => relations.push(r),
            None if options.skip_unregistered => {}
            None => return Err(SaveError::UnregisteredRelation(type_name)),
        }
    }
    let ids = SavedIds::of(world.entities().image()?);
    let tables = tables(world, registry, options)?;
    let sparse = sparse::sparse_tables(world, registry, options)?;
    let mut managers = Vec::new();
    for (type_id, type_name, _) in world.managers().types() {
        match registry.manager_of(type_id) {
            Some(m) => managers.push(m),
            None if options.skip_unregistered => {}
            None => return Err(SaveError::UnregisteredManager(type_name)),
        }
    }
    let mut writer = std::io::BufWriter::with_capacity(1 << 16, writer);
    match format {
        SaveFormat::Json => {
            let mut json_tables = Vec::with_capacity(tables.len());
            for t in &tables {
                let mut components = serde_json::Map::new();
                for &(name, fns, ptr) in &t.columns {
                    let values = json_column(t, name, fns, ptr)?;
                    components.insert(name.to_owned(), Value::Array(values));
                }
                json_tables.push(JsonTable {
                    entities: t.entities.to_vec(),
                    components,
                });
            }
            let mut json_managers = serde_json::Map::new();
            for m in &managers {
                if let Some(saved) = (m.to_json)(world) {
                    json_managers
                        .insert(m.name.clone(), saved.map_err(|e| encode_error(&m.name, e))?);
                }
            }
            let mut json_relations = serde_json::Map::new();
            for r in &relations {
                json_relations.insert(
                    r.name.clone(),
                    (r.to_json)(world).map_err(|e| encode_error(&r.name, e))?,
                );
            }
            let file = JsonSave {
                format: JSON_FORMAT.to_owned(),
                version: SAVE_VERSION,
                ids,
                tables: json_tables,
                managers: json_managers,
                relations: json_relations,
                sparse: sparse::json_sections(&sparse)?,
            };
            serde_json::to_writer(&mut writer, &file)
                .map_err(|e| SaveError::Io(std::io::Error::other(e)))?;
        }
        SaveFormat::Binary => {
            // Owned bytes first (entity ids, postcard columns), then views.
            let mut owned: Vec<Vec<Vec<u8>>> = Vec::with_capacity(tables.len());
            for t in &tables {
                let mut bufs = vec![entity_bytes(t.entities)];
                for &(name, fns, ptr) in &t.columns {
                    bufs.push(postcard_column(t, name, fns, ptr)?);
                }
                owned.push(bufs);
            }
            let mut bin_tables = Vec::with_capacity(tables.len());
            for (t, bufs) in tables.iter().zip(&owned) {
                let columns = (t.columns.iter())
                    .zip(&bufs[1..])
                    .map(|(&column, buf)| binary_column(t, column, buf))
                    .collect();
                bin_tables.push(BinaryTable {
                    entities: &bufs[0],
                    columns,
                });
            }
            writer.write_all(&SAVE_MAGIC)?;
            writer.write_all(&SAVE_VERSION.to_le_bytes())?;
            let mut saved_managers = Vec::new();
            for m in &managers {
                if let Some(saved) = (m.to_postcard)(world) {
                    saved_managers.push((
                        m.name.as_str(),
                        saved.map_err(|e| encode_error(&m.name, e))?,
                    ));
                }
            }
            let file = BinarySave {
                ids,
                tables: bin_tables,
                managers: saved_managers
                    .iter()
                    .map(|(name, bytes)| BinarySection { name, bytes })
                    .collect(),
            };
            let mut saved_relations = Vec::with_capacity(relations.len());
            for r in &relations {
                saved_relations.push((
                    r.name.as_str(),
                    (r.to_postcard)(world).map_err(|e| encode_error(&r.name, e))?,
                ));
            }
            let sections: Vec<BinarySection<'_>> = saved_relations
                .iter()
                .map(|(name, bytes)| BinarySection { name, bytes })
                .collect();
            let sparse_owned = sparse::binary_buffers(&sparse)?;
            let sparse_sections = sparse::binary_sections(&sparse, &sparse_owned);
            let io = |e: postcard::Error| match e {
                postcard::Error::SerializeBufferFull => {
                    SaveError::Io(std::io::Error::other("write failed"))
                }
                e => SaveError::Io(std::io::Error::other(e)),
            };
            // Version 3: the version 1 document, the relations (version 2),
            // then the sparse sections.
            postcard::to_io(&file, &mut writer).map_err(io)?;
            postcard::to_io(&sections, &mut writer).map_err(io)?;
            postcard::to_io(&sparse_sections, &mut writer).map_err(io)?;
        }
    }
    writer.flush()?;
    Ok(())
}

fn entity_bytes(entities: &[Entity]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entities.len() * 8);
    for e in entities {
        out.extend_from_slice(&e.to_bits().to_le_bytes());
    }
    out
}

/// `world.save(...)` and `World::load(...)`: [`save_world`] and
/// [`load_world`] as methods, with default options.
///
/// ```
/// use doecs::World;
/// use doecs_registry::{ComponentRegistry, SaveFormat, WorldSaveExt};
/// #[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
/// struct Hp(u32);
///
/// let mut registry = ComponentRegistry::new();
/// registry.register::<Hp>("hp");
/// let mut world = World::new();
/// let e = world.spawn((Hp(7),));
/// let mut file = Vec::new();
/// world.save(&mut file, SaveFormat::Binary, &registry).unwrap();
/// let loaded = World::load(&file[..], &registry).unwrap();
/// assert_eq!(loaded.get::<Hp>(e), Ok(&Hp(7)));
/// ```
pub trait WorldSaveExt: Sized {
    /// Writes the world (see [`save_world`]).
    fn save(
        &self,
        writer: impl Write,
        format: SaveFormat,
        registry: &ComponentRegistry,
    ) -> Result<(), SaveError>;
    /// Reads a world (see [`load_world`]).
    fn load(reader: impl Read, registry: &ComponentRegistry) -> Result<Self, LoadError>;
}

impl WorldSaveExt for World {
    fn save(
        &self,
        writer: impl Write,
        format: SaveFormat,
        registry: &ComponentRegistry,
    ) -> Result<(), SaveError> {
        save_world(self, registry, writer, format, SaveOptions::default())
    }

    fn load(reader: impl Read, registry: &ComponentRegistry) -> Result<World, LoadError> {
        load_world(reader, registry, LoadOptions::default())
    }
}
