//! Static meshes on the render side: `StaticMeshRenderData` (LODs → sections
//! → index ranges and material slots, vertex data in the local vertex
//! factory's streams) shared by every `StaticMeshSceneProxy` that draws it.
//! The proxy takes the cached path: its batches are built into mesh draw
//! commands once, and the LOD is chosen per view by screen size.

use crate::error::{RendererError, Result};
use crate::material::MaterialId;
use crate::math::Bounds;
use crate::mesh_pass::MeshBatch;
use crate::scene::PrimitiveSceneProxy;
use crate::vertex_factory::{LocalVertex, LocalVertexFactory};
use glam::{Vec3, Vec4};
use rhi_vulkan::{BufferDesc, BufferHandle, BufferUsage, Device};
use std::sync::{Arc, Mutex};

/// A run of triangles drawn with one material slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticMeshSection {
    pub first_index: u32,
    pub index_count: u32,
    pub material_slot: u32,
}

/// One level of detail.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticMeshLod {
    pub vertices: Vec<LocalVertex>,
    pub indices: Vec<u32>,
    pub sections: Vec<StaticMeshSection>,
    /// This LOD is used while the mesh's screen size is at least this.
    pub screen_size: f32,
}

impl StaticMeshLod {
    /// One section covering every index, material slot 0.
    pub fn single_section(vertices: Vec<LocalVertex>, indices: Vec<u32>) -> Self {
        let count = indices.len() as u32;
        Self { vertices, indices, sections: vec![StaticMeshSection { first_index: 0, index_count: count, material_slot: 0 }], screen_size: 0.0 }
    }
}

struct LodGpu {
    vertices: BufferHandle,
    offsets: [u64; 4],
    indices: BufferHandle,
}

/// CPU and GPU data of a static mesh; GPU buffers are created on the render
/// thread by the first proxy that needs them and destroyed (deferred by the
/// RHI) when the last proxy using them is removed, so that meshes created
/// and dropped at run time do not pile up buffers until shutdown. A mesh
/// drawn again later is uploaded again.
pub struct StaticMeshRenderData {
    lods: Vec<StaticMeshLod>,
    bounds: Bounds,
    screen_sizes: Vec<f32>,
    gpu: Mutex<Option<Arc<Vec<LodGpu>>>>,
    /// Proxies holding the GPU buffers ([`StaticMeshSceneProxy`]s in a scene).
    users: Mutex<usize>,
}

impl std::fmt::Debug for StaticMeshRenderData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticMeshRenderData").field("lods", &self.lods.len()).field("bounds", &self.bounds).finish()
    }
}

impl StaticMeshRenderData {
    /// Validates the LODs (indices in range, sections inside the index list,
    /// finite positions) and computes bounds.
    pub fn new(lods: Vec<StaticMeshLod>) -> Result<Arc<Self>> {
        if lods.is_empty() {
            return Err(RendererError::InvalidMesh("a static mesh needs at least one LOD".into()));
        }
        let mut min = Vec3::splat(f32::MAX);
        let mut max = Vec3::splat(f32::MIN);
        for (l, lod) in lods.iter().enumerate() {
            if lod.vertices.is_empty() || lod.indices.is_empty() || lod.indices.len() % 3 != 0 {
                return Err(RendererError::InvalidMesh(format!("LOD {l}: {} vertices, {} indices", lod.vertices.len(), lod.indices.len())));
            }
            if let Some(i) = lod.indices.iter().find(|&&i| i as usize >= lod.vertices.len()) {
                return Err(RendererError::InvalidMesh(format!("LOD {l}: index {i} ≥ vertex count {}", lod.vertices.len())));
            }
            for s in &lod.sections {
                if s.index_count == 0 || s.index_count % 3 != 0 || s.first_index as usize + s.index_count as usize > lod.indices.len() {
                    return Err(RendererError::InvalidMesh(format!("LOD {l}: section {s:?} outside {} indices", lod.indices.len())));
                }
            }
            for v in &lod.vertices {
                let p = Vec3::from(v.position);
                if !p.is_finite() {
                    return Err(RendererError::InvalidMesh(format!("LOD {l}: non-finite position")));
                }
                min = min.min(p);
                max = max.max(p);
            }
        }
        let screen_sizes = if lods.len() > 1 { lods.iter().map(|l| l.screen_size).collect() } else { Vec::new() };
        Ok(Arc::new(Self { lods, bounds: Bounds::from_box(min, max), screen_sizes, gpu: Mutex::new(None), users: Mutex::new(0) }))
    }

    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    pub fn lods(&self) -> &[StaticMeshLod] {
        &self.lods
    }

    /// Creates the GPU buffers once (render thread).
    pub fn init_gpu(&self, device: &Device) -> rhi_vulkan::Result<()> {
        let mut gpu = self.gpu.lock().unwrap_or_else(|p| p.into_inner());
        if gpu.is_some() {
            return Ok(());
        }
        let mut out = Vec::with_capacity(self.lods.len());
        for lod in &self.lods {
            let (bytes, offsets) = LocalVertexFactory::pack(&lod.vertices);
            let vertices = device.create_buffer_init(&BufferDesc::gpu_only("static mesh vertices", bytes.len() as u64, BufferUsage::VERTEX), &bytes)?;
            let indices = device.create_buffer_init(
                &BufferDesc::gpu_only("static mesh indices", lod.indices.len() as u64 * 4, BufferUsage::INDEX),
                bytemuck::cast_slice(&lod.indices),
            )?;
            out.push(LodGpu { vertices, offsets, indices });
        }
        *gpu = Some(Arc::new(out));
        Ok(())
    }

    /// Destroys the GPU buffers (deferred by the RHI); proxies still in the
    /// scene must be removed first.
    pub fn release_gpu(&self, device: &Device) {
        if let Some(gpu) = self.gpu.lock().unwrap_or_else(|p| p.into_inner()).take() {
            for l in gpu.iter() {
                device.destroy_buffer(l.vertices);
                device.destroy_buffer(l.indices);
            }
        }
    }

    /// A proxy starts using the GPU buffers (created if needed).
    fn acquire_gpu(&self, device: &Device) -> rhi_vulkan::Result<()> {
        let mut users = self.users.lock().unwrap_or_else(|p| p.into_inner());
        self.init_gpu(device)?;
        *users += 1;
        Ok(())
    }

    /// A proxy stops using the GPU buffers; the last one destroys them.
    fn release_user(&self, device: &Device) {
        let mut users = self.users.lock().unwrap_or_else(|p| p.into_inner());
        *users = users.saturating_sub(1);
        if *users == 0 {
            self.release_gpu(device);
        }
    }

    fn gpu(&self) -> Option<Arc<Vec<LodGpu>>> {
        self.gpu.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The proxy of a static mesh component.
pub struct StaticMeshSceneProxy {
    mesh: Arc<StaticMeshRenderData>,
    /// Material per slot; missing slots use the default material.
    materials: Vec<MaterialId>,
    cast_shadow: bool,
    custom_data: Vec4,
    /// See [`PrimitiveSceneProxy::max_draw_distance`].
    max_draw_distance: f32,
    /// Whether `create_render_resources` succeeded (the mesh counts this proxy as a user).
    holds_gpu: bool,
}

impl StaticMeshSceneProxy {
    pub fn new(mesh: Arc<StaticMeshRenderData>, materials: Vec<MaterialId>) -> Self {
        Self { mesh, materials, cast_shadow: true, custom_data: Vec4::ZERO, max_draw_distance: 0.0, holds_gpu: false }
    }

    pub fn with_cast_shadow(mut self, cast_shadow: bool) -> Self {
        self.cast_shadow = cast_shadow;
        self
    }

    pub fn with_custom_data(mut self, custom: Vec4) -> Self {
        self.custom_data = custom;
        self
    }

    /// Culled beyond `distance` from a view (UE's per-primitive
    /// MaxDrawDistance; 0: no limit).
    pub fn with_max_draw_distance(mut self, distance: f32) -> Self {
        self.max_draw_distance = distance;
        self
    }

    pub fn mesh(&self) -> &Arc<StaticMeshRenderData> {
        &self.mesh
    }
}

impl PrimitiveSceneProxy for StaticMeshSceneProxy {
    fn local_bounds(&self) -> Bounds {
        self.mesh.bounds
    }

    fn view_relevance(&self, _view: &crate::view::SceneView) -> crate::scene::ViewRelevance {
        crate::scene::ViewRelevance { draw: true, shadow: self.cast_shadow, static_relevance: true, opaque: true, ..Default::default() }
    }

    fn draw_static_elements(&self, out: &mut Vec<MeshBatch>) {
        let Some(gpu) = self.mesh.gpu() else { return };
        for (l, (lod, g)) in self.mesh.lods.iter().zip(gpu.iter()).enumerate() {
            let streams = [0, 1, 2, 3].map(|i| Some((g.vertices, g.offsets[i])));
            for s in &lod.sections {
                let material = self.materials.get(s.material_slot as usize).copied().unwrap_or(MaterialId::DEFAULT);
                let mut batch = MeshBatch::local(streams, g.indices, s.first_index, s.index_count, material);
                batch.lod_index = l as u8;
                batch.cast_shadow = self.cast_shadow;
                out.push(batch);
            }
        }
    }

    fn lod_screen_sizes(&self) -> &[f32] {
        &self.mesh.screen_sizes
    }

    fn max_draw_distance(&self) -> f32 {
        self.max_draw_distance
    }

    fn custom_primitive_data(&self) -> Vec4 {
        self.custom_data
    }

    fn create_render_resources(&mut self, device: &Device) -> rhi_vulkan::Result<()> {
        if !self.holds_gpu {
            self.mesh.acquire_gpu(device)?;
            self.holds_gpu = true;
        }
        Ok(())
    }

    fn release_render_resources(&mut self, device: &Device) {
        if std::mem::take(&mut self.holds_gpu) {
            self.mesh.release_user(device);
        }
    }

    fn memory_footprint(&self) -> usize {
        std::mem::size_of::<Self>() + self.materials.len() * 4
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Simple shapes as single-LOD mesh data (engine-core builds its assets on these).
pub mod shapes {
    use super::StaticMeshLod;
    use crate::vertex_factory::LocalVertex;
    use glam::Vec3;

    fn vertex(p: Vec3, n: Vec3, uv: [f32; 2]) -> LocalVertex {
        let t = if n.z.abs() > 0.9 { Vec3::X } else { Vec3::Z.cross(n).normalize() };
        LocalVertex { position: p.to_array(), tangent_x: t.extend(1.0).to_array(), normal: n.to_array(), color: [255; 4], uvs: [uv, [0.0; 2], [0.0; 2], [0.0; 2]] }
    }

    /// An axis-aligned cube of edge `size` centred at the origin (24 vertices, 12 triangles, CCW outward).
    pub fn cube(size: f32) -> StaticMeshLod {
        let h = size * 0.5;
        let faces = [
            (Vec3::X, Vec3::Y, Vec3::Z),
            (Vec3::NEG_X, Vec3::NEG_Y, Vec3::Z),
            (Vec3::Y, Vec3::NEG_X, Vec3::Z),
            (Vec3::NEG_Y, Vec3::X, Vec3::Z),
            (Vec3::Z, Vec3::X, Vec3::Y),
            (Vec3::NEG_Z, Vec3::X, Vec3::NEG_Y),
        ];
        let mut vertices = Vec::new();
        let mut indices = Vec::new();
        for (n, u, v) in faces {
            let base = vertices.len() as u32;
            for (su, sv) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                vertices.push(vertex((n + u * su + v * sv) * h, n, [(su + 1.0) / 2.0, (sv + 1.0) / 2.0]));
            }
            indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
        }
        StaticMeshLod::single_section(vertices, indices)
    }

    /// A square in the XY plane facing +Z, edge `size`, centred at the origin.
    pub fn plane(size: f32) -> StaticMeshLod {
        let h = size * 0.5;
        let vertices = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
            .map(|(x, y)| vertex(Vec3::new(x * h, y * h, 0.0), Vec3::Z, [(x + 1.0) / 2.0, (y + 1.0) / 2.0]))
            .to_vec();
        StaticMeshLod::single_section(vertices, vec![0, 1, 2, 0, 2, 3])
    }
}
