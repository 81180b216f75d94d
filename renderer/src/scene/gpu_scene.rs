//! The GPU scene: one storage buffer of per-primitive shader data, indexed by
//! primitive index in every pass shader. Only primitives added or changed
//! since the last frame are uploaded (one copy command, one region per run of
//! changed primitives).

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec4};
use rhi_vulkan::{BufferDesc, BufferHandle, BufferState, BufferUsage, Device, Frame, Result};

/// Shader data of one primitive (176 bytes; `PrimitiveData` in `scene.inc.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, PartialEq)]
pub struct PrimitiveGpuData {
    /// The primitive's local-to-world matrix, column-major.
    pub local_to_world: [[f32; 4]; 4],
    /// The local-to-world of the previous frame (motion vectors): the
    /// current one when the primitive did not move since, was added this
    /// frame or teleported (`GpuScene::set_previous`).
    pub prev_local_to_world: [[f32; 4]; 4],
    /// World-space bounds: centre (xyz) and sphere radius (w).
    pub bounds_origin_radius: [f32; 4],
    /// World-space box half-extent.
    pub bounds_extent: [f32; 3],
    /// The proxy's word for its vertex factory
    /// ([`crate::scene::PrimitiveSceneProxy::vertex_factory_data`]).
    pub vertex_factory_data: u32,
    /// The proxy's custom primitive data, readable by materials.
    pub custom: [f32; 4],
}

const STRIDE: u64 = std::mem::size_of::<PrimitiveGpuData>() as u64;

/// Primitives in one page of the GPU scene: a storage binding may be at most
/// `maxStorageBufferRange` bytes, which Vulkan only guarantees to be 2^27
/// (lavapipe's), so the shaders read the scene through [`GPU_SCENE_PAGES`]
/// bindings of up to this many primitives each (`scene_primitive` in
/// `scene.inc.wgsl`, which has the same constant).
pub const GPU_SCENE_PAGE_PRIMITIVES: u32 = 1 << 19;
/// Pages bound; primitives beyond `GPU_SCENE_PAGES * GPU_SCENE_PAGE_PRIMITIVES`
/// are an error.
pub const GPU_SCENE_PAGES: u32 = 4;
const PAGE_BYTES: u64 = GPU_SCENE_PAGE_PRIMITIVES as u64 * STRIDE;
// `PrimitiveData` in scene.inc.wgsl; a page fits Vulkan's minimum
// maxStorageBufferRange (2^27) and its offsets any minStorageBufferOffsetAlignment.
const _: () = assert!(STRIDE == 176 && PAGE_BYTES <= 1 << 27 && PAGE_BYTES.is_multiple_of(256));

/// The `(offset, size)` each page binding gets in a GPU-scene buffer of
/// `buffer_size` bytes. Pages past the buffer's end repeat page 0 (they are
/// never read: no primitive id reaches them), so every binding is valid.
pub fn page_ranges(buffer_size: u64) -> [(u64, u64); GPU_SCENE_PAGES as usize] {
    let first = (0, buffer_size.min(PAGE_BYTES));
    std::array::from_fn(|p| {
        let offset = p as u64 * PAGE_BYTES;
        if offset < buffer_size {
            (offset, (buffer_size - offset).min(PAGE_BYTES))
        } else {
            first
        }
    })
}

/// The GPU scene's CPU copy and its storage buffer (module docs).
///
/// `prev_local_to_world` is the previous frame's transform (UE's
/// previous-frame transform, what motion vectors need): a move keeps the
/// transform the slot had when the frame began as its previous one (two
/// moves in one frame keep the first's previous), and at the next frame's
/// [`GpuScene::begin_frame`] every slot that moved is settled (previous =
/// current), so a primitive that stops has no motion from then on.
#[derive(Default)]
pub struct GpuScene {
    data: Vec<PrimitiveGpuData>,
    dirty: Vec<u32>,
    dirty_mark: Vec<bool>,
    /// Slots whose transform changed this frame (settled at the next
    /// `begin_frame`), and their marks.
    moved: Vec<u32>,
    moved_mark: Vec<bool>,
    buffer: Option<BufferHandle>,
    capacity: u32,
    /// Bytes uploaded by the last [`GpuScene::upload`].
    pub last_upload_bytes: u64,
}

impl GpuScene {
    /// Room for `slots` slots in the CPU copy and its marks, exactly.
    pub fn reserve_exact(&mut self, slots: usize) {
        let more = slots.saturating_sub(self.data.len());
        self.data.reserve_exact(more);
        self.dirty_mark.reserve_exact(more);
        self.moved_mark.reserve_exact(more);
        self.dirty.reserve_exact(more);
    }

    /// Bytes of its CPU copy and change lists, and of its buffer.
    pub fn memory_bytes(&self) -> (u64, u64) {
        let cpu = self.data.capacity() * std::mem::size_of::<PrimitiveGpuData>()
            + (self.dirty.capacity() + self.moved.capacity()) * 4
            + self.dirty_mark.capacity()
            + self.moved_mark.capacity();
        (cpu as u64, u64::from(self.capacity) * STRIDE)
    }

    /// Sets a slot's data from its transform, world bounds, custom data and
    /// vertex-factory word, marking it for the next upload.
    /// The previous transform is the one the slot had when the frame began
    /// (see the type's docs); a slot set for the first time, or `added`
    /// (a new primitive in a reused slot), has no past: previous = current.
    pub fn set(&mut self, slot: u32, local_to_world: &Mat4, bounds: &crate::math::Bounds, (custom, vf_data): (Vec4, u32), added: bool) {
        let i = slot as usize;
        if self.data.len() <= i {
            self.data.resize(i + 1, PrimitiveGpuData::zeroed());
            self.dirty_mark.resize(i + 1, false);
            self.moved_mark.resize(i + 1, false);
        }
        let prev = if added || self.data[i] == PrimitiveGpuData::zeroed() {
            local_to_world.to_cols_array_2d()
        } else if self.moved_mark[i] {
            self.data[i].prev_local_to_world
        } else {
            self.data[i].local_to_world
        };
        if prev != local_to_world.to_cols_array_2d() {
            self.mark_moved(slot);
        }
        self.data[i] = PrimitiveGpuData {
            local_to_world: local_to_world.to_cols_array_2d(),
            prev_local_to_world: prev,
            bounds_origin_radius: bounds.origin.extend(bounds.radius).to_array(),
            bounds_extent: bounds.extent.to_array(),
            vertex_factory_data: vf_data,
            custom: custom.to_array(),
        };
        self.mark_dirty(slot);
    }

    /// Overrides the slot's previous-frame transform for this frame (UE's
    /// `PreviousTransform`; a teleport is `previous` = the current
    /// transform: no motion). Settled at the next `begin_frame` as any
    /// move. A slot never set is nothing to do.
    pub fn set_previous(&mut self, slot: u32, previous: &Mat4) {
        let i = slot as usize;
        if i >= self.data.len() {
            return;
        }
        self.data[i].prev_local_to_world = previous.to_cols_array_2d();
        self.mark_moved(slot);
        self.mark_dirty(slot);
    }

    /// The previous-frame transform of `slot` (what the GPU reads), if set.
    pub fn previous(&self, slot: u32) -> Option<Mat4> {
        self.data.get(slot as usize).map(|d| Mat4::from_cols_array_2d(&d.prev_local_to_world))
    }

    /// A new frame begins: every slot that moved in the last one has
    /// previous = current again (uploaded with the frame's changes).
    pub fn begin_frame(&mut self) {
        for slot in std::mem::take(&mut self.moved) {
            let i = slot as usize;
            self.moved_mark[i] = false;
            if self.data[i].prev_local_to_world != self.data[i].local_to_world {
                self.data[i].prev_local_to_world = self.data[i].local_to_world;
                self.mark_dirty(slot);
            }
        }
    }

    fn mark_moved(&mut self, slot: u32) {
        if !self.moved_mark[slot as usize] {
            self.moved_mark[slot as usize] = true;
            self.moved.push(slot);
        }
    }

    fn mark_dirty(&mut self, slot: u32) {
        if !self.dirty_mark[slot as usize] {
            self.dirty_mark[slot as usize] = true;
            self.dirty.push(slot);
        }
    }

    /// The buffer (valid after the first upload).
    pub fn buffer(&self) -> Option<BufferHandle> {
        self.buffer
    }

    /// Slots changed since the last upload.
    pub fn dirty_count(&self) -> usize {
        self.dirty.len()
    }

    /// Records this frame's upload: everything after a grow, else the dirty runs.
    pub fn upload(&mut self, device: &Device, frame: &mut Frame<'_>) -> Result<()> {
        self.last_upload_bytes = 0;
        let needed = (self.data.len() as u32).max(1);
        let most = GPU_SCENE_PAGES * GPU_SCENE_PAGE_PRIMITIVES;
        if needed > most {
            return Err(rhi_vulkan::RhiError::Unsupported(format!(
                "{needed} primitives: the GPU scene holds at most {most} ({GPU_SCENE_PAGES} pages of {GPU_SCENE_PAGE_PRIMITIVES})"
            )));
        }
        // (staging offset, buffer offset, size) per run, and the run's bytes
        // (borrowed from the CPU copy: written straight into the staging
        // buffer, never joined into a Vec of their own first).
        let mut regions: Vec<(u64, u64, u64)> = Vec::new();
        let mut parts: Vec<&[u8]> = Vec::new();
        let mut staged = 0u64;
        if self.buffer.is_none() || needed > self.capacity {
            // The first buffer fits the scene (a large batch added at once
            // wastes nothing); a full one doubles.
            let capacity = if self.buffer.is_none() { needed.next_multiple_of(64) } else { needed.max(self.capacity.saturating_mul(2)) };
            let capacity = capacity.clamp(64, most);
            let buffer = device.create_buffer(&BufferDesc::gpu_only("gpu scene", u64::from(capacity) * STRIDE, BufferUsage::STORAGE))?;
            if let Some(old) = self.buffer.replace(buffer) {
                device.destroy_buffer(old);
            }
            self.capacity = capacity;
            let all: &[u8] = bytemuck::cast_slice(&self.data);
            if !all.is_empty() {
                regions.push((0, 0, all.len() as u64));
                parts.push(all);
                staged = all.len() as u64;
            }
        } else {
            self.dirty.sort_unstable();
            let mut i = 0;
            while i < self.dirty.len() {
                let start = self.dirty[i];
                let mut end = start + 1;
                while i + 1 < self.dirty.len() && self.dirty[i + 1] == end {
                    i += 1;
                    end += 1;
                }
                let run: &[u8] = bytemuck::cast_slice(&self.data[start as usize..end as usize]);
                regions.push((staged, u64::from(start) * STRIDE, run.len() as u64));
                parts.push(run);
                staged += run.len() as u64;
                i += 1;
            }
        }
        for s in self.dirty.drain(..) {
            self.dirty_mark[s as usize] = false;
        }
        let Some(buffer) = self.buffer else { return Ok(()) };
        if regions.is_empty() {
            return Ok(());
        }
        self.last_upload_bytes = staged;
        let staging = device.create_buffer(&BufferDesc::host_visible("gpu scene staging", staged, BufferUsage::TRANSFER_SRC))?;
        if let Err(e) = device.write_buffer_parts(staging, 0, &parts) {
            device.destroy_buffer(staging);
            return Err(e);
        }
        let cmd = frame.cmd();
        let recorded = cmd
            .buffer_barrier(buffer, BufferState::ShaderRead, BufferState::TransferDst)
            .and_then(|()| cmd.copy_buffer_regions(staging, buffer, &regions))
            .and_then(|()| cmd.buffer_barrier(buffer, BufferState::TransferDst, BufferState::ShaderRead));
        device.destroy_buffer(staging);
        recorded
    }
}

#[cfg(test)]
mod page_tests {
    use super::*;

    #[test]
    fn pages_cover_the_buffer_and_fit_the_smallest_binding_limit() {
        let small = page_ranges(64 * STRIDE);
        assert!(small.iter().all(|&r| r == (0, 64 * STRIDE)));
        let big = 1_600_000 * STRIDE;
        let pages = page_ranges(big);
        assert_eq!(pages[0], (0, PAGE_BYTES));
        assert_eq!(pages[3], (3 * PAGE_BYTES, big - 3 * PAGE_BYTES));
        assert_eq!(pages.iter().map(|r| r.1).sum::<u64>(), big);
    }
}
