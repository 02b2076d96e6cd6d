//! Components: the per-world registry of component types.
//!
//! Any `'static + Send + Sync` type is a component; no derive is needed. Each
//! world gives every component type it meets a small dense [`ComponentId`], in
//! the order it meets them. Archetypes are sorted sets of these ids, and edges
//! and columns are looked up by them, so ids never go through a hash on the hot
//! paths once resolved.
//!
//! Components can also be registered at runtime with a name, a [`Layout`] and an
//! optional drop function ([`ComponentDescriptor`]). Such dynamic components live
//! in the same chunks as typed ones and are read and written as bytes. Every
//! component carries a stable 64-bit hash of its name ([`name_hash`]), which the
//! resource format uses to identify component types on disk.

use crate::type_index::TypeIndex;
use std::alloc::Layout;
use std::any::TypeId;
use std::collections::HashMap;

/// Marker for types that can be stored as components: every `'static + Send + Sync` type.
pub trait Component: Send + Sync + 'static {}
impl<T: Send + Sync + 'static> Component for T {}

/// A component type's dense id within one world.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComponentId(u32);

impl crate::type_index::Placeholder for ComponentId {
    const PLACEHOLDER: Self = ComponentId(0);
}

impl ComponentId {
    /// The id as an index into per-component tables.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Builds an id from an index. Ids are only meaningful in the world that issued them.
    #[inline]
    pub const fn from_index(index: usize) -> Self {
        ComponentId(index as u32)
    }
}

/// Stable 64-bit hash of a component name (FNV-1a, 64-bit). The value never
/// changes between runs, platforms or versions; the resource format stores it.
///
/// ```
/// assert_eq!(doecs::raw::name_hash("position"), doecs::raw::name_hash("position"));
/// assert_ne!(doecs::raw::name_hash("position"), doecs::raw::name_hash("velocity"));
/// assert_eq!(doecs::raw::name_hash(""), 0xcbf29ce484222325);
/// ```
pub const fn name_hash(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

/// Describes a component type: name, layout and how to drop a value.
#[derive(Clone, Debug)]
pub struct ComponentDescriptor {
    name: String,
    layout: Layout,
    drop_fn: Option<unsafe fn(*mut u8)>,
    type_id: Option<TypeId>,
    type_name: Option<&'static str>,
    sparse: bool,
}

impl ComponentDescriptor {
    /// The same descriptor, stored sparse: registering it with
    /// [`WorldCore::register_component`](crate::WorldCore::register_component)
    /// makes a sparse component (see
    /// [`WorldCore::register_sparse`](crate::WorldCore::register_sparse)).
    pub fn sparse(mut self) -> Self {
        self.sparse = true;
        self
    }

    /// Whether the descriptor asks for sparse storage.
    pub fn is_sparse(&self) -> bool {
        self.sparse
    }

    /// The descriptor of a Rust type, named by `std::any::type_name`.
    pub fn of<T: Component>() -> Self {
        Self::of_named::<T>(std::any::type_name::<T>())
    }

    /// The descriptor of a Rust type with a chosen, stable name.
    pub fn of_named<T: Component>(name: &str) -> Self {
        /// # Safety
        /// `ptr` must point to a valid, initialised `T` that is never used again.
        unsafe fn drop_as<T>(ptr: *mut u8) {
            // SAFETY: the caller passes a pointer to an initialised `T` it gives up.
            unsafe { ptr.cast::<T>().drop_in_place() }
        }
        ComponentDescriptor {
            name: name.to_owned(),
            layout: Layout::new::<T>(),
            drop_fn: std::mem::needs_drop::<T>().then_some(drop_as::<T> as unsafe fn(*mut u8)),
            type_id: Some(TypeId::of::<T>()),
            type_name: Some(std::any::type_name::<T>()),
            sparse: false,
        }
    }

    /// A runtime component with no Rust type: `layout.size()` plain bytes that
    /// need no drop. Its values can be written as bytes safely.
    pub fn dynamic(name: &str, layout: Layout) -> Self {
        ComponentDescriptor {
            name: name.to_owned(),
            layout,
            drop_fn: None,
            type_id: None,
            type_name: None,
            sparse: false,
        }
    }

    /// A runtime component whose values own resources released by `drop_fn`.
    ///
    /// # Safety
    /// `drop_fn` must be sound to call once on any value of this component that
    /// was written through the untyped API, with a pointer aligned to `layout`.
    pub unsafe fn dynamic_with_drop(
        name: &str,
        layout: Layout,
        drop_fn: unsafe fn(*mut u8),
    ) -> Self {
        ComponentDescriptor {
            name: name.to_owned(),
            layout,
            drop_fn: Some(drop_fn),
            type_id: None,
            type_name: None,
            sparse: false,
        }
    }
}

/// Everything a world knows about one component type.
#[derive(Clone, Debug)]
pub struct ComponentInfo {
    id: ComponentId,
    name: String,
    name_hash: u64,
    layout: Layout,
    drop_fn: Option<unsafe fn(*mut u8)>,
    type_id: Option<TypeId>,
    type_name: Option<&'static str>,
    row_ticks: bool,
    hook_mask: u8,
    snapshot: SnapshotCopy,
    /// Whether values may only change by insert (see
    /// [`ComponentInfo::is_immutable`]).
    immutable: bool,
    /// Whether values live in a sparse set instead of archetypes (see
    /// [`ComponentInfo::is_sparse`]).
    sparse: bool,
    /// Whether the name is the Rust type name given on first use (a typed
    /// registration), which a later registration under a stable name may
    /// replace.
    implicit_name: bool,
}

/// How a snapshot copies a component's values (see `World::snapshot_into`).
#[derive(Copy, Clone, Debug)]
pub enum SnapshotCopy {
    /// As raw bytes, a column at a time: `Copy` types and plain-bytes
    /// runtime components.
    Bytes,
    /// Value by value through two clone functions. The first writes a clone
    /// of the value at its first pointer to the uninitialised slot at its
    /// second; the second overwrites the live value at its second pointer
    /// with a clone of the value at its first (`Clone::clone_from`, which
    /// can reuse the old value's memory: a snapshot taken again into the
    /// same buffer allocates nothing for a `String` that still fits).
    Clone(unsafe fn(*const u8, *mut u8), unsafe fn(*const u8, *mut u8)),
    /// Skipped: the snapshot keeps no values, and a restore writes a fresh
    /// value (the type's `Default`, through the function, into the
    /// uninitialised slot it is given) into every restored row, marking it
    /// changed. For caches and handles the game rebuilds anyway.
    Reset(unsafe fn(*mut u8)),
    /// Not at all: `snapshot_into` refuses worlds holding the component
    /// (register it with `World::snapshot_skip` to leave it out).
    Unsupported,
}

impl ComponentInfo {
    /// The component's id in this world.
    pub fn id(&self) -> ComponentId {
        self.id
    }
    /// The component's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The stable hash of the name ([`name_hash`]).
    pub fn name_hash(&self) -> u64 {
        self.name_hash
    }
    /// Size and alignment of one value.
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// The drop function, if values need dropping.
    pub fn drop_fn(&self) -> Option<unsafe fn(*mut u8)> {
        self.drop_fn
    }
    /// The Rust type, for typed components.
    pub fn type_id(&self) -> Option<TypeId> {
        self.type_id
    }
    /// The Rust type's name, for typed components.
    pub fn type_name(&self) -> Option<&'static str> {
        self.type_name
    }
    /// Whether the world keeps per-row change stamps for this component
    /// (from the first query that filters on its changes on; see
    /// [`Changed`](crate::Changed)).
    pub fn tracks_rows(&self) -> bool {
        self.row_ticks
    }
    /// Which hooks the component has (a mask of [`crate::HookKind`] bits).
    pub(crate) fn hook_mask(&self) -> u8 {
        self.hook_mask
    }
    /// How snapshots copy the component's values.
    pub fn snapshot_copy(&self) -> SnapshotCopy {
        self.snapshot
    }
    /// Whether the component is immutable in this world
    /// ([`WorldCore::register_immutable`](crate::WorldCore::register_immutable)):
    /// its values change only by insert (replacing the old value, so hooks
    /// see every change), never through `&mut`.
    pub fn is_immutable(&self) -> bool {
        self.immutable
    }
    /// Whether the component is stored sparse in this world
    /// ([`WorldCore::register_sparse`](crate::WorldCore::register_sparse)):
    /// in a sparse set keyed by entity, not in archetypes.
    pub fn is_sparse(&self) -> bool {
        self.sparse
    }
    /// Whether values are plain bytes: a dynamic component with no drop
    /// function. Only these can be written from arbitrary bytes safely.
    pub fn is_plain_bytes(&self) -> bool {
        self.type_id.is_none() && self.drop_fn.is_none()
    }
}

/// The registry: one [`ComponentInfo`] per id, plus lookups by type (through
/// a `TypeIndex`, one compare in the common case), name and name hash.
#[derive(Debug, Default)]
pub struct Components {
    infos: Vec<ComponentInfo>,
    by_type: TypeIndex<ComponentId>,
    by_name: HashMap<String, ComponentId>,
    by_hash: HashMap<u64, ComponentId>,
    /// Rust types asked to keep row stamps before they were registered.
    tracked_types: Vec<TypeId>,
    /// How many components are immutable. Marks are never taken back, so
    /// this only grows: a query state that checked its writes at one count
    /// need not check again until it changes.
    immutable_count: u32,
    /// How many components are sparse (it only grows, as marks are never
    /// taken back).
    sparse_count: u32,
}

/// Registration failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// Another component already uses this name.
    #[error("a component named `{0}` is already registered")]
    NameTaken(String),
    /// Another component's name hashes to the same 64-bit value.
    #[error("component name `{name}` hashes to {hash:#018x}, the same as `{other}`")]
    HashCollision {
        /// The name being registered.
        name: String,
        /// The name already registered.
        other: String,
        /// The shared hash.
        hash: u64,
    },
    /// The Rust type is already registered, under another name.
    #[error(
        "cannot register this type as `{requested}`: it is already registered as `{existing}`"
    )]
    TypeTaken {
        /// The name asked for.
        requested: String,
        /// The name it was registered under.
        existing: String,
    },
    /// The component already has values in archetypes (or is part of a
    /// bundle), so its storage can no longer change.
    #[error(
        "component `{0}` is already stored in archetypes or named by a bundle; \
         register it sparse before its first use"
    )]
    StorageFixed(String),
}

/// The stable name of built-in component `type_id`, if it is one: what
/// the component registry and saves call it.
fn builtin_name(type_id: TypeId) -> Option<&'static str> {
    [
        (TypeId::of::<crate::tags::Prefab>(), "Prefab"),
        (TypeId::of::<crate::tags::Disabled>(), "Disabled"),
        (TypeId::of::<crate::name::Name>(), "Name"),
    ]
    .into_iter()
    .find(|(t, _)| *t == type_id)
    .map(|(_, name)| name)
}

/// How snapshots copy built-in component `type_id`, if it is one.
fn builtin_snapshot(type_id: Option<TypeId>) -> Option<SnapshotCopy> {
    /// Clones a `Name` at `from` into the empty slot at `to`.
    ///
    /// # Safety
    /// `from` must point at a `Name`, `to` at room for one.
    unsafe fn clone_name(from: *const u8, to: *mut u8) {
        // SAFETY: the caller's contract.
        unsafe {
            to.cast::<crate::name::Name>()
                .write((*from.cast::<crate::name::Name>()).clone())
        }
    }
    /// Overwrites the `Name` at `to` with a clone of the one at `from`.
    ///
    /// # Safety
    /// Both must point at live `Name`s, distinct ones.
    unsafe fn clone_name_into(from: *const u8, to: *mut u8) {
        // SAFETY: the caller's contract.
        unsafe { (*to.cast::<crate::name::Name>()).clone_from(&*from.cast::<crate::name::Name>()) }
    }
    let type_id = type_id?;
    // `Prefab` and `Disabled` are `Copy` (and zero-sized): raw bytes.
    if type_id == TypeId::of::<crate::tags::Prefab>()
        || type_id == TypeId::of::<crate::tags::Disabled>()
    {
        return Some(SnapshotCopy::Bytes);
    }
    (type_id == TypeId::of::<crate::name::Name>())
        .then_some(SnapshotCopy::Clone(clone_name, clone_name_into))
}

impl Components {
    /// Number of registered components.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// Whether no component is registered.
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    /// The info for `id`.
    ///
    /// # Panics
    /// If `id` was not issued by this registry.
    #[inline]
    pub fn info(&self, id: ComponentId) -> &ComponentInfo {
        &self.infos[id.index()]
    }

    /// The info for `id`, if this registry issued it.
    pub fn get_info(&self, id: ComponentId) -> Option<&ComponentInfo> {
        self.infos.get(id.index())
    }

    /// All registered components, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &ComponentInfo> {
        self.infos.iter()
    }

    /// The id of Rust type `T`, if registered.
    #[inline]
    pub fn id_of<T: 'static>(&self) -> Option<ComponentId> {
        self.by_type.get(TypeId::of::<T>())
    }

    /// The id of the Rust type with this `TypeId`, if registered.
    #[inline]
    pub fn by_type_id(&self, type_id: TypeId) -> Option<ComponentId> {
        self.by_type.get(type_id)
    }

    /// The id of the component with this name.
    pub fn id_by_name(&self, name: &str) -> Option<ComponentId> {
        self.by_name.get(name).copied()
    }

    /// The id of the component whose name hashes to `hash`.
    pub fn id_by_hash(&self, hash: u64) -> Option<ComponentId> {
        self.by_hash.get(&hash).copied()
    }

    /// The id of `T`, registering it under its type name on first use.
    #[inline]
    pub fn register<T: Component>(&mut self) -> ComponentId {
        match self.id_of::<T>() {
            Some(id) => id,
            None => self.register_type_slow::<T>(),
        }
    }

    #[cold]
    fn register_type_slow<T: Component>(&mut self) -> ComponentId {
        // The built-ins have stable names, the ones tools and saves use.
        if let Some(name) = builtin_name(TypeId::of::<T>()) {
            if let Ok(id) = self.push(ComponentDescriptor::of_named::<T>(name), true) {
                return id;
            }
        }
        // A type name may clash with a dynamic component's name; typed
        // registration never fails, so such a clash only skips the name index.
        self.push(ComponentDescriptor::of::<T>(), false)
            .expect("typed registration without name indexing cannot fail")
    }

    /// Registers a component described at runtime, or a Rust type under a
    /// stable name. Names and their hashes must be unique.
    pub fn register_descriptor(
        &mut self,
        descriptor: ComponentDescriptor,
    ) -> Result<ComponentId, RegisterError> {
        if let Some(type_id) = descriptor.type_id {
            if let Some(id) = self.by_type.get(type_id) {
                let existing = &self.infos[id.index()];
                if existing.name == descriptor.name {
                    return Ok(id);
                }
                if existing.implicit_name {
                    // First used by type, now named: the stable name takes
                    // the type name's place (same id, same columns).
                    self.rename(id, descriptor.name)?;
                    return Ok(id);
                }
                return Err(RegisterError::TypeTaken {
                    requested: descriptor.name,
                    existing: existing.name.clone(),
                });
            }
        }
        self.push(descriptor, true)
    }

    /// Gives component `id`, registered under its type name, the stable
    /// name `name`; refused (changing nothing) if another component has
    /// that name or its hash.
    fn rename(&mut self, id: ComponentId, name: String) -> Result<(), RegisterError> {
        let hash = name_hash(&name);
        if self.by_name.contains_key(&name) {
            return Err(RegisterError::NameTaken(name));
        }
        if let Some(&other) = self.by_hash.get(&hash) {
            return Err(RegisterError::HashCollision {
                name,
                other: self.infos[other.index()].name.clone(),
                hash,
            });
        }
        let info = &mut self.infos[id.index()];
        if self.by_name.get(&info.name) == Some(&id) {
            self.by_name.remove(&info.name);
        }
        if self.by_hash.get(&info.name_hash) == Some(&id) {
            self.by_hash.remove(&info.name_hash);
        }
        self.by_name.insert(name.clone(), id);
        self.by_hash.insert(hash, id);
        info.name = name;
        info.name_hash = hash;
        info.implicit_name = false;
        Ok(())
    }

    fn push(
        &mut self,
        d: ComponentDescriptor,
        strict_name: bool,
    ) -> Result<ComponentId, RegisterError> {
        let hash = name_hash(&d.name);
        let name_free = !self.by_name.contains_key(&d.name);
        let hash_free = !self.by_hash.contains_key(&hash);
        if strict_name {
            if !name_free {
                return Err(RegisterError::NameTaken(d.name));
            }
            if let Some(&other) = self.by_hash.get(&hash) {
                return Err(RegisterError::HashCollision {
                    name: d.name,
                    other: self.infos[other.index()].name.clone(),
                    hash,
                });
            }
        }
        let id =
            ComponentId(u32::try_from(self.infos.len()).expect("doecs: too many component types"));
        if name_free && hash_free {
            self.by_name.insert(d.name.clone(), id);
            self.by_hash.insert(hash, id);
        }
        if let Some(type_id) = d.type_id {
            self.by_type.insert(type_id, id);
        }
        let row_ticks = d.type_id.is_some_and(|t| self.tracked_types.contains(&t));
        self.infos.push(ComponentInfo {
            id,
            name_hash: hash,
            name: d.name,
            layout: d.layout,
            drop_fn: d.drop_fn,
            type_id: d.type_id,
            type_name: d.type_name,
            row_ticks,
            hook_mask: 0,
            immutable: false,
            sparse: false,
            snapshot: if d.type_id.is_none() && d.drop_fn.is_none() {
                SnapshotCopy::Bytes
            } else {
                builtin_snapshot(d.type_id).unwrap_or(SnapshotCopy::Unsupported)
            },
            implicit_name: !strict_name,
        });
        Ok(id)
    }

    /// Records which hooks component `id` has.
    pub(crate) fn set_hook_mask(&mut self, id: ComponentId, mask: u8) {
        self.infos[id.index()].hook_mask = mask;
    }

    /// Marks component `id` immutable. Returns whether it was not before.
    pub(crate) fn set_immutable(&mut self, id: ComponentId) -> bool {
        let was = std::mem::replace(&mut self.infos[id.index()].immutable, true);
        if !was {
            self.immutable_count += 1;
        }
        !was
    }

    /// Marks component `id` sparse. Returns whether it was not before.
    pub(crate) fn set_sparse(&mut self, id: ComponentId) -> bool {
        let was = std::mem::replace(&mut self.infos[id.index()].sparse, true);
        if !was {
            self.sparse_count += 1;
        }
        !was
    }

    /// How many components are sparse (it only grows).
    #[inline]
    pub(crate) fn sparse_count(&self) -> u32 {
        self.sparse_count
    }

    /// How many storage marks (immutable or sparse) components carry: it
    /// only grows, so a query that checked its terms at one count need not
    /// check again until it changes.
    #[inline]
    pub(crate) fn marks(&self) -> u32 {
        self.immutable_count + self.sparse_count
    }

    /// Whether the Rust type `type_id` is a component registered sparse.
    #[inline]
    pub(crate) fn is_sparse_type(&self, type_id: TypeId) -> bool {
        self.sparse_count > 0
            && self
                .by_type
                .get(type_id)
                .is_some_and(|id| self.infos[id.index()].sparse)
    }

    /// How many components are immutable (it only grows).
    #[inline]
    pub(crate) fn immutable_count(&self) -> u32 {
        self.immutable_count
    }

    /// Whether the Rust type `type_id` is a component registered immutable.
    #[inline]
    pub(crate) fn is_immutable_type(&self, type_id: TypeId) -> bool {
        self.immutable_count > 0
            && self
                .by_type
                .get(type_id)
                .is_some_and(|id| self.infos[id.index()].immutable)
    }

    /// Records how snapshots copy component `id`'s values.
    pub(crate) fn set_snapshot_copy(&mut self, id: ComponentId, copy: SnapshotCopy) {
        self.infos[id.index()].snapshot = copy;
    }

    /// Marks component `id` as keeping row stamps. Returns whether it did
    /// not before (the caller then gives every archetype holding it stamps).
    pub(crate) fn track_rows(&mut self, id: ComponentId) -> bool {
        !std::mem::replace(&mut self.infos[id.index()].row_ticks, true)
    }

    /// Marks Rust type `type_id` as keeping row stamps: now if registered
    /// (returning its id when it did not before), else from its registration on.
    pub(crate) fn track_type(&mut self, type_id: TypeId) -> Option<ComponentId> {
        match self.by_type.get(type_id) {
            Some(id) => self.track_rows(id).then_some(id),
            None => {
                if !self.tracked_types.contains(&type_id) {
                    self.tracked_types.push(type_id);
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_vectors() {
        // Published FNV-1a 64-bit test vectors.
        assert_eq!(name_hash("a"), 0xaf63dc4c8601ec8c);
        assert_eq!(name_hash("foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn typed_ids_are_dense_and_stable() {
        let mut c = Components::default();
        let a = c.register::<u32>();
        let b = c.register::<f64>();
        assert_eq!(a.index(), 0);
        assert_eq!(b.index(), 1);
        assert_eq!(c.register::<u32>(), a);
        assert_eq!(c.info(b).layout(), Layout::new::<f64>());
        assert!(c.info(a).drop_fn().is_none());
        let s = c.register::<String>();
        assert!(c.info(s).drop_fn().is_some());
    }

    #[test]
    fn dynamic_names_are_unique() {
        let mut c = Components::default();
        let id = c
            .register_descriptor(ComponentDescriptor::dynamic("health", Layout::new::<f32>()))
            .unwrap();
        assert_eq!(c.id_by_name("health"), Some(id));
        assert_eq!(c.id_by_hash(name_hash("health")), Some(id));
        assert!(c.info(id).is_plain_bytes());
        let again =
            c.register_descriptor(ComponentDescriptor::dynamic("health", Layout::new::<u8>()));
        assert_eq!(again, Err(RegisterError::NameTaken("health".into())));
    }

    #[test]
    fn named_type_registration() {
        let mut c = Components::default();
        let id = c
            .register_descriptor(ComponentDescriptor::of_named::<[f32; 3]>("position"))
            .unwrap();
        assert_eq!(c.id_of::<[f32; 3]>(), Some(id));
        assert_eq!(c.register::<[f32; 3]>(), id);
        assert!(c
            .register_descriptor(ComponentDescriptor::of_named::<[f32; 3]>("pos"))
            .is_err());
    }
}
