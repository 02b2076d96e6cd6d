//! Writing blobs: [`BlobBuilder`] lays out the format of [`crate::format`]
//! from entity parents and per-type instance arrays, and [`AlignedBytes`]
//! holds a blob at a 16-byte aligned address so it can be read in place.
//!
//! The builder is what the JSON compiler uses; tests, benches and tools can
//! use it directly to build levels without JSON.

use crate::format::{align_up, FORMAT_VERSION, HEADER_BYTES, MAGIC, NO_PARENT};

/// One component type's instances, in entity order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeBlock {
    /// `doecs::raw::name_hash` of the component name.
    pub component: u64,
    /// Bytes per instance.
    pub instance_size: u32,
    /// The owning entity of each instance (strictly increasing).
    pub entity_index: Vec<u32>,
    /// `entity_index.len() * instance_size` bytes of little-endian instance data.
    pub data: Vec<u8>,
}

/// Builds a blob. Blocks are written in the order they were added, which is
/// their spawn order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlobBuilder {
    /// Parent of each entity ([`NO_PARENT`] for roots), parents first.
    pub parent_index: Vec<u32>,
    /// The type blocks in spawn order.
    pub blocks: Vec<TypeBlock>,
}

impl BlobBuilder {
    /// A builder for `parent_index.len()` entities.
    pub fn new(parent_index: Vec<u32>) -> Self {
        BlobBuilder {
            parent_index,
            blocks: Vec::new(),
        }
    }

    /// A builder for `n` root entities.
    pub fn roots(n: usize) -> Self {
        Self::new(vec![NO_PARENT; n])
    }

    /// Appends a type block.
    pub fn push_block(&mut self, block: TypeBlock) -> &mut Self {
        self.blocks.push(block);
        self
    }

    /// Appends a block of `component` given to every entity, with `data`
    /// holding one `instance_size`-byte value per entity.
    pub fn push_dense(&mut self, component: u64, instance_size: u32, data: Vec<u8>) -> &mut Self {
        let n = self.parent_index.len() as u32;
        self.push_block(TypeBlock {
            component,
            instance_size,
            entity_index: (0..n).collect(),
            data,
        })
    }

    /// Serialises to bytes. The builder does not check the format's rules
    /// (tests use it to write invalid blobs on purpose); loading checks them.
    ///
    /// # Panics
    /// If a count or the total length does not fit the format's integer
    /// fields (more than `u32::MAX` entities or instances): the compiler
    /// checks these first and reports [`crate::CompileError::TooLarge`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let n = self.parent_index.len();
        let mut out = Vec::with_capacity(self.byte_len_hint());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // total length, patched below
        out.extend_from_slice(
            &u32::try_from(n)
                .expect("entity count fits u32")
                .to_le_bytes(),
        );
        out.extend_from_slice(
            &u32::try_from(self.blocks.len())
                .expect("type count fits u32")
                .to_le_bytes(),
        );
        debug_assert_eq!(out.len(), HEADER_BYTES);
        for &p in &self.parent_index {
            out.extend_from_slice(&p.to_le_bytes());
        }
        pad(&mut out);
        for b in &self.blocks {
            out.extend_from_slice(&b.component.to_le_bytes());
            let count = u32::try_from(b.entity_index.len()).expect("instance count fits u32");
            out.extend_from_slice(&count.to_le_bytes());
            out.extend_from_slice(&b.instance_size.to_le_bytes());
            for &e in &b.entity_index {
                out.extend_from_slice(&e.to_le_bytes());
            }
            pad(&mut out);
            out.extend_from_slice(&b.data);
            pad(&mut out);
        }
        let total = out.len() as u64;
        out[16..24].copy_from_slice(&total.to_le_bytes());
        out
    }

    fn byte_len_hint(&self) -> usize {
        let mut n = HEADER_BYTES + self.parent_index.len() * 4 + 16;
        for b in &self.blocks {
            n += 32 + b.entity_index.len() * 4 + b.data.len() + 16;
        }
        n
    }
}

fn pad(out: &mut Vec<u8>) {
    let to = align_up(out.len() as u64).expect("blob length fits u64") as usize;
    out.resize(to, 0);
}

/// Bytes stored at a 16-byte aligned address, so a blob's instance data
/// (16-aligned relative to the blob) is aligned in memory too.
#[derive(Clone, Default)]
pub struct AlignedBytes {
    words: Vec<u128>,
    len: usize,
}

impl AlignedBytes {
    /// Copies `bytes` into aligned storage.
    pub fn from_slice(bytes: &[u8]) -> Self {
        let mut words = vec![0u128; bytes.len().div_ceil(16)];
        for (w, chunk) in words.iter_mut().zip(bytes.chunks(16)) {
            let mut b = [0u8; 16];
            b[..chunk.len()].copy_from_slice(chunk);
            *w = u128::from_ne_bytes(b);
        }
        AlignedBytes {
            words,
            len: bytes.len(),
        }
    }

    /// Reads a whole file into aligned storage.
    pub fn read_file(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        Ok(Self::from_slice(&std::fs::read(path)?))
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `words` owns `words.len() * 16 >= len` initialised bytes;
        // u128 has no padding, and u8 has alignment 1.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
    }
}

impl std::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBytes({} bytes)", self.len)
    }
}

impl std::ops::Deref for AlignedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_bytes_are_aligned_and_equal() {
        let src: Vec<u8> = (0..37).collect();
        let a = AlignedBytes::from_slice(&src);
        assert_eq!(a.as_bytes(), &src[..]);
        assert_eq!(a.as_ptr() as usize % 16, 0);
        assert!(AlignedBytes::from_slice(&[]).is_empty());
    }

    #[test]
    fn empty_level_is_header_only() {
        let b = BlobBuilder::roots(0).to_bytes();
        assert_eq!(b.len(), 32);
        assert_eq!(&b[16..24], &32u64.to_le_bytes());
    }
}
