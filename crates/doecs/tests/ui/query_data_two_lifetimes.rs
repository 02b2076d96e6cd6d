// `#[derive(QueryData)]` takes exactly one lifetime, and no type parameter.
use doecs::prelude::*;

struct Hp(i32);
struct Team(u8);

#[derive(QueryData)]
struct Unit<'a, 'b> {
    hp: &'a mut Hp,
    team: &'b Team,
}

#[derive(QueryData)]
struct Generic<'a, T: 'static> {
    value: &'a T,
}

fn main() {}
