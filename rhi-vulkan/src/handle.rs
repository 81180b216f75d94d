//! Generational handles and the slot storage behind them: the workspace's
//! one implementation of the pattern.
//!
//! Everything the RHI creates (buffers, textures, pipelines…) lives in a
//! pool inside the device and is named by a [`Handle`]: a plain `Copy`
//! index + generation that can cross threads, be hashed into a draw command
//! and be compared, without borrowing the device. A destroyed object's slot is
//! reused with a new generation, so a stale handle is detected instead of
//! silently naming the new object (wgpu-core ids work the same way).
//!
//! The crates above use the same storage, [`Slots`], for their own ids
//! instead of keeping copies: engine-core's actors and components, the
//! instancing crate's instance ids and the renderer's material and texture
//! ids. An id type is a [`SlotKey`]: `Handle<T>`, a newtype made by
//! [`slot_key!`], or a type that packs index and generation its own way
//! (material ids index a GPU table in their low bits) and says how many
//! slots and generations fit.
//!
//! Policy, the same for every user: freed slots are reused oldest first
//! (generations are spent evenly, and a seed and a sequence of calls give
//! the same ids on every run), and a slot whose generations are used up is
//! retired, never handed out again, so no id ever names two objects.
use std::collections::VecDeque;
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

/// An id of [`Slots`]: a slot index and the slot's generation.
pub trait SlotKey: Copy + Eq {
    /// The most slots (indices `0..MAX_SLOTS`).
    const MAX_SLOTS: u32 = u32::MAX;
    /// The last generation a slot reaches; a slot freed in it is retired.
    const MAX_GENERATION: u32 = u32::MAX;
    /// The id of `index` in `generation` (both within the limits above).
    fn from_parts(index: u32, generation: u32) -> Self;
    /// The slot index.
    fn index(self) -> u32;
    /// The slot's generation this id was handed out in.
    fn generation(self) -> u32;
}

impl<T> SlotKey for Handle<T> {
    fn from_parts(index: u32, generation: u32) -> Self {
        Handle { index, generation, _marker: PhantomData }
    }
    fn index(self) -> u32 {
        self.index
    }
    fn generation(self) -> u32 {
        self.generation
    }
}

/// Defines a named generational id (a [`SlotKey`] for [`Slots`]):
/// `slot_key!(/// docs \n pub struct ActorId);` makes a `Copy`, hashable,
/// ordered newtype with `index()`, `generation()`, `to_bits()`/`from_bits()`
/// and a `Name#indexvgeneration` debug form.
#[macro_export]
macro_rules! slot_key {
    ($(#[$meta:meta])* $vis:vis struct $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis struct $name {
            index: u32,
            generation: u32,
        }
        impl $name {
            /// The slot index, dense from 0; unique among live ids, reused after removal.
            pub fn index(self) -> u32 {
                self.index
            }
            /// The slot's generation this id was handed out in.
            pub fn generation(self) -> u32 {
                self.generation
            }
            /// Index and generation in one `u64` (index in the low half).
            pub fn to_bits(self) -> u64 {
                (u64::from(self.generation) << 32) | u64::from(self.index)
            }
            /// The id [`Self::to_bits`] packed.
            pub fn from_bits(bits: u64) -> Self {
                Self { index: bits as u32, generation: (bits >> 32) as u32 }
            }
        }
        impl $crate::SlotKey for $name {
            fn from_parts(index: u32, generation: u32) -> Self {
                Self { index, generation }
            }
            fn index(self) -> u32 {
                self.index
            }
            fn generation(self) -> u32 {
                self.generation
            }
        }
        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}#{}v{}", stringify!($name), self.index, self.generation)
            }
        }
    };
}

struct Slot<V> {
    /// The live value's generation, or the one the next value here gets
    /// (past `K::MAX_GENERATION` once retired).
    generation: u32,
    value: Option<V>,
}

/// Values addressed by generational ids `K`: insertion hands out an id,
/// removal frees its slot for the next generation, and an id whose slot
/// moved on (a stale id) finds nothing.
pub struct Slots<K, V> {
    slots: Vec<Slot<V>>,
    /// Free slots, oldest first.
    free: VecDeque<u32>,
    live: usize,
    _key: PhantomData<fn(K) -> K>,
}

impl<K: SlotKey, V> Default for Slots<K, V> {
    fn default() -> Self {
        Self { slots: Vec::new(), free: VecDeque::new(), live: 0, _key: PhantomData }
    }
}

impl<K: SlotKey, V: fmt::Debug> fmt::Debug for Slots<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter().map(|(k, v)| ((k.index(), k.generation()), v))).finish()
    }
}

impl<K: SlotKey, V: Clone> Clone for Slots<K, V> {
    fn clone(&self) -> Self {
        let slots = self.slots.iter().map(|s| Slot { generation: s.generation, value: s.value.clone() }).collect();
        Self { slots, free: self.free.clone(), live: self.live, _key: PhantomData }
    }
}

impl<K: SlotKey, V: PartialEq> PartialEq for Slots<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.free == other.free
            && self.slots.len() == other.slots.len()
            && self.slots.iter().zip(&other.slots).all(|(a, b)| a.generation == b.generation && a.value == b.value)
    }
}

impl<K: SlotKey, V> Slots<K, V> {
    /// The id the next [`Self::insert`] hands out, or `None` when every slot
    /// is live or retired.
    pub fn next_key(&self) -> Option<K> {
        match self.free.front() {
            Some(&index) => Some(K::from_parts(index, self.slots[index as usize].generation)),
            None => {
                let index = u32::try_from(self.slots.len()).ok().filter(|&i| i < K::MAX_SLOTS)?;
                Some(K::from_parts(index, 0))
            }
        }
    }

    /// Stores `value` under the id [`Self::next_key`] returned, or gives it
    /// back when no slot is left.
    pub fn try_insert(&mut self, value: V) -> Result<K, V> {
        let Some(key) = self.next_key() else {
            return Err(value);
        };
        if self.free.front() == Some(&key.index()) {
            self.free.pop_front();
            self.slots[key.index() as usize].value = Some(value);
        } else {
            self.slots.push(Slot { generation: 0, value: Some(value) });
        }
        self.live += 1;
        Ok(key)
    }

    /// Stores `value` under a new id.
    ///
    /// # Panics
    /// When every slot is live or retired (`K::MAX_SLOTS` of them); callers
    /// that can reach the limit use [`Self::try_insert`].
    pub fn insert(&mut self, value: V) -> K {
        match self.try_insert(value) {
            Ok(key) => key,
            Err(_) => panic!("more than {} live slots", K::MAX_SLOTS),
        }
    }

    /// The value of a live id.
    pub fn get(&self, key: K) -> Option<&V> {
        let slot = self.slots.get(key.index() as usize)?;
        if slot.generation != key.generation() {
            return None;
        }
        slot.value.as_ref()
    }

    /// The value of a live id, to change.
    pub fn get_mut(&mut self, key: K) -> Option<&mut V> {
        let slot = self.slots.get_mut(key.index() as usize)?;
        if slot.generation != key.generation() {
            return None;
        }
        slot.value.as_mut()
    }

    /// The values of several live ids at once, to change (in parallel, say),
    /// in the order of `keys`: `None` for a stale id or one listed twice
    /// (only its first place gets the value). Costs O(k log k) for k ids,
    /// whatever the number of slots.
    pub fn get_disjoint_mut(&mut self, keys: &[K]) -> Vec<Option<&mut V>> {
        let mut order: Vec<(u32, usize)> = keys.iter().enumerate().map(|(at, k)| (k.index(), at)).collect();
        order.sort_unstable();
        let mut out: Vec<Option<&mut V>> = (0..keys.len()).map(|_| None).collect();
        let mut rest: &mut [Slot<V>] = &mut self.slots;
        let mut base = 0u32;
        let mut last = None;
        for (index, at) in order {
            if last == Some(index) || index < base || (index - base) as usize >= rest.len() {
                continue;
            }
            last = Some(index);
            let tail = std::mem::take(&mut rest).split_at_mut((index - base) as usize).1;
            let (one, after) = tail.split_at_mut(1);
            rest = after;
            base = index + 1;
            let slot = &mut one[0];
            if slot.generation == keys[at].generation() {
                out[at] = slot.value.as_mut();
            }
        }
        out
    }

    /// Whether `key` names a live value.
    pub fn contains(&self, key: K) -> bool {
        self.get(key).is_some()
    }

    /// Takes a live id's value out and frees its slot for the next
    /// generation (retires it after the last). A stale id changes nothing.
    pub fn remove(&mut self, key: K) -> Option<V> {
        let slot = self.slots.get_mut(key.index() as usize)?;
        if slot.generation != key.generation() {
            return None;
        }
        let value = slot.value.take()?;
        self.live -= 1;
        if slot.generation < K::MAX_GENERATION {
            slot.generation += 1;
            self.free.push_back(key.index());
        } else {
            // Retired: the generation can never match an id again.
            slot.generation = u32::MAX;
        }
        Some(value)
    }

    /// The number of live values.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no value is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The live ids and values, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> + '_ {
        (0u32..).zip(&self.slots).filter_map(|(index, s)| Some((K::from_parts(index, s.generation), s.value.as_ref()?)))
    }

    /// Removes every live value, in slot order (so the ids handed out next
    /// are the same on every run), and returns them.
    pub fn drain(&mut self) -> impl Iterator<Item = V> {
        let live: Vec<K> = self.iter().map(|(k, _)| k).collect();
        live.into_iter().filter_map(|k| self.remove(k)).collect::<Vec<_>>().into_iter()
    }
}

/// The device's storage of one kind of RHI object.
pub(crate) type Pool<T> = Slots<Handle<T>, T>;

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

    #[test]
    fn disjoint_values_come_in_the_order_asked_and_stale_or_repeated_ids_get_none() {
        let mut pool = Pool::<u32>::default();
        let ids: Vec<_> = (0..6).map(|i| pool.insert(i * 10)).collect();
        let gone = ids[2];
        pool.remove(gone);
        let asked = [ids[4], ids[0], gone, ids[5], ids[4], ids[1]];
        let got: Vec<Option<u32>> = pool.get_disjoint_mut(&asked).into_iter().map(|v| v.map(|v| *v)).collect();
        assert_eq!(got, [Some(40), Some(0), None, Some(50), None, Some(10)]);
        for v in pool.get_disjoint_mut(&[ids[3], ids[1]]).into_iter().flatten() {
            *v += 1;
        }
        assert_eq!((pool.get(ids[3]), pool.get(ids[1])), (Some(&31), Some(&11)));
    }

    /// Two slots of two generations each.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    struct Tiny(u32, u32);
    impl SlotKey for Tiny {
        const MAX_SLOTS: u32 = 2;
        const MAX_GENERATION: u32 = 1;
        fn from_parts(index: u32, generation: u32) -> Self {
            Tiny(index, generation)
        }
        fn index(self) -> u32 {
            self.0
        }
        fn generation(self) -> u32 {
            self.1
        }
    }

    #[test]
    fn freed_slots_are_reused_oldest_first_and_retire_after_their_last_generation() {
        let mut slots = Slots::<Tiny, char>::default();
        let (a, b) = (slots.insert('a'), slots.insert('b'));
        assert_eq!((a, b), (Tiny(0, 0), Tiny(1, 0)));
        assert_eq!(slots.next_key(), None, "both slots live");
        assert_eq!(slots.try_insert('c'), Err('c'), "full: the value comes back");
        assert_eq!(slots.remove(b), Some('b'));
        assert_eq!(slots.remove(a), Some('a'));
        assert_eq!(slots.next_key(), Some(Tiny(1, 1)), "the oldest freed slot, next generation");
        let b1 = slots.insert('B');
        let a1 = slots.insert('A');
        assert_eq!((b1, a1), (Tiny(1, 1), Tiny(0, 1)));
        assert_eq!(slots.remove(a1), Some('A'));
        assert_eq!(slots.next_key(), None, "slot 0 spent its generations: retired, not reused");
        assert_eq!(slots.get(a1), None);
        assert_eq!(slots.get(a), None);
        assert_eq!(slots.iter().collect::<Vec<_>>(), [(b1, &'B')]);
    }

    #[test]
    fn drain_empties_in_slot_order_and_ids_stay_stale() {
        let mut slots = Slots::<Handle<u8>, u8>::default();
        let ids: Vec<_> = (0..4).map(|i| slots.insert(i)).collect();
        slots.remove(ids[1]);
        assert_eq!(slots.drain().collect::<Vec<_>>(), [0, 2, 3]);
        assert!(slots.is_empty());
        assert!(ids.iter().all(|&id| !slots.contains(id)));
        let next: Vec<u32> = (0..4).map(|i| slots.insert(i).index()).collect();
        assert_eq!(next, [1, 0, 2, 3], "freed oldest first: slot 1 before the drained ones, in slot order");
    }
}
