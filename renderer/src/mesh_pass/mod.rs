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
pub use material_check::validate_material;
pub use merge::{merge, MergedDraw};
pub use mesh_batch::{MeshBatch, MeshBatchElement};
pub use pipelines::{PassPipelineKey, PipelineLibrary, SCENE_COLOR_FORMAT, SCENE_DEPTH_FORMAT};
pub use processor::build_mesh_draw_command;
pub use sort::{distance_key, sort_back_to_front, sort_by_bucket, translucency_key, VisibleCommand};
pub use state_buckets::{BucketCommand, StateBuckets};

/// A mesh pass: an id into the pass table (the built-in passes of
/// [`crate::mesh_pass::passes::BUILTIN_PASSES`], then those added with
/// [`crate::mesh_pass::passes::register_pass`]). What the pass does is its
/// [`PassDesc`](crate::mesh_pass::passes::PassDesc): [`MeshPass::desc`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MeshPass(pub(crate) u8);

#[allow(non_upper_case_globals)]
impl MeshPass {
    /// Opaque and masked geometry, depth only.
    pub const DepthPrepass: MeshPass = MeshPass(0);
    /// Shadow-casting opaque and masked geometry into the directional light's shadow map.
    pub const ShadowDepth: MeshPass = MeshPass(1);
    /// Opaque and masked geometry, forward lit.
    pub const Base: MeshPass = MeshPass(2);
    /// Translucent and additive geometry, back to front, no depth write.
    pub const Translucency: MeshPass = MeshPass(3);
    /// Everything, edges only, when the view asks for wireframe.
    pub const Wireframe: MeshPass = MeshPass(4);

    /// The number of built-in passes.
    pub const COUNT: usize = crate::mesh_pass::passes::BUILTIN_PASSES.len();
    /// The built-in passes, in table order (with the registered ones:
    /// [`crate::mesh_pass::passes::all`]).
    pub const ALL: [MeshPass; MeshPass::COUNT] = {
        let mut all = [MeshPass(0); MeshPass::COUNT];
        let mut i = 0;
        while i < MeshPass::COUNT {
            all[i] = MeshPass(i as u8);
            i += 1;
        }
        all
    };
    /// The most passes there can be, built-in and registered (the length
    /// of the per-pass arrays in the stats).
    pub const MAX: usize = crate::mesh_pass::passes::MAX_PASSES;

    /// The pass's position in the pass table, for per-pass arrays.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// What the pass does.
    pub fn desc(self) -> &'static crate::mesh_pass::passes::PassDesc {
        crate::mesh_pass::passes::desc(self)
    }

    /// The name used in stats files.
    pub fn name(self) -> &'static str {
        self.desc().name
    }
}

impl std::fmt::Debug for MeshPass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MeshPass({})", self.name())
    }
}
