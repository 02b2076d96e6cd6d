//! Query filters: `With<T>`, `Without<T>`, `Or<(..)>`, and tuples of them (all
//! must pass).
//!
//! Filters only decide which archetypes match; they fetch nothing, so they are
//! checked once per archetype when the query's cache learns of it. They also
//! say which components they require or exclude, so the schedule can tell
//! that `Query<&mut A, With<B>>` and `Query<&A, Without<B>>` never touch the
//! same entity.

use super::access::FilteredAccess;
use crate::component::{Component, Components};
use crate::storage::Archetype;
use std::any::TypeId;
use std::marker::PhantomData;

/// Decides which archetypes a query visits.
pub trait QueryFilter {
    /// Whether `archetype` passes.
    fn matches(archetype: &Archetype, components: &Components) -> bool;

    /// Records the component types every passing archetype has (`with`) and
    /// the ones no passing archetype has (`without`). Leaving them out is
    /// always correct, only less precise.
    fn filter_access(access: &mut FilteredAccess) {
        let _ = access;
    }
}

/// Passes archetypes that have `T` (without fetching it).
pub struct With<T>(PhantomData<fn() -> T>);

/// Passes archetypes that lack `T`.
pub struct Without<T>(PhantomData<fn() -> T>);

/// Passes archetypes that pass any of its filters (a tuple of up to 8).
///
/// ```
/// use doecs::{Or, With, World};
/// struct A;
/// struct B;
/// let mut world = World::new();
/// world.spawn((A, 1u8));
/// world.spawn((B, 2u8));
/// world.spawn((3u8,));
/// let sum: u8 = world
///     .query_filtered::<&u8, Or<(With<A>, With<B>)>>()
///     .iter()
///     .sum();
/// assert_eq!(sum, 3);
/// ```
pub struct Or<T>(PhantomData<fn() -> T>);

impl<T: Component> QueryFilter for With<T> {
    fn matches(archetype: &Archetype, components: &Components) -> bool {
        components.id_of::<T>().is_some_and(|id| archetype.has(id))
    }
    fn filter_access(access: &mut FilteredAccess) {
        access.with.push(TypeId::of::<T>());
    }
}

impl<T: Component> QueryFilter for Without<T> {
    fn matches(archetype: &Archetype, components: &Components) -> bool {
        !components.id_of::<T>().is_some_and(|id| archetype.has(id))
    }
    fn filter_access(access: &mut FilteredAccess) {
        access.without.push(TypeId::of::<T>());
    }
}

macro_rules! tuple_filter {
    ($($name:ident),*) => {
        impl<$($name: QueryFilter),*> QueryFilter for ($($name,)*) {
            #[allow(unused_variables)]
            fn matches(archetype: &Archetype, components: &Components) -> bool {
                true $(&& $name::matches(archetype, components))*
            }
            #[allow(unused_variables)]
            fn filter_access(access: &mut FilteredAccess) {
                $($name::filter_access(access);)*
            }
        }

        impl<$($name: QueryFilter),*> QueryFilter for Or<($($name,)*)> {
            #[allow(unused_variables)]
            fn matches(archetype: &Archetype, components: &Components) -> bool {
                false $(|| $name::matches(archetype, components))*
            }
            // An `Or` requires nothing any single branch requires (each may
            // fail), so it records nothing.
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
tuple_filter!(A, B, C, D, E, F, G);
tuple_filter!(A, B, C, D, E, F, G, H);
