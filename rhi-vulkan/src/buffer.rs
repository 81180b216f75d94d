//! Buffers: creation, the staging upload path, readback and deferred destruction.
//!
//! `GpuOnly` buffers are always written through a staging buffer and a copy,
//! even on lavapipe where all memory is host-visible, so the path that
//! discrete GPUs need is the one that is tested.

use crate::buffer_uses::LastUse;
use crate::conv;
use crate::device::{read, write, Device, Retired};
use crate::error::{range_of, vk_err, Result, RhiError, Usage};
use crate::handle::Handle;
use crate::types::{BufferState, BufferUsage, MemoryLocation};
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};

/// A buffer's description: plain data, used as a cache key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BufferDesc {
    /// Names the buffer in errors and in its gpu-allocator allocation (leak reports).
    pub label: String,
    /// Size in bytes; more than 0 and at most [`crate::DeviceInfo::max_buffer_size`].
    pub size: u64,
    /// What the buffer may be bound or copied as; binding it as anything else
    /// is an [`crate::RhiError::MissingUsage`]. Not empty.
    pub usage: BufferUsage,
    /// Where its memory lives: [`MemoryLocation::GpuOnly`] buffers are written
    /// through staging, the others by [`crate::Device::write_buffer`].
    pub memory: MemoryLocation,
}

impl BufferDesc {
    /// A device-local buffer written through staging (`TRANSFER_DST` is added).
    pub fn gpu_only(label: &str, size: u64, usage: BufferUsage) -> Self {
        Self {
            label: label.into(),
            size,
            usage: usage | BufferUsage::TRANSFER_DST | BufferUsage::TRANSFER_SRC,
            memory: MemoryLocation::GpuOnly,
        }
    }
    /// A host-visible buffer the CPU writes directly (per-frame dynamic data).
    pub fn host_visible(label: &str, size: u64, usage: BufferUsage) -> Self {
        Self { label: label.into(), size, usage, memory: MemoryLocation::CpuToGpu }
    }
    /// A host-visible, cached buffer the GPU writes and the CPU reads.
    pub fn readback(label: &str, size: u64) -> Self {
        Self { label: label.into(), size, usage: BufferUsage::TRANSFER_DST, memory: MemoryLocation::GpuToCpu }
    }
}

/// Handle to a buffer owned by the device.
pub type BufferHandle = Handle<BufferEntry>;

#[doc(hidden)]
pub struct BufferEntry {
    pub(crate) raw: vk::Buffer,
    allocation: Option<Allocation>,
    pub(crate) desc: BufferDesc,
    /// Device-local bytes charged to the device's budget.
    charge: u64,
    /// The submissions that last read and wrote it (`buffer_uses`).
    pub(crate) last_use: LastUse,
}

impl BufferEntry {
    fn mapped(&self) -> Option<*mut u8> {
        if self.desc.memory == MemoryLocation::GpuOnly {
            return None;
        }
        self.allocation.as_ref()?.mapped_ptr().map(|p| p.as_ptr().cast::<u8>())
    }

    pub(crate) fn destroy(mut self, device: &Device) {
        if let Some(a) = self.allocation.take() {
            if let Err(e) = device.allocator.lock().unwrap_or_else(|p| p.into_inner()).free(a) {
                log::error!("freeing buffer {:?}: {e}", self.desc.label);
            }
        }
        device.memory_budget.release(self.charge);
        // SAFETY: the buffer is no longer used by any submitted work (deletion
        // queue or shutdown after idle) and is destroyed once.
        unsafe { device.raw.destroy_buffer(self.raw, None) };
    }
}

impl Device {
    /// Creates a buffer. A size of 0 or over the device's `maxBufferSize`
    /// is [`RhiError::OutOfLimits`]; an empty usage is an error too.
    pub fn create_buffer(&self, desc: &BufferDesc) -> Result<BufferHandle> {
        let max = self.info().max_buffer_size;
        if desc.size == 0 || desc.size > max {
            let (resource, value) = (format!("buffer {:?} (at most the device's maxBufferSize)", desc.label), desc.size);
            return Err(RhiError::OutOfLimits { what: "size", resource, value, min: 1, max });
        }
        if desc.usage.is_empty() {
            return Err(RhiError::InvalidDesc(format!("buffer {:?} has no usage", desc.label)));
        }
        let info =
            vk::BufferCreateInfo::default().size(desc.size).usage(conv::buffer_usage(desc.usage)).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let raw = unsafe { self.raw.create_buffer(&info, None) }.map_err(vk_err("vkCreateBuffer"))?;
        // SAFETY: `raw` is a live buffer of this device.
        let requirements = unsafe { self.raw.get_buffer_memory_requirements(raw) };
        // More than any heap it may live in holds: out of memory, said before
        // asking (vkAllocateMemory must not be asked for more than a heap).
        // Device-local memory past the (emulated) budget: the same, before asking.
        let charge = if desc.memory == MemoryLocation::GpuOnly { requirements.size } else { 0 };
        if requirements.size > self.largest_heap(requirements.memory_type_bits) || self.memory_budget.charge(charge).is_err() {
            // SAFETY: the buffer was never bound or used.
            unsafe { self.raw.destroy_buffer(raw, None) };
            return Err(RhiError::OutOfDeviceMemory);
        }
        let allocation = self.allocator.lock().unwrap_or_else(|p| p.into_inner()).allocate(&AllocationCreateDesc {
            name: &desc.label,
            requirements,
            location: conv::memory_location(desc.memory),
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                self.memory_budget.release(charge);
                // SAFETY: the buffer was never bound or used.
                unsafe { self.raw.destroy_buffer(raw, None) };
                return Err(e.into());
            }
        };
        // SAFETY: the allocation satisfies `requirements` and is bound once.
        let bound = unsafe { self.raw.bind_buffer_memory(raw, allocation.memory(), allocation.offset()) };
        let entry = BufferEntry { raw, allocation: Some(allocation), desc: desc.clone(), charge, last_use: LastUse::default() };
        if let Err(e) = bound {
            entry.destroy(self);
            return Err(vk_err("vkBindBufferMemory")(e));
        }
        Ok(write(&self.resources.buffers).insert(entry))
    }

    /// Creates a buffer and fills it with `data` (whose length must fit).
    pub fn create_buffer_init(&self, desc: &BufferDesc, data: &[u8]) -> Result<BufferHandle> {
        let handle = self.create_buffer(desc)?;
        if let Err(e) = self.write_buffer(handle, 0, data) {
            self.destroy_buffer(handle);
            return Err(e);
        }
        Ok(handle)
    }

    /// The buffer's description.
    pub fn buffer_desc(&self, buffer: BufferHandle) -> Result<BufferDesc> {
        read(&self.resources.buffers).get(buffer).map(|b| b.desc.clone()).ok_or_else(|| RhiError::InvalidHandle(format!("{buffer:?}")))
    }

    pub(crate) fn raw_buffer(&self, buffer: BufferHandle) -> Result<vk::Buffer> {
        read(&self.resources.buffers).get(buffer).map(|b| b.raw).ok_or_else(|| RhiError::InvalidHandle(format!("{buffer:?}")))
    }

    /// The raw buffer and its description, under one lock.
    pub(crate) fn raw_buffer_desc(&self, buffer: BufferHandle) -> Result<(vk::Buffer, BufferDesc)> {
        read(&self.resources.buffers)
            .get(buffer)
            .map(|b| (b.raw, b.desc.clone()))
            .ok_or_else(|| RhiError::InvalidHandle(format!("{buffer:?}")))
    }

    fn check_range(&self, buffer: BufferHandle, offset: u64, len: u64) -> Result<BufferDesc> {
        let desc = self.buffer_desc(buffer)?;
        if offset.checked_add(len).is_none_or(|end| end > desc.size) {
            let (resource, range) = (format!("buffer {:?}", desc.label), range_of(offset, len));
            return Err(RhiError::OutOfRange { what: "bytes", resource, range, limit: desc.size });
        }
        Ok(desc)
    }

    /// Writes `data` at `offset`. Host-visible buffers are written directly,
    /// once the last submission that may use the buffer has finished: a
    /// write to a buffer a frame in flight still reads waits for that frame
    /// (at most [`crate::DeviceDesc::gpu_wait_timeout`], then
    /// [`RhiError::DeviceLost`]) and is counted in
    /// [`crate::DeviceCounts::host_write_waits`] — a buffer per frame slot
    /// never waits. `GpuOnly` buffers go through a staging buffer and a
    /// copy that this call submits and waits for, ordered after the
    /// earlier submissions' reads by a barrier.
    pub fn write_buffer(&self, buffer: BufferHandle, offset: u64, data: &[u8]) -> Result<()> {
        self.write_buffer_parts(buffer, offset, &[data])
    }

    /// Writes `parts` one after another from `offset`, as [`Self::write_buffer`]
    /// writes their concatenation, without joining them first: one lookup
    /// and range check for all of them (a frame's id streams come in many
    /// parts). Out of range, nothing is written.
    pub fn write_buffer_parts(&self, buffer: BufferHandle, offset: u64, parts: &[&[u8]]) -> Result<()> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let desc = self.check_range(buffer, offset, len as u64)?;
        if len == 0 {
            return Ok(());
        }
        if desc.memory != MemoryLocation::GpuOnly {
            self.wait_for_host_access(buffer)?;
            let buffers = read(&self.resources.buffers);
            let entry = buffers.get(buffer).ok_or_else(|| RhiError::InvalidHandle(format!("{buffer:?}")))?;
            let ptr = entry.mapped().ok_or_else(|| RhiError::Unsupported(format!("buffer {:?} is not host-mapped", desc.label)))?;
            let mut at = offset as usize;
            for part in parts {
                // SAFETY: the parts' whole range was checked against the
                // buffer's size, the mapping covers the whole allocation,
                // and no part aliases it.
                unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), ptr.add(at), part.len()) };
                at += part.len();
            }
            return Ok(());
        }
        if !desc.usage.contains(BufferUsage::TRANSFER_DST) {
            let usage = Usage::Buffer(BufferUsage::TRANSFER_DST);
            return Err(RhiError::MissingUsage { label: desc.label, usage, needed_for: "a write to GPU-only memory (a staging copy)" });
        }
        let joined;
        let data: &[u8] = if let [one] = parts {
            one
        } else {
            joined = parts.concat();
            &joined
        };
        let staging = self.create_buffer_init(&BufferDesc::host_visible("staging", data.len() as u64, BufferUsage::TRANSFER_SRC), data)?;
        let result = self.immediate(|cmd| {
            // Earlier submissions may still read the buffer: order those
            // reads before this write (a write-after-read hazard otherwise).
            cmd.buffer_barrier(buffer, BufferState::ShaderRead, BufferState::TransferDst)?;
            cmd.copy_buffer(staging, 0, buffer, offset, data.len() as u64)?;
            cmd.buffer_barrier(buffer, BufferState::TransferDst, BufferState::ShaderRead)
        });
        self.destroy_buffer(staging);
        result
    }

    /// Reads `len` bytes at `offset`, after all submitted GPU work finished.
    pub fn read_buffer(&self, buffer: BufferHandle, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.read_buffer_after(buffer, offset, len, self.timeline.last_submitted())
    }

    /// Reads `len` bytes at `offset` of a host-mapped buffer once the
    /// submission that signals `value` (a [`crate::FrameSubmission`]'s) has
    /// finished, without waiting for later submissions: a frame's results
    /// are read while the frames after it are still on the GPU. A buffer
    /// that a later submission may write (a copy or fill into it, a
    /// storage binding) no longer holds `value`'s results, or will not by
    /// the time it is read: that is [`RhiError::InvalidState`] and nothing is
    /// read — keep one buffer per frame slot. A GPU-only buffer is copied
    /// out after all submitted work, as [`Self::read_buffer`].
    pub fn read_buffer_after(&self, buffer: BufferHandle, offset: u64, len: u64, value: u64) -> Result<Vec<u8>> {
        let desc = self.check_range(buffer, offset, len)?;
        self.wait_for(value)?;
        if desc.memory == MemoryLocation::GpuOnly {
            self.wait_for(self.timeline.last_submitted())?;
            if !desc.usage.contains(BufferUsage::TRANSFER_SRC) {
                let usage = Usage::Buffer(BufferUsage::TRANSFER_SRC);
                return Err(RhiError::MissingUsage { label: desc.label, usage, needed_for: "a read of GPU-only memory (a staging copy)" });
            }
            let staging = self.create_buffer(&BufferDesc::readback("readback", len.max(1)))?;
            let copied = self.immediate(|cmd| {
                cmd.copy_buffer(buffer, offset, staging, 0, len)?;
                cmd.buffer_barrier(staging, BufferState::TransferDst, BufferState::HostRead)
            });
            let out = copied.and_then(|()| self.read_buffer(staging, 0, len));
            self.destroy_buffer(staging);
            return out;
        }
        let buffers = read(&self.resources.buffers);
        let entry = buffers.get(buffer).ok_or_else(|| RhiError::InvalidHandle(format!("{buffer:?}")))?;
        let written = entry.last_use.write();
        if written > value {
            return Err(RhiError::InvalidState(format!(
                "buffer {:?} is read as submission {value} left it, but submission {written} may write it since",
                desc.label
            )));
        }
        let ptr = entry.mapped().ok_or_else(|| RhiError::Unsupported(format!("buffer {:?} is not host-mapped", desc.label)))?;
        let mut out = vec![0u8; len as usize];
        // SAFETY: range checked; the GPU finished writing (waited above: the
        // writing submission, or every one); the
        // memory is host-coherent per gpu-allocator's CpuToGpu/GpuToCpu choice.
        unsafe { std::ptr::copy_nonoverlapping(ptr.add(offset as usize), out.as_mut_ptr(), out.len()) };
        Ok(out)
    }

    /// Waits until no submitted work may use `buffer` (its last stamped
    /// submission has finished), counting a wait that was needed.
    fn wait_for_host_access(&self, buffer: BufferHandle) -> Result<()> {
        let last = read(&self.resources.buffers).get(buffer).map_or(0, |b| b.last_use.any());
        if last == 0 || last <= self.timeline.completed_hint() {
            return Ok(());
        }
        if self.completed_value()? >= last {
            return Ok(());
        }
        self.pool_counts.host_write_waits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.wait_for(last)
    }

    /// Destroys, at once, a buffer that no submitted or recording work can
    /// use: one whose handle never left the RHI and whose last
    /// [`Self::immediate`] submission has returned (which waits for the
    /// GPU), as an upload's staging buffer. Skips the deletion queue, so
    /// uploads between frames leave nothing pending.
    pub(crate) fn destroy_idle_buffer(&self, buffer: BufferHandle) {
        let entry = write(&self.resources.buffers).remove(buffer);
        if let Some(entry) = entry {
            entry.destroy(self);
        }
    }

    /// Destroys the buffer once the GPU no longer uses it. The handle is
    /// invalid from now on; destroying twice is a no-op.
    pub fn destroy_buffer(&self, buffer: BufferHandle) {
        let entry = write(&self.resources.buffers).remove(buffer);
        if let Some(entry) = entry {
            self.retire(Retired::Buffer(entry));
        }
    }
}
