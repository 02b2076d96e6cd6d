// A world of a universe has no allocator of its own: it cannot reserve ids.
fn main() {
    let mut universe = doecs::Universe::new();
    let game = universe.add_world();
    let _ = universe.world_mut(game).reserve_entity();
}
