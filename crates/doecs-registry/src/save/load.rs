//! Loading a save (see the parent module for both formats): every byte
//! read is checked before it is trusted, and a refused file leaves nothing
//! behind. Binary plain columns are placed with one copy each; other
//! columns are decoded into vectors the world takes over. Sparse sections
//! are inserted once the tables are placed (see [`super::sparse`]).

use super::*;

/// One column about to be placed (or, for a sparse section, inserted).
pub(super) struct ColumnIn<'f> {
    pub(super) id: ComponentId,
    /// Bytes per value.
    pub(super) size: usize,
    pub(super) values: Values<'f>,
}

impl<'f> ColumnIn<'f> {
    pub(super) fn new(id: ComponentId, fns: SaveFns, values: Values<'f>) -> Self {
        ColumnIn {
            id,
            size: fns.size,
            values,
        }
    }
}

/// Where a column's values come from.
pub(super) enum Values<'f> {
    /// Decoded values the world takes over.
    Decoded(Decoded),
    /// A plain (`bytemuck::Pod`) column's bytes in the file, in the host's
    /// byte order and exactly `count * size` long: copied into the world
    /// with no step in between.
    Raw(&'f [u8]),
}

impl Values<'_> {
    pub(super) fn as_ptr(&self) -> *const u8 {
        match self {
            Values::Decoded(d) => d.as_ptr(),
            Values::Raw(bytes) => bytes.as_ptr(),
        }
    }
}

/// Reads a world saved by [`save_world`] (either format) from `reader`.
pub fn load_world(
    mut reader: impl Read,
    registry: &ComponentRegistry,
    options: LoadOptions,
) -> Result<World, LoadError> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes)?;
    load_world_from_bytes(&bytes, registry, options)
}

/// [`load_world`] from bytes in memory.
pub fn load_world_from_bytes(
    bytes: &[u8],
    registry: &ComponentRegistry,
    options: LoadOptions,
) -> Result<World, LoadError> {
    if let Some(rest) = bytes.strip_prefix(&SAVE_MAGIC) {
        return load_binary(rest, registry, options);
    }
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => load_json(bytes, registry, options),
        _ => Err(LoadError::NotASave),
    }
}

fn load_binary(
    bytes: &[u8],
    registry: &ComponentRegistry,
    options: LoadOptions,
) -> Result<World, LoadError> {
    let (version, body) = bytes
        .split_first_chunk::<4>()
        .ok_or_else(|| LoadError::Corrupt("truncated header".into()))?;
    let version = u32::from_le_bytes(*version);
    if !(OLDEST_VERSION..=SAVE_VERSION).contains(&version) {
        return Err(LoadError::Version(version));
    }
    let (file, rest) = postcard::take_from_bytes::<BinarySave<'_>>(body)
        .map_err(|e| LoadError::Corrupt(e.to_string()))?;
    let (relations, rest) = match version {
        1 => (Vec::new(), rest),
        _ => postcard::take_from_bytes::<Vec<BinarySection<'_>>>(rest)
            .map_err(|e| LoadError::Corrupt(e.to_string()))?,
    };
    let (sparse_sections, rest) = match version {
        1 | 2 => (Vec::new(), rest),
        _ => postcard::take_from_bytes::<Vec<sparse::BinarySparse<'_>>>(rest)
            .map_err(|e| LoadError::Corrupt(e.to_string()))?,
    };
    if !rest.is_empty() {
        return Err(LoadError::Corrupt(format!(
            "{} bytes after the end",
            rest.len()
        )));
    }
    let mut world = new_world(file.ids, registry, options)?;
    for table in &file.tables {
        let entities = entities_from_bytes(table.entities)?;
        let mut columns = Vec::with_capacity(table.columns.len());
        for c in &table.columns {
            let Some((id, fns, reg)) = lookup(&world, registry, c.name, options, Storage::Table)?
            else {
                continue;
            };
            let values = decode_binary(c, entities.len(), fns, reg)?;
            columns.push(ColumnIn::new(id, fns, values));
        }
        place(&mut world, &entities, columns)?;
    }
    doecs::raw::finish_placing(&world).map_err(LoadError::Unplaced)?;
    sparse::load_binary_sections(&mut world, registry, options, &sparse_sections)?;
    // Pairs first: managers that follow the hierarchy (transforms) take
    // their links from `ChildOf` when they join the world.
    for r in &relations {
        add_relation(&mut world, registry, r.name, options, |reg, world| {
            (reg.from_postcard)(world, r.bytes)
        })?;
    }
    for m in &file.managers {
        add_manager(&mut world, registry, m.name, options, |reg, world| {
            (reg.from_postcard)(m.bytes, world, reg.notice)
        })?;
    }
    Ok(world)
}

/// Little-endian `u64` entity ids.
pub(super) fn entities_from_bytes(bytes: &[u8]) -> Result<Vec<Entity>, LoadError> {
    if !bytes.len().is_multiple_of(8) {
        return Err(LoadError::Corrupt("entity ids are not whole u64s".into()));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|b| Entity::from_bits(u64::from_le_bytes(b.try_into().expect("8 bytes"))))
        .collect())
}

/// The values of binary column `c`, which must hold `count` of them,
/// checked by the registration.
pub(super) fn decode_binary<'f>(
    c: &BinaryColumn<'f>,
    count: usize,
    fns: SaveFns,
    reg: &Registration,
) -> Result<Values<'f>, LoadError> {
    if !c.raw {
        let values = (fns.from_postcard)(c.bytes, count).map_err(|message| LoadError::Value {
            name: c.name.to_owned(),
            message,
        })?;
        checked(reg, &*values)?;
        return Ok(Values::Decoded(values));
    }
    let from_raw = fns.from_raw.ok_or_else(|| {
        LoadError::Corrupt(format!(
            "component \"{}\" is not plain, yet stored raw",
            c.name
        ))
    })?;
    if cfg!(target_endian = "big") {
        return Err(LoadError::RawOnBigEndian(c.name.to_owned()));
    }
    let wrong_length = || LoadError::ColumnLength {
        name: c.name.to_owned(),
        expected: count,
        actual: c.bytes.len() / fns.size.max(1),
    };
    if reg.is_validated() {
        // The check needs typed values.
        let values = from_raw(c.bytes, count).ok_or_else(wrong_length)?;
        checked(reg, &*values)?;
        Ok(Values::Decoded(values))
    } else if Some(c.bytes.len()) == count.checked_mul(fns.size) {
        Ok(Values::Raw(c.bytes))
    } else {
        Err(wrong_length())
    }
}

/// The JSON values of component `name`, which must be `count`, checked by
/// the registration.
pub(super) fn decode_json(
    name: &str,
    values: &[Value],
    count: usize,
    fns: SaveFns,
    reg: &Registration,
) -> Result<Values<'static>, LoadError> {
    if values.len() != count {
        return Err(LoadError::ColumnLength {
            name: name.to_owned(),
            expected: count,
            actual: values.len(),
        });
    }
    let values = (fns.from_json)(values).map_err(|message| LoadError::Value {
        name: name.to_owned(),
        message,
    })?;
    checked(reg, &*values)?;
    Ok(Values::Decoded(values))
}

fn load_json(
    bytes: &[u8],
    registry: &ComponentRegistry,
    options: LoadOptions,
) -> Result<World, LoadError> {
    let file: JsonSave =
        serde_json::from_slice(bytes).map_err(|e| LoadError::Corrupt(e.to_string()))?;
    if file.format != JSON_FORMAT {
        return Err(LoadError::NotASave);
    }
    if !(OLDEST_VERSION..=SAVE_VERSION).contains(&file.version) {
        return Err(LoadError::Version(file.version));
    }
    let mut world = new_world(file.ids, registry, options)?;
    for table in &file.tables {
        let mut columns = Vec::with_capacity(table.components.len());
        for (name, values) in &table.components {
            let Some((id, fns, reg)) = lookup(&world, registry, name, options, Storage::Table)?
            else {
                continue;
            };
            let values = values.as_array().ok_or_else(|| LoadError::Value {
                name: name.clone(),
                message: "expected an array of values".into(),
            })?;
            let values = decode_json(name, values, table.entities.len(), fns, reg)?;
            columns.push(ColumnIn::new(id, fns, values));
        }
        place(&mut world, &table.entities, columns)?;
    }
    doecs::raw::finish_placing(&world).map_err(LoadError::Unplaced)?;
    sparse::load_json_sections(&mut world, registry, options, &file.sparse)?;
    for (name, value) in &file.relations {
        add_relation(&mut world, registry, name, options, |reg, world| {
            (reg.from_json)(world, value)
        })?;
    }
    for (name, value) in &file.managers {
        add_manager(&mut world, registry, name, options, |reg, world| {
            (reg.from_json)(value, world, reg.notice)
        })?;
    }
    Ok(world)
}

/// Adds the saved pairs of relation `name` to `world` with `add`.
fn add_relation(
    world: &mut World,
    registry: &ComponentRegistry,
    name: &str,
    options: LoadOptions,
    add: impl FnOnce(&crate::relations::RelationRegistration, &mut World) -> Result<(), String>,
) -> Result<(), LoadError> {
    match registry.relation_by_name(name) {
        Some(reg) => add(reg, world).map_err(|message| LoadError::Relation {
            name: name.to_owned(),
            message,
        }),
        None if options.skip_unknown => Ok(()),
        None => Err(LoadError::UnknownRelation(name.to_owned())),
    }
}

/// Rebuilds the saved manager `name` into `world` with `add`.
fn add_manager(
    world: &mut World,
    registry: &ComponentRegistry,
    name: &str,
    options: LoadOptions,
    add: impl FnOnce(&crate::managers::ManagerRegistration, &mut World) -> Result<(), String>,
) -> Result<(), LoadError> {
    match registry.manager_by_name(name) {
        Some(reg) => add(reg, world).map_err(|message| LoadError::Manager {
            name: name.to_owned(),
            message,
        }),
        None if options.skip_unknown => Ok(()),
        None => Err(LoadError::UnknownManager(name.to_owned())),
    }
}

/// A world holding the saved ids, with every registered type installed.
fn new_world(
    ids: SavedIds,
    registry: &ComponentRegistry,
    options: LoadOptions,
) -> Result<World, LoadError> {
    let mut world = doecs::raw::world_from_entity_image(&ids.image()?, options.config)?;
    registry.install(&mut world)?;
    Ok(world)
}

/// The world id and save functions of component `name`, saved with
/// storage `saved`, or `None` when it is unknown and the options say to
/// skip it.
pub(super) fn lookup<'r>(
    world: &World,
    registry: &'r ComponentRegistry,
    name: &str,
    options: LoadOptions,
    saved: Storage,
) -> Result<Option<(ComponentId, SaveFns, &'r Registration)>, LoadError> {
    let Some(reg) = registry.by_name(name) else {
        return if options.skip_unknown {
            Ok(None)
        } else {
            Err(LoadError::UnknownComponent(name.to_owned()))
        };
    };
    let fns = reg
        .save
        .ok_or_else(|| RegistryError::NotSerde(name.to_owned()))?;
    let id = reg.component_id(world).expect("installed in new_world");
    let registered = Storage::of_sparse(world.components().info(id).is_sparse());
    if registered != saved {
        return Err(LoadError::Storage {
            name: name.to_owned(),
            saved,
            registered,
        });
    }
    Ok(Some((id, fns, reg)))
}

/// Runs the registration's check ([`Registering::validate`](crate::Registering::validate))
/// on every decoded value: a file is outside input like a level.
fn checked(reg: &Registration, values: &dyn DecodedColumn) -> Result<(), LoadError> {
    if !reg.is_validated() {
        return Ok(());
    }
    values
        .check_each(&|v| reg.validate_value(v))
        .map_err(|(i, m)| LoadError::Value {
            name: reg.name().to_owned(),
            message: format!("value {i}: {m}"),
        })
}

/// Places one table's rows, moving the decoded values into the world.
fn place(
    world: &mut World,
    entities: &[Entity],
    mut columns: Vec<ColumnIn<'_>>,
) -> Result<(), LoadError> {
    for c in &columns {
        if let Values::Decoded(d) = &c.values {
            debug_assert_eq!(d.len(), entities.len(), "checked by the decoders");
        }
    }
    let ids: Vec<ComponentId> = columns.iter().map(|c| c.id).collect();
    let ptrs: Vec<*const u8> = columns.iter().map(|c| c.values.as_ptr()).collect();
    // Column `i` holds `entities.len()` values of component `ids[i]`: each
    // decoder made exactly `count` values of the registered type, whose world
    // id is `ids[i]`, and a raw column is `count * size` bytes of a plain type
    // (`bytemuck::Pod`: any bytes are valid values, and the world copies them
    // bytewise, so their alignment in the file does not matter).
    // SAFETY: the columns hold the values described above. On `Ok` the world
    // moved the decoded ones out, so those columns forget them; on `Err` they
    // still own them and drop them.
    unsafe { doecs::raw::place_columns(world, entities, &ids, &ptrs) }?;
    for c in &mut columns {
        if let Values::Decoded(d) = &mut c.values {
            // SAFETY: every value just moved into the world.
            unsafe { d.forget_moved(entities.len()) };
        }
    }
    Ok(())
}
