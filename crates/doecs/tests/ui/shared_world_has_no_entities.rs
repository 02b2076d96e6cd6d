// `world(g)` is a `WorldCore`: liveness is asked of the universe, so there is
// no second allocator whose answer could disagree.
fn main() {
    let mut universe = doecs::Universe::new();
    let game = universe.add_world();
    let e = universe.spawn();
    let _ = universe.world(game).entities().alive(e);
    let _ = universe.world(game).spawn((1u32,));
}
