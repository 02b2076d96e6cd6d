//! What `#[derive(QueryData)]` expands to calls on: the bounds that make a
//! derived query read-only (or of every row) exactly when all its fields
//! are, and an enum's access and required types, merged over its variants.
//! Reached by the expansion as `::doecs::__private`; not an API.

use super::access::{Access, AliasError};
use super::data::{EveryRowData, ReadOnlyQueryData};
use std::any::TypeId;
use std::marker::PhantomData;

/// A field type `T` of a derived query, seen from an impl over lifetime
/// `'a`. A bound on the field type alone would, for a field that is not
/// read-only, be a false bound on concrete types, which Rust refuses; a
/// bound that names the impl's lifetime is checked where it is used
/// instead, so the impl just does not apply.
pub struct FieldOf<'a, T: ?Sized>(PhantomData<(&'a (), Names<T>)>);

/// Names `T` without owning one (so `FieldOf` is `Send`, `Sync` and
/// well-formed for any `T`).
type Names<T> = fn() -> PhantomData<T>;

/// One variant's [`QueryData::access`](super::QueryData::access).
pub type AccessFn = fn(&mut Access) -> Result<(), AliasError>;

/// Holds when the field type is [`ReadOnlyQueryData`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` names a field that writes",
    label = "a query that writes",
    note = "a derived query is read-only (`world.query`, `Query::iter`) only when every field is: `&T`, `Option<&T>`, `Entity`, `Ref<T>`"
)]
pub trait ReadOnlyField {}
impl<T: ReadOnlyQueryData> ReadOnlyField for FieldOf<'_, T> {}

/// Holds when the field type is [`EveryRowData`].
pub trait EveryRowField {}
impl<T: EveryRowData> EveryRowField for FieldOf<'_, T> {}

/// An enum's access: each variant's, checked for aliasing against what
/// `access` holds already (the data before the enum in a tuple) but not
/// against the other variants, since one item is one variant; then their
/// union.
///
/// # Errors
/// The first variant's aliasing error.
pub fn access_any(access: &mut Access, variants: &[AccessFn]) -> Result<(), AliasError> {
    let mut union = access.clone();
    for variant in variants {
        let mut own = access.clone();
        variant(&mut own)?;
        union.extend(&own);
    }
    *access = union;
    Ok(())
}

/// An enum's required types: those every variant requires (an entity
/// matched by any variant has them).
pub fn required_all(with: &mut Vec<TypeId>, variants: &[fn(&mut Vec<TypeId>)]) {
    let mut common: Option<Vec<TypeId>> = None;
    for variant in variants {
        let mut own = Vec::new();
        variant(&mut own);
        common = Some(match common {
            None => own,
            Some(mut c) => {
                c.retain(|t| own.contains(t));
                c
            }
        });
    }
    with.extend(common.unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{AccessKey, QueryData};

    #[test]
    fn variants_are_checked_against_what_came_before_not_each_other() {
        let mut access = Access::default();
        access_any(
            &mut access,
            &[<&mut u8 as QueryData>::access, <&u8 as QueryData>::access],
        )
        .unwrap();
        assert_eq!(access.writes(), [AccessKey::of::<u8>()]);
        assert_eq!(access.reads(), [AccessKey::of::<u8>()]);
        let mut before = Access::default();
        before.add_read(AccessKey::of::<u8>());
        assert_eq!(
            access_any(
                &mut before,
                &[<&u16 as QueryData>::access, <&mut u8 as QueryData>::access]
            ),
            Err(AliasError::MutAndShared(AccessKey::of::<u8>()))
        );
    }

    #[test]
    fn required_types_are_the_common_ones() {
        let mut with = Vec::new();
        required_all(
            &mut with,
            &[
                <(&u8, &u16) as QueryData>::required,
                <(&u16, Option<&u8>) as QueryData>::required,
            ],
        );
        assert_eq!(with, [TypeId::of::<u16>()]);
        let mut none = Vec::new();
        required_all(&mut none, &[]);
        assert!(none.is_empty());
    }
}
