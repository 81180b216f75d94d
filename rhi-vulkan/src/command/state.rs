//! The recording state a [`super::CommandList`] checks every command
//! against (Vulkan's own notion of a command buffer's state): the pass it is
//! in, the pipeline bound and what that pipeline needs, the bind groups,
//! streams and push constants bound, and the limits a draw's ranges must
//! stay within.

use super::{RenderingContents, MAX_BIND_GROUPS, MAX_VERTEX_STREAMS};
use crate::error::{RhiError, Unbound};
use ash::vk;

/// A pipeline as the command list sees it while it is bound: everything a
/// draw or dispatch is checked against, copied once per `bind_pipeline`.
#[derive(Clone, Copy)]
pub(crate) struct BoundPipeline {
    pub(crate) layout: vk::PipelineLayout,
    pub(crate) bind_point: vk::PipelineBindPoint,
    pub(crate) push: Option<(vk::ShaderStageFlags, u32)>,
    pub(crate) sets: SetLayouts,
    pub(crate) streams: VertexStreams,
    /// [`RenderingLayout::key`] of the formats it was built for (graphics).
    pub(crate) rendering: Option<u64>,
}

/// The set layouts of a pipeline layout, by group index.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct SetLayouts {
    pub raw: [vk::DescriptorSetLayout; MAX_BIND_GROUPS],
    pub count: u8,
    /// Bit `i`: group `i` has no bindings (a gap below a higher group, as
    /// when a shader declares groups 0 and 2): nothing need be bound there.
    pub empty: u8,
}

impl SetLayouts {
    /// The first non-empty group of this layout that `bound` (the sets
    /// bound, by group) lacks or has bound with another layout; `None` when
    /// every one is bound.
    pub fn first_unbound(&self, bound: &[vk::DescriptorSetLayout]) -> Option<u32> {
        (0..usize::from(self.count)).find(|&i| self.empty & (1 << i) == 0 && bound[i] != self.raw[i]).map(|i| i as u32)
    }
}

/// One vertex stream of a pipeline: what a draw's range is checked against.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct VertexStream {
    pub stride: u32,
    pub per_instance: bool,
    /// Bytes one element reads past its start (the furthest attribute end).
    pub span: u32,
}

#[derive(Clone, Copy, Default)]
pub(crate) struct VertexStreams {
    pub streams: [VertexStream; MAX_VERTEX_STREAMS],
    pub count: u8,
}

/// The render pass a command list is inside.
#[derive(Clone, Copy)]
pub(crate) struct OpenPass {
    /// [`RenderingLayout::key`] of its attachments.
    pub(crate) layout: u64,
    pub(crate) contents: RenderingContents,
}

/// What has been recorded so far, as far as the next command's validity goes
/// (Vulkan's "state" of a command buffer: pass, pipeline, bound sets and
/// streams, dynamic state). Every command checks it before reaching Vulkan.
#[derive(Default)]
pub(crate) struct Recording {
    pub(crate) pass: Option<OpenPass>,
    pub(crate) pipeline: Option<BoundPipeline>,
    /// The layout each bound set was bound with (null: none), by group index.
    pub(crate) sets: [vk::DescriptorSetLayout; MAX_BIND_GROUPS],
    /// Bytes available from each bound vertex stream's offset.
    pub(crate) vertex: [Option<u64>; MAX_VERTEX_STREAMS],
    /// Indices available from the bound index buffer's offset.
    pub(crate) index: Option<u64>,
    /// Which 4-byte words of the bound layout's push-constant block have
    /// been written (Vulkan requires every one a shader uses to be set).
    pub(crate) push_written: u128,
    pub(crate) viewport: bool,
    pub(crate) scissor: bool,
    /// Whether the state above is complete for a draw (`None`: not yet checked).
    pub(crate) draw_ready: Option<bool>,
    /// What the bound streams hold, computed with `draw_ready` (valid while
    /// it is `Some(true)`), so a draw checks its ranges in two comparisons.
    pub(crate) limits: DrawLimits,
    /// Secondaries executed by this primary (each may run once).
    pub(crate) executed: Vec<vk::CommandBuffer>,
}

/// Elements the bound vertex streams hold, by step rate: the least over the
/// bound pipeline's streams of that rate (`u64::MAX` where it reads none).
#[derive(Clone, Copy, Default)]
pub(crate) struct DrawLimits {
    pub(crate) vertices: u64,
    pub(crate) instances: u64,
}

/// Elements of stream `st` that `avail` bytes from its offset hold: element
/// `k` reads up to `k * stride + span` (`u64::MAX`: any number, a zero stride).
pub(crate) fn stream_elements(st: &VertexStream, avail: u64) -> u64 {
    match avail.checked_sub(u64::from(st.span)) {
        None => 0,
        Some(_) if st.stride == 0 => u64::MAX,
        Some(rest) => rest / u64::from(st.stride) + 1,
    }
}

/// Whether elements `first..first + count` lie among the first `limit`
/// (an empty range always does).
#[inline]
pub(crate) fn holds(limit: u64, first: u32, count: u32) -> bool {
    count == 0 || u64::from(first) + u64::from(count) <= limit
}

/// The largest push-constant block command lists track (bytes; devices
/// offer 128–256).
pub(crate) const MAX_PUSH_CONSTANT_BYTES: u32 = 512;

/// The bits of the 4-byte words `start..end` (bytes) of a push-constant block.
pub(crate) fn push_words(start: u32, end: u32) -> u128 {
    let (a, b) = (start / 4, end.div_ceil(4).min(128));
    let upto = |n: u32| if n >= 128 { u128::MAX } else { (1u128 << n) - 1 };
    upto(b) & !upto(a)
}

/// Whether every word of `p`'s push-constant block has been written.
pub(crate) fn push_complete(p: &BoundPipeline, written: u128) -> bool {
    match p.push {
        None => true,
        Some((_, size)) => {
            let all = push_words(0, size);
            written & all == all
        }
    }
}

/// The error for `command` recorded without `missing` bound or set.
pub(crate) fn not_bound(command: &'static str, missing: Unbound) -> RhiError {
    RhiError::NotBound { command, missing }
}

/// `offset + size <= len` without overflow.
pub(crate) fn fits(offset: u64, size: u64, len: u64) -> bool {
    offset.checked_add(size).is_some_and(|end| end <= len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_limits_are_exact_at_the_boundaries() {
        // Element k of a stride-24 stream reading 24 bytes ends at 24k + 24.
        let st = VertexStream { stride: 24, per_instance: true, span: 24 };
        assert_eq!(stream_elements(&st, 96), 4);
        assert_eq!(stream_elements(&st, 95), 3);
        assert_eq!(stream_elements(&st, 23), 0, "less than one element");
        // A span shorter than the stride: the last element need not be whole.
        let st = VertexStream { stride: 16, per_instance: false, span: 8 };
        assert_eq!(stream_elements(&st, 40), 3, "elements 0, 1, 2 end at 8, 24, 40");
        let zero = VertexStream { stride: 0, per_instance: false, span: 8 };
        assert_eq!(stream_elements(&zero, 8), u64::MAX, "every element reads the same 8 bytes");
        assert_eq!(stream_elements(&zero, 7), 0);
        // Element 2^33 - 2 of the widest stride: no overflow.
        let wide = VertexStream { stride: u32::MAX, per_instance: true, span: 4 };
        assert!(!holds(stream_elements(&wide, u64::MAX), u32::MAX, u32::MAX));
        assert!(holds(4, 0, 4) && !holds(4, 1, 4) && !holds(4, 4, 1));
        assert!(holds(0, u32::MAX, 0), "an empty range always fits");
        assert!(!holds(u64::from(u32::MAX), u32::MAX, u32::MAX), "first + count past u32 does not wrap");
    }

    #[test]
    fn push_words_cover_the_written_bytes() {
        assert_eq!(push_words(0, 16), 0b1111);
        assert_eq!(push_words(8, 16), 0b1100);
        assert_eq!(push_words(4, 6), 0b0010, "a partial word counts as written");
        assert_eq!(push_words(0, MAX_PUSH_CONSTANT_BYTES), u128::MAX);
        assert_eq!(push_words(16, 16), 0);
    }

    #[test]
    fn empty_groups_need_no_binding() {
        use ash::vk::Handle;
        let l = |n: u64| vk::DescriptorSetLayout::from_raw(n);
        let mut raw = [vk::DescriptorSetLayout::null(); MAX_BIND_GROUPS];
        raw[..3].copy_from_slice(&[l(1), l(2), l(3)]);
        let sets = SetLayouts { raw, count: 3, empty: 0b010 };
        let mut bound = [vk::DescriptorSetLayout::null(); MAX_BIND_GROUPS];
        bound[0] = l(1);
        bound[2] = l(3);
        assert_eq!(sets.first_unbound(&bound), None, "group 1 is a gap");
        bound[2] = l(9);
        assert_eq!(sets.first_unbound(&bound), Some(2), "group 2 bound with another layout");
        let full = SetLayouts { empty: 0, ..sets };
        bound[2] = l(3);
        assert_eq!(full.first_unbound(&bound), Some(1), "group 1 has bindings");
    }
}
