// Only functions (and descs) are systems.
use doecs::prelude::*;
fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(42u32).unwrap();
}
