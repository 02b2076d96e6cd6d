// A derived query is read-only only when every field is: one that writes
// cannot run on a shared `&World`.
use doecs::prelude::*;

struct Hp(i32);

#[derive(QueryData)]
struct Unit<'a> {
    id: Entity,
    hp: &'a mut Hp,
}

fn main() {
    let world = World::new();
    let shared: &World = &world;
    let _ = shared.query::<Unit>().iter().count();
}
