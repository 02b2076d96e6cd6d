//! Closure systems: a name, an access declared at run time, and a body.
//!
//! Function systems are the usual way to write a system; the builder is for
//! systems whose access is only known at run time (a tool choosing
//! components by name, say). [`system`] starts a [`SystemBuilder`].
//! Declarations (`reads`, `writes`, `query`, `reads_resource`,
//! `writes_resource`, `commands`) come first; a body method ends the chain
//! and yields a [`SystemDesc`] of the same [`FunctionSystem`] type a
//! function becomes (its body takes the context in place of parameters),
//! ordered
//! with the same [`SystemDesc::before`] and [`SystemDesc::after`], for
//! [`Schedule::add_system`](crate::Schedule::add_system).
//! The per-entity, per-chunk and parallel bodies declare their query's access
//! themselves, so the common system is one line:
//!
//! ```
//! use doecs::{system, Schedule, World};
//! struct Pos(f32);
//! struct Vel(f32);
//!
//! let mut world = World::new();
//! world.spawn((Pos(0.0), Vel(2.0)));
//! let mut schedule = Schedule::new();
//! schedule.add_system(system("integrate").for_each::<(&mut Pos, &Vel)>(|(p, v)| p.0 += v.0)).unwrap();
//! schedule.run(&mut world).unwrap();
//! assert_eq!(world.query::<&Pos>().iter().next().unwrap().0, 2.0);
//! ```

use super::context::SystemContext;
use super::desc::SystemDesc;
use super::function::{ExclusiveSystem, FunctionSystem};
use super::SystemAccess;
use crate::query::{AccessKey, QueryData, QueryFilter, QueryState};
use crate::world::World;

/// Starts building a system called `name`.
pub fn system(name: impl Into<String>) -> SystemBuilder {
    SystemBuilder {
        name: name.into(),
        access: SystemAccess::default(),
    }
}

/// A system under construction. See the module docs.
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until a body method (`run`, `for_each`, ...) ends it"]
pub struct SystemBuilder {
    name: String,
    access: SystemAccess,
}

impl SystemBuilder {
    /// Declares a read of component `T`.
    pub fn reads<T: 'static>(mut self) -> Self {
        self.access.components.extend(&one_read::<T>());
        self
    }

    /// Declares a write of component `T`.
    pub fn writes<T: 'static>(mut self) -> Self {
        self.access.components.extend(&one_write::<T>());
        self
    }

    /// Declares everything query `Q` reads and writes.
    ///
    /// # Panics
    /// If `Q` aliases (names a component mutably twice, or mutably and immutably).
    pub fn query<Q: QueryData>(self) -> Self {
        self.query_filtered::<Q, ()>()
    }

    /// Declares everything query `Q` filtered by `F` reads and writes (a
    /// change filter reads its component's ticks), and turns on the row
    /// stamps `F`'s change filters need before the system first runs.
    ///
    /// # Panics
    /// As [`SystemBuilder::query`].
    pub fn query_filtered<Q: QueryData, F: QueryFilter + 'static>(mut self) -> Self {
        self.access.components.extend(&QueryState::<Q, F>::access());
        for t in QueryState::<Q, F>::tracked() {
            if !self.access.tracked.contains(&t) {
                self.access.tracked.push(t);
            }
        }
        self
    }

    /// Declares a read of resource `R`, which must exist when the schedule
    /// runs.
    pub fn reads_resource<R: 'static>(mut self) -> Self {
        self.access.resources.extend(&one_read::<R>());
        self.access.required_resources.push(AccessKey::of::<R>());
        self
    }

    /// Declares a write of resource `R`, which must exist when the schedule
    /// runs.
    pub fn writes_resource<R: 'static>(mut self) -> Self {
        self.access.resources.extend(&one_write::<R>());
        self.access.required_resources.push(AccessKey::of::<R>());
        self
    }

    /// Declares that the system records structural changes into its command
    /// buffer ([`SystemContext::commands`]).
    pub fn commands(mut self) -> Self {
        self.access.commands = true;
        self
    }

    /// Ends the chain with a body that gets the [`SystemContext`].
    pub fn run(self, body: impl FnMut(&mut SystemContext<'_>) + Send + 'static) -> SystemDesc {
        // The name was given: it must be unique, as one given with `.named`.
        SystemDesc::new(FunctionSystem::with_access(
            body,
            self.name.clone(),
            self.access,
        ))
        .named(self.name)
    }

    /// Ends the chain with a per-entity body over query `Q`.
    pub fn for_each<Q: QueryData + 'static>(
        self,
        body: impl FnMut(Q::Item<'_>) + Send + 'static,
    ) -> SystemDesc {
        self.for_each_filtered::<Q, ()>(body)
    }

    /// Ends the chain with a per-entity body over query `Q` filtered by `F`.
    pub fn for_each_filtered<Q: QueryData + 'static, F: QueryFilter + 'static>(
        self,
        mut body: impl FnMut(Q::Item<'_>) + Send + 'static,
    ) -> SystemDesc {
        self.query_filtered::<Q, F>()
            .run(move |ctx| ctx.query_filtered::<Q, F>().for_each(&mut body))
    }

    /// Ends the chain with a per-chunk body over query `Q`: it gets the
    /// chunk's slices, e.g. `(&mut [Pos], &[Vel])`.
    pub fn for_each_chunk<Q: QueryData + 'static>(
        self,
        mut body: impl FnMut(Q::Slice<'_>) + Send + 'static,
    ) -> SystemDesc {
        self.query::<Q>()
            .run(move |ctx| ctx.query::<Q>().for_each_chunk(&mut body))
    }

    /// Ends the chain with a per-entity body over query `Q`, split across the
    /// schedule's thread pool.
    pub fn par_for_each<Q: QueryData + 'static>(
        self,
        body: impl Fn(Q::Item<'_>) + Send + Sync + 'static,
    ) -> SystemDesc
    where
        for<'w> Q::Item<'w>: Send,
    {
        self.query::<Q>()
            .run(move |ctx| ctx.query::<Q>().par_for_each(&body))
    }

    /// Ends the chain with a per-chunk body over query `Q`, split across the
    /// schedule's thread pool.
    pub fn par_for_each_chunk<Q: QueryData + 'static>(
        self,
        body: impl Fn(Q::Slice<'_>) + Send + Sync + 'static,
    ) -> SystemDesc
    where
        for<'w> Q::Slice<'w>: Send,
    {
        self.query::<Q>()
            .run(move |ctx| ctx.query::<Q>().par_for_each_chunk(&body))
    }

    /// Ends the chain with a body that gets the whole world. The system runs
    /// alone, at a sync point: command buffers recorded before it are applied
    /// first.
    ///
    /// The declarations made so far are moot: an exclusive system may touch
    /// anything. This is the same system as a function over `&mut World`
    /// added with [`SystemConfig::named`](super::SystemConfig::named).
    pub fn exclusive(self, body: impl FnMut(&mut World) + Send + 'static) -> SystemDesc {
        SystemDesc::new(ExclusiveSystem::new(body, self.name.clone())).named(self.name)
    }
}

fn one_read<T: 'static>() -> crate::query::Access {
    let mut access = crate::query::Access::default();
    access.add_read(AccessKey::of::<T>());
    access
}

fn one_write<T: 'static>() -> crate::query::Access {
    let mut access = crate::query::Access::default();
    access.add_write(AccessKey::of::<T>());
    access
}
