// `#[derive(SystemParam)]` needs a struct with named fields: every field
// is fetched at once, which an enum's variants cannot be.
use doecs::prelude::*;

#[derive(SystemParam)]
enum Either<'w> {
    Reads(Res<'w, u32>),
    Writes(ResMut<'w, u32>),
}

#[derive(SystemParam)]
struct Tuple<'w>(Res<'w, u32>);

fn main() {}
