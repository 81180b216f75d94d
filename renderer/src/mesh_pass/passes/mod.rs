//! Mesh passes as data (UE's mesh pass processors plus their pass setup):
//! each pass is one [`PassDesc`] in a file of its own, and [`BUILTIN_PASSES`]
//! lists them in the order a view draws them. Everything that differs
//! between passes — which batches a pass takes, its WGSL, depth and blend
//! state, sort mode, render target, bindings, what it counts in the stats —
//! is read from the pass's description; no code elsewhere matches on a
//! pass. Adding a built-in pass is one new file here plus one table entry;
//! an application registers its own on a renderer ([`PassTable`],
//! `RenderThread::register_pass`).
//!
//! | pass | views | takes | material used | sort | target |
//! | --- | --- | --- | --- | --- | --- |
//! | depth prepass | main | opaque, masked | opaque: the default (so every opaque primitive of a mesh merges); masked: its own, to discard | by state | scene color/depth |
//! | shadow depth | shadow | opaque, masked that cast shadows | as the depth prepass | by state | shadow map |
//! | base | main | opaque, masked | its own | by state | scene color/depth |
//! | translucency | main | translucent, additive | its own | back to front | scene color/depth |
//! | wireframe | wireframe | everything | none (flat color) | by state | scene color/depth |
//!
//! A view sets up only the passes relevant to what it sees
//! ([`PassDesc::relevant`]: the opaque passes when something opaque or
//! masked is visible, translucency when something translucent is).

mod base;
mod depth_prepass;
mod shadow_depth;
mod translucency;
mod wireframe;

use crate::error::{RendererError, Result};
use crate::material::BlendMode;
use crate::mesh_pass::{MeshBatch, MeshPass};
use crate::view::{SceneView, ViewKind, ViewRelevance};
use rhi_vulkan::{BlendState, CompareOp, PolygonMode};

pub use base::BASE;
pub use depth_prepass::DEPTH_PREPASS;
pub use shadow_depth::SHADOW_DEPTH;
pub use translucency::TRANSLUCENCY;
pub use wireframe::WIREFRAME;

/// The built-in mesh passes, in the order a view draws them; a pass's
/// position here is its [`crate::MeshPass`] id.
pub static BUILTIN_PASSES: &[&PassDesc] = &[&DEPTH_PREPASS, &SHADOW_DEPTH, &BASE, &TRANSLUCENCY, &WIREFRAME];

/// Everything the renderer knows about one mesh pass.
#[derive(Debug)]
pub struct PassDesc {
    /// The name in stats files, timestamp and pipeline labels.
    pub name: &'static str,
    /// Which views draw the pass.
    pub views: PassViews,
    /// Whether a batch with the material's blend mode takes part.
    pub takes: fn(&MeshBatch, BlendMode) -> bool,
    /// Whether a view whose visible primitives have this relevance
    /// (ORed; `scene::relevance`) sets the pass up at all: it must hold
    /// for every primitive with a batch the pass `takes` (a view with no
    /// translucent primitive skips translucency). A pass that got dynamic
    /// commands in the view is set up whatever this says.
    pub relevant: fn(&ViewRelevance) -> bool,
    /// Which material the pass's commands use.
    pub material: PassMaterial,
    /// The pass's WGSL (after the scene declarations, vertex factory and
    /// material function): `vs_main`, and `fs_main` where there is a fragment stage.
    pub shader: &'static str,
    /// The WGSL used instead of `shader` for masked materials, and for
    /// every batch of a vertex factory that dithers its fade
    /// ([`crate::VertexFactoryType::dithered_fade`]): it must discard.
    pub masked_shader: &'static str,
    /// Whether the pipeline has a fragment stage (always where it writes velocity).
    pub fragment: PassFragment,
    /// The shaders used instead of `shader` and `masked_shader` in frames
    /// with a velocity target (TAA), where a [`PassTarget::SceneDepth`]
    /// pass writes each pixel's motion vector as its colour
    /// (`velocity.inc.wgsl`); a pass of that target must have them.
    pub velocity: Option<VelocityShaders>,
    /// The depth test and write.
    pub depth: PassDepth,
    /// Opaque batches draw through their vertex factory's position-only
    /// variant ([`crate::VertexFactoryType::position_only`]) with the
    /// position stream alone: for passes that want nothing but depth (the
    /// depth prepass and shadow depth; UE's position-only depth passes).
    pub position_only: bool,
    /// The colour blending.
    pub blend: PassBlend,
    /// Faces are never culled (otherwise back faces are, unless the
    /// material is two-sided).
    pub cull_none: bool,
    /// Filled, or lines for the wireframe pass.
    pub polygon_mode: PolygonMode,
    /// How the visible commands are ordered.
    pub sort: SortMode,
    /// What the pass renders into.
    pub target: PassTarget,
    /// Bind group 1 (the shadow map and its sampler) is bound.
    pub lighting: bool,
    /// The pass's triangles count in `FrameStats::triangles`.
    pub counts_triangles: bool,
}

/// The views a pass is drawn in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassViews {
    /// Main (and capture) views that are not in wireframe.
    Main,
    /// Main views in wireframe (`SceneView::wireframe`, `r.Wireframe`).
    Wireframe,
    /// Shadow views (a light's cascade or atlas tile).
    Shadow,
}

impl PassViews {
    /// Which passes `view` draws, by its kind ([`ViewKind`]) and wireframe flag.
    pub fn of(view: &SceneView) -> PassViews {
        match view.kind {
            ViewKind::ShadowCascade { .. } | ViewKind::ShadowAtlasTile { .. } => PassViews::Shadow,
            ViewKind::Main | ViewKind::Capture if view.wireframe => PassViews::Wireframe,
            ViewKind::Main | ViewKind::Capture => PassViews::Main,
        }
    }
}

/// The material a pass's commands use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassMaterial {
    /// The batch's own material.
    Own,
    /// The default material for opaque batches (so they merge), the batch's
    /// own otherwise (masked ones discard with it).
    DefaultWhenOpaque,
    /// Always the default material.
    Default,
}

/// The WGSL of a pass that writes the velocity target (see
/// [`PassDesc::velocity`]): as [`PassDesc::shader`] and
/// [`PassDesc::masked_shader`], each with an `fs_main` whose location 0 is
/// the motion vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VelocityShaders {
    /// For opaque batches.
    pub shader: &'static str,
    /// For masked materials and factories that dither their fade: it must discard.
    pub masked_shader: &'static str,
}

/// Whether a pass pipeline has a fragment stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassFragment {
    /// For every pipeline of the pass.
    Always,
    /// Only for masked materials and vertex factories that dither their
    /// fade (depth-only passes discard in it).
    MaskedOnly,
}

/// A pass's depth test and write (the format is the scene depth's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassDepth {
    /// Whether the pass writes depth.
    pub write: bool,
    /// The pass also writes depth for the batches the depth prepass does
    /// not draw (`r.EarlyZPassMode`, [`crate::EarlyZ`]): the base pass.
    pub write_where_not_prepassed: bool,
    /// The depth test.
    pub compare: CompareOp,
    /// Constant and slope-scaled depth bias.
    pub bias: Option<(i32, f32)>,
}

/// A pass's color blending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassBlend {
    /// Colors replace what is there.
    None,
    /// Additive materials add, the others blend by alpha.
    ByMaterial,
}

impl PassBlend {
    /// The pipeline's blend state for a material of `blend` (`None`: no
    /// blending).
    pub fn state(self, blend: BlendMode) -> Option<BlendState> {
        match (self, blend) {
            (PassBlend::None, _) => None,
            (PassBlend::ByMaterial, BlendMode::Additive) => Some(BlendState::ADDITIVE),
            (PassBlend::ByMaterial, _) => Some(BlendState::ALPHA),
        }
    }
}

/// How a pass's visible commands are ordered (see `mesh_pass::sort`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortMode {
    /// (bucket rank, primitive slot): state changes are rare; cached
    /// commands take the fast path.
    ByState,
    /// Farthest first, then as `ByState`.
    BackToFront,
}

/// What a pass renders into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassTarget {
    /// Scene depth alone, in the main views, in a rendering of its own
    /// before scene color's (the depth prepass, UE's); in frames with TAA
    /// also the velocity target (`VELOCITY_FORMAT`), written through the
    /// pass's [`PassDesc::velocity`] shaders.
    SceneDepth,
    /// Scene color and depth, in the main views.
    SceneColor,
    /// The directional light's shadow map (depth only).
    ShadowMap,
}

/// The most passes the table holds, built-in and registered.
pub const MAX_PASSES: usize = 16;

/// A renderer's mesh passes: the built-in ones ([`BUILTIN_PASSES`]), then
/// those registered on it (`RenderThread::register_pass`), each drawn after
/// the built-in passes of the views it names, in registration order. The
/// scene owns its renderer's table: it caches static primitives' commands
/// for every pass of it.
#[derive(Clone, Debug)]
pub struct PassTable {
    passes: Vec<MeshPass>,
}

impl Default for PassTable {
    /// The built-in passes.
    fn default() -> Self {
        Self { passes: MeshPass::ALL.to_vec() }
    }
}

impl PassTable {
    /// Adds `desc` after the passes there are and returns its id. Register
    /// before adding the primitives that should draw in it: static
    /// primitives cache their commands for the passes that exist when they
    /// are added.
    ///
    /// Errors: [`RendererError::DuplicatePass`] when a pass of that name is
    /// in the table, [`RendererError::PassTableFull`] when it holds
    /// [`MAX_PASSES`]; the table is then unchanged.
    pub fn register(&mut self, desc: &'static PassDesc) -> Result<MeshPass> {
        if self.passes.iter().any(|p| p.name() == desc.name) {
            return Err(RendererError::DuplicatePass(desc.name.to_string()));
        }
        if self.passes.len() >= MAX_PASSES {
            return Err(RendererError::PassTableFull(MAX_PASSES));
        }
        let pass = MeshPass::at(self.passes.len() as u8, desc);
        self.passes.push(pass);
        Ok(pass)
    }

    /// Every pass of the table, in table order.
    pub fn all(&self) -> impl Iterator<Item = MeshPass> + '_ {
        self.passes.iter().copied()
    }

    /// The passes drawn in `views`, in table order.
    pub fn drawn_in(&self, views: PassViews) -> impl Iterator<Item = MeshPass> + '_ {
        self.all().filter(move |p| p.desc().views == views)
    }

    /// The pass named `name`.
    pub fn find(&self, name: &str) -> Option<MeshPass> {
        self.all().find(|p| p.name() == name)
    }

    /// How many passes the table holds.
    pub fn len(&self) -> usize {
        self.passes.len()
    }

    /// Whether the table is empty (never: the built-in passes are always there).
    pub fn is_empty(&self) -> bool {
        self.passes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_ids_name_their_table_entries() {
        let named = [
            (MeshPass::DepthPrepass, &DEPTH_PREPASS),
            (MeshPass::ShadowDepth, &SHADOW_DEPTH),
            (MeshPass::Base, &BASE),
            (MeshPass::Translucency, &TRANSLUCENCY),
            (MeshPass::Wireframe, &WIREFRAME),
        ];
        assert_eq!(named.len(), MeshPass::COUNT);
        for ((pass, desc), (i, builtin)) in named.into_iter().zip(BUILTIN_PASSES.iter().enumerate()) {
            assert!(std::ptr::eq(pass.desc(), desc) && std::ptr::eq(*builtin, desc) && pass.index() == i, "{pass:?}");
        }
        let names: std::collections::HashSet<_> = MeshPass::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names.len(), MeshPass::COUNT, "names key the stats: unique");
        let table = PassTable::default();
        assert_eq!(table.drawn_in(PassViews::Main).collect::<Vec<_>>(), [MeshPass::DepthPrepass, MeshPass::Base, MeshPass::Translucency]);
    }

    #[test]
    fn a_view_draws_the_passes_of_its_kind() {
        let main = SceneView::perspective(
            glam::Vec3::new(0.0, -5.0, 2.0),
            glam::Vec3::ZERO,
            glam::Vec3::Z,
            1.0,
            0.1,
            10.0,
            rhi_vulkan::Rect::from_size(8, 8),
        )
        .unwrap();
        let of = |kind, wireframe| PassViews::of(&SceneView { kind, wireframe, ..main.clone() });
        assert_eq!((of(ViewKind::Main, false), of(ViewKind::Capture, false)), (PassViews::Main, PassViews::Main));
        assert_eq!(of(ViewKind::Main, true), PassViews::Wireframe);
        assert_eq!(of(ViewKind::ShadowCascade { cascade: 1 }, true), PassViews::Shadow, "a shadow view draws depth, wireframe or not");
        assert_eq!(of(ViewKind::ShadowAtlasTile { tile: 0 }, false), PassViews::Shadow);
    }
}
