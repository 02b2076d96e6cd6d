//! Access sets: which component types a query or system reads and writes.
//!
//! A query that names one component mutably twice, or mutably and immutably,
//! would hand out aliasing references; building its access set refuses that
//! with a clear panic. The schedule uses the same sets to decide which systems
//! may run at the same time.

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
}

impl PartialEq for AccessKey {
    fn eq(&self, other: &Self) -> bool {
        self.type_id == other.type_id
    }
}
impl Eq for AccessKey {}

/// Reads and writes of component (or resource) types.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    reads: Vec<AccessKey>,
    writes: Vec<AccessKey>,
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
}

impl Access {
    /// Records a read of `key`, or refuses if it is already written.
    pub fn try_add_read(&mut self, key: AccessKey) -> Result<(), AliasError> {
        if self.writes.contains(&key) {
            return Err(AliasError::MutAndShared(key));
        }
        if !self.reads.contains(&key) {
            self.reads.push(key);
        }
        Ok(())
    }

    /// Records a write of `key`, or refuses if it is already read or written.
    pub fn try_add_write(&mut self, key: AccessKey) -> Result<(), AliasError> {
        if self.writes.contains(&key) {
            return Err(AliasError::MutTwice(key));
        }
        if self.reads.contains(&key) {
            return Err(AliasError::MutAndShared(key));
        }
        self.writes.push(key);
        Ok(())
    }

    /// Records a read of `key` unless it is already written (a change
    /// filter reading the ticks of a component its query also writes: the
    /// query itself orders the two).
    pub fn add_read_unless_written(&mut self, key: AccessKey) {
        if !self.writes.contains(&key) && !self.reads.contains(&key) {
            self.reads.push(key);
        }
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
        for r in &other.reads {
            if !self.reads.contains(r) {
                self.reads.push(*r);
            }
        }
        for w in &other.writes {
            if !self.writes.contains(w) {
                self.writes.push(*w);
            }
        }
    }

    /// Types read.
    pub fn reads(&self) -> &[AccessKey] {
        &self.reads
    }

    /// Types written.
    pub fn writes(&self) -> &[AccessKey] {
        &self.writes
    }

    /// Whether running both at once could race: one writes what the other
    /// reads or writes. Returns the first conflicting type.
    pub fn conflict_with(&self, other: &Access) -> Option<AccessKey> {
        self.writes
            .iter()
            .find(|w| other.writes.contains(w) || other.reads.contains(w))
            .or_else(|| other.writes.iter().find(|w| self.reads.contains(w)))
            .copied()
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

    /// The first type both may touch with at least one writing it, unless
    /// their entities are disjoint.
    pub fn conflict_with(&self, other: &FilteredAccess) -> Option<AccessKey> {
        if self.is_disjoint(other) {
            return None;
        }
        self.access.conflict_with(&other.access)
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
