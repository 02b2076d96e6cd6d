//! Editing a record in place, inside its block.
//!
//! Every function here works on one block (`&mut [u8]` whose length is the
//! record's capacity) that holds a valid record, and leaves a valid record.
//! The fast paths ([`try_set`], [`remove`]) never move other records: a value
//! that grows gets a new slot from the free space (as in Bitsquid's
//! "Allocation Adventures 1: The DataComponent") and its old bytes become a
//! hole. When the free space runs out the caller rewrites the record tight
//! ([`write_tight`]) into the same or a bigger block, which is where holes are
//! reclaimed.

use crate::key::KeyHash;
use crate::record::{
    header_len, pack_data, split_data, stamps_at, types_at, values_at, RecordRef, ENTRY_BYTES,
    HEADER_BYTES, MAX_RECORD_BYTES,
};
use crate::value::Value;

#[inline(always)]
fn wr16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
#[inline(always)]
fn wr32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Writes an empty record header into `block`.
pub(crate) fn init(block: &mut [u8]) {
    wr16(block, 0, 0);
    wr16(block, 2, 0);
}

/// Writes entry `i` (of `n`) in place.
#[inline(always)]
fn write_entry(
    block: &mut [u8],
    n: usize,
    i: usize,
    key: KeyHash,
    stamp: u32,
    word: u32,
    code: u8,
) {
    wr32(block, HEADER_BYTES + 4 * i, key.0);
    wr32(block, stamps_at(n) + 4 * i, stamp);
    wr32(block, values_at(n) + 4 * i, word);
    block[types_at(n) + i] = code;
}

/// Takes `size` bytes from the free space for value data; returns the offset
/// from the end. The caller checked `free >= size`.
#[inline]
fn alloc_data(block: &mut [u8], size: usize) -> usize {
    if size == 0 {
        return 0;
    }
    let tail = crate::record::rd16(block, 2) as usize + size;
    wr16(block, 2, tail as u16);
    tail
}

/// Writes a value's data at `offset` from the end; returns its word. Empty
/// data always gets offset 0, so giving back the lowest data never leaves an
/// empty value pointing past `tail`.
#[inline]
fn store_data(block: &mut [u8], offset: usize, value: &Value<'_>) -> u32 {
    let size = value.data_len();
    if size == 0 {
        return pack_data(0, 0);
    }
    let start = block.len() - offset;
    value.write_data(&mut block[start..start + size]);
    pack_data(offset, size)
}

/// Overwrites an existing `key` with an inline value (bool or float) and
/// `stamp`: the fast path of `set`. Returns `false`, untouched, if the
/// record has no such key. A string or array it replaces becomes a hole.
#[inline(always)]
fn overwrite_inline(block: &mut [u8], key: KeyHash, stamp: u32, word: u32, code: u8) -> bool {
    let n = crate::record::rd16(block, 0) as usize;
    let header = &mut block[..header_len(n)];
    let (keys, rest) = header[HEADER_BYTES..].split_at_mut(4 * n);
    let Some(i) = keys
        .chunks_exact(4)
        .position(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) == key.0)
    else {
        return false;
    };
    let (stamps, rest) = rest.split_at_mut(4 * n);
    let (values, types) = rest.split_at_mut(4 * n);
    stamps[4 * i..4 * i + 4].copy_from_slice(&stamp.to_le_bytes());
    values[4 * i..4 * i + 4].copy_from_slice(&word.to_le_bytes());
    types[i] = code;
    true
}

/// Sets `key` to `value` with `stamp`, inside the block. Returns `false`,
/// leaving the block untouched, when it does not fit the free space.
#[inline]
pub(crate) fn try_set(block: &mut [u8], key: KeyHash, stamp: u32, value: &Value<'_>) -> bool {
    let ty = value.value_type();
    if !ty.has_data() && overwrite_inline(block, key, stamp, value.inline_word(), ty as u8) {
        return true;
    }
    let rec = RecordRef::trusted(block);
    let n = rec.len();
    let size = value.data_len();
    match rec.find(key) {
        Some(i) => {
            let word = if ty.has_data() {
                let old = rec.value_type(i);
                let (old_offset, old_size) = split_data(rec.word(i));
                if old.has_data() && size <= old_size {
                    // Fits the old slot: reuse it (the rest becomes a hole).
                    store_data(block, old_offset, value)
                } else {
                    if rec.free() < size {
                        return false;
                    }
                    let offset = alloc_data(block, size);
                    store_data(block, offset, value)
                }
            } else {
                value.inline_word()
            };
            write_entry(block, n, i, key, stamp, word, ty as u8);
            true
        }
        None => {
            if rec.free() < ENTRY_BYTES + size {
                return false;
            }
            push(block, key, stamp, value);
            true
        }
    }
}

/// Appends an entry; the caller checked the free space.
fn push(block: &mut [u8], key: KeyHash, stamp: u32, value: &Value<'_>) {
    let n = RecordRef::trusted(block).len();
    // Move the arrays up, highest first: types +12, values +8, stamps +4.
    block.copy_within(types_at(n)..types_at(n) + n, types_at(n + 1));
    block.copy_within(values_at(n)..values_at(n) + 4 * n, values_at(n + 1));
    block.copy_within(stamps_at(n)..stamps_at(n) + 4 * n, stamps_at(n + 1));
    wr16(block, 0, (n + 1) as u16);
    let word = if value.value_type().has_data() {
        let offset = alloc_data(block, value.data_len());
        store_data(block, offset, value)
    } else {
        value.inline_word()
    };
    write_entry(block, n + 1, n, key, stamp, word, value.value_type() as u8);
}

/// Removes entry `i` (swap-remove: the last entry takes its place). Its data
/// becomes a hole, unless it was the lowest data, which is given back.
pub(crate) fn remove(block: &mut [u8], i: usize) {
    let rec = RecordRef::trusted(block);
    let n = rec.len();
    let last = n - 1;
    let give_back = if rec.value_type(i).has_data() {
        let (offset, size) = split_data(rec.word(i));
        (offset == rec.tail() && size > 0).then(|| offset - size)
    } else {
        None
    };
    let moved = (
        rec.key(last),
        rec.stamp(last),
        rec.word(last),
        block[types_at(n) + last],
    );
    if let Some(tail) = give_back {
        wr16(block, 2, tail as u16);
    }
    if i != last {
        let (k, s, w, t) = moved;
        write_entry(block, n, i, k, s, w, t);
    }
    // Move the arrays down, lowest first: stamps -4, values -8, types -12.
    block.copy_within(stamps_at(n)..stamps_at(n) + 4 * last, stamps_at(last));
    block.copy_within(values_at(n)..values_at(n) + 4 * last, values_at(last));
    block.copy_within(types_at(n)..types_at(n) + last, types_at(last));
    wr16(block, 0, last as u16);
}

/// Writes `src` tight into `dst` (any length from `src.tight_len()` up):
/// header at the start, data packed down from the end in entry order, holes
/// gone. With `drop_data = Some(i)`, entry `i`'s data is not copied and its
/// word is left empty (the caller overwrites that entry next).
pub(crate) fn write_tight(src: RecordRef<'_>, dst: &mut [u8], drop_data: Option<usize>) {
    let n = src.len();
    let header = header_len(n);
    // Header arrays are position-independent except for the count: copy as is.
    dst[..header].copy_from_slice(&src.as_bytes()[..header]);
    let cap = dst.len();
    let mut tail = 0;
    for i in 0..n {
        if !src.value_type(i).has_data() {
            continue;
        }
        let word = if drop_data == Some(i) {
            pack_data(0, 0)
        } else {
            let data = src.data(i);
            if data.is_empty() {
                pack_data(0, 0)
            } else {
                tail += data.len();
                dst[cap - tail..cap - tail + data.len()].copy_from_slice(data);
                pack_data(tail, data.len())
            }
        };
        wr32(dst, values_at(n) + 4 * i, word);
    }
    wr16(dst, 2, tail as u16);
}

/// Builds a tight record from entries with distinct keys. Returns the
/// needed size as the error when it would exceed 65535 bytes.
pub(crate) fn build<'v>(
    entries: impl Iterator<Item = (KeyHash, u32, Value<'v>)> + Clone,
) -> Result<Vec<u8>, usize> {
    let (n, data) = entries.clone().fold((0usize, 0usize), |(n, d), (_, _, v)| {
        (n + 1, d + v.data_len())
    });
    let len = header_len(n) + data;
    if len > MAX_RECORD_BYTES {
        return Err(len);
    }
    let mut out = vec![0u8; len];
    wr16(&mut out, 0, n as u16);
    let mut tail = 0;
    for (i, (key, stamp, value)) in entries.enumerate() {
        let word = if value.value_type().has_data() {
            tail += value.data_len();
            store_data(&mut out, tail, &value)
        } else {
            value.inline_word()
        };
        write_entry(&mut out, n, i, key, stamp, word, value.value_type() as u8);
    }
    wr16(&mut out, 2, tail as u16);
    Ok(out)
}

/// Sets every entry's stamp to `stamp`.
pub(crate) fn stamp_all(block: &mut [u8], stamp: u32) {
    let n = RecordRef::trusted(block).len();
    for i in 0..n {
        wr32(block, stamps_at(n) + 4 * i, stamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Floats;

    fn block(cap: usize) -> Vec<u8> {
        let mut b = vec![0u8; cap];
        init(&mut b);
        b
    }

    #[test]
    fn set_grow_remove_keep_a_valid_record() {
        let mut b = block(128);
        assert!(try_set(&mut b, KeyHash(1), 1, &Value::F32(1.0)));
        assert!(try_set(&mut b, KeyHash(2), 2, &Value::Str("hello")));
        assert!(try_set(
            &mut b,
            KeyHash(3),
            3,
            &Value::F32s(Floats::new(&[0.0, 1.0, 3.0]))
        ));
        assert!(try_set(&mut b, KeyHash(2), 4, &Value::Str("hello more")));
        let r = RecordRef::from_bytes(&b).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r.tail(), 5 + 12 + 10, "the old 'hello' is a hole");
        assert_eq!(r.live_data(), 22);
        assert_eq!(
            r.value(r.find(KeyHash(2)).unwrap()),
            Value::Str("hello more")
        );
        let one = r.find(KeyHash(1)).unwrap();
        remove(&mut b, one);
        let r = RecordRef::from_bytes(&b).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            r.value(r.find(KeyHash(3)).unwrap())
                .as_f32s()
                .unwrap()
                .to_vec(),
            vec![0.0, 1.0, 3.0]
        );
        let mut tight = vec![0u8; r.tight_len()];
        write_tight(r, &mut tight, None);
        let t = RecordRef::from_bytes(&tight).unwrap();
        assert_eq!(t.tail(), 22);
        assert_eq!(t.free(), 0);
        assert_eq!(
            t.value(t.find(KeyHash(2)).unwrap()),
            Value::Str("hello more")
        );
        // Relocation into a bigger block: same header, data at the new end.
        let mut big = vec![0u8; 200];
        write_tight(t, &mut big, None);
        let g = RecordRef::from_bytes(&big).unwrap();
        assert_eq!(
            g.value(g.find(KeyHash(2)).unwrap()),
            Value::Str("hello more")
        );
    }

    #[test]
    fn full_block_refuses_without_change() {
        let mut b = block(header_len(1));
        assert!(try_set(&mut b, KeyHash(7), 1, &Value::Bool(true)));
        let before = b.clone();
        assert!(!try_set(&mut b, KeyHash(8), 2, &Value::Bool(true)));
        assert!(!try_set(&mut b, KeyHash(7), 2, &Value::Str("x")));
        assert_eq!(b, before);
        assert!(try_set(&mut b, KeyHash(7), 3, &Value::F32(2.0)));
    }
}
