// A function system's parameters must all be system parameters.
use doecs::prelude::*;
fn not_a_param(_x: u32) {}
fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(not_a_param).unwrap();
}
