//! The compiler (the `EntityCompiler` of Bitsquid's "Building a Data-Oriented
//! Entity System", part 4): component compilers registered by name with a
//! spawn order, turning a JSON level into a blob.
//!
//! A compile function turns **one** component's JSON into its instance bytes
//! (little-endian, exactly the registered instance size). The compiler walks
//! the level in preorder, so parents precede children, numbers the entities,
//! records each entity's parent, and appends each component's bytes to the
//! block of its type. Blocks are written in spawn order (ties broken by
//! name), and each block's `entity_index` is increasing because entities are
//! visited in order. The name's [`doecs::raw::name_hash`] is the block's
//! component identifier.
//!
//! Components are registered in one of three ways. Most come from a
//! [`ComponentRegistry`], the program's one registration per type
//! ([`Compiler::register_registry`], [`Compiler::from_registry`]): every
//! plain (`bytemuck::Pod`) entry is compiled by reading its JSON with serde
//! and running the entry's validator, markers included (see
//! [`crate::plain`], which also says why that path is for little-endian
//! hosts only). The built-in manager-backed components come from
//! [`crate::BUILTIN_COMPONENTS`]. Anything else is a compile function
//! registered by hand ([`Compiler::register`],
//! [`Compiler::register_variable`], [`Compiler::register_f32s`]).

use crate::error::{CompileError, RegistrationError};
use crate::format::{MAX_VARIABLE_INSTANCE, NO_PARENT};
use crate::schema::{EntityDesc, LevelDesc, Preorder};
use crate::writer::{BlobBuilder, TypeBlock};
use crate::BuiltinComponent;
use doecs::raw::name_hash;
use doecs_registry::ComponentRegistry;
use serde_json::Value;
use std::collections::HashMap;

/// Turns one component's JSON into its instance bytes, or says why not.
pub type CompileFn = Box<dyn Fn(&Value) -> Result<Vec<u8>, String> + Send + Sync>;

struct Registered {
    name: String,
    spawn_order: i32,
    /// `None`: variable-size instances, stored as length-prefixed slots.
    instance_size: Option<usize>,
    compile: CompileFn,
}

/// Registered component compilers. See the module docs.
///
/// ```
/// use doecs_resource::Compiler;
/// let mut compiler = Compiler::new();
/// compiler.register_f32s("velocity", 10, 3).unwrap();
/// let blob = compiler
///     .compile_str(r#"{"entities": [{"components": {"velocity": [1, 2, 3]}}]}"#)
///     .unwrap();
/// let view = doecs_resource::BlobView::parse(&blob).unwrap();
/// assert_eq!(view.blocks()[0].data.len(), 12);
/// ```
#[derive(Default)]
pub struct Compiler {
    by_name: HashMap<String, Registered>,
}

impl std::fmt::Debug for Compiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<(&str, i32)> = self
            .by_name
            .values()
            .map(|r| (r.name.as_str(), r.spawn_order))
            .collect();
        names.sort_unstable();
        f.debug_struct("Compiler")
            .field("components", &names)
            .finish()
    }
}

impl Compiler {
    /// A compiler with nothing registered.
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in components ([`crate::standard_compiler`]) and every
    /// plain entry of `registry` ([`register_registry`](Self::register_registry)).
    ///
    /// ```
    /// use bytemuck::{Pod, Zeroable};
    /// use doecs_registry::ComponentRegistry;
    /// use doecs_resource::{BlobView, Compiler};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Clone, Copy, Serialize, Deserialize, Pod, Zeroable)]
    /// #[repr(C)]
    /// struct Velocity { x: f32, y: f32, z: f32 }
    /// #[derive(Clone, Copy, Serialize, Deserialize, Pod, Zeroable)]
    /// #[repr(C)]
    /// struct Frozen;
    ///
    /// let mut registry = ComponentRegistry::new();
    /// registry.register::<Velocity>("velocity").plain();
    /// registry.register::<Frozen>("frozen").plain();
    /// let compiler = Compiler::from_registry(&registry).unwrap();
    /// let blob = compiler
    ///     .compile_str(r#"{"entities": [{"components": {
    ///         "transform": {}, "velocity": {"x": 1, "y": 2, "z": 3}, "frozen": null
    ///     }}]}"#)
    ///     .unwrap();
    /// let view = BlobView::parse(&blob).unwrap();
    /// assert_eq!(view.blocks().len(), 3);
    /// ```
    pub fn from_registry(registry: &ComponentRegistry) -> Result<Self, RegistrationError> {
        let mut compiler = crate::standard_compiler();
        compiler.register_registry(registry)?;
        Ok(compiler)
    }

    /// Registers every plain (`bytemuck::Pod`) entry of `registry` under its
    /// name, with spawn order 0. Its compile function reads the component's
    /// JSON with serde ([`doecs_registry::Registration::json_to_bytes`]), a
    /// marker (zero-sized type) also from `null`, `true` or `{}`, and runs
    /// the entry's validator ([`doecs_registry::Registering::validate`]); a
    /// value of the wrong shape or refused by the validator is
    /// [`CompileError::Component`], naming the entity and the component.
    /// Entries that are not plain are left out: a level cannot hold them.
    /// Registers nothing if a name is taken or collides.
    pub fn register_registry(
        &mut self,
        registry: &ComponentRegistry,
    ) -> Result<(), RegistrationError> {
        let plain = crate::plain::plain_entries(registry)?;
        for reg in &plain {
            self.check_free(reg.name())?;
        }
        for reg in plain {
            let owned = reg.clone();
            let size = reg.layout().size();
            self.insert(
                reg.name(),
                0,
                Some(size),
                Box::new(move |v| crate::plain::compile_registered(&owned, v)),
            )?;
        }
        Ok(())
    }

    /// Registers a built-in component (an entry of
    /// [`crate::BUILTIN_COMPONENTS`]).
    pub fn register_builtin(
        &mut self,
        builtin: &BuiltinComponent,
    ) -> Result<(), RegistrationError> {
        let compile = builtin.compile;
        self.insert(
            builtin.name,
            builtin.spawn_order,
            builtin.instance_size,
            Box::new(compile),
        )
    }

    /// Registers the compile function of component `name`. Lower
    /// `spawn_order` compiles, and so spawns, first.
    pub fn register(
        &mut self,
        name: &str,
        spawn_order: i32,
        instance_size: usize,
        compile: impl Fn(&Value) -> Result<Vec<u8>, String> + Send + Sync + 'static,
    ) -> Result<(), RegistrationError> {
        self.insert(name, spawn_order, Some(instance_size), Box::new(compile))
    }

    /// Registers a component whose instances vary in size. The block stores
    /// each instance in a slot of the block's `instance_size` bytes: a
    /// little-endian `u32` length, the bytes, then zero padding (see
    /// [`crate::format::variable_instance`]). The slot is the largest
    /// instance plus four, rounded up to a multiple of four.
    pub fn register_variable(
        &mut self,
        name: &str,
        spawn_order: i32,
        compile: impl Fn(&Value) -> Result<Vec<u8>, String> + Send + Sync + 'static,
    ) -> Result<(), RegistrationError> {
        self.insert(name, spawn_order, None, Box::new(compile))
    }

    /// Whether `name` can be registered: not taken, and no registered name
    /// has the same hash.
    fn check_free(&self, name: &str) -> Result<(), RegistrationError> {
        if self.by_name.contains_key(name) {
            return Err(RegistrationError::NameTaken(name.into()));
        }
        let hash = name_hash(name);
        if let Some(other) = self.by_name.values().find(|r| name_hash(&r.name) == hash) {
            return Err(RegistrationError::HashCollision {
                name: name.into(),
                other: other.name.clone(),
            });
        }
        Ok(())
    }

    fn insert(
        &mut self,
        name: &str,
        spawn_order: i32,
        instance_size: Option<usize>,
        compile: CompileFn,
    ) -> Result<(), RegistrationError> {
        self.check_free(name)?;
        self.by_name.insert(
            name.into(),
            Registered {
                name: name.into(),
                spawn_order,
                instance_size,
                compile,
            },
        );
        Ok(())
    }

    /// Registers a component of `n` little-endian `f32`s, written in JSON as
    /// an array of `n` numbers (or a bare number when `n == 1`).
    pub fn register_f32s(
        &mut self,
        name: &str,
        spawn_order: i32,
        n: usize,
    ) -> Result<(), RegistrationError> {
        self.register(name, spawn_order, 4 * n, move |v| {
            let values = f32s(v, n)?;
            Ok(values.iter().flat_map(|x| x.to_le_bytes()).collect())
        })
    }

    /// [`register_f32s`](Self::register_f32s) with a check of the values:
    /// `validate` gets the `n` numbers (already known to be finite) and
    /// returns why they are refused, which the compile error reports with
    /// the entity's path. Use the same check in the spawner
    /// ([`crate::Spawner::register_plain_validated`]) so hand-made blobs are
    /// held to the same rule. For a Rust type, prefer one registration with
    /// a validator in a [`ComponentRegistry`]
    /// ([`register_registry`](Self::register_registry)), which serves both.
    ///
    /// ```
    /// use doecs_resource::Compiler;
    /// let mut compiler = Compiler::new();
    /// compiler
    ///     .register_f32s_validated("mass", 0, 1, |m| {
    ///         if m[0] > 0.0 { Ok(()) } else { Err(format!("mass must be > 0, got {}", m[0])) }
    ///     })
    ///     .unwrap();
    /// let err = compiler
    ///     .compile_str(r#"{"entities": [{"name": "rock", "components": {"mass": 0}}]}"#)
    ///     .unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     r#"entities[0] ("rock"): component `mass`: mass must be > 0, got 0"#
    /// );
    /// ```
    pub fn register_f32s_validated(
        &mut self,
        name: &str,
        spawn_order: i32,
        n: usize,
        validate: impl Fn(&[f32]) -> Result<(), String> + Send + Sync + 'static,
    ) -> Result<(), RegistrationError> {
        self.register(name, spawn_order, 4 * n, move |v| {
            let values = f32s(v, n)?;
            validate(&values)?;
            Ok(values.iter().flat_map(|x| x.to_le_bytes()).collect())
        })
    }

    /// The registered names with their spawn order and instance size
    /// (`None` for variable-size components).
    pub fn components(&self) -> Vec<(&str, i32, Option<usize>)> {
        let mut v: Vec<_> = self
            .by_name
            .values()
            .map(|r| (r.name.as_str(), r.spawn_order, r.instance_size))
            .collect();
        v.sort_unstable_by_key(|&(n, o, _)| (o, n));
        v
    }

    /// Compiles JSON text (see [`crate::schema`]) to a blob.
    ///
    /// Each top-level entity (with its nested children) is compiled as soon
    /// as it is parsed and then dropped, so memory holds the text and the
    /// compiled instances, never the whole parsed level.
    pub fn compile_str(&self, json: &str) -> Result<Vec<u8>, CompileError> {
        let mut state = CompileState::new(self);
        crate::parse::parse_level(json, &mut |k, e| state.add_top(k, &e))?;
        Ok(state.finish().to_bytes())
    }

    /// Compiles a parsed level to a blob.
    pub fn compile(&self, level: &LevelDesc) -> Result<Vec<u8>, CompileError> {
        Ok(self.compile_to_builder(level)?.to_bytes())
    }

    /// Compiles a parsed level to a [`BlobBuilder`] (blocks in spawn order).
    pub fn compile_to_builder(&self, level: &LevelDesc) -> Result<BlobBuilder, CompileError> {
        let mut state = CompileState::new(self);
        for (k, e) in level.entities.iter().enumerate() {
            state.add_top(k, e)?;
        }
        Ok(state.finish())
    }
}

/// A compile in progress: entities numbered so far and their instances.
struct CompileState<'c> {
    compiler: &'c Compiler,
    walk: Preorder,
    parents: Vec<u32>,
    blocks: HashMap<&'c str, TypeBlock>,
    variable: HashMap<&'c str, Vec<Vec<u8>>>,
    /// Entity name → its blob index, `None` once the name is taken twice:
    /// what `is_a` resolves against.
    names: HashMap<String, Option<u32>>,
}

impl<'c> CompileState<'c> {
    fn new(compiler: &'c Compiler) -> Self {
        CompileState {
            compiler,
            walk: Preorder::default(),
            parents: Vec::new(),
            blocks: HashMap::new(),
            variable: HashMap::new(),
            names: HashMap::new(),
        }
    }

    /// Compiles top-level entity `k` and its nested children.
    fn add_top(&mut self, k: usize, top: &EntityDesc) -> Result<(), CompileError> {
        let CompileState {
            compiler,
            walk,
            parents,
            blocks,
            variable,
            names,
        } = self;
        walk.visit_top(k, top, &mut |me, parent, entity, describe| {
            if me >= u32::MAX as usize {
                return Err(CompileError::TooLarge(format!(
                    "more than {} entities",
                    u32::MAX - 1
                )));
            }
            parents.push(parent.map_or(NO_PARENT, |p| p as u32));
            // Named after `is_a` is resolved: an entity is never its own prefab.
            let named_later = entity.name.clone();
            for (name, value) in &entity.components {
                let Some(r) = compiler.by_name.get(name) else {
                    return Err(CompileError::UnknownComponent {
                        entity: describe(),
                        component: name.clone(),
                    });
                };
                let compiled = if name == crate::prefab::IS_A {
                    resolve_is_a(names, value).map(crate::prefab::encode_is_a)
                } else {
                    (r.compile)(value)
                };
                let bytes = compiled.map_err(|message| CompileError::Component {
                    entity: describe(),
                    component: name.clone(),
                    message,
                })?;
                push_instance(blocks, variable, r, me, bytes, describe)?;
            }
            // The entity's own name becomes its `Name` where the compiler
            // knows the built-in `name` component.
            if let (Some(own), Some(r)) = (&entity.name, compiler.by_name.get(crate::name::NAME)) {
                if entity.components.contains_key(crate::name::NAME) {
                    return Err(CompileError::Component {
                        entity: describe(),
                        component: crate::name::NAME.to_owned(),
                        message:
                            "the name is given twice: the entity's `name` and a `name` component"
                                .to_owned(),
                    });
                }
                let bytes =
                    crate::name::compile_name(&Value::String(own.clone())).map_err(|message| {
                        CompileError::Component {
                            entity: describe(),
                            component: crate::name::NAME.to_owned(),
                            message,
                        }
                    })?;
                push_instance(blocks, variable, r, me, bytes, describe)?;
            }
            if let Some(n) = named_later {
                names
                    .entry(n)
                    .and_modify(|slot| *slot = None)
                    .or_insert(Some(me as u32));
            }
            Ok(())
        })
    }

    /// Lays out the variable-size blocks and orders the blocks.
    fn finish(self) -> BlobBuilder {
        let CompileState {
            compiler,
            parents,
            mut blocks,
            variable,
            ..
        } = self;
        for (name, instances) in variable {
            let longest = instances.iter().map(Vec::len).max().unwrap_or(0);
            let slot = (longest + 4).div_ceil(4) * 4;
            let block = blocks
                .get_mut(name)
                .expect("block made with the first instance");
            block.instance_size = u32::try_from(slot).expect("bounded by MAX_VARIABLE_INSTANCE");
            block.data.reserve(slot * instances.len());
            for bytes in instances {
                block
                    .data
                    .extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                block.data.extend_from_slice(&bytes);
                block
                    .data
                    .resize(block.data.len() + slot - 4 - bytes.len(), 0);
            }
        }
        let mut ordered: Vec<(i32, &str, TypeBlock)> = blocks
            .into_iter()
            .map(|(name, b)| (compiler.by_name[name].spawn_order, name, b))
            .collect();
        ordered.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let mut builder = BlobBuilder::new(parents);
        for (_, _, block) in ordered {
            builder.push_block(block);
        }
        builder
    }
}

/// Adds entity `me`'s instance `bytes` of component `r` to its block
/// (variable-size instances wait in `variable` until the compile ends).
fn push_instance<'c>(
    blocks: &mut HashMap<&'c str, TypeBlock>,
    variable: &mut HashMap<&'c str, Vec<Vec<u8>>>,
    r: &'c Registered,
    me: usize,
    bytes: Vec<u8>,
    describe: &dyn Fn() -> String,
) -> Result<(), CompileError> {
    let name = &r.name;
    let size = match r.instance_size {
        Some(size) if bytes.len() != size => {
            return Err(CompileError::WrongSize {
                component: name.clone(),
                expected: size,
                actual: bytes.len(),
            })
        }
        Some(size) => size,
        None if bytes.len() <= MAX_VARIABLE_INSTANCE => 0,
        None => {
            return Err(CompileError::TooLarge(format!(
                "{}: component `{name}` instance of {} bytes exceeds {MAX_VARIABLE_INSTANCE}",
                describe(),
                bytes.len()
            )))
        }
    };
    let block = blocks.entry(r.name.as_str()).or_insert_with(|| TypeBlock {
        component: name_hash(&r.name),
        instance_size: size as u32,
        entity_index: Vec::new(),
        data: Vec::new(),
    });
    block.entity_index.push(me as u32);
    if r.instance_size.is_some() {
        block.data.extend_from_slice(&bytes);
    } else {
        variable.entry(r.name.as_str()).or_default().push(bytes);
    }
    Ok(())
}

/// Reads `n` finite numbers: an array of `n`, or a bare number when `n == 1`.
pub fn f32s(v: &Value, n: usize) -> Result<Vec<f32>, String> {
    let items: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        Value::Number(_) if n == 1 => vec![v],
        _ => return Err(format!("expected an array of {n} numbers, found {v}")),
    };
    if items.len() != n {
        return Err(format!("expected {n} numbers, found {}", items.len()));
    }
    items
        .into_iter()
        .map(|x| {
            let f = x
                .as_f64()
                .ok_or_else(|| format!("expected a number, found {x}"))? as f32;
            if f.is_finite() {
                Ok(f)
            } else {
                Err(format!("{x} is not a finite f32"))
            }
        })
        .collect()
}

/// The blob index of the earlier entity `value` names, for `is_a`.
fn resolve_is_a(
    names: &HashMap<String, Option<u32>>,
    value: &serde_json::Value,
) -> Result<u32, String> {
    let Some(name) = value.as_str() else {
        return Err(format!(
            "expected the name of an earlier entity, found {value}"
        ));
    };
    match names.get(name) {
        Some(Some(index)) => Ok(*index),
        Some(None) => Err(format!("more than one earlier entity is named `{name}`")),
        None => Err(format!(
            "no earlier entity is named `{name}` (a prefab must be declared before its instances)"
        )),
    }
}
