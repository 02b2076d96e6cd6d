#![doc = include_str!("../README.md")]

pub mod compiler;
pub mod data;
pub mod error;
pub mod format;
mod parse;
pub mod plain;
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
pub use schema::{EntityDesc, LevelDesc, MAX_NESTED_DEPTH};
pub use spawner::{ComponentSpawner, SkippedType, SpawnBatch, SpawnOptions, SpawnResult, Spawner};
pub use transform::{TransformSpawner, TRANSFORM};
pub use view::{BlobView, BlockView};
pub use writer::{AlignedBytes, BlobBuilder, TypeBlock};

/// A compiler with the built-in components registered: `transform` and `data`.
pub fn standard_compiler() -> Compiler {
    let mut c = Compiler::new();
    c.register_variable(DATA, data::DATA_SPAWN_ORDER, data::compile_data)
        .expect("empty compiler");
    c.register(
        TRANSFORM,
        transform::TRANSFORM_SPAWN_ORDER,
        transform::TRANSFORM_SIZE,
        transform::compile_transform,
    )
    .expect("empty compiler");
    c
}

/// A spawner with the built-in components registered: `transform` and `data`.
pub fn standard_spawner() -> Spawner {
    let mut s = Spawner::new();
    s.register(DATA, DataSpawner).expect("empty spawner");
    s.register(TRANSFORM, TransformSpawner)
        .expect("empty spawner");
    s
}
