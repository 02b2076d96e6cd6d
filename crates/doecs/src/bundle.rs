//! Bundles: tuples of components spawned, inserted or removed together.
//!
//! A bundle is a tuple of distinct component types, `(Position, Velocity)`. It
//! knows its component types and how to move its fields into, or out of, slots
//! of an archetype's columns; the world caches each bundle type's component ids
//! by `TypeId`, so a spawn costs one map lookup for the whole bundle.

use crate::component::{Component, ComponentId, Components};

/// Most fields a bundle can have (the largest tuple `Bundle` is implemented for).
pub const MAX_BUNDLE_FIELDS: usize = 12;

/// A tuple of distinct components. Implemented for tuples of up to 12 elements.
///
/// # Safety
/// `component_ids` must push exactly `FIELD_COUNT` ids, the i-th being field i's
/// type. `write_row` must write field i as a valid value of that type to
/// `field_bases[i]` offset by `row` elements, and `read_row` must read them back
/// the same way.
pub unsafe trait Bundle: Send + Sync + 'static {
    /// Number of fields.
    const FIELD_COUNT: usize;

    /// Registers the field types and pushes their ids, in field order.
    fn component_ids(components: &mut Components, out: &mut Vec<ComponentId>);

    /// The field types' ids, if all are registered, in field order.
    fn registered_ids(components: &Components, out: &mut Vec<ComponentId>) -> bool;

    /// Moves the fields into their columns.
    ///
    /// # Safety
    /// `field_bases[i]` must be the start of a column array of field i's type,
    /// with an uninitialised (or already moved-out) slot at `row`.
    unsafe fn write_row(self, field_bases: &[*mut u8], row: usize);

    /// Moves the fields out of their columns.
    ///
    /// # Safety
    /// `field_bases[i]` must be the start of a column array of field i's type,
    /// with an initialised slot at `row`, which the caller then treats as moved out.
    unsafe fn read_row(field_bases: &[*mut u8], row: usize) -> Self;
}

macro_rules! tuple_bundle {
    ($count:expr; $($name:ident $index:tt),*) => {
        // SAFETY: ids, writes and reads all follow field order, each at its own type.
        unsafe impl<$($name: Component),*> Bundle for ($($name,)*) {
            const FIELD_COUNT: usize = $count;

            #[allow(unused_variables)]
            fn component_ids(components: &mut Components, out: &mut Vec<ComponentId>) {
                $(out.push(components.register::<$name>());)*
            }

            #[allow(unused_variables)]
            fn registered_ids(components: &Components, out: &mut Vec<ComponentId>) -> bool {
                $(
                    match components.id_of::<$name>() {
                        Some(id) => out.push(id),
                        None => return false,
                    }
                )*
                true
            }

            #[allow(unused_variables)]
            #[inline]
            unsafe fn write_row(self, field_bases: &[*mut u8], row: usize) {
                // SAFETY: the caller guarantees each base is a column of that field's type.
                $(unsafe { field_bases[$index].cast::<$name>().add(row).write(self.$index) };)*
            }

            #[allow(unused_variables, clippy::unused_unit)]
            #[inline]
            unsafe fn read_row(field_bases: &[*mut u8], row: usize) -> Self {
                // SAFETY: the caller guarantees each slot holds an initialised value it gives up.
                ($(unsafe { field_bases[$index].cast::<$name>().add(row).read() },)*)
            }
        }
    };
}

tuple_bundle!(0;);
tuple_bundle!(1; A 0);
tuple_bundle!(2; A 0, B 1);
tuple_bundle!(3; A 0, B 1, C 2);
tuple_bundle!(4; A 0, B 1, C 2, D 3);
tuple_bundle!(5; A 0, B 1, C 2, D 3, E 4);
tuple_bundle!(6; A 0, B 1, C 2, D 3, E 4, F 5);
tuple_bundle!(7; A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_bundle!(8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_bundle!(9; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_bundle!(10; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_bundle!(11; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_bundle!(12; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

/// What a world caches about one bundle type.
#[derive(Clone, Debug)]
pub(crate) struct BundleInfo {
    /// Component ids in field order.
    pub ids: Box<[ComponentId]>,
    /// The same ids, sorted: the archetype of an entity spawned with this bundle.
    pub sorted: Box<[ComponentId]>,
}

impl BundleInfo {
    pub(crate) fn new<B: Bundle>(components: &mut Components) -> Self {
        let mut ids = Vec::with_capacity(B::FIELD_COUNT);
        B::component_ids(components, &mut ids);
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            panic!(
                "doecs: bundle `{}` names component `{}` twice",
                std::any::type_name::<B>(),
                components.info(w[0]).name()
            );
        }
        BundleInfo {
            ids: ids.into(),
            sorted: sorted.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_field_order_and_sorted_set() {
        let mut registry = Components::default();
        let later = registry.register::<u64>();
        let info = BundleInfo::new::<(u8, u64, u16)>(&mut registry);
        assert_eq!(info.ids[1], later);
        assert_eq!(info.ids.len(), 3);
        assert!(info.sorted.windows(2).all(|w| w[0] < w[1]));
        let mut out = Vec::new();
        assert!(<(u8, u16)>::registered_ids(&registry, &mut out));
        assert!(!<(u8, i128)>::registered_ids(&registry, &mut Vec::new()));
    }

    #[test]
    #[should_panic(expected = "names component `u32` twice")]
    fn duplicate_fields_panic() {
        let mut registry = Components::default();
        let _ = BundleInfo::new::<(u32, f32, u32)>(&mut registry);
    }
}
