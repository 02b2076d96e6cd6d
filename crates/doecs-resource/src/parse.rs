//! The level parser: serde visitors for [`LevelDesc`] and [`EntityDesc`]
//! that refuse unknown keys, duplicate keys (in every object, component JSON
//! included) and nested `children` deeper than [`MAX_NESTED_DEPTH`], and
//! that hand each top-level entity to a sink as soon as it is parsed, so the
//! compiler never holds the whole parsed level in memory.
//!
//! Recursion: parsing nested JSON recurses on the stack. serde_json's own
//! limit (127 nested arrays and objects) stays on, and entity nesting is
//! refused past [`MAX_NESTED_DEPTH`] levels (well inside that limit), so both
//! parsing and dropping parsed values are bounded.

use crate::error::CompileError;
use crate::schema::{EntityDesc, LevelDesc, MAX_NESTED_DEPTH};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::fmt;

/// Receives top-level entity `k` (from 0, in order) as soon as it is parsed.
pub(crate) type Sink<'s> = dyn FnMut(usize, EntityDesc) -> Result<(), CompileError> + 's;

/// Why a visitor failed, kept beside the serde error (whose message is text)
/// so the caller can return a typed [`CompileError`].
#[derive(Default)]
pub(crate) struct Ctx {
    issue: Cell<Option<Issue>>,
}

enum Issue {
    Duplicate(String),
    TooDeep,
    Sink(CompileError),
}

impl Ctx {
    fn duplicate<E: de::Error>(&self, key: &str) -> E {
        self.issue.set(Some(Issue::Duplicate(key.to_owned())));
        E::custom(format_args!("duplicate key {key:?}"))
    }

    fn too_deep<E: de::Error>(&self) -> E {
        self.issue.set(Some(Issue::TooDeep));
        E::custom(format_args!(
            "level nests children deeper than the limit of {MAX_NESTED_DEPTH} entity levels; \
             use the flat form with \"parent\" for deeper hierarchies"
        ))
    }
}

/// Parses a level from JSON text, giving each top-level entity to `sink`.
pub(crate) fn parse_level(json: &str, sink: &mut Sink<'_>) -> Result<(), CompileError> {
    let ctx = Ctx::default();
    let mut de = serde_json::Deserializer::from_str(json);
    let result = LevelSeed { ctx: &ctx, sink }
        .deserialize(&mut de)
        .and_then(|()| de.end());
    result.map_err(|e| match ctx.issue.take() {
        Some(Issue::Sink(err)) => err,
        Some(Issue::Duplicate(key)) => CompileError::DuplicateKey {
            key,
            line: e.line(),
            column: e.column(),
        },
        Some(Issue::TooDeep) => CompileError::TooDeep {
            limit: MAX_NESTED_DEPTH,
            line: e.line(),
            column: e.column(),
        },
        None => {
            let mut message = e.to_string();
            if message.starts_with("recursion limit exceeded") {
                message.push_str(
                    " (JSON may nest at most 127 arrays and objects; an entity nested at \
                     level d is the (2d + 1)-th, so use the flat form with \"parent\" to \
                     leave room for deep component JSON)",
                );
            }
            CompileError::Schema(message)
        }
    })
}

impl<'de> Deserialize<'de> for LevelDesc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let ctx = Ctx::default();
        let mut entities = Vec::new();
        LevelSeed {
            ctx: &ctx,
            sink: &mut |_, e| {
                entities.push(e);
                Ok(())
            },
        }
        .deserialize(deserializer)?;
        Ok(LevelDesc { entities })
    }
}

impl<'de> Deserialize<'de> for EntityDesc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        EntitySeed {
            ctx: &Ctx::default(),
            depth: 1,
        }
        .deserialize(deserializer)
    }
}

/// Reads an object key without allocating when it is one of `names`.
struct KeySeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = usize;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "one of the keys {:?}", self.0)
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
        self.0
            .iter()
            .position(|&n| n == key)
            .ok_or_else(|| E::unknown_field(key, self.0))
    }
}

const LEVEL_KEYS: &[&str] = &["entities"];
const ENTITY_KEYS: &[&str] = &["name", "components", "parent", "children"];

struct LevelSeed<'a, 's> {
    ctx: &'a Ctx,
    sink: &'a mut Sink<'s>,
}

impl<'de> DeserializeSeed<'de> for LevelSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for LevelSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a level object with an `entities` array")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = false;
        while let Some(k) = map.next_key_seed(KeySeed(LEVEL_KEYS))? {
            if seen {
                return Err(self.ctx.duplicate(LEVEL_KEYS[k]));
            }
            seen = true;
            map.next_value_seed(TopLevelSeed {
                ctx: self.ctx,
                sink: &mut *self.sink,
            })?;
        }
        Ok(())
    }
}

/// The top-level `entities` array: each entity goes to the sink.
struct TopLevelSeed<'a, 's> {
    ctx: &'a Ctx,
    sink: &'a mut Sink<'s>,
}

impl<'de> DeserializeSeed<'de> for TopLevelSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for TopLevelSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of entities")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut k = 0;
        while let Some(e) = seq.next_element_seed(EntitySeed {
            ctx: self.ctx,
            depth: 1,
        })? {
            (self.sink)(k, e).map_err(|err| {
                let message = err.to_string();
                self.ctx.issue.set(Some(Issue::Sink(err)));
                de::Error::custom(message)
            })?;
            k += 1;
        }
        Ok(())
    }
}

/// One entity at nesting level `depth` (top-level entities are level 1).
#[derive(Copy, Clone)]
struct EntitySeed<'a> {
    ctx: &'a Ctx,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for EntitySeed<'_> {
    type Value = EntityDesc;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<EntityDesc, D::Error> {
        if self.depth > MAX_NESTED_DEPTH {
            return Err(self.ctx.too_deep());
        }
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EntitySeed<'_> {
    type Value = EntityDesc;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an entity object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EntityDesc, A::Error> {
        let mut e = EntityDesc::default();
        let mut seen = [false; ENTITY_KEYS.len()];
        while let Some(k) = map.next_key_seed(KeySeed(ENTITY_KEYS))? {
            if std::mem::replace(&mut seen[k], true) {
                return Err(self.ctx.duplicate(ENTITY_KEYS[k]));
            }
            match k {
                0 => e.name = map.next_value()?,
                1 => e.components = map.next_value_seed(ObjectSeed(self.ctx))?,
                2 => e.parent = map.next_value()?,
                _ => {
                    e.children = map.next_value_seed(ChildrenSeed {
                        ctx: self.ctx,
                        depth: self.depth + 1,
                    })?
                }
            }
        }
        Ok(e)
    }
}

/// A `children` array whose entities are at level `depth`.
struct ChildrenSeed<'a> {
    ctx: &'a Ctx,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ChildrenSeed<'_> {
    type Value = Vec<EntityDesc>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ChildrenSeed<'_> {
    type Value = Vec<EntityDesc>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of child entities")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        let seed = EntitySeed {
            ctx: self.ctx,
            depth: self.depth,
        };
        while let Some(e) = seq.next_element_seed(seed)? {
            out.push(e);
        }
        Ok(out)
    }
}

/// A JSON object (the `components` map) whose keys must be distinct.
#[derive(Copy, Clone)]
struct ObjectSeed<'a>(&'a Ctx);

impl<'de> DeserializeSeed<'de> for ObjectSeed<'_> {
    type Value = Map<String, Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjectSeed<'_> {
    type Value = Map<String, Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        strict_map(self.0, map)
    }
}

fn strict_map<'de, A: MapAccess<'de>>(
    ctx: &Ctx,
    mut map: A,
) -> Result<Map<String, Value>, A::Error> {
    let mut out = Map::new();
    while let Some(key) = map.next_key::<String>()? {
        if out.contains_key(&key) {
            return Err(ctx.duplicate(&key));
        }
        let value = map.next_value_seed(ValueSeed(ctx))?;
        out.insert(key, value);
    }
    Ok(out)
}

/// Any JSON value, as a [`serde_json::Value`], refusing duplicate keys in
/// every object inside it.
#[derive(Copy, Clone)]
struct ValueSeed<'a>(&'a Ctx);

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        strict_map(self.0, map).map(Value::Object)
    }
}
