//! Bundles: tuples of components spawned, inserted or removed together.
//!
//! A bundle is a tuple of distinct component types, `(Position, Velocity)`. It
//! knows its component types and how to move its fields into, or out of, slots
//! of an archetype's columns.
//!
//! Each world gives every bundle it meets a dense [`BundleId`] in its
//! [`Bundles`] registry: typed bundles are found by `TypeId` (one compare in
//! the common case), runtime bundles (a list of component ids, for the
//! untyped API and entity builders) by that list. The archetype graph caches
//! one insert and one remove edge per (archetype, bundle), so every path that
//! adds or removes a bundle, typed or not, looks its target up once.
//!
//! A bundle that names one component twice is refused when it is first
//! registered, before any component is registered or any entity created, so
//! the refused call leaves the world exactly as it was.

use crate::component::{Component, ComponentId, Components};
use crate::error::EntityError;
use crate::type_index::TypeIndex;
use std::any::TypeId;
use std::collections::HashMap;

/// Most fields a bundle can have (the largest tuple `Bundle` is implemented for).
pub const MAX_BUNDLE_FIELDS: usize = 12;

/// A tuple of distinct components. Implemented for tuples of up to 12 elements.
///
/// # Safety
/// `field_types` and `component_ids` must push exactly `FIELD_COUNT` entries,
/// the i-th being field i's type. `write_row` must write field i as a valid value of that type to
/// `field_bases[i]` offset by `row` elements, and `read_row` must read them back
/// the same way.
pub unsafe trait Bundle: Send + Sync + 'static {
    /// Number of fields.
    const FIELD_COUNT: usize;

    /// Pushes each field's `TypeId` and type name, in field order.
    fn field_types(out: &mut Vec<(TypeId, &'static str)>);

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

    /// Hands each field to `sink`, in field order (how an
    /// [`EntityBuilder`](crate::EntityBuilder) takes a bundle apart).
    fn into_fields(self, sink: &mut impl FieldSink);
}

/// Takes a bundle's fields one at a time, each at its own type (see
/// [`Bundle::into_fields`]).
pub trait FieldSink {
    /// Takes one field.
    fn field<T: Component>(&mut self, value: T);
}

/// A bundle whose fields are all `Clone`: an
/// [`EntityTemplate`](crate::EntityTemplate) takes it apart
/// ([`EntityTemplate::add_bundle`](crate::EntityTemplate::add_bundle)).
/// Implemented for tuples of clonable components.
pub trait CloneBundle: Bundle {
    /// Hands each field to `sink`, in field order.
    fn into_clone_fields(self, sink: &mut impl CloneFieldSink);
}

/// Takes a [`CloneBundle`]'s fields one at a time.
pub trait CloneFieldSink {
    /// Takes one field.
    fn field<T: Component + Clone>(&mut self, value: T);
}

/// What `#[derive(Bundle)]` uses to refuse a field that is itself a bundle
/// but is not marked `#[bundle]`. Not part of the API.
#[doc(hidden)]
pub mod __private {
    use super::Bundle;
    use std::marker::PhantomData;

    /// `IsBundle::<T>::IS_BUNDLE` is `true` exactly when `T` is a bundle:
    /// the inherent constant applies when `T: Bundle`, and takes
    /// precedence over the trait's `false` (the "autoref specialization"
    /// idiom, on constants).
    pub struct IsBundle<T>(PhantomData<T>);

    impl<T: Bundle> IsBundle<T> {
        /// `T` is a bundle.
        pub const IS_BUNDLE: bool = true;
    }

    /// The fallback: not a bundle.
    pub trait NotBundle {
        /// `T` is not a bundle.
        const IS_BUNDLE: bool = false;
    }

    impl<T> NotBundle for IsBundle<T> {}
}

macro_rules! tuple_bundle {
    ($count:expr; $($name:ident $index:tt),*) => {
        // SAFETY: ids, writes and reads all follow field order, each at its own type.
        unsafe impl<$($name: Component),*> Bundle for ($($name,)*) {
            const FIELD_COUNT: usize = $count;

            #[allow(unused_variables)]
            fn field_types(out: &mut Vec<(TypeId, &'static str)>) {
                $(out.push((TypeId::of::<$name>(), std::any::type_name::<$name>()));)*
            }

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

            #[allow(unused_variables)]
            fn into_fields(self, sink: &mut impl FieldSink) {
                $(sink.field(self.$index);)*
            }
        }

        impl<$($name: Component + Clone),*> CloneBundle for ($($name,)*) {
            #[allow(unused_variables)]
            fn into_clone_fields(self, sink: &mut impl CloneFieldSink) {
                $(sink.field(self.$index);)*
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

/// A bundle's dense id within one world's [`Bundles`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BundleId(u32);

impl crate::type_index::Placeholder for BundleId {
    const PLACEHOLDER: Self = BundleId(0);
}

impl BundleId {
    /// The id as an index.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a world knows about one bundle.
#[derive(Clone, Debug)]
pub struct BundleInfo {
    /// Component ids in field order.
    ids: Box<[ComponentId]>,
    /// The same ids, sorted.
    sorted: Box<[ComponentId]>,
    /// How the bundle splits, if it has sparse fields.
    split: Option<Box<SparseSplit>>,
}

/// How a bundle with sparse fields splits: its dense fields form a bundle
/// of their own, which moves rows; its sparse fields go to their sets.
#[derive(Clone, Debug)]
pub(crate) struct SparseSplit {
    /// The bundle of the dense fields, in field order.
    pub(crate) dense: BundleId,
    /// The field index of each dense field, in field order.
    pub(crate) dense_fields: Box<[usize]>,
    /// The field index and component of each sparse field, in field order.
    pub(crate) sparse_fields: Box<[(usize, ComponentId)]>,
}

impl BundleInfo {
    /// Component ids in field order.
    #[inline]
    pub fn ids(&self) -> &[ComponentId] {
        &self.ids
    }

    /// The component ids, sorted: the archetype of an entity spawned with
    /// exactly this bundle.
    #[inline]
    pub fn sorted(&self) -> &[ComponentId] {
        &self.sorted
    }

    /// How the bundle splits, if it has sparse fields.
    #[inline(always)]
    pub(crate) fn split(&self) -> Option<&SparseSplit> {
        self.split.as_deref()
    }
}

/// The bundles a world has met. See the module docs.
///
/// # Invariants
/// - `infos[b]` describes `BundleId(b)`; its ids are distinct and registered.
/// - `by_type` and `by_ids` map to ids of `infos` whose field ids match.
#[derive(Debug, Default)]
pub struct Bundles {
    infos: Vec<BundleInfo>,
    by_type: TypeIndex<BundleId>,
    by_ids: HashMap<Box<[ComponentId]>, BundleId>,
}

impl Bundles {
    /// The info of `id`.
    ///
    /// # Panics
    /// If `id` was not issued here.
    #[inline]
    pub fn info(&self, id: BundleId) -> &BundleInfo {
        &self.infos[id.index()]
    }

    /// Number of bundles.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// Whether no bundle was registered.
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    /// The id of bundle type `B`, if it was registered.
    pub fn id_of<B: Bundle>(&self) -> Option<BundleId> {
        self.by_type.get(TypeId::of::<B>())
    }

    /// The id of bundle type `B`, registering it (and its component types) on
    /// first use. A bundle naming one type twice is refused before anything
    /// is registered.
    #[inline]
    pub fn of<B: Bundle>(&mut self, components: &mut Components) -> Result<BundleId, EntityError> {
        match self.by_type.get(TypeId::of::<B>()) {
            Some(id) => Ok(id),
            None => self.register_type::<B>(components),
        }
    }

    #[cold]
    fn register_type<B: Bundle>(
        &mut self,
        components: &mut Components,
    ) -> Result<BundleId, EntityError> {
        let mut types = Vec::with_capacity(B::FIELD_COUNT);
        B::field_types(&mut types);
        for (i, (t, name)) in types.iter().enumerate() {
            if types[..i].iter().any(|(u, _)| u == t) {
                return Err(EntityError::DuplicateInBundle {
                    bundle: std::any::type_name::<B>(),
                    component: name,
                });
            }
        }
        let mut ids = Vec::with_capacity(B::FIELD_COUNT);
        B::component_ids(components, &mut ids);
        let id = self.intern(ids, components);
        self.by_type.insert(TypeId::of::<B>(), id);
        Ok(id)
    }

    /// The id of the runtime bundle with components `ids` in this field
    /// order, registering it on first use. Every id must be registered in
    /// `components`, and none may repeat.
    pub fn of_ids(
        &mut self,
        ids: &[ComponentId],
        components: &Components,
    ) -> Result<BundleId, EntityError> {
        if let Some(&id) = self.by_ids.get(ids) {
            return Ok(id);
        }
        for (i, &c) in ids.iter().enumerate() {
            if components.get_info(c).is_none() {
                return Err(EntityError::UnknownComponent(c));
            }
            if ids[..i].contains(&c) {
                return Err(EntityError::DuplicateComponent(c));
            }
        }
        Ok(self.intern(ids.to_vec(), components))
    }

    /// Whether any bundle has component `id` among its fields.
    pub(crate) fn any_contains(&self, id: ComponentId) -> bool {
        self.infos.iter().any(|b| b.ids.contains(&id))
    }

    /// Records a bundle of distinct, registered `ids` (or finds it).
    fn intern(&mut self, ids: Vec<ComponentId>, components: &Components) -> BundleId {
        if let Some(&id) = self.by_ids.get(&ids[..]) {
            return id;
        }
        let split = if ids.iter().any(|&c| components.info(c).is_sparse()) {
            let (sparse, dense): (Vec<_>, Vec<_>) = ids
                .iter()
                .copied()
                .enumerate()
                .partition(|&(_, c)| components.info(c).is_sparse());
            let dense_bundle = self.intern(dense.iter().map(|&(_, c)| c).collect(), components);
            Some(Box::new(SparseSplit {
                dense: dense_bundle,
                dense_fields: dense.iter().map(|&(i, _)| i).collect(),
                sparse_fields: sparse.into(),
            }))
        } else {
            None
        };
        let id = BundleId(u32::try_from(self.infos.len()).expect("doecs: too many bundle types"));
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        debug_assert!(sorted.windows(2).all(|w| w[0] < w[1]), "distinct ids");
        let ids: Box<[ComponentId]> = ids.into();
        self.by_ids.insert(ids.clone(), id);
        self.infos.push(BundleInfo {
            ids,
            sorted: sorted.into(),
            split,
        });
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_field_order_and_sorted_set() {
        let mut registry = Components::default();
        let mut bundles = Bundles::default();
        let later = registry.register::<u64>();
        let id = bundles.of::<(u8, u64, u16)>(&mut registry).unwrap();
        let info = bundles.info(id).clone();
        assert_eq!(info.ids()[1], later);
        assert_eq!(info.ids().len(), 3);
        assert!(info.sorted().windows(2).all(|w| w[0] < w[1]));
        assert_eq!(bundles.of::<(u8, u64, u16)>(&mut registry), Ok(id));
        // The same ids as a runtime bundle are the same bundle.
        let ids = info.ids().to_vec();
        assert_eq!(bundles.of_ids(&ids, &registry), Ok(id));
        let mut out = Vec::new();
        assert!(<(u8, u16)>::registered_ids(&registry, &mut out));
        assert!(!<(u8, i128)>::registered_ids(&registry, &mut Vec::new()));
    }

    #[test]
    fn duplicate_fields_are_refused_before_anything_registers() {
        let mut registry = Components::default();
        let mut bundles = Bundles::default();
        let err = bundles.of::<(u32, f32, u32)>(&mut registry).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bundle `(u32, f32, u32)` names component `u32` twice"
        );
        assert!(registry.is_empty(), "nothing registered");
        assert!(bundles.is_empty());
        let a = registry.register::<u8>();
        assert_eq!(
            bundles.of_ids(&[a, a], &registry),
            Err(EntityError::DuplicateComponent(a))
        );
    }
}
