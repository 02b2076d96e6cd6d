//! Time in an [`App`](super::App): the frame clock and the fixed step.
//!
//! `Time` (that is, `Time<Real>`) is the frame's time: how long the last
//! frame took and how long the app has run. `Time<Fixed>` is the fixed
//! step's: the step length, how many steps this frame ran, and the
//! accumulator. Both are resources of the app's world, read by systems as
//! `Res<Time>` and `Res<Time<Fixed>>`.
//!
//! Where a frame's length comes from is the app's [`TimeSource`]: the
//! wall clock, or a given duration per update (tests, headless runs, and
//! anything that must replay exactly). The fixed step is integer
//! arithmetic on `Duration`s, so for a given sequence of frame lengths the
//! number of fixed steps in every frame is always the same.

use std::marker::PhantomData;
use std::time::{Duration, Instant};

/// Marks the frame clock: `Time<Real>`, written `Time`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Real;

/// Marks the fixed-step clock: `Time<Fixed>`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Fixed;

/// A clock resource. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Time<C = Real> {
    delta: Duration,
    elapsed: Duration,
    /// Updates (frames) or steps counted so far.
    ticks: u64,
    /// The step of a fixed clock (unused by the frame clock).
    timestep: Duration,
    /// Time not yet consumed by fixed steps.
    accumulator: Duration,
    /// Most fixed steps one update runs.
    max_steps: u32,
    /// Fixed steps run by the last update.
    steps_this_update: u32,
    /// Time dropped because the step cap was reached, in total.
    dropped: Duration,
    _clock: PhantomData<fn() -> C>,
}

impl<C> Time<C> {
    fn empty() -> Self {
        Time {
            delta: Duration::ZERO,
            elapsed: Duration::ZERO,
            ticks: 0,
            timestep: Duration::ZERO,
            accumulator: Duration::ZERO,
            max_steps: 0,
            steps_this_update: 0,
            dropped: Duration::ZERO,
            _clock: PhantomData,
        }
    }

    /// The length of the last frame (of the frame clock) or of a step (of
    /// the fixed clock).
    pub fn delta(&self) -> Duration {
        self.delta
    }

    /// [`delta`](Self::delta) in seconds.
    pub fn delta_secs(&self) -> f32 {
        self.delta.as_secs_f32()
    }

    /// The time elapsed: the sum of every frame's length, or of every
    /// fixed step run.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Frames (of the frame clock) or fixed steps run so far.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }
}

impl Default for Time<Real> {
    fn default() -> Self {
        Self::empty()
    }
}

impl Time<Real> {
    /// Advances the frame clock by one frame of length `delta`.
    pub(crate) fn advance(&mut self, delta: Duration) {
        self.delta = delta;
        self.elapsed += delta;
        self.ticks += 1;
    }
}

/// The fixed step of a new app: 64 Hz, as bevy's default.
pub const DEFAULT_TIMESTEP: Duration = Duration::from_micros(15_625);

/// Most fixed steps one update runs, by default.
pub const DEFAULT_MAX_STEPS: u32 = 8;

impl Default for Time<Fixed> {
    fn default() -> Self {
        Self::with_timestep(DEFAULT_TIMESTEP)
    }
}

impl Time<Fixed> {
    /// A fixed clock stepping every `timestep`, at most
    /// [`DEFAULT_MAX_STEPS`] steps per update.
    ///
    /// # Panics
    /// If `timestep` is zero.
    pub fn with_timestep(timestep: Duration) -> Self {
        assert!(
            !timestep.is_zero(),
            "doecs: a fixed timestep must not be zero"
        );
        Time {
            timestep,
            delta: timestep,
            max_steps: DEFAULT_MAX_STEPS,
            ..Self::empty()
        }
    }

    /// The step length.
    pub fn timestep(&self) -> Duration {
        self.timestep
    }

    /// Sets the step length (taking effect at the next update).
    ///
    /// # Panics
    /// If `timestep` is zero.
    pub fn set_timestep(&mut self, timestep: Duration) {
        assert!(
            !timestep.is_zero(),
            "doecs: a fixed timestep must not be zero"
        );
        self.timestep = timestep;
        self.delta = timestep;
    }

    /// Most steps one update runs: the cap on catching up after a long
    /// frame, so a slow frame cannot make the next one slower still.
    pub fn max_steps_per_update(&self) -> u32 {
        self.max_steps
    }

    /// Sets the cap on steps per update (at least 1).
    pub fn set_max_steps_per_update(&mut self, steps: u32) {
        self.max_steps = steps.max(1);
    }

    /// Time accumulated but not yet stepped: always less than one step
    /// after an update.
    pub fn overstep(&self) -> Duration {
        self.accumulator
    }

    /// How far the accumulator is into the next step, from 0 to 1: for
    /// interpolating what is drawn between two steps.
    pub fn overstep_fraction(&self) -> f64 {
        self.accumulator.as_secs_f64() / self.timestep.as_secs_f64()
    }

    /// Steps the last update ran.
    pub fn steps_this_update(&self) -> u32 {
        self.steps_this_update
    }

    /// Frame time dropped in total because an update reached the step cap.
    pub fn dropped(&self) -> Duration {
        self.dropped
    }

    /// Adds a frame's time and returns how many steps to run now: as many
    /// whole steps as the accumulator holds, at most the cap. Time beyond
    /// the cap is dropped, keeping less than one step (the game slows down
    /// instead of spiralling).
    pub(crate) fn accumulate(&mut self, frame: Duration) -> u32 {
        self.accumulator += frame;
        let mut steps = 0;
        while self.accumulator >= self.timestep && steps < self.max_steps {
            self.accumulator -= self.timestep;
            steps += 1;
        }
        if self.accumulator >= self.timestep {
            let keep = Duration::from_nanos(
                (self.accumulator.as_nanos() % self.timestep.as_nanos()) as u64,
            );
            self.dropped += self.accumulator - keep;
            self.accumulator = keep;
        }
        self.steps_this_update = steps;
        steps
    }

    /// Counts one step run.
    pub(crate) fn step(&mut self) {
        self.delta = self.timestep;
        self.elapsed += self.timestep;
        self.ticks += 1;
    }
}

/// Where an app's frame lengths come from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimeSource {
    /// The wall clock: each update's length is the time since the previous
    /// update began (zero for the first).
    Real,
    /// Every update is exactly this long, whatever the wall clock says: for
    /// tests, headless runs at a fixed rate, and replays.
    Manual(Duration),
}

/// The app's frame clock: turns a [`TimeSource`] into frame lengths.
#[derive(Debug)]
pub(crate) struct FrameClock {
    pub(crate) source: TimeSource,
    last: Option<Instant>,
}

impl FrameClock {
    pub(crate) fn new(source: TimeSource) -> Self {
        FrameClock { source, last: None }
    }

    /// The length of the frame starting now.
    pub(crate) fn tick(&mut self) -> Duration {
        match self.source {
            TimeSource::Manual(delta) => delta,
            TimeSource::Real => {
                let now = Instant::now();
                let delta = self.last.map_or(Duration::ZERO, |last| now - last);
                self.last = Some(now);
                delta
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_the_accumulated_time() {
        let mut fixed = Time::<Fixed>::with_timestep(Duration::from_millis(10));
        assert_eq!(fixed.accumulate(Duration::from_millis(25)), 2);
        assert_eq!(fixed.overstep(), Duration::from_millis(5));
        assert_eq!(fixed.accumulate(Duration::from_millis(4)), 0);
        assert_eq!(fixed.accumulate(Duration::from_millis(1)), 1);
        assert_eq!(fixed.overstep(), Duration::ZERO);
    }

    #[test]
    fn a_long_frame_runs_at_most_the_cap_and_drops_the_rest() {
        let mut fixed = Time::<Fixed>::with_timestep(Duration::from_millis(10));
        fixed.set_max_steps_per_update(3);
        assert_eq!(fixed.accumulate(Duration::from_millis(1_007)), 3);
        assert_eq!(fixed.overstep(), Duration::from_millis(7));
        assert_eq!(fixed.dropped(), Duration::from_millis(970));
        assert_eq!(fixed.accumulate(Duration::from_millis(3)), 1);
    }

    #[test]
    fn manual_frames_have_the_given_length() {
        let mut clock = FrameClock::new(TimeSource::Manual(Duration::from_millis(16)));
        assert_eq!(clock.tick(), Duration::from_millis(16));
        assert_eq!(clock.tick(), Duration::from_millis(16));
        let mut real = FrameClock::new(TimeSource::Real);
        assert_eq!(real.tick(), Duration::ZERO, "the first frame has no length");
    }
}
