//! Reading blobs: [`BlobView::parse`] validates every count, size, offset,
//! index and alignment of the format in one forward pass and then hands out
//! views that read the bytes in place.
//!
//! The pass never trusts a count to size an allocation: the only allocation
//! is the list of block views, which grows one entry per block actually
//! parsed (each at least 16 bytes of the blob), so memory is bounded by the
//! blob's length. Arithmetic is done in `u64` with checked operations, so a
//! hostile count cannot wrap an offset. Errors name the field and the byte
//! offset ([`LoadError`]).

use crate::error::{LoadError, Problem};
use crate::format::{
    align_up, LeU32s, BLOCK_HEADER_BYTES, FORMAT_VERSION, HEADER_BYTES, MAGIC, NO_PARENT,
};

/// A validated blob, read in place.
#[derive(Clone, Debug)]
pub struct BlobView<'a> {
    bytes: &'a [u8],
    num_entities: u32,
    parent_index: LeU32s<'a>,
    blocks: Vec<BlockView<'a>>,
}

/// One validated component-type block.
#[derive(Copy, Clone, Debug)]
pub struct BlockView<'a> {
    /// The block's position in spawn order.
    pub position: usize,
    /// The component identifier (`doecs::raw::name_hash` of its name).
    pub component: u64,
    /// Byte offset of the block from the blob's start.
    pub offset: u64,
    /// Byte offset of the instance data from the blob's start (16-aligned).
    pub data_offset: u64,
    /// Bytes per instance.
    pub instance_size: usize,
    /// The owning entity of each instance: strictly increasing, each below
    /// `num_entities`.
    pub entity_index: LeU32s<'a>,
    /// `num_instances * instance_size` bytes of instance data.
    pub data: &'a [u8],
}

impl BlockView<'_> {
    /// Number of instances.
    pub fn num_instances(&self) -> usize {
        self.entity_index.len()
    }

    /// The bytes of instance `i`.
    pub fn instance(&self, i: usize) -> Option<&[u8]> {
        let start = i.checked_mul(self.instance_size)?;
        self.data.get(start..start.checked_add(self.instance_size)?)
    }
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Checks that `len` bytes exist at `offset`.
fn need(
    bytes: &[u8],
    field: impl FnOnce() -> String,
    offset: u64,
    len: u64,
) -> Result<(), LoadError> {
    let total = bytes.len() as u64;
    let end = offset.checked_add(len);
    match end {
        Some(end) if end <= total => Ok(()),
        _ => Err(LoadError::new(
            field(),
            offset,
            Problem::Truncated {
                needed: len,
                available: total.saturating_sub(offset),
            },
        )),
    }
}

impl<'a> BlobView<'a> {
    /// Validates `bytes` as a blob. On success every later read is in bounds.
    ///
    /// ```
    /// use doecs_resource::{BlobBuilder, BlobView};
    /// let bytes = BlobBuilder::new(vec![u32::MAX, 0]).to_bytes();
    /// let view = BlobView::parse(&bytes).unwrap();
    /// assert_eq!(view.num_entities(), 2);
    /// assert_eq!(view.parent_of(1), Some(0));
    /// let err = BlobView::parse(&bytes[..20]).unwrap_err();
    /// assert_eq!(err.field, "header");
    /// ```
    pub fn parse(bytes: &'a [u8]) -> Result<Self, LoadError> {
        let total = bytes.len() as u64;
        need(bytes, || "header".into(), 0, HEADER_BYTES as u64)?;
        if bytes[..8] != MAGIC {
            return Err(LoadError::new("header.magic", 0, Problem::BadMagic));
        }
        let version = read_u32(bytes, 8);
        if version != FORMAT_VERSION {
            return Err(LoadError::new(
                "header.version",
                8,
                Problem::UnsupportedVersion(version),
            ));
        }
        let flags = read_u32(bytes, 12);
        if flags != 0 {
            return Err(LoadError::new(
                "header.flags",
                12,
                Problem::ReservedFlags(flags),
            ));
        }
        let declared = read_u64(bytes, 16);
        if declared != total {
            return Err(LoadError::new(
                "header.total_length",
                16,
                Problem::LengthMismatch {
                    declared,
                    actual: total,
                },
            ));
        }
        let num_entities = read_u32(bytes, 24);
        let num_types = read_u32(bytes, 28);
        if num_entities == u32::MAX {
            // u32::MAX is the root marker, so it cannot also be an index.
            return Err(LoadError::new(
                "header.num_entities",
                24,
                Problem::OutOfRange {
                    value: num_entities.into(),
                    limit: u32::MAX.into(),
                },
            ));
        }
        let parents_at = HEADER_BYTES as u64;
        let parents_len = u64::from(num_entities) * 4;
        need(bytes, || "parent_index".into(), parents_at, parents_len)?;
        let parent_index =
            LeU32s::new(&bytes[parents_at as usize..(parents_at + parents_len) as usize]);
        // Fast pass without branches (vectorises); locate only on failure.
        let any_bad = crate::format::any_parent_not_before(parent_index);
        for (i, p) in parent_index.iter().enumerate().filter(|_| any_bad) {
            if p != NO_PARENT && p as usize >= i {
                return Err(LoadError::new(
                    format!("parent_index[{i}]"),
                    parents_at + 4 * i as u64,
                    Problem::ParentNotBefore {
                        parent: p,
                        child: i as u32,
                    },
                ));
            }
        }
        let mut cursor = align_up(parents_at + parents_len)
            .ok_or_else(|| LoadError::new("parent_index", parents_at, Problem::SizeOverflow))?;
        let mut blocks = Vec::new();
        for t in 0..num_types as usize {
            let block = parse_block(bytes, t, cursor, num_entities)?;
            let end = block.data_offset + block.data.len() as u64;
            cursor = align_up(end)
                .ok_or_else(|| LoadError::new(format!("block[{t}]"), end, Problem::SizeOverflow))?;
            blocks.push(block);
        }
        if cursor != total {
            return Err(LoadError::new(
                "end of blocks",
                cursor.min(total),
                Problem::TrailingBytes(total.saturating_sub(cursor)),
            ));
        }
        let mut ids: Vec<(u64, usize)> = blocks.iter().map(|b| (b.component, b.position)).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0].0 == w[1].0) {
            let second = &blocks[w[0].1.max(w[1].1)];
            return Err(LoadError::new(
                format!("block[{}].component_identifier", second.position),
                second.offset,
                Problem::DuplicateType(second.component),
            ));
        }
        Ok(BlobView {
            bytes,
            num_entities,
            parent_index,
            blocks,
        })
    }

    /// The whole blob.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of entities.
    pub fn num_entities(&self) -> usize {
        self.num_entities as usize
    }

    /// The parent of every entity ([`NO_PARENT`] for roots); parents come first.
    pub fn parent_index(&self) -> LeU32s<'a> {
        self.parent_index
    }

    /// The parent of entity `i`, or `None` for a root (or past the end).
    pub fn parent_of(&self, i: usize) -> Option<u32> {
        self.parent_index.get(i).filter(|&p| p != NO_PARENT)
    }

    /// The type blocks in spawn order.
    pub fn blocks(&self) -> &[BlockView<'a>] {
        &self.blocks
    }

    /// Depth of the deepest entity (1 for a level of roots, 0 when empty). O(n).
    pub fn hierarchy_depth(&self) -> usize {
        let mut depth = vec![0u32; self.num_entities()];
        let mut max = 0;
        for (i, p) in self.parent_index.iter().enumerate() {
            // Validated: a parent comes before its child, so its depth is known.
            depth[i] = if p == NO_PARENT {
                1
            } else {
                depth[p as usize] + 1
            };
            max = max.max(depth[i]);
        }
        max as usize
    }
}

fn parse_block(
    bytes: &[u8],
    t: usize,
    at: u64,
    num_entities: u32,
) -> Result<BlockView<'_>, LoadError> {
    need(
        bytes,
        || format!("block[{t}]"),
        at,
        BLOCK_HEADER_BYTES as u64,
    )?;
    let a = at as usize;
    let component = read_u64(bytes, a);
    let count = read_u32(bytes, a + 8);
    let instance_size = read_u32(bytes, a + 12);
    if count > num_entities {
        return Err(LoadError::new(
            format!("block[{t}].num_instances"),
            at + 8,
            Problem::OutOfRange {
                value: count.into(),
                limit: u64::from(num_entities) + 1,
            },
        ));
    }
    let index_at = at + BLOCK_HEADER_BYTES as u64;
    let index_len = u64::from(count) * 4;
    need(
        bytes,
        || format!("block[{t}].entity_index"),
        index_at,
        index_len,
    )?;
    let entity_index = LeU32s::new(&bytes[index_at as usize..(index_at + index_len) as usize]);
    // Fast pass without branches: strictly increasing and the last in range
    // means every index is in range.
    let any_bad = !crate::format::strictly_increasing(entity_index)
        || entity_index.last().is_some_and(|last| last >= num_entities);
    let mut previous: Option<u32> = None;
    for (k, e) in entity_index.iter().enumerate().filter(|_| any_bad) {
        let offset = index_at + 4 * k as u64;
        if e >= num_entities {
            return Err(LoadError::new(
                format!("block[{t}].entity_index[{k}]"),
                offset,
                Problem::OutOfRange {
                    value: e.into(),
                    limit: num_entities.into(),
                },
            ));
        }
        if let Some(prev) = previous {
            if e <= prev {
                return Err(LoadError::new(
                    format!("block[{t}].entity_index[{k}]"),
                    offset,
                    Problem::NotIncreasing {
                        previous: prev,
                        value: e,
                    },
                ));
            }
        }
        previous = Some(e);
    }
    let data_at = align_up(index_at + index_len).ok_or_else(|| {
        LoadError::new(
            format!("block[{t}].instance_data"),
            at,
            Problem::SizeOverflow,
        )
    })?;
    let data_len = u64::from(count)
        .checked_mul(u64::from(instance_size))
        .ok_or_else(|| {
            LoadError::new(
                format!("block[{t}].instance_size"),
                at + 12,
                Problem::SizeOverflow,
            )
        })?;
    need(
        bytes,
        || format!("block[{t}].instance_data"),
        data_at,
        data_len,
    )?;
    Ok(BlockView {
        position: t,
        component,
        offset: at,
        data_offset: data_at,
        instance_size: instance_size as usize,
        entity_index,
        data: &bytes[data_at as usize..(data_at + data_len) as usize],
    })
}
