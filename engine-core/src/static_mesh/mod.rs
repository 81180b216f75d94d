//! `StaticMesh` assets (CPU-side LODs, sections, material slots, bounds) and
//! `StaticMeshComponent`. A mesh is turned once into the renderer's
//! `StaticMeshRenderData` (shared by every component drawing it) and, on
//! first need (feature `collision`), cooked once into collision shared the
//! same way. The built-in shapes are the renderer's ([`renderer::shapes`]).

#[cfg(feature = "collision")]
use crate::collision::{BodySetup, CookedCollision, TriMeshCollisionData};
use crate::component::*;
use crate::error::{EngineError, Result};
#[cfg(feature = "collision")]
use glam::Vec3;
use renderer::{Bounds, MaterialId, PrimitiveSceneProxy, StaticMeshLod, StaticMeshRenderData, StaticMeshSceneProxy};
use std::sync::Arc;
#[cfg(feature = "collision")]
use std::sync::OnceLock;

/// A static mesh asset.
pub struct StaticMesh {
    pub name: String,
    /// One name per material slot (sections refer to slots).
    pub material_slots: Vec<String>,
    render_data: Arc<StaticMeshRenderData>,
    #[cfg(feature = "collision")]
    collision: OnceLock<Option<Arc<CookedCollision>>>,
}

impl std::fmt::Debug for StaticMesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticMesh").field("name", &self.name).field("lods", &self.render_data.lods().len()).finish()
    }
}

impl StaticMesh {
    /// Validates the LODs (see `StaticMeshRenderData::new`) and the bounds
    /// they make (positions so far apart that the box overflows are rejected).
    pub fn new(name: &str, lods: Vec<StaticMeshLod>, material_slots: Vec<String>) -> Result<Arc<Self>> {
        // A section whose end overflows `u32` is outside any index list
        // (checked here: the renderer's own check adds in `u32`).
        if let Some(s) = lods.iter().flat_map(|l| &l.sections).find(|s| s.first_index.checked_add(s.index_count).is_none()) {
            return Err(EngineError::InvalidMesh(format!("{name}: section {s:?} ends past u32::MAX")));
        }
        let render_data = StaticMeshRenderData::new(lods).map_err(|e| EngineError::InvalidMesh(format!("{name}: {e}")))?;
        if !render_data.bounds().is_valid() {
            return Err(EngineError::InvalidMesh(format!("{name}: bounds {:?} are not finite", render_data.bounds())));
        }
        Ok(Arc::new(Self {
            name: name.into(),
            material_slots,
            render_data,
            #[cfg(feature = "collision")]
            collision: OnceLock::new(),
        }))
    }

    fn shape(name: &str, lod: StaticMeshLod) -> Arc<Self> {
        Self::new(name, vec![lod], vec!["default".into()]).expect("built-in shapes are valid")
    }

    /// A cube of edge 1 centred at the origin.
    pub fn cube() -> Arc<Self> {
        Self::shape("cube", renderer::shapes::cube(1.0))
    }
    /// A UV sphere of radius 0.5 with `segments` slices and half as many rings.
    pub fn sphere(segments: u32) -> Arc<Self> {
        Self::shape("sphere", renderer::shapes::uv_sphere(0.5, segments, segments / 2))
    }
    /// A 1x1 square in the XY plane facing +Z.
    pub fn plane() -> Arc<Self> {
        Self::shape("plane", renderer::shapes::plane(1.0))
    }
    /// A cylinder of radius 0.5 and height 1 along Z, centred at the origin.
    pub fn cylinder(segments: u32) -> Arc<Self> {
        Self::shape("cylinder", renderer::shapes::cylinder(0.5, 1.0, segments))
    }
    /// A cone of radius 0.5 and height 1 along Z, base at z = -0.5.
    pub fn cone(segments: u32) -> Arc<Self> {
        Self::shape("cone", renderer::shapes::cone(0.5, 1.0, segments))
    }

    pub fn bounds(&self) -> Bounds {
        self.render_data.bounds()
    }

    pub fn render_data(&self) -> &Arc<StaticMeshRenderData> {
        &self.render_data
    }

    /// LOD 0 as collision data: material index = the section's material slot.
    #[cfg(feature = "collision")]
    pub fn collision_data(&self) -> TriMeshCollisionData {
        let lod = &self.render_data.lods()[0];
        let vertices: Vec<Vec3> = lod.vertices.iter().map(|v| Vec3::from(v.position)).collect();
        let mut data = TriMeshCollisionData::new();
        for s in &lod.sections {
            let tris: Vec<[u32; 3]> = lod.indices[s.first_index as usize..(s.first_index + s.index_count) as usize]
                .chunks_exact(3)
                .map(|t| [t[0], t[1], t[2]])
                .collect();
            // Each section pushes the whole vertex list (indices are mesh-wide).
            if data.push_section(&vertices, &tris, s.material_slot as u16).is_err() {
                return TriMeshCollisionData::new();
            }
        }
        data
    }

    /// The cooked collision of LOD 0, cooked on first use and shared.
    #[cfg(feature = "collision")]
    pub fn collision(&self) -> Option<Arc<CookedCollision>> {
        self.collision
            .get_or_init(|| {
                let data = self.collision_data();
                let mut setup = BodySetup::new();
                setup.use_complex_as_simple = true;
                setup.cook(&data).map_err(|e| log::warn!("cooking {}: {e}", self.name)).ok()
            })
            .clone()
    }
}

/// UE's UStaticMeshComponent.
pub struct StaticMeshComponent {
    mesh: Arc<StaticMesh>,
    dirty: DirtyFlags,
}

impl StaticMeshComponent {
    pub fn new(mesh: Arc<StaticMesh>) -> Self {
        Self { mesh, dirty: DirtyFlags::NONE }
    }

    pub fn mesh(&self) -> &Arc<StaticMesh> {
        &self.mesh
    }

    /// Changes the mesh: the proxy and the collision are recreated.
    pub fn set_mesh(&mut self, mesh: Arc<StaticMesh>) {
        if !Arc::ptr_eq(&self.mesh, &mesh) {
            self.mesh = mesh;
            self.dirty = self.dirty | DirtyFlags::RENDER_STATE | DirtyFlags::COLLISION;
        }
    }
}

impl Component for StaticMeshComponent {
    fn as_primitive(&self) -> Option<&dyn PrimitiveComponent> {
        Some(self)
    }
    fn as_primitive_mut(&mut self) -> Option<&mut dyn PrimitiveComponent> {
        Some(self)
    }
}

impl PrimitiveComponent for StaticMeshComponent {
    fn create_scene_proxy(&self, ctx: &ProxyCreateContext<'_>) -> Option<Box<dyn PrimitiveSceneProxy>> {
        let slots = self.mesh.material_slots.len().max(1);
        let materials: Vec<MaterialId> =
            (0..slots).map(|i| ctx.settings.materials.get(i).copied().unwrap_or(MaterialId::DEFAULT)).collect();
        Some(Box::new(
            StaticMeshSceneProxy::new(self.mesh.render_data.clone(), materials)
                .with_cast_shadow(ctx.settings.cast_shadow)
                .with_custom_data(ctx.settings.custom_primitive_data),
        ))
    }

    fn local_bounds(&self) -> Bounds {
        self.mesh.bounds()
    }

    fn take_dirty(&mut self) -> DirtyFlags {
        std::mem::replace(&mut self.dirty, DirtyFlags::NONE)
    }

    #[cfg(feature = "collision")]
    fn collision(&mut self) -> Option<Arc<CookedCollision>> {
        self.mesh.collision()
    }
}
