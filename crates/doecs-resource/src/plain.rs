//! Plain archetype components: values that are just bytes, copied straight
//! from the blob into archetype chunks.
//!
//! All plain types of a blob are spawned **together**, as the step that
//! creates the entities: each entity is placed directly in the archetype of
//! its full set of plain components, so no entity goes through a chain of
//! archetype moves. Entities are grouped by that set (a bitmask over the
//! blob's plain types, built from the sorted `entity_index` arrays with one OR
//! per instance). When every entity has the same set, which is the common
//! case for a level, the whole blob is one group and each column is copied
//! from the blob with one `memcpy` per chunk, with no intermediate buffer.
//! Otherwise each group's values are gathered into one buffer per column in
//! one forward pass, then copied the same way.
//!
//! **Registering plain types.** The usual way is one entry in a
//! [`doecs_registry::ComponentRegistry`]:
//! `registry.register::<Velocity>("velocity").plain()` for a type that is
//! serde serialisable and `bytemuck::Pod`, with `.validate(check)` for values
//! the program cannot use. [`Compiler::register_registry`] and
//! [`Spawner::register_registry`] (or `from_registry`, which adds the
//! built-in components) take every plain entry: the compiler reads the
//! component's JSON with serde ([`Registration::json_to_bytes`]), runs the
//! check and stores the bytes; the spawner finds the world's component by
//! the Rust type, runs the same check on every instance while loading, and
//! copies the columns as described above. Entries that are not plain are
//! left out (a level cannot hold them). **Marker** (zero-sized) types work
//! the same way: in a level a marker is written `"frozen": null` (or
//! `true`, or `{}`; `false` is refused: leave the component out instead),
//! compiled to a block of zero-size instances, and spawned so the entities
//! carry it. Runtime components with no Rust type are registered with
//! [`Spawner::register_plain_dynamic`], and Rust types can still be
//! registered one by one with [`Spawner::register_plain`] and the
//! [`PlainBytes`] trait, which records the scalar width.
//!
//! **Byte order.** Values in the blob are little-endian. For [`PlainBytes`]
//! and dynamic types, a big-endian host byte-swaps each column per scalar
//! ([`PlainBytes::SCALAR_WIDTH`]) while gathering. A `bytemuck::Pod` type
//! does not say how wide its scalars are, so the registry path stores and
//! spawns the host's bytes as they are, and is therefore **little-endian
//! hosts only**: on a big-endian host every registered plain type larger than
//! one byte is refused, with [`CompileError::Component`] when a level holding
//! it is compiled and [`Problem::Rejected`] when a blob holding instances of
//! it is loaded (markers and one-byte types work everywhere). No wrong value
//! is ever spawned.
//!
//! [`Compiler::register_registry`]: crate::Compiler::register_registry
//! [`Spawner::register_registry`]: crate::Spawner::register_registry
//! [`Spawner::register_plain_dynamic`]: crate::Spawner::register_plain_dynamic
//! [`Spawner::register_plain`]: crate::Spawner::register_plain
//! [`Registration::json_to_bytes`]: doecs_registry::Registration::json_to_bytes
//! [`CompileError::Component`]: crate::CompileError::Component
//! [`Problem::Rejected`]: crate::Problem::Rejected

use crate::error::SpawnError;
use crate::spawner::Spawned;
use crate::view::BlockView;
use doecs::raw::ParentsFirst;
use doecs::{ComponentDescriptor, ComponentId, Components, Entity, World};
use doecs_registry::{Registration, RegistryError};
use serde_json::Value;
use std::alloc::Layout;
use std::any::TypeId;

/// Plain components the spawner copies straight from blob bytes:
/// `bytemuck::Pod` types (no padding, every bit pattern valid, which is what
/// makes the copy sound) made of little-endian scalars of one width, which
/// is what a big-endian host needs to byte-swap them. A safe trait: `Pod`
/// carries the safety promise, and a wrong `SCALAR_WIDTH` only gives wrong
/// values on big-endian hosts, never undefined behaviour.
pub trait PlainBytes: bytemuck::Pod + Send + Sync {
    /// Width in bytes of the scalars the type is made of.
    const SCALAR_WIDTH: usize;
}

macro_rules! plain_scalars {
    ($($t:ty),*) => {$(
        impl PlainBytes for $t {
            const SCALAR_WIDTH: usize = std::mem::size_of::<$t>();
        }
    )*};
}
plain_scalars!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

impl<T: PlainBytes, const N: usize> PlainBytes for [T; N] {
    const SCALAR_WIDTH: usize = T::SCALAR_WIDTH;
}

macro_rules! plain_glam {
    ($($t:ty),*) => {$(
        impl PlainBytes for $t {
            const SCALAR_WIDTH: usize = 4;
        }
    )*};
}
plain_glam!(glam::Vec2, glam::Vec3, glam::Vec4, glam::Quat);

/// Reads one `T` from its little-endian blob bytes.
///
/// # Panics
/// If `le.len()` is not `size_of::<T>()` (callers check the block's
/// instance size first).
pub(crate) fn read_le<T: PlainBytes>(le: &[u8]) -> T {
    assert_eq!(le.len(), std::mem::size_of::<T>(), "one instance");
    let mut native = Vec::new();
    let bytes = if cfg!(target_endian = "little") {
        le
    } else {
        append_native(&mut native, le, T::SCALAR_WIDTH);
        &native[..]
    };
    bytemuck::pod_read_unaligned(bytes)
}

/// The plain (`bytemuck::Pod`) entries of `registry`, the ones levels can
/// hold, in registration order; refused if two of them share a name hash
/// (the blob names components by hash).
pub(crate) fn plain_entries(
    registry: &doecs_registry::ComponentRegistry,
) -> Result<Vec<&Registration>, crate::error::RegistrationError> {
    let plain: Vec<&Registration> = registry.iter().filter(|r| r.is_plain()).collect();
    for (i, reg) in plain.iter().enumerate() {
        let hash = doecs::raw::name_hash(reg.name());
        if let Some(other) = plain[..i]
            .iter()
            .find(|o| doecs::raw::name_hash(o.name()) == hash)
        {
            return Err(crate::error::RegistrationError::HashCollision {
                name: reg.name().into(),
                other: other.name().into(),
            });
        }
    }
    Ok(plain)
}

/// Why the registry path refuses a plain type on this host (see the module
/// docs).
pub(crate) const BIG_ENDIAN_HOST: &str = "registered plain components are stored as the \
     host's bytes and levels are little-endian; this host is big-endian \
     (register the type with `Spawner::register_plain` and `PlainBytes` instead)";

/// Whether the registry path refuses `reg` on this host: a type of more than
/// one byte on a big-endian host.
pub(crate) fn refused_on_this_host(reg: &Registration) -> bool {
    cfg!(target_endian = "big") && reg.layout().size() > 1
}

/// The compile function of a plain registration: the component's JSON read
/// with serde (a marker also from `null`, `true` or `{}`), checked by the
/// registration's validator, as little-endian bytes.
pub(crate) fn compile_registered(reg: &Registration, v: &Value) -> Result<Vec<u8>, String> {
    if refused_on_this_host(reg) {
        return Err(BIG_ENDIAN_HOST.into());
    }
    let marker_json = match v {
        Value::Null | Value::Bool(true) => true,
        Value::Object(map) => map.is_empty(),
        _ => false,
    };
    let bytes = if reg.layout().size() == 0 && marker_json {
        Vec::new()
    } else {
        match reg.json_to_bytes(v) {
            Ok(bytes) => bytes,
            Err(_) if reg.layout().size() == 0 => {
                return Err(format!(
                    "a marker component is written as null, true or {{}} (leave it out \
                     for an entity without it), found {v}"
                ))
            }
            Err(RegistryError::Json { source, .. }) => return Err(source.to_string()),
            Err(e) => return Err(e.to_string()),
        }
    };
    reg.validate_bytes(&bytes)?;
    Ok(bytes)
}

/// How a plain component is identified in a world.
#[derive(Clone, Debug)]
pub(crate) struct PlainType {
    pub(crate) name: String,
    pub(crate) layout: Layout,
    pub(crate) scalar_width: usize,
    /// For a Rust type: its id is found by type.
    pub(crate) type_id: Option<TypeId>,
    pub(crate) descriptor: ComponentDescriptor,
}

impl PlainType {
    pub(crate) fn typed<T: PlainBytes>(name: &str) -> Self {
        PlainType {
            name: name.to_owned(),
            layout: Layout::new::<T>(),
            scalar_width: T::SCALAR_WIDTH,
            type_id: Some(TypeId::of::<T>()),
            descriptor: ComponentDescriptor::of_named::<T>(name),
        }
    }

    /// A plain registration of a [`doecs_registry::ComponentRegistry`]. Its
    /// bytes are never swapped: the registry path is refused on big-endian
    /// hosts (see the module docs).
    pub(crate) fn registered(reg: &Registration) -> Self {
        PlainType {
            name: reg.name().to_owned(),
            layout: reg.layout(),
            scalar_width: 1,
            type_id: Some(reg.type_id()),
            descriptor: reg.descriptor(),
        }
    }

    pub(crate) fn dynamic(name: &str, layout: Layout, scalar_width: usize) -> Self {
        PlainType {
            name: name.to_owned(),
            layout,
            scalar_width: scalar_width.max(1),
            type_id: None,
            descriptor: ComponentDescriptor::dynamic(name, layout),
        }
    }

    /// Finds this component in `world` without changing it: `Ok(Some(id))`
    /// if present and compatible, `Ok(None)` if it can be registered.
    pub(crate) fn resolve(
        &self,
        components: &Components,
    ) -> Result<Option<ComponentId>, SpawnError> {
        let conflict = |reason: String| SpawnError::WorldConflict {
            name: self.name.clone(),
            reason,
        };
        if let Some(type_id) = self.type_id {
            if let Some(id) = components.by_type_id(type_id) {
                return Ok(Some(id));
            }
        }
        if let Some(id) = components.id_by_name(&self.name) {
            let info = components.info(id);
            if self.type_id.is_some() {
                return Err(conflict(
                    "the name belongs to another component type".into(),
                ));
            }
            if !info.is_plain_bytes() {
                return Err(conflict(
                    "the world's component of this name is not plain bytes".into(),
                ));
            }
            if info.layout() != self.layout {
                return Err(conflict(format!(
                    "the world's layout is {:?}, the spawner's is {:?}",
                    info.layout(),
                    self.layout
                )));
            }
            return Ok(Some(id));
        }
        if let Some(id) = components.id_by_hash(doecs::raw::name_hash(&self.name)) {
            return Err(conflict(format!(
                "its name hash collides with `{}`",
                components.info(id).name()
            )));
        }
        Ok(None)
    }
}

/// One plain block ready to spawn.
pub(crate) struct PlainColumn<'b, 'a> {
    pub(crate) id: ComponentId,
    pub(crate) scalar_width: usize,
    pub(crate) block: &'b BlockView<'a>,
}

/// Spawns every entity of the blob with its plain components, each directly
/// into its final archetype, parented as `parents` says (`None`: no
/// hierarchy), and returns them in blob order. Called inside one world
/// operation ([`raw::as_one_operation`](doecs::raw::as_one_operation)), so no hook command runs
/// between the spawn and the parenting.
pub(crate) fn spawn_plain(
    world: &mut World,
    num_entities: usize,
    columns: &[PlainColumn<'_, '_>],
    parents: Option<ParentsFirst>,
) -> Spawned {
    debug_assert!(columns.len() <= 64);
    debug_assert!(parents.as_ref().is_none_or(|p| p.len() == num_entities));
    let dense = columns
        .iter()
        .all(|c| c.block.num_instances() == num_entities);
    if dense && cfg!(target_endian = "little") {
        // One group: every entity has every column. Copy from the blob as is.
        let ids: Vec<ComponentId> = columns.iter().map(|c| c.id).collect();
        let sources: Vec<*const u8> = columns.iter().map(|c| c.block.data.as_ptr()).collect();
        const CHECKED: &str = "plain ids are registered and distinct (checked before spawning)";
        // Each block was validated to hold `num_entities` values of the
        // column's size (the spawner checked `instance_size ==
        // layout.size()`), every bit pattern is a valid value (PlainBytes /
        // plain-bytes dynamic component), and the world takes copies: the
        // blob is not given up.
        return match parents {
            Some(parents) => Spawned::Parented(
                // SAFETY: the sources as above; `parents` has `num_entities`
                // items.
                unsafe { doecs::raw::spawn_columns_parented(world, &ids, &sources, parents) }
                    .expect(CHECKED),
            ),
            None => Spawned::Roots(
                // SAFETY: the sources as above.
                unsafe { doecs::raw::spawn_columns(world, &ids, num_entities, &sources) }
                    .expect(CHECKED),
            ),
        };
    }
    let entities = spawn_plain_groups(world, num_entities, columns);
    match parents {
        Some(parents) => Spawned::Parented(
            doecs::raw::parent_batch(world, entities, parents.into_vec())
                .expect("fresh entities, parents before children, and no hook command ran"),
        ),
        None => Spawned::Roots(entities),
    }
}

/// [`spawn_plain`] for a blob whose entities differ in their plain
/// components: one column spawn per group of entities with the same set.
fn spawn_plain_groups(
    world: &mut World,
    num_entities: usize,
    columns: &[PlainColumn<'_, '_>],
) -> Vec<Entity> {
    // Group entities by their set of plain columns.
    let mut masks = vec![0u64; num_entities];
    for (j, c) in columns.iter().enumerate() {
        for e in c.block.entity_index.iter() {
            masks[e as usize] |= 1 << j;
        }
    }
    let mut groups: Vec<(u64, usize)> = Vec::new(); // (mask, count)
    let mut group_of = vec![0u32; num_entities];
    let mut last = usize::MAX;
    for (e, &m) in masks.iter().enumerate() {
        if last == usize::MAX || groups[last].0 != m {
            last = match groups.iter().position(|g| g.0 == m) {
                Some(g) => g,
                None => {
                    groups.push((m, 0));
                    groups.len() - 1
                }
            };
        }
        groups[last].1 += 1;
        group_of[e] = last as u32;
    }
    // Gather each group's columns in one forward pass over the entities.
    let mut buffers: Vec<Vec<Vec<u8>>> = groups
        .iter()
        .map(|&(m, count)| {
            columns
                .iter()
                .enumerate()
                .map(|(j, c)| {
                    if m & (1 << j) != 0 {
                        Vec::with_capacity(count * c.block.instance_size)
                    } else {
                        Vec::new()
                    }
                })
                .collect()
        })
        .collect();
    let mut cursor = vec![0usize; columns.len()];
    for (e, &m) in masks.iter().enumerate() {
        let bufs = &mut buffers[group_of[e] as usize];
        let mut bits = m;
        while bits != 0 {
            let j = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let c = &columns[j];
            let size = c.block.instance_size;
            let src = &c.block.data[cursor[j] * size..(cursor[j] + 1) * size];
            cursor[j] += 1;
            append_native(&mut bufs[j], src, c.scalar_width);
        }
    }
    let mut spawned: Vec<Vec<Entity>> = Vec::with_capacity(groups.len());
    for (g, &(m, count)) in groups.iter().enumerate() {
        let mut ids = Vec::new();
        let mut sources = Vec::new();
        for (j, c) in columns.iter().enumerate() {
            if m & (1 << j) != 0 {
                ids.push(c.id);
                sources.push(buffers[g][j].as_ptr());
            }
        }
        // SAFETY: buffer (g, j) holds exactly `count` gathered values of column
        // j (one per entity of the group with bit j), valid for any bits; the
        // world copies them and the buffers are freed as plain bytes.
        let es = unsafe { doecs::raw::spawn_columns(world, &ids, count, &sources) }
            .expect("plain ids are registered and distinct (checked before spawning)");
        spawned.push(es);
    }
    let mut taken = vec![0usize; groups.len()];
    group_of
        .iter()
        .map(|&g| {
            let k = &mut taken[g as usize];
            *k += 1;
            spawned[g as usize][*k - 1]
        })
        .collect()
}

/// Appends `src` (little-endian scalars of `width` bytes) in native order.
#[inline]
fn append_native(dst: &mut Vec<u8>, src: &[u8], width: usize) {
    if cfg!(target_endian = "little") || width <= 1 {
        dst.extend_from_slice(src);
    } else {
        for scalar in src.chunks(width) {
            dst.extend(scalar.iter().rev());
        }
    }
}
