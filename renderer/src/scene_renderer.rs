//! One frame on the render thread (UE's FSceneRenderer), as stages:
//!
//! ```text
//! 1 UpdateScene   apply queued adds/removes/transforms; cache static commands
//! 2 InitViews     cull every view (parallel chunks); collect dynamic elements
//! 3 PassSetup     per (view, pass) task: gather cached + dynamic commands,
//!                 sort, merge into instanced draws            (rayon tasks)
//! 4 Upload        GPU scene deltas, materials, view uniforms, id streams
//! 5 Record        shadow map, then per view depth → base → translucency,
//!                 each pass split into chunks recorded as secondaries (rayon)
//! 6 Submit        one primary; wait; optional readback
//! ```
//! Order is deterministic: visibility chunks, pass-setup tasks and recorded
//! chunks are concatenated in order, every pass draws in the order of
//! `mesh_pass::sort` (a key ending with the primitive slot; bucket ranks
//! independent of handle numbering), the id stream is written in that draw
//! order and secondaries execute in pass order — so the image and the draw
//! lists do not depend on the thread count or on which path built them.

pub use crate::frame_resources::DynamicBufferRing;
use crate::cvars::{self, ConsoleVariables};
use crate::error::Result;
use crate::frame_resources::{PerFrameBuffer, ViewUniformData, VIEW_UNIFORM_SIZE};
use crate::mesh_pass::*;
use crate::scene::{compute_visibility, flags, Light, MeshElementCollector, Scene, ViewVisibility, MAX_POINT_LIGHTS};
use crate::stats::{FrameStats, PassStats};
use crate::submit::{record_pass, PassBindings};
use crate::view::{SceneView, ViewFamily};
use glam::{Mat4, Vec3};
use rayon::prelude::*;
use rhi_vulkan::*;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::Instant;

/// Commands of this frame: the scene's buckets plus dynamic ones.
///
/// A dynamic command equal to a scene bucket's uses that bucket (and merges
/// with its cached primitives); the others get ids after the scene's, ranked
/// after every scene bucket in the order they are first built (primitive
/// order, as the dynamic elements are collected by slot).
pub(crate) struct FrameCommands<'a> {
    pub scene: &'a Scene,
    base: u32,
    pub dynamic: Vec<MeshDrawCommand>,
    lookup: HashMap<MeshDrawCommand, BucketId>,
    /// Draw-order rank of every bucket id of the frame.
    pub ranks: Vec<DrawRank>,
}

impl<'a> FrameCommands<'a> {
    pub fn get(&self, bucket: BucketId) -> &MeshDrawCommand {
        if bucket.0 < self.base {
            self.scene.command(bucket).expect("live bucket")
        } else {
            &self.dynamic[(bucket.0 - self.base) as usize]
        }
    }

    fn id_of(&mut self, cmd: MeshDrawCommand) -> BucketId {
        if let Some(id) = self.scene.buckets.find(&cmd) {
            return id;
        }
        if let Some(&id) = self.lookup.get(&cmd) {
            return id;
        }
        let id = BucketId(self.base + self.dynamic.len() as u32);
        self.dynamic.push(cmd.clone());
        self.lookup.insert(cmd, id);
        self.ranks.push(DrawRank(id.0));
        id
    }
}

/// The draws of one pass of one view, ready to record.
pub(crate) struct PassDrawList {
    pub pass: MeshPass,
    /// Index into the frame's views (the shadow view comes last).
    pub view: usize,
    pub draws: Vec<MergedDraw>,
    /// The pass's id stream: its primitives in draw order.
    pub ids: Vec<PrimitiveSlot>,
    pub commands_before_merge: u64,
    /// Offset of `ids` in the frame's id stream.
    pub id_base: u32,
}

/// The result of culling and pass setup for one frame.
pub struct PreparedFrame<'s> {
    views: Vec<SceneView>,
    main_view_count: usize,
    shadow_view: Option<SceneView>,
    has_shadow: bool,
    directional: Option<crate::scene::DirectionalLight>,
    visibility: Vec<ViewVisibility>,
    lists: Vec<PassDrawList>,
    commands: FrameCommands<'s>,
    dynamic_built: u64,
    t_views: Instant,
    stage_ms: [f64; 3],
}

impl PreparedFrame<'_> {
    /// (pass, visible commands before merge, draws after merge), per view and pass.
    pub fn pass_summary(&self) -> Vec<(MeshPass, u64, u64)> {
        self.lists.iter().map(|l| (l.pass, l.commands_before_merge, l.draws.len() as u64)).collect()
    }
    /// Milliseconds spent culling, collecting dynamic elements, and in pass setup.
    pub fn stage_ms(&self) -> [f64; 3] {
        self.stage_ms
    }

    /// Primitives visible in the main views.
    pub fn visible_primitives(&self) -> u64 {
        self.visibility[..self.main_view_count].iter().map(|v| v.visible.len() as u64).sum()
    }
}

struct Targets {
    color: TextureHandle,
    depth: TextureHandle,
    width: u32,
    height: u32,
    color_state: TextureState,
}

struct ShadowMap {
    texture: TextureHandle,
    size: u32,
    initialized: bool,
}

/// What the render thread keeps from frame to frame.
pub struct SceneRenderer {
    pub(crate) pipelines: PipelineLibrary,
    targets: Option<Targets>,
    shadow: Option<ShadowMap>,
    shadow_sampler: Option<SamplerHandle>,
    materials: Option<(BufferHandle, u64)>,
    view_uniforms: PerFrameBuffer,
    id_streams: PerFrameBuffer,
    pub(crate) dynamic: DynamicBufferRing,
    frames: usize,
    frame_number: u64,
}

/// One frame's request.
#[derive(Clone, Debug)]
pub struct FrameRequest {
    pub family: ViewFamily,
    /// Read the final image back (see [`crate::RenderContext::last_image`]).
    pub read_back: bool,
    /// Submit the recorded frame to the GPU. `false` records everything and
    /// then discards it — CPU measurement only: uploads recorded in it never
    /// reach the GPU, so don't render normally afterwards.
    pub execute: bool,
}

impl SceneRenderer {
    pub fn new(device: &Device) -> Self {
        let frames = device.frames_in_flight();
        Self {
            pipelines: PipelineLibrary::default(),
            targets: None,
            shadow: None,
            shadow_sampler: None,
            materials: None,
            view_uniforms: PerFrameBuffer::new("view uniforms", BufferUsage::UNIFORM, frames),
            id_streams: PerFrameBuffer::new("primitive id stream", BufferUsage::VERTEX, frames),
            dynamic: DynamicBufferRing::new(frames),
            frames,
            frame_number: 0,
        }
    }

    /// Stage 1 alone: applies the scene's queued updates (benchmarks).
    pub fn update_scene(&mut self, device: &Device, scene: &mut Scene) -> Result<()> {
        scene.apply_updates(device, &self.pipelines)
    }

    pub fn pipeline_count(&self) -> usize {
        self.pipelines.len()
    }

    fn ensure_targets(&mut self, device: &Device, width: u32, height: u32) -> Result<()> {
        if self.targets.as_ref().is_some_and(|t| t.width == width && t.height == height) {
            return Ok(());
        }
        if let Some(t) = self.targets.take() {
            device.destroy_texture(t.color);
            device.destroy_texture(t.depth);
        }
        let color = device.create_texture(&TextureDesc::render_target("scene color", width, height, SCENE_COLOR_FORMAT))?;
        let depth = device.create_texture(&TextureDesc::depth("scene depth", width, height))?;
        self.targets = Some(Targets { color, depth, width, height, color_state: TextureState::Undefined });
        Ok(())
    }

    fn ensure_shadow(&mut self, device: &Device, size: u32) -> Result<()> {
        if self.shadow_sampler.is_none() {
            self.shadow_sampler = Some(device.create_sampler(&SamplerDesc::shadow())?);
        }
        if self.shadow.as_ref().is_some_and(|s| s.size == size) {
            return Ok(());
        }
        if let Some(s) = self.shadow.take() {
            device.destroy_texture(s.texture);
        }
        let texture = device.create_texture(&TextureDesc::depth("shadow map", size, size))?;
        self.shadow = Some(ShadowMap { texture, size, initialized: false });
        Ok(())
    }

    /// The scene color texture and its state (for readback by callers).
    pub fn color_target(&self) -> Option<(TextureHandle, TextureState)> {
        self.targets.as_ref().map(|t| (t.color, t.color_state))
    }

    /// Renders one frame of `request.family` and returns its stats and,
    /// when asked, the image.
    pub fn render(&mut self, device: &Device, scene: &mut Scene, cvars: &ConsoleVariables, request: &FrameRequest) -> Result<(FrameStats, Option<Image>)> {
        let family = &request.family;
        family.validate()?;
        let t0 = Instant::now();
        let parallel_record = cvars.bool(cvars::PARALLEL_RECORD);
        let shadow_size = cvars.int(cvars::SHADOW_MAP_SIZE).clamp(64, 8192) as u32;

        // The frame slot's previous GPU work must be done before its buffers are rewritten.
        let mut frame = device.begin_frame()?;
        let slot = (self.frame_number % self.frames as u64) as usize;
        self.frame_number += 1;
        self.dynamic.begin(device, slot)?;

        // 1. Update the scene.
        scene.apply_updates(device, &self.pipelines)?;
        self.ensure_targets(device, family.width, family.height)?;
        // Scene uploads: proxies' buffer updates, materials, GPU scene deltas.
        for (buffer, offset, bytes) in scene.take_uploads() {
            frame.upload_buffer(buffer, offset, &bytes)?;
        }
        if scene.materials.gpu_dirty || self.materials.is_none() {
            let table = scene.materials.gpu_table();
            let bytes: &[u8] = bytemuck::cast_slice(&table);
            if self.materials.is_none_or(|(_, cap)| cap < bytes.len() as u64) {
                if let Some((old, _)) = self.materials.take() {
                    device.destroy_buffer(old);
                }
                let cap = (bytes.len() as u64).next_power_of_two().max(1024);
                self.materials = Some((device.create_buffer(&BufferDesc::gpu_only("materials", cap, BufferUsage::STORAGE))?, cap));
            }
            frame.upload_buffer(self.materials.expect("created").0, 0, bytes)?;
            scene.materials.gpu_dirty = false;
        }
        scene.gpu_scene.upload(device, &mut frame)?;
        let t_update = Instant::now();

        // 2-3. Init views and pass setup.
        let prepared = self.prepare(device, scene, cvars, family, Some(&mut frame))?;
        let PreparedFrame { views, main_view_count, shadow_view, has_shadow, directional, visibility, mut lists, commands, dynamic_built, t_views, .. } = prepared;
        let t_setup = Instant::now();

        // 4. Uploads (id streams and view uniforms; scene data went up in step 1).
        // The id streams of every pass, in list order, each in draw order.
        let mut all_ids: Vec<PrimitiveSlot> = Vec::new();
        for l in &mut lists {
            l.id_base = all_ids.len() as u32;
            all_ids.extend_from_slice(&l.ids);
        }
        let id_buffer = self.id_streams.write(device, slot, bytemuck::cast_slice(&all_ids))?;
        let shadow_view_proj = shadow_view.as_ref().map(|v| v.view_proj()).unwrap_or(Mat4::IDENTITY);
        let uniforms: Vec<ViewUniformData> = views.iter().map(|v| view_uniform(v, scene, directional, shadow_view_proj, has_shadow, shadow_size)).collect();
        let uniform_buffer = self.view_uniforms.write(device, slot, bytemuck::cast_slice(&uniforms))?;

        // 5. Record.
        if has_shadow || self.shadow.is_none() {
            self.ensure_shadow(device, shadow_size)?;
        }
        let shadow = self.shadow.as_mut().expect("shadow map");
        let shadow_texture = shadow.texture;
        let gpu_scene = scene.gpu_scene.buffer().expect("uploaded above");
        let materials = self.materials.expect("uploaded above").0;
        let mut bind = PassBindings::new(&frame, uniform_buffer, gpu_scene, materials, shadow_texture, self.shadow_sampler.expect("sampler"));
        let main_layout = RenderingLayout { color_formats: vec![SCENE_COLOR_FORMAT], depth_format: Some(SCENE_DEPTH_FORMAT) };
        let shadow_layout = RenderingLayout { color_formats: vec![], depth_format: Some(SCENE_DEPTH_FORMAT) };
        let mut recorded: Vec<Vec<SecondaryCommandBuffer>> = Vec::with_capacity(lists.len());
        for l in &lists {
            let layout = if l.pass == MeshPass::ShadowDepth { &shadow_layout } else { &main_layout };
            recorded.push(record_pass(&frame, layout, l, &views[l.view], &commands, id_buffer, &mut bind, parallel_record)?);
        }
        let cmd = frame.cmd();
        // Shadow map: rendered when there is a shadow view; otherwise cleared once.
        let shadow_state_before = if shadow.initialized { TextureState::ShaderRead } else { TextureState::Undefined };
        if has_shadow || !shadow.initialized {
            cmd.texture_barrier(shadow_texture, shadow_state_before, TextureState::DepthAttachment)?;
            cmd.begin_rendering(
                &RenderingDesc { color: vec![], depth: Some(DepthAttachment { texture: shadow_texture, load: LoadOp::Clear(1.0), store: true }), area: Rect::from_size(shadow.size, shadow.size) },
                RenderingContents::Secondary,
            )?;
            for (l, secs) in lists.iter().zip(&recorded) {
                if l.pass == MeshPass::ShadowDepth {
                    cmd.execute_secondaries(secs)?;
                }
            }
            cmd.end_rendering()?;
            cmd.texture_barrier(shadow_texture, TextureState::DepthAttachment, TextureState::ShaderRead)?;
            shadow.initialized = true;
        }
        let targets = self.targets.as_mut().expect("targets");
        cmd.texture_barrier(targets.color, targets.color_state, TextureState::ColorAttachment)?;
        cmd.texture_barrier(targets.depth, TextureState::Undefined, TextureState::DepthAttachment)?;
        targets.color_state = TextureState::ColorAttachment;
        cmd.begin_rendering(
            &RenderingDesc {
                color: vec![ColorAttachment { texture: targets.color, load: LoadOp::Clear(family.clear_color), store: true }],
                depth: Some(DepthAttachment { texture: targets.depth, load: LoadOp::Clear(1.0), store: false }),
                area: Rect::from_size(family.width, family.height),
            },
            RenderingContents::Secondary,
        )?;
        for (l, secs) in lists.iter().zip(&recorded) {
            if l.pass != MeshPass::ShadowDepth {
                cmd.execute_secondaries(secs)?;
            }
        }
        cmd.end_rendering()?;
        let t_record = Instant::now();

        // 6. Submit, wait, read back.
        let mut timestamps = None;
        let image = if request.execute {
            let submitted = frame.submit()?;
            device.wait_for(submitted.value)?;
            timestamps = device.frame_timestamps(submitted)?;
            if request.read_back {
                Some(device.read_texture(targets.color, targets.color_state)?)
            } else {
                None
            }
        } else {
            drop(frame);
            None
        };
        let t_gpu = Instant::now();

        // Stats.
        let mut stats = FrameStats {
            frame: self.frame_number - 1,
            primitives: scene.num_primitives() as u64,
            visible_primitives: visibility[..main_view_count].iter().map(|v| v.visible.len() as u64).sum(),
            cached_commands_built: scene.counters.cached_commands_built,
            dynamic_commands_built: dynamic_built,
            proxies_created: scene.counters.proxies_created,
            failed_updates: scene.counters.failed_updates,
            gpu_scene_upload_bytes: scene.gpu_scene.last_upload_bytes,
            ..Default::default()
        };
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for l in &lists {
            let p: &mut PassStats = &mut stats.passes[l.pass.index()];
            p.mesh_draw_commands += l.commands_before_merge;
            p.draws += l.draws.len() as u64;
            (l.pass, l.view).hash(&mut hasher);
            for d in &l.draws {
                let c = commands.get(d.bucket);
                // Handles are left out: their numbering depends on creation order.
                (c.material_index, c.first_index, c.count, c.base_vertex, c.instance_count, d.first_instance, d.instance_count, c.indirect.is_some()).hash(&mut hasher);
                if c.indirect.is_some() {
                    // The GPU writes the count: not known here.
                    p.indirect_draws += 1;
                    continue;
                }
                let instances = u64::from(d.instance_count) * u64::from(c.instance_count);
                p.instances += instances;
                if l.pass != MeshPass::ShadowDepth && l.pass != MeshPass::DepthPrepass {
                    stats.triangles += u64::from(c.count / 3) * instances;
                }
            }
            l.ids.hash(&mut hasher);
        }
        stats.draw_list_digest = hasher.finish();
        stats.timings.update_scene = ms(t0, t_update);
        stats.timings.init_views = ms(t_update, t_views);
        stats.timings.pass_setup = ms(t_views, t_setup);
        stats.timings.record = ms(t_setup, t_record);
        stats.timings.gpu_wait = ms(t_record, t_gpu);
        stats.timings.set_gpu(timestamps.as_ref(), lists.iter().map(|l| (l.pass, l.view)));
        stats.timings.total = ms(t0, Instant::now());
        Ok((stats, image))
    }

    /// Stages 2 and 3 on an updated scene: culls every view, collects
    /// dynamic elements, and gathers, sorts and merges every pass. No GPU
    /// work; the benchmarks call it directly.
    ///
    /// With a `frame`, dynamic proxies may record compute work (GPU culling)
    /// into its primary before the passes; without one they must not need to.
    pub fn prepare<'s>(&mut self, device: &Device, scene: &'s Scene, cvars: &ConsoleVariables, family: &ViewFamily, mut frame: Option<&mut Frame<'_>>) -> Result<PreparedFrame<'s>> {
        let parallel_setup = cvars.bool(cvars::PARALLEL_PASS_SETUP);
        let instancing = cvars.bool(cvars::DYNAMIC_INSTANCING);
        let force_dynamic = cvars.bool(cvars::FORCE_DYNAMIC_PATH);
        let wireframe_all = cvars.bool(cvars::WIREFRAME);
        let shadow_size = cvars.int(cvars::SHADOW_MAP_SIZE).clamp(64, 8192) as u32;
        // 2. Init views: the main views, then the shadow view.
        let directional = scene.lights().find_map(|l| match l {
            Light::Directional(d) => Some(*d),
            Light::Point(_) => None,
        });
        let mut views: Vec<SceneView> = family.views.clone();
        for v in &mut views {
            v.wireframe |= wireframe_all;
        }
        let main_view_count = views.len();
        let shadow_view = match directional {
            Some(d) if d.cast_shadows && cvars.bool(cvars::SHADOW_ENABLE) => {
                scene.shadow_caster_bounds().and_then(|b| shadow_view_for(d.direction, b.origin, b.extent.length().max(1.0), shadow_size))
            }
            _ => None,
        };
        let has_shadow = shadow_view.is_some();
        if let Some(sv) = shadow_view.clone() {
            views.push(sv);
        }
        let require = |i: usize| if i < main_view_count { flags::DRAW } else { flags::SHADOW };
        let t_start = Instant::now();
        let visibility: Vec<ViewVisibility> = views
            .iter()
            .enumerate()
            .map(|(i, v)| compute_visibility(scene, &v.frustum(), (i < main_view_count).then_some(v), require(i), parallel_setup))
            .collect();
        let t_culled = Instant::now();
        let passes_of = |i: usize| -> Vec<MeshPass> {
            if i >= main_view_count {
                vec![MeshPass::ShadowDepth]
            } else if views[i].wireframe {
                vec![MeshPass::Wireframe]
            } else {
                vec![MeshPass::DepthPrepass, MeshPass::Base, MeshPass::Translucency]
            }
        };

        // Dynamic elements (and, when forced, static ones through the dynamic path).
        let ranks = scene.buckets.ranks().to_vec();
        let mut commands = FrameCommands { scene, base: ranks.len() as u32, dynamic: Vec::new(), lookup: HashMap::new(), ranks };
        let mut dynamic_lists: HashMap<(usize, MeshPass), Vec<VisibleCommand>> = HashMap::new();
        let mut dynamic_built = 0u64;
        let dynamic_mask = if force_dynamic { flags::DYNAMIC | flags::STATIC } else { flags::DYNAMIC };
        // By slot: dynamic commands are built, and their lists filled, in primitive order.
        let mut by_slot: std::collections::BTreeMap<PrimitiveSlot, (Vec<bool>, Vec<u8>)> = Default::default();
        let scan_dynamic = force_dynamic || scene.dynamic_primitive_count() > 0;
        for (vi, vis) in visibility.iter().enumerate().filter(|_| scan_dynamic) {
            for (k, &s) in vis.visible.iter().enumerate() {
                if scene.flags[s.index()] & dynamic_mask != 0 {
                    let e = by_slot.entry(s).or_insert_with(|| (vec![false; views.len()], vec![0; views.len()]));
                    e.0[vi] = true;
                    e.1[vi] = vis.lods[k];
                }
            }
        }
        let view_refs: Vec<&SceneView> = views.iter().collect();
        for (&s, (vis_flags, lods)) in &by_slot {
            let proxy = scene.proxy_at(s.0).expect("visible slot has a proxy");
            let mut collector = MeshElementCollector { batches: Vec::new(), device, dynamic: &mut self.dynamic, frame: frame.as_deref_mut(), cvars };
            let is_dynamic = scene.flags[s.index()] & flags::DYNAMIC != 0;
            if is_dynamic {
                proxy.get_dynamic_mesh_elements(&view_refs, vis_flags, &mut collector);
            }
            if force_dynamic && scene.flags[s.index()] & flags::STATIC != 0 {
                let mut batches = Vec::new();
                proxy.draw_static_elements(&mut batches);
                let mirrored = scene.transforms[s.index()].determinant() < 0.0;
                for (vi, _) in vis_flags.iter().enumerate().filter(|(_, v)| **v) {
                    for b in batches.iter().filter(|b| b.lod_index == lods[vi]) {
                        let mut b = b.clone();
                        b.reverse_culling ^= mirrored;
                        collector.batches.push((vi, b));
                    }
                }
            }
            for (vi, batch) in std::mem::take(&mut collector.batches) {
                if vi >= views.len() || !vis_flags[vi] {
                    continue;
                }
                for pass in passes_of(vi) {
                    if let Some(cmd) = build_mesh_draw_command(pass, &batch, device, &scene.materials, &self.pipelines)? {
                        dynamic_built += 1;
                        let bucket = commands.id_of(cmd);
                        let sort_key = distance_key(scene.spheres[s.index()].truncate().distance(views[vi].origin));
                        dynamic_lists.entry((vi, pass)).or_default().push(VisibleCommand { bucket, primitive: s, sort_key });
                    }
                }
            }
        }
        let t_views = Instant::now();

        // 3. Pass setup: gather, sort, merge; one task per (view, pass).
        let tasks: Vec<(usize, MeshPass)> = (0..views.len()).flat_map(|vi| passes_of(vi).into_iter().map(move |p| (vi, p))).collect();
        // Draw order → bucket, for the fast path below.
        let mut bucket_of_rank = vec![BucketId(0); commands.ranks.len()];
        for (bucket, &rank) in commands.ranks.iter().enumerate() {
            bucket_of_rank[rank.index()] = BucketId(bucket as u32);
        }
        let setup = |&(vi, pass): &(usize, MeshPass)| -> PassDrawList {
            let vis = &visibility[vi];
            let cache = &scene.cache[pass.index()];
            let can_merge = |b: BucketId| commands.get(b).can_merge();
            let dynamic = dynamic_lists.get(&(vi, pass));
            let (draws, ids) = if !force_dynamic && pass != MeshPass::Translucency && dynamic.is_none() {
                gather_sort_merge_cached(cache, vis, &commands.ranks, &bucket_of_rank, can_merge, instancing)
            } else {
                let origin = views[vi].origin;
                let distance = |slot: PrimitiveSlot| distance_key(scene.spheres[slot.index()].truncate().distance(origin));
                let translucent = (pass == MeshPass::Translucency).then_some(&distance as &dyn Fn(PrimitiveSlot) -> u32);
                gather_sort_merge((!force_dynamic).then_some(cache), vis, dynamic.map_or(&[], Vec::as_slice), &commands.ranks, translucent, can_merge, instancing)
            };
            PassDrawList { pass, view: vi, commands_before_merge: ids.len() as u64, draws, ids, id_base: 0 }
        };
        // Tasks run in parallel; `collect` keeps them in task order.
        let lists: Vec<PassDrawList> = if parallel_setup { tasks.par_iter().map(setup).collect() } else { tasks.iter().map(setup).collect() };
        let stage_ms = [ms(t_start, t_culled), ms(t_culled, t_views), ms(t_views, Instant::now())];
        Ok(PreparedFrame { views, main_view_count, shadow_view, has_shadow, directional, visibility, lists, commands, dynamic_built, t_views, stage_ms })
    }

    /// Destroys the renderer's GPU resources (the RHI defers the actual destruction).
    pub fn release(&mut self, device: &Device) {
        if let Some(t) = self.targets.take() {
            device.destroy_texture(t.color);
            device.destroy_texture(t.depth);
        }
        if let Some(s) = self.shadow.take() {
            device.destroy_texture(s.texture);
        }
        self.pipelines.invalidate(device);
    }
}

fn ms(a: Instant, b: Instant) -> f64 {
    (b - a).as_secs_f64() * 1e3
}

/// An orthographic view from the light that covers the casters' bounding
/// sphere, with a depth range just as deep as the sphere (depth precision
/// and the shadow bias are relative to it).
fn shadow_view_for(direction: Vec3, center: Vec3, radius: f32, size: u32) -> Option<SceneView> {
    let d = direction.normalize_or_zero();
    if d == Vec3::ZERO {
        return None;
    }
    let up = if d.z.abs() > 0.99 { Vec3::Y } else { Vec3::Z };
    let eye = center - d * (radius + 1.0);
    SceneView::orthographic(eye, center, up, radius * 2.0, radius * 2.0, 0.5, 2.0 * radius + 1.5, Rect::from_size(size, size)).ok()
}

/// Shadow bias (before the slope term) in shadow-map texels, and its floor in scene units.
const SHADOW_BIAS_TEXELS: f32 = 1.5;
const SHADOW_BIAS_WORLD_MIN: f32 = 0.01;

fn view_uniform(v: &SceneView, scene: &Scene, directional: Option<crate::scene::DirectionalLight>, shadow_view_proj: Mat4, has_shadow: bool, shadow_size: u32) -> ViewUniformData {
    let (right, up) = v.right_up();
    // The shadow projection is orthographic: depth is linear, 1 unit of NDC = its depth range.
    let depth_range = if shadow_view_proj.z_axis.z != 0.0 { 1.0 / shadow_view_proj.z_axis.z.abs() } else { 1.0 };
    // Bias by the size of a shadow texel in the world (acne-free at any
    // scene scale), never below a small world-space floor.
    let texel_world = if shadow_view_proj.x_axis.x != 0.0 { 2.0 / shadow_view_proj.x_axis.x.abs() / shadow_size.max(1) as f32 } else { 0.0 };
    let shadow_bias_ndc = (SHADOW_BIAS_TEXELS * texel_world).max(SHADOW_BIAS_WORLD_MIN) / depth_range;
    let (dir, color) = directional.map(|d| (d.direction.normalize_or_zero(), d.color * d.intensity)).unwrap_or((Vec3::new(0.0, 0.0, -1.0), Vec3::ZERO));
    let mut point_lights = [[0.0f32; 8]; MAX_POINT_LIGHTS];
    let mut n = 0;
    for l in scene.lights() {
        if let Light::Point(p) = l {
            if n < MAX_POINT_LIGHTS {
                let c = p.color * p.intensity;
                point_lights[n] = [p.position.x, p.position.y, p.position.z, p.radius, c.x, c.y, c.z, 0.0];
                n += 1;
            }
        }
    }
    ViewUniformData {
        view_proj: v.view_proj().to_cols_array_2d(),
        shadow_view_proj: shadow_view_proj.to_cols_array_2d(),
        camera_position: v.origin.extend(if v.perspective { 1.0 } else { 0.0 }).to_array(),
        camera_right: right.extend(0.0).to_array(),
        camera_up: up.extend(0.0).to_array(),
        light_direction: dir.extend(if has_shadow { 1.0 } else { 0.0 }).to_array(),
        light_color: color.extend(1.0).to_array(),
        // w: the shadow bias in shadow-map depth units.
        ambient: [0.18, 0.19, 0.22, shadow_bias_ndc],
        wireframe_color: [0.85, 0.9, 1.0, 1.0],
        point_lights,
        counts: [n as u32, shadow_size, 0, 0],
    }
}

#[allow(dead_code)]
const _: () = assert!(VIEW_UNIFORM_SIZE == 512);
