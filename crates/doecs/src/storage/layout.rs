//! The chunk: how many rows one chunk of an archetype holds.
//!
//! Jungwan Byun's "Data-oriented Entity Component System" sizes a chunk so that its rows' data fills 16 KiB, half of a
//! typical L1 data cache: a system working on one chunk finds everything it
//! touches in L1. doecs keeps that chunk as the unit systems see: the slices
//! `for_each_chunk` hands out, the pieces `par_for_each` splits work into,
//! and (with change detection) the granularity of change versions. The
//! memory behind the chunks is laid out for streaming instead: each column
//! of an archetype is one contiguous array (see `super::column`), and chunk
//! `k` is rows `k * rows .. (k + 1) * rows` of every column. Cutting one
//! allocation per chunk made each column's run 1.8 KB long, shorter than a
//! page, and out of cache the hardware prefetchers restarted at every chunk
//! (3x slower than one array per column at a million entities); contiguous
//! columns stream at DRAM speed and still give 16 KiB chunks to systems.
//!
//! The row count is a power of two, so finding a row's chunk is a shift.

use std::alloc::Layout;

/// Default chunk size in bytes.
pub const DEFAULT_CHUNK_BYTES: usize = 16 * 1024;

/// Rows per chunk for one archetype: a power of two.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ChunkShape {
    shift: u32,
}

impl ChunkShape {
    /// The largest power-of-two row count whose rows (entity id plus every
    /// column) fit in `chunk_bytes`, and at least one row.
    pub fn new(chunk_bytes: usize, columns: &[Layout]) -> Self {
        let row_bytes =
            std::mem::size_of::<crate::Entity>() + columns.iter().map(Layout::size).sum::<usize>();
        let rows = (chunk_bytes / row_bytes).max(1);
        ChunkShape {
            shift: rows.ilog2(),
        }
    }

    /// Rows per chunk.
    #[inline]
    pub fn rows(self) -> usize {
        1 << self.shift
    }

    /// log2 of the rows per chunk.
    #[inline]
    pub fn shift(self) -> u32 {
        self.shift
    }

    /// The chunk holding `row`.
    #[inline]
    pub fn chunk_of(self, row: usize) -> usize {
        row >> self.shift
    }

    /// Number of chunks `len` rows span.
    #[inline]
    pub fn chunks(self, len: usize) -> usize {
        len.div_ceil(self.rows())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_fit_and_are_a_power_of_two() {
        // 8 + 1 + 12 + 8 = 29 bytes a row: 564 fit, 512 is the power of two.
        let cols = [
            Layout::new::<u8>(),
            Layout::new::<[f32; 3]>(),
            Layout::new::<f64>(),
        ];
        let shape = ChunkShape::new(DEFAULT_CHUNK_BYTES, &cols);
        assert_eq!(shape.rows(), 512);
        assert_eq!(shape.chunk_of(511), 0);
        assert_eq!(shape.chunk_of(512), 1);
        assert_eq!(shape.chunks(1025), 3);
        assert_eq!(shape.chunks(0), 0);
    }

    #[test]
    fn a_huge_row_gets_one_row_chunks() {
        let shape = ChunkShape::new(DEFAULT_CHUNK_BYTES, &[Layout::new::<[u8; 40_000]>()]);
        assert_eq!(shape.rows(), 1);
        let zst = ChunkShape::new(DEFAULT_CHUNK_BYTES, &[Layout::new::<()>()]);
        assert_eq!(zst.rows(), DEFAULT_CHUNK_BYTES / 8);
    }
}
