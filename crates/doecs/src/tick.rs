//! Change ticks: the clock of change detection.
//!
//! Every world keeps a change tick, a `u64` that only grows. A write stamps
//! what it changed with the tick current at that moment; a reader (a system,
//! or a query used outside a schedule) remembers the tick of its previous
//! run, and a change is new to it when its stamp lies in the reader's
//! [`ChangeWindow`]: after its previous run, no later than this one.
//!
//! Who advances the clock:
//! - a schedule run gives each of its steps (every system, and every
//!   application of commands) its own tick, in plan order, so ticks, like
//!   entity ids, do not depend on the thread count;
//! - a query with a change filter used outside a schedule reads through the
//!   current tick and then advances the clock by one, so a write made after
//!   it gets a later stamp;
//! - direct writes (`get_mut`, `insert`, a query without change filters)
//!   stamp with the current tick and leave the clock alone.
//!
//! Ticks are 64 bits wide and compared as plain integers. At one tick per
//! system run, a billion systems a second would take 584 years to wrap, so
//! stale stamps can never look new again (a 32-bit clock would wrap after
//! 2^32 steps and needs periodic clamping, as bevy's `check_change_ticks`
//! does; this clock needs none). [`Tick::next`] checks the addition anyway.

/// A point on a world's change clock. See the module docs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tick(u64);

impl Tick {
    /// Before every change: a reader that never ran looks back to here, so
    /// its first run sees everything as added and changed.
    pub const ZERO: Tick = Tick(0);

    /// The tick with value `value`.
    #[inline]
    pub const fn new(value: u64) -> Self {
        Tick(value)
    }

    /// The tick's value.
    #[inline]
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The tick `steps` later.
    ///
    /// # Panics
    /// If the clock would pass `u64::MAX` (it cannot in practice; see the
    /// module docs).
    #[inline]
    pub fn after(self, steps: u64) -> Tick {
        Tick(
            self.0
                .checked_add(steps)
                .expect("doecs: the change clock ran out of 64-bit ticks"),
        )
    }

    /// The next tick.
    #[inline]
    pub fn next(self) -> Tick {
        self.after(1)
    }
}

/// What a reader sees: changes stamped after `last_run` and no later than
/// `this_run`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangeWindow {
    /// The reader's previous run ([`Tick::ZERO`] before its first).
    pub last_run: Tick,
    /// This run: also the stamp of the reader's own writes.
    pub this_run: Tick,
}

impl ChangeWindow {
    /// Whether a change stamped `stamp` is new to this reader.
    #[inline(always)]
    pub fn contains(self, stamp: Tick) -> bool {
        stamp > self.last_run && stamp <= self.this_run
    }

    /// Whether a change stamped `stamp` is new, for stamps stored as `u64`.
    #[inline(always)]
    pub(crate) fn contains_raw(self, stamp: u64) -> bool {
        // `last < stamp <= this` as one unsigned compare: stamps at or below
        // `last` wrap around to huge values.
        stamp.wrapping_sub(self.last_run.0.wrapping_add(1))
            < self.this_run.0.wrapping_sub(self.last_run.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_half_open() {
        let w = ChangeWindow {
            last_run: Tick::new(5),
            this_run: Tick::new(9),
        };
        assert!(!w.contains(Tick::new(5)));
        assert!(w.contains(Tick::new(6)));
        assert!(w.contains(Tick::new(9)));
        assert!(!w.contains(Tick::new(10)));
        assert!(!w.contains(Tick::ZERO));
    }

    #[test]
    fn beyond_32_bits_stays_ordered() {
        let old = Tick::new(3);
        let now = Tick::new(u32::MAX as u64).after(10);
        let w = ChangeWindow {
            last_run: now.after(0),
            this_run: now.next(),
        };
        assert!(!w.contains(old), "a stamp 2^32 ticks old is not new");
        assert!(w.contains(now.next()));
    }

    #[test]
    #[should_panic(expected = "ran out")]
    fn the_clock_refuses_to_wrap() {
        Tick::new(u64::MAX).next();
    }
}
