//! Chunk memory: an archetype's chunks are carved from a few large blocks.
//!
//! Allocating every 16 KiB chunk on its own puts an archetype's chunks wherever
//! the allocator has room, between the entity index's growth and every other
//! allocation of the program. Iteration walks the chunks in order, and the
//! hardware prefetchers do measurably better when consecutive chunks sit at a
//! fixed stride inside one allocation (3% on `pos += vel` over 10,000 entities
//! on the reference machine, enough to matter at a 1.1x budget). So a
//! [`ChunkPool`] hands out chunk slots carved, in address order, from blocks:
//! each block is one allocation holding a run of chunks `stride` bytes apart.
//! Blocks grow geometrically (each new one as large as all before it, up to
//! [`MAX_BLOCK_BYTES`]), and [`ChunkPool::reserve`] sizes one block for a whole
//! batch, so `spawn_batch` of n entities lays its chunks out back to back.
//!
//! A chunk emptied by a removal goes to a free list and is the next one handed
//! out (last in, first out), so churn at a chunk boundary never allocates.
//! Releasing a chunk never frees memory: the caller may still be dropping the
//! values in it. Memory goes back to the allocator in [`ChunkPool::trim`], which
//! frees every block none of whose chunks is in use, and when the pool drops.

use super::layout::ChunkLayout;
use std::alloc::Layout;
use std::ptr::NonNull;

/// Largest block the pool allocates, unless one chunk alone is larger.
pub const MAX_BLOCK_BYTES: usize = 4 << 20;

/// The start of one chunk handed out by a [`ChunkPool`].
///
/// A plain address: it owns nothing, and it is valid for the chunk layout's
/// size while the pool that handed it out holds the block around it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChunkPtr(NonNull<u8>);

// SAFETY: a ChunkPtr is an address into memory owned by its archetype's pool;
// the values stored there are `Send + Sync` components, and access to them is
// governed by the archetype, never by the pointer alone.
unsafe impl Send for ChunkPtr {}
// SAFETY: as above.
unsafe impl Sync for ChunkPtr {}

impl ChunkPtr {
    /// Start of the chunk.
    #[inline]
    pub fn ptr(self) -> NonNull<u8> {
        self.0
    }
}

/// One allocation holding `chunks` chunk slots, `stride` bytes apart.
struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
    chunks: usize,
    /// Slots `0..carved` have been handed out at least once; the rest never.
    carved: usize,
}

/// The chunk memory of one archetype. See the module docs.
///
/// # Invariants
/// - Every block's `ptr` was returned by the global allocator for its `layout`,
///   whose size is `chunks * stride` (non-zero) and whose alignment is the chunk
///   alignment; `carved <= chunks`.
/// - `stride` is the chunk size rounded up to the chunk alignment, so slot `i`
///   of a block, at `ptr + i * stride`, is aligned and holds a whole chunk.
/// - Every slot in `free` is a carved slot of some block, and appears once.
///   A carved slot not in `free` is in use: handed out and not yet released.
pub struct ChunkPool {
    chunk: Layout,
    stride: usize,
    blocks: Vec<Block>,
    free: Vec<ChunkPtr>,
}

// SAFETY: the pool uniquely owns its blocks (plain bytes); see `ChunkPtr`.
unsafe impl Send for ChunkPool {}
// SAFETY: shared access to the pool reads only its bookkeeping.
unsafe impl Sync for ChunkPool {}

impl ChunkPool {
    /// An empty pool for chunks of `layout`. Allocates nothing.
    pub fn new(layout: &ChunkLayout) -> Self {
        let chunk = layout.alloc_layout();
        debug_assert!(chunk.size() > 0, "ChunkLayout makes chunks non-empty");
        ChunkPool {
            chunk,
            stride: chunk.pad_to_align().size(),
            blocks: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Hands out one chunk slot: the most recently released one, else the next
    /// never-used slot in address order, else the first slot of a new block as
    /// large as all the blocks before it together.
    #[inline]
    pub fn acquire(&mut self) -> ChunkPtr {
        if let Some(chunk) = self.free.pop() {
            return chunk;
        }
        let index = match self.blocks.iter().position(|b| b.carved < b.chunks) {
            Some(index) => index,
            None => {
                let held: usize = self.blocks.iter().map(|b| b.chunks).sum();
                self.add_block(held.max(1));
                self.blocks.len() - 1
            }
        };
        let stride = self.stride;
        let block = &mut self.blocks[index];
        // SAFETY: `carved < chunks`, so the slot lies inside the block's
        // allocation of `chunks * stride` bytes (type invariant).
        let ptr = unsafe { block.ptr.add(block.carved * stride) };
        block.carved += 1;
        ChunkPtr(ptr)
    }

    /// Makes sure the next `chunks` calls to [`ChunkPool::acquire`] find a slot
    /// without allocating, adding blocks (each at most [`MAX_BLOCK_BYTES`]) for
    /// what the free list and the never-used slots do not cover.
    pub fn reserve(&mut self, chunks: usize) {
        let mut available = self.free.len()
            + self
                .blocks
                .iter()
                .map(|b| b.chunks - b.carved)
                .sum::<usize>();
        while available < chunks {
            let added = self.add_block(chunks - available);
            available += added;
        }
    }

    /// Takes back a chunk slot. Its memory stays allocated (the caller may still
    /// drop values in it) until [`ChunkPool::trim`] or the pool's drop.
    ///
    /// # Safety
    /// `chunk` must have come from this pool's `acquire` and not been released
    /// since; the caller must not use it for new values after this call.
    #[inline]
    pub unsafe fn release(&mut self, chunk: ChunkPtr) {
        self.free.push(chunk);
    }

    /// Frees every block none of whose slots is in use, dropping its slots from
    /// the free list. The caller must hold no value in a released slot.
    pub fn trim(&mut self) {
        let stride = self.stride;
        let mut i = 0;
        while i < self.blocks.len() {
            let block = &self.blocks[i];
            let (start, end) = Self::span(block, stride);
            let inside = |c: &ChunkPtr| (start..end).contains(&(c.0.as_ptr() as usize));
            if self.free.iter().filter(|c| inside(c)).count() == block.carved {
                self.free.retain(|c| !inside(c));
                let block = self.blocks.remove(i);
                // SAFETY: `ptr` came from `alloc(layout)` (type invariant); no
                // slot of the block is in use, and its free slots were just
                // dropped from the free list, so nothing refers to it any more.
                unsafe { std::alloc::dealloc(block.ptr.as_ptr(), block.layout) };
            } else {
                i += 1;
            }
        }
    }

    /// Chunk slots currently in the free list.
    #[cfg(test)]
    pub fn free_count(&self) -> usize {
        self.free.len()
    }

    /// Number of blocks held.
    #[cfg(test)]
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Bytes held in blocks, in use or not.
    pub fn reserved_bytes(&self) -> usize {
        self.blocks.iter().map(|b| b.layout.size()).sum()
    }

    /// Verifies the pool's invariants against the slots the owner holds in use.
    /// Panics on failure.
    pub fn check_invariants(&self, in_use: &[ChunkPtr]) {
        let stride = self.stride;
        let mut all: Vec<usize> = in_use
            .iter()
            .chain(&self.free)
            .map(|c| c.0.as_ptr() as usize)
            .collect();
        all.sort_unstable();
        assert!(
            all.windows(2).all(|w| w[0] != w[1]),
            "a chunk slot is both in use and free, or listed twice"
        );
        for &addr in &all {
            let carved = self.blocks.iter().any(|b| {
                let (start, end) = Self::span(b, stride);
                let carved_end = start + b.carved * stride;
                (start..end).contains(&addr) && addr < carved_end && (addr - start) % stride == 0
            });
            assert!(
                carved,
                "chunk slot {addr:#x} is not a carved slot of a block"
            );
        }
        let carved: usize = self.blocks.iter().map(|b| b.carved).sum();
        assert_eq!(all.len(), carved, "every carved slot is in use or free");
        for b in &self.blocks {
            assert!(b.carved <= b.chunks, "carved within the block");
            assert_eq!(b.layout.size(), b.chunks * stride, "block size");
        }
    }

    /// Allocates a block of `wanted` chunks, capped at [`MAX_BLOCK_BYTES`] (but
    /// at least one chunk), and returns how many chunks it holds.
    fn add_block(&mut self, wanted: usize) -> usize {
        let chunks = wanted.clamp(1, (MAX_BLOCK_BYTES / self.stride).max(1));
        let layout = Layout::from_size_align(chunks * self.stride, self.chunk.align())
            .expect("doecs: chunk block size overflows");
        // SAFETY: `layout` has non-zero size (`stride >= 1`, `chunks >= 1`).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        self.blocks.push(Block {
            ptr,
            layout,
            chunks,
            carved: 0,
        });
        chunks
    }

    /// The address range `[start, end)` of a block.
    fn span(block: &Block, stride: usize) -> (usize, usize) {
        let start = block.ptr.as_ptr() as usize;
        (start, start + block.chunks * stride)
    }
}

impl Drop for ChunkPool {
    fn drop(&mut self) {
        for block in &self.blocks {
            // SAFETY: `ptr` came from `alloc(layout)` (type invariant), and the
            // owning archetype dropped every value before its pool drops.
            unsafe { std::alloc::dealloc(block.ptr.as_ptr(), block.layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(chunk_bytes: usize) -> ChunkPool {
        ChunkPool::new(&ChunkLayout::new(chunk_bytes, &[Layout::new::<u64>()]))
    }

    fn addr(c: ChunkPtr) -> usize {
        c.ptr().as_ptr() as usize
    }

    #[test]
    fn chunks_of_a_reserved_batch_sit_back_to_back() {
        let mut p = pool(1024);
        p.reserve(10);
        assert_eq!(p.block_count(), 1);
        let chunks: Vec<_> = (0..10).map(|_| p.acquire()).collect();
        assert_eq!(p.block_count(), 1, "reserve covered the batch");
        for w in chunks.windows(2) {
            assert_eq!(addr(w[1]) - addr(w[0]), p.stride, "fixed stride, in order");
        }
        for c in &chunks {
            assert_eq!(addr(*c) % p.chunk.align(), 0, "aligned");
        }
        p.check_invariants(&chunks);
    }

    #[test]
    fn blocks_grow_geometrically_without_a_reserve() {
        let mut p = pool(1024);
        let chunks: Vec<_> = (0..15).map(|_| p.acquire()).collect();
        // 1 + 1 + 2 + 4 + 8 = 16 slots in five blocks.
        assert_eq!(p.block_count(), 5);
        assert_eq!(p.reserved_bytes(), 16 * p.stride);
        p.check_invariants(&chunks);
    }

    #[test]
    fn a_released_chunk_is_handed_out_next() {
        let mut p = pool(1024);
        let mut held: Vec<_> = (0..3).map(|_| p.acquire()).collect();
        let last = held.pop().unwrap();
        // SAFETY: `last` came from `acquire` and is released once.
        unsafe { p.release(last) };
        assert_eq!(p.free_count(), 1);
        p.check_invariants(&held);
        let again = p.acquire();
        assert_eq!(again, last, "churn reuses the slot instead of allocating");
        held.push(again);
        p.check_invariants(&held);
    }

    #[test]
    fn trim_frees_only_blocks_with_nothing_in_use() {
        let mut p = pool(1024);
        let mut held: Vec<_> = (0..4).map(|_| p.acquire()).collect();
        assert_eq!(p.block_count(), 3, "blocks of 1, 1 and 2 slots");
        // Release the two slots of the last block and one of the first.
        for c in [held.pop().unwrap(), held.pop().unwrap(), held.remove(0)] {
            // SAFETY: each came from `acquire` and is released once.
            unsafe { p.release(c) };
        }
        p.trim();
        assert_eq!(p.block_count(), 1, "the first and last blocks were free");
        assert_eq!(p.free_count(), 0);
        p.check_invariants(&held);
        for c in held.drain(..) {
            // SAFETY: as above.
            unsafe { p.release(c) };
        }
        p.trim();
        assert_eq!(p.block_count(), 0);
        assert_eq!(p.reserved_bytes(), 0);
        p.check_invariants(&[]);
    }

    #[test]
    fn a_chunk_larger_than_a_block_gets_a_block_of_its_own() {
        let mut p = pool(MAX_BLOCK_BYTES + 4096);
        p.reserve(3);
        assert_eq!(p.block_count(), 3, "one chunk per block");
        let held: Vec<_> = (0..3).map(|_| p.acquire()).collect();
        p.check_invariants(&held);
    }
}
