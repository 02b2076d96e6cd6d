//! [`ParamSet`]: system parameters that may conflict with each other, used
//! one at a time; and how several parameters' accesses merge into one
//! ([`ParamAccess::merge_members`], [`ParamAccess::merge_fields`]), which
//! a `ParamSet` and a `#[derive(SystemParam)]` struct both report as theirs.
//!
//! ```
//! use doecs::prelude::*;
//! struct Health(i32);
//!
//! // Both queries touch `Health`, one mutably: as two parameters they
//! // would be refused; in a set, only one is borrowed at a time.
//! fn heal(mut set: ParamSet<(Query<&mut Health>, Query<&Health>)>) {
//!     let total: i32 = set.p1().iter().map(|h| h.0).sum();
//!     set.p0().for_each(|h| h.0 += total);
//! }
//!
//! let mut world = World::new();
//! let e = world.spawn((Health(1),));
//! world.spawn((Health(2),));
//! let mut schedule = Schedule::new();
//! schedule.add_system(heal).unwrap();
//! schedule.run(&mut world).unwrap();
//! assert_eq!(world.get::<Health>(e).unwrap().0, 4);
//! ```

use super::function::ParamList;
use super::param::{ParamAccess, SystemParam, SystemRun};
use crate::query::FilteredAccess;
use std::any::TypeId;

/// A set of system parameters that may conflict with each other (a
/// `Query<&mut A>` beside a `Query<&A>`), fetched one at a time: `set.p0()`,
/// `set.p1()`, .. each borrow the set mutably, so only one member's item is
/// alive at once. Tuples of up to 8 parameters.
///
/// Towards the system's other parameters the set counts as all of its
/// members together: a parameter that would conflict with one member is
/// refused beside the set, as it would be beside that member.
pub struct ParamSet<'a, T: ParamList> {
    /// The members' states, for this world.
    state: &'a mut T::State,
    /// The run the members are fetched for.
    run: &'a SystemRun<'a>,
}

impl ParamAccess {
    /// Adds `members`, parameters used one at a time, to this access
    /// without checking them against each other: the union of what they
    /// read and write, command buffers, event types and setups. The
    /// component filters keep only the types every member's entities have
    /// (or lack), so the result never claims to be kept apart from a
    /// parameter that one of the members is not kept apart from. The first
    /// member that is invalid makes this access invalid too.
    pub fn merge_members(&mut self, members: &[ParamAccess]) {
        // A member that touches no component never conflicts on one: only
        // the others' filters count.
        let touching: Vec<&FilteredAccess> = std::iter::once(&self.components)
            .chain(members.iter().map(|m| &m.components))
            .filter(|c| !c.access.is_empty())
            .collect();
        if let Some((first, rest)) = touching.split_first() {
            let in_all =
                |types: &[TypeId], pick: fn(&FilteredAccess) -> &[TypeId]| -> Vec<TypeId> {
                    types
                        .iter()
                        .copied()
                        .filter(|t| rest.iter().all(|c| pick(c).contains(t)))
                        .collect()
                };
            let with = in_all(&first.with, |c| &c.with);
            let without = in_all(&first.without, |c| &c.without);
            self.components.with = with;
            self.components.without = without;
        }
        for m in members {
            if let (None, Some(reason)) = (&self.invalid, &m.invalid) {
                self.invalid = Some(format!("`{}`: {reason}", m.name));
            }
            self.components.access.extend(&m.components.access);
            self.resources.extend(&m.resources);
            self.managers.extend(&m.managers);
            self.commands |= m.commands;
            super::merge(&mut self.required_resources, &m.required_resources);
            super::merge(&mut self.required_managers, &m.required_managers);
            super::merge(&mut self.tracked, &m.tracked);
            super::merge(&mut self.event_writes, &m.event_writes);
            super::merge(&mut self.event_reads, &m.event_reads);
            super::merge(&mut self.setup, &m.setup);
            super::merge(&mut self.checks, &m.checks);
        }
    }

    /// Adds `fields`, parameters fetched all at once (the fields of a
    /// `#[derive(SystemParam)]` struct), to this access as
    /// [`merge_members`](Self::merge_members) does, after checking them
    /// against each other as a function's parameters are: two that would
    /// alias make this access invalid, naming both.
    pub fn merge_fields(&mut self, fields: &[ParamAccess]) {
        for (i, field) in fields.iter().enumerate() {
            for earlier in &fields[..i] {
                if let (None, Some(reason)) = (&self.invalid, earlier.conflict_with(field)) {
                    self.invalid = Some(format!(
                        "its fields `{}` and `{}` conflict: {reason}",
                        earlier.name, field.name
                    ));
                }
            }
        }
        self.merge_members(fields);
    }
}

macro_rules! param_set {
    ($($param:ident $index:tt $method:ident),*) => {
        // SAFETY: `describe` records every member's access (the union, with
        // filters no member lacks), required resources and managers, so the
        // set's access covers whatever member is fetched; the members are
        // fetched one at a time (see the accessors), so their conflicts with
        // each other never meet.
        unsafe impl<'s, $($param: SystemParam),*> SystemParam for ParamSet<'s, ($($param,)*)> {
            type State = <($($param,)*) as ParamList>::State;
            type Item<'a> = ParamSet<'a, ($($param,)*)> where Self: 'a;

            fn describe(access: &mut ParamAccess) -> Self::State {
                let mut members = Vec::new();
                let state = <($($param,)*) as ParamList>::describe(&mut members);
                access.merge_members(&members);
                state
            }

            unsafe fn fetch<'a>(
                state: &'a mut Self::State,
                run: &'a SystemRun<'a>,
            ) -> ParamSet<'a, ($($param,)*)>
            where
                Self: 'a,
            {
                ParamSet { state, run }
            }
        }

        impl<'s, $($param: SystemParam),*> ParamSet<'s, ($($param,)*)> {
            $(
                #[doc = concat!("The set's member ", stringify!($index), ", borrowing the set: no other member is alive meanwhile.")]
                pub fn $method(&mut self) -> $param::Item<'_> {
                    // SAFETY: the set was fetched under the schedule's
                    // guarantees for its access, which covers this member's
                    // (`describe`); the item borrows the set mutably, so no
                    // other member's item (which might conflict with it) is
                    // alive, and it cannot outlive the run the set borrows.
                    unsafe { $param::fetch(&mut self.state.$index, self.run) }
                }
            )*
        }
    };
}

param_set!(P0 0 p0, P1 1 p1);
param_set!(P0 0 p0, P1 1 p1, P2 2 p2);
param_set!(P0 0 p0, P1 1 p1, P2 2 p2, P3 3 p3);
param_set!(P0 0 p0, P1 1 p1, P2 2 p2, P3 3 p3, P4 4 p4);
param_set!(P0 0 p0, P1 1 p1, P2 2 p2, P3 3 p3, P4 4 p4, P5 5 p5);
param_set!(P0 0 p0, P1 1 p1, P2 2 p2, P3 3 p3, P4 4 p4, P5 5 p5, P6 6 p6);
param_set!(P0 0 p0, P1 1 p1, P2 2 p2, P3 3 p3, P4 4 p4, P5 5 p5, P6 6 p6, P7 7 p7);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::AccessKey;

    fn query(write: bool, with: &[TypeId], without: &[TypeId]) -> ParamAccess {
        let mut p = ParamAccess::default();
        if write {
            p.components.access.add_write(AccessKey::of::<u8>());
        } else {
            p.components.access.add_read(AccessKey::of::<u8>());
        }
        p.components.with = with.to_vec();
        p.components.without = without.to_vec();
        p
    }

    /// The merged filters keep only what every member claims.
    #[test]
    fn merged_filters_are_the_members_common_ones() {
        let (a, b) = (TypeId::of::<u16>(), TypeId::of::<u32>());
        let mut set = ParamAccess::default();
        set.merge_members(&[query(true, &[a, b], &[]), query(false, &[b], &[a])]);
        assert_eq!(set.components.with, [b]);
        assert!(set.components.without.is_empty());
        assert_eq!(set.components.access.writes(), [AccessKey::of::<u8>()]);
        assert_eq!(set.components.access.reads(), [AccessKey::of::<u8>()]);
        assert!(set.invalid.is_none(), "members are not checked");
        // Kept apart from a reader without `b`, as each member is.
        let other = query(false, &[], &[b]);
        assert!(set.conflict_with(&other).is_none());
        // Not kept apart from a writer without `a`: the second member
        // lacks `a`, so it is not apart.
        let other = query(true, &[], &[a]);
        assert!(set.conflict_with(&other).is_some());
    }

    #[test]
    fn fields_are_checked_against_each_other() {
        let mut fields = [query(true, &[], &[]), query(false, &[], &[])];
        fields[0].name = "a: Query<&mut u8>".into();
        fields[1].name = "b: Query<&u8>".into();
        let mut param = ParamAccess::default();
        param.merge_fields(&fields);
        let reason = param.invalid.unwrap();
        assert!(
            reason.contains("`a: Query<&mut u8>` and `b: Query<&u8>`"),
            "{reason}"
        );
        // Kept apart by their filters: accepted.
        let t = TypeId::of::<u16>();
        let mut param = ParamAccess::default();
        param.merge_fields(&[query(true, &[t], &[]), query(false, &[], &[t])]);
        assert!(param.invalid.is_none());
        assert!(param.components.with.is_empty() && param.components.without.is_empty());
    }
}
