//! A pass's id stream — its primitives in draw order, what the vertex
//! shader reads at `first_instance + instance` — held as the parts pass
//! setup made it in.
//!
//! Set up in pieces ([`super::gather::PIECE`]), a pass's ids come out as one list
//! per piece: the whole list when the piece was visited in draw order, a
//! range per rank of it when it was counting-sorted. Joining the parts
//! into one list would copy every id once more per frame, only for the
//! upload to copy them again into the frame slot's buffer, and the join
//! would be serial work after the parallel pieces. The upload writes each
//! part at its offset instead (`PerFrameBuffer::write_parts`). A stream set
//! up in one piece is one part.

use super::PrimitiveSlot;
use std::ops::Range;

/// A pass's ids in draw order, as parts of the lists they were made in.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdStream {
    lists: Vec<Vec<PrimitiveSlot>>,
    /// The parts in stream order: (list, range of it); none empty.
    parts: Vec<(u32, Range<u32>)>,
    /// Where each part starts in the stream.
    starts: Vec<u32>,
    len: usize,
}

impl IdStream {
    /// The stream of `parts` — ranges of `lists` — in order. Empty parts
    /// are dropped. Panics when a range is not within its list (a bug in
    /// pass setup, not input).
    pub fn from_parts(lists: Vec<Vec<PrimitiveSlot>>, parts: impl IntoIterator<Item = (usize, Range<usize>)>) -> Self {
        let mut stream = Self { lists, ..Self::default() };
        for (list, range) in parts {
            assert!(range.end <= stream.lists[list].len(), "a part within its list");
            if range.is_empty() {
                continue;
            }
            stream.starts.push(stream.len as u32);
            stream.len += range.len();
            stream.parts.push((list as u32, range.start as u32..range.end as u32));
        }
        stream
    }

    /// Ids that are one list, as they are.
    pub fn whole(ids: Vec<PrimitiveSlot>) -> Self {
        let len = ids.len();
        Self::from_parts(vec![ids], [(0, 0..len)])
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The parts, in stream order: their concatenation is the stream.
    pub fn parts(&self) -> impl Iterator<Item = &[PrimitiveSlot]> + '_ {
        self.parts.iter().map(|(list, r)| &self.lists[*list as usize][r.start as usize..r.end as usize])
    }

    /// The id at `i` in the stream.
    pub fn get(&self, i: usize) -> Option<PrimitiveSlot> {
        if i >= self.len {
            return None;
        }
        let part = self.starts.partition_point(|&s| s as usize <= i) - 1;
        let (list, r) = &self.parts[part];
        Some(self.lists[*list as usize][r.start as usize + i - self.starts[part] as usize])
    }

    /// An order-sensitive digest of the ids (the frame stats'
    /// `draw_list_digest`): the wrapping sum over positions `i` of a mix of
    /// `i << 32 | id` — a multiply by an odd constant and a fold of its
    /// high half into the low (a bijection, so a changed id always changes
    /// its term; not linear, so a swap changes the sum but for a chance
    /// collision). The same however
    /// the stream is split; each id's term independent of the others' (no
    /// chain from one to the next, as a streaming hasher has), so it costs
    /// a multiply and a fold per id, far less than a streaming hasher such as
    /// SipHash. A test of equality, not a hash against an adversary.
    pub fn digest(&self) -> u64 {
        let (mut sum, mut at) = (0u64, 0u64);
        for part in self.parts() {
            sum = part.iter().zip(at..).fold(sum, |sum, (id, i)| {
                let x = (i << 32 | u64::from(id.0)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                sum.wrapping_add(x ^ (x >> 32))
            });
            at += part.len() as u64;
        }
        sum
    }

    /// The stream as one list (the frame uploads the parts).
    #[cfg(test)]
    pub fn to_vec(&self) -> Vec<PrimitiveSlot> {
        self.parts().flatten().copied().collect()
    }
}

impl From<Vec<PrimitiveSlot>> for IdStream {
    fn from(ids: Vec<PrimitiveSlot>) -> Self {
        Self::whole(ids)
    }
}

/// Streams are equal when their ids are, however they are split.
impl PartialEq for IdStream {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.parts().flatten().eq(other.parts().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u32]) -> Vec<PrimitiveSlot> {
        v.iter().copied().map(PrimitiveSlot).collect()
    }

    #[test]
    fn parts_read_as_one_list_in_order() {
        // Rank-major over two pieces: piece 0's [5, 1 | 7], piece 1's [9 | 2, 3].
        let lists = vec![ids(&[5, 1, 7]), ids(&[9, 2, 3])];
        let stream = IdStream::from_parts(lists, [(0, 0..2), (1, 0..1), (0, 2..2), (0, 2..3), (1, 1..3)]);
        let whole = ids(&[5, 1, 9, 7, 2, 3]);
        assert_eq!(stream.len(), 6);
        assert_eq!(stream.parts().count(), 4, "the empty part is dropped");
        assert_eq!(stream.to_vec(), whole);
        assert_eq!((0..7).map(|i| stream.get(i)).collect::<Vec<_>>(), whole.iter().copied().map(Some).chain([None]).collect::<Vec<_>>());
        assert_eq!(stream, IdStream::whole(whole.clone()));
        assert_eq!(stream.digest(), IdStream::whole(whole).digest(), "the split does not show in the digest");
        // Two ids swapped, one changed, one left out: other streams, other digests.
        for other in [&[5, 1, 9, 7, 3, 2][..], &[5, 1, 9, 7, 2, 4], &[5, 1, 9, 7, 2]] {
            assert_ne!(stream, IdStream::whole(ids(other)));
            assert_ne!(stream.digest(), IdStream::whole(ids(other)).digest(), "{other:?}");
        }
    }

    #[test]
    fn an_empty_stream_has_no_parts() {
        let stream = IdStream::whole(Vec::new());
        assert_eq!((stream.len(), stream.parts().count(), stream.get(0), stream.digest()), (0, 0, None, 0));
        assert_eq!(stream, IdStream::default());
    }
}
