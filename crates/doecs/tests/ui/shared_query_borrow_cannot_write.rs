// A mutable query read through `&self` (`iter`, `get`, `for x in &q`)
// hands out `&T` for its `&mut T` parts: writing needs `iter_mut`.
use doecs::World;

struct Pos(f32);

fn main() {
    let mut world = World::new();
    let e = world.spawn((Pos(0.0),));
    let q = world.query_mut::<&mut Pos>();
    for p in q.iter() {
        p.0 += 1.0;
    }
    q.get(e).unwrap().0 = 2.0;
}
