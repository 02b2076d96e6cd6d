//! Query filters: `With<T>` and `Without<T>`, and tuples of them.
//!
//! Filters only decide which archetypes match; they fetch nothing, so they are
//! checked once per archetype when the query's cache learns of it.

use crate::component::{Component, Components};
use crate::storage::Archetype;
use std::marker::PhantomData;

/// Decides which archetypes a query visits.
pub trait QueryFilter {
    /// Whether `archetype` passes.
    fn matches(archetype: &Archetype, components: &Components) -> bool;
}

/// Passes archetypes that have `T` (without fetching it).
pub struct With<T>(PhantomData<fn() -> T>);

/// Passes archetypes that lack `T`.
pub struct Without<T>(PhantomData<fn() -> T>);

impl<T: Component> QueryFilter for With<T> {
    fn matches(archetype: &Archetype, components: &Components) -> bool {
        components.id_of::<T>().is_some_and(|id| archetype.has(id))
    }
}

impl<T: Component> QueryFilter for Without<T> {
    fn matches(archetype: &Archetype, components: &Components) -> bool {
        !components.id_of::<T>().is_some_and(|id| archetype.has(id))
    }
}

macro_rules! tuple_filter {
    ($($name:ident),*) => {
        impl<$($name: QueryFilter),*> QueryFilter for ($($name,)*) {
            #[allow(unused_variables)]
            fn matches(archetype: &Archetype, components: &Components) -> bool {
                true $(&& $name::matches(archetype, components))*
            }
        }
    };
}

tuple_filter!();
tuple_filter!(A);
tuple_filter!(A, B);
tuple_filter!(A, B, C);
tuple_filter!(A, B, C, D);
tuple_filter!(A, B, C, D, E);
tuple_filter!(A, B, C, D, E, F);
