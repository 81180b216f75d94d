//! Device-local memory as a discrete GPU has it, on any device.
//!
//! Lavapipe (and an integrated GPU) has one heap that is device-local and
//! host-visible at once, so code that a discrete GPU needs — uploads
//! through staging, read-backs through a host copy, a device-local heap
//! that runs out — might never run. The RHI already writes and reads
//! `GpuOnly` memory only through staging copies, mapped or not; what
//! `DeviceDesc::emulate_discrete_gpu` (`PROXIMA_EMULATE_DISCRETE_GPU=1`)
//! adds is the heap: every device-local allocation (`GpuOnly` buffers, all
//! textures) is charged against a budget taken from the reported heaps
//! (the largest device-local heap, or `PROXIMA_DEVICE_LOCAL_BUDGET_MB`), and
//! one past it is [`RhiError::OutOfDeviceMemory`], said before the driver is
//! asked, with nothing created. The bytes that went through staging are
//! counted either way (`Device::staging_upload_bytes`).

use crate::error::{Result, RhiError};
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that turns the emulation on (`1`).
pub const EMULATE_DISCRETE_GPU_VAR: &str = "PROXIMA_EMULATE_DISCRETE_GPU";
/// The environment variable that sets the emulated device-local budget (MiB).
pub const DEVICE_LOCAL_BUDGET_VAR: &str = "PROXIMA_DEVICE_LOCAL_BUDGET_MB";

/// Whether the environment asks for the emulation.
pub(crate) fn emulation_from_env() -> bool {
    std::env::var(EMULATE_DISCRETE_GPU_VAR).as_deref() == Ok("1")
}

/// The device-local bytes in use against a budget, and the staged bytes.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    /// Device-local bytes allowed (`u64::MAX` without the emulation).
    budget: u64,
    emulated: bool,
    device_local: AtomicU64,
    staging_upload_bytes: AtomicU64,
}

impl MemoryBudget {
    /// Without the emulation nothing is refused here (the driver decides);
    /// with it, the budget is `budget` if given, else
    /// `PROXIMA_DEVICE_LOCAL_BUDGET_MB`, else `device_local_heap` (the
    /// largest device-local heap's size).
    pub fn new(emulated: bool, budget: Option<u64>, device_local_heap: u64) -> Self {
        let from_env =
            || std::env::var(DEVICE_LOCAL_BUDGET_VAR).ok().and_then(|v| v.parse::<u64>().ok()).map(|mb| mb.saturating_mul(1 << 20));
        let budget = if emulated { budget.or_else(from_env).unwrap_or(device_local_heap) } else { u64::MAX };
        Self { budget, emulated, device_local: AtomicU64::new(0), staging_upload_bytes: AtomicU64::new(0) }
    }

    pub fn emulated(&self) -> bool {
        self.emulated
    }

    pub fn budget(&self) -> u64 {
        self.budget
    }

    pub fn device_local_bytes(&self) -> u64 {
        self.device_local.load(Ordering::Relaxed)
    }

    pub fn staging_upload_bytes(&self) -> u64 {
        self.staging_upload_bytes.load(Ordering::Relaxed)
    }

    /// Charges `bytes` of device-local memory, or refuses them (changing
    /// nothing) when they would pass the budget.
    pub fn charge(&self, bytes: u64) -> Result<()> {
        self.device_local
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| used.checked_add(bytes).filter(|&total| total <= self.budget))
            .map(|_| ())
            .map_err(|_| RhiError::OutOfDeviceMemory)
    }

    /// Gives back what [`Self::charge`] took.
    pub fn release(&self, bytes: u64) {
        self.device_local.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Counts bytes uploaded through a staging buffer.
    pub fn note_staged(&self, bytes: u64) {
        self.staging_upload_bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allocation_past_the_budget_is_refused_and_changes_nothing() {
        let b = MemoryBudget { budget: 100, emulated: true, device_local: AtomicU64::new(0), staging_upload_bytes: AtomicU64::new(0) };
        b.charge(60).unwrap();
        assert!(matches!(b.charge(41), Err(RhiError::OutOfDeviceMemory)));
        assert_eq!(b.device_local_bytes(), 60);
        b.charge(40).unwrap();
        b.release(60);
        assert_eq!(b.device_local_bytes(), 40);
        assert!(matches!(b.charge(u64::MAX), Err(RhiError::OutOfDeviceMemory)), "no overflow");
    }
}
