use doecs::prelude::*;

struct Position(f32);

fn nudge(p: &mut Position) {
    p.0 += 1.0;
}

fn main() {
    let mut app = App::new();
    app.add_systems(Update, nudge).unwrap();
}
