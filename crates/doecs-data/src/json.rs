//! JSON import: validating the restricted model and flattening objects.
//!
//! Objects become paths (`{"stats": {"health": 1}}` is `stats.health`), with
//! each JSON key one literal segment, so a JSON key containing `.` stays one
//! segment. Numbers become `f32` (refused when they do not fit), arrays must
//! hold only numbers, and `null` is refused; see [`DataError`] for the
//! reasons. Empty objects store nothing (the hierarchy is not kept).
//! Validation finishes before anything is written, so a refused import
//! changes nothing.

use crate::error::DataError;
use crate::key::Key;
use crate::value::{Floats, Value};
use serde_json::Value as Json;

/// A flattened value, owning what JSON cannot lend (float arrays).
#[derive(Clone, Debug)]
pub(crate) enum FlatValue<'a> {
    Bool(bool),
    F32(f32),
    Str(&'a str),
    F32s(Vec<f32>),
}

impl FlatValue<'_> {
    pub(crate) fn as_value(&self) -> Value<'_> {
        match self {
            FlatValue::Bool(b) => Value::Bool(*b),
            FlatValue::F32(f) => Value::F32(*f),
            FlatValue::Str(s) => Value::Str(s),
            FlatValue::F32s(a) => Value::F32s(Floats::new(a)),
        }
    }
}

/// One flattened leaf.
#[derive(Clone, Debug)]
pub(crate) struct Flat<'a> {
    pub(crate) key: Key,
    pub(crate) segments: Vec<&'a str>,
    pub(crate) value: FlatValue<'a>,
}

fn dotted(segments: &[&str]) -> String {
    segments.join(".")
}

fn number(n: &serde_json::Number, segments: &[&str]) -> Result<f32, DataError> {
    let f = n.as_f64().map(|f| f as f32).unwrap_or(f32::NAN);
    if f.is_finite() {
        Ok(f)
    } else {
        Err(DataError::NotFinite {
            path: dotted(segments),
        })
    }
}

fn kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a bool",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// Flattens `json` found at `segments` (key `key`) into `out`.
pub(crate) fn flatten_into<'a>(
    json: &'a Json,
    key: Key,
    segments: &mut Vec<&'a str>,
    out: &mut Vec<Flat<'a>>,
) -> Result<(), DataError> {
    let value = match json {
        Json::Object(map) => {
            for (name, child) in map {
                segments.push(name);
                flatten_into(child, key.child(name), segments, out)?;
                segments.pop();
            }
            return Ok(());
        }
        Json::Null => {
            return Err(DataError::Null {
                path: dotted(segments),
            })
        }
        Json::Bool(b) => FlatValue::Bool(*b),
        Json::Number(n) => FlatValue::F32(number(n, segments)?),
        Json::String(s) => FlatValue::Str(s),
        Json::Array(items) => FlatValue::F32s(
            items
                .iter()
                .map(|item| match item {
                    Json::Number(n) => number(n, segments),
                    _ => Err(DataError::ArrayNotNumeric {
                        path: dotted(segments),
                    }),
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    out.push(Flat {
        key,
        segments: segments.clone(),
        value,
    });
    Ok(())
}

/// Flattens a top-level JSON object.
pub(crate) fn flatten_object(json: &Json) -> Result<Vec<Flat<'_>>, DataError> {
    if !json.is_object() {
        return Err(DataError::NotAnObject(kind(json)));
    }
    let mut out = Vec::new();
    flatten_into(json, Key::ROOT, &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// Refuses two leaves of one import whose different paths share a 32-bit key.
pub(crate) fn check_batch_collisions(flat: &[Flat<'_>]) -> Result<(), DataError> {
    let mut keys: Vec<(u32, u64, usize)> = flat
        .iter()
        .enumerate()
        .map(|(i, f)| (f.key.hash32().0, f.key.bits(), i))
        .collect();
    keys.sort_unstable();
    for w in keys.windows(2) {
        if w[0].0 == w[1].0 {
            // Paths in one JSON object are distinct, so equal 32-bit keys
            // always mean a collision.
            return Err(DataError::KeyCollision {
                key: crate::key::KeyHash(w[1].0),
                path: dotted(&flat[w[1].2].segments),
                other: Some(dotted(&flat[w[0].2].segments)),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flattens_the_character_sheet() {
        let j = json!({
            "name": "The One",
            "stats": {"health": 100, "mana": 200},
            "status_effects": {"drunk": true, "delirious": true},
            "color": [0, 0.5, 0.5, 0.7],
            "a.b": 1
        });
        let flat = flatten_object(&j).unwrap();
        assert_eq!(flat.len(), 7);
        let health = flat
            .iter()
            .find(|f| f.segments == ["stats", "health"])
            .unwrap();
        assert_eq!(health.key, Key::parse("stats.health").unwrap());
        let ab = flat.iter().find(|f| f.segments == ["a.b"]).unwrap();
        assert_eq!(ab.key, Key::from_segments(&["a.b"]));
        assert_ne!(ab.key, Key::parse("a.b").unwrap());
    }

    #[test]
    fn refuses_outside_the_model() {
        let e = flatten_object(&json!({"items": [1, "x"]})).unwrap_err();
        assert!(matches!(e, DataError::ArrayNotNumeric { .. }));
        assert!(e.to_string().contains("merge"), "{e}");
        assert!(matches!(
            flatten_object(&json!({"a": {"b": null}})).unwrap_err(),
            DataError::Null { path } if path == "a.b"
        ));
        assert!(matches!(
            flatten_object(&json!({"big": 1e300})).unwrap_err(),
            DataError::NotFinite { .. }
        ));
        assert!(matches!(
            flatten_object(&json!([1, 2])).unwrap_err(),
            DataError::NotAnObject("an array")
        ));
        assert!(matches!(
            flatten_object(&json!({"nested": [[1]]})).unwrap_err(),
            DataError::ArrayNotNumeric { .. }
        ));
    }
}
