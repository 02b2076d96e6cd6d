//! Sparse sections: the values of sparse components
//! ([`Registering::sparse`](crate::Registering::sparse)), which live in no
//! archetype table. A section is one component's entities and one column of
//! values, written and read by the same functions as a table's columns
//! ([`SaveFns`]); a load inserts each value into its entity once the tables
//! are placed, after the checks a table gets (every entity alive in the
//! saved ids, none twice, one value per entity, the storage the registry
//! gives the component).

use super::load::{decode_binary, decode_json, entities_from_bytes, lookup, ColumnIn, Values};
use super::*;
use std::collections::{BTreeMap, HashSet};

/// One sparse component's values in a JSON save.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JsonSparse {
    entities: Vec<Entity>,
    values: Vec<Value>,
}

/// One sparse component's values in a binary save: little-endian `u64`
/// entity ids, then a column of as many values.
#[derive(Serialize, Deserialize)]
pub(super) struct BinarySparse<'a> {
    #[serde(with = "serde_bytes")]
    entities: &'a [u8],
    #[serde(borrow)]
    column: BinaryColumn<'a>,
}

// --- Saving. ---

/// Every sparse component some entity has, as a one-column table.
pub(super) fn sparse_tables<'w>(
    world: &'w World,
    registry: &'w ComponentRegistry,
    options: SaveOptions,
) -> Result<Vec<TableOut<'w>>, SaveError> {
    let mut out = Vec::new();
    for set in doecs::raw::sparse_columns(world) {
        if set.entities.is_empty() {
            continue;
        }
        if let Some((name, fns)) = save_fns(world, registry, set.component, options)? {
            out.push(TableOut {
                entities: set.entities,
                columns: vec![(name, fns, set.values.as_ptr().cast_const())],
            });
        }
    }
    Ok(out)
}

/// The JSON sections, by component name.
pub(super) fn json_sections(
    tables: &[TableOut<'_>],
) -> Result<BTreeMap<String, JsonSparse>, SaveError> {
    let mut out = BTreeMap::new();
    for t in tables {
        let (name, fns, ptr) = t.columns[0];
        let values = json_column(t, name, fns, ptr)?;
        out.insert(
            name.to_owned(),
            JsonSparse {
                entities: t.entities.to_vec(),
                values,
            },
        );
    }
    Ok(out)
}

/// The bytes a binary section owns: its entity ids and its postcard values
/// (empty for a raw column).
pub(super) fn binary_buffers(tables: &[TableOut<'_>]) -> Result<Vec<[Vec<u8>; 2]>, SaveError> {
    (tables.iter())
        .map(|t| {
            let (name, fns, ptr) = t.columns[0];
            Ok([
                entity_bytes(t.entities),
                postcard_column(t, name, fns, ptr)?,
            ])
        })
        .collect()
}

/// The binary sections over `tables` and their [`binary_buffers`].
pub(super) fn binary_sections<'a>(
    tables: &'a [TableOut<'a>],
    buffers: &'a [[Vec<u8>; 2]],
) -> Vec<BinarySparse<'a>> {
    (tables.iter().zip(buffers))
        .map(|(t, [entities, values])| BinarySparse {
            entities,
            column: binary_column(t, t.columns[0], values),
        })
        .collect()
}

// --- Loading. ---

/// Inserts the binary sections' values into `world`, whose tables are
/// placed.
pub(super) fn load_binary_sections(
    world: &mut World,
    registry: &ComponentRegistry,
    options: LoadOptions,
    sections: &[BinarySparse<'_>],
) -> Result<(), LoadError> {
    let mut names = HashSet::with_capacity(sections.len());
    for section in sections {
        let name = section.column.name;
        if !names.insert(name) {
            return Err(LoadError::Corrupt(format!(
                "sparse component \"{name}\" has two sections"
            )));
        }
        let Some((id, fns, reg)) = lookup(world, registry, name, options, Storage::Sparse)? else {
            continue;
        };
        let entities = entities_from_bytes(section.entities)?;
        check_entities(world, name, &entities)?;
        let values = decode_binary(&section.column, entities.len(), fns, reg)?;
        insert(world, &entities, ColumnIn::new(id, fns, values))?;
    }
    Ok(())
}

/// Inserts the JSON sections' values into `world`, whose tables are
/// placed.
pub(super) fn load_json_sections(
    world: &mut World,
    registry: &ComponentRegistry,
    options: LoadOptions,
    sections: &BTreeMap<String, JsonSparse>,
) -> Result<(), LoadError> {
    for (name, section) in sections {
        let Some((id, fns, reg)) = lookup(world, registry, name, options, Storage::Sparse)? else {
            continue;
        };
        check_entities(world, name, &section.entities)?;
        let values = decode_json(name, &section.values, section.entities.len(), fns, reg)?;
        insert(world, &section.entities, ColumnIn::new(id, fns, values))?;
    }
    Ok(())
}

/// Refuses a section naming an entity that is not alive, or one twice.
fn check_entities(world: &World, name: &str, entities: &[Entity]) -> Result<(), LoadError> {
    let mut seen = HashSet::with_capacity(entities.len());
    for &entity in entities {
        if !world.alive(entity) {
            return Err(LoadError::SparseEntity {
                name: name.to_owned(),
                entity,
            });
        }
        if !seen.insert(entity) {
            return Err(LoadError::SparseRepeated {
                name: name.to_owned(),
                entity,
            });
        }
    }
    Ok(())
}

/// Moves value `k` of `column` into `entities[k]`, as one world operation
/// (commands that hooks record wait until every value is in, so none can
/// despawn an entity of the section half way).
fn insert(
    world: &mut World,
    entities: &[Entity],
    mut column: ColumnIn<'_>,
) -> Result<(), LoadError> {
    let (id, size, base) = (column.id, column.size, column.values.as_ptr());
    let mut moved = 0;
    let result = doecs::raw::as_one_operation(world, |world| {
        for &entity in entities {
            // SAFETY: the column holds one value of component `id` per
            // entity, packed at `size` (`check_entities` and the decoders
            // made sure), so value `moved` lies inside it and is live: a
            // decoded value of the registered type, or the bytes of a plain
            // (`bytemuck::Pod`) type, valid at any alignment. On `Ok` the
            // world owns it and it counts as moved; on `Err` it is still
            // the column's.
            unsafe { doecs::raw::insert(world, entity, id, base.add(moved * size)) }?;
            moved += 1;
        }
        Ok(())
    });
    if let Values::Decoded(values) = &mut column.values {
        // SAFETY: exactly the first `moved` values moved into the world.
        unsafe { values.forget_moved(moved) };
    }
    result.map_err(LoadError::Entity)
}
