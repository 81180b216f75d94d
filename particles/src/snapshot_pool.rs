//! Snapshot recycling: the render thread hands replaced snapshots back to
//! the game thread, which rebuilds the next one in their allocations.
//!
//! A snapshot is a few large arrays (about 52 bytes per particle). Building
//! a fresh one every frame means allocating them, and for large systems
//! the allocator maps them from the kernel: every page is then faulted in
//! and zeroed on first write, and unmapped again when the render thread
//! drops the old snapshot. Copying into the arrays of a snapshot the render
//! thread is done with costs none of that.
//!
//! ```text
//! game thread                              render thread
//! pool.build(&instance) ── snapshot N ──►  proxy.set_dynamic_data(N)
//!   reuses snapshot N-2's arrays   ◄────── returns N-1 (the one replaced)
//! ```
//!
//! The channel is bounded: when the game side does not take snapshots back
//! (it builds them some other way), the proxy drops them.

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::dynamic_data::ParticleSystemDynamicData;
use crate::system_instance::ParticleSystemInstance;

/// Snapshots waiting for reuse; at most this many are kept.
const KEPT: usize = 2;

/// The game side of snapshot recycling; see the module docs.
#[derive(Clone, Debug)]
pub struct SnapshotPool {
    returned: Receiver<ParticleSystemDynamicData>,
    give_back: Sender<ParticleSystemDynamicData>,
}

impl Default for SnapshotPool {
    fn default() -> Self {
        Self::new()
    }
}

impl SnapshotPool {
    /// An empty pool.
    pub fn new() -> Self {
        let (give_back, returned) = crossbeam_channel::bounded(KEPT);
        SnapshotPool { returned, give_back }
    }

    /// A snapshot of `instance`, built in a returned snapshot's arrays when
    /// one is waiting (fresh ones otherwise).
    pub fn build(&self, instance: &ParticleSystemInstance) -> ParticleSystemDynamicData {
        match self.returned.try_recv() {
            Ok(mut data) => {
                instance.build_dynamic_data_into(&mut data);
                data
            }
            Err(_) => instance.build_dynamic_data(),
        }
    }

    /// What a proxy hands replaced snapshots back through.
    pub fn returner(&self) -> SnapshotReturner {
        SnapshotReturner(self.give_back.clone())
    }

    /// Snapshots waiting for reuse.
    pub fn waiting(&self) -> usize {
        self.returned.len()
    }
}

/// The render side of a [`SnapshotPool`]: gives snapshots back.
#[derive(Clone, Debug)]
pub struct SnapshotReturner(Sender<ParticleSystemDynamicData>);

impl SnapshotReturner {
    /// Gives `data` back for reuse; drops it when the pool is full or gone.
    pub fn give_back(&self, data: ParticleSystemDynamicData) {
        match self.0.try_send(data) {
            Ok(()) | Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn returned_snapshots_are_rebuilt_in_place_and_the_pool_is_bounded() {
        let json = r#"{"emitters": [{
            "name": "e",
            "required": {"material": "M", "blend_mode": "translucent",
                         "screen_alignment": "facing_camera", "sort_mode": "none",
                         "max_particles": 1000},
            "modules": [{"spawn": {"rate": 600.0}}, {"lifetime": {"constant": 1.0}}]
        }]}"#;
        let system = Arc::new(crate::ParticleSystem::from_json_str(json).unwrap());
        let mut instance = ParticleSystemInstance::new(system, 3).unwrap();
        for _ in 0..30 {
            instance.tick(1.0 / 60.0);
        }
        let pool = SnapshotPool::new();
        let first = pool.build(&instance);
        assert_eq!(first, instance.build_dynamic_data());
        let at = first.emitters[0].positions.as_ptr();
        let returner = pool.returner();
        returner.give_back(first);
        assert_eq!(pool.waiting(), 1);
        let again = pool.build(&instance);
        assert_eq!(pool.waiting(), 0);
        assert_eq!(again.emitters[0].positions.as_ptr(), at, "in the returned arrays");
        returner.give_back(again);
        instance.tick(1.0 / 60.0);
        let second = pool.build(&instance);
        assert_eq!(second, instance.build_dynamic_data(), "same contents as a fresh one");
        // Bounded: extra snapshots are dropped, not queued.
        for _ in 0..5 {
            returner.give_back(second.clone());
        }
        assert_eq!(pool.waiting(), KEPT);
        // A pool that is gone makes giving back a no-op.
        drop(pool);
        returner.give_back(second);
    }
}
