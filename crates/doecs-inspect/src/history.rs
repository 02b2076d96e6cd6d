//! The per-frame time history behind `GET /api/systems`: for each of the
//! last frames, the frame's wall time and each system's time.
//!
//! The main loop records one sample per frame (from the schedule's
//! [`RunReport`](doecs::RunReport)), so recording must cost next to nothing:
//! the history is a ring of fixed-size samples whose buffers are reused once
//! it is full, so a full history allocates nothing per frame. Samples
//! store nanoseconds as `u64`. When the set of systems changes (another
//! schedule), the history starts again.

use doecs::SystemTime;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// The name of the inspector plugin's system, as it appears in system
/// times: the history, and a loop that reports frame times, leave it out
/// (it answers requests, and while paused it waits).
pub const SERVE_SYSTEM: &str = "inspector";

/// Frames kept by default.
pub const DEFAULT_HISTORY: usize = 600;

/// One frame's times.
#[derive(Debug, Clone)]
struct Sample {
    frame: u64,
    frame_ns: u64,
    /// Per system, in the order of `History::names`.
    systems_ns: Vec<u64>,
}

/// The last frames' times (see the module docs).
#[derive(Debug, Clone)]
pub struct History {
    capacity: usize,
    names: Vec<Arc<str>>,
    samples: VecDeque<Sample>,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The samples an answer sends: the last `last` of those after frame
/// `since` (all kept frames when `None`), oldest first. Shared by the
/// per-system history and the world history.
pub(crate) fn recent<S>(
    samples: &VecDeque<S>,
    frame: impl Fn(&S) -> u64,
    last: usize,
    since: Option<u64>,
) -> Vec<&S> {
    let newer = samples
        .iter()
        .filter(|s| since.is_none_or(|f| frame(s) > f))
        .count();
    samples
        .iter()
        .skip(samples.len() - newer.min(last))
        .collect()
}

fn micros(ns: u64) -> f64 {
    ns as f64 / 1e3
}

impl History {
    /// An empty history keeping the last `capacity` frames (at least one).
    pub fn new(capacity: usize) -> Self {
        History {
            capacity: capacity.max(1),
            names: Vec::new(),
            samples: VecDeque::with_capacity(capacity.max(1)),
        }
    }

    /// Frames kept.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether no frame is kept.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The most frames kept.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Records frame number `frame`: its wall time and its systems' times.
    ///
    /// The inspector's own system (its plugin's, [`SERVE_SYSTEM`]) is left
    /// out: it answers requests, and while paused it waits.
    pub fn record(&mut self, frame: u64, time: Duration, systems: &[SystemTime]) {
        let systems = || systems.iter().filter(|s| &*s.name != SERVE_SYSTEM);
        let same = self.names.len() == systems().count()
            && self
                .names
                .iter()
                .zip(systems())
                .all(|(n, s)| **n == *s.name);
        if !same {
            self.names = systems().map(|s| s.name.clone()).collect();
            self.samples.clear();
        }
        let mut sample = if self.samples.len() == self.capacity {
            self.samples.pop_front().expect("full")
        } else {
            Sample {
                frame: 0,
                frame_ns: 0,
                systems_ns: Vec::with_capacity(self.names.len()),
            }
        };
        sample.frame = frame;
        sample.frame_ns = nanos(time);
        sample.systems_ns.clear();
        sample.systems_ns.extend(systems().map(|s| nanos(s.time)));
        self.samples.push_back(sample);
    }

    /// The JSON of `GET /api/systems`: the last `last` frames after frame
    /// `since` (all kept frames when `None`), oldest first, times in
    /// microseconds, and each system's mean over the frames sent.
    pub fn to_json(&self, last: usize, since: Option<u64>) -> Value {
        let window = recent(&self.samples, |s| s.frame, last, since);
        let n = window.len().max(1) as f64;
        let systems: Vec<Value> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let times: Vec<f64> = window.iter().map(|s| micros(s.systems_ns[i])).collect();
                let mean = times.iter().sum::<f64>() / n;
                json!({ "name": &**name, "time_us": times, "mean_us": mean })
            })
            .collect();
        let frame_us: Vec<f64> = window.iter().map(|s| micros(s.frame_ns)).collect();
        let mean_frame = frame_us.iter().sum::<f64>() / n;
        json!({
            "frames": window.iter().map(|s| s.frame).collect::<Vec<_>>(),
            "frame_time_us": frame_us,
            "mean_frame_us": mean_frame,
            "systems": systems,
            "kept": self.samples.len(),
            "capacity": self.capacity,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(names: &[&str], us: u64) -> Vec<SystemTime> {
        names
            .iter()
            .map(|n| SystemTime {
                name: Arc::from(*n),
                time: Duration::from_micros(us),
            })
            .collect()
    }

    #[test]
    fn keeps_the_last_frames_and_restarts_on_new_systems() {
        let mut h = History::new(3);
        for f in 0..5u64 {
            h.record(f, Duration::from_micros(100 + f), &times(&["a", "b"], f));
        }
        assert_eq!(h.len(), 3);
        let j = h.to_json(10, None);
        assert_eq!(j["frames"], json!([2, 3, 4]));
        assert_eq!(j["systems"][1]["name"], "b");
        assert_eq!(j["systems"][1]["time_us"], json!([2.0, 3.0, 4.0]));
        assert_eq!(j["systems"][0]["mean_us"], 3.0);
        assert_eq!(h.to_json(1, None)["frames"], json!([4]));
        assert_eq!(h.to_json(10, Some(3))["frames"], json!([4]));
        assert_eq!(h.to_json(10, Some(9))["frames"], json!([]));
        h.record(5, Duration::from_micros(1), &times(&["c"], 1));
        assert_eq!(h.len(), 1);
        assert_eq!(h.to_json(10, None)["systems"][0]["name"], "c");
    }
}
