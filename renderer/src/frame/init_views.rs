//! The `init_views` stage: the views of the frame (the family's main views,
//! then the shadowed directional light's cascades, `crate::shadow_cascades`) and what each sees — frustum
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
use crate::shadow_atlas::{AtlasFrame, ShadowAtlas};
use crate::shadow_cascades::{cascades, Cascade, CascadeSettings};
use crate::view::{SceneView, ViewFamily};
pub(crate) use crate::view_state::TemporalView;

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
    /// The scene's environment in the view uniform: its prefiltered
    /// specular levels (0: the hemisphere) and intensity.
    pub environment: (u32, f32),
    /// The main views' light grids (the `light_grid` stage builds them).
    pub grid: LightGrid,
    /// The shadowed directional light's cascades (their views are in
    /// `views`, kind `ShadowCascade`), fitted to the first main view.
    pub cascades: Vec<Cascade>,
    /// The cascades' layout in the shadow map.
    pub cascade_settings: CascadeSettings,
    /// `r.Shadow.FilterQuality`.
    pub shadow_filter: u32,
    /// The shadow atlas's tiles (`crate::shadow_atlas`); those rendered
    /// this frame have views in `views` (`atlas_views`).
    pub atlas: AtlasFrame,
    /// Per tile of `atlas`, its view's index in `views` when it is rendered.
    pub atlas_views: Vec<Option<usize>>,
    /// Per view of `views`, its jitter and previous camera where TAA runs
    /// on it (`crate::postprocess::taa`); shorter (or empty) where none
    /// does: [`Self::temporal_of`].
    pub temporal: Vec<Option<TemporalView>>,
}

impl InitViews {
    /// View `i`'s jitter and previous camera: still (no jitter, the
    /// previous camera its own) where TAA does not run on it.
    pub fn temporal_of(&self, i: usize) -> TemporalView {
        self.temporal.get(i).copied().flatten().unwrap_or_else(|| TemporalView::still(self.views[i].view_proj()))
    }

    /// Whether the shadowed directional light has cascades this frame.
    pub fn has_shadow(&self) -> bool {
        !self.cascades.is_empty()
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

/// The views of `family` (with `r.Wireframe`), the directional light's
/// cascades and the shadow atlas's tiles to render (planned in `atlas`),
/// each culled.
pub(crate) fn init_views(scene: &Scene, settings: &FrameSettings, family: &ViewFamily, atlas: &mut ShadowAtlas) -> InitViews {
    let parallel = settings.parallel_pass_setup;
    let wireframe_all = settings.wireframe;
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
    let cascade_settings = CascadeSettings::of(&settings.shadow);
    let first_main = views.iter().find(|v| !v.kind.is_shadow()).cloned();
    // The casters' bounds (a pass over every primitive) only when a light
    // has cascades to fit.
    let cascades = match (shadowed, &first_main) {
        (Some((d, has_map)), Some(main)) => {
            let c =
                scene.shadow_caster_bounds().map(|casters| cascades(main, d.direction, &cascade_settings, &casters)).unwrap_or_default();
            *has_map = !c.is_empty();
            c
        }
        _ => Vec::new(),
    };
    views.extend(cascades.iter().map(|c| c.view.clone()));
    // The casters that changed (a pass over every primitive when some draw
    // dynamically) only when a point or spot light casts shadows.
    let shadowed_lights = scene.scene_lights().shadowed_local().next().is_some();
    let atlas = match (&first_main, settings.shadow.enabled && shadowed_lights) {
        (Some(main), true) => atlas.plan(scene.scene_lights(), main, &scene.shadow_changes(), settings.shadow.atlas),
        _ => {
            atlas.release_all();
            AtlasFrame::default()
        }
    };
    let atlas_views = atlas
        .tiles
        .iter()
        .map(|t| {
            t.render.then(|| {
                views.push(t.view.clone());
                views.len() - 1
            })
        })
        .collect();
    let require = |v: &SceneView| if v.kind.is_shadow() { flags::SHADOW } else { flags::DRAW };
    let occlusion = occlusion_enabled(settings, &scene.passes);
    let visibility: Vec<ViewVisibility> = views
        .iter()
        .map(|v| {
            let main = !v.kind.is_shadow();
            let for_occlusion = main && occlusion && !v.wireframe;
            compute_visibility(scene, &v.frustum(), main.then_some(v), require(v), for_occlusion, parallel, settings.view_distance_scale)
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
        environment: scene.environment.uniform(),
        grid: LightGrid::default(),
        cascades,
        cascade_settings,
        shadow_filter: settings.shadow.filter_quality,
        atlas,
        atlas_views,
        temporal: Vec::new(),
    }
}
