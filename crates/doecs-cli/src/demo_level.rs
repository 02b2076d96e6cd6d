//! The bundled demo level, generated deterministically: ships (roots with a
//! transform and point-mass physics), each with parts that spin, each part
//! with sub-parts. With the default 1,000 ships that is 13,000 entities, three
//! levels deep. Ships also carry a DataComponent record (`data`).
//!
//! The JSON is written ship by ship straight to a writer (a file, or memory
//! for `doecs run`), so generating it needs no memory beyond the text
//! itself, and it can report progress.

use std::io::{self, Write};

/// Parts per ship.
pub const PARTS: usize = 4;
/// Sub-parts per part.
pub const SUB_PARTS: usize = 2;
/// Entities per ship.
pub const ENTITIES_PER_SHIP: usize = 1 + PARTS + PARTS * SUB_PARTS;
/// Ships in the default demo level.
pub const DEFAULT_SHIPS: usize = 1_000;
/// Most ships `--ships` accepts: 1,000,000 ships are 13,000,000 entities,
/// about 1.4 GB of JSON; `doecs run` on it peaks near 5 GB of memory (JSON
/// text, compiled blob and the world's storage).
pub const MAX_SHIPS: usize = 1_000_000;
/// From this many ships on, the CLI says what it is doing and shows progress.
pub const LARGE_SHIPS: usize = 100_000;
/// About how many bytes of JSON one ship takes (for reserving memory).
pub const BYTES_PER_SHIP: usize = 1_450;

/// Entities in a demo level of `ships` ships.
pub fn entity_count(ships: usize) -> usize {
    ships * ENTITIES_PER_SHIP
}

/// Checks a `--ships` value against [`MAX_SHIPS`].
pub fn check_ships(ships: usize) -> Result<(), String> {
    if ships > MAX_SHIPS {
        return Err(format!(
            "--ships {ships} is more than the limit of {MAX_SHIPS} ({} entities)",
            entity_count(MAX_SHIPS)
        ));
    }
    Ok(())
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

/// One ship's random values, drawn in a fixed order.
struct Ship {
    pos: [f32; 3],
    vel: [f32; 3],
    /// Per part: the sub-parts' spins, then the part's own spin.
    spins: [([f32; SUB_PARTS], f32); PARTS],
    mass: f32,
}

impl Ship {
    fn draw(rng: &mut Rng) -> Ship {
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
        let spins = std::array::from_fn(|_| {
            let subs = std::array::from_fn(|_| rng.range(-3.0, 3.0));
            (subs, rng.range(-1.0, 1.0))
        });
        let mass = rng.range(1.0, 10.0);
        Ship {
            pos,
            vel,
            spins,
            mass,
        }
    }
}

/// `[x,y,z]` with each `f32` in its shortest exact form.
fn vec3(v: [f32; 3]) -> String {
    format!("[{},{},{}]", v[0], v[1], v[2])
}

/// Writes the demo level as JSON text (see `doecs_resource::schema`),
/// calling `progress` with the number of ships written every 4,096 ships
/// and at the end.
pub fn write_demo_level(
    out: &mut impl Write,
    ships: usize,
    mut progress: impl FnMut(usize),
) -> io::Result<()> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    out.write_all(br#"{"entities":["#)?;
    for s in 0..ships {
        let ship = Ship::draw(&mut rng);
        if s > 0 {
            out.write_all(b",")?;
        }
        write!(
            out,
            r#"{{"name":"ship{s}","components":{{"transform":{{"translation":{p}}},"position":{p},"velocity":{v},"mass":{m},"data":{{"hull":{{"hp":100}},"class":"{class}"}}}},"children":["#,
            p = vec3(ship.pos),
            v = vec3(ship.vel),
            m = ship.mass,
            class = if s % 3 == 0 { "frigate" } else { "scout" },
        )?;
        for (p, (subs, spin)) in ship.spins.iter().enumerate() {
            let angle = p as f32 * std::f32::consts::TAU / PARTS as f32;
            if p > 0 {
                out.write_all(b",")?;
            }
            write!(
                out,
                r#"{{"name":"ship{s}.part{p}","components":{{"transform":{{"translation":{t}}},"spin":{spin}}},"children":["#,
                t = vec3([3.0 * angle.cos(), 0.0, 3.0 * angle.sin()]),
            )?;
            for (k, sub_spin) in subs.iter().enumerate() {
                if k > 0 {
                    out.write_all(b",")?;
                }
                write!(
                    out,
                    r#"{{"components":{{"transform":{{"translation":{t},"scale":0.5}},"spin":{sub_spin}}}}}"#,
                    t = vec3([0.0, 0.5 + k as f32, 0.0]),
                )?;
            }
            out.write_all(b"]}")?;
        }
        out.write_all(b"]}")?;
        if (s + 1) % 4096 == 0 {
            progress(s + 1);
        }
    }
    out.write_all(b"]}")?;
    progress(ships);
    Ok(())
}

/// The demo level as JSON text, in memory.
pub fn demo_level_json(ships: usize, progress: impl FnMut(usize)) -> Vec<u8> {
    let mut out = Vec::with_capacity(ships.saturating_mul(BYTES_PER_SHIP) + 16);
    write_demo_level(&mut out, ships, progress).expect("writing to memory cannot fail");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_level_compiles_with_the_right_shape() {
        let json = demo_level_json(7, |_| {});
        let level = doecs_resource::LevelDesc::from_json(std::str::from_utf8(&json).unwrap())
            .expect("valid level JSON");
        assert_eq!(level.entities.len(), 7);
        assert_eq!(level.entity_count(), entity_count(7));
        let (compiler, _) = crate::registry::compiler_and_spawner();
        let blob = compiler.compile(&level).unwrap();
        let view = doecs_resource::BlobView::parse(&blob).unwrap();
        assert_eq!(view.hierarchy_depth(), 3);
        // Deterministic.
        assert_eq!(json, demo_level_json(7, |_| {}));
        assert!(json.len() < 7 * BYTES_PER_SHIP, "{} bytes", json.len());
    }

    #[test]
    fn ships_are_bounded() {
        assert!(check_ships(MAX_SHIPS).is_ok());
        let err = check_ships(MAX_SHIPS + 1).unwrap_err();
        assert!(err.contains("limit of 1000000"), "{err}");
    }
}
