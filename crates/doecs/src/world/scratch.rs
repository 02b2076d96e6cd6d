//! Scratch the structural core works with: the column starts a bundle's
//! fields are written to ([`Bases`], [`with_bases`]), and the values a
//! change moves out, parked until the world is consistent again
//! ([`Graveyard`]), so a panicking `Drop` never leaves a half-made row.

use crate::storage::archetypes::FieldTarget;
use crate::storage::{Archetype, ColumnIndex};
use std::alloc::Layout;

/// Most fields whose column pointers are gathered on the stack; runtime
/// bundles with more use the heap.
const STACK_FIELDS: usize = 16;

/// Calls `f` with each column's start in `arch`, in the order given.
#[inline]
pub(crate) fn with_bases<R>(
    arch: &Archetype,
    columns: impl ExactSizeIterator<Item = ColumnIndex>,
    f: impl FnOnce(&[*mut u8]) -> R,
) -> R {
    let n = columns.len();
    if n <= STACK_FIELDS {
        // Not zeroed first: a row move pays for the fields it has only.
        let mut bases = [std::mem::MaybeUninit::<*mut u8>::uninit(); STACK_FIELDS];
        let mut written = 0;
        for (base, col) in bases.iter_mut().zip(columns) {
            base.write(arch.column_ptr(col).as_ptr());
            written += 1;
        }
        // SAFETY: the first `written` entries were initialised just above
        // (`MaybeUninit<T>` has `T`'s layout).
        let bases =
            unsafe { std::slice::from_raw_parts(bases.as_ptr().cast::<*mut u8>(), written) };
        f(bases)
    } else {
        let bases: Vec<*mut u8> = columns.map(|col| arch.column_ptr(col).as_ptr()).collect();
        f(&bases)
    }
}

/// Column starts of one archetype (or single slots), in bundle field
/// order: on the stack for up to [`STACK_FIELDS`] fields.
pub(crate) struct Bases {
    inline: [*mut u8; STACK_FIELDS],
    heap: Vec<*mut u8>,
    len: usize,
}

impl Bases {
    pub(crate) fn new() -> Self {
        Bases {
            inline: [std::ptr::null_mut(); STACK_FIELDS],
            heap: Vec::new(),
            len: 0,
        }
    }

    /// Appends one pointer.
    pub(crate) fn push(&mut self, base: *mut u8) {
        if self.len < STACK_FIELDS {
            self.inline[self.len] = base;
        } else {
            if self.len == STACK_FIELDS {
                self.heap.clear();
                self.heap.extend_from_slice(&self.inline);
            }
            self.heap.push(base);
        }
        self.len += 1;
    }

    pub(crate) fn fill(&mut self, arch: &Archetype, columns: &[FieldTarget]) {
        self.len = columns.len();
        let base = |f: &FieldTarget| arch.column_ptr(f.column).as_ptr();
        if self.len <= STACK_FIELDS {
            for (slot, f) in self.inline.iter_mut().zip(columns) {
                *slot = base(f);
            }
        } else {
            self.heap.clear();
            self.heap.extend(columns.iter().map(base));
        }
    }

    pub(crate) fn as_slice(&self) -> &[*mut u8] {
        if self.len <= STACK_FIELDS {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }
}

/// Values moved out of storage, dropped when the graveyard drops (after the
/// world is consistent). A panicking drop still lets the rest drop, and the
/// buffers are freed either way.
#[derive(Default)]
pub(crate) struct Graveyard {
    graves: Vec<Grave>,
}

/// One buried value: a heap copy and how to drop and free it.
struct Grave {
    drop_fn: unsafe fn(*mut u8),
    ptr: *mut u8,
    layout: Layout,
}

impl Graveyard {
    /// Moves the value at `ptr` into the graveyard. Values without a drop
    /// function are simply forgotten.
    ///
    /// # Safety
    /// `ptr` must point to an initialised value of `layout` that `drop_fn` may
    /// drop; the caller must treat the original as moved out.
    pub(crate) unsafe fn bury(
        &mut self,
        ptr: *mut u8,
        layout: Layout,
        drop_fn: Option<unsafe fn(*mut u8)>,
    ) {
        let Some(drop_fn) = drop_fn else { return };
        let copy = if layout.size() == 0 {
            std::ptr::without_provenance_mut::<u8>(layout.align())
        } else {
            // SAFETY: `layout` has non-zero size.
            let p = unsafe { std::alloc::alloc(layout) };
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            // SAFETY: `p` is fresh and `layout.size()` bytes long; `ptr` is a valid value.
            unsafe { std::ptr::copy_nonoverlapping(ptr, p, layout.size()) };
            p
        };
        self.graves.push(Grave {
            drop_fn,
            ptr: copy,
            layout,
        });
    }
}

impl Drop for Graveyard {
    fn drop(&mut self) {
        if self.graves.is_empty() {
            return;
        }
        struct FreeAll<'a>(&'a [Grave]);
        impl Drop for FreeAll<'_> {
            fn drop(&mut self) {
                for grave in self.0 {
                    if grave.layout.size() != 0 {
                        // SAFETY: allocated in `bury` with this layout.
                        unsafe { std::alloc::dealloc(grave.ptr, grave.layout) };
                    }
                }
            }
        }
        let _free = FreeAll(&self.graves);
        let values = self.graves.iter().map(|g| (g.drop_fn, g.ptr));
        // SAFETY: each buried copy is an initialised value, dropped once here.
        unsafe { crate::storage::archetype::drop_each(values) };
    }
}
