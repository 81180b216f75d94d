//! Stable instance ids and the per-instance random value.
//!
//! Instances live in a dense array so that culling and uploads walk flat
//! memory, and removal is a swap-remove: the last instance moves into the
//! hole. Indices therefore change; callers who need to name an instance
//! across edits hold an [`InstanceId`], a generational handle (the
//! project's style: "generational handles, never references") that maps to
//! the current index in O(1) through `IdSlots` — no hashing. A removed instance's slot is
//! reused with a bumped generation, so an old id never aliases a new instance.
//!
//! UE's ISM hands out indices only (and, with `bSupportRemoveAtSwap`, those
//! indices silently change under the caller); its per-instance random value
//! comes from a random stream consumed in instance order, so removing one
//! instance re-rolls the random value of every later one (visible flicker
//! in materials using PerInstanceRandom). Here the random value is a pure
//! hash of the component's seed and the instance's stable id: it never
//! changes while the instance exists, whatever else is added or removed.

/// A stable name for one instance of one store, valid until that instance is
/// removed or the store is cleared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstanceId {
    slot: u32,
    generation: u32,
}

impl InstanceId {
    /// The slot part; unique among live instances, reused after removal.
    /// This is what the GPU data carries (for picking / hit proxies).
    pub fn slot(self) -> u32 {
        self.slot
    }

    /// The generation part; distinguishes successive users of one slot.
    pub fn generation(self) -> u32 {
        self.generation
    }

    /// Both parts in one `u64` (slot in the low half).
    pub fn to_bits(self) -> u64 {
        u64::from(self.generation) << 32 | u64::from(self.slot)
    }
}

/// Marks a free slot (no instance index).
const FREE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Slot {
    generation: u32,
    index: u32,
}

/// The id → index map: one slot per id ever live at once, a LIFO free list.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct IdSlots {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

impl IdSlots {
    /// Issues an id for the instance now at `index`.
    pub(crate) fn allocate(&mut self, index: u32) -> InstanceId {
        if let Some(slot) = self.free.pop() {
            let s = &mut self.slots[slot as usize];
            s.index = index;
            return InstanceId { slot, generation: s.generation };
        }
        let slot = self.slots.len() as u32;
        self.slots.push(Slot { generation: 0, index });
        InstanceId { slot, generation: 0 }
    }

    /// The current index of `id`, or `None` if it is not live.
    #[inline]
    pub(crate) fn get(&self, id: InstanceId) -> Option<u32> {
        let s = self.slots.get(id.slot as usize)?;
        (s.generation == id.generation && s.index != FREE).then_some(s.index)
    }

    /// Points a live id at its new index (after a swap-remove moved it).
    pub(crate) fn set_index(&mut self, id: InstanceId, index: u32) {
        self.slots[id.slot as usize].index = index;
    }

    /// Frees a live id's slot. A slot whose generation would wrap is retired
    /// instead of reused, so an id can never come back to life.
    pub(crate) fn release(&mut self, id: InstanceId) {
        let s = &mut self.slots[id.slot as usize];
        s.index = FREE;
        if s.generation < u32::MAX {
            s.generation += 1;
            self.free.push(id.slot);
        }
    }

    /// Frees every live slot (in ascending slot order, so the free list and
    /// hence future ids are deterministic).
    pub(crate) fn release_all(&mut self, live: &[InstanceId]) {
        let mut sorted: Vec<InstanceId> = live.to_vec();
        sorted.sort_unstable_by_key(|id| std::cmp::Reverse(id.slot));
        for id in sorted {
            self.release(id);
        }
    }
}

/// SplitMix64's finaliser: a cheap, well-mixed 64-bit hash step. Small and
/// deterministic on every platform, which is all a per-instance random needs.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The per-instance random value in `[0, 1)` (UE's `PerInstanceRandom`),
/// a function of the component's seed and the instance's stable id only.
#[inline]
pub fn instance_random(seed: u32, id: InstanceId) -> f32 {
    let h = mix64(mix64(u64::from(seed)) ^ id.to_bits());
    // 24 high bits → exactly representable, strictly below 1.
    (h >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_ids_do_not_alias_new_ones() {
        let mut slots = IdSlots::default();
        let a = slots.allocate(0);
        slots.release(a);
        let b = slots.allocate(0);
        assert_eq!(a.slot(), b.slot());
        assert_ne!(a, b);
        assert_eq!(slots.get(a), None);
        assert_eq!(slots.get(b), Some(0));
    }

    #[test]
    fn random_is_in_unit_interval_and_spread() {
        let mut slots = IdSlots::default();
        let ids: Vec<_> = (0..10_000).map(|i| slots.allocate(i)).collect();
        let values: Vec<f32> = ids.iter().map(|&id| instance_random(7, id)).collect();
        assert!(values.iter().all(|v| (0.0..1.0).contains(v)));
        let mean = values.iter().sum::<f32>() / values.len() as f32;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
    }
}
