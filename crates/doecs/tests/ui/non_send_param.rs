// A type that is not a system parameter (here one that is not even `Send`).
use doecs::prelude::*;
use std::rc::Rc;
struct Position(f32);
fn count(_q: Query<&Position>, _shared: Rc<u32>) {}
fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(count).unwrap();
}
