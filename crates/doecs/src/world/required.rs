//! Required components: registering that `A` requires `B`.
//!
//! When a component that requires others arrives on an entity (spawned,
//! inserted, by a command, a level or a load: every path that fires
//! `on_add`), each required component the entity lacks is inserted, made
//! by its constructor (`B::default()` or the one registered). Requirements
//! chain: if `B` requires `C`, inserting `A` brings `B` and then `C`.
//!
//! Order. The operation that adds `A` completes first, and `A`'s own
//! `on_add` and `on_insert` hooks fire in it; the required components are
//! inserted right after it, before the `World` call returns, as if by a
//! hook command recorded after `A`'s hooks ran: `B`'s hooks fire then. So
//! when the call returns, every requirement holds; code that runs inside
//! the operation (`A`'s hooks) may still see the entity without `B`.
//! A component the entity already has (given with `A`, say) is kept as it
//! is. Registering a requirement does not touch entities that already have
//! `A`. A cycle (`A` requires `B` requires `A`) is refused.

use super::command::CommandBuffer;
use super::hooks::Requirement;
use super::World;
use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use std::sync::Arc;

/// Why a requirement was refused; nothing was registered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RequireError {
    /// `A` requires `B` already.
    #[error("`{component}` already requires `{required}`")]
    Duplicate {
        /// The requiring component.
        component: String,
        /// The required one.
        required: String,
    },
    /// The requirement would close a cycle: `chain` leads from the
    /// required component back to the requiring one.
    #[error("`{component}` cannot require `{required}`: {} would be a cycle", .chain.join(" requires "))]
    Cycle {
        /// The requiring component.
        component: String,
        /// The required one.
        required: String,
        /// The cycle, from the requiring component round to itself.
        chain: Vec<String>,
    },
}

impl World {
    /// Registers that `A` requires `B`, made by `B::default()`. See the
    /// module docs.
    ///
    /// ```
    /// use doecs::World;
    /// #[derive(Default, Debug, PartialEq)]
    /// struct Velocity(f32);
    /// struct Body;
    /// let mut world = World::new();
    /// world.register_required::<Body, Velocity>().unwrap();
    /// let e = world.spawn((Body,));
    /// assert_eq!(world.get::<Velocity>(e), Ok(&Velocity(0.0)));
    /// ```
    pub fn register_required<A: Component, B: Component + Default>(
        &mut self,
    ) -> Result<(), RequireError> {
        self.register_required_with::<A, B>(B::default)
    }

    /// Registers that `A` requires `B`, made by `make`.
    pub fn register_required_with<A: Component, B: Component>(
        &mut self,
        make: impl Fn() -> B + Send + Sync + 'static,
    ) -> Result<(), RequireError> {
        let a = self.core.component_id::<A>();
        let b = self.core.component_id::<B>();
        let name = |id: ComponentId| self.core.components.info(id).name().to_owned();
        if self
            .core
            .hooks
            .requirements(a)
            .iter()
            .any(|r| r.component == b)
        {
            return Err(RequireError::Duplicate {
                component: name(a),
                required: name(b),
            });
        }
        if let Some(path) = self.requirement_path(b, a) {
            let chain: Vec<String> = std::iter::once(a).chain(path).map(name).collect();
            return Err(RequireError::Cycle {
                component: name(a),
                required: name(b),
                chain,
            });
        }
        let make = Arc::new(move |commands: &mut CommandBuffer, entity: Entity| {
            commands.insert_one(entity, make());
        });
        self.core
            .hooks
            .require(a, Requirement { component: b, make });
        self.refresh_hook_mask(a);
        Ok(())
    }

    /// The components `A` requires directly, in registration order.
    pub fn required_by<A: Component>(&self) -> Vec<ComponentId> {
        self.core
            .components
            .id_of::<A>()
            .map(|a| {
                self.core
                    .hooks
                    .requirements(a)
                    .iter()
                    .map(|r| r.component)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A chain of requirements from `from` to `to` (both included), if
    /// there is one.
    fn requirement_path(&self, from: ComponentId, to: ComponentId) -> Option<Vec<ComponentId>> {
        let mut stack = vec![vec![from]];
        let mut seen = vec![from];
        while let Some(path) = stack.pop() {
            let last = *path.last().expect("paths start non-empty");
            if last == to {
                return Some(path);
            }
            for r in self.core.hooks.requirements(last) {
                if !seen.contains(&r.component) {
                    seen.push(r.component);
                    let mut longer = path.clone();
                    longer.push(r.component);
                    stack.push(longer);
                }
            }
        }
        None
    }
}
