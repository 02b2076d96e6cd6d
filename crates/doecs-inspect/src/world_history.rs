//! The world's history behind `GET /api/history`: for each of the last
//! frames, its wall time and the world after it, as counts: entities,
//! archetypes in use, and archetype storage bytes used and reserved (the
//! figures of `GET /api/world`, see [`crate::summary`]).
//!
//! Recorded once per frame by [`Inspector::record_frame`](crate::Inspector::record_frame),
//! so it must cost next to nothing: a sample is a few integers, the ring's
//! room is reserved up front, and once full the oldest sample is dropped
//! for the newest without allocating. Taking a sample reads the entity
//! count and one pass over the archetypes (each one's row count and column
//! room, the sum its `memory_bytes` is), no entity and no component value.
//! Unlike the per-system history ([`crate::history`]), it is not restarted
//! when the schedule's systems change.

use doecs::WorldCore;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::time::Duration;

/// The world after one frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorldSample {
    /// The frame's number.
    pub frame: u64,
    /// Its wall time, in nanoseconds.
    pub frame_ns: u64,
    /// Live entities.
    pub entities: u64,
    /// Archetypes holding at least one entity.
    pub archetypes: u32,
    /// Bytes of the rows in use (entity id and one value per column).
    pub bytes_used: u64,
    /// Bytes of column memory held, room for emptied rows included.
    pub bytes_reserved: u64,
}

impl WorldSample {
    /// Counts `world` as it is after frame `frame`, which took `time`.
    pub fn of(world: &WorldCore, frame: u64, time: Duration) -> Self {
        let (mut archetypes, mut used, mut reserved) = (0u32, 0u64, 0u64);
        for arch in doecs::raw::archetypes(world).iter() {
            let held = arch.memory_bytes();
            reserved += held as u64;
            if arch.is_empty() {
                continue;
            }
            archetypes += 1;
            // `memory_bytes` is the row's bytes times the room for rows.
            if arch.capacity() > 0 {
                used += (held / arch.capacity() * arch.len()) as u64;
            }
        }
        WorldSample {
            frame,
            frame_ns: u64::try_from(time.as_nanos()).unwrap_or(u64::MAX),
            entities: world.len() as u64,
            archetypes,
            bytes_used: used,
            bytes_reserved: reserved,
        }
    }
}

/// The last frames' world samples (see the module docs).
#[derive(Debug, Clone)]
pub struct WorldHistory {
    capacity: usize,
    samples: VecDeque<WorldSample>,
}

impl WorldHistory {
    /// An empty history keeping the last `capacity` frames (at least one),
    /// its room reserved now.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        WorldHistory {
            capacity,
            samples: VecDeque::with_capacity(capacity),
        }
    }

    /// The most frames kept.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Frames kept.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether no frame is kept.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The newest sample.
    pub fn last(&self) -> Option<&WorldSample> {
        self.samples.back()
    }

    /// Keeps `sample`, dropping the oldest when full (no allocation then).
    pub fn push(&mut self, sample: WorldSample) {
        if self.samples.len() == self.capacity {
            self.samples.pop_front();
        }
        self.samples.push_back(sample);
    }

    /// The JSON of `GET /api/history`: the last `last` frames after frame
    /// `since` (all kept frames when `None`), oldest first, one array per
    /// figure (frame times in microseconds).
    pub fn to_json(&self, last: usize, since: Option<u64>) -> Value {
        let window = crate::history::recent(&self.samples, |s| s.frame, last, since);
        let column = |f: fn(&WorldSample) -> Value| window.iter().map(|s| f(s)).collect::<Vec<_>>();
        json!({
            "frames": column(|s| json!(s.frame)),
            "frame_time_us": column(|s| json!(s.frame_ns as f64 / 1e3)),
            "entities": column(|s| json!(s.entities)),
            "archetypes": column(|s| json!(s.archetypes)),
            "bytes_used": column(|s| json!(s.bytes_used)),
            "bytes_reserved": column(|s| json!(s.bytes_reserved)),
            "kept": self.samples.len(),
            "capacity": self.capacity,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doecs::World;

    #[test]
    fn a_sample_counts_what_the_world_summary_counts() {
        let mut world = World::new();
        world.spawn_batch((0..1000u32).map(|i| (i, i as f32)));
        let few = world.spawn_batch((0..10u8).map(|i| (i,)));
        assert_eq!(world.despawn_batch(&few), 10);
        let s = WorldSample::of(&world, 7, Duration::from_micros(1500));
        let w = crate::summary::world(&world);
        assert_eq!(s.frame, 7);
        assert_eq!(s.frame_ns, 1_500_000);
        assert_eq!(s.entities, 1000);
        assert_eq!(w["archetypes_in_use"], s.archetypes);
        assert_eq!(s.archetypes, 1, "the emptied u8 archetype is not in use");
        assert_eq!(w["bytes_used"], s.bytes_used);
        assert_eq!(w["bytes_reserved"], s.bytes_reserved);
        assert!(s.bytes_reserved > s.bytes_used, "the u8 rows' room is kept");
    }

    #[test]
    fn keeps_the_last_frames_and_pages_by_frame() {
        let mut h = WorldHistory::new(3);
        for f in 1..=5u64 {
            h.push(WorldSample {
                frame: f,
                entities: f * 10,
                ..WorldSample::default()
            });
        }
        assert_eq!(h.len(), 3);
        assert_eq!(h.last().unwrap().frame, 5);
        let j = h.to_json(10, None);
        assert_eq!(j["frames"], json!([3, 4, 5]));
        assert_eq!(j["entities"], json!([30, 40, 50]));
        assert_eq!(h.to_json(1, None)["frames"], json!([5]));
        assert_eq!(h.to_json(10, Some(3))["entities"], json!([40, 50]));
        assert_eq!(h.to_json(10, Some(9))["frames"], json!([]));
        assert_eq!(j["capacity"], 3);
    }
}
