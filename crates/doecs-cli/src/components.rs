//! The demo's component types and their registration with the level
//! compiler and spawner: `transform` (built in), and the plain components
//! `position`, `velocity` (three `f32`s each), `mass` and `spin` (one `f32`).

use bytemuck::{Pod, Zeroable};
use doecs_resource::{standard_compiler, standard_spawner, Compiler, PlainBytes, Spawner};
use serde::{Deserialize, Serialize};

/// World-space position of a point mass (metres).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
#[repr(transparent)]
pub struct Position(pub [f32; 3]);
/// Velocity of a point mass (metres per second).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
#[repr(transparent)]
pub struct Velocity(pub [f32; 3]);
/// Mass (kilograms).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
#[repr(transparent)]
pub struct Mass(pub f32);
/// Spin of a part about its local y axis (radians per second).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, Pod, Zeroable)]
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

/// `Ok` when every value is finite, else why not.
fn all_finite(what: &str, values: &[f32]) -> Result<(), String> {
    if values.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(format!("{what} must be finite, got {values:?}"))
    }
}

impl Position {
    /// Every coordinate must be finite.
    pub fn validate(&self) -> Result<(), String> {
        all_finite("position", &self.0)
    }
}

impl Velocity {
    /// Every component must be finite.
    pub fn validate(&self) -> Result<(), String> {
        all_finite("velocity", &self.0)
    }
}

impl Mass {
    /// Must be finite and greater than 0: the physics divides by it.
    pub fn validate(&self) -> Result<(), String> {
        if self.0.is_finite() && self.0 > 0.0 {
            Ok(())
        } else {
            Err(format!(
                "mass must be finite and greater than 0, got {}",
                self.0
            ))
        }
    }
}

impl Spin {
    /// Must be finite.
    pub fn validate(&self) -> Result<(), String> {
        all_finite("spin", &[self.0])
    }
}

/// `n` numbers as an array (the compiler passes exactly `n`).
fn array<const N: usize>(values: &[f32]) -> Result<[f32; N], String> {
    values
        .try_into()
        .map_err(|_| format!("expected {N} numbers, found {}", values.len()))
}

/// The compiler and spawner for the demo's components. Each plain component
/// is checked by the same rule when JSON is compiled (the error names the
/// entity's path) and when a blob is loaded (a hand-made blob with a zero
/// mass is refused before anything is spawned).
pub fn registry() -> (Compiler, Spawner) {
    let mut compiler = standard_compiler();
    let mut spawner = standard_spawner();
    compiler
        .register_f32s_validated("position", 0, 3, |v| Position(array(v)?).validate())
        .expect("fresh names");
    compiler
        .register_f32s_validated("velocity", 0, 3, |v| Velocity(array(v)?).validate())
        .expect("fresh names");
    compiler
        .register_f32s_validated("mass", 0, 1, |v| Mass(array::<1>(v)?[0]).validate())
        .expect("fresh names");
    compiler
        .register_f32s_validated("spin", 0, 1, |v| Spin(array::<1>(v)?[0]).validate())
        .expect("fresh names");
    spawner
        .register_plain_validated("position", Position::validate)
        .expect("fresh");
    spawner
        .register_plain_validated("velocity", Velocity::validate)
        .expect("fresh");
    spawner
        .register_plain_validated("mass", Mass::validate)
        .expect("fresh");
    spawner
        .register_plain_validated("spin", Spin::validate)
        .expect("fresh");
    (compiler, spawner)
}
