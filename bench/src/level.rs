//! level_spawn's level and its hand-written floor, shared by the criterion
//! bench (`benches/level_spawn.rs`) and the instruction counts
//! (`benches/instructions.rs`): a level of `n` entities (roots with 9
//! children each; a local transform, `Position` and `Velocity` per entity)
//! as doecs-resource's compiled blob and as plain arrays, and the floor
//! for what doecs keeps after spawning it, hierarchy included, written by
//! hand, with and without the checks a loader of untrusted bytes makes.

use crate::{LocalTransform, Position, Vec3, Velocity};
use doecs_resource::transform::{encode_transform, TRANSFORM_SIZE};
use doecs_resource::{standard_spawner, AlignedBytes, BlobBuilder, BlobView, Spawner, NO_PARENT};
use glam::Affine3A;

/// The level's blob and the same data as arrays.
pub struct Level {
    /// The compiled blob, aligned so transforms are read in place.
    pub blob: AlignedBytes,
    /// Each entity's local transform.
    pub locals: Vec<LocalTransform>,
    /// Each entity's `Position`.
    pub pos: Vec<Position>,
    /// Each entity's `Velocity`.
    pub vel: Vec<Velocity>,
}

impl Level {
    /// A level of `n` entities (a multiple of 10): every tenth is a root,
    /// the nine after it its children.
    pub fn new(n: usize) -> Self {
        let parents: Vec<u32> = (0..n as u32)
            .map(|i| if i % 10 == 0 { NO_PARENT } else { i - i % 10 })
            .collect();
        let locals: Vec<LocalTransform> = (0..n)
            .map(|i| LocalTransform(Affine3A::from_translation(Vec3::new(i as f32, 1.0, 0.0))))
            .collect();
        let pos: Vec<Position> = (0..n)
            .map(|i| Position(Vec3::new(i as f32, 0.0, 1.0)))
            .collect();
        let vel: Vec<Velocity> = (0..n)
            .map(|i| Velocity(Vec3::new(0.0, i as f32, 2.0)))
            .collect();
        let le = |v: &Vec3| v.to_array().into_iter().flat_map(f32::to_le_bytes);
        let mut b = BlobBuilder::new(parents);
        b.push_dense(
            doecs::raw::name_hash("transform"),
            TRANSFORM_SIZE as u32,
            locals.iter().flat_map(|l| encode_transform(&l.0)).collect(),
        );
        b.push_dense(
            doecs::raw::name_hash("position"),
            12,
            pos.iter().flat_map(|p| le(&p.0)).collect(),
        );
        b.push_dense(
            doecs::raw::name_hash("velocity"),
            12,
            vel.iter().flat_map(|v| le(&v.0)).collect(),
        );
        Level {
            blob: AlignedBytes::from_slice(&b.to_bytes()),
            locals,
            pos,
            vel,
        }
    }

    /// The spawner doecs uses for this level: transforms, `Position`,
    /// `Velocity`.
    pub fn spawner() -> Spawner {
        let mut spawner = standard_spawner();
        spawner.register_plain::<Position>("position").unwrap();
        spawner.register_plain::<Velocity>("velocity").unwrap();
        spawner
    }

    /// What the hand-written floor reads, all of it the blob's own bytes:
    /// the plain columns (all but the transforms), the local transforms
    /// and the parent of each entity (an index into the level).
    pub fn floor_input(&self) -> FloorInput<'_> {
        let view = BlobView::parse(&self.blob).unwrap();
        FloorInput {
            checks: BlobSections {
                parent_index: view.parent_index().as_bytes(),
                entity_indices: view
                    .blocks()
                    .iter()
                    .map(|b| b.entity_index.as_bytes())
                    .collect(),
                // The transforms: `Position` and `Velocity` are registered
                // unchecked, so doecs checks no word of theirs either.
                finite: view.blocks()[0].data,
            },
            plain: view.blocks()[1..].iter().map(|b| b.data).collect(),
            // Read in place, as doecs reads them (the blob is aligned and
            // little-endian on the machines measured).
            locals: bytemuck::cast_slice(view.blocks()[0].data),
            parents: bytemuck::cast_slice(view.parent_index().as_bytes()),
        }
    }

    /// The blob's component bytes, all blocks: what the memcpy baseline
    /// copies.
    pub fn component_bytes(&self) -> Vec<&[u8]> {
        let view = BlobView::parse(&self.blob).unwrap();
        view.blocks().iter().map(|b| b.data).collect()
    }
}

/// The input of [`HandLayout::fill`].
pub struct FloorInput<'a> {
    /// The blob's sections that a loader of untrusted bytes must check
    /// before it writes anything ([`BlobSections::check`]).
    pub checks: BlobSections<'a>,
    /// The plain columns' bytes.
    pub plain: Vec<&'a [u8]>,
    /// Local transforms: the blob's transform block, read in place.
    pub locals: &'a [Affine3A],
    /// Each entity's parent, an earlier index, or [`NO_PARENT`]: the
    /// blob's parent index, read in place.
    pub parents: &'a [u32],
}

impl FloorInput<'_> {
    /// The bytes of the plain columns.
    pub fn plain_bytes(&self) -> usize {
        self.plain.iter().map(|c| c.len()).sum()
    }
}

/// The parts of a level blob that its checks read, located (the header's
/// counts and offsets are O(1) to check, so they are left out): the parent
/// index, each block's entity index, and the instance data of the blocks
/// whose type is checked, all little-endian `u32` and `f32` words.
pub struct BlobSections<'a> {
    /// `parent_index[num_entities]`.
    pub parent_index: &'a [u8],
    /// Each block's `entity_index`.
    pub entity_indices: Vec<&'a [u8]>,
    /// The instance data that must hold no NaN or infinity: the
    /// transforms (doecs's transform spawner refuses them).
    pub finite: &'a [u8],
}

impl BlobSections<'_> {
    /// The checks a loader of untrusted bytes makes before it writes
    /// anything, written by hand as or-reductions over the words: every
    /// parent comes before its child, every block's entity index is
    /// strictly increasing and in range, and no transform word is a NaN or
    /// an infinity. Compiled with AVX2 when the CPU has it, as doecs's are.
    #[inline(never)]
    pub fn check(&self) -> bool {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { self.check_avx2() };
        }
        self.check_words()
    }

    /// [`check_words`](Self::check_words) compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn check_avx2(&self) -> bool {
        self.check_words()
    }

    #[inline(always)]
    fn check_words(&self) -> bool {
        let n = (self.parent_index.len() / 4) as u32;
        let (mut bad, mut carries) = (0u32, 0u32);
        // A parent comes before its child: `p + 1 <= i` (the root marker
        // wraps to 0).
        let mut i = 0u32;
        for w in self.parent_index.as_chunks::<4>().0 {
            bad |= u32::from(u32::from_le_bytes(*w).wrapping_add(1) > i);
            i = i.wrapping_add(1);
        }
        for entity_index in &self.entity_indices {
            let (index, _) = entity_index.as_chunks::<4>();
            if let (Some(rest), Some(last)) = (index.get(1..), index.last()) {
                for (x, y) in index.iter().zip(rest) {
                    bad |= u32::from(u32::from_le_bytes(*y) <= u32::from_le_bytes(*x));
                }
                bad |= u32::from(u32::from_le_bytes(*last) >= n);
            }
        }
        // All exponent bits set (NaN or infinite) is the one case where
        // adding one unit of exponent carries into bit 31.
        for w in self.finite.as_chunks::<4>().0 {
            carries |= (u32::from_le_bytes(*w) & 0x7f80_0000) + 0x0080_0000;
        }
        bad == 0 && carries & 0x8000_0000 == 0
    }
}

/// One `ChildOf` row as doecs stores it: source, target, next pair of the
/// source, previous and next pair of the target (ids + 1, 0 for none).
#[derive(Clone, Copy, Default)]
#[allow(dead_code)]
struct HandRow {
    source: [u32; 2],
    target: [u32; 2],
    next_out: u32,
    prev_in: u32,
    next_in: u32,
}

/// The buffers of the hand-written floor (see its bench above).
pub struct HandLayout {
    slots: Vec<[u32; 3]>,
    chunk_entities: Vec<u64>,
    plain: Vec<u8>,
    local: Vec<Affine3A>,
    world: Vec<Affine3A>,
    entity: Vec<u64>,
    parent: Vec<u32>,
    first_child: Vec<u32>,
    next_sibling: Vec<u32>,
    prev_sibling: Vec<u32>,
    flags: Vec<u8>,
    idle: Vec<u8>,
    map: Vec<u32>,
    rows: Vec<HandRow>,
    heads: Vec<[u32; 2]>,
    last_child: Vec<u32>,
}

impl HandLayout {
    /// Buffers with room for `n` entities and `bytes` of plain columns,
    /// their pages touched here, outside the timing: the floor measures
    /// the writes, not the kernel's first-touch page faults (which depend
    /// on the allocator's state between iterations, not on the layout).
    pub fn with_capacity(n: usize, bytes: usize) -> Self {
        fn touched<T: Clone + Default>(n: usize) -> Vec<T> {
            let mut v = Vec::with_capacity(n);
            v.resize(n, T::default());
            v.clear();
            v
        }
        HandLayout {
            slots: touched(n),
            chunk_entities: touched(n),
            plain: touched(bytes),
            local: touched(n),
            world: touched(n),
            entity: touched(n),
            parent: touched(n),
            first_child: touched(n),
            next_sibling: touched(n),
            prev_sibling: touched(n),
            flags: touched(n),
            idle: touched(n),
            map: touched(n),
            rows: touched(n),
            heads: touched(n),
            last_child: touched(n),
        }
    }

    /// [`fill`](Self::fill) after the checks a loader of untrusted bytes
    /// makes ([`BlobSections::check`]): the floor for a loader that refuses
    /// bad blobs, as doecs does. Returns whether the blob passed (and was
    /// written).
    pub fn fill_checked(&mut self, input: &FloorInput<'_>) -> bool {
        let ok = input.checks.check();
        if ok {
            self.fill(input);
        }
        ok
    }

    /// Writes the level into the buffers, as doecs lays it out.
    pub fn fill(&mut self, input: &FloorInput<'_>) {
        self.fill_entities_and_plain(&input.plain, input.locals.len());
        self.fill_child_of(input.parents);
        self.fill_transforms(input.locals, input.parents);
    }

    /// Entity slots, the plain columns and their entity column. Its own
    /// function (as are the two phases after it) so a profile shows each.
    #[inline(never)]
    fn fill_entities_and_plain(&mut self, plain: &[&[u8]], n: usize) {
        for k in 0..n as u32 {
            self.slots.push([0, 1, k]);
            self.chunk_entities.push(k as u64);
        }
        for column in plain {
            self.plain.extend_from_slice(column);
        }
    }

    /// `ChildOf` rows with the per-index list heads.
    #[inline(never)]
    fn fill_child_of(&mut self, parents: &[u32]) {
        let n = parents.len();
        // `ChildOf` rows, one run of consecutive siblings at a time: the
        // run's rows are written already linked into a circular list, then
        // spliced onto the parent's list (ids are rows + 1).
        self.heads.resize(n, [0, 0]);
        let mut k = 0;
        while k < n {
            let p = parents[k];
            if p == NO_PARENT {
                k += 1;
                continue;
            }
            let end = k + 1 + parents[k + 1..].iter().take_while(|&&q| q == p).count();
            let start = self.rows.len() as u32 + 1;
            let last = start + (end - k) as u32 - 1;
            self.rows
                .extend((k..end).zip(start..).map(|(c, id)| HandRow {
                    source: [c as u32, 0],
                    target: [p, 0],
                    next_out: 0,
                    prev_in: if id == start { last } else { id - 1 },
                    next_in: if id == last { start } else { id + 1 },
                }));
            for (c, id) in (k..end).zip(start..) {
                self.heads[c][0] = id;
            }
            let first = self.heads[p as usize][1];
            if first == 0 {
                self.heads[p as usize][1] = start;
            } else {
                let old_last = self.rows[first as usize - 1].prev_in;
                self.rows[start as usize - 1].prev_in = old_last;
                self.rows[last as usize - 1].next_in = first;
                self.rows[old_last as usize - 1].next_in = start;
                self.rows[first as usize - 1].prev_in = last;
            }
            k = end;
        }
    }

    /// The transform manager's columns and entity map, column by column:
    /// the fills, the entity map and the sibling links each in a pass of
    /// their own, then each world transform beside its local one, so the
    /// locals are read once. (One loop writing all ten columns per entity
    /// measured about 14% slower: it keeps more store streams open at once
    /// than the core has write-combining buffers for.)
    #[inline(never)]
    fn fill_transforms(&mut self, locals: &[Affine3A], parents: &[u32]) {
        let n = locals.len();
        let parents = &parents[..n];
        self.entity.extend(0..n as u64);
        self.map.extend(0..n as u32);
        self.parent.extend_from_slice(parents);
        self.flags.resize(n, 0);
        self.idle.resize(n, 0);
        self.first_child.resize(n, u32::MAX);
        self.next_sibling.resize(n, u32::MAX);
        // Each child is appended to its parent's list, in order.
        let last_child = &mut self.last_child;
        last_child.clear();
        last_child.resize(n, u32::MAX);
        let (first_child, next_sibling) = (&mut self.first_child[..], &mut self.next_sibling[..]);
        let prev_sibling = &mut self.prev_sibling.spare_capacity_mut()[..n];
        for (k, (&p, prev_sibling)) in parents.iter().zip(prev_sibling).enumerate() {
            let prev = if p == NO_PARENT {
                u32::MAX
            } else {
                let prev = std::mem::replace(&mut last_child[p as usize], k as u32);
                if prev == u32::MAX {
                    first_child[p as usize] = k as u32;
                } else {
                    next_sibling[prev as usize] = k as u32;
                }
                prev
            };
            prev_sibling.write(prev);
        }
        let local = &mut self.local.spare_capacity_mut()[..n];
        let world = &mut self.world.spare_capacity_mut()[..n];
        for k in 0..n {
            let l = locals[k];
            let p = parents[k];
            let w = if p == NO_PARENT {
                l
            } else {
                // SAFETY: `p < k` (a level lists parents first), so slot
                // `p` was written in an earlier iteration.
                unsafe { world[p as usize].assume_init_read() * l }
            };
            local[k].write(l);
            world[k].write(w);
        }
        // SAFETY: the loops above wrote slots 0..n of each column.
        unsafe {
            self.prev_sibling.set_len(n);
            self.local.set_len(n);
            self.world.set_len(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// The floor writes what doecs keeps: a level spawned by doecs and
    /// written by the floor has the same transform slots (local, world,
    /// parent, children in order) and the same plain columns, so the floor
    /// is a floor for the same work.
    #[test]
    fn the_floor_writes_what_doecs_keeps() {
        let n = 50;
        let level = Level::new(n);
        let input = level.floor_input();
        let mut floor = HandLayout::with_capacity(n, input.plain_bytes());
        assert!(floor.fill_checked(&input));
        let mut world = doecs::World::new();
        let out = Level::spawner()
            .spawn(&mut world, &level.blob, Default::default())
            .unwrap();
        let tm = world
            .manager::<doecs_transform::TransformManager>()
            .unwrap();
        let slot = |k: u32| (k != u32::MAX).then_some(k);
        for (k, &e) in out.entities.iter().enumerate() {
            let inst = tm.lookup(e).unwrap();
            assert_eq!(inst.index() as usize, k, "slot of entity {k}");
            assert_eq!(floor.map[e.index() as usize] as usize, k);
            assert_eq!(tm.local(inst), Some(floor.local[k]));
            assert_eq!(tm.world(inst), Some(floor.world[k]));
            assert_eq!(tm.parent(inst).map(|p| p.index()), slot(floor.parent[k]));
            let children: Vec<u32> = tm.children(inst).map(|c| c.index()).collect();
            let mut chain = Vec::new();
            let mut c = slot(floor.first_child[k]);
            while let Some(i) = c {
                chain.push(i);
                c = slot(floor.next_sibling[i as usize]);
            }
            assert_eq!(children, chain, "children of {k}");
            let bytes = |v: &Vec3| bytemuck::bytes_of(v).to_vec();
            let (pos, vel) = floor.plain.split_at(12 * n);
            assert_eq!(
                bytes(&world.get::<Position>(e).unwrap().0),
                pos[12 * k..12 * k + 12]
            );
            assert_eq!(
                bytes(&world.get::<Velocity>(e).unwrap().0),
                vel[12 * k..12 * k + 12]
            );
        }
        assert_eq!(floor.rows.len(), n - n / 10, "one ChildOf row per child");
    }

    /// The checked floor checks for real: a level passes, and each kind of
    /// bad word anywhere in it is refused (otherwise its figure would be
    /// the unchecked floor's under another name).
    #[test]
    fn the_checked_floor_refuses_each_bad_word() {
        let level = Level::new(30);
        assert!(level.floor_input().checks.check(), "a good level passes");
        let parents = words(&[NO_PARENT, 0, 0, NO_PARENT, 3]);
        let index = words(&[0, 1, 2, 3, 4]);
        let data = words(&[1.0f32.to_bits(), 0, 2.5f32.to_bits(), 7, 9]);
        let sections = |parents: &[u8], index: &[u8], data: &[u8]| {
            let s = BlobSections {
                parent_index: parents,
                entity_indices: vec![index],
                finite: data,
            };
            s.check()
        };
        assert!(sections(&parents, &index, &data));
        for (at, bad) in [(1, 1), (2, 5), (4, 4)] {
            let mut p = parents.clone();
            p[4 * at..4 * at + 4].copy_from_slice(&u32::to_le_bytes(bad));
            assert!(!sections(&p, &index, &data), "parent {bad} of {at}");
        }
        for bad in [[0, 1, 1, 3, 4], [0, 2, 1, 3, 4], [0, 1, 2, 3, 5]] {
            assert!(!sections(&parents, &words(&bad), &data), "index {bad:?}");
        }
        for at in 0..5 {
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                let mut d = data.clone();
                d[4 * at..4 * at + 4].copy_from_slice(&bad.to_le_bytes());
                assert!(!sections(&parents, &index, &d), "{bad} at {at}");
            }
        }
    }
}
