//! A set of material slots for the registry's pending work between two
//! scene updates (blocks to upload, commands to rebuild, bind groups to
//! make): a bit per slot, so marking or unmarking one costs the same
//! however many are pending or live, and the slots in the order they were
//! marked, so taking them costs what was marked — never a walk of the
//! table. Slots are small dense integers, so the bits take a bit per
//! slot of the table and stay in the CPU's caches where a hash set of
//! 100,000 slots would not.

use std::collections::BTreeSet;

/// Material slots (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct SlotSet {
    /// Bit `s % 64` of word `s / 64`: slot `s` is in the set.
    bits: Vec<u64>,
    /// Slots inserted since the last take, in order; a removed one stays
    /// (its bit is clear) and one inserted again appears twice.
    marked: Vec<u32>,
}

impl SlotSet {
    fn word(slot: u32) -> (usize, u64) {
        ((slot / 64) as usize, 1 << (slot % 64))
    }

    /// Adds `slot`.
    pub fn insert(&mut self, slot: u32) {
        let (w, bit) = Self::word(slot);
        if self.bits.len() <= w {
            self.bits.resize(w + 1, 0);
        }
        if self.bits[w] & bit == 0 {
            self.bits[w] |= bit;
            self.marked.push(slot);
        }
    }

    /// Adds every slot of `slots`.
    pub fn extend(&mut self, slots: impl IntoIterator<Item = u32>) {
        for s in slots {
            self.insert(s);
        }
    }

    /// Takes `slot` out (nothing if it is not in).
    pub fn remove(&mut self, slot: u32) {
        let (w, bit) = Self::word(slot);
        if let Some(word) = self.bits.get_mut(w) {
            *word &= !bit;
        }
    }

    /// Whether `slot` is in.
    #[cfg(test)]
    pub fn contains(&self, slot: u32) -> bool {
        let (w, bit) = Self::word(slot);
        self.bits.get(w).is_some_and(|word| word & bit != 0)
    }

    /// Takes every slot out; returns them in order.
    pub fn take(&mut self) -> BTreeSet<u32> {
        let mut slots = std::mem::take(&mut self.marked);
        slots.retain(|&s| {
            let (w, bit) = Self::word(s);
            let was_in = self.bits[w] & bit != 0;
            self.bits[w] &= !bit;
            was_in
        });
        slots.into_iter().collect()
    }

    /// Takes every slot out.
    pub fn clear(&mut self) {
        self.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_come_out_once_in_order_without_the_removed_ones() {
        let mut s = SlotSet::default();
        s.extend([300, 5, 64, 5, 63]);
        s.remove(64);
        s.remove(1000);
        assert!(s.contains(300) && !s.contains(64) && !s.contains(1000));
        s.insert(64);
        s.remove(5);
        assert_eq!(s.take(), BTreeSet::from([63, 64, 300]));
        assert!(s.take().is_empty() && !s.contains(300), "taking empties it");
        s.insert(300);
        assert_eq!(s.take(), BTreeSet::from([300]));
    }
}
