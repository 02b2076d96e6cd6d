//! The demo's plain component types: `position`, `velocity` (three `f32`s
//! each), `mass` and `spin` (one `f32`), with the checks of their values.
//! Each is serde serialisable and `bytemuck::Pod`; they are registered,
//! checks included, in one place: [`crate::registry::component_registry`].

use bytemuck::{Pod, Zeroable};
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
