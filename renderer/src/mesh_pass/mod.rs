//! The retained mesh-drawing pipeline (UE's mesh drawing pipeline):
//!
//! ```text
//! MeshBatch ──(per-pass processor)──► MeshDrawCommand ──► state bucket id
//!     (cached once for static primitives; per frame for dynamic ones)
//! visible (bucket, primitive) ──► sort ──► merge into instanced draws ──► submit
//! ```
//!
//! Two contracts hold it together: what two commands must share to merge
//! ([`MeshDrawCommand`]), and the draw order ([`sort`]: a sort key that ends
//! with the primitive slot; bucket ranks from [`StateBuckets`]).
//!
//! A frame sets up each (view, pass) with one call, `setup` (gather, sort,
//! merge; `gather.rs`), which returns the pass's `PassDraws`: its draws,
//! read as plain [`MergedDraw`]s in draw order, and its id stream. How the
//! draws are kept (runs and chains, `draw_list.rs`) and made (the fast
//! path's pieces) stays inside this module.

mod cache;
mod draw_command;
mod draw_list;
mod gather;
mod id_stream;
mod ids;
mod material_check;
mod merge;
mod mesh_batch;
pub mod passes;
mod pipelines;
mod processor;
pub mod sort;
mod state_buckets;

pub(crate) use cache::{CachedEntry, PassCache, VisiblePrimitives, EMPTY as EMPTY_CACHED_ENTRY};
pub use draw_command::MeshDrawCommand;
pub(crate) use draw_list::{DrawChunk, DrawOrder, PassDraws};
pub(crate) use gather::{setup, SetupOptions};
pub(crate) use id_stream::IdStream;
pub use ids::{buckets_by_rank, BucketId, DrawRank, PrimitiveSlot};
pub(crate) use material_check::note_vertex_factory;
pub use material_check::{check_vertex_factory, validate_material, validate_material_in};
pub use merge::{merge, MergedDraw};
pub use mesh_batch::{MeshBatch, MeshBatchElement};
pub use pipelines::{PassPipelineKey, PipelineLibrary, SCENE_COLOR_FORMAT, SCENE_DEPTH_FORMAT, VELOCITY_FORMAT};
pub use processor::build_mesh_draw_command;
pub use sort::{distance_key, sort_back_to_front, sort_by_bucket, translucency_key, VisibleCommand};
pub use state_buckets::{BucketCommand, StateBuckets};

/// A mesh pass: its place in its renderer's pass table (the built-in
/// passes of [`passes::BUILTIN_PASSES`], then those registered on the
/// renderer, [`passes::PassTable`]) and its description, which it carries:
/// what the pass does is [`MeshPass::desc`], without a table at hand. Two
/// passes are equal when their places are.
#[derive(Clone, Copy)]
pub struct MeshPass {
    index: u8,
    desc: &'static passes::PassDesc,
}

impl PartialEq for MeshPass {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}

impl Eq for MeshPass {}

impl std::hash::Hash for MeshPass {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index.hash(state);
    }
}

impl PartialOrd for MeshPass {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for MeshPass {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}

#[allow(non_upper_case_globals)]
impl MeshPass {
    /// Opaque and masked geometry, depth only.
    pub const DepthPrepass: MeshPass = MeshPass { index: 0, desc: &passes::DEPTH_PREPASS };
    /// Shadow-casting opaque and masked geometry into the directional light's shadow map.
    pub const ShadowDepth: MeshPass = MeshPass { index: 1, desc: &passes::SHADOW_DEPTH };
    /// Opaque and masked geometry, forward lit.
    pub const Base: MeshPass = MeshPass { index: 2, desc: &passes::BASE };
    /// Translucent and additive geometry, back to front, no depth write.
    pub const Translucency: MeshPass = MeshPass { index: 3, desc: &passes::TRANSLUCENCY };
    /// Everything, edges only, when the view asks for wireframe.
    pub const Wireframe: MeshPass = MeshPass { index: 4, desc: &passes::WIREFRAME };

    /// The number of built-in passes.
    pub const COUNT: usize = 5;
    /// The built-in passes, in table order (with the registered ones:
    /// [`passes::PassTable::all`]).
    pub const ALL: [MeshPass; MeshPass::COUNT] =
        [MeshPass::DepthPrepass, MeshPass::ShadowDepth, MeshPass::Base, MeshPass::Translucency, MeshPass::Wireframe];
    /// The most passes a table holds, built-in and registered (the length
    /// of the per-pass arrays in the stats).
    pub const MAX: usize = passes::MAX_PASSES;

    /// The pass at `index` of a table, described by `desc`.
    pub(crate) const fn at(index: u8, desc: &'static passes::PassDesc) -> Self {
        Self { index, desc }
    }

    /// The pass's position in its pass table, for per-pass arrays.
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// What the pass does.
    pub fn desc(self) -> &'static passes::PassDesc {
        self.desc
    }

    /// The name used in stats files.
    pub fn name(self) -> &'static str {
        self.desc.name
    }
}

impl std::fmt::Debug for MeshPass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MeshPass({})", self.name())
    }
}
