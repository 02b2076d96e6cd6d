//! Access sets: which component types a query or system reads and writes.
//!
//! A query that names one component mutably twice, or mutably and immutably,
//! would hand out aliasing references; building its access set refuses that
//! with a clear panic. The schedule uses the same sets to decide which systems
//! may run at the same time.
//!
//! Reads come in two scopes. An *own* read is of the visited entity's row,
//! like `&T`; a *related* read is of another entity reached through a
//! relation, like the parent's `Height` of `Up<ChildOf, &Height>` (see
//! [`Up`](super::Up)). Every read, of either scope, is in [`Access::reads`],
//! so the schedule and a system's declared access see a related read as
//! the read it is. Only the aliasing check inside one query tells them
//! apart: `(&mut Height, Up<ChildOf, &Height>)` writes the entity's own
//! `Height` and reads another entity's, which never alias within one item,
//! so the check accepts it. The same query may still hand out one entity's
//! `Height` both ways in different items (a parent is also a child), so
//! only its callback loops may run: [`Access::related_overlap`] names the
//! written type its iterators, chunk loops and parallel loops refuse (see
//! [`AliasError::RelatedWrite`]). And two queries whose filters keep their
//! entities apart may still meet through a related read, which reaches
//! beyond the filter ([`FilteredAccess::conflict_with`]).
//!
//! Whole-entity views read or write every component of the entities they
//! visit, whatever types exist: [`EntityRef`](crate::EntityRef) as query
//! data records [`Access::reads_all`], [`EntityMut`](crate::EntityMut)
//! [`Access::writes_all`], and an `EntityRef` inside a relation term
//! [`Access::related_reads_all`]. These are flags beside the lists, not
//! entries in them: such a set reads (or writes) every type, named or not,
//! so it aliases with every other term that touches a component in one
//! query (`(EntityMut, &T)`), and conflicts with every query that writes
//! one (for a read of all) or touches one (for a write of all). Where a
//! conflict has a type to name, the key names it; otherwise it is
//! [`AccessKey::every_component`].

use crate::component::Components;
use std::any::TypeId;

/// One accessed type, with its name for messages.
#[derive(Copy, Clone, Debug)]
pub struct AccessKey {
    /// The type.
    pub type_id: TypeId,
    /// Its name.
    pub name: &'static str,
}

impl AccessKey {
    /// The key of `T`.
    pub fn of<T: 'static>() -> Self {
        AccessKey {
            type_id: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
        }
    }

    /// The key that stands for every component type at once, in the
    /// errors and conflicts of whole-entity views (see the module docs).
    pub fn every_component() -> Self {
        /// Stands for every component type.
        struct EveryComponent;
        AccessKey {
            type_id: TypeId::of::<EveryComponent>(),
            name: "every component (EntityRef/EntityMut)",
        }
    }
}

impl PartialEq for AccessKey {
    fn eq(&self, other: &Self) -> bool {
        self.type_id == other.type_id
    }
}
impl Eq for AccessKey {}

/// Reads and writes of component (or resource) types. See the module docs
/// for the two scopes of a read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    /// Every type read, in either scope.
    reads: Vec<AccessKey>,
    writes: Vec<AccessKey>,
    /// Types read on the visited entity itself.
    own_reads: Vec<AccessKey>,
    /// Types read on other entities, reached through a relation.
    related_reads: Vec<AccessKey>,
    /// Every component of the visited entity is read.
    reads_all: bool,
    /// Every component of the visited entity is written.
    writes_all: bool,
    /// Every component of related entities is read.
    related_reads_all: bool,
    /// Types reached through [`Sparse`](crate::Sparse) terms (in their
    /// sets), not archetype columns.
    sparse_terms: Vec<AccessKey>,
}

/// One query naming a type in two ways that would alias.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AliasError {
    /// `&mut T` twice.
    #[error("query accesses `{}` mutably twice; this would alias", .0.name)]
    MutTwice(AccessKey),
    /// `&T` and `&mut T`.
    #[error("query accesses `{}` both mutably and immutably; this would alias", .0.name)]
    MutAndShared(AccessKey),
    /// `&mut T` of the entity and `T` of a related entity (through `Up` or
    /// `OwnOrInherited`), asked of a loop form whose items can be alive
    /// together: an iterator, a chunk loop or a parallel loop. One
    /// entity may be both a visited row and another row's relative, so
    /// only the callback loops (`for_each`, `get`) may run such a query.
    #[error(
        "query writes `{}` and reads it on related entities; only its callback loops \
         (`for_each`, `get`) may hand out both, not an iterator, a chunk loop or a parallel loop",
        .0.name
    )]
    RelatedWrite(AccessKey),
}

/// Why a query cannot be built on a world ([`QueryState::try_new`]).
///
/// [`QueryState::try_new`]: super::QueryState::try_new
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// The query's data would alias.
    #[error(transparent)]
    Alias(#[from] AliasError),
    /// The query writes a component (named) that the world registered
    /// immutable: its values change only by insert.
    #[error(
        "query writes component `{0}`, which this world registered immutable; insert a new value to replace it instead"
    )]
    Immutable(&'static str),
    /// The query names a component (named) that the world stores sparse
    /// through a term that reads archetype columns (`&T`, `&mut T`,
    /// `Option<&T>`, `Ref<T>`, ...) or an archetype filter (`With<T>`,
    /// `Without<T>`, `Changed<T>`, ...): it would never see a value.
    #[error(
        "query names component `{0}` as an archetype column, but this world stores it sparse; use `Sparse<&T>`, `Sparse<&mut T>`, `Sparse<Option<&T>>`, `Sparse<Ref<T>>` or `Sparse<Has<T>>`"
    )]
    SparseTerm(&'static str),
}

/// Appends `key` to `list` unless it is there.
fn push_new(list: &mut Vec<AccessKey>, key: AccessKey) {
    if !list.contains(&key) {
        list.push(key);
    }
}

impl Access {
    /// Records a read of `key` on the visited entity, or refuses if it is
    /// already written.
    pub fn try_add_read(&mut self, key: AccessKey) -> Result<(), AliasError> {
        if self.writes_all || self.writes.contains(&key) {
            return Err(AliasError::MutAndShared(key));
        }
        push_new(&mut self.reads, key);
        push_new(&mut self.own_reads, key);
        Ok(())
    }

    /// Records a read of `key` on another entity than the visited one,
    /// reached through a relation. It never aliases the visited entity's
    /// own items, so it is never refused, even beside a write of `key`.
    pub fn add_related_read(&mut self, key: AccessKey) {
        push_new(&mut self.reads, key);
        push_new(&mut self.related_reads, key);
    }

    /// Records a write of `key`, or refuses if it is already written or
    /// read on the visited entity.
    pub fn try_add_write(&mut self, key: AccessKey) -> Result<(), AliasError> {
        if self.writes_all || self.writes.contains(&key) {
            return Err(AliasError::MutTwice(key));
        }
        if self.reads_all || self.own_reads.contains(&key) {
            return Err(AliasError::MutAndShared(key));
        }
        self.writes.push(key);
        Ok(())
    }

    /// Records a read of every component of the visited entity
    /// ([`EntityRef`](crate::EntityRef)), or refuses if the set writes
    /// any component.
    pub fn try_add_reads_all(&mut self) -> Result<(), AliasError> {
        if self.writes_all {
            return Err(AliasError::MutAndShared(AccessKey::every_component()));
        }
        if let Some(&key) = self.writes.first() {
            return Err(AliasError::MutAndShared(key));
        }
        self.reads_all = true;
        Ok(())
    }

    /// Records a write of every component of the visited entity
    /// ([`EntityMut`](crate::EntityMut)), or refuses if the set already
    /// reads or writes any component of it.
    pub fn try_add_writes_all(&mut self) -> Result<(), AliasError> {
        let all = AccessKey::every_component();
        if self.writes_all {
            return Err(AliasError::MutTwice(all));
        }
        if let Some(&key) = self.writes.first() {
            return Err(AliasError::MutTwice(key));
        }
        if self.reads_all {
            return Err(AliasError::MutAndShared(all));
        }
        if let Some(&key) = self.own_reads.first() {
            return Err(AliasError::MutAndShared(key));
        }
        self.writes_all = true;
        Ok(())
    }

    /// Records a read of `key` unless it is already written (a change
    /// filter reading the ticks of a component its query also writes: the
    /// query itself orders the two).
    pub fn add_read_unless_written(&mut self, key: AccessKey) {
        if !self.writes_all && !self.writes.contains(&key) {
            push_new(&mut self.reads, key);
            push_new(&mut self.own_reads, key);
        }
    }

    /// Records `inner`, the access of the data a relation term fetches
    /// from a related entity, as this query's: the inner data's own reads
    /// become related reads. A related read of the inner data (a term
    /// inside a term: a grandparent, a parent's prefab) is recorded as an
    /// own read, since a chain of two pairs may lead back to the visited
    /// entity itself.
    ///
    /// # Errors
    /// As [`Access::try_add_read`], for those chained reads; and
    /// [`AliasError::MutAndShared`] if `inner` writes (relation terms only
    /// read).
    pub fn try_add_related(&mut self, inner: &Access) -> Result<(), AliasError> {
        if inner.writes_all {
            return Err(AliasError::MutAndShared(AccessKey::every_component()));
        }
        if let Some(&key) = inner.writes.first() {
            return Err(AliasError::MutAndShared(key));
        }
        for &key in &inner.own_reads {
            self.add_related_read(key);
        }
        self.related_reads_all |= inner.reads_all;
        for &key in &inner.related_reads {
            self.try_add_read(key)?;
        }
        if inner.related_reads_all {
            self.try_add_reads_all()?;
        }
        Ok(())
    }

    /// Records a read of `key`.
    ///
    /// # Panics
    /// If `key` is already written (aliasing `&` and `&mut`).
    pub fn add_read(&mut self, key: AccessKey) {
        if let Err(e) = self.try_add_read(key) {
            panic!("doecs: {e}");
        }
    }

    /// Records a write of `key`.
    ///
    /// # Panics
    /// If `key` is already read or written (aliasing `&mut`).
    pub fn add_write(&mut self, key: AccessKey) {
        if let Err(e) = self.try_add_write(key) {
            panic!("doecs: {e}");
        }
    }

    /// Adds another set, without the aliasing checks (for a system's union of
    /// several queries, which run one after another).
    pub fn extend(&mut self, other: &Access) {
        for (into, from) in [
            (&mut self.reads, &other.reads),
            (&mut self.writes, &other.writes),
            (&mut self.own_reads, &other.own_reads),
            (&mut self.related_reads, &other.related_reads),
        ] {
            for &key in from {
                push_new(into, key);
            }
        }
        self.reads_all |= other.reads_all;
        self.writes_all |= other.writes_all;
        self.related_reads_all |= other.related_reads_all;
        for &key in &other.sparse_terms {
            push_new(&mut self.sparse_terms, key);
        }
    }

    /// Records that `key` is reached through a sparse term (its read or
    /// write is recorded as for any term).
    pub fn add_sparse_term(&mut self, key: AccessKey) {
        push_new(&mut self.sparse_terms, key);
    }

    /// A type read or written through a column term although `components`
    /// stores it sparse (see [`QueryError::SparseTerm`]).
    pub(crate) fn sparse_as_column(&self, components: &Components) -> Option<AccessKey> {
        if components.sparse_count() == 0 {
            return None;
        }
        self.reads
            .iter()
            .chain(&self.writes)
            .find(|k| components.is_sparse_type(k.type_id) && !self.sparse_terms.contains(k))
            .copied()
    }

    /// Types read, in either scope (see the module docs). A set that
    /// reads every component ([`Access::reads_all`]) lists only the types
    /// it names besides.
    pub fn reads(&self) -> &[AccessKey] {
        &self.reads
    }

    /// Whether every component of the visited entities is read
    /// ([`EntityRef`](crate::EntityRef) as query data).
    pub fn reads_all(&self) -> bool {
        self.reads_all
    }

    /// Whether every component of the visited entities is written
    /// ([`EntityMut`](crate::EntityMut)); a set that writes every
    /// component may read every one too.
    pub fn writes_all(&self) -> bool {
        self.writes_all
    }

    /// Whether every component of related entities is read (an
    /// [`EntityRef`](crate::EntityRef) inside a relation term).
    pub fn related_reads_all(&self) -> bool {
        self.related_reads_all
    }

    /// Whether the set may read component `key`, in either scope: named,
    /// written, or as part of every component.
    pub fn may_read(&self, key: &AccessKey) -> bool {
        self.reads_any_all() || self.reads.contains(key) || self.may_write(key)
    }

    /// Whether the set may write component `key`: named, or as part of
    /// every component.
    pub fn may_write(&self, key: &AccessKey) -> bool {
        self.writes_all || self.writes.contains(key)
    }

    /// Whether the set touches nothing: no type read or written, named or
    /// as every component.
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty() && !self.reads_any_all() && !self.writes_all
    }

    /// Whether every component is read in some scope (own or related).
    fn reads_any_all(&self) -> bool {
        self.reads_all || self.related_reads_all
    }

    /// The first type this set writes: named, else
    /// [`AccessKey::every_component`] for a write of every component.
    pub fn first_write(&self) -> Option<AccessKey> {
        self.writes
            .first()
            .copied()
            .or_else(|| self.writes_all.then(AccessKey::every_component))
    }

    /// The first type this set touches (reads or writes): named, else
    /// [`AccessKey::every_component`].
    fn first_touched(&self) -> Option<AccessKey> {
        self.writes
            .first()
            .or_else(|| self.reads.first())
            .copied()
            .or_else(|| (self.writes_all || self.reads_any_all()).then(AccessKey::every_component))
    }

    /// Types read on the visited entities themselves.
    pub fn own_reads(&self) -> &[AccessKey] {
        &self.own_reads
    }

    /// Types read on other entities, reached through relations.
    pub fn related_reads(&self) -> &[AccessKey] {
        &self.related_reads
    }

    /// The first type read on related entities that is also written: a
    /// query whose items may then hold one entity's value both ways across
    /// two items, so only its callback loops may run (see the module docs).
    pub fn related_overlap(&self) -> Option<AccessKey> {
        self.writes_into_related(self)
    }

    /// Types written.
    pub fn writes(&self) -> &[AccessKey] {
        &self.writes
    }

    /// The first type written that `components` marks immutable (see
    /// [`WorldCore::register_immutable`](crate::WorldCore::register_immutable)).
    /// Only types named one by one count: a write of every component
    /// ([`EntityMut`](crate::EntityMut)) refuses each immutable one as it
    /// is asked for.
    pub(crate) fn immutable_write(&self, components: &Components) -> Option<AccessKey> {
        if components.immutable_count() == 0 {
            return None;
        }
        self.writes
            .iter()
            .find(|k| components.is_immutable_type(k.type_id))
            .copied()
    }

    /// Whether running both at once could race: one writes what the other
    /// reads or writes (a write or read of every component included).
    /// Returns the first conflicting type: a named one where there is one,
    /// else [`AccessKey::every_component`].
    pub fn conflict_with(&self, other: &Access) -> Option<AccessKey> {
        self.writes_into(other).or_else(|| other.writes_into(self))
    }

    /// The first type `self` writes that `other` reads or writes.
    fn writes_into(&self, other: &Access) -> Option<AccessKey> {
        let named = self.writes.iter().find(|w| other.may_read(w)).copied();
        named.or_else(|| {
            if self.writes_all {
                other.first_touched()
            } else {
                None
            }
        })
    }

    /// The first type `self` writes that `other` reads on related
    /// entities: what still conflicts where their filters keep their
    /// entities apart, and, within one query, what its loops must not
    /// hand out both ways at once.
    fn writes_into_related(&self, other: &Access) -> Option<AccessKey> {
        let named = other
            .related_reads
            .iter()
            .find(|k| self.may_write(k))
            .copied();
        named.or_else(|| {
            if other.related_reads_all {
                self.first_write()
            } else {
                None
            }
        })
    }
}

/// A query's access together with the component types every entity it visits
/// has (`with`) and the ones none of them has (`without`): two queries whose
/// entities cannot overlap never conflict, whatever they write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilteredAccess {
    /// What the query reads and writes.
    pub access: Access,
    /// Types every visited entity has.
    pub with: Vec<TypeId>,
    /// Types no visited entity has.
    pub without: Vec<TypeId>,
}

impl FilteredAccess {
    /// Whether no entity can be visited by both.
    pub fn is_disjoint(&self, other: &FilteredAccess) -> bool {
        self.with.iter().any(|t| other.without.contains(t))
            || other.with.iter().any(|t| self.without.contains(t))
    }

    /// The first type both may touch with at least one writing it. Where
    /// their entities are disjoint, only related reads count: they reach
    /// entities outside either filter (a parent, a prefab).
    pub fn conflict_with(&self, other: &FilteredAccess) -> Option<AccessKey> {
        if !self.is_disjoint(other) {
            return self.access.conflict_with(&other.access);
        }
        let (a, b) = (&self.access, &other.access);
        b.writes_into_related(a)
            .or_else(|| a.writes_into_related(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_reads_are_fine_and_conflicts_are_found() {
        let mut reader = Access::default();
        reader.add_read(AccessKey::of::<u8>());
        reader.add_read(AccessKey::of::<u8>());
        assert_eq!(reader.reads().len(), 1);
        let mut writer = Access::default();
        writer.add_write(AccessKey::of::<u8>());
        writer.add_read(AccessKey::of::<u16>());
        assert_eq!(reader.conflict_with(&writer).map(|k| k.name), Some("u8"));
        assert_eq!(writer.conflict_with(&reader).map(|k| k.name), Some("u8"));
        let mut other = Access::default();
        other.add_read(AccessKey::of::<u16>());
        assert!(reader.conflict_with(&other).is_none());
        assert!(
            writer.conflict_with(&other).is_none(),
            "two reads never conflict"
        );
        // `extend` unions without the aliasing panic.
        let mut union = reader.clone();
        union.extend(&writer);
        assert_eq!(union.writes().len(), 1);
        assert_eq!(union.reads().len(), 2);
    }

    #[test]
    fn disjoint_filters_never_conflict() {
        let mut a = FilteredAccess::default();
        a.access.add_write(AccessKey::of::<u8>());
        a.with.push(TypeId::of::<u16>());
        let mut b = FilteredAccess::default();
        b.access.add_read(AccessKey::of::<u8>());
        assert!(a.conflict_with(&b).is_some());
        b.without.push(TypeId::of::<u16>());
        assert!(a.is_disjoint(&b));
        assert!(a.conflict_with(&b).is_none());
    }

    /// A related read sits beside a write of the same type (it is another
    /// entity's), counts as a read for conflicts and survives disjoint
    /// filters; a related read of a related read is the entity's own.
    #[test]
    fn related_reads_beside_writes() {
        let key = AccessKey::of::<u8>();
        let mut up = Access::default();
        up.try_add_write(key).unwrap();
        up.add_related_read(key);
        assert_eq!(up.reads(), [key]);
        assert!(up.own_reads().is_empty());
        assert_eq!(up.related_overlap(), Some(key));
        // Either order.
        let mut rev = Access::default();
        rev.add_related_read(key);
        rev.try_add_write(key).unwrap();
        assert_eq!(rev.related_overlap(), Some(key));
        // An own read still refuses the write.
        rev.try_add_read(AccessKey::of::<u16>()).unwrap();
        assert_eq!(
            rev.try_add_write(AccessKey::of::<u16>()),
            Err(AliasError::MutAndShared(AccessKey::of::<u16>()))
        );

        let mut reader = Access::default();
        reader.add_related_read(key);
        let mut writer = Access::default();
        writer.add_write(key);
        assert_eq!(reader.conflict_with(&writer), Some(key));
        let mut a = FilteredAccess {
            access: reader.clone(),
            ..FilteredAccess::default()
        };
        a.with.push(TypeId::of::<u16>());
        let mut b = FilteredAccess {
            access: writer,
            ..FilteredAccess::default()
        };
        b.without.push(TypeId::of::<u16>());
        assert!(a.is_disjoint(&b));
        assert_eq!(
            a.conflict_with(&b),
            Some(key),
            "a parent is outside either filter"
        );
        assert_eq!(b.conflict_with(&a), Some(key));

        // Nesting: the inner term's own reads become related, its related
        // reads own.
        let mut plain = Access::default();
        plain.add_read(key);
        let mut nested = Access::default();
        nested.try_add_related(&plain).unwrap();
        assert_eq!(nested.related_reads(), [key]);
        let mut outer = Access::default();
        outer.try_add_related(&nested).unwrap();
        assert_eq!(outer.own_reads(), [key]);
        assert_eq!(outer.try_add_write(key), Err(AliasError::MutAndShared(key)));
    }

    /// Reads and writes of every component alias with every term of one
    /// query that touches a component, and conflict across queries as a
    /// read or write of each type would.
    #[test]
    fn every_component_flags() {
        let (a, b) = (AccessKey::of::<u8>(), AccessKey::of::<u16>());
        let all = AccessKey::every_component();
        let mut writer = Access::default();
        writer.try_add_writes_all().unwrap();
        assert_eq!(writer.try_add_read(a), Err(AliasError::MutAndShared(a)));
        assert_eq!(writer.try_add_write(a), Err(AliasError::MutTwice(a)));
        assert_eq!(
            writer.try_add_reads_all(),
            Err(AliasError::MutAndShared(all))
        );
        assert_eq!(writer.try_add_writes_all(), Err(AliasError::MutTwice(all)));
        assert!(writer.may_read(&a) && writer.may_write(&a));
        assert_eq!(writer.first_write(), Some(all));
        writer.add_read_unless_written(a);
        assert!(
            writer.reads().is_empty(),
            "a filter's read of a written type"
        );

        let mut reader = Access::default();
        reader.add_read(a);
        reader.try_add_reads_all().unwrap();
        assert_eq!(reader.try_add_write(b), Err(AliasError::MutAndShared(b)));
        assert_eq!(
            reader.try_add_writes_all(),
            Err(AliasError::MutAndShared(all))
        );
        assert!(reader.may_read(&b) && !reader.may_write(&b));

        let mut one = Access::default();
        one.add_write(b);
        let mut read_one = Access::default();
        read_one.add_read(b);
        assert_eq!(writer.conflict_with(&read_one), Some(b));
        assert_eq!(read_one.conflict_with(&writer), Some(b));
        assert_eq!(writer.conflict_with(&reader), Some(a));
        assert_eq!(reader.conflict_with(&one), Some(b));
        assert_eq!(one.conflict_with(&reader), Some(b));
        assert_eq!(
            reader.conflict_with(&read_one),
            None,
            "reads never conflict"
        );
        assert_eq!(writer.conflict_with(&Access::default()), None);
        let mut bare_reader = Access::default();
        bare_reader.try_add_reads_all().unwrap();
        assert_eq!(writer.conflict_with(&bare_reader), Some(all));

        // Inside a relation term a read of every component is a related
        // read of every component: beside a write, callback loops only.
        let mut up = Access::default();
        up.try_add_related(&bare_reader).unwrap();
        assert!(up.related_reads_all() && !up.reads_all());
        assert_eq!(up.related_overlap(), None);
        up.try_add_write(b).unwrap();
        assert_eq!(up.related_overlap(), Some(b));
        assert_eq!(
            up.try_add_related(&writer),
            Err(AliasError::MutAndShared(all))
        );
        // Disjoint filters: only related reads still meet writes.
        let mut x = FilteredAccess {
            access: writer.clone(),
            ..FilteredAccess::default()
        };
        x.with.push(TypeId::of::<u32>());
        let mut y = FilteredAccess {
            access: bare_reader.clone(),
            ..FilteredAccess::default()
        };
        y.without.push(TypeId::of::<u32>());
        assert_eq!(x.conflict_with(&y), None);
        y.access = up.clone();
        assert_eq!(x.conflict_with(&y), Some(all));
        assert_eq!(y.conflict_with(&x), Some(all));
        let mut empty = Access::default();
        assert!(empty.is_empty());
        empty.extend(&bare_reader);
        assert!(!empty.is_empty() && empty.reads_all());
    }

    #[test]
    #[should_panic(expected = "accesses `u32` mutably twice")]
    fn double_write_panics() {
        let mut a = Access::default();
        a.add_write(AccessKey::of::<u32>());
        a.add_write(AccessKey::of::<u32>());
    }

    #[test]
    #[should_panic(expected = "accesses `u32` both mutably and immutably")]
    fn read_after_write_panics() {
        let mut a = Access::default();
        a.add_write(AccessKey::of::<u32>());
        a.add_read(AccessKey::of::<u32>());
    }
}
