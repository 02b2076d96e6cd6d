//! Chunk layout: where the arrays of one archetype sit inside a chunk.
//!
//! A chunk is one contiguous buffer of (by default) 16 KiB, the size seed 002
//! picks to keep a chunk's working set within half an L1 cache: seed 001's "one
//! allocation, arrays pointing into it". Inside it the entity-id array comes
//! first, then one array per component, structure-of-arrays, each aligned for
//! its type. The capacity is the largest row count whose arrays fit. A row too
//! large for the configured size still gets a chunk of one row, so every type
//! can be stored. The buffer is aligned to at least 64 bytes (a cache line), and
//! to the largest component alignment above that. Where the buffers sit in
//! memory is the [`super::pool`]'s business: it carves them, in order, from a
//! few large blocks, so that consecutive chunks are also consecutive in memory.

use crate::entity::Entity;
use std::alloc::Layout;

/// Default chunk size in bytes.
pub const DEFAULT_CHUNK_BYTES: usize = 16 * 1024;

/// Minimum alignment of a chunk: one cache line.
const CHUNK_MIN_ALIGN: usize = 64;

/// The placement of an archetype's arrays in a chunk.
///
/// # Invariants
/// - `column_offsets[i] + capacity * column_sizes[i] <= alloc.size()` and each
///   offset is a multiple of that column's alignment, which divides `alloc.align()`.
/// - The entity array sits at offset 0 and holds `capacity` entities.
/// - `capacity >= 1`.
#[derive(Clone, Debug)]
pub struct ChunkLayout {
    capacity: u32,
    alloc: Layout,
    column_offsets: Box<[usize]>,
}

impl ChunkLayout {
    /// Places `columns` (in column order) in chunks of about `chunk_bytes`.
    ///
    /// # Panics
    /// If one row's arrays cannot be laid out in memory at all (sizes overflowing `isize`).
    pub fn new(chunk_bytes: usize, columns: &[Layout]) -> Self {
        let align = columns.iter().map(Layout::align).fold(
            CHUNK_MIN_ALIGN.max(std::mem::align_of::<Entity>()),
            usize::max,
        );
        let row_bytes: usize =
            std::mem::size_of::<Entity>() + columns.iter().map(Layout::size).sum::<usize>();
        let mut capacity = (chunk_bytes / row_bytes).clamp(1, u32::MAX as usize);
        loop {
            let (offsets, total) = Self::place(capacity, columns)
                .expect("doecs: a component row is too large to lay out");
            if total <= chunk_bytes || capacity == 1 {
                let alloc = Layout::from_size_align(total.max(1), align)
                    .expect("doecs: chunk layout overflow");
                return ChunkLayout {
                    capacity: capacity as u32,
                    alloc,
                    column_offsets: offsets.into_boxed_slice(),
                };
            }
            // Padding pushed us over: shrink by the overshoot, at least one row.
            let over = total - chunk_bytes;
            capacity -= (over / row_bytes).max(1).min(capacity - 1);
        }
    }

    fn place(capacity: usize, columns: &[Layout]) -> Option<(Vec<usize>, usize)> {
        let mut offset = std::mem::size_of::<Entity>().checked_mul(capacity)?;
        let mut offsets = Vec::with_capacity(columns.len());
        for column in columns {
            offset = offset.checked_next_multiple_of(column.align())?;
            offsets.push(offset);
            offset = offset.checked_add(column.size().checked_mul(capacity)?)?;
        }
        (offset <= isize::MAX as usize).then_some((offsets, offset))
    }

    /// Rows per chunk.
    #[inline]
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The layout of one chunk allocation.
    #[inline]
    pub fn alloc_layout(&self) -> Layout {
        self.alloc
    }

    /// Byte offsets of every column from the chunk start, in column order.
    #[inline]
    pub fn column_offsets(&self) -> &[usize] {
        &self.column_offsets
    }

    /// Byte offset of column `column` from the chunk start.
    #[inline]
    pub fn column_offset(&self, column: usize) -> usize {
        self.column_offsets[column]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_in_chunk_and_aligns_columns() {
        let cols = [
            Layout::new::<u8>(),
            Layout::new::<[f32; 3]>(),
            Layout::new::<f64>(),
        ];
        let l = ChunkLayout::new(DEFAULT_CHUNK_BYTES, &cols);
        assert!(l.alloc_layout().size() <= DEFAULT_CHUNK_BYTES);
        // 29 bytes a row (8 entity + 1 + 12 + 8): 564 rows fit before padding.
        assert!(
            l.capacity() >= 560 && l.capacity() <= 564,
            "{}",
            l.capacity()
        );
        for (i, c) in cols.iter().enumerate() {
            assert_eq!(l.column_offset(i) % c.align(), 0);
        }
        assert_eq!(l.alloc_layout().align(), 64);
    }

    #[test]
    fn huge_row_gets_one_row_chunk() {
        let cols = [Layout::new::<[u8; 40_000]>()];
        let l = ChunkLayout::new(DEFAULT_CHUNK_BYTES, &cols);
        assert_eq!(l.capacity(), 1);
        assert!(l.alloc_layout().size() >= 40_008);
    }

    #[test]
    fn zero_sized_and_overaligned() {
        #[repr(align(128))]
        struct Big;
        let cols = [Layout::new::<()>(), Layout::new::<Big>()];
        let l = ChunkLayout::new(DEFAULT_CHUNK_BYTES, &cols);
        assert_eq!(l.alloc_layout().align(), 128);
        assert_eq!(l.capacity() as usize, DEFAULT_CHUNK_BYTES / 8);
    }
}
