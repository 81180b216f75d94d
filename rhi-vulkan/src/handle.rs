//! Generational handles and the pools that own the objects behind them.
//!
//! Everything the RHI creates (buffers, textures, pipelines…) lives in a
//! [`Pool`] inside the device and is named by a [`Handle`]: a plain `Copy`
//! index + generation that can cross threads, be hashed into a draw command
//! and be compared, without borrowing the device. A destroyed object's slot is
//! reused with a new generation, so a stale handle is detected instead of
//! silently naming the new object (wgpu-core ids work the same way).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// A generational reference to an object of type `T` owned by the device.
pub struct Handle<T> {
    index: u32,
    generation: u32,
    _marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// The slot index, dense from 0; useful as a small sort key.
    pub fn index(self) -> u32 {
        self.index
    }

    /// The generation of the slot when this handle was made.
    pub fn generation(self) -> u32 {
        self.generation
    }

    /// Packs index and generation into one `u64` (for sort keys and hashing).
    pub fn to_bits(self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.index)
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && self.generation == other.generation
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.index, self.generation).cmp(&(other.index, other.generation))
    }
}
impl<T> Hash for Handle<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.to_bits().hash(state);
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = std::any::type_name::<T>().rsplit("::").next().unwrap_or("?");
        write!(f, "{name}#{}v{}", self.index, self.generation)
    }
}

struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

/// Dense storage of `T` addressed by [`Handle<T>`].
pub(crate) struct Pool<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Self { slots: Vec::new(), free: Vec::new(), live: 0 }
    }
}

impl<T> Pool<T> {
    pub(crate) fn insert(&mut self, value: T) -> Handle<T> {
        self.live += 1;
        if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            slot.value = Some(value);
            return Handle { index, generation: slot.generation, _marker: PhantomData };
        }
        let index = u32::try_from(self.slots.len()).expect("more than 2^32 live RHI objects");
        self.slots.push(Slot { generation: 0, value: Some(value) });
        Handle { index, generation: 0, _marker: PhantomData }
    }

    pub(crate) fn get(&self, handle: Handle<T>) -> Option<&T> {
        let slot = self.slots.get(handle.index as usize)?;
        if slot.generation != handle.generation {
            return None;
        }
        slot.value.as_ref()
    }

    pub(crate) fn remove(&mut self, handle: Handle<T>) -> Option<T> {
        let slot = self.slots.get_mut(handle.index as usize)?;
        if slot.generation != handle.generation {
            return None;
        }
        let value = slot.value.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(handle.index);
        self.live -= 1;
        Some(value)
    }

    pub(crate) fn len(&self) -> usize {
        self.live
    }

    /// Removes every live value (used at shutdown).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.live = 0;
        self.free.clear();
        self.slots.drain(..).filter_map(|s| s.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_handles_are_rejected_after_reuse() {
        let mut pool = Pool::<&str>::default();
        let a = pool.insert("a");
        assert_eq!(pool.remove(a), Some("a"));
        let b = pool.insert("b");
        assert_eq!(a.index(), b.index(), "slot reused");
        assert_ne!(a, b);
        assert_eq!(pool.get(a), None);
        assert_eq!(pool.get(b), Some(&"b"));
        assert_eq!(pool.remove(a), None);
        assert_eq!(pool.len(), 1);
    }
}
