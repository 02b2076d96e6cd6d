// A field of a derived query borrows for the struct's lifetime: one that
// claims `'static` would outlive the world it points into.
use doecs::prelude::*;

#[derive(QueryData)]
struct Foo<'a> {
    foo: &'a i32,
    bar: &'static mut bool,
}

#[derive(QueryData)]
enum Bar<'a> {
    Foo(&'a i32),
    Bar(&'static mut bool),
}

fn main() {}
