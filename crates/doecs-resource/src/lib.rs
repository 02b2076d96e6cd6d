#![doc = include_str!("../README.md")]

pub mod compiler;
pub mod data;
pub mod error;
pub mod format;
pub mod name;
mod parse;
pub mod plain;
pub mod plugin;
pub mod prefab;
pub mod schema;
pub mod spawner;
pub mod transform;
pub mod view;
pub mod writer;

pub use compiler::{CompileFn, Compiler};
pub use data::{DataSpawner, DATA};
pub use error::{CompileError, LoadError, ParentProblem, Problem, RegistrationError, SpawnError};
pub use format::{LeU32s, FORMAT_VERSION, MAGIC, NO_PARENT};
pub use plain::PlainBytes;
pub use plugin::{LevelId, LevelLoaded, LevelPlugin, LevelSystems, Levels};
pub use prefab::{IsASpawner, PrefabSpawner, IS_A, PREFAB};
pub use schema::{EntityDesc, LevelDesc, MAX_NESTED_DEPTH};
pub use spawner::{ComponentSpawner, SkippedType, SpawnBatch, SpawnOptions, SpawnResult, Spawner};
pub use transform::{TransformSpawner, TRANSFORM};
pub use view::{BlobView, BlockView};
pub use writer::{AlignedBytes, BlobBuilder, TypeBlock};

/// A built-in level component: one that lives in a manager rather than an
/// archetype column, registered once here by name for both the compiler and
/// the spawner.
///
/// The built-ins are not entries of a [`doecs_registry::ComponentRegistry`]:
/// a registry entry is an archetype column of one Rust type, which
/// `ComponentRegistry::install` registers in a world and tools read by
/// pointer, while `transform` lives in the world's
/// [`doecs_transform::TransformManager`] and `data` in its
/// [`doecs_data::DataStore`] (tools show them from the managers). They
/// register the same way as a registry's entries otherwise: one entry per
/// component, taken by [`standard_compiler`], [`standard_spawner`],
/// [`Compiler::from_registry`] and [`Spawner::from_registry`], and found by
/// name with [`builtin_component`].
#[derive(Clone, Copy)]
pub struct BuiltinComponent {
    /// The component name in levels (its hash identifies the blob block).
    pub name: &'static str,
    /// Lower spawns first.
    pub spawn_order: i32,
    /// Bytes per instance, or `None` for variable-size instances.
    pub instance_size: Option<usize>,
    /// The component's JSON to its instance bytes.
    pub compile: fn(&serde_json::Value) -> Result<Vec<u8>, String>,
    /// Makes the component's spawner.
    pub spawner: fn() -> Box<dyn ComponentSpawner>,
}

impl std::fmt::Debug for BuiltinComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinComponent")
            .field("name", &self.name)
            .field("spawn_order", &self.spawn_order)
            .field("instance_size", &self.instance_size)
            .finish_non_exhaustive()
    }
}

/// The built-in components: `name` ([`name`]), `transform`
/// ([`transform`]), `prefab` and `is_a` ([`prefab`]), and `data`
/// ([`data`]).
pub const BUILTIN_COMPONENTS: &[BuiltinComponent] = &[
    BuiltinComponent {
        name: name::NAME,
        spawn_order: name::NAME_SPAWN_ORDER,
        instance_size: None,
        compile: name::compile_name,
        spawner: || Box::new(name::NameSpawner),
    },
    BuiltinComponent {
        name: TRANSFORM,
        spawn_order: transform::TRANSFORM_SPAWN_ORDER,
        instance_size: Some(transform::TRANSFORM_SIZE),
        compile: transform::compile_transform,
        spawner: || Box::new(TransformSpawner),
    },
    BuiltinComponent {
        name: prefab::PREFAB,
        spawn_order: prefab::PREFAB_SPAWN_ORDER,
        instance_size: Some(0),
        compile: prefab::compile_prefab,
        spawner: || Box::new(prefab::PrefabSpawner),
    },
    BuiltinComponent {
        name: prefab::IS_A,
        spawn_order: prefab::PREFAB_SPAWN_ORDER,
        instance_size: Some(4),
        compile: prefab::compile_is_a,
        spawner: || Box::new(prefab::IsASpawner),
    },
    BuiltinComponent {
        name: DATA,
        spawn_order: data::DATA_SPAWN_ORDER,
        instance_size: None,
        compile: data::compile_data,
        spawner: || Box::new(DataSpawner),
    },
];

/// The built-in component named `name`, if any.
///
/// ```
/// let t = doecs_resource::builtin_component("transform").unwrap();
/// assert_eq!(t.instance_size, Some(64));
/// assert!(doecs_resource::builtin_component("velocity").is_none());
/// ```
pub fn builtin_component(name: &str) -> Option<&'static BuiltinComponent> {
    BUILTIN_COMPONENTS.iter().find(|b| b.name == name)
}

/// A compiler with the built-in components registered: `transform` and `data`.
pub fn standard_compiler() -> Compiler {
    let mut c = Compiler::new();
    for builtin in BUILTIN_COMPONENTS {
        c.register_builtin(builtin)
            .expect("distinct built-in names");
    }
    c
}

/// A spawner with the built-in components registered: `transform` and `data`.
pub fn standard_spawner() -> Spawner {
    let mut s = Spawner::new();
    for builtin in BUILTIN_COMPONENTS {
        s.register_builtin(builtin)
            .expect("distinct built-in names");
    }
    s
}
