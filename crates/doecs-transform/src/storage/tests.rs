//! Unit tests of the transform storage: growth, batch writes, and the
//! checks that keep out-of-range slots from reaching the buffer.

use super::*;

/// Every column of every slot below the capacity, read as values: under
/// Miri an uninitialized byte anywhere fails the test.
fn read_all(s: &Storage) -> u64 {
    let c = s.cols();
    let mut sum = 0u64;
    for i in 0..s.capacity() {
        sum = sum
            .wrapping_add(c.entity[i])
            .wrapping_add(c.local[i].translation.x.to_bits() as u64)
            .wrapping_add(c.world[i].matrix3.x_axis.y.to_bits() as u64)
            .wrapping_add(c.parent[i].get().unwrap_or(0) as u64)
            .wrapping_add(c.first_child[i].get().unwrap_or(0) as u64)
            .wrapping_add(c.next_sibling[i].get().unwrap_or(0) as u64)
            .wrapping_add(c.prev_sibling[i].get().unwrap_or(0) as u64)
            .wrapping_add(c.flags[i] as u64);
    }
    sum
}

/// Writes `n` slots from `base` the way a batch does: a chain (slot
/// `k`'s parent is `k - 1`), world transforms read from earlier slots,
/// links set on earlier slots by a later pass.
fn write_chain(s: &mut Storage, base: usize, n: usize, first_entity: u64) {
    s.write_columns(base, n, |new| {
        let mut next_sibling = new.next_sibling.fill(Link::NONE);
        let first_child = new.first_child.fill(Link::NONE);
        let prev_sibling = new.prev_sibling.write_with(|k| {
            if k > 0 {
                // An earlier slot's link, set by a later slot's pass.
                next_sibling[k - 1] = Link::some((base + k) as u32);
            }
            Link::NONE
        });
        let (world, local) = new
            .world
            .write_with_earlier_beside(new.local, |k, earlier| {
                let local = Affine3A::from_translation(glam::Vec3::splat(1.0));
                let world = earlier.last().map_or(local, |p| *p * local);
                assert_eq!(earlier.len(), k, "exactly the slots before");
                (world, local)
            });
        WrittenColumns {
            local,
            world,
            entity: new.entity.write_with(|k| first_entity + k as u64),
            parent: new.parent.write_with(|k| match k {
                0 => Link::NONE,
                _ => Link::some((base + k - 1) as u32),
            }),
            first_child,
            next_sibling,
            prev_sibling,
            flags: new.flags.fill(3),
            idle: new.idle.fill(4),
        }
    });
}

#[test]
fn write_columns_grows_in_place_keeps_earlier_slots_and_zeroes_the_tail() {
    let mut s = Storage::with_capacity(2);
    s.cols_mut().entity[0] = 99;
    write_chain(&mut s, 1, 5, 10);
    assert!(s.capacity() >= 7);
    let idle = s.cols_mut().idle[..7].to_vec();
    let c = s.cols();
    assert_eq!(c.entity[0], 99, "kept");
    for k in 0..5 {
        assert_eq!(c.entity[1 + k], k as u64 + 10);
        assert_eq!(c.world[1 + k].translation.x, (k + 1) as f32);
        assert_eq!(c.local[1 + k].translation.x, 1.0);
        assert_eq!((c.flags[1 + k], idle[1 + k]), (3, 4));
    }
    for i in 1..5 {
        assert_eq!(c.next_sibling[i], Link::some(i as u32 + 1), "set later");
        assert_eq!(c.parent[i + 1], Link::some(i as u32));
    }
    assert_eq!(c.next_sibling[5], Link::NONE);
    for i in 6..s.capacity() {
        assert_eq!((c.entity[i], c.flags[i]), (0, 0), "tail zeroed");
    }
    read_all(&s);
    // Within capacity: overwrites in place, no growth.
    let cap = s.capacity();
    write_chain(&mut s, 2, 2, 0);
    assert_eq!(s.capacity(), cap);
    assert_eq!(s.cols().entity[3], 1);
    assert_eq!(s.cols().entity[4], 13, "untouched");
    read_all(&s);
    // An empty batch writes nothing.
    write_chain(&mut s, 5, 0, 0);
    assert_eq!(s.cols().entity[5], 14);
    read_all(&s);
}

#[test]
fn a_panicking_fill_leaves_every_slot_initialized() {
    let mut s = Storage::with_capacity(1);
    s.cols_mut().entity[0] = 7;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.write_columns(0, 8, |new| {
            new.entity.write_with(|k| {
                assert!(k < 3, "fill fails at slot 3");
                k as u64 + 1
            });
            unreachable!()
        })
    }));
    assert!(caught.is_err());
    assert!(s.capacity() >= 9);
    assert_eq!(s.cols().entity[..8], [0; 8], "zeroed by the guard");
    read_all(&s);
}

#[test]
fn a_fill_cannot_hand_back_other_slots() {
    let mut s = Storage::with_capacity(1);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.write_columns(0, 3, |new| {
            // The world column handed back as the local one, and the
            // other way round: both written, but not where they say.
            let (world, local) = new
                .world
                .write_with_earlier_beside(new.local, |_, _| (Affine3A::IDENTITY, Affine3A::ZERO));
            WrittenColumns {
                local: world,
                world: local,
                entity: new.entity.fill(1),
                parent: new.parent.fill(Link::NONE),
                first_child: new.first_child.fill(Link::NONE),
                next_sibling: new.next_sibling.fill(Link::NONE),
                prev_sibling: new.prev_sibling.fill(Link::NONE),
                flags: new.flags.fill(0),
                idle: new.idle.fill(0),
            }
        })
    }));
    let message = caught.unwrap_err();
    assert_eq!(
        message.downcast_ref::<&str>(),
        Some(&"a batch fill handed back slots it was not given")
    );
    read_all(&s);
}

#[test]
fn grow_keeps_columns_and_zeroes_the_rest() {
    let mut s = Storage::with_capacity(2);
    {
        let c = s.cols_mut();
        c.entity[1] = 7;
        c.parent[0] = Link::some(3);
        c.idle[1] = 9;
        c.world[1] = Affine3A::from_translation(glam::Vec3::X);
    }
    s.grow(5, 2);
    assert!(s.capacity() >= 5);
    let c = s.cols();
    assert_eq!(c.entity[1], 7);
    assert_eq!(c.parent[0].get(), Some(3));
    assert_eq!(c.world[1].translation, glam::Vec3A::X);
    assert_eq!(c.entity[4], 0);
    assert_eq!(c.local[4], Affine3A::from_cols_array(&[0.0; 12]));
    assert_eq!(s.cols_mut().idle[1], 9);
}

/// A capacity whose buffer would pass `isize::MAX` bytes panics before
/// any allocation, instead of wrapping round to a small layout.
#[test]
fn an_impossible_capacity_panics() {
    for cap in [usize::MAX, usize::MAX / SLOT_BYTES + 1, isize::MAX as usize] {
        let caught = std::panic::catch_unwind(|| Storage::with_capacity(cap));
        assert!(caught.is_err(), "capacity {cap}");
    }
}

/// A batch whose end overflows (or whose growth would) panics before it
/// hands out a slot, and leaves the storage as it was; so does a base
/// past the capacity.
#[test]
fn a_batch_past_the_address_space_panics() {
    let mut s = Storage::with_capacity(4);
    s.cols_mut().entity[1] = 5;
    for (base, n) in [
        (1, usize::MAX),
        (3, usize::MAX - 3),
        (2, usize::MAX - 3),
        (4, 0),
    ] {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.write_columns(base, n, |_| {
                unreachable!("no slots for an impossible batch")
            })
        }));
        assert!(caught.is_err(), "base {base}, n {n}");
        assert_eq!((s.capacity(), s.cols().entity[1]), (4, 5), "unchanged");
    }
    read_all(&s);
}
