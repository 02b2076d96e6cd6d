// A bundle field that is itself a bundle must be marked `#[bundle]`:
// otherwise it would be stored as one component, silently.
use doecs::Bundle;

struct Pos(f32);
struct Vel(f32);

#[derive(Bundle)]
struct Body {
    pos: Pos,
    vel: Vel,
}

#[derive(Bundle)]
struct Ship {
    body: Body,
    hp: u32,
}

fn main() {}
