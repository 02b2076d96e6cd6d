//! Placeholder: the side-by-side benchmark lands in the next commit.
fn main() {}
