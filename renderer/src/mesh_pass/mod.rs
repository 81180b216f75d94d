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

mod draw_command;
mod gather;
mod ids;
mod merge;
mod mesh_batch;
mod pipelines;
mod processor;
pub mod sort;
mod state_buckets;

pub use draw_command::MeshDrawCommand;
pub(crate) use gather::{gather_sort_merge, gather_sort_merge_cached};
pub use ids::{BucketId, DrawRank, PrimitiveSlot};
pub use merge::{merge, MergedDraw};
pub use mesh_batch::MeshBatch;
pub use pipelines::{PassPipelineKey, PipelineLibrary, SCENE_COLOR_FORMAT, SCENE_DEPTH_FORMAT};
pub use processor::build_mesh_draw_command;
pub use sort::{distance_key, sort_back_to_front, sort_by_bucket, VisibleCommand};
pub use state_buckets::{BucketCommand, StateBuckets};

/// The mesh passes, in the order a view draws them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MeshPass {
    /// Opaque and masked geometry, depth only.
    DepthPrepass,
    /// Shadow-casting opaque and masked geometry into the directional light's shadow map.
    ShadowDepth,
    /// Opaque and masked geometry, forward lit.
    Base,
    /// Translucent and additive geometry, back to front, no depth write.
    Translucency,
    /// Everything, edges only, when the view asks for wireframe.
    Wireframe,
}

impl MeshPass {
    pub const ALL: [MeshPass; 5] =
        [MeshPass::DepthPrepass, MeshPass::ShadowDepth, MeshPass::Base, MeshPass::Translucency, MeshPass::Wireframe];
    pub const COUNT: usize = 5;

    pub fn index(self) -> usize {
        self as usize
    }

    /// The name used in stats files.
    pub fn name(self) -> &'static str {
        match self {
            MeshPass::DepthPrepass => "depth",
            MeshPass::ShadowDepth => "shadow",
            MeshPass::Base => "base",
            MeshPass::Translucency => "translucency",
            MeshPass::Wireframe => "wireframe",
        }
    }
}
