//! The demo's component types in the [`ComponentRegistry`]: the one place
//! that says how each is named, read and written as JSON (serde), copied as
//! plain bytes (bytemuck) and checked ([`Position::validate`] and the
//! others). The level compiler and spawner ([`compiler_and_spawner`]), the
//! inspector and saves all take it.
//!
//! The level compiler checks each value when JSON is compiled (the error
//! names the entity's path), and the spawner checks every instance when a
//! blob is loaded (a hand-made blob with a zero mass is refused before
//! anything is spawned). The transform and the DataComponent are the
//! built-in, manager-backed components of `doecs-resource`
//! (`doecs_resource::BUILTIN_COMPONENTS`), which `from_registry` adds; the
//! inspector shows them from the managers themselves.

use crate::components::{Mass, Position, Spin, Velocity};
use doecs_registry::ComponentRegistry;
use doecs_resource::{Compiler, Spawner};

/// The registry of the demo's components.
pub fn component_registry() -> ComponentRegistry {
    let mut registry = ComponentRegistry::new();
    registry
        .register::<Position>("position")
        .plain()
        .validate(Position::validate);
    registry
        .register::<Velocity>("velocity")
        .plain()
        .validate(Velocity::validate);
    registry
        .register::<Mass>("mass")
        .plain()
        .validate(Mass::validate);
    registry
        .register::<Spin>("spin")
        .plain()
        .validate(Spin::validate);
    registry
}

/// The level compiler and spawner: the built-in `transform` and `data`, and
/// every component of [`component_registry`].
pub fn compiler_and_spawner() -> (Compiler, Spawner) {
    let registry = component_registry();
    let compiler = Compiler::from_registry(&registry).expect("distinct names");
    let spawner = Spawner::from_registry(&registry).expect("distinct names and types");
    (compiler, spawner)
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
        let (compiler, spawner) = compiler_and_spawner();
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

    /// The registration as it was before the registry served levels: one
    /// compile function and one spawner entry per component, by hand.
    fn hand_registered() -> (doecs_resource::Compiler, doecs_resource::Spawner) {
        fn arr<const N: usize>(v: &[f32]) -> [f32; N] {
            v.try_into().unwrap()
        }
        let mut compiler = doecs_resource::standard_compiler();
        let mut spawner = doecs_resource::standard_spawner();
        compiler
            .register_f32s_validated("position", 0, 3, |v| Position(arr(v)).validate())
            .unwrap();
        compiler
            .register_f32s_validated("velocity", 0, 3, |v| Velocity(arr(v)).validate())
            .unwrap();
        compiler
            .register_f32s_validated("mass", 0, 1, |v| Mass(v[0]).validate())
            .unwrap();
        compiler
            .register_f32s_validated("spin", 0, 1, |v| Spin(v[0]).validate())
            .unwrap();
        spawner
            .register_plain_validated::<[f32; 3]>("position", |v| Position(*v).validate())
            .unwrap();
        spawner
            .register_plain_validated::<glam::Vec3>("velocity", |v| {
                Velocity(v.to_array()).validate()
            })
            .unwrap();
        spawner
            .register_plain_validated::<f32>("mass", |v| Mass(*v).validate())
            .unwrap();
        spawner
            .register_plain_validated::<i32>("spin", |v| Spin(f32::from_bits(*v as u32)).validate())
            .unwrap();
        (compiler, spawner)
    }

    #[test]
    fn the_demo_level_compiles_and_spawns_as_before() {
        let json = crate::demo_level::demo_level_json(25, |_| {});
        let json = std::str::from_utf8(&json).unwrap();
        let (old_compiler, old_spawner) = hand_registered();
        let (compiler, spawner) = compiler_and_spawner();
        let old_blob = old_compiler.compile_str(json).unwrap();
        let blob = compiler.compile_str(json).unwrap();
        assert_eq!(blob, old_blob, "the same bytes");

        let blob = doecs_resource::AlignedBytes::from_slice(&blob);
        let mut old_world = World::new();
        let old = old_spawner
            .spawn(&mut old_world, &blob, SpawnOptions { strict: true })
            .unwrap();
        let mut world = World::new();
        let new = spawner
            .spawn(&mut world, &blob, SpawnOptions { strict: true })
            .unwrap();
        assert_eq!(new.entities.len(), crate::demo_level::entity_count(25));
        assert_eq!(new.instances, old.instances);
        assert_eq!(world.len(), old_world.len());
        let mut counts = [0usize; 4];
        for (&e, &o) in new.entities.iter().zip(&old.entities) {
            let pos = world.get::<Position>(e).ok().map(|p| p.0);
            assert_eq!(pos, old_world.get::<[f32; 3]>(o).ok().copied());
            let vel = world.get::<Velocity>(e).ok().map(|v| v.0);
            let old_vel = old_world.get::<glam::Vec3>(o).ok().map(|v| v.to_array());
            assert_eq!(vel, old_vel);
            let mass = world.get::<Mass>(e).ok().map(|m| m.0);
            assert_eq!(mass, old_world.get::<f32>(o).ok().copied());
            let spin = world.get::<Spin>(e).ok().map(|s| s.0.to_bits());
            let old_spin = old_world.get::<i32>(o).ok().map(|s| *s as u32);
            assert_eq!(spin, old_spin);
            for (k, present) in [pos.is_some(), vel.is_some(), mass.is_some(), spin.is_some()]
                .into_iter()
                .enumerate()
            {
                counts[k] += present as usize;
            }
            let tm = world
                .manager::<doecs_transform::TransformManager>()
                .unwrap();
            let old_tm = old_world
                .manager::<doecs_transform::TransformManager>()
                .unwrap();
            let local = tm.lookup(e).and_then(|t| tm.local(t));
            let old_local = old_tm.lookup(o).and_then(|t| old_tm.local(t));
            assert_eq!(local, old_local);
        }
        // 25 ships with position, velocity and mass; 4 parts and 8 sub-parts spin.
        assert_eq!(counts, [25, 25, 25, 25 * 12]);
    }
}
