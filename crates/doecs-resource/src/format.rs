//! The on-disk layout of a compiled entity resource (the blob).
//!
//! The blob is the grouped layout of Bitsquid's "Building a Data-Oriented
//! Entity System" (part 4, after the pivot: data grouped by component type)
//! with a fixed header in front. Every integer is **little-endian**, nothing
//! is a pointer, and every section starts at an offset that is a multiple of
//! its alignment *relative to the start of the blob*, so a blob loaded at a
//! 16-byte aligned address (see [`crate::AlignedBytes`]) can be read in place:
//!
//! ```text
//! offset  size  field
//! 0       8     magic                 b"DOECSLVL"
//! 8       4     version               FORMAT_VERSION (2)
//! 12      4     flags                 0 (reserved, must be 0)
//! 16      8     total_length          length of the whole blob in bytes
//! 24      4     num_entities
//! 28      4     num_component_types
//! 32      4*n   parent_index[num_entities]   u32::MAX for a root; else < own index
//! ...           zero padding to a multiple of 16
//! then num_component_types blocks, each starting 16-aligned:
//!   +0    8     component_identifier  doecs::raw::name_hash(component name)
//!   +8    4     num_instances
//!   +12   4     instance_size         bytes per instance
//!   +16   4*k   entity_index[num_instances]  strictly increasing, < num_entities
//!   ...         zero padding to a multiple of 16
//!   ...   k*s   instance_data (num_instances * instance_size bytes), 16-aligned
//!   ...         zero padding to a multiple of 16
//! the last block ends exactly at total_length.
//! ```
//!
//! Two rules make spawning cheap and loading safe: a parent always comes
//! before its children (`parent_index[i] < i`), which rules out cycles with one
//! compare per entity; and each `entity_index` is strictly increasing, which
//! rules out duplicate instances and lets the spawner merge types in one pass.
//! Blocks are in spawn order. The size of a block follows from its three
//! fields, so an unknown type is skipped with a single jump.

/// The first eight bytes of every blob.
pub const MAGIC: [u8; 8] = *b"DOECSLVL";
/// The format version this crate writes and reads.
///
/// - 1: the first layout.
/// - 2: the same layout; DataComponent records inside it use the second
///   `doecs_data::Key` hash (short segments hashed as zero-padded words), so
///   a version-1 blob's records would not find their keys and is refused.
pub const FORMAT_VERSION: u32 = 2;
/// Bytes in the fixed header, before `parent_index`.
pub const HEADER_BYTES: usize = 32;
/// Bytes in a block's fixed header, before `entity_index`.
pub const BLOCK_HEADER_BYTES: usize = 16;
/// Alignment of every block and of every instance-data section, relative to
/// the blob's start.
pub const SECTION_ALIGN: usize = 16;
/// The `parent_index` value of a root entity.
pub const NO_PARENT: u32 = u32::MAX;

/// Largest variable-size instance the compiler writes (1 MiB).
pub const MAX_VARIABLE_INSTANCE: usize = 1 << 20;

/// The bytes of a variable-size instance slot: a little-endian `u32` length
/// followed by that many bytes (the rest of the slot is padding). `None` if
/// the length does not fit the slot.
///
/// ```
/// let slot = [3, 0, 0, 0, b'a', b'b', b'c', 0];
/// assert_eq!(doecs_resource::format::variable_instance(&slot), Some(&b"abc"[..]));
/// assert_eq!(doecs_resource::format::variable_instance(&slot[..6]), None);
/// ```
pub fn variable_instance(slot: &[u8]) -> Option<&[u8]> {
    let len = u32::from_le_bytes(slot.get(..4)?.try_into().ok()?) as usize;
    slot.get(4..4usize.checked_add(len)?)
}

/// Rounds `n` up to a multiple of [`SECTION_ALIGN`], or `None` on overflow.
#[inline]
pub(crate) fn align_up(n: u64) -> Option<u64> {
    let a = SECTION_ALIGN as u64;
    n.checked_add(a - 1).map(|v| v & !(a - 1))
}

/// A little-endian `u32` array read in place from blob bytes. Reading an
/// element is one load on little-endian hosts; no copy, no alignment needed.
#[derive(Copy, Clone, Debug)]
pub struct LeU32s<'a> {
    bytes: &'a [u8],
}

impl<'a> LeU32s<'a> {
    /// Wraps `bytes`, whose length must be a multiple of four (the tail is ignored).
    pub fn new(bytes: &'a [u8]) -> Self {
        LeU32s {
            bytes: &bytes[..bytes.len() / 4 * 4],
        }
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len() / 4
    }

    /// Whether there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Element `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u32> {
        let at = i.checked_mul(4)?;
        let b = self.bytes.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The last element, if any.
    #[inline]
    pub fn last(&self) -> Option<u32> {
        self.get(self.len().checked_sub(1)?)
    }

    /// All elements in order.
    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u32> + 'a {
        self.bytes
            .as_chunks::<4>()
            .0
            .iter()
            .map(|b| u32::from_le_bytes(*b))
    }

    /// The raw little-endian bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// Runs `scan`, one of the loader's passes over the blob, compiled with
/// AVX2 (8 lanes an instruction) when the CPU has it, and with the
/// baseline's SSE2 otherwise: the passes are written as or-reductions the
/// compiler vectorises, and AVX2 halves their instructions. Validation is
/// most of a level spawn's reading, so each pass goes through here.
#[inline(always)]
fn vectorised<R>(scan: impl FnOnce() -> R) -> R {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only
        // requirement of `with_avx2`.
        return unsafe { with_avx2(scan) };
    }
    scan()
}

/// Calls `scan` inside a function compiled for AVX2, so the scan's loop,
/// inlined here, is too.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx2")]
unsafe fn with_avx2<R>(scan: impl FnOnce() -> R) -> R {
    scan()
}

/// Whether any little-endian `f32` in `bytes` (a multiple of 4 long; a tail
/// is ignored) is NaN or infinite, i.e. has all exponent bits set.
///
/// This is the loader's one pass over instance data, and most of its cost.
pub(crate) fn any_non_finite_f32(bytes: &[u8]) -> bool {
    vectorised(
        #[inline(always)]
        || any_non_finite_f32_lanes(bytes),
    )
}

/// The scan itself. Adding one unit of exponent to a lane's exponent bits
/// carries into bit 31 exactly when they are all ones, so the test is a
/// mask, an add and an or per lane, with no compare: an or-reduction the
/// compiler vectorises (8 lanes an AVX2 instruction, 4 with SSE2).
#[inline(always)]
fn any_non_finite_f32_lanes(bytes: &[u8]) -> bool {
    const EXPONENT: u32 = 0x7f80_0000;
    const ONE_EXPONENT_UNIT: u32 = 0x0080_0000;
    const CARRY: u32 = 0x8000_0000;
    let (words, _) = bytes.as_chunks::<4>();
    let carries = words.iter().fold(0u32, |m, w| {
        m | ((u32::from_le_bytes(*w) & EXPONENT) + ONE_EXPONENT_UNIT)
    });
    carries & CARRY != 0
}

/// Whether any entry `p` of `parent_index` is a real parent (not
/// [`NO_PARENT`]) that does not come before its child (`p >= i`).
///
/// `p + 1` wraps the root marker to 0, so the test is `p + 1 > i`: one
/// compare per lane, or-reduced without branches.
pub(crate) fn any_parent_not_before(parent_index: LeU32s<'_>) -> bool {
    vectorised(
        #[inline(always)]
        || any_parent_not_before_lanes(parent_index),
    )
}

/// The pass of [`any_parent_not_before`].
#[inline(always)]
fn any_parent_not_before_lanes(parent_index: LeU32s<'_>) -> bool {
    let (words, _) = parent_index.as_bytes().as_chunks::<4>();
    let mut i = 0u32;
    let mut bad = 0u32;
    for w in words {
        bad |= u32::from(u32::from_le_bytes(*w).wrapping_add(1) > i);
        i = i.wrapping_add(1);
    }
    bad != 0
}

/// Whether `values` is strictly increasing, as one branch-free pass over
/// neighbouring pairs.
pub(crate) fn strictly_increasing(values: LeU32s<'_>) -> bool {
    vectorised(
        #[inline(always)]
        || strictly_increasing_lanes(values),
    )
}

/// The pass of [`strictly_increasing`].
#[inline(always)]
fn strictly_increasing_lanes(values: LeU32s<'_>) -> bool {
    let (words, _) = values.as_bytes().as_chunks::<4>();
    let Some(rest) = words.get(1..) else {
        return true;
    };
    !words.iter().zip(rest).fold(false, |bad, (x, y)| {
        bad | (u32::from_le_bytes(*y) <= u32::from_le_bytes(*x))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_scan_finds_every_lane() {
        let finite = [
            0.0f32,
            -0.0,
            1.0,
            -1.5,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            1e-45,
        ];
        let bad = [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
        for len in [0usize, 1, 15, 16, 17, 40] {
            let mut v: Vec<f32> = (0..len).map(|i| finite[i % finite.len()]).collect();
            let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
            assert!(!any_non_finite_f32(&bytes(&v)), "len {len}");
            for at in 0..len {
                for b in bad {
                    let keep = v[at];
                    v[at] = b;
                    assert!(any_non_finite_f32(&bytes(&v)), "len {len} at {at} {b}");
                    v[at] = keep;
                }
            }
        }
        // A NaN with payload bits only in the low half still counts.
        assert!(any_non_finite_f32(&0x7f80_0001u32.to_le_bytes()));
        // The portable lanes agree with the dispatched scan.
        let v: Vec<u8> = (0..40u32)
            .flat_map(|i| if i == 37 { f32::NAN } else { i as f32 }.to_le_bytes())
            .collect();
        assert!(any_non_finite_f32_lanes(&v) && any_non_finite_f32(&v));
        assert!(!any_non_finite_f32_lanes(&v[..36 * 4]) && !any_non_finite_f32(&v[..36 * 4]));
    }

    #[test]
    fn parent_scan_matches_the_rule() {
        let cases: [&[u32]; 6] = [
            &[],
            &[NO_PARENT],
            &[NO_PARENT, 0, 1, 0],
            &[0],
            &[NO_PARENT, 1],
            &[NO_PARENT, 0, NO_PARENT, 3],
        ];
        for c in cases {
            let bytes: Vec<u8> = c.iter().flat_map(|x| x.to_le_bytes()).collect();
            let expected = c
                .iter()
                .enumerate()
                .any(|(i, &p)| p != NO_PARENT && p as usize >= i);
            assert_eq!(
                any_parent_not_before(LeU32s::new(&bytes)),
                expected,
                "{c:?}"
            );
        }
    }

    #[test]
    fn increasing_scan_matches_windows() {
        let cases: [&[u32]; 6] = [&[], &[5], &[1, 2], &[2, 2], &[3, 1], &[0, 1, 2, 9, 9]];
        for c in cases {
            let bytes: Vec<u8> = c.iter().flat_map(|x| x.to_le_bytes()).collect();
            let expected = c.windows(2).all(|w| w[0] < w[1]);
            assert_eq!(strictly_increasing(LeU32s::new(&bytes)), expected, "{c:?}");
        }
    }

    #[test]
    fn align_up_rounds_and_refuses_overflow() {
        assert_eq!(align_up(0), Some(0));
        assert_eq!(align_up(1), Some(16));
        assert_eq!(align_up(32), Some(32));
        assert_eq!(align_up(u64::MAX), None);
    }

    #[test]
    fn le_u32s_reads_little_endian() {
        let bytes = [1, 0, 0, 0, 0, 1, 0, 0, 9];
        let a = LeU32s::new(&bytes);
        assert_eq!(a.len(), 2);
        assert_eq!(a.get(1), Some(256));
        assert_eq!(a.get(2), None);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![1, 256]);
    }
}
