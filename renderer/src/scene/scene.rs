//! `Scene`: add / remove / transform requests are queued and applied in one
//! batch at the start of a frame ([`Scene::apply_updates`]). Each primitive
//! lives in a slot; per-slot data sits in flat arrays (bounding spheres,
//! flags, transforms) that culling walks without touching the proxies.
//!
//! Static-relevant primitives get their mesh draw commands built once, when
//! added, for every pass; the commands are deduplicated into state buckets
//! and each slot keeps (bucket, LOD) entries per pass. A transform update
//! changes the GPU scene and the bounds only: no command is rebuilt.

use super::gpu_scene::GpuScene;
use super::proxy::{PrimitiveSceneProxy, ProxyUpdateContext};
use super::relevance::{blend_flags, relevance_flags, MATERIAL_FLAGS, RELEVANCE_FLAGS};
use super::settings::PrimitiveRenderSettings;
use crate::error::{RendererError, Result};
use crate::material::{MaterialId, MaterialRegistry};
use crate::math::Bounds;
use crate::mesh_pass::passes::PassTable;
use crate::mesh_pass::{
    build_mesh_draw_command, translucency_key, BucketId, CachedEntry, MeshBatch, MeshDrawCommand, MeshPass, PassCache, PipelineLibrary,
    PrimitiveSlot, StateBuckets, EMPTY_CACHED_ENTRY,
};
use crate::texture::TextureRegistry;
use crate::view::SceneView;
use glam::{Mat4, Vec4};
use rayon::prelude::*;
use rhi_vulkan::Device;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::any::Any;
use std::collections::BTreeSet;

pub use crate::ids::PrimitiveId;

mod command_cache;
mod memory;
mod requests;
mod shadow_changes;

pub use memory::SceneMemory;

pub(crate) mod flags {
    pub const VALID: u32 = 1;
    pub const STATIC: u32 = 2;
    pub const DYNAMIC: u32 = 4;
    pub const SHADOW: u32 = 8;
    pub const MULTI_LOD: u32 = 16;
    pub const DRAW: u32 = 32;
    pub const TRANSLUCENT: u32 = 64;
    /// Has a draw distance of its own (`Scene::draw_distances`): culling
    /// reads that array only for these.
    pub const DRAW_DISTANCE: u32 = 128;
    /// Draws with opaque materials (relevance, `super::relevance`).
    pub const OPAQUE: u32 = 256;
    /// Draws with masked materials.
    pub const MASKED: u32 = 512;
    /// The proxy's relevance depends on the view: asked per main view
    /// every frame, during culling.
    pub const VIEW_RELEVANCE: u32 = 1024;
    /// The proxy can be occluded (asked once, at add): the occlusion
    /// stage tests only these, without a call into the proxy.
    pub const OCCLUDABLE: u32 = 2048;
    /// The proxy reports its geometry changes (asked once, at add:
    /// `PrimitiveSceneProxy::reports_geometry_changes`): its updates note
    /// only the parts that changed for the shadow atlas, and its dynamic
    /// path is not taken to change every frame.
    pub const REPORTS_CHANGES: u32 = 4096;
}

struct PrimitiveSceneInfo {
    id: PrimitiveId,
    proxy: Box<dyn PrimitiveSceneProxy>,
    local_bounds: Bounds,
    lod_screen_sizes: Vec<f32>,
    /// Buckets this primitive holds a reference to.
    cached: Vec<BucketId>,
    /// Material slots its cached commands were built for (as its batches
    /// name them): it is in those slots' [`Scene::material_users`].
    materials: Vec<u32>,
    /// The relevance flags the proxy itself gave, last time it was asked
    /// (`super::relevance`); the scene's flags add its materials'.
    declared: u32,
}

/// Figures of the updates applied this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SceneCounters {
    /// Queued requests that failed (logged; see [`Scene::update_errors`]):
    /// the rest of the batch was applied.
    pub failed_updates: u64,
    /// Proxies whose render data was created (primitives added).
    pub proxies_created: u64,
    /// Primitives removed.
    pub proxies_removed: u64,
    /// Cached mesh draw commands built (one per static batch and pass).
    pub cached_commands_built: u64,
    /// Transform updates applied.
    pub transforms_updated: u64,
}

enum Pending {
    Add(PrimitiveId, Box<dyn PrimitiveSceneProxy>, Mat4),
    Remove(PrimitiveId),
    Transform(PrimitiveId, Mat4, Option<Bounds>),
    DynamicData(PrimitiveId, Box<dyn Any + Send>),
    Settings(PrimitiveId, PrimitiveRenderSettings),
    PreviousTransform(PrimitiveId, Mat4),
    /// An item a batch command left out on the game side (its message): a
    /// failed update of the frame the batch arrives in.
    Refused(String),
}

/// Slots per culling chunk: `init_views` culls a chunk's box first and its
/// slots only when the box may be visible.
pub(crate) const CULL_CHUNK: usize = 4096;

/// The box around the bounding spheres of one chunk's slots (conservative:
/// it contains every live slot's sphere, and may be larger).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ChunkBounds {
    pub min: glam::Vec3,
    pub max: glam::Vec3,
    /// A sphere in it moved or went since the box was computed exactly.
    pub loose: bool,
}

impl ChunkBounds {
    const EMPTY: Self = Self { min: glam::Vec3::splat(f32::INFINITY), max: glam::Vec3::splat(f32::NEG_INFINITY), loose: false };

    fn grow(&mut self, sphere: Vec4) {
        let (c, r) = (sphere.truncate(), sphere.w);
        self.min = self.min.min(c - r);
        self.max = self.max.max(c + r);
    }

    /// No live slot in the chunk.
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }
}

/// The render-side scene (UE's FScene): primitives in slots, their cached
/// commands in state buckets, the GPU scene, materials, textures and
/// lights. Owned by the render thread (module docs).
pub struct Scene {
    ids: HashMap<PrimitiveId, u32>,
    /// Lines the game sent for the next frame (`crate::debug_lines`),
    /// taken by the frame that draws them.
    pub(crate) debug_lines: Vec<crate::debug_lines::DebugLine>,
    infos: Vec<Option<PrimitiveSceneInfo>>,
    free: Vec<u32>,
    pub(crate) spheres: Vec<Vec4>,
    /// World-space box half extents (the box shares the sphere's centre).
    pub(crate) extents: Vec<glam::Vec3>,
    pub(crate) flags: Vec<u32>,
    pub(crate) transforms: Vec<Mat4>,
    /// Per slot, the (min, max) draw distance of its
    /// [`PrimitiveRenderSettings`] (read where `flags::DRAW_DISTANCE`).
    pub(crate) draw_distances: Vec<(f32, f32)>,
    /// Per slot, its translucency sort priority.
    pub(crate) sort_priority: Vec<i16>,
    /// Per [`CULL_CHUNK`] slots, the box around their spheres.
    pub(crate) chunks: Vec<ChunkBounds>,
    /// Where the next [`Scene::tighten_chunk_bounds`] starts looking.
    tighten_cursor: usize,
    /// Whether a batch of adds over one chunk takes its slots in space
    /// order (`super::add_order`; `r.Scene.SpaceOrderAdds`, set each frame).
    pub(crate) space_order_adds: bool,
    pub(crate) cache: Vec<PassCache>,
    /// The renderer's mesh passes: the built-in ones and those registered.
    pub(crate) passes: PassTable,
    pub(crate) buckets: StateBuckets,
    pub(crate) gpu_scene: GpuScene,
    /// The materials (parents and instances) and their GPU table.
    pub materials: MaterialRegistry,
    /// The texture assets.
    pub textures: TextureRegistry,
    /// Per material slot, the primitive slots whose cached commands name
    /// it: a change to that material rebuilds only theirs.
    material_users: HashMap<u32, HashSet<u32>>,
    /// Bounding spheres (world) of shadow casters that changed in the
    /// last batch of updates — added, removed, moved (before and after),
    /// given dynamic data, re-cached — for the shadow atlas's cache
    /// (`crate::shadow_atlas`): a tile they touch is rendered again.
    pub(crate) changed_casters: Vec<Vec4>,
    pub(crate) lights: super::SceneLights,
    /// The environment that lights the scene and is drawn behind it (UE's
    /// sky light; `crate::environment`).
    pub(crate) environment: crate::environment::gpu::SceneEnvironment,
    /// Queued requests (a Mutex only so the scene is `Sync`; always reached through `&mut`).
    pending: std::sync::Mutex<Vec<Pending>>,
    /// `apply_updates`' list of the requests applied after the adds
    /// (empty between calls; kept for its capacity; a Mutex as `pending` is).
    after_adds_scratch: std::sync::Mutex<Vec<Pending>>,
    recache_all: bool,
    /// Proxies' buffer writes for the next frame (`proxy_uploads`).
    pub(crate) uploads: super::proxy_uploads::ProxyUploads,
    /// What the last [`Scene::apply_updates`] did (reset by each).
    pub counters: SceneCounters,
    /// The errors of the last `apply_updates` (at most `MAX_KEPT_ERRORS`).
    update_errors: Vec<String>,
    dynamic_primitives: usize,
}

/// Update errors kept for [`Scene::update_errors`] (all are counted and logged).
const MAX_KEPT_ERRORS: usize = 16;

impl Default for Scene {
    fn default() -> Self {
        Self {
            ids: HashMap::default(),
            infos: Vec::new(),
            debug_lines: Vec::new(),
            free: Vec::new(),
            spheres: Vec::new(),
            extents: Vec::new(),
            flags: Vec::new(),
            transforms: Vec::new(),
            draw_distances: Vec::new(),
            sort_priority: Vec::new(),
            chunks: Vec::new(),
            tighten_cursor: 0,
            space_order_adds: true,
            cache: (0..MeshPass::MAX).map(|_| PassCache::default()).collect(),
            passes: PassTable::default(),
            buckets: StateBuckets::default(),
            gpu_scene: GpuScene::default(),
            materials: MaterialRegistry::default(),
            textures: TextureRegistry::default(),
            material_users: HashMap::default(),
            lights: Default::default(),
            environment: Default::default(),
            changed_casters: Vec::new(),
            pending: Default::default(),
            after_adds_scratch: Default::default(),
            recache_all: false,
            uploads: Default::default(),
            counters: SceneCounters::default(),
            update_errors: Vec::new(),
            dynamic_primitives: 0,
        }
    }
}

fn check_transform(m: &Mat4, what: PrimitiveId) -> Result<()> {
    crate::math::check_transform(m).map_err(|p| RendererError::InvalidTransform { what: format!("{what:?}"), reason: p.to_string() })
}

impl Scene {
    // ----- queries -----

    /// Primitives in the scene (queued requests not applied yet do not count).
    pub fn num_primitives(&self) -> usize {
        self.ids.len()
    }

    /// Whether the primitive is in the scene (applied, not only queued).
    pub fn contains(&self, id: PrimitiveId) -> bool {
        self.ids.contains_key(&id)
    }

    /// The proxy of a primitive (after its add was applied).
    pub fn proxy(&self, id: PrimitiveId) -> Option<&dyn PrimitiveSceneProxy> {
        let slot = *self.ids.get(&id)?;
        self.infos[slot as usize].as_ref().map(|i| &*i.proxy)
    }

    /// The primitive's applied local-to-world (`None` if it is not in the scene).
    pub fn local_to_world(&self, id: PrimitiveId) -> Option<Mat4> {
        self.ids.get(&id).map(|s| self.transforms[*s as usize])
    }

    /// The primitive's previous-frame transform as the GPU scene holds it
    /// for the frame applied last (motion vectors; `None` if it is not in the scene).
    pub fn previous_local_to_world(&self, id: PrimitiveId) -> Option<Mat4> {
        self.ids.get(&id).and_then(|s| self.gpu_scene.previous(*s))
    }

    /// Number of live state buckets (distinct cached commands).
    pub fn state_bucket_count(&self) -> usize {
        self.buckets.len()
    }

    /// Cached commands of a primitive, per pass (for tests and tools).
    pub fn cached_command_count(&self, id: PrimitiveId, pass: MeshPass) -> usize {
        let Some(&slot) = self.ids.get(&id) else { return 0 };
        let cache = &self.cache[pass.index()];
        let first = cache.first.get(slot as usize).copied().unwrap_or(EMPTY_CACHED_ENTRY);
        usize::from(first.bucket != BucketId::NONE) + cache.extra.get(&PrimitiveSlot(slot)).map_or(0, Vec::len)
    }

    /// Primitives drawn through the dynamic path.
    pub fn dynamic_primitive_count(&self) -> usize {
        self.dynamic_primitives
    }

    /// Recomputes exactly the boxes of chunks whose spheres moved or went
    /// (a box only grows as spheres move; this shrinks it back), at most
    /// an eighth of the chunks (and at least 16) per call, round-robin, so
    /// a scene where everything moves pays for its boxes over 8 frames
    /// rather than in one. The render thread calls it once a frame, after
    /// the frame's updates; culling is correct whenever it runs (a box is
    /// never smaller than its spheres).
    pub(crate) fn tighten_chunk_bounds(&mut self) {
        let n = self.chunks.len();
        let budget = (n / 8).max(16);
        let mut picked = Vec::new();
        for k in 0..n {
            if picked.len() == budget {
                break;
            }
            let c = (self.tighten_cursor + k) % n;
            if self.chunks[c].loose {
                picked.push(c);
            }
        }
        if let Some(&last) = picked.last() {
            self.tighten_cursor = (last + 1) % n;
        }
        let (spheres, flags) = (&self.spheres, &self.flags);
        let exact = |c: usize| {
            let mut b = ChunkBounds::EMPTY;
            let end = ((c + 1) * CULL_CHUNK).min(spheres.len());
            for i in c * CULL_CHUNK..end {
                if flags[i] & flags::VALID != 0 {
                    b.grow(spheres[i]);
                }
            }
            b
        };
        let boxes: Vec<ChunkBounds> =
            if picked.len() >= 8 { picked.par_iter().map(|&c| exact(c)).collect() } else { picked.iter().map(|&c| exact(c)).collect() };
        for (c, b) in picked.into_iter().zip(boxes) {
            self.chunks[c] = b;
        }
    }

    /// Moves a slot made by [`Self::push_culling_slot`] (as a transform
    /// update does), for the visibility unit tests.
    #[cfg(test)]
    pub(crate) fn move_culling_slot(&mut self, slot: u32, sphere: Vec4) {
        self.chunks[slot as usize / CULL_CHUNK].loose = true;
        self.spheres[slot as usize] = sphere;
        self.chunks[slot as usize / CULL_CHUNK].grow(sphere);
    }

    /// Takes a slot made by [`Self::push_culling_slot`] out (as a removal
    /// does), for the visibility unit tests.
    #[cfg(test)]
    pub(crate) fn remove_culling_slot(&mut self, slot: u32) {
        self.flags[slot as usize] = 0;
        self.chunks[slot as usize / CULL_CHUNK].loose = true;
        self.free.push(slot);
    }

    pub(crate) fn slot_count(&self) -> usize {
        self.infos.len()
    }

    pub(crate) fn proxy_at(&self, slot: u32) -> Option<&dyn PrimitiveSceneProxy> {
        self.infos.get(slot as usize).and_then(|i| i.as_ref()).map(|i| &*i.proxy)
    }

    /// The id of the primitive in `slot`.
    /// The world bounds of the primitive in `slot` (its local bounds
    /// through its transform), if the slot is live.
    pub(crate) fn world_bounds_at(&self, slot: u32) -> Option<Bounds> {
        let info = self.infos.get(slot as usize)?.as_ref()?;
        Some(info.local_bounds.transformed(&self.transforms[slot as usize]))
    }

    pub(crate) fn id_at(&self, slot: u32) -> Option<PrimitiveId> {
        self.infos.get(slot as usize).and_then(|i| i.as_ref()).map(|i| i.id)
    }

    pub(crate) fn lod_screen_sizes(&self, slot: u32) -> &[f32] {
        self.infos[slot as usize].as_ref().map(|i| i.lod_screen_sizes.as_slice()).unwrap_or(&[])
    }

    pub(crate) fn command(&self, bucket: BucketId) -> Option<&MeshDrawCommand> {
        self.buckets.get(bucket)
    }

    /// A slot with only culling data (bounding sphere, flags, draw
    /// distance) and no proxy, for the visibility unit tests.
    #[cfg(test)]
    pub(crate) fn push_culling_slot(&mut self, sphere: Vec4, flags: u32, (min, max): (f32, f32)) -> u32 {
        let slot = self.alloc_slot();
        self.spheres[slot as usize] = sphere;
        self.chunks[slot as usize / CULL_CHUNK].grow(sphere);
        self.flags[slot as usize] = if min > 0.0 || max > 0.0 { flags | self::flags::DRAW_DISTANCE } else { flags };
        self.draw_distances[slot as usize] = (min, max);
        slot
    }

    // ----- applying -----

    /// Applies every queued request in order, in one batch: creates render
    /// resources and caches commands for added primitives (in parallel),
    /// releases removed ones, updates transforms and the GPU scene.
    ///
    /// A request that fails (a proxy's resources, a pipeline, dynamic data
    /// the proxy rejects) is logged, counted in
    /// [`SceneCounters::failed_updates`] and kept in
    /// [`Self::update_errors`]; the rest of the batch is applied all the same.
    pub fn apply_updates(&mut self, device: &Device, pipelines: &PipelineLibrary) -> Result<()> {
        self.counters = SceneCounters::default();
        self.update_errors.clear();
        self.changed_casters.clear();
        // The queues keep their capacity from frame to frame (a thousand
        // animating meshes queue thousands of requests a frame).
        let mut pending = std::mem::take(self.pending_mut());
        // Adds in queue order; a remove of a primitive added in the same batch
        // empties its entry. `queued` finds an add by id in O(1): a batch can
        // hold hundreds of thousands (a level loading).
        type QueuedAdd = (PrimitiveId, Box<dyn PrimitiveSceneProxy>, Mat4);
        let mut adds: Vec<Option<QueuedAdd>> = Vec::new();
        let mut queued: HashMap<PrimitiveId, usize> = HashMap::default();
        let mut removes: Vec<PrimitiveId> = Vec::new();
        let mut after_adds: Vec<Pending> = std::mem::take(self.after_adds_scratch.get_mut().unwrap_or_else(|p| p.into_inner()));
        let mut previous: Vec<(PrimitiveId, Mat4)> = Vec::new();
        // Last frame's moves end: previous = current (`GpuScene::begin_frame`).
        self.gpu_scene.begin_frame();
        for p in pending.drain(..) {
            match p {
                Pending::Add(id, proxy, m) => {
                    if self.ids.contains_key(&id) || queued.contains_key(&id) {
                        log::warn!("primitive {id:?} added twice; keeping the first");
                        continue;
                    }
                    queued.insert(id, adds.len());
                    adds.push(Some((id, proxy, m)));
                }
                Pending::PreviousTransform(id, m) => previous.push((id, m)),
                Pending::Remove(id) => {
                    if let Some(i) = queued.remove(&id) {
                        adds[i] = None;
                    } else {
                        removes.push(id);
                    }
                }
                other => after_adds.push(other),
            }
        }
        // Pipelines of material shaders no parent uses any more go now; the
        // commands that used them belong to the changed materials' users,
        // rebuilt below (`material_recache_slots`).
        let stale = self.materials.take_stale_shaders();
        pipelines.invalidate_shaders(device, &stale);
        // Bind groups first (commands carry them), then which primitives'
        // commands the material changes invalidate — taken before the adds,
        // whose commands are built with the materials as they are now.
        self.update_material_bindings(device)?;
        let recache = self.material_recache_slots();
        // Adds before removes: a proxy re-created in this batch (a material
        // changed) takes its mesh's GPU buffers over from the old one rather
        // than seeing them freed and uploading them again.
        if self.pending_mut().is_empty() {
            *self.pending_mut() = pending;
        }
        self.add_now(adds.into_iter().flatten().collect(), device, pipelines);
        for id in removes {
            self.remove_now(id, device);
        }
        for p in after_adds.drain(..) {
            match p {
                Pending::Transform(id, m, bounds) => {
                    if let (Some(b), Some(&slot)) = (bounds, self.ids.get(&id)) {
                        if let Some(info) = self.infos[slot as usize].as_mut() {
                            info.local_bounds = b;
                        }
                    }
                    self.transform_now(id, m, device, pipelines);
                }
                Pending::DynamicData(id, data) => {
                    let Some(&slot) = self.ids.get(&id) else { continue };
                    let info = self.infos[slot as usize].as_mut().expect("slot of a live id");
                    let mut ctx = ProxyUpdateContext { device, uploads: &mut self.uploads, changes: Vec::new() };
                    let result = info.proxy.update_dynamic_data(data, &mut ctx);
                    let changes = ctx.changes;
                    if let Err(e) = result {
                        self.failed(format!("dynamic data of {id:?}: {e}"));
                    }
                    if self.flags[slot as usize] & flags::REPORTS_CHANGES != 0 {
                        self.note_geometry_changes(slot, &changes);
                        self.refresh_relevance(slot, device, pipelines);
                    } else {
                        self.note_shadow_change(slot);
                        self.refresh_relevance(slot, device, pipelines);
                        self.note_shadow_change(slot);
                    }
                }
                Pending::Settings(id, settings) => self.settings_now(id, settings),
                Pending::Refused(message) => self.failed(message),
                Pending::Add(..) | Pending::Remove(_) | Pending::PreviousTransform(..) => unreachable!(),
            }
        }
        *self.after_adds_scratch.get_mut().unwrap_or_else(|p| p.into_inner()) = after_adds;
        for (id, m) in previous {
            match self.ids.get(&id) {
                Some(&slot) => self.gpu_scene.set_previous(slot, &m),
                None => self.failed(format!("previous transform of {id:?}: no such primitive")),
            }
        }
        if !recache.is_empty() && !self.recache_all {
            let slots: Vec<u32> = recache.into_iter().filter(|&s| self.infos[s as usize].is_some()).collect();
            for &slot in &slots {
                self.uncache(slot);
            }
            self.cache_slots(&slots, device, pipelines);
        }
        if std::mem::take(&mut self.recache_all) {
            // In slot order: the buckets are born in the order they are
            // acquired, and their births order the draws.
            let mut slots: Vec<u32> = self.ids.values().copied().collect();
            slots.sort_unstable();
            for &slot in &slots {
                self.uncache(slot);
            }
            self.cache_slots(&slots, device, pipelines);
        }
        self.buckets.update_ranks();
        Ok(())
    }

    /// Records a failed request of the batch being applied.
    fn failed(&mut self, message: String) {
        log::error!("scene update failed: {message}");
        self.counters.failed_updates += 1;
        if self.update_errors.len() < MAX_KEPT_ERRORS {
            self.update_errors.push(message);
        }
    }

    /// The failed requests of the last [`Self::apply_updates`] (the first
    /// few; [`SceneCounters::failed_updates`] counts them all).
    pub fn update_errors(&self) -> &[String] {
        &self.update_errors
    }

    fn alloc_slot(&mut self) -> u32 {
        if let Some(s) = self.free.pop() {
            return s;
        }
        let s = self.infos.len() as u32;
        self.infos.push(None);
        self.spheres.push(Vec4::ZERO);
        self.extents.push(glam::Vec3::ZERO);
        self.flags.push(0);
        self.transforms.push(Mat4::IDENTITY);
        self.draw_distances.push((0.0, 0.0));
        self.sort_priority.push(0);
        if s as usize / CULL_CHUNK == self.chunks.len() {
            self.chunks.push(ChunkBounds::EMPTY);
        }
        // A pass that never held a command keeps no per-slot entries
        // (`PassCache::first`): most of the 16 possible passes never do.
        for c in self.cache.iter_mut().filter(|c| !c.first.is_empty()) {
            c.first.push(EMPTY_CACHED_ENTRY);
        }
        s
    }

    /// Room for `adds` more primitives. A batch at least as large as the
    /// scene gets exactly the room it needs (a doubling Vec would leave up
    /// to half of a million-primitive scene's arrays unused); smaller ones
    /// grow as Vecs do.
    fn reserve_slots(&mut self, adds: usize) {
        let new = adds.saturating_sub(self.free.len());
        if new == 0 || new < self.infos.len() {
            return;
        }
        self.infos.reserve_exact(new);
        self.spheres.reserve_exact(new);
        self.extents.reserve_exact(new);
        self.flags.reserve_exact(new);
        self.transforms.reserve_exact(new);
        self.draw_distances.reserve_exact(new);
        self.sort_priority.reserve_exact(new);
        for c in self.cache.iter_mut().filter(|c| !c.first.is_empty()) {
            c.first.reserve_exact(new);
        }
        self.gpu_scene.reserve_exact(self.infos.len() + new);
    }

    fn add_now(&mut self, mut adds: Vec<(PrimitiveId, Box<dyn PrimitiveSceneProxy>, Mat4)>, device: &Device, pipelines: &PipelineLibrary) {
        if adds.is_empty() {
            return;
        }
        // Slots in space order, for culling (`add_order`).
        if self.space_order_adds {
            let centres = adds.iter().map(|(_, proxy, m)| proxy.local_bounds().transformed(m).origin);
            if let Some(order) = super::add_order::space_order(centres) {
                super::add_order::permute(&mut adds, &order);
            }
        }
        // Render resources for all new proxies, in parallel.
        let created: Vec<rhi_vulkan::Result<()>> = adds.par_iter_mut().map(|(_, proxy, _)| proxy.create_render_resources(device)).collect();
        self.reserve_slots(adds.len());
        let mut slots = Vec::with_capacity(adds.len());
        for ((id, mut proxy, m), result) in adds.into_iter().zip(created) {
            if let Err(e) = result {
                self.failed(format!("creating render resources of {id:?}: {e}"));
                continue;
            }
            proxy.on_transform_changed(m);
            let slot = self.alloc_slot();
            let declared = declared_relevance(&*proxy);
            let local_bounds = proxy.local_bounds();
            let lod_screen_sizes = proxy.lod_screen_sizes().to_vec();
            let mut f = flags::VALID | declared;
            if f & flags::DYNAMIC != 0 {
                self.dynamic_primitives += 1;
            }
            if proxy.view_dependent_relevance() {
                f |= flags::VIEW_RELEVANCE;
            }
            if lod_screen_sizes.len() > 1 {
                f |= flags::MULTI_LOD;
            }
            if proxy.can_be_occluded() {
                f |= flags::OCCLUDABLE;
            }
            if proxy.reports_geometry_changes() {
                f |= flags::REPORTS_CHANGES;
            }
            self.draw_distances[slot as usize] = (0.0, 0.0);
            self.sort_priority[slot as usize] = 0;
            self.flags[slot as usize] = f;
            self.infos[slot as usize] =
                Some(PrimitiveSceneInfo { id, proxy, local_bounds, lod_screen_sizes, cached: Vec::new(), materials: Vec::new(), declared });
            self.ids.insert(id, slot);
            self.set_transform_data(slot, m, true);
            slots.push(slot);
            self.counters.proxies_created += 1;
        }
        self.cache_slots(&slots, device, pipelines);
    }

    /// `added`: a new primitive, without a previous transform.
    fn set_transform_data(&mut self, slot: u32, m: Mat4, added: bool) {
        let info = self.infos[slot as usize].as_ref().expect("live slot");
        let world = info.local_bounds.transformed(&m);
        let (custom, vf_data) = (info.proxy.custom_primitive_data(), info.proxy.vertex_factory_data());
        let sphere = world.origin.extend(world.radius);
        self.spheres[slot as usize] = sphere;
        self.chunks[slot as usize / CULL_CHUNK].grow(sphere);
        self.extents[slot as usize] = world.extent;
        self.transforms[slot as usize] = m;
        self.gpu_scene.set(slot, &m, &world, (custom, vf_data), added);
    }

    fn remove_now(&mut self, id: PrimitiveId, device: &Device) {
        let Some(slot) = self.ids.remove(&id) else { return };
        self.note_shadow_change(slot);
        self.uncache(slot);
        if let Some(mut info) = self.infos[slot as usize].take() {
            debug_assert_eq!(info.id, id);
            // GPU resources go through the RHI's deletion queue: destroyed
            // once no submitted frame can still read them.
            info.proxy.release_render_resources(device);
        }
        if self.flags[slot as usize] & flags::DYNAMIC != 0 {
            self.dynamic_primitives -= 1;
        }
        self.flags[slot as usize] = 0;
        self.chunks[slot as usize / CULL_CHUNK].loose = true;
        self.free.push(slot);
        self.counters.proxies_removed += 1;
    }

    /// Asks `slot`'s proxy for its relevance again (after an update it
    /// took): the flags follow, the dynamic count too, and a primitive that
    /// enters or leaves the cached path has its commands rebuilt.
    fn refresh_relevance(&mut self, slot: u32, device: &Device, pipelines: &PipelineLibrary) {
        let Some(info) = self.infos[slot as usize].as_mut() else { return };
        let declared = declared_relevance(&*info.proxy);
        let old = std::mem::replace(&mut info.declared, declared);
        if old == declared {
            return;
        }
        let f = &mut self.flags[slot as usize];
        let materials = if *f & flags::STATIC != 0 { *f & MATERIAL_FLAGS } else { 0 };
        let was = *f;
        *f = (*f & !RELEVANCE_FLAGS) | declared | materials;
        let now = *f;
        if (was ^ now) & flags::SHADOW != 0 {
            self.changed_casters.push(self.spheres[slot as usize]);
        }
        if (was ^ now) & flags::DYNAMIC != 0 {
            if now & flags::DYNAMIC != 0 {
                self.dynamic_primitives += 1;
            } else {
                self.dynamic_primitives -= 1;
            }
        }
        if (was ^ now) & flags::STATIC != 0 {
            self.uncache(slot);
            self.cache_slots(&[slot], device, pipelines);
        }
    }

    fn settings_now(&mut self, id: PrimitiveId, settings: PrimitiveRenderSettings) {
        let Some(&slot) = self.ids.get(&id) else {
            self.failed(format!("render settings of {id:?}: {}", RendererError::UnknownPrimitive(id)));
            return;
        };
        let slot = slot as usize;
        self.draw_distances[slot] = (settings.min_draw_distance, settings.max_draw_distance);
        self.sort_priority[slot] = settings.translucency_sort_priority;
        if settings.has_draw_distance() {
            self.flags[slot] |= flags::DRAW_DISTANCE;
        } else {
            self.flags[slot] &= !flags::DRAW_DISTANCE;
        }
    }

    /// The translucency sort key of `slot` seen from `origin`
    /// ([`crate::mesh_pass::translucency_key`]: its sort priority, then
    /// the distance to its bounds' centre).
    pub(crate) fn translucency_sort_key(&self, slot: PrimitiveSlot, origin: glam::Vec3) -> u64 {
        translucency_key(self.sort_priority[slot.index()], self.spheres[slot.index()].truncate().distance(origin))
    }

    fn transform_now(&mut self, id: PrimitiveId, m: Mat4, device: &Device, pipelines: &PipelineLibrary) {
        let Some(&slot) = self.ids.get(&id) else { return };
        let was_mirrored = self.transforms[slot as usize].determinant() < 0.0;
        self.chunks[slot as usize / CULL_CHUNK].loose = true;
        // New bounds alone, from a proxy that reports its geometry changes:
        // the update that moved its geometry said where.
        let bounds_only = self.transforms[slot as usize] == m && self.flags[slot as usize] & flags::REPORTS_CHANGES != 0;
        if !bounds_only {
            self.note_shadow_change(slot);
        }
        self.set_transform_data(slot, m, false);
        if !bounds_only {
            self.note_shadow_change(slot);
        }
        if let Some(info) = self.infos[slot as usize].as_mut() {
            info.proxy.on_transform_changed(m);
        }
        self.counters.transforms_updated += 1;
        if was_mirrored != (m.determinant() < 0.0) {
            // The winding flips: the cached commands' culling changes.
            self.uncache(slot);
            self.cache_slots(&[slot], device, pipelines);
        }
    }

    /// Records the proxies' pending buffer writes into `frame` (through
    /// one staging buffer) and forgets them.
    pub(crate) fn upload_proxy_writes(&mut self, frame: &mut rhi_vulkan::Frame<'_>) -> rhi_vulkan::Result<()> {
        let result = frame.upload_buffers(self.uploads.moves(), &self.uploads.writes());
        self.uploads.clear();
        result
    }

    /// Makes the bind groups of the materials whose textures changed (or
    /// whose textures were created or destroyed), retires the old ones.
    fn update_material_bindings(&mut self, device: &Device) -> Result<()> {
        let changed = self.textures.take_changed();
        if !changed.is_empty() {
            self.materials.rebind_textures(&changed);
        }
        let rebind = self.materials.take_rebind();
        if !rebind.is_empty() {
            self.textures.ensure_builtins(device)?;
        }
        for slot in rebind {
            let Some((layout, textures)) = self.materials.binding_inputs(slot) else { continue };
            if textures.is_empty() {
                self.materials.set_bindings(slot, None);
                continue;
            }
            if let Some(shared) = self.materials.shared_bindings(slot) {
                self.materials.set_bindings(slot, Some(shared));
                continue;
            }
            let made = (|| -> rhi_vulkan::Result<_> {
                let mut entries = Vec::with_capacity(2 * textures.len());
                for (k, (texture, sampler)) in textures.iter().enumerate() {
                    let texture = self.textures.resolve(*texture).expect("built-in textures exist");
                    let sampler = self.textures.sampler(device, sampler)?;
                    entries.push((2 * k as u32, rhi_vulkan::BindingResource::Texture(texture)));
                    entries.push((2 * k as u32 + 1, rhi_vulkan::BindingResource::Sampler(sampler)));
                }
                device.create_bind_group_with_layout(&layout.bind_group_layout(), &entries)
            })();
            match made {
                Ok(g) => self.materials.set_bindings(slot, Some(g)),
                Err(e) => self.failed(format!("the bind group of material slot {slot}: {e}")),
            }
        }
        for g in self.materials.take_retired_bindings() {
            device.destroy_bind_group(g);
        }
        Ok(())
    }

    /// The primitive slots whose cached commands name a material that
    /// changed in a way that rebuilds them (see [`crate::material`]); a
    /// change to the default material — which every depth pass may use —
    /// rebuilds every command.
    fn material_recache_slots(&mut self) -> BTreeSet<u32> {
        let changed = self.materials.take_recache();
        if changed.contains(&MaterialId::DEFAULT.slot()) {
            self.recache_all = true;
            return BTreeSet::new();
        }
        changed.iter().filter_map(|m| self.material_users.get(m)).flatten().copied().collect()
    }

    /// Destroys the materials' bind groups and the textures (the scene is
    /// going; the RHI frees them once no frame in flight uses them).
    pub fn release_material_resources(&mut self, device: &Device) {
        self.environment.release(device);
        for g in self.materials.take_all_bindings() {
            device.destroy_bind_group(g);
        }
        self.textures.destroy_all(device);
    }
}

/// The relevance flags a proxy gives of itself: what it gives any view —
/// a proxy whose answer depends on the view is asked again per view every
/// frame ([`PrimitiveSceneProxy::view_dependent_relevance`]).
fn declared_relevance(proxy: &dyn PrimitiveSceneProxy) -> u32 {
    let f = relevance_flags(&proxy.view_relevance(&any_view()));
    // Whether such a proxy is drawn is decided per view, while culling:
    // culling must reach it.
    if proxy.view_dependent_relevance() {
        f | flags::DRAW
    } else {
        f
    }
}

fn any_view() -> SceneView {
    SceneView::perspective(glam::Vec3::ZERO, glam::Vec3::X, glam::Vec3::Z, 1.0, 0.1, 10.0, rhi_vulkan::Rect::from_size(1, 1))
        .expect("valid dummy view")
}
