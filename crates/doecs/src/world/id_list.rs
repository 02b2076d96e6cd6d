//! Short lists of component ids that stay on the stack: the components of
//! one structural change, handed to its hooks and removal logs. Bundles
//! have a few components, so firing hooks for one allocates nothing; a
//! bundle with more than eight spills to the heap.

use crate::component::ComponentId;

/// A short list of component ids, on the stack up to eight (a bundle's
/// components, for its hooks): firing hooks allocates nothing for the
/// bundles programs use.
pub(crate) struct IdList {
    inline: [ComponentId; 8],
    len: usize,
    heap: Vec<ComponentId>,
}

impl IdList {
    pub(crate) fn new() -> Self {
        IdList {
            inline: [ComponentId::from_index(0); 8],
            len: 0,
            heap: Vec::new(),
        }
    }

    #[inline]
    pub(crate) fn from_slice(ids: &[ComponentId]) -> Self {
        let mut list = IdList::new();
        match list.inline.get_mut(..ids.len()) {
            Some(inline) => inline.copy_from_slice(ids),
            None => list.heap = ids.to_vec(),
        }
        list.len = ids.len();
        list
    }

    pub(crate) fn push(&mut self, id: ComponentId) {
        if self.len < self.inline.len() {
            self.inline[self.len] = id;
        } else {
            if self.heap.is_empty() {
                self.heap.extend_from_slice(&self.inline);
            }
            self.heap.push(id);
        }
        self.len += 1;
    }

    pub(crate) fn as_slice(&self) -> &[ComponentId] {
        if self.len <= self.inline.len() {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }
}
