//! The world's checksum, item by item, so a mismatch can be traced.
//!
//! ggrs compares one number per frame; a sync test that only says "frame
//! 212 differs" leaves the hunt to the reader. So the checksum here is a
//! list of per-item hashes, one per registered component type (every
//! entity's id and the value's bytes, in query order: archetype, then row)
//! and one per registered piece of other state (a manager, say), folded into
//! the number ggrs sees. When two runs of a frame disagree, the first item
//! whose hash differs names the component, and its per-entity hashes name
//! the first entity.
//!
//! The hash is [`StateHasher`], FxHash-style over 64-bit words: each step is
//! a bijection of the state for a given word, so two inputs that differ in
//! exactly one word always hash differently. It depends only on the bytes
//! and their order, never on addresses, thread count or `HashMap` order, so
//! two processes running the same binary agree on it.

use doecs::{Component, Entity, World};

/// A fast, deterministic hash over 64-bit words (see the module docs).
#[derive(Clone, Debug)]
pub struct StateHasher(u64);

impl Default for StateHasher {
    fn default() -> Self {
        StateHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl StateHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    /// A fresh hasher.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one word.
    #[inline]
    pub fn word(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(Self::K);
    }

    /// Adds bytes, eight to a word (the last word zero-padded), then the
    /// length, so `[1]` and `[1, 0]` differ.
    #[inline]
    pub fn bytes(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            self.word(u64::from_le_bytes(a));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut a = [0u8; 8];
            a[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(a));
        }
        self.word(bytes.len() as u64);
    }

    /// Adds bytes like [`bytes`](Self::bytes), but four words at a time in
    /// four independent lanes (four multiply chains instead of one), the
    /// lanes then folded in: for long columns. One changed word still
    /// always changes the result (each lane is a bijection of its words).
    pub fn bytes_wide(&mut self, bytes: &[u8]) {
        let mut lanes = [Self::K, Self::K.rotate_left(16), Self::K.rotate_left(32), 1];
        let mut blocks = bytes.chunks_exact(32);
        for block in &mut blocks {
            for (lane, w) in lanes.iter_mut().zip(block.chunks_exact(8)) {
                let mut a = [0u8; 8];
                a.copy_from_slice(w);
                *lane = (lane.rotate_left(5) ^ u64::from_le_bytes(a)).wrapping_mul(Self::K);
            }
        }
        for lane in lanes {
            self.word(lane);
        }
        self.bytes(blocks.remainder());
        self.word(bytes.len() as u64);
    }

    /// Adds entity ids, four lanes at a time (see [`bytes_wide`](Self::bytes_wide)).
    pub fn entities(&mut self, es: &[Entity]) {
        let mut lanes = [Self::K, Self::K.rotate_left(16), Self::K.rotate_left(32), 1];
        let mut blocks = es.chunks_exact(4);
        for block in &mut blocks {
            for (lane, e) in lanes.iter_mut().zip(block) {
                *lane = (lane.rotate_left(5) ^ e.to_bits()).wrapping_mul(Self::K);
            }
        }
        for lane in lanes {
            self.word(lane);
        }
        for e in blocks.remainder() {
            self.word(e.to_bits());
        }
        self.word(es.len() as u64);
    }

    /// Adds the floats' bits, two to a word.
    #[inline]
    pub fn floats(&mut self, xs: &[f32]) {
        let mut pairs = xs.chunks_exact(2);
        for p in &mut pairs {
            self.word(u64::from(p[0].to_bits()) | u64::from(p[1].to_bits()) << 32);
        }
        for x in pairs.remainder() {
            self.word(u64::from(x.to_bits()));
        }
    }

    /// The state through a bijective finalizer (splitmix64's).
    pub fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Hashes one item of the world into a hasher.
pub type HashFn = fn(&World, &mut StateHasher);
/// Lists one item's per-entity hashes, in a fixed order, for diagnosis.
pub type EntityHashesFn = fn(&World, &mut Vec<(Entity, u64)>);

/// One checksummed item: a component type or another piece of state.
#[derive(Clone, Copy, Debug)]
pub struct Item {
    /// Its name in desync reports.
    pub name: &'static str,
    /// Its hash.
    pub hash: HashFn,
    /// Its per-entity hashes (empty for state that is not per entity).
    pub entities: EntityHashesFn,
}

/// The item for component `T`, hashed through its bytes, a column at a
/// time: the chunk's entity ids, then its values.
pub fn component_item<T: Component + bytemuck::NoUninit>() -> Item {
    fn hash<T: Component + bytemuck::NoUninit>(world: &World, h: &mut StateHasher) {
        let mut rows = 0u64;
        world
            .query::<(Entity, &T)>()
            .for_each_chunk(|(es, vs): (&[Entity], &[T])| {
                rows += es.len() as u64;
                h.entities(es);
                h.bytes_wide(bytemuck::cast_slice(vs));
            });
        h.word(rows);
    }
    fn entities<T: Component + bytemuck::NoUninit>(world: &World, out: &mut Vec<(Entity, u64)>) {
        out.clear();
        world.query::<(Entity, &T)>().iter().for_each(|(e, v)| {
            let mut h = StateHasher::new();
            h.bytes(bytemuck::bytes_of(v));
            out.push((e, h.finish()));
        });
    }
    Item {
        name: short_name(std::any::type_name::<T>()),
        hash: hash::<T>,
        entities: entities::<T>,
    }
}

/// The entity table: how many entities live, and which ids.
pub(crate) fn entities_item() -> Item {
    fn hash(world: &World, h: &mut StateHasher) {
        h.word(world.len() as u64);
    }
    fn entities(_: &World, out: &mut Vec<(Entity, u64)>) {
        out.clear();
    }
    Item {
        name: "entity count",
        hash,
        entities,
    }
}

/// `a::b::Position` → `Position` (generic arguments kept whole).
fn short_name(full: &'static str) -> &'static str {
    let head = full.split('<').next().unwrap_or(full);
    match head.rfind("::") {
        Some(i) => &full[i + 2..],
        None => full,
    }
}

/// Every item's hash into `out`, then their fold: the frame's checksum.
pub(crate) fn checksum(world: &World, items: &[Item], out: &mut Vec<u64>) -> u128 {
    out.clear();
    let mut all = StateHasher::new();
    for item in items {
        let mut h = StateHasher::new();
        (item.hash)(world, &mut h);
        let v = h.finish();
        out.push(v);
        all.word(v);
    }
    u128::from(all.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_word_changes_the_hash() {
        let mut a = StateHasher::new();
        a.bytes(&[1, 2, 3]);
        let mut b = StateHasher::new();
        b.bytes(&[1, 2, 4]);
        assert_ne!(a.finish(), b.finish());
        let mut c = StateHasher::new();
        c.bytes(&[1, 2, 3, 0]);
        assert_ne!(a.finish(), c.finish(), "length counts");
    }

    #[test]
    fn one_changed_word_changes_the_wide_hash() {
        let a: Vec<u8> = (0..200u8).collect();
        let wide = |b: &[u8]| {
            let mut h = StateHasher::new();
            h.bytes_wide(b);
            h.finish()
        };
        for i in [0, 5, 31, 32, 100, 199] {
            let mut b = a.clone();
            b[i] ^= 1;
            assert_ne!(wide(&a), wide(&b), "byte {i}");
        }
        assert_ne!(wide(&a), wide(&a[..199]));
    }

    #[test]
    fn names_are_short() {
        assert_eq!(short_name("a::b::Position"), "Position");
        assert_eq!(short_name("Position"), "Position");
        assert_eq!(short_name("a::Time<b::Fixed>"), "Time<b::Fixed>");
    }
}
