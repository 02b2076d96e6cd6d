// `Query<&T>` and `Res<T>` parameters only read.
use doecs::prelude::*;
struct Pos(f32);
struct Dt(f32);
fn bad(mut q: Query<&Pos>, dt: Res<Dt>) {
    q.for_each(|p| p.0 += 1.0);
    dt.0 = 2.0;
}
fn main() {
    let mut schedule = Schedule::new();
    schedule.add_system(bad).unwrap();
}
