//! The queue's timeline semaphore: one monotonically increasing counter that
//! every submission signals. A value names "everything submitted up to here",
//! which is what frames in flight, the deletion queue and readbacks wait on.
//!
//! It also knows whether the device is lost: once a wait, a query or a
//! submission has answered `VK_ERROR_DEVICE_LOST` (or a wait timed out, or a
//! test called `Device::simulate_device_lost`), every later one answers
//! [`RhiError::DeviceLost`] without asking the driver.

use crate::error::{vk_err, Result, RhiError};
use ash::vk;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// How long a CPU wait on the GPU may take, by default, before it is
/// reported as a lost device ([`crate::DeviceDesc::gpu_wait_timeout`]).
/// Lavapipe executes a million-instance frame in seconds, never minutes.
pub(crate) const DEFAULT_WAIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

pub(crate) struct Timeline {
    pub raw: vk::Semaphore,
    /// The longest a wait may take (ns).
    timeout_ns: u64,
    /// The value the most recent submission signals (0: nothing submitted).
    last_submitted: AtomicU64,
    /// The device is lost: sticky, as a lost device never comes back.
    lost: AtomicBool,
    /// The highest value a query or wait has seen the GPU reach: a lower
    /// bound of what it has completed, read without asking the driver.
    seen_completed: AtomicU64,
}

impl Timeline {
    pub fn new(device: &ash::Device, timeout: std::time::Duration) -> Result<Self> {
        let mut type_info = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE).initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut type_info);
        // SAFETY: valid device, valid create info.
        let raw = unsafe { device.create_semaphore(&info, None) }.map_err(vk_err("vkCreateSemaphore(timeline)"))?;
        let timeout_ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        Ok(Self { raw, timeout_ns, ..Self::null() })
    }

    /// A placeholder before [`Self::new`] (destroying it is a no-op).
    pub fn null() -> Self {
        Self {
            raw: vk::Semaphore::null(),
            timeout_ns: 0,
            last_submitted: AtomicU64::new(0),
            lost: AtomicBool::new(false),
            seen_completed: AtomicU64::new(0),
        }
    }

    /// Whether the device is lost (see the module doc).
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// From now on the device is lost.
    pub fn mark_lost(&self) {
        self.lost.store(true, Ordering::Release);
    }

    /// [`RhiError::DeviceLost`] once the device is lost.
    pub fn check_lost(&self) -> Result<()> {
        if self.is_lost() {
            return Err(RhiError::DeviceLost);
        }
        Ok(())
    }

    /// Passes `r` on, noting a lost device.
    pub fn note<T>(&self, r: Result<T>) -> Result<T> {
        if matches!(r, Err(RhiError::DeviceLost)) {
            self.mark_lost();
        }
        r
    }

    pub fn last_submitted(&self) -> u64 {
        self.last_submitted.load(Ordering::Acquire)
    }

    /// Reserves the next value; call with the queue lock held so values reach
    /// the queue in increasing order.
    pub fn next_value(&self) -> u64 {
        self.last_submitted.load(Ordering::Acquire) + 1
    }

    pub fn mark_submitted(&self, value: u64) {
        self.last_submitted.store(value, Ordering::Release);
    }

    pub fn completed(&self, device: &ash::Device) -> Result<u64> {
        self.check_lost()?;
        // SAFETY: the semaphore is a live timeline semaphore of `device`.
        let r = unsafe { device.get_semaphore_counter_value(self.raw) };
        let value = self.note(r.map_err(vk_err("vkGetSemaphoreCounterValue")))?;
        self.seen_completed.fetch_max(value, Ordering::AcqRel);
        Ok(value)
    }

    /// A value the GPU is known to have reached (the highest a query or a
    /// wait saw), without asking the driver; what it has completed may be more.
    pub fn completed_hint(&self) -> u64 {
        self.seen_completed.load(Ordering::Acquire)
    }

    /// The longest a wait may take (ns).
    #[cfg(feature = "window")]
    pub fn timeout_ns(&self) -> u64 {
        self.timeout_ns
    }

    /// Waits, at most the timeout, until the GPU reaches `value`; a timeout
    /// is [`RhiError::DeviceLost`] (and the device lost from then on).
    pub fn wait(&self, device: &ash::Device, value: u64) -> Result<()> {
        self.check_lost()?;
        let r = match self.wait_bounded(device, value) {
            Ok(true) => {
                self.seen_completed.fetch_max(value, Ordering::AcqRel);
                Ok(())
            }
            Ok(false) => Err(RhiError::DeviceLost),
            Err(e) => Err(e),
        };
        self.note(r)
    }

    /// Waits at most the timeout until the GPU reaches `value`, whether or
    /// not the device is marked lost (shutdown): `Ok(false)` when the time
    /// ran out, an error when the driver answered one.
    pub fn wait_bounded(&self, device: &ash::Device, value: u64) -> Result<bool> {
        if value == 0 {
            return Ok(true);
        }
        let semaphores = [self.raw];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default().semaphores(&semaphores).values(&values);
        // SAFETY: the semaphore is live and the arrays outlive the call.
        match unsafe { device.wait_semaphores(&info, self.timeout_ns) } {
            Ok(()) => Ok(true),
            Err(vk::Result::TIMEOUT) => Ok(false),
            Err(e) => Err(vk_err("vkWaitSemaphores")(e)),
        }
    }

    pub fn destroy(&self, device: &ash::Device) {
        // SAFETY: called once at shutdown after the device is idle.
        unsafe { device.destroy_semaphore(self.raw, None) };
    }
}
