// A system reads the world through queries and resources, not `&World`.
use doecs::prelude::*;
struct Position(f32);
fn inspect(_world: &World, _q: Query<&Position>) {}
fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(inspect).unwrap();
}
