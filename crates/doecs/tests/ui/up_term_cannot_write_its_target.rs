// An up term only reads its target: writing a parent's component through
// it does not compile (two children of one parent would write it at once).
use doecs::{ChildOf, Up, World};
struct Height(f32);
fn main() {
    let mut world = World::new();
    let _ = world.query_mut::<Up<ChildOf, &mut Height>>();
}
