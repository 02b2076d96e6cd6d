//! Shared fixtures: a compiler/spawner pair with plain components and a
//! level generator.
#![allow(dead_code)]

use doecs_resource::{standard_compiler, standard_spawner, Compiler, Spawner};
use std::alloc::Layout;

/// Compiler and spawner for transform, position, velocity, mass and tag.
pub fn registry() -> (Compiler, Spawner) {
    let mut c = standard_compiler();
    let mut s = standard_spawner();
    c.register_f32s("position", 0, 3).unwrap();
    c.register_f32s("velocity", 0, 3).unwrap();
    c.register_f32s("mass", 1, 1).unwrap();
    // A runtime component of 2 u16s ("team", "squad").
    c.register("tag", 2, 4, |v| {
        let a = v.as_array().ok_or("expected [team, squad]")?;
        if a.len() != 2 {
            return Err("expected [team, squad]".into());
        }
        let mut out = Vec::new();
        for x in a {
            let n = x
                .as_u64()
                .filter(|&n| n <= u16::MAX as u64)
                .ok_or("expected a u16")?;
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        Ok(out)
    })
    .unwrap();
    s.register_plain::<[f32; 3]>("position").unwrap();
    s.register_plain::<glam::Vec3>("velocity").unwrap();
    s.register_plain::<f32>("mass").unwrap();
    s.register_plain_dynamic("tag", Layout::from_size_align(4, 2).unwrap(), 2)
        .unwrap();
    (c, s)
}

/// A level whose entities have different component sets.
pub const MIXED_LEVEL: &str = r#"{
  "entities": [
    { "name": "ship",
      "components": {
        "transform": { "translation": [1, 2, 3], "rotation": [0, 0.7071068, 0, 0.7071068] },
        "position": [1, 2, 3], "velocity": [0.5, 0, 0], "mass": 4, "tag": [1, 7],
        "data": { "stats": { "health": 100, "armor": [1, 2, 3] }, "name": "orc" }
      },
      "children": [
        { "name": "hull", "components": { "transform": { "translation": [0, 1, 0], "scale": 2 } },
          "children": [ { "components": { "transform": { "translation": [0, 0, 1] }, "mass": 0.5 } } ] },
        { "name": "marker", "components": { "tag": [2, 9] },
          "children": [ { "name": "light", "components": { "transform": { "translation": [5, 0, 0] } } } ] }
      ] },
    { "name": "rock", "components": { "position": [9, 9, 9], "mass": 100, "data": { "hard": true } } },
    { "name": "empty" }
  ]
}"#;
