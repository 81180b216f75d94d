//! The `init_views` stage: the views of the frame (the family's main views,
//! then the directional light's shadow view) and what each sees — frustum
//! and distance culling, relevance (the flags a view requires, proxies
//! whose relevance depends on the view asked again, the view's relevance
//! ORed), static LOD.

use super::occlusion::occlusion_enabled;
use crate::light_grid::LightGrid;
use crate::mesh_pass::passes::{PassTable, PassViews};
use crate::mesh_pass::MeshPass;
use crate::occlusion::OcclusionBuffer;
use crate::scene::{compute_visibility, flags, DirectionalLight, Light, Scene, ViewRelevance, ViewVisibility, MAX_DIRECTIONAL_LIGHTS};
use crate::settings::{FrameSettings, ShadingSettings};
use crate::view::{SceneView, ViewFamily, ViewKind};
use glam::{Mat4, Vec3};
use rhi_vulkan::Rect;

/// The frame's views and their visibility.
pub(crate) struct InitViews {
    /// The family's views, then the renderer's (the shadow view, when there
    /// is one); each view's kind says what it renders ([`ViewKind`]).
    pub views: Vec<SceneView>,
    /// The renderer's mesh passes this frame.
    pub passes: PassTable,
    /// The directional lights that shade (up to four, by id) and whether
    /// each casts the shadow map (the first that casts shadows).
    pub directional: Vec<(DirectionalLight, bool)>,
    /// Per view of `views`.
    pub visibility: Vec<ViewVisibility>,
    /// Per view of `views`, the occlusion buffer the `occlusion` stage
    /// built (`None`: not occlusion culled — the shadow view, wireframe
    /// views, `r.AllowOcclusionQueries=0`).
    pub occlusion: Vec<Option<OcclusionBuffer>>,
    /// Primitives the `occlusion` stage removed, summed over the main views.
    pub occluded_primitives: u64,
    /// How the base and translucency passes shade this frame.
    pub shading: ShadingSettings,
    /// The main views' light grids (the `light_grid` stage builds them).
    pub grid: LightGrid,
}

impl InitViews {
    /// The directional light's shadow view (its first cascade), if any.
    pub fn shadow_view(&self) -> Option<&SceneView> {
        self.views.iter().find(|v| matches!(v.kind, ViewKind::ShadowCascade { .. }))
    }

    pub fn has_shadow(&self) -> bool {
        self.shadow_view().is_some()
    }

    pub fn shadow_view_proj(&self) -> Mat4 {
        self.shadow_view().map(|v| v.view_proj()).unwrap_or(Mat4::IDENTITY)
    }

    /// The views that draw into scene color (not shadow views), as indices into `views`.
    pub fn main_views(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.views.len()).filter(|&i| !self.views[i].kind.is_shadow())
    }

    /// The mesh passes view `i` draws (by its kind: [`PassViews::of`]).
    pub fn passes_of(&self, i: usize) -> Vec<MeshPass> {
        self.passes.drawn_in(PassViews::of(&self.views[i])).collect()
    }

    /// Whether view `i` sets `pass` up: something it sees is relevant to
    /// the pass ([`crate::mesh_pass::passes::PassDesc::relevant`]).
    pub fn pass_relevant(&self, i: usize, pass: MeshPass) -> bool {
        (pass.desc().relevant)(&ViewRelevance::from_flags(self.visibility[i].relevance))
    }

    /// Primitives visible in the main views.
    pub fn visible_primitives(&self) -> u64 {
        self.main_views().map(|i| self.visibility[i].visible.len() as u64).sum()
    }

    /// Slots the main views' culling tested one by one (the others were
    /// in chunks skipped on their boxes).
    pub fn tested_primitives(&self) -> u64 {
        self.main_views().map(|i| u64::from(self.visibility[i].tested)).sum()
    }
}

/// The views of `family` (with `r.Wireframe`) and the shadow view, each culled.
pub(crate) fn init_views(scene: &Scene, settings: &FrameSettings, family: &ViewFamily) -> InitViews {
    let parallel = settings.parallel_pass_setup;
    let wireframe_all = settings.wireframe;
    let shadow_size = settings.shadow.map_size;
    let mut directional: Vec<(DirectionalLight, bool)> = scene
        .scene_lights()
        .directional()
        .filter_map(|l| match l {
            Light::Directional(d) => Some((*d, false)),
            _ => None,
        })
        .take(MAX_DIRECTIONAL_LIGHTS)
        .collect();
    let shadowed = directional.iter_mut().find(|(d, _)| d.cast_shadows && settings.shadow.enabled);
    let mut views: Vec<SceneView> = family.views.clone();
    for v in &mut views {
        v.wireframe |= wireframe_all;
    }
    let shadow_view = shadowed.and_then(|(d, has_map)| {
        let view =
            scene.shadow_caster_bounds().and_then(|b| shadow_view_for(d.direction, b.origin, b.extent.length().max(1.0), shadow_size));
        *has_map = view.is_some();
        view
    });
    views.extend(shadow_view);
    let require = |v: &SceneView| if v.kind.is_shadow() { flags::SHADOW } else { flags::DRAW };
    let occlusion = occlusion_enabled(settings, &scene.passes);
    let visibility: Vec<ViewVisibility> = views
        .iter()
        .map(|v| {
            let main = !v.kind.is_shadow();
            compute_visibility(scene, &v.frustum(), main.then_some(v), require(v), main && occlusion && !v.wireframe, parallel)
        })
        .collect();
    let occlusion = vec![None; views.len()];
    let shading = settings.shading;
    InitViews {
        views,
        passes: scene.passes.clone(),
        directional,
        visibility,
        occlusion,
        occluded_primitives: 0,
        shading,
        grid: LightGrid::default(),
    }
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
    let view = SceneView::orthographic(eye, center, up, radius * 2.0, radius * 2.0, 0.5, 2.0 * radius + 1.5, Rect::from_size(size, size));
    view.ok().map(|v| SceneView { kind: ViewKind::ShadowCascade { cascade: 0 }, ..v })
}
