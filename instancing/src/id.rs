//! Stable instance ids and the per-instance random value.
//!
//! Instances live in a dense array so that culling and uploads walk flat
//! memory, and removal is a swap-remove: the last instance moves into the
//! hole. Indices therefore change; callers who need to name an instance
//! across edits hold an [`InstanceId`], a generational handle (the
//! project's style: "generational handles, never references") that maps to
//! the current index in O(1) through the workspace's slot storage
//! ([`rhi_vulkan::Slots`]) — no hashing. A removed instance's slot is
//! reused with a bumped generation, so an old id never aliases a new instance.
//!
//! UE's ISM hands out indices only (and, with `bSupportRemoveAtSwap`, those
//! indices silently change under the caller); its per-instance random value
//! comes from a random stream consumed in instance order, so removing one
//! instance re-rolls the random value of every later one (visible flicker
//! in materials using PerInstanceRandom). Here the random value is a pure
//! hash of the component's seed and the instance's stable id: it never
//! changes while the instance exists, whatever else is added or removed.

rhi_vulkan::slot_key!(
    /// A stable name for one instance of one store, valid until that
    /// instance is removed or the store is cleared. Its index is what the
    /// GPU data carries (for picking / hit proxies).
    pub struct InstanceId
);

/// SplitMix64's finaliser (the workspace's one, [`renderer::mix64`]).
pub use renderer::mix64;

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
    fn random_is_in_unit_interval_and_spread() {
        let mut slots = rhi_vulkan::Slots::<InstanceId, u32>::default();
        let ids: Vec<_> = (0..10_000).map(|i| slots.insert(i)).collect();
        let values: Vec<f32> = ids.iter().map(|&id| instance_random(7, id)).collect();
        assert!(values.iter().all(|v| (0.0..1.0).contains(v)));
        let mean = values.iter().sum::<f32>() / values.len() as f32;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
    }
}
