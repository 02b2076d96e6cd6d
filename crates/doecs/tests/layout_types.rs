//! Unusual layouts: zero-sized components (with and without `Drop`, and
//! over-aligned), `#[repr(align(64))]` and `#[repr(align(128))]` components,
//! and rows larger than a chunk. Every reference handed out by `get`,
//! `get_mut`, every query form and every chunk slice is checked for alignment.

use doecs::{Entity, QueryState, World, WorldConfig};
use std::cell::Cell;

#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(64))]
struct Align64(u64);

#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(128))]
struct Align128([u8; 3]);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Marker;

#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(64))]
struct AlignedMarker;

thread_local! {
    static ZST_DROPS: Cell<usize> = const { Cell::new(0) };
}

/// A zero-sized type with a `Drop` that counts (per test thread).
struct ZstDrop;
impl Drop for ZstDrop {
    fn drop(&mut self) {
        ZST_DROPS.with(|d| d.set(d.get() + 1));
    }
}

fn zst_drops() -> usize {
    ZST_DROPS.with(|d| d.get())
}

fn aligned<T>(r: *const T) -> bool {
    (r as usize).is_multiple_of(std::mem::align_of::<T>())
}

fn slice_aligned<T>(s: &[T]) -> bool {
    aligned(s.as_ptr())
}

fn worlds() -> Vec<World> {
    [16 * 1024, 1000, 200, 1]
        .into_iter()
        .map(|chunk_bytes| {
            World::with_config(WorldConfig {
                chunk_bytes,
                min_free_indices: 0,
            })
        })
        .collect()
}

#[test]
fn overaligned_components_are_aligned_everywhere() {
    let n = if cfg!(miri) { 40 } else { 700 };
    for mut world in worlds() {
        // Odd-sized neighbours push column offsets around.
        let a: Vec<Entity> = (0..n)
            .map(|i| world.spawn((i as u8, Align64(i as u64), [i as u8; 3])))
            .collect();
        let b = world
            .spawn_batch((0..n).map(|i| (Align128([i as u8; 3]), Align64(i as u64 * 2), 1u16)));
        world.check_invariants();
        for (i, &e) in a.iter().enumerate() {
            let v = world.get::<Align64>(e).unwrap();
            assert!(aligned(v));
            assert_eq!(v.0, i as u64);
            let m = world.get_mut::<Align64>(e).unwrap();
            assert!(aligned(m));
            m.0 += 1;
        }
        for (i, &e) in b.iter().enumerate() {
            let v = world.get::<Align128>(e).unwrap();
            assert!(aligned(v));
            assert_eq!(v.0, [i as u8; 3]);
        }
        // Iterator, for_each, for_each_chunk, Query::get.
        let mut count = 0;
        for (x, y) in world.query::<(&Align64, Option<&Align128>)>().iter() {
            assert!(aligned(x));
            if let Some(y) = y {
                assert!(aligned(y));
            }
            count += 1;
        }
        assert_eq!(count, 2 * n);
        world.query_mut::<&mut Align64>().for_each(|x| {
            assert!(aligned(x));
            x.0 += 1;
        });
        let mut chunks = 0;
        world
            .query_mut::<(&mut Align64, &Align128)>()
            .for_each_chunk(|(xs, ys)| {
                assert!(slice_aligned(xs) && slice_aligned(ys));
                assert_eq!(xs.len(), ys.len());
                chunks += 1;
            });
        assert!(chunks >= 1);
        let mut q = QueryState::<&Align64>::new(&world);
        for &e in a.iter().chain(&b) {
            assert!(aligned(q.get(&world, e).unwrap()));
        }
        // Values survived the mutations: a got +1 twice, b +1 once.
        for (i, &e) in a.iter().enumerate() {
            assert_eq!(world.get::<Align64>(e).unwrap().0, i as u64 + 2);
        }
        for (i, &e) in b.iter().enumerate() {
            assert_eq!(world.get::<Align64>(e).unwrap().0, i as u64 * 2 + 1);
        }
        // Moves between archetypes keep alignment and values.
        for &e in a.iter().step_by(3) {
            world.insert_one(e, Align128([9; 3])).unwrap();
            assert!(aligned(world.get::<Align128>(e).unwrap()));
            assert!(aligned(world.get::<Align64>(e).unwrap()));
        }
        for &e in a.iter().step_by(6) {
            assert_eq!(world.remove_one::<Align128>(e), Ok(Align128([9; 3])));
            world.despawn(e).unwrap();
        }
        world.check_invariants();
        world
            .query::<(Entity, &Align64)>()
            .for_each(|(_, x)| assert!(aligned(x)));
    }
}

#[test]
fn zero_sized_components() {
    let n = if cfg!(miri) { 30 } else { 3000 };
    let before = zst_drops();
    {
        let mut world = World::with_config(WorldConfig {
            chunk_bytes: 512,
            min_free_indices: 0,
        });
        let es = world.spawn_batch((0..n).map(|i| (Marker, ZstDrop, i as u32)));
        let only_zst = world.spawn((Marker, AlignedMarker));
        let empty = world.spawn(());
        world.check_invariants();
        assert_eq!(zst_drops(), before);
        assert_eq!(world.get::<Marker>(only_zst), Ok(&Marker));
        assert!(aligned(world.get::<AlignedMarker>(only_zst).unwrap()));
        assert!(world.get::<Marker>(empty).is_err());
        assert_eq!(world.query::<&Marker>().iter().count(), n + 1);
        assert_eq!(world.query::<&ZstDrop>().iter().count(), n);
        let mut total = 0;
        world
            .query_mut::<(&Marker, &mut ZstDrop, &u32)>()
            .for_each_chunk(|(ms, zs, us)| {
                assert_eq!(ms.len(), zs.len());
                assert_eq!(zs.len(), us.len());
                total += us.len();
            });
        assert_eq!(total, n);
        // Moves carry ZSTs along without dropping them.
        for &e in es.iter().step_by(2) {
            world.insert_one(e, AlignedMarker).unwrap();
            assert!(aligned(world.get::<AlignedMarker>(e).unwrap()));
        }
        world.check_invariants();
        assert_eq!(zst_drops(), before);
        // Removing a ZST with Drop hands it back; despawn drops it once.
        let z = world.remove_one::<ZstDrop>(es[0]).unwrap();
        assert_eq!(zst_drops(), before);
        drop(z);
        assert_eq!(zst_drops(), before + 1);
        world.despawn(es[1]).unwrap();
        assert_eq!(zst_drops(), before + 2);
        // Overwrite drops the old value once.
        world.insert_one(es[2], ZstDrop).unwrap();
        assert_eq!(zst_drops(), before + 3);
        world.insert(es[3], (ZstDrop, Marker)).unwrap();
        assert_eq!(zst_drops(), before + 4);
        let zid = world.component_id::<ZstDrop>();
        world.remove_by_id(es[4], zid).unwrap();
        assert_eq!(zst_drops(), before + 5);
        world.check_invariants();
        for (i, &e) in es.iter().enumerate().skip(2) {
            assert_eq!(world.get::<u32>(e), Ok(&(i as u32)));
        }
    }
    // n values, plus the overwritten ones (2) spawned by insert.
    assert_eq!(zst_drops(), before + n + 2);
}

#[test]
fn rows_larger_than_a_chunk() {
    #[derive(Clone, PartialEq, Debug)]
    struct Big([u64; 700]);
    let mut world = World::with_config(WorldConfig {
        chunk_bytes: 1024,
        min_free_indices: 0,
    });
    let es: Vec<Entity> = (0..6)
        .map(|i| world.spawn((Big([i; 700]), i as u8)))
        .collect();
    let id = doecs::raw::location(&world, es[0]).unwrap().archetype;
    let arch = doecs::raw::archetypes(&world).get(id);
    assert_eq!(arch.chunk_rows(), 1);
    assert_eq!(arch.chunk_count(), 6);
    world.despawn(es[2]).unwrap();
    world.insert_one(es[3], Align64(3)).unwrap();
    world.check_invariants();
    for (i, &e) in es.iter().enumerate() {
        if i != 2 {
            assert_eq!(world.get::<Big>(e).unwrap().0[699], i as u64);
        }
    }
    assert!(aligned(world.get::<Align64>(es[3]).unwrap()));
}
