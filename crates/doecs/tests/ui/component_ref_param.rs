// A component is reached through a `Query`, not taken by reference.
use doecs::prelude::*;
struct Position(f32);
fn nudge(p: &mut Position) {
    p.0 += 1.0;
}
fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(nudge).unwrap();
}
