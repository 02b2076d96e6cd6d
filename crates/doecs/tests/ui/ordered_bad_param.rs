// Ordering a function system checks its parameters the same way.
use doecs::prelude::*;
struct Position(f32);
fn nudge(_p: &mut Position) {}
fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(nudge.after("physics")).unwrap();
}
