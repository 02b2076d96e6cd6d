//! The built-in `transform` component: compiled from translation, rotation
//! and scale, spawned into the world's [`TransformManager`](doecs_transform::TransformManager) with the
//! hierarchy linked from `parent_index`.
//!
//! JSON: `{"translation": [x, y, z], "rotation": [x, y, z, w], "scale": [x, y, z]}`,
//! every key optional (identity by default); `scale` may be one number. The
//! instance data is the local [`Affine3A`] as 16 little-endian `f32`s: the x,
//! y and z axes, then the translation, each as four lanes with the fourth 0
//! (64 bytes, glam's in-memory layout of `Affine3A`). Every lane must be
//! finite, padding lanes included. Because blob instance
//! data is 16-byte aligned, a little-endian host reads the transforms in place
//! as `&[Affine3A]`, with no decoding or copy.
//!
//! The spawner makes **one** batch call ([`WorldTransforms::add_transforms`])
//! for the whole block. The blob's hierarchy is already the world's
//! `ChildOf` pairs by then (the spawner sets them for every entity), and the
//! transform manager follows them: a transform's parent is the transform of
//! its entity's nearest ancestor that has one (an entity without a
//! transform in between, such as a cable between a boom and its
//! counterweight, is passed over), a root where no ancestor has one.

use crate::compiler::f32s;
use crate::spawner::{ComponentSpawner, SpawnBatch};
use crate::view::BlockView;
use doecs::{Entity, World};
use doecs_transform::WorldTransforms;
use glam::{Affine3A, Quat, Vec3};
use serde_json::Value;

/// The component name of the built-in transform.
pub const TRANSFORM: &str = "transform";
/// Bytes per transform instance.
pub const TRANSFORM_SIZE: usize = 64;
/// The transform's spawn order: before everything that may look for it.
pub const TRANSFORM_SPAWN_ORDER: i32 = -100;

/// Encodes a local transform as instance bytes.
pub fn encode_transform(local: &Affine3A) -> Vec<u8> {
    let c = local.to_cols_array();
    let mut out = Vec::with_capacity(TRANSFORM_SIZE);
    for axis in c.chunks_exact(3) {
        for f in axis.iter().chain(std::iter::once(&0.0)) {
            out.extend_from_slice(&f.to_le_bytes());
        }
    }
    out
}

/// Decodes instance bytes (at least 64) into a local transform.
pub fn decode_transform(bytes: &[u8]) -> Affine3A {
    let mut cols = [0f32; 12];
    for (k, c) in cols.iter_mut().enumerate() {
        let at = (k / 3) * 16 + (k % 3) * 4;
        let b = &bytes[at..at + 4];
        *c = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    Affine3A::from_cols_array(&cols)
}

/// The transforms of a block read in place, when the host is little-endian
/// and the data is 16-byte aligned in memory; `None` otherwise.
fn transforms_in_place(data: &[u8]) -> Option<&[Affine3A]> {
    const _: () = assert!(std::mem::size_of::<Affine3A>() == TRANSFORM_SIZE);
    let aligned = (data.as_ptr() as usize).is_multiple_of(std::mem::align_of::<Affine3A>());
    if !cfg!(target_endian = "little") || !aligned || !data.len().is_multiple_of(TRANSFORM_SIZE) {
        return None;
    }
    // `Affine3A` is 64 bytes of f32 lanes (three `Vec3A` axes and a `Vec3A`
    // translation, each 16 bytes whose fourth lane is padding), so every bit
    // pattern is a valid value; on a little-endian host the blob's byte order
    // is the native one.
    let (ptr, count) = (
        data.as_ptr().cast::<Affine3A>(),
        data.len() / TRANSFORM_SIZE,
    );
    // SAFETY: any bits are an `Affine3A` (above); `ptr` is aligned (checked),
    // `count` values fit in `data`, which is initialised and borrowed for the
    // returned lifetime.
    Some(unsafe { std::slice::from_raw_parts(ptr, count) })
}

/// The transform's compile function (see the module docs).
pub fn compile_transform(v: &Value) -> Result<Vec<u8>, String> {
    let Value::Object(map) = v else {
        return Err(format!("expected an object, found {v}"));
    };
    let mut t = Vec3::ZERO;
    let mut r = Quat::IDENTITY;
    let mut s = Vec3::ONE;
    for (key, value) in map {
        match key.as_str() {
            "translation" => t = Vec3::from_slice(&f32s(value, 3)?),
            "rotation" => {
                let q = f32s(value, 4)?;
                let q = Quat::from_xyzw(q[0], q[1], q[2], q[3]);
                if q.length_squared() < 1e-12 {
                    return Err("rotation quaternion has zero length".into());
                }
                r = q.normalize();
            }
            "scale" => {
                s = match value {
                    Value::Number(_) => Vec3::splat(f32s(value, 1)?[0]),
                    _ => Vec3::from_slice(&f32s(value, 3)?),
                }
            }
            other => {
                return Err(format!(
                    "unknown key `{other}` (expected translation, rotation, scale)"
                ))
            }
        }
    }
    Ok(encode_transform(
        &Affine3A::from_scale_rotation_translation(s, r, t),
    ))
}

/// Spawns transforms into the world's [`TransformManager`](doecs_transform::TransformManager) (added, in
/// immediate mode with despawn callbacks, if the world has none).
#[derive(Copy, Clone, Debug, Default)]
pub struct TransformSpawner;

impl ComponentSpawner for TransformSpawner {
    fn instance_size(&self) -> Option<usize> {
        Some(TRANSFORM_SIZE)
    }

    fn validate(&self, block: &BlockView<'_>) -> Result<(), (usize, String)> {
        // Any f32 bits decode; non-finite values are refused so world
        // transforms stay meaningful. One pass over all lanes (padding lanes
        // included: the compiler writes 0 there); locate only on failure.
        use crate::format::any_non_finite_f32;
        if !any_non_finite_f32(block.data) {
            return Ok(());
        }
        match block
            .data
            .chunks_exact(TRANSFORM_SIZE)
            .position(any_non_finite_f32)
        {
            Some(i) => Err((i, "transform holds a NaN or infinite value".into())),
            None => Ok(()),
        }
    }

    fn spawn(&self, world: &mut World, batch: &SpawnBatch<'_>) {
        let n = batch.num_instances();
        let num_entities = batch.entity_lookup.len();
        let gathered: Vec<_>;
        let entities = if n == num_entities {
            batch.entity_lookup
        } else {
            gathered = batch
                .entity_index
                .iter()
                .map(|e| batch.entity_lookup[e as usize])
                .collect();
            &gathered
        };
        let decoded: Vec<Affine3A>;
        let locals = match transforms_in_place(batch.data) {
            Some(in_place) => in_place,
            None => {
                decoded = batch
                    .data
                    .chunks_exact(TRANSFORM_SIZE)
                    .map(decode_transform)
                    .collect();
                &decoded
            }
        };
        // The spawner set the blob's hierarchy as `ChildOf` already: the
        // batch links itself from it, reading the parents from the batch
        // when every entity has a transform.
        let created = match batch.parented {
            Some(parented) if n == num_entities => world.add_transforms_to_batch(parented, locals),
            _ => world.add_transforms(entities, locals).map(drop),
        };
        if created.is_err() {
            // Only another custom spawner of this blob, running earlier,
            // can have despawned one of the fresh entities or given it a
            // transform (hook commands wait for the end of the spawn). The
            // others still get theirs.
            let have = |e: Entity| {
                world
                    .manager::<doecs_transform::TransformManager>()
                    .is_some_and(|tm| tm.lookup(e).is_some())
            };
            let (entities, locals): (Vec<Entity>, Vec<Affine3A>) = entities
                .iter()
                .zip(locals)
                .filter(|&(&e, _)| world.alive(e) && !have(e))
                .unzip();
            world
                .add_transforms(&entities, &locals)
                .expect("live entities without transforms, each once");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_matches_memory_layout() {
        let t = Affine3A::from_scale_rotation_translation(
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_rotation_y(0.5),
            Vec3::new(4.0, 5.0, 6.0),
        );
        let bytes = encode_transform(&t);
        assert_eq!(bytes.len(), TRANSFORM_SIZE);
        assert_eq!(decode_transform(&bytes), t);
        let aligned = crate::AlignedBytes::from_slice(&bytes);
        if cfg!(target_endian = "little") {
            assert_eq!(transforms_in_place(&aligned), Some(&[t][..]));
        }
        assert_eq!(transforms_in_place(&aligned[..63]), None);
    }
}
