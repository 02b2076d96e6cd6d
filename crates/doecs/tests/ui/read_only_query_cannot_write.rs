// A read-only query on a shared world cannot write.
struct Pos(f32);
fn main() {
    let world = doecs::World::new();
    world.query::<&mut Pos>().for_each(|p| p.0 += 1.0);
}
