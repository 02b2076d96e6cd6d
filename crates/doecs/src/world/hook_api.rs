//! Hooks on a [`World`]: registering them, and applying the commands they
//! record.
//!
//! Hooks fire inside the structural cores (see [`crate::hooks`]); the
//! commands they record wait in the world until the `World` operation that
//! fired them finishes, which then applies them ([`World::flush_hooks`]).
//! Commands applied there may fire more hooks, whose commands are applied
//! in the next round, and so on: breadth first, in recorded order, so the
//! result never depends on timing. A hook that keeps recording commands
//! forever would never let an operation finish, so a flush stops after
//! [`MAX_HOOK_ROUNDS`] rounds and leaves the rest queued for the next
//! operation's flush (nothing is dropped, and nothing hangs).
//!
//! Every `World` operation that can fire hooks (spawn, despawn, insert,
//! remove, exchange, and their untyped and batch forms) flushes when it
//! returns, so hook commands are applied the same way whichever method
//! made the change. The structural cores below (`WorldCore`'s crate-private
//! methods) only fire hooks and queue their commands.

use super::command::CommandFailure;
use super::core::WorldCore;
use super::hooks::ComponentHooks;
use super::World;
use crate::component::{Component, ComponentId};
use crate::error::EntityError;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// Most rounds of hook commands one flush applies.
pub const MAX_HOOK_ROUNDS: usize = 1024;

impl World {
    /// Sets the hooks of component `T` (registering `T` if needed),
    /// replacing any it had. `ComponentHooks::new()` removes them.
    pub fn set_hooks<T: Component>(&mut self, hooks: ComponentHooks) {
        let id = self.core.component_id::<T>();
        self.set_hooks_by_id(id, hooks)
            .expect("the id was just registered");
    }

    /// Sets the hooks of component `id` (a runtime component, say).
    pub fn set_hooks_by_id(
        &mut self,
        id: ComponentId,
        hooks: ComponentHooks,
    ) -> Result<(), EntityError> {
        if self.core.components.get_info(id).is_none() {
            return Err(EntityError::UnknownComponent(id));
        }
        self.core.hooks.set(id, hooks);
        self.refresh_hook_mask(id);
        Ok(())
    }

    /// Brings component `id`'s hook mask, and that of every archetype
    /// holding it, up to date with its hooks and requirements.
    pub(crate) fn refresh_hook_mask(&mut self, id: ComponentId) {
        let mask = self.core.hooks.mask_of(id);
        self.core.components.set_hook_mask(id, mask);
        let core = &mut self.core;
        for arch in core.archetypes.iter_mut() {
            if arch.has(id) {
                arch.refresh_hook_mask(&core.components);
            }
        }
    }

    /// The hooks of component `id`, if it has any.
    pub fn hooks_of(&self, id: ComponentId) -> Option<&ComponentHooks> {
        self.core.hooks.of(id).map(|h| &**h)
    }

    /// Applies the commands hooks recorded, round after round (see the
    /// module docs). World operations call this themselves; calling it is
    /// only needed after [`MAX_HOOK_ROUNDS`] rounds ran out.
    ///
    /// With the `sanitize` feature, this is also where the operation's
    /// invariant check runs: once after the last round (not after each
    /// command of each round), or at once when there are no commands or a
    /// flush is already under way.
    pub fn flush_hooks(&mut self) {
        if !self.core.hooks.commands.is_empty() && !self.flushing_hooks {
            self.apply_hook_commands();
        }
        self.sanitize();
    }

    /// The rounds of [`flush_hooks`](Self::flush_hooks).
    fn apply_hook_commands(&mut self) {
        self.flushing_hooks = true;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.with_checks_held(|world| {
                let mut rounds = 0;
                while !world.core.hooks.commands.is_empty() && rounds < MAX_HOOK_ROUNDS {
                    rounds += 1;
                    let mut batch = std::mem::take(&mut world.core.hooks.commands);
                    let report = world.apply(&mut batch);
                    world.hook_failures.extend(report.failed);
                }
                if !world.core.hooks.commands.is_empty() {
                    let unsettled = super::observers::ObserverError::Unsettled { rounds };
                    world.core.hooks.observers.errors.push(unsettled);
                }
            })
        }));
        self.flushing_hooks = false;
        if let Err(payload) = outcome {
            resume_unwind(payload);
        }
    }

    /// Runs `operation` as one world operation: hooks fire inside it as
    /// usual, but the commands they record wait until it returns, and are
    /// applied then (as [`flush_hooks`](Self::flush_hooks) would). For a
    /// change made of several world calls that must not be interleaved
    /// with hook commands: a level spawn creates its entities, parents them
    /// and gives them their manager instances before any hook's command
    /// can despawn one. Inside a flush (a hook command's own operation),
    /// the commands join that flush's next round instead. If `operation`
    /// panics, the commands stay queued for the next operation's flush.
    pub(crate) fn as_one_operation<R>(&mut self, operation: impl FnOnce(&mut World) -> R) -> R {
        let outer = std::mem::replace(&mut self.flushing_hooks, true);
        let outcome = catch_unwind(AssertUnwindSafe(|| operation(self)));
        self.flushing_hooks = outer;
        match outcome {
            Ok(result) => {
                self.flush_hooks();
                result
            }
            Err(payload) => resume_unwind(payload),
        }
    }

    /// The commands recorded by hooks that failed when applied (an entity
    /// already dead, say), oldest first; taking them empties the list.
    pub fn take_hook_failures(&mut self) -> Vec<CommandFailure> {
        std::mem::take(&mut self.hook_failures)
    }
}

impl Drop for World {
    /// Despawns every entity first when hooks are registered, so `on_replace`
    /// and `on_remove` fire for every component the world still holds (and
    /// entities their commands spawn are despawned too, for as many rounds
    /// as [`MAX_HOOK_ROUNDS`] allows); the storage then drops the rest.
    fn drop(&mut self) {
        let core: &WorldCore = &self.core;
        let any_hooks = core.archetypes.iter().any(|a| a.hook_mask() != 0)
            || core
                .sparse
                .iter()
                .any(|set| set.len() > 0 && core.components.info(set.component()).hook_mask() != 0);
        if !any_hooks {
            return;
        }
        for _ in 0..MAX_HOOK_ROUNDS {
            if self.core.is_empty() {
                break;
            }
            self.clear();
        }
        // Whatever hooks recorded last can no longer apply anywhere.
        self.core.hooks.commands.clear();
    }
}
