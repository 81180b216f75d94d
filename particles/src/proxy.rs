//! The particle system's render-thread proxy (UE's
//! `FParticleSystemSceneProxy`).
//!
//! The game thread owns the simulation; at the end of each frame it sends
//! the proxy a [`ParticleSystemDynamicData`] snapshot (the
//! [`ParticleSystemComponent`](crate::ParticleSystemComponent)'s dynamic
//! data, sent by the world's end-of-frame update). Every rendered frame the renderer asks the
//! proxy for its dynamic mesh elements, and it answers with one instanced
//! draw per emitter with live particles: the emitter's particles become
//! sprite instances ([`build_sprite_vertices_with`], sorted back to front
//! from that view, by depth or distance, when the emitter's sort mode asks
//! for it), copied into the
//! frame's dynamic vertex memory.
//!
//! ```text
//! game thread    tick ─ build_dynamic_data ─ send ─────────────┐
//! render thread  update_dynamic_data (keep snapshot) ◄─────────┘
//!                frame: get_dynamic_mesh_elements
//!                  per visible view × emitter: sort → upload → MeshBatch
//!                  live particles drawn → the frame's stats
//! ```
//!
//! * **Passes.** The batch's material decides: translucent and additive
//!   materials go to the translucency pass only (no depth, no shadow);
//!   opaque and masked ones to the depth prepass and base pass. Particles
//!   never cast shadows (UE's sprites do not by default): relevance has
//!   `shadow: false` and batches `cast_shadow: false`.
//! * **Order.** The renderer sorts translucent draws back to front by
//!   primitive (the system's bounds centre); inside the system, emitters
//!   draw in asset order and particles in the emitter's sort order.
//! * **Bounds.** The scene reads [`PrimitiveSceneProxy::local_bounds`] when
//!   the proxy is added; later bounds reach the scene only through
//!   transform updates with bounds, which the world's end-of-frame update
//!   sends every frame the component ticks (its
//!   `PrimitiveComponent::local_bounds`). With
//!   [`ParticleSystemSceneProxy::with_fixed_bounds`] the proxy always reports
//!   the fixed box (for systems whose extent is known, skipping the walk).
//!   Snapshot positions are in world space (local-space emitters' carried
//!   there by the game side); a proxy added with a
//!   local-to-world other than the identity
//!   ([`ParticleSystemSceneProxy::with_local_to_world`]) reports its world
//!   box in that frame.
//! * **Stats.** The particles drawn in a frame go into its stats as the
//!   counter [`LIVE_PARTICLES_COUNTER`] (the samples' `particles`).
//! * **Failures.** An emitter whose sprite vertices cannot be copied into
//!   the frame's dynamic memory is skipped for the frame and reported
//!   ([`EMITTER_UPLOAD_FAILURE`], in the frame's
//!   `renderer::FrameStats::element_failures`); the rest is drawn.

use std::any::Any;
use std::sync::Mutex;

use glam::{Mat4, Vec3};
use renderer::{
    Bounds, ElementFailure, MeshBatch, MeshBatchElement, MeshElementCollector, PrimitiveSceneProxy, ProxyUpdateContext, SceneView,
    ViewRelevance,
};
use rhi_vulkan::{BufferDesc, BufferHandle, BufferUsage, Device};

use crate::asset::{BlendMode, SortMode};
use crate::bounds::Aabb;
use crate::dynamic_data::{build_sprite_vertices_with, ParticleSpriteVertex, ParticleSystemDynamicData, SpriteScratch, SpriteView};
use crate::materials::ParticleMaterials;
use crate::snapshot_pool::SnapshotReturner;
use crate::sprite_vertex_factory::{QUAD_CORNERS, QUAD_INDICES, SPRITE_VERTEX_FACTORY};

/// The frame counter (`renderer::FrameStats::counters`) of the live
/// particles drawn, summed over the particle proxies: each emitter's
/// particles count once when it is drawn in at least one view.
pub const LIVE_PARTICLES_COUNTER: &str = "particles.live";

/// What a particle proxy reports
/// ([`renderer::MeshElementCollector::report_failure`], counted in
/// `renderer::FrameStats::element_failures`) for an emitter whose sprite
/// vertices could not be copied into the frame's dynamic memory: that
/// emitter is not drawn this frame (its particles are not in
/// [`LIVE_PARTICLES_COUNTER`] unless an earlier view drew it), the others are.
pub const EMITTER_UPLOAD_FAILURE: &str = "particle emitter upload";

/// Half the side of the box a proxy reports before it has seen a particle
/// (around the origin it was given), in world units.
pub const DEFAULT_BOUNDS_HALF_EXTENT: f32 = 1000.0;

/// Working memory of one `get_dynamic_mesh_elements` call, kept between
/// frames so that steady-state sorting allocates nothing.
#[derive(Debug, Default)]
struct Scratch {
    vertices: Vec<ParticleSpriteVertex>,
    sort: SpriteScratch,
}

/// The unit quad shared by every emitter of a proxy.
#[derive(Clone, Copy, Debug)]
struct QuadBuffers {
    vertices: BufferHandle,
    indices: BufferHandle,
}

/// Render-thread copy of a particle system; see the module docs.
#[derive(Debug)]
pub struct ParticleSystemSceneProxy {
    materials: ParticleMaterials,
    data: ParticleSystemDynamicData,
    bounds: Aabb,
    fixed_bounds: bool,
    /// World-to-local of the primitive transform the scene was given, when
    /// it is not the identity (see [`ParticleSystemSceneProxy::with_local_to_world`]).
    world_to_local: Option<Mat4>,
    quad: Option<QuadBuffers>,
    // `get_dynamic_mesh_elements` takes `&self`; the renderer calls it for
    // one proxy at a time, so the lock is never contended.
    scratch: Mutex<Scratch>,
    /// Where replaced snapshots go back to the game side for reuse.
    returner: Option<SnapshotReturner>,
}

impl ParticleSystemSceneProxy {
    /// A proxy drawing `data` (the snapshot at creation, possibly empty)
    /// with `materials`. Its bounds are the snapshot's, or a box of
    /// [`DEFAULT_BOUNDS_HALF_EXTENT`] around `origin` while it has none.
    pub fn new(materials: ParticleMaterials, data: ParticleSystemDynamicData, origin: Vec3) -> Self {
        let bounds = data
            .bounds
            .unwrap_or(Aabb::new(origin - Vec3::splat(DEFAULT_BOUNDS_HALF_EXTENT), origin + Vec3::splat(DEFAULT_BOUNDS_HALF_EXTENT)));
        Self {
            materials,
            data,
            bounds,
            fixed_bounds: false,
            world_to_local: None,
            quad: None,
            scratch: Mutex::new(Scratch::default()),
            returner: None,
        }
    }

    /// Always reports `bounds`, ignoring the snapshots' bounds.
    pub fn with_fixed_bounds(mut self, bounds: Aabb) -> Self {
        self.bounds = bounds;
        self.fixed_bounds = true;
        self
    }

    /// For a proxy the scene adds with `local_to_world` rather than the
    /// identity (engine-core adds every primitive with its component's
    /// world transform): [`PrimitiveSceneProxy::local_bounds`] then reports
    /// the world box in that frame, so that the scene's world bounds still
    /// enclose the sprites. Drawing is unaffected (the sprite vertex factory
    /// ignores the primitive transform: snapshots are in world space). A
    /// non-invertible transform is ignored.
    pub fn with_local_to_world(mut self, local_to_world: Mat4) -> Self {
        let inv = local_to_world.inverse();
        self.world_to_local = (local_to_world != Mat4::IDENTITY && inv.is_finite()).then_some(inv);
        self
    }

    /// The latest snapshot.
    pub fn dynamic_data(&self) -> &ParticleSystemDynamicData {
        &self.data
    }

    /// The material mapping.
    pub fn materials(&self) -> &ParticleMaterials {
        &self.materials
    }

    /// The world box the proxy reports.
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// Takes a new snapshot (what `update_dynamic_data` does with it).
    pub fn set_dynamic_data(&mut self, data: ParticleSystemDynamicData) {
        if !self.fixed_bounds {
            if let Some(b) = data.bounds {
                self.bounds = b;
            }
        }
        let old = std::mem::replace(&mut self.data, data);
        if let Some(r) = &self.returner {
            r.give_back(old);
        }
    }

    /// Hands each replaced snapshot back through `returner` (a
    /// [`crate::SnapshotPool`]'s) instead of dropping it, so the game side
    /// builds the next ones in its arrays.
    pub fn with_snapshot_returner(mut self, returner: SnapshotReturner) -> Self {
        self.returner = Some(returner);
        self
    }

    fn has_blend(&self, pred: impl Fn(BlendMode) -> bool) -> bool {
        self.data.emitters.iter().any(|e| pred(e.blend_mode))
    }
}

impl PrimitiveSceneProxy for ParticleSystemSceneProxy {
    fn local_bounds(&self) -> Bounds {
        let b = Bounds::from_box(self.bounds.min, self.bounds.max);
        match &self.world_to_local {
            Some(m) => b.transformed(m),
            None => b,
        }
    }

    fn view_relevance(&self, _view: &SceneView) -> ViewRelevance {
        ViewRelevance {
            draw: true,
            shadow: false,
            static_relevance: false,
            dynamic_relevance: true,
            opaque: self.has_blend(|b| b == BlendMode::Opaque),
            masked: self.has_blend(|b| b == BlendMode::Masked),
            // Asked again after every snapshot (the scene keeps relevance
            // per primitive and refreshes it when the proxy takes dynamic
            // data); the renderer adds the emitted batches' materials too.
            translucent: self.has_blend(|b| matches!(b, BlendMode::Translucent | BlendMode::Additive)),
            disables_depth_test: false,
        }
    }

    fn create_render_resources(&mut self, device: &Device) -> rhi_vulkan::Result<()> {
        let vertices = device.create_buffer_init(
            &BufferDesc::gpu_only("particle sprite quad", 32, BufferUsage::VERTEX),
            bytemuck::cast_slice(&QUAD_CORNERS),
        )?;
        let indices = match device.create_buffer_init(
            &BufferDesc::gpu_only("particle sprite quad indices", 24, BufferUsage::INDEX),
            bytemuck::cast_slice(&QUAD_INDICES),
        ) {
            Ok(b) => b,
            Err(e) => {
                device.destroy_buffer(vertices);
                return Err(e);
            }
        };
        self.quad = Some(QuadBuffers { vertices, indices });
        Ok(())
    }

    fn release_render_resources(&mut self, device: &Device) {
        if let Some(q) = self.quad.take() {
            device.destroy_buffer(q.vertices);
            device.destroy_buffer(q.indices);
        }
    }

    fn get_dynamic_mesh_elements(&self, views: &[&SceneView], visibility: &[bool], collector: &mut MeshElementCollector<'_, '_>) {
        let Some(quad) = self.quad else { return };
        let mut guard = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let scratch = &mut *guard;
        let mut drawn = 0u64;
        for emitter in self.data.emitters.iter().filter(|e| !e.is_empty()) {
            let material = self.materials.resolve(&emitter.material);
            // Only depth and distance sorting depend on the view: otherwise
            // one upload serves every view.
            let per_view = matches!(emitter.sort_mode, SortMode::ViewDepth | SortMode::DistanceToView);
            let mut shared: Option<(BufferHandle, u64)> = None;
            // Whether the emitter is drawn in some view (its particles count once).
            let mut counted = false;
            for (view_index, view) in views.iter().enumerate() {
                if !visibility.get(view_index).copied().unwrap_or(false) {
                    continue;
                }
                let instances = match shared {
                    Some(s) => s,
                    None => {
                        build_sprite_vertices_with(emitter, SpriteView::of(view), &mut scratch.vertices, &mut scratch.sort);
                        // Out of transient memory: the emitter is not drawn
                        // in this view nor the ones after it this frame,
                        // reported once; the other emitters go on.
                        let s = match collector.upload(bytemuck::cast_slice(&scratch.vertices)) {
                            Ok(s) => s,
                            Err(e) => {
                                collector.report_failure(ElementFailure::new(EMITTER_UPLOAD_FAILURE, e));
                                break;
                            }
                        };
                        if !per_view {
                            shared = Some(s);
                        }
                        s
                    }
                };
                counted = true;
                collector.add_mesh(
                    view_index,
                    MeshBatch {
                        vertex_factory: &SPRITE_VERTEX_FACTORY,
                        streams: [Some((quad.vertices, 0)), Some(instances), None, None],
                        element: MeshBatchElement {
                            instance_count: emitter.len() as u32,
                            ..MeshBatchElement::indexed(quad.indices, 0, QUAD_INDICES.len() as u32)
                        },
                        material,
                        lod_index: 0,
                        cast_shadow: false,
                        reverse_culling: false,
                        vertex_factory_bindings: None,
                    },
                );
            }
            if counted {
                drawn += emitter.len() as u64;
            }
        }
        collector.add_counter(LIVE_PARTICLES_COUNTER, drawn);
    }

    fn update_dynamic_data(&mut self, data: Box<dyn Any + Send>, _ctx: &mut ProxyUpdateContext<'_>) -> rhi_vulkan::Result<()> {
        // Anything else is another component's mistake; keep the last snapshot.
        if let Ok(data) = data.downcast::<ParticleSystemDynamicData>() {
            self.set_dynamic_data(*data);
        }
        Ok(())
    }

    fn memory_footprint(&self) -> usize {
        fn bytes<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        let snapshot: usize = self
            .data
            .emitters
            .iter()
            .map(|e| {
                bytes(&e.positions)
                    + bytes(&e.old_positions)
                    + bytes(&e.base_sizes)
                    + bytes(&e.rotations)
                    + bytes(&e.base_colors)
                    + bytes(&e.relative_times)
                    + bytes(&e.sub_image_seeds)
                    + e.material.capacity()
            })
            .sum();
        let scratch = self.scratch.lock().map_or(0, |s| bytes(&s.vertices));
        std::mem::size_of_val(self) + snapshot + scratch
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asset::ScreenAlignment;
    use crate::dynamic_data::EmitterDynamicData;
    use glam::{Vec2, Vec4};

    fn snapshot(blend: BlendMode, at: Vec3) -> ParticleSystemDynamicData {
        let e = EmitterDynamicData::with_current_values(
            "M",
            blend,
            ScreenAlignment::FacingCamera,
            SortMode::None,
            vec![at],
            vec![at],
            vec![Vec2::splat(2.0)],
            vec![0.0],
            vec![Vec4::ONE],
            vec![0.0],
        );
        let bounds = crate::bounds::of_sprites(&e.positions, &e.sizes());
        ParticleSystemDynamicData { emitters: vec![e], bounds }
    }

    fn view() -> SceneView {
        SceneView::perspective(Vec3::Y, Vec3::ZERO, Vec3::Z, 1.0, 0.1, 10.0, rhi_vulkan::Rect::from_size(4, 4)).unwrap()
    }

    #[test]
    fn relevance_is_dynamic_without_shadows_and_follows_blend_modes() {
        // Before its first snapshot it has no material relevance: the scene
        // asks again once the snapshot arrives.
        let mut proxy = ParticleSystemSceneProxy::new(ParticleMaterials::new(), Default::default(), Vec3::ZERO);
        let r = proxy.view_relevance(&view());
        assert!(r.draw && r.dynamic_relevance);
        assert!(!r.static_relevance && !r.shadow && !r.opaque && !r.translucent);
        proxy.set_dynamic_data(snapshot(BlendMode::Translucent, Vec3::ZERO));
        let r = proxy.view_relevance(&view());
        assert!(r.translucent && !r.opaque && !r.shadow);
        let opaque = ParticleSystemSceneProxy::new(ParticleMaterials::new(), snapshot(BlendMode::Opaque, Vec3::ZERO), Vec3::ZERO);
        let r = opaque.view_relevance(&view());
        assert!(r.opaque && !r.translucent && !r.shadow);
    }

    #[test]
    fn bounds_start_generous_then_follow_snapshots_unless_fixed() {
        let origin = Vec3::new(5.0, 0.0, 0.0);
        let mut proxy = ParticleSystemSceneProxy::new(ParticleMaterials::new(), Default::default(), origin);
        let b = proxy.local_bounds();
        assert_eq!(b.origin, origin);
        assert_eq!(b.extent, Vec3::splat(DEFAULT_BOUNDS_HALF_EXTENT));
        proxy.set_dynamic_data(snapshot(BlendMode::Translucent, Vec3::new(0.0, 0.0, 3.0)));
        assert_eq!(proxy.local_bounds().origin, Vec3::new(0.0, 0.0, 3.0));
        // An empty snapshot (no bounds) keeps the last ones.
        proxy.set_dynamic_data(ParticleSystemDynamicData::default());
        assert_eq!(proxy.local_bounds().origin, Vec3::new(0.0, 0.0, 3.0));

        let fixed = Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0));
        let mut proxy = proxy.with_fixed_bounds(fixed);
        proxy.set_dynamic_data(snapshot(BlendMode::Translucent, Vec3::new(0.0, 0.0, 30.0)));
        assert_eq!(proxy.bounds(), fixed);
        assert_eq!(proxy.dynamic_data().live_particles(), 1);
    }
}
