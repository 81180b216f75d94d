//! `PrimitiveSceneProxy`: the render thread's copy of a primitive (UE's
//! FPrimitiveSceneProxy). A game-side component creates one on the game
//! thread, copying what rendering needs (`Send + 'static`: it cannot borrow
//! the component), and hands it to the render thread, which owns it from then
//! on.

use crate::gpu_work::GpuWork;
use crate::material::MaterialId;
use crate::math::Bounds;
use crate::mesh_pass::MeshBatch;
use crate::occlusion::{OccluderMesh, OcclusionBuffer};
use crate::stats::{add_counter, FrameCounters};
use crate::view::SceneView;
use glam::Vec4;
use rhi_vulkan::{BufferDesc, BufferHandle, BufferUsage, Device};
use std::any::Any;

pub use crate::view::ViewRelevance;

/// Collects the mesh batches dynamic primitives emit for a frame (UE's
/// FMeshElementCollector), hands out transient GPU memory for per-frame
/// vertex data (UE's FGlobalDynamicVertexBuffer), and queues the compute
/// work proxies declare to run before the passes ([`crate::gpu_work`]).
///
/// `'f` is the borrow of the frame's GPU-work queue.
pub struct MeshElementCollector<'a, 'f> {
    pub(crate) batches: Vec<(usize, MeshBatch)>,
    pub(crate) device: &'a Device,
    pub(crate) dynamic: &'a mut crate::frame_resources::DynamicBufferRing,
    /// `None` when the frame is only prepared, not recorded (benchmarks).
    pub(crate) gpu_work: Option<&'f mut Vec<GpuWork>>,
    pub(crate) cvars: &'a crate::cvars::ConsoleVariables,
    pub(crate) on_retired: &'a mut Vec<RetireCallback>,
    pub(crate) counters: &'a mut FrameCounters,
    /// Per view, its occlusion buffer (see [`Self::occlusion`]).
    pub(crate) occlusion: &'a [Option<OcclusionBuffer>],
    /// What the proxy reported it could not emit ([`Self::report_failure`]).
    pub(crate) failures: Vec<ElementFailure>,
}

/// A part of a dynamic primitive's frame that the proxy could not emit —
/// a particle emitter whose vertices did not fit in the frame's dynamic
/// memory, an instanced mesh's cull whose buffers could not be allocated —
/// reported through [`MeshElementCollector::report_failure`].
///
/// That part is not drawn this frame; the rest of the primitive and of the
/// frame are. The renderer logs the failures once per primitive and frame
/// (a warning naming the primitive, the first failure and how many more)
/// and counts them in the frame's stats
/// ([`crate::FrameStats::element_failures`]).
#[derive(Debug)]
pub struct ElementFailure {
    /// What could not be emitted, as the reporting crate names it (a
    /// constant: `"particle emitter upload"`).
    pub what: &'static str,
    /// Why: the error of the call that failed (usually an
    /// [`rhi_vulkan::RhiError`] or a [`crate::RendererError`]; reach it with
    /// `downcast_ref`).
    pub error: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl ElementFailure {
    /// A failure to emit `what`, because of `error` (any error type, or a
    /// message).
    pub fn new(what: &'static str, error: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>) -> Self {
        Self { what, error: error.into() }
    }
}

impl std::fmt::Display for ElementFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.error)
    }
}

impl std::error::Error for ElementFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.error)
    }
}

/// A frame whose GPU work has finished, handed to the callbacks of
/// [`MeshElementCollector::when_retired`]: what the frame's GPU work wrote
/// (GPU culling's visible counts) can be read now, belongs to `frame`, and
/// goes into that frame's stats through [`Self::add_counter`].
pub struct RetiredFrameResults<'a> {
    /// The device, to read what the frame's GPU work wrote.
    pub device: &'a Device,
    /// The frame's number (`FrameStats::frame`).
    pub frame: u64,
    pub(crate) value: u64,
    /// The frame's counters (`FrameStats::counters`), not yet delivered.
    pub(crate) counters: &'a mut FrameCounters,
}

impl RetiredFrameResults<'_> {
    /// Reads `len` bytes at `offset` of a host-visible buffer the frame's
    /// GPU work wrote — e.g. the frame's own memory from
    /// [`MeshElementCollector::upload`], intact until the frame's slot is
    /// reused, which is after this — without waiting for later frames.
    pub fn read_buffer(&self, buffer: BufferHandle, offset: u64, len: u64) -> rhi_vulkan::Result<Vec<u8>> {
        self.device.read_buffer_after(buffer, offset, len, self.value)
    }

    /// Adds `value` to the frame's counter `name` in its stats
    /// ([`crate::FrameStats::counters`], summed over proxies) — a figure the
    /// frame's GPU work produced, delivered with the frame it describes.
    pub fn add_counter(&mut self, name: &'static str, value: u64) {
        add_counter(self.counters, name, value);
    }
}

/// See [`MeshElementCollector::when_retired`].
pub(crate) type RetireCallback = Box<dyn FnOnce(&mut RetiredFrameResults<'_>) + Send + Sync>;

impl<'a, 'f> MeshElementCollector<'a, 'f> {
    /// Adds a batch for the view at `view_index`.
    pub fn add_mesh(&mut self, view_index: usize, batch: MeshBatch) {
        self.batches.push((view_index, batch));
    }

    /// Copies `bytes` into this frame's dynamic vertex memory and returns the
    /// buffer and offset to put in a batch's stream. Valid for this frame only.
    pub fn upload(&mut self, bytes: &[u8]) -> rhi_vulkan::Result<(BufferHandle, u64)> {
        self.dynamic.upload(self.device, bytes)
    }

    /// The device, to create or look up resources.
    pub fn device(&self) -> &Device {
        self.device
    }

    /// The console variables of this frame.
    pub fn cvars(&self) -> &crate::cvars::ConsoleVariables {
        self.cvars
    }

    /// Adds `value` to this frame's counter `name` in its stats
    /// ([`crate::FrameStats::counters`], summed over proxies): what the proxy
    /// counted that the renderer cannot (live particles drawn). Name it with
    /// a constant of the reporting crate. A count the frame's GPU work
    /// produces goes in when the frame retires instead
    /// ([`RetiredFrameResults::add_counter`] in [`Self::when_retired`]).
    pub fn add_counter(&mut self, name: &'static str, value: u64) {
        add_counter(self.counters, name, value);
    }

    /// The occlusion buffer of the view at `view_index` (UE's software
    /// occlusion; [`crate::occlusion`]): a proxy may cull its own
    /// sub-elements (instances) whose bounds it hides
    /// ([`OcclusionBuffer::test_box`], [`OcclusionBuffer::test_sphere`]) and
    /// report them under [`crate::occlusion::OCCLUDED_INSTANCES_COUNTER`].
    /// `None` for a view that is not occlusion culled (the shadow view,
    /// wireframe, `r.AllowOcclusionQueries=0`). Culling what it hides never
    /// changes the image.
    pub fn occlusion(&self, view_index: usize) -> Option<&OcclusionBuffer> {
        self.occlusion.get(view_index).and_then(Option::as_ref)
    }

    /// Whether this frame records GPU work: false when it is only prepared,
    /// not rendered (benchmarks) — then [`Self::add_gpu_work`] drops the
    /// work, and a proxy falls back to a path that needs none.
    pub fn records_gpu_work(&self) -> bool {
        self.gpu_work.is_some()
    }

    /// Queues compute work to run before this frame's passes (GPU culling
    /// writing what the draws read). The renderer records it in the
    /// `gpu_prepare` stage, after the work queued before it, with the
    /// barriers its declaration implies ([`crate::gpu_work`]). Returns false
    /// (and drops the work) when the frame records no GPU work.
    pub fn add_gpu_work(&mut self, work: GpuWork) -> bool {
        match self.gpu_work.as_deref_mut() {
            Some(queue) => {
                queue.push(work);
                true
            }
            None => false,
        }
    }

    /// Calls `f` on the render thread once this frame's GPU work has
    /// finished (with `r.FramesInFlight` > 1, while later frames are being
    /// recorded), before the frame's slot and its [`Self::upload`] memory
    /// are reused: how GPU-produced results (counts written by compute) are
    /// delivered with the frame they belong to — into its stats through
    /// [`RetiredFrameResults::add_counter`]. Not called for a frame that is
    /// not submitted.
    pub fn when_retired(&mut self, f: impl FnOnce(&mut RetiredFrameResults<'_>) + Send + Sync + 'static) {
        self.on_retired.push(Box::new(f));
    }

    /// Reports that the proxy could not emit part of this frame's elements
    /// (an [`Self::upload`] that failed, a buffer it could not allocate):
    /// it skips that part and goes on with the rest. Report each part once
    /// (an emitter, not each view it would have been drawn in). The
    /// renderer logs the primitive's failures once for the frame and counts
    /// them in its stats ([`crate::FrameStats::element_failures`]); see
    /// [`ElementFailure`].
    pub fn report_failure(&mut self, failure: ElementFailure) {
        self.failures.push(failure);
    }
}

/// What a proxy may do when the game side sends it new dynamic data.
pub struct ProxyUpdateContext<'a> {
    /// The device, to create resources.
    pub device: &'a Device,
    pub(crate) uploads: &'a mut super::proxy_uploads::ProxyUploads,
    /// What [`Self::geometry_changed`] reported.
    pub(crate) changes: Vec<GeometryChange>,
}

/// A part of a primitive whose drawn geometry an update changed, as a
/// proxy that [reports its changes](PrimitiveSceneProxy::reports_geometry_changes)
/// tells the scene: where (local space, before or after the change), drawn
/// with which material, and whether it casts shadows. The shadow atlas
/// re-renders only the cached tiles such a change touches, and only when a
/// shadow pass would draw it (`cast_shadow`, a material that is not
/// translucent).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeometryChange {
    /// The changed part's local bounds.
    pub local_bounds: Bounds,
    /// The material it is drawn with.
    pub material: MaterialId,
    /// Whether its batches cast shadows.
    pub cast_shadow: bool,
}

impl ProxyUpdateContext<'_> {
    /// Reports that the update changed what the proxy draws inside
    /// `change.local_bounds` (call it for the place the geometry left and
    /// the place it went). Read only from a proxy whose
    /// [`PrimitiveSceneProxy::reports_geometry_changes`] is true; such a
    /// proxy reports nothing for an update that moves no geometry (new
    /// colours or normals).
    pub fn geometry_changed(&mut self, change: GeometryChange) {
        self.changes.push(change);
    }

    /// Writes `bytes` into `buffer` at `offset` at the start of the next frame
    /// (through staging, ordered after earlier frames' reads).
    pub fn upload(&mut self, buffer: BufferHandle, offset: u64, bytes: impl AsRef<[u8]>) {
        self.uploads.push(buffer, offset, &[bytes.as_ref()]);
    }

    /// [`Self::upload`] of `parts` written one after another from
    /// `offset`, without joining them first (the bytes are copied once,
    /// into the scene's upload arena).
    pub fn upload_parts(&mut self, buffer: BufferHandle, offset: u64, parts: &[&[u8]]) {
        self.uploads.push(buffer, offset, parts);
    }

    /// Copies `size` bytes within `buffer` from `from` to `to` on the GPU
    /// at the start of the next frame, before any [`Self::upload`] lands
    /// (the ranges must not overlap): a proxy keeps last frame's data on
    /// the GPU this way (a skinned mesh's previous pose) rather than
    /// sending it again.
    pub fn copy_within(&mut self, buffer: BufferHandle, from: u64, to: u64, size: u64) {
        self.uploads.push_move(buffer, from, to, size);
    }

    /// A GPU-only buffer for render data, filled through staging.
    pub fn create_buffer(&self, label: &str, bytes: &[u8], usage: BufferUsage) -> rhi_vulkan::Result<BufferHandle> {
        self.device.create_buffer_init(&BufferDesc::gpu_only(label, bytes.len().max(4) as u64, usage), bytes)
    }
}

/// The render thread's representation of one primitive.
///
/// `Send + Sync + 'static`: it owns copies of what it draws (no borrowed game
/// data), and pass-setup tasks read proxies from several threads at once.
pub trait PrimitiveSceneProxy: Send + Sync + 'static {
    /// Bounds in local space; the scene transforms them by the primitive's
    /// local-to-world.
    fn local_bounds(&self) -> Bounds;

    /// Relevance for `view` (defaults: drawn, static, casts shadows; the
    /// material fields come from the batches' materials). Asked when the
    /// proxy is added and after each [`Self::update_dynamic_data`]; asked
    /// per main view every frame too when [`Self::view_dependent_relevance`].
    fn view_relevance(&self, _view: &SceneView) -> ViewRelevance {
        ViewRelevance { draw: true, shadow: true, static_relevance: true, ..Default::default() }
    }

    /// Whether [`Self::view_relevance`] depends on the view (a primitive
    /// drawn in some views only, like UE's owner-no-see): then it is asked
    /// per main view every frame, while culling, and `draw` decides whether
    /// the view draws it. Default false: the answer is the same for every
    /// view, so the scene keeps it between the changes that can alter it.
    /// Read when the proxy is added.
    fn view_dependent_relevance(&self) -> bool {
        false
    }

    /// The cached path: batches built once when the primitive is added (and
    /// again only when its render state changes).
    fn draw_static_elements(&self, _out: &mut Vec<MeshBatch>) {}

    /// The dynamic path: batches for this frame, for the views in which the
    /// primitive is visible (`visibility[i]` for `views[i]`).
    fn get_dynamic_mesh_elements(&self, _views: &[&SceneView], _visibility: &[bool], _collector: &mut MeshElementCollector<'_, '_>) {}

    /// Screen sizes at which static LODs switch (LOD i is used while the
    /// screen size is at least `sizes[i]`); empty: one LOD.
    fn lod_screen_sizes(&self) -> &[f32] {
        &[]
    }

    /// Custom primitive data, readable by materials.
    fn custom_primitive_data(&self) -> Vec4 {
        Vec4::ZERO
    }

    /// A word the proxy's vertex factory reads from the primitive's
    /// GPU-scene record (`PrimitiveData.vertex_factory_data`), found
    /// through the instance's primitive id, so per-primitive data that is
    /// not a binding keeps the cached commands of equal meshes equal (the
    /// skinned factory's joint slot). Read when the primitive is added and
    /// whenever its transform is set; 0 by default.
    fn vertex_factory_data(&self) -> u32 {
        0
    }

    /// Creates GPU resources; called on the render thread when added.
    fn create_render_resources(&mut self, _device: &Device) -> rhi_vulkan::Result<()> {
        Ok(())
    }

    /// Releases GPU resources when removed (the RHI defers their destruction
    /// until no frame in flight uses them).
    fn release_render_resources(&mut self, _device: &Device) {}

    /// The primitive's local-to-world in the scene, on the render thread:
    /// once when the proxy is added (after `create_render_resources`) and
    /// after every transform update (UE's `FPrimitiveSceneProxy::SetTransform`
    /// → `OnTransformChanged`). The GPU scene already carries the transform
    /// to shaders; proxies that cull or pick LODs per sub-element on their own
    /// (instanced meshes) keep a copy. Default: nothing.
    fn on_transform_changed(&mut self, _local_to_world: glam::Mat4) {}

    /// Whether the proxy reports, during [`Self::update_dynamic_data`],
    /// every change to the geometry it draws
    /// ([`ProxyUpdateContext::geometry_changed`]), and draws the same
    /// geometry on its dynamic path from frame to frame until such an
    /// update (a procedural mesh: its sections change only when the game
    /// sends new ones). The shadow atlas then re-renders only the cached
    /// tiles a reported change touches; otherwise (the default) any update
    /// re-renders every tile the whole primitive touches, and a primitive
    /// on the dynamic path re-renders them every frame (a particle system's
    /// sprites may change without an update). Read when the proxy is added.
    fn reports_geometry_changes(&self) -> bool {
        false
    }

    /// New dynamic data from the game thread (UE's SendRenderDynamicData).
    fn update_dynamic_data(&mut self, _data: Box<dyn Any + Send>, _ctx: &mut ProxyUpdateContext<'_>) -> rhi_vulkan::Result<()> {
        Ok(())
    }

    /// CPU bytes this proxy holds.
    fn memory_footprint(&self) -> usize {
        std::mem::size_of_val(self)
    }

    /// Whether occlusion culling may remove the primitive from a main view
    /// when its bounds are hidden behind nearer opaque geometry (UE's
    /// CanBeOccluded; [`crate::occlusion`]). Say false for a primitive whose
    /// bounds do not hold everything it draws, or that draws where the
    /// scene depth does not hide it. Asked once, when the primitive is
    /// added (as UE fixes it when the proxy is created).
    fn can_be_occluded(&self) -> bool {
        true
    }

    /// The triangles this primitive is guaranteed to draw into the main
    /// views' depth prepass at LOD `lod` (the LOD the view picked), for
    /// occlusion culling ([`crate::occlusion`]): in local space, by section
    /// with its material slot. The renderer keeps the sections whose
    /// material is opaque and the triangles the depth prepass would not cull
    /// (front faces, unless two-sided). `None` (the default): not an
    /// occluder. Say `None` unless every triangle returned is drawn exactly
    /// as given whenever the primitive is visible.
    fn occluder(&self, _lod: u8) -> Option<OccluderMesh<'_>> {
        None
    }

    /// For downcasting in render commands and tests.
    fn as_any(&self) -> &dyn Any;
}
