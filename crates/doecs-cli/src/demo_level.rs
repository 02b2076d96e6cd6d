//! The bundled demo level, generated deterministically: ships (roots with a
//! transform and point-mass physics), each with parts that spin, each part
//! with sub-parts. With the default 1,000 ships that is 13,000 entities, three
//! levels deep. Ships also carry a DataComponent record (`data`).

use serde_json::{json, Value};

/// Parts per ship.
pub const PARTS: usize = 4;
/// Sub-parts per part.
pub const SUB_PARTS: usize = 2;
/// Ships in the default demo level.
pub const DEFAULT_SHIPS: usize = 1_000;

/// Entities in a demo level of `ships` ships.
pub fn entity_count(ships: usize) -> usize {
    ships * (1 + PARTS + PARTS * SUB_PARTS)
}

/// A small xorshift generator, so the level is the same on every run.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
}

/// The demo level as JSON text (see `doecs_resource::schema`).
pub fn demo_level_json(ships: usize) -> String {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut entities = Vec::with_capacity(ships);
    for s in 0..ships {
        let pos = [
            rng.range(-200.0, 200.0),
            rng.range(20.0, 120.0),
            rng.range(-200.0, 200.0),
        ];
        let vel = [
            rng.range(-5.0, 5.0),
            rng.range(-1.0, 1.0),
            rng.range(-5.0, 5.0),
        ];
        let mut parts = Vec::with_capacity(PARTS);
        for p in 0..PARTS {
            let angle = p as f32 * std::f32::consts::TAU / PARTS as f32;
            let subs: Vec<Value> = (0..SUB_PARTS)
                .map(|k| {
                    json!({
                        "components": {
                            "transform": { "translation": [0.0, 0.5 + k as f32, 0.0], "scale": 0.5 },
                            "spin": rng.range(-3.0, 3.0),
                        }
                    })
                })
                .collect();
            parts.push(json!({
                "name": format!("ship{s}.part{p}"),
                "components": {
                    "transform": { "translation": [3.0 * angle.cos(), 0.0, 3.0 * angle.sin()] },
                    "spin": rng.range(-1.0, 1.0),
                },
                "children": subs,
            }));
        }
        entities.push(json!({
            "name": format!("ship{s}"),
            "components": {
                "transform": { "translation": pos },
                "position": pos,
                "velocity": vel,
                "mass": rng.range(1.0, 10.0),
                "data": { "hull": { "hp": 100 }, "class": if s % 3 == 0 { "frigate" } else { "scout" } },
            },
            "children": parts,
        }));
    }
    serde_json::to_string(&json!({ "entities": entities })).expect("JSON values serialise")
}
