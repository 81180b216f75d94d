//! [`ProceduralMeshComponent`]: UE's `UProceduralMeshComponent` on
//! engine-core's [`Component`] / [`PrimitiveComponent`] traits.
//!
//! Every call forwards to the component's [`ProcMeshData`] and turns the
//! returned [`ChangeSet`] into engine-core [`DirtyFlags`], which the world
//! collects right after the call (`World::with_component_mut` →
//! [`PrimitiveComponent::take_dirty`]):
//!
//! | change set | dirty flag | at end of frame |
//! | --- | --- | --- |
//! | `render_state` (create, clear, material, draw path) | `RENDER_STATE` | a new proxy ([`ProceduralMeshSceneProxy::new`]) |
//! | `dynamic_data` (update in place) | `DYNAMIC_DATA` | [`proxy_updates`] to the existing proxy |
//! | `visibility`, dynamic draw path | `DYNAMIC_DATA` | a visibility message |
//! | `visibility`, static draw path | `RENDER_STATE` | a new proxy (the cached commands hold visibility) |
//! | `transform` (bounds moved) | `TRANSFORM` | transform and new local bounds |
//! | `collision_cooked`, or an async cook landing in [`Component::tick`] | `COLLISION` | the new cooked collision to the collision scene |
//!
//! **Queued messages.** In-place changes are merged over the frame and
//! copied once, when engine-core asks for the dynamic data. Building a new
//! proxy drops them (the proxy copies the current mesh), so a proxy
//! recreated for any reason — this component's render state or a world
//! setting such as visibility — never receives stale messages next frame.
//!
//! **Mirrored transforms.** Nothing to do: the renderer tells the proxy
//! its transform on add and after every move
//! (`PrimitiveSceneProxy::on_transform_changed`), and the proxy flips the
//! winding of its dynamic batches when the determinant is negative. The
//! static path's cached commands are flipped by the renderer itself.

use std::any::Any;
#[cfg(feature = "collision")]
use std::sync::Arc;
use std::sync::{Mutex, PoisonError};

#[cfg(feature = "collision")]
use engine_core::collision::{CookEvent, CookedCollision};
use engine_core::{Component, DirtyFlags, PrimitiveComponent, ProxyCreateContext};
#[cfg(feature = "collision")]
use glam::Vec3;
use renderer::{Bounds, PrimitiveSceneProxy};

use crate::change::ChangeSet;
use crate::error::Result;
use crate::material::MaterialRef;
use crate::mesh::ProcMeshData;
use crate::proxy::{proxy_updates, ProcMeshProxyOptions, ProceduralMeshSceneProxy};
use crate::section::SectionData;

/// Messages for the existing proxy, not yet sent.
/// UE's `UProceduralMeshComponent`. See the module doc.
#[derive(Debug)]
pub struct ProceduralMeshComponent {
    /// Behind a lock only because `ProcMeshData` is `Send` but not `Sync`
    /// (its asynchronous cooker's channel) and components must be both;
    /// `&mut self` calls reach it without locking.
    mesh: Mutex<ProcMeshData>,
    /// `mesh.use_async_cooking()`, readable without the lock.
    #[cfg(feature = "collision")]
    use_async_cooking: bool,
    options: ProcMeshProxyOptions,
    pending: DirtyFlags,
    /// Behind a lock because proxies are built through `&self` (in parallel
    /// across components) and building one drops the queued messages.
    pending_updates: Mutex<ChangeSet>,
}

impl Default for ProceduralMeshComponent {
    fn default() -> Self {
        Self::new()
    }
}

impl ProceduralMeshComponent {
    /// An empty component drawn through the dynamic path.
    pub fn new() -> Self {
        Self::from_mesh(ProcMeshData::new())
    }

    /// A component drawing `mesh` (its sections, materials and collision).
    pub fn from_mesh(mesh: ProcMeshData) -> Self {
        Self {
            #[cfg(feature = "collision")]
            use_async_cooking: mesh.use_async_cooking(),
            mesh: Mutex::new(mesh),
            options: ProcMeshProxyOptions::default(),
            pending: DirtyFlags::NONE,
            pending_updates: Mutex::new(ChangeSet::default()),
        }
    }

    /// With these proxy options.
    pub fn with_options(mut self, options: ProcMeshProxyOptions) -> Self {
        self.options = options;
        self
    }

    /// Runs `f` on the mesh data (locks it briefly).
    pub fn with_mesh<R>(&self, f: impl FnOnce(&ProcMeshData) -> R) -> R {
        f(&self.mesh.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The mesh data, without locking.
    pub fn mesh_mut(&mut self) -> &ProcMeshData {
        self.data()
    }

    fn data(&mut self) -> &mut ProcMeshData {
        self.mesh.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// The proxy options.
    pub fn options(&self) -> ProcMeshProxyOptions {
        self.options
    }

    fn pending_mut(&mut self) -> &mut ChangeSet {
        self.pending_updates.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks what `changes` says (see the module doc's table).
    fn absorb(&mut self, mut changes: ChangeSet) {
        let static_path = self.options.static_draw_path;
        if static_path && !changes.visibility.is_empty() {
            changes.render_state = true;
        }
        let mut dirty = DirtyFlags::NONE;
        if changes.render_state {
            dirty = dirty | DirtyFlags::RENDER_STATE;
        } else if !changes.dynamic_data.is_empty() || !changes.visibility.is_empty() {
            dirty = dirty | DirtyFlags::DYNAMIC_DATA;
        }
        if changes.transform {
            dirty = dirty | DirtyFlags::TRANSFORM;
        }
        if changes.collision_cooked {
            dirty = dirty | DirtyFlags::COLLISION;
        }
        self.pending = self.pending | dirty;
        self.pending_mut().merge(changes);
    }

    fn forward(&mut self, changes: Result<ChangeSet>) -> Result<()> {
        self.absorb(changes?);
        Ok(())
    }

    /// [`ProcMeshData::create_mesh_section`]: a new proxy.
    pub fn create_mesh_section(&mut self, index: usize, data: SectionData<'_>, create_collision: bool) -> Result<()> {
        let c = self.data().create_mesh_section(index, data, create_collision);
        self.forward(c)
    }

    /// [`ProcMeshData::update_mesh_section`]: the existing proxy receives
    /// the new streams.
    pub fn update_mesh_section(&mut self, index: usize, data: SectionData<'_>) -> Result<()> {
        let c = self.data().update_mesh_section(index, data);
        self.forward(c)
    }

    /// [`ProcMeshData::clear_mesh_section`].
    pub fn clear_mesh_section(&mut self, index: usize) -> Result<()> {
        let c = self.data().clear_mesh_section(index);
        self.forward(c)
    }

    /// [`ProcMeshData::clear_all_mesh_sections`].
    pub fn clear_all_mesh_sections(&mut self) -> Result<()> {
        let c = self.data().clear_all_mesh_sections();
        self.forward(c)
    }

    /// [`ProcMeshData::set_mesh_section_visible`]: a message on the dynamic
    /// path, a new proxy on the static path.
    pub fn set_mesh_section_visible(&mut self, index: usize, visible: bool) -> Result<()> {
        let c = self.data().set_mesh_section_visible(index, visible);
        self.forward(c)
    }

    /// Whether section `index` is drawn.
    pub fn is_mesh_section_visible(&self, index: usize) -> bool {
        self.with_mesh(|m| m.is_mesh_section_visible(index))
    }

    /// [`ProcMeshData::set_material`]. A material set on the world for slot
    /// `index` (`World::set_material`, other than `MaterialId::DEFAULT`)
    /// overrides it.
    pub fn set_material(&mut self, index: usize, material: Option<MaterialRef>) -> Result<()> {
        let c = self.data().set_material(index, material);
        self.forward(c)
    }

    /// Draws through the cached (static) path or the dynamic one; a change
    /// recreates the proxy.
    pub fn set_static_draw_path(&mut self, on: bool) {
        if self.options.static_draw_path != on {
            self.options.static_draw_path = on;
            self.absorb(ChangeSet::render_state(false));
        }
    }

    /// Whether the sections cast shadows (besides the world's setting); a
    /// change recreates the proxy.
    pub fn set_cast_shadow(&mut self, on: bool) {
        if self.options.cast_shadow != on {
            self.options.cast_shadow = on;
            self.absorb(ChangeSet::render_state(false));
        }
    }
}

/// The collision half (feature `collision`).
#[cfg(feature = "collision")]
impl ProceduralMeshComponent {
    /// [`ProcMeshData::add_collision_convex_mesh`].
    pub fn add_collision_convex_mesh(&mut self, points: &[Vec3]) -> Result<()> {
        let c = self.data().add_collision_convex_mesh(points);
        self.forward(c)
    }

    /// [`ProcMeshData::set_collision_convex_meshes`].
    pub fn set_collision_convex_meshes(&mut self, meshes: &[Vec<Vec3>]) -> Result<()> {
        let c = self.data().set_collision_convex_meshes(meshes);
        self.forward(c)
    }

    /// [`ProcMeshData::clear_collision_convex_meshes`].
    pub fn clear_collision_convex_meshes(&mut self) -> Result<()> {
        let c = self.data().clear_collision_convex_meshes();
        self.forward(c)
    }

    /// [`ProcMeshData::set_use_complex_as_simple_collision`].
    pub fn set_use_complex_as_simple_collision(&mut self, on: bool) -> Result<()> {
        let c = self.data().set_use_complex_as_simple_collision(on);
        self.forward(c)
    }

    /// [`ProcMeshData::set_support_uv_from_hit_results`].
    pub fn set_support_uv_from_hit_results(&mut self, on: bool) -> Result<()> {
        let c = self.data().set_support_uv_from_hit_results(on);
        self.forward(c)
    }

    /// [`ProcMeshData::set_use_async_cooking`]; while on, the component
    /// ticks to apply finished cooks.
    pub fn set_use_async_cooking(&mut self, on: bool) {
        self.data().set_use_async_cooking(on);
        self.use_async_cooking = on;
    }
}

impl Component for ProceduralMeshComponent {
    /// Applies a finished asynchronous cook (the only reason to tick).
    #[cfg(feature = "collision")]
    fn tick(&mut self, _dt: f32) -> DirtyFlags {
        match self.data().poll_collision() {
            Some(CookEvent::Finished { .. }) => DirtyFlags::COLLISION,
            _ => DirtyFlags::NONE,
        }
    }

    #[cfg(feature = "collision")]
    fn wants_tick(&self) -> bool {
        self.use_async_cooking
    }

    fn as_primitive(&self) -> Option<&dyn PrimitiveComponent> {
        Some(self)
    }

    fn as_primitive_mut(&mut self) -> Option<&mut dyn PrimitiveComponent> {
        Some(self)
    }
}

impl PrimitiveComponent for ProceduralMeshComponent {
    fn create_scene_proxy(&self, ctx: &ProxyCreateContext<'_>) -> Option<Box<dyn PrimitiveSceneProxy>> {
        // The new proxy copies the current mesh: queued messages are moot.
        *self.pending_updates.lock().unwrap_or_else(PoisonError::into_inner) = ChangeSet::default();
        let options = ProcMeshProxyOptions { cast_shadow: self.options.cast_shadow && ctx.settings.cast_shadow, ..self.options };
        let proxy = self.with_mesh(|mesh| ProceduralMeshSceneProxy::new(mesh, options)).with_material_overrides(&ctx.settings.materials);
        Some(Box::new(proxy))
    }

    fn local_bounds(&self) -> Bounds {
        self.with_mesh(|m| m.local_bounds().into())
    }

    fn take_dirty(&mut self) -> DirtyFlags {
        std::mem::replace(&mut self.pending, DirtyFlags::NONE)
    }

    fn dynamic_data(&mut self) -> Option<Box<dyn Any + Send>> {
        let changes = std::mem::take(self.pending_mut());
        let updates = match proxy_updates(self.data(), &changes) {
            Ok(updates) => updates,
            Err(error) => {
                log::warn!("procedural mesh: dropping stale section updates: {error}");
                Vec::new()
            }
        };
        (!updates.is_empty()).then(|| Box::new(updates) as Box<dyn Any + Send>)
    }

    #[cfg(feature = "collision")]
    fn collision(&mut self) -> Option<Arc<CookedCollision>> {
        self.data().cooked_collision().cloned()
    }

    #[cfg(feature = "collision")]
    /// The material of section `material_index` (the section a collision
    /// triangle came from).
    fn collision_face_material(&self, material_index: u16) -> Option<renderer::MaterialId> {
        self.with_mesh(|m| m.material(usize::from(material_index))).map(renderer::MaterialId::from)
    }
}
