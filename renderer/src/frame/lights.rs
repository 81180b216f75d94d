//! The `light_grid` stage: every main view's light grid (clustered
//! lighting, `crate::light_grid`), built from the scene's lights on the
//! CPU (in parallel with `r.MeshDrawCommands.ParallelPassSetup`) and
//! uploaded with the view uniforms; each shadowed light's GPU form names
//! its first tile in the frame's shadow atlas.

use super::InitViews;
use crate::light_grid::build_light_grid;
use crate::scene::Scene;
use crate::settings::FrameSettings;

/// Builds the grids of `v`'s main views that shade (not shadow or wireframe views).
pub(crate) fn light_grid(scene: &Scene, settings: &FrameSettings, v: &mut InitViews) {
    let shades: Vec<bool> = v.views.iter().map(|view| !view.kind.is_shadow() && !view.wireframe).collect();
    let lights = scene.scene_lights();
    v.grid = build_light_grid(lights, &v.views, &shades, &settings.light_grid, settings.parallel_pass_setup);
    // The shadowed lights' first tiles in this frame's shadow atlas.
    if !v.atlas.first_tile.is_empty() {
        for (gpu, &i) in v.grid.lights.iter_mut().zip(&v.grid.scene_indices) {
            if let Some(&tile) = v.atlas.first_tile.get(&lights.local_ids()[i as usize]) {
                gpu.shadow = tile as i32;
            }
        }
    }
    v.grid.order_shadowed_last();
}
