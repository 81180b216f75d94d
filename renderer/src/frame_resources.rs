//! Per-frame GPU memory the renderer writes from the CPU: view uniforms, the
//! per-pass primitive-id streams and dynamic vertex data. Each kind is a set
//! of host-visible buffers, one per frame in flight, reused only after the
//! frame that last used it has finished (the RHI's `begin_frame` waits for
//! that, and the renderer retires a frame before its slot comes round
//! again), so writing them directly never races the GPU. A read-back
//! frame's scene color is copied into its slot's read-back buffer
//! (`frame::retire`) and read when the frame retires.

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;
use rhi_vulkan::{BufferDesc, BufferHandle, BufferUsage, Device, Result, SamplerHandle};

/// The `ViewUniform` of `scene.inc.wgsl`, field for field (one meaning
/// each; a test compares the two layouts). Its size, 1024 bytes, is a
/// multiple of every device's uniform offset alignment (at most 256), so
/// views are bound at multiples of it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct ViewUniformData {
    pub view_proj: [[f32; 4]; 4],
    pub camera_position: [f32; 3],
    /// 1 for a perspective view, 0 for an orthographic one.
    pub perspective: u32,
    pub camera_right: [f32; 3],
    /// The directional lights in `directional_lights`.
    pub directional_light_count: u32,
    pub camera_up: [f32; 3],
    /// The shadowed directional light's cascades in `shadow_cascades` (0: no shadow).
    pub shadow_cascade_count: u32,
    /// View depth = dot(xyz, world position) + w (the light grid's and the
    /// cascades' depth).
    pub view_depth_axis: [f32; 4],
    /// The viewport's top-left corner in pixels (where the grid's tiles start).
    pub light_grid_origin: [f32; 2],
    /// The grid's tile size in pixels.
    pub light_grid_tile_size: f32,
    /// The view's first cluster in the light grid buffer.
    pub light_grid_base: u32,
    /// Tiles across, tiles down, depth slices (0: no local lights).
    pub light_grid_size: [u32; 3],
    /// Shadow filtering (`r.Shadow.FilterQuality`): 0, 1 or 2.
    pub shadow_filter: u32,
    /// slice = log2(depth) · scale + bias.
    pub light_grid_z_scale: f32,
    pub light_grid_z_bias: f32,
    /// 1 / the shadow map's width (one texel in UV).
    pub shadow_texel: f32,
    /// Geometric specular anti-aliasing: the normal variance's scale (0: off).
    pub specular_aa_variance: f32,
    /// The hemisphere ambient's radiance from the sky (above, +Z).
    pub sky_radiance: [f32; 3],
    /// Geometric specular anti-aliasing: the most roughness² it adds.
    pub specular_aa_threshold: f32,
    /// The hemisphere ambient's radiance from the ground (below).
    pub ground_radiance: [f32; 3],
    /// 1 when the light grid's per-cluster shadowed counts are filled.
    pub light_grid_has_shadows: u32,
    pub wireframe_color: [f32; 4],
    pub directional_lights: [DirectionalLightData; 4],
    pub shadow_cascades: [ShadowCascadeData; 4],
    /// The environment's prefiltered specular levels (0: the hemisphere
    /// ambient lights the view, `crate::environment`)...
    pub environment_levels: u32,
    /// ...and the scale of its radiance (its intensity times `r.SkyLight.Intensity`).
    pub environment_intensity: f32,
    /// This frame's sub-pixel jitter in NDC (TAA; 0 without), added to
    /// `view_proj`'s clip positions by the shaders (`view_clip`).
    pub jitter: [f32; 2],
    /// The previous frame's world to clip, unjittered (motion vectors).
    pub prev_view_proj: [[f32; 4]; 4],
    /// Room to grow without changing the uniform's size.
    pub _reserved: [[u32; 4]; 13],
}

/// The `ShadowCascade` of `scene.inc.wgsl`: one cascade of the shadowed
/// directional light (`crate::shadow_cascades`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct ShadowCascadeData {
    /// World to the cascade's clip space.
    pub view_proj: [[f32; 4]; 4],
    /// Its tile in the shadow map: UV offset (xy) and scale (zw).
    pub atlas_rect: [f32; 4],
    /// The view depth where it ends...
    pub far_depth: f32,
    /// ...and from which it blends into the next.
    pub blend_start: f32,
    /// The depth bias in its clip-space depth units.
    pub bias: f32,
    /// The normal-offset bias in world units.
    pub normal_bias: f32,
}

/// The `ShadowTile` of `scene.inc.wgsl`: one tile of the shadow atlas
/// (`crate::shadow_atlas`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct ShadowTileData {
    /// World to the tile's clip space.
    pub view_proj: [[f32; 4]; 4],
    /// Its square in the atlas: UV offset (xy) and scale (zw).
    pub atlas_rect: [f32; 4],
    /// World size of one of its texels at distance 1 from the light.
    pub texel_at_unit: f32,
    /// One atlas texel in UV.
    pub atlas_texel: f32,
    pub _pad: [f32; 2],
}

/// The `DirectionalLight` of `scene.inc.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct DirectionalLightData {
    /// The direction the light travels.
    pub direction: [f32; 3],
    /// 1 when the shadow map holds this frame's shadow of this light.
    pub shadowed: u32,
    /// Its illuminance on a surface facing it (colour times lux).
    pub color: [f32; 3],
    /// WGSL pads the struct to its 16-byte alignment.
    pub _pad: f32,
}

pub(crate) const VIEW_UNIFORM_SIZE: u64 = std::mem::size_of::<ViewUniformData>() as u64;

/// The GPU memory a frame writes or binds that the scene renderer keeps
/// from frame to frame, besides the render targets: the per-slot buffers
/// above, the material table, the read-back buffers and the shadow map's
/// sampler. The stages that use a part take it.
pub(crate) struct FrameResources {
    pub view_uniforms: PerFrameBuffer,
    pub id_streams: PerFrameBuffer,
    pub dynamic: DynamicBufferRing,
    /// The material table's GPU buffer and its capacity.
    pub materials: Option<(BufferHandle, u64)>,
    /// Bytes of material blocks uploaded by the last frame.
    pub material_bytes_uploaded: u64,
    /// The MSAA sample count last asked for and the one the device gave
    /// (`frame::update::msaa_samples`): asked of the driver once per count.
    pub msaa_samples: Option<(u32, u32)>,
    /// Per frame slot: the buffer a read-back frame's output is copied to.
    pub readback: Vec<Option<(BufferHandle, u64)>>,
    /// The shadow map's comparison sampler.
    pub shadow_sampler: Option<SamplerHandle>,
    /// The light grid's lights, clusters, indices and per-cluster shadowed
    /// counts (`crate::light_grid`).
    pub light_grid: [PerFrameBuffer; 4],
    /// The shadow atlas's tiles ([`ShadowTileData`]).
    pub shadow_tiles: PerFrameBuffer,
}

impl FrameResources {
    /// One set of per-slot buffers for each of `frames` slots, made when first written.
    pub fn new(frames: usize) -> Self {
        Self {
            view_uniforms: PerFrameBuffer::new("view uniforms", BufferUsage::UNIFORM, frames),
            id_streams: PerFrameBuffer::new("primitive id stream", BufferUsage::VERTEX, frames),
            dynamic: DynamicBufferRing::new(frames),
            materials: None,
            material_bytes_uploaded: 0,
            msaa_samples: None,
            readback: vec![None; frames],
            shadow_sampler: None,
            light_grid: [
                PerFrameBuffer::new("light grid lights", BufferUsage::STORAGE, frames),
                PerFrameBuffer::new("light grid clusters", BufferUsage::STORAGE, frames),
                PerFrameBuffer::new("light grid indices", BufferUsage::STORAGE, frames),
                PerFrameBuffer::new("light grid shadowed counts", BufferUsage::STORAGE, frames),
            ],
            shadow_tiles: PerFrameBuffer::new("shadow atlas tiles", BufferUsage::STORAGE, frames),
        }
    }

    /// Destroys the read-back buffers (the RHI frees them once no frame uses them).
    pub fn release(&mut self, device: &Device) {
        for (buffer, _) in self.readback.iter_mut().filter_map(Option::take) {
            device.destroy_buffer(buffer);
        }
    }
}

/// Bytes from which [`PerFrameBuffer::write_parts`] writes its parts in parallel.
const PARALLEL_WRITE_BYTES: usize = 256 * 1024;

/// One growable host-visible buffer per frame slot.
pub(crate) struct PerFrameBuffer {
    label: &'static str,
    usage: BufferUsage,
    slots: Vec<Option<(BufferHandle, u64)>>,
}

impl PerFrameBuffer {
    pub fn new(label: &'static str, usage: BufferUsage, frames: usize) -> Self {
        Self { label, usage, slots: vec![None; frames] }
    }

    /// Writes `bytes` at offset 0 of the slot's buffer (grown if needed).
    pub fn write(&mut self, device: &Device, slot: usize, bytes: &[u8]) -> Result<BufferHandle> {
        self.write_parts(device, slot, &[bytes], false)
    }

    /// Writes `parts` one after another from offset 0 of the slot's buffer
    /// (grown if needed), with no copy of them joined first. With
    /// `parallel` and enough bytes (the passes' id streams, a few hundred
    /// KB each at 160,000 primitives), the bytes are cut into runs of about
    /// equal size, written on rayon's workers.
    pub fn write_parts(&mut self, device: &Device, slot: usize, parts: &[&[u8]], parallel: bool) -> Result<BufferHandle> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let buffer = self.reserve(device, slot, total as u64)?;
        if parallel && total >= PARALLEL_WRITE_BYTES {
            let runs = cut_into_runs(parts, 2 * rayon::current_num_threads());
            runs.par_iter().try_for_each(|(offset, run)| device.write_buffer_parts(buffer, *offset, run))?;
        } else {
            device.write_buffer_parts(buffer, 0, parts)?;
        }
        Ok(buffer)
    }

    /// The slot's buffer with room for `len` bytes (at least 16), made or
    /// grown (to the next power of two) when it has less.
    fn reserve(&mut self, device: &Device, slot: usize, len: u64) -> Result<BufferHandle> {
        let len = len.max(16);
        let entry = &mut self.slots[slot];
        if entry.is_none_or(|(_, cap)| cap < len) {
            if let Some((old, _)) = entry.take() {
                device.destroy_buffer(old);
            }
            let cap = len.next_power_of_two().max(4096);
            *entry = Some((device.create_buffer(&BufferDesc::host_visible(self.label, cap, self.usage))?, cap));
        }
        let (buffer, _) = entry.expect("just created");
        Ok(buffer)
    }
}

/// The concatenation of `parts` cut into `n` runs of about equal bytes
/// (the last may be shorter; none empty): per run its offset and its
/// slices, a part cut where a run ends.
fn cut_into_runs<'a>(parts: &[&'a [u8]], n: usize) -> Vec<(u64, Vec<&'a [u8]>)> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let per_run = total.div_ceil(n.max(1)).max(1);
    let mut runs: Vec<(u64, Vec<&[u8]>)> = Vec::new();
    let (mut offset, mut room) = (0, 0);
    for mut part in parts.iter().copied() {
        while !part.is_empty() {
            if room == 0 {
                runs.push((offset as u64, Vec::new()));
                room = per_run;
            }
            let (head, tail) = part.split_at(room.min(part.len()));
            runs.last_mut().expect("pushed above").1.push(head);
            (offset, room, part) = (offset + head.len(), room - head.len(), tail);
        }
    }
    runs
}

/// Transient per-frame vertex memory for dynamic primitives (UE's
/// FGlobalDynamicVertexBuffer): blocks per frame slot, bump-allocated.
pub struct DynamicBufferRing {
    slots: Vec<Vec<(BufferHandle, u64, u64)>>,
    current: usize,
    /// Bytes handed out this frame.
    pub used_bytes: u64,
}

const MIN_BLOCK: u64 = 1 << 20;
/// Allocation alignment: 256 satisfies every device's storage- and
/// uniform-buffer offset alignment, so allocations can be bound as ranges.
const ALIGN: u64 = 256;

impl DynamicBufferRing {
    pub(crate) fn new(frames: usize) -> Self {
        Self { slots: vec![Vec::new(); frames], current: 0, used_bytes: 0 }
    }

    /// Starts a frame on `slot` (its previous GPU use has finished); blocks
    /// are merged into one large enough for last time's total.
    pub(crate) fn begin(&mut self, device: &Device, slot: usize) -> Result<()> {
        self.current = slot;
        self.used_bytes = 0;
        let blocks = &mut self.slots[slot];
        if blocks.len() > 1 {
            let total: u64 = blocks.iter().map(|b| b.1).sum();
            for (b, _, _) in blocks.drain(..) {
                device.destroy_buffer(b);
            }
            let buffer = device.create_buffer(&BufferDesc::host_visible("dynamic vertices", total, usage()))?;
            blocks.push((buffer, total, 0));
        }
        for b in blocks.iter_mut() {
            b.2 = 0;
        }
        Ok(())
    }

    pub(crate) fn upload(&mut self, device: &Device, bytes: &[u8]) -> Result<(BufferHandle, u64)> {
        let len = (bytes.len() as u64).max(4);
        let blocks = &mut self.slots[self.current];
        let fits = blocks.last().is_some_and(|b| b.2.next_multiple_of(ALIGN) + len <= b.1);
        if !fits {
            let size = len.max(blocks.last().map_or(MIN_BLOCK, |b| b.1 * 2)).max(MIN_BLOCK);
            let buffer = device.create_buffer(&BufferDesc::host_visible("dynamic vertices", size, usage()))?;
            blocks.push((buffer, size, 0));
        }
        let block = blocks.last_mut().expect("a block");
        let offset = block.2.next_multiple_of(ALIGN);
        device.write_buffer(block.0, offset, bytes)?;
        block.2 = offset + len;
        self.used_bytes += len;
        Ok((block.0, offset))
    }
}

fn usage() -> BufferUsage {
    BufferUsage::VERTEX | BufferUsage::INDEX | BufferUsage::STORAGE | BufferUsage::INDIRECT | BufferUsage::TRANSFER_DST
}

#[cfg(test)]
mod tests {
    use super::cut_into_runs;

    #[test]
    fn runs_cut_the_parts_concatenation_into_equal_pieces_at_their_offsets() {
        let bytes: Vec<u8> = (0..=255).cycle().take(1000).collect();
        // Parts of uneven sizes, an empty one among them.
        let parts: Vec<&[u8]> = vec![&bytes[..3], &bytes[3..3], &bytes[3..700], &bytes[700..701], &bytes[701..]];
        for n in [1, 2, 3, 4, 7, 1000, 5000] {
            let runs = cut_into_runs(&parts, n);
            assert!(runs.len() <= n && !runs.is_empty(), "{n}: {} runs", runs.len());
            let mut at = 0;
            for (offset, run) in &runs {
                assert_eq!(*offset, at as u64, "{n}: runs follow each other");
                let joined = run.concat();
                assert!(!joined.is_empty() && joined.len() <= 1000usize.div_ceil(n));
                assert_eq!(joined, bytes[at..at + joined.len()], "{n}: a run is the bytes at its offset");
                at += joined.len();
            }
            assert_eq!(at, 1000, "{n}: every byte in one run");
        }
        assert!(cut_into_runs(&[&[], &[]], 4).is_empty(), "nothing to write, no run");
    }
}
