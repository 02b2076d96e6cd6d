use doecs::prelude::*;

#[derive(SystemSet, Clone, Debug, PartialEq, Eq, Hash)]
struct Physics;

fn integrate() {}
fn render() {}

fn main() {
    let mut app = App::new();
    app.add_systems(Update, integrate.in_set(Physics)).unwrap();
    // A misspelled set or system is a compile error, not a run-time lookup.
    app.add_systems(Update, render.after(Phyiscs)).unwrap();
    app.add_systems(Update, render.after(integrat)).unwrap();
}
