//! The spawner (the `EntitySpawner` of Bitsquid's "Building a Data-Oriented
//! Entity System", part 4): component spawners registered by name, and
//! spawning a validated blob type by type.
//!
//! [`Spawner::spawn`] runs in two phases. **Check** (no change to the world):
//! validate the blob ([`BlobView::parse`]), look up each block's spawner by
//! its identifier (one hash lookup per *type*, never per entity), check sizes,
//! let each spawner validate its whole block, and resolve plain components
//! against the world's registry. **Commit**: register missing plain
//! components, create all entities at once together with their plain
//! components ([`crate::plain`]), then make **one call per component type** in
//! spawn order to each other spawner, passing the entity lookup, the entity
//! indices and the data slice. Unknown types were skipped with one jump while
//! parsing and are listed in the result; in strict mode they are an error.
//! Every error comes from the check phase, so a failed spawn leaves the world
//! untouched.
//!
//! Plain components usually come from a [`ComponentRegistry`]
//! ([`Spawner::register_registry`], [`Spawner::from_registry`]): each plain
//! entry is found in the world by its Rust type, and its validator checks
//! every instance while loading (see [`crate::plain`]). A plain component
//! the registry stores sparse (`Registering::sparse`) is registered sparse
//! in a world that does not know it yet, and the column spawns route its
//! values to its sparse set instead of an archetype. The built-in
//! manager-backed components come from [`crate::BUILTIN_COMPONENTS`].

use crate::error::{LoadError, Problem, RegistrationError, SpawnError};
use crate::format::{LeU32s, NO_PARENT};
use crate::plain::{read_le, spawn_plain, PlainBytes, PlainColumn, PlainType};
use crate::view::{BlobView, BlockView};
use crate::BuiltinComponent;
use doecs::raw::{name_hash, ParentedBatch, ParentsFirst};
use doecs::{ComponentId, Entity, World};
use doecs_registry::ComponentRegistry;
use std::alloc::Layout;
use std::any::TypeId;
use std::collections::HashMap;

/// Everything a spawner gets for one component type: the article's
/// `(entity_lookup, num_instances, entity_index, data)`.
#[derive(Copy, Clone, Debug)]
pub struct SpawnBatch<'a> {
    /// Blob entity index → the entity created for it.
    pub entity_lookup: &'a [Entity],
    /// The owning blob entity of each instance (strictly increasing).
    pub entity_index: LeU32s<'a>,
    /// `num_instances * instance_size` bytes of little-endian instance data.
    pub data: &'a [u8],
    /// Bytes per instance.
    pub instance_size: usize,
    /// The parent of each blob entity (`u32::MAX` for roots; parents first).
    pub parent_index: LeU32s<'a>,
    /// The blob's entities with the `ChildOf` pairs the spawner set from
    /// `parent_index` (`None` when the blob has no hierarchy): a spawner
    /// creating instances for every entity passes it to its manager, which
    /// then reads the parents here instead of looking each entity up (as
    /// the transform spawner does).
    pub parented: Option<&'a ParentedBatch>,
}

impl SpawnBatch<'_> {
    /// Number of instances.
    pub fn num_instances(&self) -> usize {
        self.entity_index.len()
    }

    /// The entity that owns instance `i`.
    #[inline]
    pub fn owner(&self, i: usize) -> Option<Entity> {
        self.entity_lookup
            .get(self.entity_index.get(i)? as usize)
            .copied()
    }
}

/// A spawner for one component type that keeps its own storage (a
/// component manager) or otherwise needs code to create its instances.
pub trait ComponentSpawner: Send + Sync + 'static {
    /// The exact instance size this spawner reads, if fixed. Blocks of
    /// another size are refused while loading.
    fn instance_size(&self) -> Option<usize>;

    /// Checks a whole block before anything is created. Returns the first bad
    /// instance and why. The default accepts everything.
    fn validate(&self, block: &BlockView<'_>) -> Result<(), (usize, String)> {
        let _ = block;
        Ok(())
    }

    /// Creates every instance of the block. Called once per blob, after all
    /// entities exist, with a block that passed [`validate`](Self::validate);
    /// it must not fail.
    fn spawn(&self, world: &mut World, batch: &SpawnBatch<'_>);
}

/// A plain component's check of one instance (its little-endian bytes).
type PlainCheck = Box<dyn Fn(&[u8]) -> Result<(), String> + Send + Sync>;

enum Kind {
    Plain(PlainType, Option<PlainCheck>),
    Custom(Box<dyn ComponentSpawner>),
}

struct Registered {
    name: String,
    kind: Kind,
}

/// Options for [`Spawner::spawn`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SpawnOptions {
    /// Refuse blobs with component types no spawner knows (instead of
    /// skipping them).
    pub strict: bool,
}

/// A component type that was skipped because no spawner knows it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SkippedType {
    /// Its identifier.
    pub component: u64,
    /// Instances skipped.
    pub instances: usize,
    /// Instance bytes skipped.
    pub bytes: usize,
    /// The block's offset in the blob.
    pub offset: u64,
}

/// What a spawn created.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpawnResult {
    /// The entity created for each blob entity, in blob order.
    pub entities: Vec<Entity>,
    /// Component types skipped as unknown.
    pub skipped: Vec<SkippedType>,
    /// Component instances created.
    pub instances: usize,
}

/// Registered component spawners. See the module docs.
#[derive(Default)]
pub struct Spawner {
    by_hash: HashMap<u64, Registered>,
}

impl std::fmt::Debug for Spawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&str> = self.by_hash.values().map(|r| r.name.as_str()).collect();
        names.sort_unstable();
        f.debug_struct("Spawner")
            .field("components", &names)
            .finish()
    }
}

/// A block matched to its spawner during the check phase.
enum Planned<'s, 'b, 'a> {
    Plain(&'s PlainType, &'b BlockView<'a>),
    Custom(&'s dyn ComponentSpawner, &'b BlockView<'a>),
}

impl Spawner {
    /// A spawner with nothing registered.
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in components ([`crate::standard_spawner`]) and every plain
    /// entry of `registry` ([`register_registry`](Self::register_registry)).
    ///
    /// ```
    /// use bytemuck::{Pod, Zeroable};
    /// use doecs_registry::ComponentRegistry;
    /// use doecs_resource::{Compiler, SpawnOptions, Spawner};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
    /// #[repr(transparent)]
    /// struct Mass(f32);
    /// #[derive(Clone, Copy, Serialize, Deserialize, Pod, Zeroable)]
    /// #[repr(C)]
    /// struct Frozen;
    ///
    /// let mut registry = ComponentRegistry::new();
    /// registry
    ///     .register::<Mass>("mass")
    ///     .plain()
    ///     .validate(|m| if m.0 > 0.0 { Ok(()) } else { Err(format!("mass must be > 0, got {}", m.0)) });
    /// registry.register::<Frozen>("frozen").plain();
    /// let compiler = Compiler::from_registry(&registry).unwrap();
    /// let spawner = Spawner::from_registry(&registry).unwrap();
    ///
    /// let blob = compiler
    ///     .compile_str(r#"{"entities": [{"components": {"mass": 2.5, "frozen": null}}]}"#)
    ///     .unwrap();
    /// let mut world = doecs::World::new();
    /// let out = spawner.spawn(&mut world, &blob, SpawnOptions::default()).unwrap();
    /// assert_eq!(world.get::<Mass>(out.entities[0]), Ok(&Mass(2.5)));
    /// assert!(world.get::<Frozen>(out.entities[0]).is_ok());
    ///
    /// let err = compiler
    ///     .compile_str(r#"{"entities": [{"name": "rock", "components": {"mass": 0}}]}"#)
    ///     .unwrap_err();
    /// assert_eq!(err.to_string(), r#"entities[0] ("rock"): component `mass`: mass must be > 0, got 0"#);
    /// ```
    pub fn from_registry(registry: &ComponentRegistry) -> Result<Self, RegistrationError> {
        let mut spawner = crate::standard_spawner();
        spawner.register_registry(registry)?;
        Ok(spawner)
    }

    /// Registers every plain (`bytemuck::Pod`) entry of `registry` under its
    /// name, spawned by copying bytes like
    /// [`register_plain`](Self::register_plain): the world's component is
    /// found by the Rust type (and registered under the entry's name if the
    /// world lacks it). An entry with a validator
    /// ([`doecs_registry::Registering::validate`]) checks every instance
    /// while loading, before anything is created, as
    /// [`register_plain_validated`](Self::register_plain_validated) does.
    /// Entries that are not plain are left out. Registers nothing if a name
    /// or type is taken or a name hash collides.
    pub fn register_registry(
        &mut self,
        registry: &ComponentRegistry,
    ) -> Result<(), RegistrationError> {
        let plain = crate::plain::plain_entries(registry)?;
        for reg in &plain {
            self.check_free(reg.name())?;
            self.check_type_free(reg.name(), reg.type_id())?;
        }
        for reg in plain {
            let check: Option<PlainCheck> = if crate::plain::refused_on_this_host(reg) {
                Some(Box::new(|_| Err(crate::plain::BIG_ENDIAN_HOST.into())))
            } else if reg.is_validated() {
                let owned = reg.clone();
                Some(Box::new(move |le| owned.validate_bytes(le)))
            } else {
                None
            };
            self.insert(reg.name(), Kind::Plain(PlainType::registered(reg), check))?;
        }
        Ok(())
    }

    /// Registers a built-in component (an entry of
    /// [`crate::BUILTIN_COMPONENTS`]).
    pub fn register_builtin(
        &mut self,
        builtin: &BuiltinComponent,
    ) -> Result<(), RegistrationError> {
        self.insert(builtin.name, Kind::Custom((builtin.spawner)()))
    }

    /// Whether `name` can be registered: no registered name has its hash.
    fn check_free(&self, name: &str) -> Result<(), RegistrationError> {
        match self.by_hash.get(&name_hash(name)) {
            None => Ok(()),
            Some(other) if other.name == name => Err(RegistrationError::NameTaken(name.into())),
            Some(other) => Err(RegistrationError::HashCollision {
                name: name.into(),
                other: other.name.clone(),
            }),
        }
    }

    /// Whether the Rust type `type_id` can be registered as `name`: one Rust
    /// type is spawned under one name only.
    fn check_type_free(&self, name: &str, type_id: TypeId) -> Result<(), RegistrationError> {
        let taken = self.by_hash.values().find(|r| match &r.kind {
            Kind::Plain(p, _) => p.type_id == Some(type_id),
            Kind::Custom(_) => false,
        });
        match taken {
            Some(r) => Err(RegistrationError::NameTaken(format!(
                "{} (the type is already registered as `{}`)",
                name, r.name
            ))),
            None => Ok(()),
        }
    }

    fn insert(&mut self, name: &str, kind: Kind) -> Result<(), RegistrationError> {
        self.check_free(name)?;
        let hash = name_hash(name);
        self.by_hash.insert(
            hash,
            Registered {
                name: name.into(),
                kind,
            },
        );
        Ok(())
    }

    /// Registers a plain Rust component type spawned by copying bytes. One
    /// Rust type can be registered under one name only. A type that is
    /// serde serialisable and `bytemuck::Pod` is better registered once in a
    /// [`ComponentRegistry`] ([`register_registry`](Self::register_registry)),
    /// which serves the compiler, saves and tools too.
    pub fn register_plain<T: PlainBytes>(&mut self, name: &str) -> Result<(), RegistrationError> {
        self.insert_plain::<T>(name, None)
    }

    /// [`register_plain`](Self::register_plain) with a check of every
    /// instance while loading, before anything is created: `validate`
    /// returns why a value is refused, and the load fails with
    /// [`Problem::Rejected`] naming the block, the instance and its blob
    /// entity. Plain components otherwise accept any bits; use this for
    /// values the program cannot work with (a zero mass, a NaN position).
    ///
    /// ```
    /// use doecs_resource::{BlobBuilder, SpawnOptions, Spawner};
    /// let mut spawner = Spawner::new();
    /// spawner
    ///     .register_plain_validated::<f32>("mass", |m| {
    ///         if *m > 0.0 { Ok(()) } else { Err(format!("mass must be > 0, got {m}")) }
    ///     })
    ///     .unwrap();
    /// let mut blob = BlobBuilder::roots(2);
    /// let data = [1.5f32, 0.0].iter().flat_map(|m| m.to_le_bytes()).collect();
    /// blob.push_dense(doecs::raw::name_hash("mass"), 4, data);
    /// let mut world = doecs::World::new();
    /// let err = spawner
    ///     .spawn(&mut world, &blob.to_bytes(), SpawnOptions::default())
    ///     .unwrap_err();
    /// assert!(err.to_string().ends_with("`mass` instance 1: mass must be > 0, got 0 (blob entity 1)"));
    /// assert!(world.is_empty());
    /// ```
    pub fn register_plain_validated<T: PlainBytes>(
        &mut self,
        name: &str,
        validate: impl Fn(&T) -> Result<(), String> + Send + Sync + 'static,
    ) -> Result<(), RegistrationError> {
        let check: PlainCheck = Box::new(move |le| validate(&read_le::<T>(le)));
        self.insert_plain::<T>(name, Some(check))
    }

    fn insert_plain<T: PlainBytes>(
        &mut self,
        name: &str,
        check: Option<PlainCheck>,
    ) -> Result<(), RegistrationError> {
        self.check_type_free(name, TypeId::of::<T>())?;
        self.insert(name, Kind::Plain(PlainType::typed::<T>(name), check))
    }

    /// Registers a runtime component (no Rust type) of `layout`, spawned by
    /// copying bytes; in the world it is `ComponentDescriptor::dynamic(name,
    /// layout)`. `scalar_width` (1, 2, 4 or 8) is the size of the scalars its
    /// bytes are made of, used to convert from little-endian on big-endian hosts.
    pub fn register_plain_dynamic(
        &mut self,
        name: &str,
        layout: Layout,
        scalar_width: usize,
    ) -> Result<(), RegistrationError> {
        self.insert(
            name,
            Kind::Plain(PlainType::dynamic(name, layout, scalar_width), None),
        )
    }

    /// Registers a custom spawner.
    pub fn register(
        &mut self,
        name: &str,
        spawner: impl ComponentSpawner,
    ) -> Result<(), RegistrationError> {
        self.insert(name, Kind::Custom(Box::new(spawner)))
    }

    /// The registered name of a component identifier.
    pub fn name_of(&self, component: u64) -> Option<&str> {
        self.by_hash.get(&component).map(|r| r.name.as_str())
    }

    /// Validates `bytes` and checks every known block against its spawner,
    /// without touching any world. Returns the view and the skipped types.
    pub fn load<'a>(
        &self,
        bytes: &'a [u8],
        options: SpawnOptions,
    ) -> Result<(BlobView<'a>, Vec<SkippedType>), LoadError> {
        let view = BlobView::parse(bytes)?;
        let mut skipped = Vec::new();
        for block in view.blocks() {
            match self.by_hash.get(&block.component) {
                None => {
                    if options.strict {
                        return Err(LoadError::new(
                            format!("block[{}].component_identifier", block.position),
                            block.offset,
                            Problem::UnknownType(block.component),
                        ));
                    }
                    skipped.push(SkippedType {
                        component: block.component,
                        instances: block.num_instances(),
                        bytes: block.data.len(),
                        offset: block.offset,
                    });
                }
                Some(r) => check_block(r, block)?,
            }
        }
        Ok((view, skipped))
    }

    /// Spawns a blob into `world`. See the module docs.
    ///
    /// ```
    /// use doecs_resource::{BlobBuilder, SpawnOptions, Spawner};
    /// let mut spawner = Spawner::new();
    /// spawner.register_plain::<f32>("mass").unwrap();
    /// let mut blob = BlobBuilder::new(vec![u32::MAX, 0]);
    /// let data = [1.5f32, 2.5].iter().flat_map(|m| m.to_le_bytes()).collect();
    /// blob.push_dense(doecs::raw::name_hash("mass"), 4, data);
    /// let mut world = doecs::World::new();
    /// let out = spawner.spawn(&mut world, &blob.to_bytes(), SpawnOptions::default()).unwrap();
    /// assert_eq!(world.get::<f32>(out.entities[1]), Ok(&2.5));
    /// ```
    pub fn spawn(
        &self,
        world: &mut World,
        bytes: &[u8],
        options: SpawnOptions,
    ) -> Result<SpawnResult, SpawnError> {
        let (view, skipped) = self.load(bytes, options)?;
        self.commit(world, &view, skipped, false)
    }

    /// Spawns a blob already checked by [`load`](Self::load) with this spawner.
    pub fn spawn_loaded(
        &self,
        world: &mut World,
        view: &BlobView<'_>,
        skipped: Vec<SkippedType>,
    ) -> Result<SpawnResult, SpawnError> {
        self.commit(world, view, skipped, true)
    }

    fn commit(
        &self,
        world: &mut World,
        view: &BlobView<'_>,
        skipped: Vec<SkippedType>,
        recheck: bool,
    ) -> Result<SpawnResult, SpawnError> {
        // Check phase, continued: match blocks and resolve plain components.
        let mut planned = Vec::with_capacity(view.blocks().len());
        for block in view.blocks() {
            if let Some(r) = self.by_hash.get(&block.component) {
                if recheck {
                    check_block(r, block)?;
                }
                planned.push(match &r.kind {
                    Kind::Plain(p, _) => Planned::Plain(p, block),
                    Kind::Custom(s) => Planned::Custom(s.as_ref(), block),
                });
            }
        }
        let plain: Vec<(&PlainType, &BlockView<'_>)> = planned
            .iter()
            .filter_map(|p| match p {
                Planned::Plain(t, b) => Some((*t, *b)),
                Planned::Custom(..) => None,
            })
            .collect();
        if plain.len() > 64 {
            return Err(SpawnError::TooManyPlainTypes(plain.len()));
        }
        let mut resolved: Vec<Option<ComponentId>> = Vec::with_capacity(plain.len());
        for (t, _) in &plain {
            resolved.push(t.resolve(world.components())?);
        }
        let mut known: Vec<ComponentId> = resolved.iter().flatten().copied().collect();
        known.sort_unstable();
        if let Some(w) = known.windows(2).find(|w| w[0] == w[1]) {
            return Err(SpawnError::WorldConflict {
                name: world.components().info(w[0]).name().to_owned(),
                reason: "two plain component names map to the same world component".into(),
            });
        }
        // Commit phase: nothing below fails on any input that passed the checks.
        let mut columns = Vec::with_capacity(plain.len());
        for ((t, block), id) in plain.iter().zip(resolved) {
            let id = match id {
                Some(id) => id,
                None => world
                    .register_component(t.descriptor.clone())
                    .map_err(|e| SpawnError::WorldConflict {
                        name: t.name.clone(),
                        reason: e.to_string(),
                    })?,
            };
            columns.push(PlainColumn {
                id,
                scalar_width: t.scalar_width,
                block,
            });
        }
        // The hierarchy is `ChildOf`, the world's one scene graph; custom
        // spawners (transforms) follow it.
        let parent_index = view.parent_index();
        let parents = parent_index.iter().any(|p| p != NO_PARENT).then(|| {
            let parents = parent_index
                .iter()
                .map(|p| (p != NO_PARENT).then_some(p))
                .collect();
            // SAFETY: `BlobView::parse` refused any parent index that is
            // not below its entity's, and a view is only made by it.
            unsafe { ParentsFirst::new_unchecked(parents) }
        });
        let mut instances: usize = plain.iter().map(|(_, b)| b.num_instances()).sum();
        // One world operation: the commands hooks record while the level
        // arrives wait until every entity is parented and has its custom
        // components.
        let spawned = doecs::raw::as_one_operation(world, |world| {
            let spawned = spawn_plain(world, view.num_entities(), &columns, parents);
            for p in &planned {
                if let Planned::Custom(spawner, block) = p {
                    spawner.spawn(
                        world,
                        &SpawnBatch {
                            entity_lookup: spawned.entities(),
                            entity_index: block.entity_index,
                            data: block.data,
                            instance_size: block.instance_size,
                            parent_index,
                            parented: spawned.parented(),
                        },
                    );
                    instances += block.num_instances();
                }
            }
            spawned
        });
        Ok(SpawnResult {
            entities: spawned.into_entities(),
            skipped,
            instances,
        })
    }
}

/// The entities a spawn created, in blob order: parented in one batch when
/// the blob has a hierarchy.
pub(crate) enum Spawned {
    Roots(Vec<Entity>),
    Parented(ParentedBatch),
}

impl Spawned {
    fn entities(&self) -> &[Entity] {
        match self {
            Spawned::Roots(entities) => entities,
            Spawned::Parented(batch) => batch.children(),
        }
    }

    fn parented(&self) -> Option<&ParentedBatch> {
        match self {
            Spawned::Roots(_) => None,
            Spawned::Parented(batch) => Some(batch),
        }
    }

    fn into_entities(self) -> Vec<Entity> {
        match self {
            Spawned::Roots(entities) => entities,
            Spawned::Parented(batch) => batch.into_children(),
        }
    }
}

fn check_block(r: &Registered, block: &BlockView<'_>) -> Result<(), LoadError> {
    let expected = match &r.kind {
        Kind::Plain(p, _) => Some(p.layout.size()),
        Kind::Custom(s) => s.instance_size(),
    };
    if let Some(expected) = expected {
        if expected != block.instance_size {
            return Err(LoadError::new(
                format!("block[{}].instance_size", block.position),
                block.offset + 12,
                Problem::InstanceSize {
                    name: r.name.clone(),
                    expected: expected as u64,
                    actual: block.instance_size as u64,
                },
            ));
        }
    }
    let checked = match &r.kind {
        Kind::Custom(s) => s.validate(block),
        Kind::Plain(_, Some(check)) => check_plain(check, block),
        Kind::Plain(_, None) => Ok(()),
    };
    checked.map_err(|(instance, message)| {
        LoadError::new(
            format!("block[{}].instance_data", block.position),
            block.data_offset + (instance * block.instance_size) as u64,
            Problem::Rejected {
                name: r.name.clone(),
                instance: instance as u64,
                message,
            },
        )
    })
}

/// Runs a plain component's check on every instance of its block (whose
/// instance size was checked against the type).
fn check_plain(check: &PlainCheck, block: &BlockView<'_>) -> Result<(), (usize, String)> {
    let size = block.instance_size;
    for i in 0..block.num_instances() {
        check(&block.data[i * size..(i + 1) * size]).map_err(|message| {
            let entity = block.entity_index.get(i).unwrap_or(u32::MAX);
            (i, format!("{message} (blob entity {entity})"))
        })?;
    }
    Ok(())
}
