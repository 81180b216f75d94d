//! Which instances changed since the last upload, as coalesced ranges.
//!
//! UE's ISM (before per-instance update support) marks the whole render state
//! dirty on any instance edit and rebuilds the entire instance buffer: moving
//! one tree in a forest of 100,000 re-uploads 100,000 instances. Here every
//! mutation marks the instances it touched, and the proxy uploads only
//! those bytes.
//!
//! The tracker is a bitset plus the list of words that went from clean to
//! dirty, so marking is O(1), taking the ranges is O(dirty words) — never
//! O(instance count) — and the memory is one bit per instance. Ranges come
//! out sorted and coalesced (adjacent dirty instances form one range).

use std::ops::Range;

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct DirtyTracker {
    words: Vec<u64>,
    /// Words that became non-zero since the last take, in marking order.
    /// A word may be listed while zero again (after `unmark`/`truncate`).
    touched: Vec<u32>,
    /// Number of set bits.
    count: u64,
}

impl DirtyTracker {
    #[inline]
    fn word_mut(&mut self, word: usize) -> &mut u64 {
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        &mut self.words[word]
    }

    #[inline]
    fn or_word(&mut self, word: usize, mask: u64) {
        let w = self.word_mut(word);
        let before = *w;
        *w |= mask;
        let added = (*w ^ before).count_ones();
        if before == 0 && added != 0 {
            self.touched.push(word as u32);
        }
        self.count += u64::from(added);
    }

    /// Marks one instance.
    #[inline]
    pub(crate) fn mark(&mut self, index: u32) {
        self.or_word((index / 64) as usize, 1u64 << (index % 64));
    }

    /// Marks a range of instances, a word at a time.
    pub(crate) fn mark_range(&mut self, range: Range<u32>) {
        let (mut i, end) = (range.start, range.end);
        while i < end {
            let bit = i % 64;
            let n = (64 - bit).min(end - i);
            let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << bit };
            self.or_word((i / 64) as usize, mask);
            i += n;
        }
    }

    /// Whether `index` is marked.
    #[cfg(test)]
    pub(crate) fn is_marked(&self, index: u32) -> bool {
        self.words.get((index / 64) as usize).is_some_and(|w| w & (1u64 << (index % 64)) != 0)
    }

    /// Clears one mark.
    pub(crate) fn unmark(&mut self, index: u32) {
        if let Some(w) = self.words.get_mut((index / 64) as usize) {
            let bit = 1u64 << (index % 64);
            if *w & bit != 0 {
                *w &= !bit;
                self.count -= 1;
            }
        }
    }

    /// Drops every mark at or past `len` (the instance count shrank).
    pub(crate) fn truncate(&mut self, len: u32) {
        let first_word = (len / 64) as usize;
        for &word in &self.touched {
            let word = word as usize;
            if word < first_word {
                continue;
            }
            let keep = if word == first_word { (1u64 << (len % 64)) - 1 } else { 0 };
            let w = &mut self.words[word];
            self.count -= u64::from((*w & !keep).count_ones());
            *w &= keep;
        }
    }

    /// Number of marked instances.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// Marked instances in ascending order, without clearing them.
    pub(crate) fn marked(&self) -> Vec<u32> {
        let mut words = self.touched.clone();
        words.sort_unstable();
        words.dedup();
        let mut out = Vec::with_capacity(self.count as usize);
        for word in words {
            let mut w = self.words[word as usize];
            while w != 0 {
                out.push(word * 64 + w.trailing_zeros());
                w &= w - 1;
            }
        }
        out
    }

    /// The marked instances as sorted, coalesced ranges, without clearing.
    pub(crate) fn ranges(&self) -> Vec<Range<u32>> {
        let mut words = self.touched.clone();
        words.sort_unstable();
        words.dedup();
        let mut out: Vec<Range<u32>> = Vec::new();
        for word in words {
            let mut w = self.words[word as usize];
            let base = word * 64;
            while w != 0 {
                let start = w.trailing_zeros();
                let run = (w >> start).trailing_ones();
                let r = base + start..base + start + run;
                match out.last_mut() {
                    Some(last) if last.end == r.start => last.end = r.end,
                    _ => out.push(r),
                }
                w = if start + run >= 64 { 0 } else { w & !(((1u64 << run) - 1) << start) };
            }
        }
        out
    }

    /// The marked instances as sorted, coalesced ranges; clears every mark.
    pub(crate) fn take_ranges(&mut self) -> Vec<Range<u32>> {
        let out = self.ranges();
        self.clear();
        out
    }

    /// Clears every mark in O(touched words).
    pub(crate) fn clear(&mut self) {
        for &word in &self.touched {
            self.words[word as usize] = 0;
        }
        self.touched.clear();
        self.count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_coalesce_across_words() {
        let mut d = DirtyTracker::default();
        d.mark_range(60..70);
        d.mark(70);
        d.mark(200);
        d.mark(5);
        assert_eq!(d.count(), 13);
        assert_eq!(d.take_ranges(), vec![5..6, 60..71, 200..201]);
        assert_eq!(d.count(), 0);
        assert!(d.take_ranges().is_empty());
    }

    #[test]
    fn full_words_and_truncate() {
        let mut d = DirtyTracker::default();
        d.mark_range(0..256);
        assert_eq!(d.count(), 256);
        d.truncate(100);
        assert_eq!(d.count(), 100);
        assert_eq!(d.ranges(), vec![0..100]);
        d.unmark(50);
        assert_eq!(d.take_ranges(), vec![0..50, 51..100]);
    }

    #[test]
    fn marked_lists_in_order() {
        let mut d = DirtyTracker::default();
        for i in [130, 3, 64, 63] {
            d.mark(i);
        }
        assert_eq!(d.marked(), vec![3, 63, 64, 130]);
        assert!(d.is_marked(64) && !d.is_marked(65));
    }
}
