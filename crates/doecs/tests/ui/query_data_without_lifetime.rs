// `#[derive(QueryData)]` needs the one lifetime its items borrow for.
use doecs::prelude::*;

struct Hp(i32);

#[derive(QueryData)]
struct Unit {
    hp: &'static Hp,
}

fn main() {}
