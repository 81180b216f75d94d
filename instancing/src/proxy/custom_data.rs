//! Every instance's custom floats on the GPU, for the instanced vertex
//! factory's `vf_custom_data` (materials' `custom_data(in, k)`).
//!
//! One GPU-only storage buffer per proxy, bound at group 3
//! ([`renderer::VERTEX_FACTORY_BIND_GROUP`]) through a persistent bind group
//! the proxy's mesh batches carry (`MeshBatch::vertex_factory_bindings`):
//!
//! ```text
//! floats 0..4       header: [floats per instance (u32 bits), 0, 0, 0]
//! floats 4 + s*n..  the n custom floats of the instance whose id slot is s
//! ```
//!
//! Indexed by the instance's stable id **slot** (`InstanceStreamData::
//! instance_id`), not its index: culling compacts and reorders instances,
//! but every visible copy keeps its slot, and a swap-remove moves an
//! instance's index but not its slot (nothing moves here; the moved
//! instance's dirty range re-sends its own floats to the same place).
//! A removed instance's slot keeps stale floats until a new instance takes
//! it, which writes its own.
//!
//! A CPU mirror (by slot) serves re-creation: the buffer is re-made, with
//! room to grow, when a slot outgrows it or the floats per instance change
//! (then every instance is re-sent: the store dirties them all); otherwise
//! dirty instances go up in place, runs of consecutive slots as one upload.
//! The old buffer and bind group are destroyed deferred (the RHI frees them
//! once no frame in flight uses them).
//!
//! The whole buffer is one storage binding, so it is limited to the
//! device's `maxStorageBufferRange` (2^27 bytes on lavapipe: 131,071
//! instances of 256 floats, 4 million of 8); an update that would need more
//! is rejected whole.

use renderer::ProxyUpdateContext;
use rhi_vulkan::{
    BindGroupHandle, BindGroupLayoutDesc, BindGroupLayoutEntry, BindingResource, BindingType, BufferDesc, BufferHandle, BufferUsage,
    Device, ShaderStages,
};

use crate::error::{InstancingError, Result};

/// Floats before the first instance's (the header).
pub const HEADER_FLOATS: usize = 4;

/// The set layout of the instanced factory's group 3, as shader reflection
/// derives it from `instanced_vf.inc.wgsl`: one read-only storage buffer at
/// binding 0, visible to the vertex and fragment stages.
pub fn bind_group_layout() -> BindGroupLayoutDesc {
    BindGroupLayoutDesc {
        entries: vec![BindGroupLayoutEntry {
            binding: 0,
            ty: BindingType::StorageBuffer { read_only: true },
            stages: ShaderStages::VERTEX | ShaderStages::FRAGMENT,
        }],
    }
}

/// Bytes of a buffer holding `slots` instances of `floats` floats.
fn buffer_bytes(slots: u64, floats: u32) -> u64 {
    4 * (HEADER_FLOATS as u64 + slots * u64::from(floats))
}

struct Gpu {
    buffer: BufferHandle,
    /// Slots the buffer has room for.
    capacity: u64,
    bind_group: BindGroupHandle,
}

/// The proxy's custom data: the CPU mirror and its GPU buffer.
#[derive(Default)]
pub(super) struct CustomData {
    /// Floats per instance.
    floats: u32,
    /// `floats` per slot, for slots `0..by_slot.len() / floats`.
    by_slot: Vec<f32>,
    gpu: Option<Gpu>,
}

impl CustomData {
    /// From `values` (`floats` per instance, for the instances whose id
    /// slots are `slots`, in order). Checked by the caller ([`check`]).
    pub fn new(floats: u32, slots: &[u32], values: &[f32]) -> Self {
        let mut s = Self { floats, ..Default::default() };
        s.write_all(slots, values);
        s
    }

    pub fn floats(&self) -> u32 {
        self.floats
    }

    pub fn bind_group(&self) -> Option<BindGroupHandle> {
        self.gpu.as_ref().map(|g| g.bind_group)
    }

    /// The buffer and its capacity in slots (tests).
    pub fn buffer(&self) -> Option<(BufferHandle, u64)> {
        self.gpu.as_ref().map(|g| (g.buffer, g.capacity))
    }

    fn slots(&self) -> u64 {
        if self.floats == 0 {
            0
        } else {
            (self.by_slot.len() / self.floats as usize) as u64
        }
    }

    /// Slots this data would hold after writing `instances` with `floats`.
    fn slots_after(&self, floats: u32, instances: impl Iterator<Item = u32>) -> u64 {
        let written = instances.map(|slot| u64::from(slot) + 1).max().unwrap_or(0);
        if floats == self.floats {
            written.max(self.slots())
        } else {
            written
        }
    }

    /// Writes each instance's floats at its slot.
    fn write_all(&mut self, slots: &[u32], values: &[f32]) {
        let n = self.floats as usize;
        if n == 0 {
            return;
        }
        for (&slot, v) in slots.iter().zip(values.chunks_exact(n)) {
            let at = slot as usize * n;
            if self.by_slot.len() < at + n {
                self.by_slot.resize(at + n, 0.0);
            }
            self.by_slot[at..at + n].copy_from_slice(v);
        }
    }

    /// Creates the buffer and its bind group for the mirror (with room for
    /// `capacity` slots at least).
    fn create_gpu(&self, device: &Device, capacity: u64) -> rhi_vulkan::Result<Gpu> {
        let capacity = capacity.max(self.slots());
        let mut data = vec![0.0f32; HEADER_FLOATS + (capacity * u64::from(self.floats)) as usize];
        data[0] = f32::from_bits(self.floats);
        data[HEADER_FLOATS..HEADER_FLOATS + self.by_slot.len()].copy_from_slice(&self.by_slot);
        let bytes: &[u8] = bytemuck::cast_slice(&data);
        let buffer =
            device.create_buffer_init(&BufferDesc::gpu_only("ism custom data", bytes.len() as u64, BufferUsage::STORAGE), bytes)?;
        match device.create_bind_group_with_layout(&bind_group_layout(), &[(0, BindingResource::Buffer(buffer))]) {
            Ok(bind_group) => Ok(Gpu { buffer, capacity, bind_group }),
            Err(e) => {
                device.destroy_buffer(buffer);
                Err(e)
            }
        }
    }

    /// Room for `slots` and more, within the device's storage binding range.
    fn grown_capacity(&self, device: &Device, slots: u64) -> u64 {
        let wanted = slots.checked_next_power_of_two().unwrap_or(slots).max(64);
        if self.floats == 0 {
            return wanted;
        }
        let most = (u64::from(device.info().max_storage_buffer_range) / 4).saturating_sub(HEADER_FLOATS as u64) / u64::from(self.floats);
        wanted.min(most).max(slots)
    }

    /// Creates the GPU side (the proxy's render resources).
    pub fn create(&mut self, device: &Device) -> rhi_vulkan::Result<()> {
        let capacity = self.grown_capacity(device, self.slots());
        self.gpu = Some(self.create_gpu(device, capacity)?);
        Ok(())
    }

    pub fn release(&mut self, device: &Device) {
        if let Some(g) = self.gpu.take() {
            device.destroy_bind_group(g.bind_group);
            device.destroy_buffer(g.buffer);
        }
    }

    /// What [`Self::apply`] would reject: more floats per instance than
    /// [`crate::MAX_CUSTOM_DATA_FLOATS`], or a buffer past the device's
    /// storage binding range.
    pub fn check_fits(&self, device: &Device, floats: u32, instances: impl Iterator<Item = u32>) -> Result<()> {
        if floats > crate::MAX_CUSTOM_DATA_FLOATS {
            return Err(InstancingError::TooManyCustomDataFloats { requested: floats, max: crate::MAX_CUSTOM_DATA_FLOATS });
        }
        let bytes = buffer_bytes(self.slots_after(floats, instances), floats);
        let most = u64::from(device.info().max_storage_buffer_range);
        if bytes > most {
            return Err(InstancingError::InvalidUpdate(format!(
                "custom data of {bytes} bytes exceeds the device's storage binding range of {most} bytes"
            )));
        }
        Ok(())
    }

    /// Applies an update's custom floats (checked: [`check`],
    /// [`Self::check_fits`]): `values` holds `floats` per instance, for the
    /// instances whose id slots are `slots`. Returns the bytes uploaded and
    /// whether the buffer was re-created.
    pub fn apply(
        &mut self,
        floats: u32,
        slots: &[u32],
        values: &[f32],
        ctx: &mut ProxyUpdateContext<'_>,
    ) -> rhi_vulkan::Result<(u64, bool)> {
        let relayout = floats != self.floats;
        if relayout {
            self.floats = floats;
            self.by_slot.clear();
        }
        self.write_all(slots, values);
        let Some(gpu) = &self.gpu else { return Ok((0, false)) };
        if !relayout && self.slots() <= gpu.capacity {
            let n = self.floats as usize;
            if n == 0 {
                return Ok((0, false));
            }
            let mut slots = slots.to_vec();
            slots.sort_unstable();
            slots.dedup();
            let mut uploaded = 0u64;
            let mut i = 0;
            while i < slots.len() {
                let mut j = i + 1;
                while j < slots.len() && slots[j] == slots[j - 1] + 1 {
                    j += 1;
                }
                let (first, end) = (slots[i] as usize, slots[j - 1] as usize + 1);
                let bytes = bytemuck::cast_slice::<f32, u8>(&self.by_slot[first * n..end * n]).to_vec();
                uploaded += bytes.len() as u64;
                ctx.upload(gpu.buffer, 4 * (HEADER_FLOATS + first * n) as u64, bytes);
                i = j;
            }
            return Ok((uploaded, false));
        }
        let capacity = self.grown_capacity(ctx.device, self.slots());
        let new = self.create_gpu(ctx.device, capacity)?;
        let uploaded = buffer_bytes(new.capacity, self.floats);
        if let Some(old) = self.gpu.replace(new) {
            ctx.device.destroy_bind_group(old.bind_group);
            ctx.device.destroy_buffer(old.buffer);
        }
        Ok((uploaded, true))
    }

    pub fn memory_footprint(&self) -> usize {
        self.by_slot.len() * 4
    }
}

/// Checks custom floats sent with instances: `values` holds `floats`
/// (at most [`crate::MAX_CUSTOM_DATA_FLOATS`]) finite floats per instance.
pub fn check(floats: u32, instance_count: usize, values: &[f32]) -> Result<()> {
    if floats > crate::MAX_CUSTOM_DATA_FLOATS {
        return Err(InstancingError::TooManyCustomDataFloats { requested: floats, max: crate::MAX_CUSTOM_DATA_FLOATS });
    }
    let expected = instance_count as u64 * u64::from(floats);
    if values.len() as u64 != expected {
        return Err(InstancingError::InvalidUpdate(format!(
            "{} custom floats for {instance_count} instances of {floats}: expected {expected}",
            values.len()
        )));
    }
    if !values.iter().all(|v| v.is_finite()) {
        return Err(InstancingError::NonFiniteCustomData);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_land_at_their_slot_and_a_new_layout_starts_over() {
        let mut c = CustomData::new(2, &[3, 0], &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(c.by_slot, [3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0]);
        assert_eq!(c.slots(), 4);
        assert_eq!(c.slots_after(2, [1u32].into_iter()), 4, "same layout: the mirror keeps its slots");
        assert_eq!(c.slots_after(3, [1u32].into_iter()), 2, "a new layout holds only what is sent");
        c.write_all(&[1], &[5.0, 6.0]);
        assert_eq!(&c.by_slot[2..4], &[5.0, 6.0]);
        assert_eq!(buffer_bytes(4, 2), 48);
    }

    #[test]
    fn sent_floats_are_checked() {
        check(2, 3, &[0.0; 6]).unwrap();
        assert!(matches!(check(2, 3, &[0.0; 5]), Err(InstancingError::InvalidUpdate(_))));
        assert!(matches!(check(1, 1, &[f32::NAN]), Err(InstancingError::NonFiniteCustomData)));
        assert!(matches!(check(257, 0, &[]), Err(InstancingError::TooManyCustomDataFloats { .. })));
    }
}
