//! The `light_grid` stage: every main view's light grid (clustered
//! lighting, `crate::light_grid`), built from the scene's lights on the
//! CPU (in parallel with `r.MeshDrawCommands.ParallelPassSetup`) and
//! uploaded with the view uniforms.

use super::InitViews;
use crate::light_grid::build_light_grid;
use crate::scene::Scene;
use crate::settings::FrameSettings;

/// Builds the grids of `v`'s main views that shade (not shadow or wireframe views).
pub(crate) fn light_grid(scene: &Scene, settings: &FrameSettings, v: &mut InitViews) {
    let shades: Vec<bool> = v.views.iter().map(|view| !view.kind.is_shadow() && !view.wireframe).collect();
    v.grid = build_light_grid(scene.scene_lights(), &v.views, &shades, &settings.light_grid, settings.parallel_pass_setup);
}
