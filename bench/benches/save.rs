//! save: write a whole world to bytes and read it back, in doecs's binary
//! format (postcard, plain columns as raw memory) and JSON, beside hecs's
//! column serialization (`hecs::serialize::column`, into postcard) in the
//! same run.
//!
//! The world holds n = 100,000 entities (10,000 in the smoke run) of four
//! `Copy` components: position and velocity (three `f32`s each), hit points
//! (`u32`) and mass (`f32`), 32 bytes per entity plus its id. Throughput is
//! reported in bytes of the file written or read, so criterion prints MB/s;
//! the sizes of the files differ between formats (printed once).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use doecs_bench::*;
use doecs_registry::{ComponentRegistry, SaveFormat, WorldSaveExt};
use serde::{Deserialize, Serialize};
use std::hint::black_box;

macro_rules! saved_components {
    ($($name:ident($ty:ty);)*) => {$(
        #[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize, bytemuck::Pod, bytemuck::Zeroable)]
        #[repr(transparent)]
        struct $name($ty);
    )*};
}

saved_components! {
    SPos([f32; 3]);
    SVel([f32; 3]);
    SHp(u32);
    SMass(f32);
}

fn bundle(i: usize) -> (SPos, SVel, SHp, SMass) {
    let f = i as f32;
    (
        SPos([f, f * 0.5, -f]),
        SVel([1.0, 0.0, f * 0.01]),
        SHp(i as u32),
        SMass(1.0 + f * 1e-3),
    )
}

fn registry() -> ComponentRegistry {
    let mut r = ComponentRegistry::new();
    r.register::<SPos>("pos").plain();
    r.register::<SVel>("vel").plain();
    r.register::<SHp>("hp").plain();
    r.register::<SMass>("mass").plain();
    r
}

// --- hecs's column serialization, with the context its docs describe. ---

#[derive(Serialize, Deserialize, Clone, Copy)]
enum HecsId {
    Pos,
    Vel,
    Hp,
    Mass,
}

struct HecsSer;

impl hecs::serialize::column::SerializeContext for HecsSer {
    fn component_count(&self, archetype: &hecs::Archetype) -> usize {
        [
            archetype.has::<SPos>(),
            archetype.has::<SVel>(),
            archetype.has::<SHp>(),
            archetype.has::<SMass>(),
        ]
        .iter()
        .filter(|&&h| h)
        .count()
    }
    fn serialize_component_ids<S: serde::ser::SerializeTuple>(
        &mut self,
        archetype: &hecs::Archetype,
        mut out: S,
    ) -> Result<S::Ok, S::Error> {
        use hecs::serialize::column::try_serialize_id;
        try_serialize_id::<SPos, _, _>(archetype, &HecsId::Pos, &mut out)?;
        try_serialize_id::<SVel, _, _>(archetype, &HecsId::Vel, &mut out)?;
        try_serialize_id::<SHp, _, _>(archetype, &HecsId::Hp, &mut out)?;
        try_serialize_id::<SMass, _, _>(archetype, &HecsId::Mass, &mut out)?;
        out.end()
    }
    fn serialize_components<S: serde::ser::SerializeTuple>(
        &mut self,
        archetype: &hecs::Archetype,
        mut out: S,
    ) -> Result<S::Ok, S::Error> {
        use hecs::serialize::column::try_serialize;
        try_serialize::<SPos, _>(archetype, &mut out)?;
        try_serialize::<SVel, _>(archetype, &mut out)?;
        try_serialize::<SHp, _>(archetype, &mut out)?;
        try_serialize::<SMass, _>(archetype, &mut out)?;
        out.end()
    }
}

#[derive(Default)]
struct HecsDe {
    ids: Vec<HecsId>,
}

impl hecs::serialize::column::DeserializeContext for HecsDe {
    fn deserialize_component_ids<'de, A: serde::de::SeqAccess<'de>>(
        &mut self,
        mut seq: A,
    ) -> Result<hecs::ColumnBatchType, A::Error> {
        self.ids.clear();
        let mut batch = hecs::ColumnBatchType::new();
        while let Some(id) = seq.next_element::<HecsId>()? {
            match id {
                HecsId::Pos => batch.add::<SPos>(),
                HecsId::Vel => batch.add::<SVel>(),
                HecsId::Hp => batch.add::<SHp>(),
                HecsId::Mass => batch.add::<SMass>(),
            };
            self.ids.push(id);
        }
        Ok(batch)
    }
    fn deserialize_components<'de, A: serde::de::SeqAccess<'de>>(
        &mut self,
        entity_count: u32,
        mut seq: A,
        batch: &mut hecs::ColumnBatchBuilder,
    ) -> Result<(), A::Error> {
        use hecs::serialize::column::deserialize_column;
        for id in &self.ids {
            match id {
                HecsId::Pos => deserialize_column::<SPos, _>(entity_count, &mut seq, batch)?,
                HecsId::Vel => deserialize_column::<SVel, _>(entity_count, &mut seq, batch)?,
                HecsId::Hp => deserialize_column::<SHp, _>(entity_count, &mut seq, batch)?,
                HecsId::Mass => deserialize_column::<SMass, _>(entity_count, &mut seq, batch)?,
            }
        }
        Ok(())
    }
}

/// hecs's world as a serde value (the column serializer wants `&mut` context).
struct HecsWorld<'w>(&'w hecs::World);

impl Serialize for HecsWorld<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        hecs::serialize::column::serialize(self.0, &mut HecsSer, s)
    }
}

fn hecs_load(bytes: &[u8]) -> hecs::World {
    let mut de = postcard::Deserializer::from_bytes(bytes);
    hecs::serialize::column::deserialize(&mut HecsDe::default(), &mut de).expect("valid")
}

fn save(c: &mut Criterion) {
    let n = sized(100_000);
    let registry = registry();
    let mut world = doecs::World::new();
    world.spawn_batch((0..n).map(bundle));
    let mut hworld = hecs::World::new();
    hworld.spawn_batch((0..n).map(bundle));

    let mut binary = Vec::new();
    world
        .save(&mut binary, SaveFormat::Binary, &registry)
        .unwrap();
    let mut json = Vec::new();
    world.save(&mut json, SaveFormat::Json, &registry).unwrap();
    let hecs_bytes = postcard::to_stdvec(&HecsWorld(&hworld)).unwrap();
    assert_eq!(hecs_load(&hecs_bytes).len() as usize, n);
    println!(
        "save {n} entities x 4 components: doecs binary {} bytes, doecs json {} bytes, hecs postcard {} bytes",
        binary.len(),
        json.len(),
        hecs_bytes.len()
    );

    let mut g = group(c, &format!("save_{n}"));
    g.throughput(Throughput::Bytes(binary.len() as u64));
    let mut out = Vec::with_capacity(binary.len());
    g.bench_function("doecs_binary_save", |b| {
        b.iter(|| {
            out.clear();
            world.save(&mut out, SaveFormat::Binary, &registry).unwrap();
            black_box(out.len())
        })
    });
    g.bench_function("doecs_binary_load", |b| {
        b.iter(|| {
            doecs::World::load(black_box(&binary[..]), &registry)
                .unwrap()
                .len()
        })
    });
    g.throughput(Throughput::Bytes(json.len() as u64));
    let mut out = Vec::with_capacity(json.len());
    g.bench_function("doecs_json_save", |b| {
        b.iter(|| {
            out.clear();
            world.save(&mut out, SaveFormat::Json, &registry).unwrap();
            black_box(out.len())
        })
    });
    g.bench_function("doecs_json_load", |b| {
        b.iter(|| {
            doecs::World::load(black_box(&json[..]), &registry)
                .unwrap()
                .len()
        })
    });
    g.throughput(Throughput::Bytes(hecs_bytes.len() as u64));
    let mut out = Vec::with_capacity(hecs_bytes.len());
    g.bench_function("hecs_postcard_save", |b| {
        b.iter(|| {
            out.clear();
            out = postcard::to_extend(&HecsWorld(&hworld), std::mem::take(&mut out)).unwrap();
            black_box(out.len())
        })
    });
    g.bench_function("hecs_postcard_load", |b| {
        b.iter(|| hecs_load(black_box(&hecs_bytes)).len())
    });
    g.finish();
}

criterion_group!(benches, save);
criterion_main!(benches);
