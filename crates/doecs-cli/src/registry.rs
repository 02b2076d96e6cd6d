//! The demo's component types in the [`ComponentRegistry`]: the one place
//! that says how each is named, read and written as JSON (serde) and copied
//! as plain bytes (bytemuck). The inspector reads values through it; levels
//! and saves can share it.
//!
//! The names are the ones the level spawner registers the types under
//! (`position`, `velocity`, `mass`, `spin`), so a component of a spawned
//! world is found by its Rust type and shown under the same name. The
//! transform and the DataComponent are managers, not archetype columns; the
//! inspector shows them from the managers themselves.

use crate::components::{Mass, Position, Spin, Velocity};
use doecs_registry::ComponentRegistry;

/// The registry of the demo's components.
pub fn component_registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    registry.register::<Position>("position").plain();
    registry.register::<Velocity>("velocity").plain();
    registry.register::<Mass>("mass").plain();
    registry.register::<Spin>("spin").plain();
    registry
}

#[cfg(test)]
mod tests {
    use super::*;
    use doecs::World;
    use doecs_resource::SpawnOptions;

    #[test]
    fn names_match_the_spawner_and_values_round_trip() {
        let registry = component_registry();
        let json = crate::demo_level::demo_level_json(2, |_| {});
        let (compiler, spawner) = crate::components::registry();
        let blob = compiler
            .compile_str(std::str::from_utf8(&json).unwrap())
            .unwrap();
        let blob = doecs_resource::AlignedBytes::from_slice(&blob);
        let mut world = World::new();
        let (view, skipped) = spawner.load(&blob, SpawnOptions::default()).unwrap();
        spawner.spawn_loaded(&mut world, &view, skipped).unwrap();
        for info in world.components().iter() {
            let Some(reg) = registry.for_component(&world, info.id()) else {
                continue;
            };
            assert_eq!(reg.name(), info.name(), "same name as the spawner's");
        }
        for name in ["position", "velocity", "mass", "spin"] {
            let reg = registry.by_name(name).unwrap();
            assert!(reg.is_serde() && reg.is_plain(), "{name}");
            assert!(reg.component_id(&world).is_some(), "{name} is in the world");
        }
        let ship = world
            .query::<(doecs::Entity, &Position)>()
            .iter()
            .map(|(e, _)| e)
            .next()
            .unwrap();
        let reg = registry.of::<Position>().unwrap();
        let value = reg.value_json(&world, ship).unwrap();
        assert_eq!(value.as_array().unwrap().len(), 3);
        reg.insert_json(&mut world, ship, &serde_json::json!([1.0, 2.0, 3.0]))
            .unwrap();
        assert_eq!(world.get::<Position>(ship).unwrap().0, [1.0, 2.0, 3.0]);
    }
}
