//! One registration per component type, serving the level compiler, save
//! and load, and tools such as `doecs inspect` and the inspector.
//!
//! A component is registered once, by a stable name:
//! `registry.register::<Velocity>("velocity")` for a type that serde can
//! write and read. The registration can say more about the type:
//! [`Registering::plain`] for `bytemuck::Pod` types (blobs and snapshots
//! copy their bytes), [`Registering::cloned`] for `Clone` types (snapshots
//! clone them), [`Registering::immutable`] and [`Registering::sparse`] for
//! how worlds store it. A type that serde cannot handle can still be shown by tools
//! through [`ComponentRegistry::register_debug`].
//!
//! A registration belongs to no world: [`ComponentRegistry::install`]
//! registers every type in a world under its name, and lookups from a
//! world's [`ComponentId`] go through the type (or, for components made at
//! runtime from a level, the name).

mod managers;
mod plugin;
mod relations;
mod save;

pub use plugin::{Registry, RegistryPlugin};
pub use save::{
    load_world, load_world_from_bytes, save_world, LoadError, LoadOptions, SaveError, SaveFormat,
    SaveOptions, Storage, WorldSaveExt, SAVE_MAGIC, SAVE_VERSION,
};

use doecs::{Component, ComponentDescriptor, ComponentId, Entity, EntityError, World, WorldCore};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::alloc::Layout;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

/// Why a registry call failed.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// Two registrations share a name.
    #[error("component name \"{0}\" is registered twice")]
    NameTaken(String),
    /// One type registered under two names.
    #[error("type {type_name} is already registered as \"{existing}\"")]
    TypeTaken {
        /// The type.
        type_name: &'static str,
        /// Its first name.
        existing: String,
    },
    /// No registration has this name.
    #[error("no component is registered as \"{0}\"")]
    UnknownName(String),
    /// The registration cannot read or write values as JSON (a `Debug`-only one).
    #[error("component \"{0}\" has no serde registration")]
    NotSerde(String),
    /// A value the registration's check ([`Registering::validate`])
    /// refused.
    #[error("component \"{name}\": invalid value: {reason}")]
    Invalid {
        /// The component.
        name: String,
        /// What the check said.
        reason: String,
    },
    /// A value did not match the component's type.
    #[error("component \"{name}\": {source}")]
    Json {
        /// The component.
        name: String,
        /// What serde said.
        source: serde_json::Error,
    },
    /// The world refused.
    #[error(transparent)]
    Entity(#[from] EntityError),
    /// The world's registration refused the name.
    #[error(transparent)]
    Register(#[from] doecs::RegisterError),
    /// A requirement the registry carries was refused by the world (a
    /// cycle with one the world has).
    #[error(transparent)]
    Require(#[from] doecs::RequireError),
}

/// Registers one requirement in a world.
type InstallRequirement = dyn Fn(&mut World) -> Result<(), doecs::RequireError> + Send + Sync;

/// One requirement a registry carries (see [`ComponentRegistry::require`]).
#[derive(Clone)]
struct RequirementInstall(std::sync::Arc<InstallRequirement>);

impl std::fmt::Debug for RequirementInstall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequirementInstall")
    }
}

/// Reads the value at a pointer as JSON.
type ToJson = unsafe fn(*const u8) -> Result<Value, serde_json::Error>;
/// Shows the value at a pointer with `Debug`.
type ToDebug = unsafe fn(*const u8) -> String;
/// Parses JSON, checks the value with the validator (when there is one),
/// and inserts it on an entity.
type InsertJson = fn(&mut World, Entity, &Value, Option<&Validator>) -> Result<(), JsonInsertError>;
/// Parses JSON and checks the value with the validator (when there is
/// one), inserting nothing.
type CheckJson = fn(&Value, Option<&Validator>) -> Result<(), JsonInsertError>;

/// Why [`InsertJson`] refused a value.
enum JsonInsertError {
    Json(serde_json::Error),
    Invalid(String),
}
/// Parses JSON into the value's plain bytes.
type JsonToBytes = fn(&Value) -> Result<Vec<u8>, serde_json::Error>;
/// A registration's check of one value (given as `&T`, behind `dyn Any`).
type Validator = dyn Fn(&dyn Any) -> Result<(), String> + Send + Sync;
/// Reads a plain value from its bytes and runs the validator on it.
type ValidateBytes = fn(&Validator, &[u8]) -> Result<(), String>;

/// Everything the registry knows about one component type.
#[derive(Clone)]
pub struct Registration {
    name: String,
    type_id: TypeId,
    type_name: &'static str,
    descriptor: fn(&str) -> ComponentDescriptor,
    install_snapshot: Option<fn(&mut World)>,
    to_json: Option<ToJson>,
    insert_json: Option<InsertJson>,
    check_json: Option<CheckJson>,
    to_debug: Option<ToDebug>,
    plain: Option<JsonToBytes>,
    /// How values are saved and loaded (serde registrations).
    save: Option<save::SaveFns>,
    /// `Layout::new::<T>()`.
    layout: Layout,
    /// [`Registering::validate`]'s check.
    validate: Option<Arc<Validator>>,
    /// Set by [`Registering::plain`]: runs `validate` on a value's bytes.
    validate_bytes: Option<ValidateBytes>,
    /// Set by [`Registering::immutable`]: marks the type immutable in a
    /// world ([`WorldCore::register_immutable`]).
    install_immutable: Option<fn(&mut World)>,
    /// Set by [`Registering::sparse`]: the type is stored sparse in a
    /// world ([`WorldCore::register_sparse`]).
    sparse: bool,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.name)
            .field("type_name", &self.type_name)
            .field("serde", &self.to_json.is_some())
            .field("plain", &self.plain.is_some())
            .field("snapshot", &self.install_snapshot.is_some())
            .field("validated", &self.validate.is_some())
            .field("immutable", &self.install_immutable.is_some())
            .field("sparse", &self.sparse)
            .finish()
    }
}

impl Registration {
    /// The stable name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Rust type.
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The Rust type's name.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Whether values can be read and written as JSON.
    pub fn is_serde(&self) -> bool {
        self.to_json.is_some()
    }

    /// Whether values are plain bytes (`bytemuck::Pod`).
    pub fn is_plain(&self) -> bool {
        self.plain.is_some()
    }

    /// Whether the type is immutable in the worlds the registry installs
    /// into ([`Registering::immutable`]).
    pub fn is_immutable(&self) -> bool {
        self.install_immutable.is_some()
    }

    /// Whether the type is stored sparse in the worlds the registry
    /// installs into ([`Registering::sparse`]).
    pub fn is_sparse(&self) -> bool {
        self.sparse
    }

    /// The component's id in `world`, if the world knows the type.
    pub fn component_id(&self, world: &WorldCore) -> Option<ComponentId> {
        world.components().by_type_id(self.type_id)
    }

    /// `entity`'s value as JSON.
    pub fn value_json(&self, world: &WorldCore, entity: Entity) -> Result<Value, RegistryError> {
        let to_json = self
            .to_json
            .ok_or_else(|| RegistryError::NotSerde(self.name.clone()))?;
        let ptr = self.ptr(world, entity)?;
        // SAFETY: `ptr` points to a live value of this registration's type
        // (the world's id for `type_id`), and `&WorldCore` keeps writers away
        // while it is read.
        unsafe { to_json(ptr) }.map_err(|source| RegistryError::Json {
            name: self.name.clone(),
            source,
        })
    }

    /// `entity`'s value for people: JSON text where serde is registered,
    /// else `Debug`.
    pub fn value_text(&self, world: &WorldCore, entity: Entity) -> Result<String, RegistryError> {
        if let Some(to_debug) = self.to_debug {
            let ptr = self.ptr(world, entity)?;
            // SAFETY: as in `value_json`.
            return Ok(unsafe { to_debug(ptr) });
        }
        Ok(self.value_json(world, entity)?.to_string())
    }

    /// Parses `value`, checks it with the registration's check
    /// ([`Registering::validate`]) when there is one, and inserts it on
    /// `entity` (replacing any old value). On error
    /// ([`RegistryError::Json`], [`RegistryError::Invalid`], ...) the world
    /// is unchanged.
    ///
    /// ```
    /// use doecs::World;
    /// use doecs_registry::ComponentRegistry;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, Debug, Clone, Copy)]
    /// struct Mass(f32);
    ///
    /// let mut registry = ComponentRegistry::new();
    /// registry
    ///     .register::<Mass>("mass")
    ///     .validate(|m| if m.0 > 0.0 { Ok(()) } else { Err("mass must be positive".into()) });
    /// let mut world = World::new();
    /// let e = world.spawn((Mass(1.0),));
    /// let mass = registry.by_name("mass").unwrap();
    /// let refused = mass.insert_json(&mut world, e, &serde_json::json!(0.0));
    /// assert!(refused.unwrap_err().to_string().contains("mass must be positive"));
    /// assert_eq!(world.get::<Mass>(e).unwrap().0, 1.0);
    /// ```
    pub fn insert_json(
        &self,
        world: &mut World,
        entity: Entity,
        value: &Value,
    ) -> Result<(), RegistryError> {
        let insert = self
            .insert_json
            .ok_or_else(|| RegistryError::NotSerde(self.name.clone()))?;
        if !world.alive(entity) {
            return Err(EntityError::NoSuchEntity(entity).into());
        }
        insert(world, entity, value, self.validate.as_deref()).map_err(|e| self.insert_error(e))
    }

    /// Whether [`insert_json`](Self::insert_json) would take `value`: parses
    /// it and runs the registration's check ([`Registering::validate`]),
    /// with no world and no effect. For tools that make several values
    /// into one change (an entity with its components) and check every
    /// value before they change anything.
    ///
    /// ```
    /// use doecs_registry::{ComponentRegistry, RegistryError};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, Debug, Clone, Copy)]
    /// struct Mass(f32);
    ///
    /// let mut registry = ComponentRegistry::new();
    /// registry
    ///     .register::<Mass>("mass")
    ///     .validate(|m| if m.0 > 0.0 { Ok(()) } else { Err("mass must be positive".into()) });
    /// let mass = registry.by_name("mass").unwrap();
    /// assert!(mass.check_json(&serde_json::json!(2.5)).is_ok());
    /// let zero = mass.check_json(&serde_json::json!(0.0));
    /// assert!(matches!(zero, Err(RegistryError::Invalid { .. })));
    /// let text = mass.check_json(&serde_json::json!("heavy"));
    /// assert!(matches!(text, Err(RegistryError::Json { .. })));
    /// ```
    pub fn check_json(&self, value: &Value) -> Result<(), RegistryError> {
        let check = self
            .check_json
            .ok_or_else(|| RegistryError::NotSerde(self.name.clone()))?;
        check(value, self.validate.as_deref()).map_err(|e| self.insert_error(e))
    }

    /// The registry's error for a value the registration refused.
    fn insert_error(&self, e: JsonInsertError) -> RegistryError {
        match e {
            JsonInsertError::Json(source) => RegistryError::Json {
                name: self.name.clone(),
                source,
            },
            JsonInsertError::Invalid(reason) => RegistryError::Invalid {
                name: self.name.clone(),
                reason,
            },
        }
    }

    /// Parses `value` into the component's plain bytes (`bytemuck::Pod`
    /// registrations), as the level compiler stores them.
    pub fn json_to_bytes(&self, value: &Value) -> Result<Vec<u8>, RegistryError> {
        let plain = self
            .plain
            .ok_or_else(|| RegistryError::NotSerde(self.name.clone()))?;
        plain(value).map_err(|source| RegistryError::Json {
            name: self.name.clone(),
            source,
        })
    }

    /// The world's descriptor for this type, under this registration's
    /// name (a [sparse](ComponentDescriptor::sparse) one for a
    /// [sparse](Registering::sparse) registration).
    pub fn descriptor(&self) -> ComponentDescriptor {
        let descriptor = (self.descriptor)(&self.name);
        if self.sparse {
            descriptor.sparse()
        } else {
            descriptor
        }
    }

    /// The Rust type's layout (size 0 for a marker).
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Whether the registration carries a check of values
    /// ([`Registering::validate`]).
    pub fn is_validated(&self) -> bool {
        self.validate.is_some()
    }

    /// Runs the registration's check ([`Registering::validate`]) on `value`,
    /// which must be of the registered type. `Ok` when there is no check.
    pub fn validate_value(&self, value: &dyn Any) -> Result<(), String> {
        match &self.validate {
            Some(validate) => validate(value),
            None => Ok(()),
        }
    }

    /// Runs the registration's check on a plain value given as its bytes in
    /// the host's byte order (`size_of::<T>()` bytes, as
    /// [`json_to_bytes`](Self::json_to_bytes) returns them). `Ok` when there
    /// is no check; an error for bytes of the wrong length, or when a check
    /// is registered but the type is not [`plain`](Registering::plain).
    pub fn validate_bytes(&self, bytes: &[u8]) -> Result<(), String> {
        let Some(validate) = &self.validate else {
            return Ok(());
        };
        let Some(read) = self.validate_bytes else {
            return Err(format!(
                "component \"{}\" is not plain bytes: its values cannot be checked as bytes",
                self.name
            ));
        };
        if bytes.len() != self.layout.size() {
            return Err(format!(
                "component \"{}\" has {} bytes per value, got {}",
                self.name,
                self.layout.size(),
                bytes.len()
            ));
        }
        read(validate.as_ref(), bytes)
    }

    fn ptr(&self, world: &WorldCore, entity: Entity) -> Result<*const u8, RegistryError> {
        let id = self
            .component_id(world)
            .ok_or(EntityError::MissingComponent {
                entity,
                component: self.type_name,
            })?;
        Ok(doecs::raw::get_ptr(world, entity, id)?
            .as_ptr()
            .cast_const())
    }
}

/// What [`ComponentRegistry::register`] returns: say more about the type.
pub struct Registering<'r, T> {
    entry: &'r mut Registration,
    _marker: PhantomData<fn() -> T>,
}

impl<T: Component + Serialize + DeserializeOwned> Registering<'_, T> {
    /// The type is plain bytes: levels store its bytes, snapshots copy them.
    pub fn plain(self) -> Self
    where
        T: bytemuck::Pod,
    {
        fn json_to_bytes<T: bytemuck::Pod + DeserializeOwned>(
            value: &Value,
        ) -> Result<Vec<u8>, serde_json::Error> {
            let v: T = T::deserialize(value)?;
            Ok(bytemuck::bytes_of(&v).to_vec())
        }
        fn validate_bytes<T: bytemuck::Pod>(
            validate: &Validator,
            bytes: &[u8],
        ) -> Result<(), String> {
            // The caller checked the length.
            let value: T = bytemuck::pod_read_unaligned(bytes);
            validate(&value)
        }
        self.entry.plain = Some(json_to_bytes::<T>);
        self.entry.save = Some(save::SaveFns::plain::<T>());
        self.entry.validate_bytes = Some(validate_bytes::<T>);
        self.entry.install_snapshot = Some(|world| world.snapshot_by_copy::<T>());
        self
    }

    /// Values of the type must pass `check`, which returns why a value is
    /// refused. The registration only carries the check: users of the
    /// registry run it ([`Registration::validate_value`],
    /// [`Registration::validate_bytes`]); the level compiler and spawner of
    /// `doecs-resource` refuse levels and blobs with values it rejects.
    pub fn validate(
        self,
        check: impl Fn(&T) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        let type_name = self.entry.type_name;
        self.entry.validate = Some(Arc::new(move |value: &dyn Any| {
            match value.downcast_ref::<T>() {
                Some(value) => check(value),
                None => Err(format!("expected a value of type {type_name}")),
            }
        }));
        self
    }

    /// The type is immutable in every world the registry installs into
    /// (loaded worlds included): its values change only by insert, never
    /// through `&mut` (see [`WorldCore::register_immutable`]), so hooks see
    /// every change. Tools that set values (the inspector's edits,
    /// [`Registration::insert_json`]) insert, so they still may.
    ///
    /// ```
    /// use doecs::{EntityError, World};
    /// use doecs_registry::ComponentRegistry;
    /// #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    /// struct Level(u32);
    /// let mut registry = ComponentRegistry::new();
    /// registry.register::<Level>("level").immutable();
    /// let mut world = World::new();
    /// registry.install(&mut world).unwrap();
    /// let e = world.spawn((Level(1),));
    /// assert!(matches!(world.get_mut::<Level>(e), Err(EntityError::Immutable(_))));
    /// let level = registry.by_name("level").unwrap();
    /// level.insert_json(&mut world, e, &serde_json::json!(2)).unwrap();
    /// assert_eq!(world.get::<Level>(e), Ok(&Level(2)));
    /// ```
    pub fn immutable(self) -> Self {
        self.entry.install_immutable = Some(|world| {
            world.register_immutable::<T>();
        });
        self
    }

    /// The type is stored sparse in every world the registry installs into
    /// (loaded worlds included): its values live in a sparse set keyed by
    /// entity, not in archetypes, so adding and removing it moves no row
    /// (see [`WorldCore::register_sparse`]). Queries read it through
    /// [`doecs::Sparse`] terms. A world's storage for a type is fixed at
    /// its first use, so install the registry before spawning the type:
    /// [`ComponentRegistry::install`] into a world that already holds it in
    /// archetypes fails with [`doecs::RegisterError::StorageFixed`]. Saves
    /// keep its values in a sparse section, and a load refuses a file that
    /// stores it the other way ([`LoadError::Storage`]).
    ///
    /// ```
    /// use doecs::{Sparse, World};
    /// use doecs_registry::ComponentRegistry;
    /// #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    /// struct Stunned(u32);
    /// let mut registry = ComponentRegistry::new();
    /// registry.register::<Stunned>("stunned").sparse();
    /// assert!(registry.by_name("stunned").unwrap().is_sparse());
    /// let mut world = World::new();
    /// registry.install(&mut world).unwrap();
    /// let archetypes = doecs::raw::archetypes(&world).len();
    /// let e = world.spawn((Stunned(2),));
    /// assert_eq!(doecs::raw::archetypes(&world).len(), archetypes);
    /// assert_eq!(world.query::<Sparse<&Stunned>>().iter().count(), 1);
    /// assert_eq!(world.get::<Stunned>(e), Ok(&Stunned(2)));
    /// ```
    pub fn sparse(self) -> Self {
        self.entry.sparse = true;
        self
    }

    /// Snapshots clone values of the type.
    pub fn cloned(self) -> Self
    where
        T: Clone,
    {
        if self.entry.plain.is_none() {
            self.entry.install_snapshot = Some(|world| world.snapshot_by_clone::<T>());
        }
        self
    }
}

/// The component types a program knows by name. See the crate docs.
///
/// Every registry starts with the built-in components `Prefab`, `Disabled`
/// and `Name` (under those names) and knows the built-in relations
/// `ChildOf` and `IsA`.
#[derive(Debug, Clone)]
pub struct ComponentRegistry {
    entries: Vec<Registration>,
    by_name: HashMap<String, usize>,
    by_type: HashMap<TypeId, usize>,
    managers: Vec<managers::ManagerRegistration>,
    relations: Vec<relations::RelationRegistration>,
    requirements: Vec<RequirementInstall>,
}

impl Default for ComponentRegistry {
    fn default() -> Self {
        let mut registry = ComponentRegistry {
            entries: Vec::new(),
            by_name: HashMap::new(),
            by_type: HashMap::new(),
            managers: Vec::new(),
            relations: relations::builtins(),
            requirements: Vec::new(),
        };
        registry.register::<doecs::Prefab>("Prefab");
        registry.register::<doecs::Disabled>("Disabled");
        registry.register::<doecs::Name>("Name");
        registry
    }
}

impl ComponentRegistry {
    /// A registry of the built-ins only (see the type's docs).
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `T`, which serde writes and reads, as `name`.
    ///
    /// # Panics
    /// If `name` or `T` is registered already: registrations are made once,
    /// at start-up, so a clash is a programming error. Use
    /// [`try_register`](Self::try_register) to get an error instead.
    pub fn register<T: Component + Serialize + DeserializeOwned>(
        &mut self,
        name: &str,
    ) -> Registering<'_, T> {
        match self.try_register::<T>(name) {
            Ok(r) => r,
            Err(e) => panic!("doecs-registry: {e}"),
        }
    }

    /// Registers `T` as `name`, or says why not.
    pub fn try_register<T: Component + Serialize + DeserializeOwned>(
        &mut self,
        name: &str,
    ) -> Result<Registering<'_, T>, RegistryError> {
        /// # Safety
        /// `ptr` points to a live `T` that nobody writes meanwhile.
        unsafe fn to_json<T: Serialize>(ptr: *const u8) -> Result<Value, serde_json::Error> {
            // SAFETY: the caller passes a live `T`.
            let value = unsafe { &*ptr.cast::<T>() };
            // Through text: `to_value` widens an `f32` to `f64`, so 0.1 would
            // show as 0.10000000149011612; text keeps its shortest form.
            serde_json::from_str(&serde_json::to_string(value)?)
        }
        fn parse_checked<T: Component + DeserializeOwned>(
            value: &Value,
            validate: Option<&Validator>,
        ) -> Result<T, JsonInsertError> {
            let v = T::deserialize(value).map_err(JsonInsertError::Json)?;
            if let Some(validate) = validate {
                validate(&v).map_err(JsonInsertError::Invalid)?;
            }
            Ok(v)
        }
        fn check_json<T: Component + DeserializeOwned>(
            value: &Value,
            validate: Option<&Validator>,
        ) -> Result<(), JsonInsertError> {
            parse_checked::<T>(value, validate).map(drop)
        }
        fn insert_json<T: Component + DeserializeOwned>(
            world: &mut World,
            entity: Entity,
            value: &Value,
            validate: Option<&Validator>,
        ) -> Result<(), JsonInsertError> {
            let v = parse_checked::<T>(value, validate)?;
            // The caller checked that the entity is alive; inserting then
            // cannot fail.
            let _ = world.insert_one(entity, v);
            Ok(())
        }
        let index = self.push::<T>(name)?;
        let entry = &mut self.entries[index];
        entry.to_json = Some(to_json::<T>);
        entry.insert_json = Some(insert_json::<T>);
        entry.check_json = Some(check_json::<T>);
        entry.save = Some(save::SaveFns::serde::<T>());
        Ok(Registering {
            entry,
            _marker: PhantomData,
        })
    }

    /// Registers `T`, which serde does not handle, for display only: tools
    /// show it with `Debug`.
    pub fn register_debug<T: Component + std::fmt::Debug>(
        &mut self,
        name: &str,
    ) -> Result<(), RegistryError> {
        /// # Safety
        /// `ptr` points to a live `T` that nobody writes meanwhile.
        unsafe fn to_debug<T: std::fmt::Debug>(ptr: *const u8) -> String {
            // SAFETY: the caller passes a live `T`.
            format!("{:?}", unsafe { &*ptr.cast::<T>() })
        }
        let index = self.push::<T>(name)?;
        self.entries[index].to_debug = Some(to_debug::<T>);
        Ok(())
    }

    fn push<T: Component>(&mut self, name: &str) -> Result<usize, RegistryError> {
        if self.by_name.contains_key(name) {
            return Err(RegistryError::NameTaken(name.to_owned()));
        }
        if let Some(&i) = self.by_type.get(&TypeId::of::<T>()) {
            return Err(RegistryError::TypeTaken {
                type_name: std::any::type_name::<T>(),
                existing: self.entries[i].name.clone(),
            });
        }
        let index = self.entries.len();
        self.entries.push(Registration {
            name: name.to_owned(),
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            descriptor: |name| ComponentDescriptor::of_named::<T>(name),
            install_snapshot: None,
            to_json: None,
            insert_json: None,
            check_json: None,
            to_debug: None,
            plain: None,
            save: None,
            layout: Layout::new::<T>(),
            validate: None,
            validate_bytes: None,
            install_immutable: None,
            sparse: false,
        });
        self.by_name.insert(name.to_owned(), index);
        self.by_type.insert(TypeId::of::<T>(), index);
        Ok(index)
    }

    /// Every registration, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Registration> {
        self.entries.iter()
    }

    /// How many types are registered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The registration named `name`.
    pub fn by_name(&self, name: &str) -> Option<&Registration> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }

    /// The registration of `T`.
    pub fn of<T: 'static>(&self) -> Option<&Registration> {
        self.by_type
            .get(&TypeId::of::<T>())
            .map(|&i| &self.entries[i])
    }

    /// The registration of a world's component `id`: by its Rust type, or,
    /// for a component made at runtime, by its name.
    pub fn for_component(&self, world: &WorldCore, id: ComponentId) -> Option<&Registration> {
        let info = world.components().get_info(id)?;
        match info.type_id() {
            Some(t) => self.by_type.get(&t).map(|&i| &self.entries[i]),
            None => self.by_name(info.name()),
        }
    }

    /// Registers every type in `world` under its name (the sparse ones
    /// sparse, [`Registering::sparse`]), tells the world how to snapshot
    /// the plain and cloned ones, and marks the immutable ones
    /// ([`Registering::immutable`]). Idempotent.
    ///
    /// # Errors
    /// [`RegistryError::Register`] for a name the world gives another
    /// type, or a sparse registration of a type the world already stores
    /// in archetypes ([`doecs::RegisterError::StorageFixed`]).
    pub fn install(&self, world: &mut World) -> Result<(), RegistryError> {
        for entry in &self.entries {
            world.register_component(entry.descriptor())?;
            if let Some(install) = entry.install_snapshot {
                install(world);
            }
            if let Some(install) = entry.install_immutable {
                install(world);
            }
        }
        for requirement in &self.requirements {
            match (requirement.0)(world) {
                // Installed before (a second `install` on the same world).
                Ok(()) | Err(doecs::RequireError::Duplicate { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Carries the requirement that `A` requires `B` (made by
    /// `B::default()`, see [`World::register_required`]) into every world
    /// this registry installs into, loaded worlds included: a loader
    /// installs the registry before it places the saved rows, so a
    /// required component the save lacks is made as each row arrives.
    ///
    /// ```
    /// use doecs::World;
    /// use doecs_registry::{ComponentRegistry, SaveFormat, WorldSaveExt};
    /// #[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
    /// struct Hp(u32);
    /// #[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    /// struct Frozen;
    /// let mut registry = ComponentRegistry::new();
    /// registry.register::<Hp>("hp");
    /// registry.register::<Frozen>("frozen");
    /// let mut world = World::new();
    /// let e = world.spawn((Frozen,)); // saved without an Hp
    /// let mut bytes = Vec::new();
    /// world.save(&mut bytes, SaveFormat::Binary, &registry).unwrap();
    /// registry.require::<Frozen, Hp>();
    /// let loaded = World::load(&bytes[..], &registry).unwrap();
    /// assert_eq!(loaded.get::<Hp>(e), Ok(&Hp(0)));
    /// ```
    pub fn require<A: doecs::Component, B: doecs::Component + Default>(&mut self) -> &mut Self {
        self.requirements
            .push(RequirementInstall(std::sync::Arc::new(
                |world: &mut World| world.register_required::<A, B>(),
            )));
        self
    }
}
