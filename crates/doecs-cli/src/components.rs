//! The demo's component types and their registration with the level
//! compiler and spawner: `transform` (built in), and the plain components
//! `position`, `velocity` (three `f32`s each), `mass` and `spin` (one `f32`).

use doecs_resource::{standard_compiler, standard_spawner, Compiler, PlainBytes, Spawner};

/// World-space position of a point mass (metres).
#[derive(Copy, Clone, Debug, PartialEq)]
#[repr(transparent)]
pub struct Position(pub [f32; 3]);
/// Velocity of a point mass (metres per second).
#[derive(Copy, Clone, Debug, PartialEq)]
#[repr(transparent)]
pub struct Velocity(pub [f32; 3]);
/// Mass (kilograms).
#[derive(Copy, Clone, Debug, PartialEq)]
#[repr(transparent)]
pub struct Mass(pub f32);
/// Spin of a part about its local y axis (radians per second).
#[derive(Copy, Clone, Debug, PartialEq)]
#[repr(transparent)]
pub struct Spin(pub f32);

// SAFETY: each is `repr(transparent)` over f32 scalars: no padding, any bits valid.
unsafe impl PlainBytes for Position {
    const SCALAR_WIDTH: usize = 4;
}
// SAFETY: as above.
unsafe impl PlainBytes for Velocity {
    const SCALAR_WIDTH: usize = 4;
}
// SAFETY: as above.
unsafe impl PlainBytes for Mass {
    const SCALAR_WIDTH: usize = 4;
}
// SAFETY: as above.
unsafe impl PlainBytes for Spin {
    const SCALAR_WIDTH: usize = 4;
}

/// The compiler and spawner for the demo's components.
pub fn registry() -> (Compiler, Spawner) {
    let mut compiler = standard_compiler();
    let mut spawner = standard_spawner();
    for (name, n) in [("position", 3), ("velocity", 3), ("mass", 1), ("spin", 1)] {
        compiler.register_f32s(name, 0, n).expect("fresh names");
    }
    spawner
        .register_plain::<Position>("position")
        .expect("fresh");
    spawner
        .register_plain::<Velocity>("velocity")
        .expect("fresh");
    spawner.register_plain::<Mass>("mass").expect("fresh");
    spawner.register_plain::<Spin>("spin").expect("fresh");
    (compiler, spawner)
}
