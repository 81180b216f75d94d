//! The `upload` stage: the per-frame data the passes read that depends on
//! the views and the draw lists — the id stream of every pass (its
//! primitives in draw order), the view uniforms and the light grids
//! (`crate::light_grid`) — written into this frame slot's host-visible
//! buffers.

use super::{InitViews, PassDrawList, TemporalView};
use crate::error::Result;
use crate::frame_resources::{DirectionalLightData, FrameResources, ShadowCascadeData, ShadowTileData, ViewUniformData, VIEW_UNIFORM_SIZE};
use crate::light_grid::ViewGrid;
use crate::mesh_pass::PrimitiveSlot;
use crate::scene::ShadowBias;
use crate::settings::{FrameSettings, ShadingSettings};
use crate::view::SceneView;
use rhi_vulkan::{BufferHandle, Device};

/// The frame slot's buffers the passes bind.
pub(crate) struct Uploaded {
    /// Every pass's ids, in list order (each list's `id_base` is its offset).
    pub id_buffer: BufferHandle,
    /// One [`ViewUniformData`] per view.
    pub view_uniforms: BufferHandle,
    /// The light grid's lights, clusters, indices and shadowed counts.
    pub light_grid: [BufferHandle; 4],
    /// The shadow atlas's tiles.
    pub shadow_tiles: BufferHandle,
}

/// Writes the id streams (setting each list's `id_base`; in parallel with
/// `r.RHICmdList.ParallelRecord`), the view uniforms and the light grids
/// into `slot`'s buffers.
pub(crate) fn upload(
    device: &Device,
    (slot, resources): (usize, &mut FrameResources),
    v: &InitViews,
    lists: &mut [PassDrawList],
    settings: &FrameSettings,
) -> Result<Uploaded> {
    let (shadow_size, parallel) = (v.cascade_settings.atlas_size(), settings.parallel_record);
    let mut id_base = 0;
    for l in lists.iter_mut() {
        l.id_base = id_base;
        id_base += l.draws.ids().len() as u32;
    }
    // Each stream in its parts (a pass set up in pieces is the pieces'
    // lists: `IdStream`), each written at its offset.
    let streams: Vec<&[u8]> = lists.iter().flat_map(|l| l.draws.ids().parts()).map(bytemuck::cast_slice::<PrimitiveSlot, u8>).collect();
    let id_buffer = resources.id_streams.write_parts(device, slot, &streams, parallel)?;
    let cascades = cascade_data(v);
    let uniforms: Vec<ViewUniformData> = v
        .views
        .iter()
        .enumerate()
        .map(|(i, view)| {
            view_uniform((view, v.temporal_of(i)), v, v.grid.views.get(i).copied().unwrap_or_default(), &cascades, shadow_size)
        })
        .collect();
    let view_uniforms = resources.view_uniforms.write(device, slot, bytemuck::cast_slice(&uniforms))?;
    let [lights, clusters, indices, shadowed] = &mut resources.light_grid;
    let light_grid = [
        lights.write_parts(device, slot, &[bytemuck::cast_slice(&v.grid.lights)], parallel)?,
        clusters.write_parts(device, slot, &[bytemuck::cast_slice(&v.grid.clusters)], parallel)?,
        indices.write_parts(device, slot, &[bytemuck::cast_slice(&v.grid.indices)], parallel)?,
        shadowed.write_parts(device, slot, &[bytemuck::cast_slice(&v.grid.shadowed)], parallel)?,
    ];
    let tiles = shadow_tile_data(v, settings.shadow.atlas.size);
    let shadow_tiles = resources.shadow_tiles.write(device, slot, bytemuck::cast_slice(&tiles))?;
    Ok(Uploaded { id_buffer, view_uniforms, light_grid, shadow_tiles })
}

/// The hemisphere ambient's radiance from the sky (above, +Z) and from the
/// ground (below): a stand-in for sky lighting, so sides facing away from
/// every light are not black.
const SKY_RADIANCE: [f32; 3] = [0.24, 0.27, 0.33];
const GROUND_RADIANCE: [f32; 3] = [0.11, 0.10, 0.09];

/// The floor of a directional light's depth bias (before the slope term)
/// in scene units, unless the bias is 0.
const SHADOW_BIAS_WORLD_MIN: f32 = 0.01;

/// The shadow atlas's tiles' shader data: each one's projection and its
/// square as UVs.
fn shadow_tile_data(v: &InitViews, atlas_size: u32) -> Vec<ShadowTileData> {
    let atlas = atlas_size.max(1) as f32;
    v.atlas
        .tiles
        .iter()
        .map(|t| {
            let r = t.view.viewport;
            ShadowTileData {
                view_proj: t.view.view_proj().to_cols_array_2d(),
                atlas_rect: [r.x as f32 / atlas, r.y as f32 / atlas, r.width as f32 / atlas, r.height as f32 / atlas],
                texel_at_unit: t.texel_at_unit,
                atlas_texel: 1.0 / atlas,
                _pad: [0.0; 2],
            }
        })
        .collect()
}

/// The cascades' shader data: each one's projection, its tile in the
/// shadow map as UVs, its depths and its bias.
fn cascade_data(v: &InitViews) -> [ShadowCascadeData; 4] {
    let mut out = [ShadowCascadeData::default(); 4];
    let atlas = v.cascade_settings.atlas_size().max(1) as f32;
    let bias = v.directional.iter().find(|(_, shadowed)| *shadowed).map_or(ShadowBias::DIRECTIONAL, |(d, _)| d.shadow_bias);
    for (slot, c) in out.iter_mut().zip(&v.cascades) {
        let r = c.view.viewport;
        // The light's bias in shadow texels, by the size of a texel in the
        // world (acne-free at any scene scale); the depth bias never below
        // a small world-space floor, relative to the cascade's depth range
        // (its projection is orthographic).
        let depth_world = bias.depth * c.texel_world;
        let bias_world = if bias.depth > 0.0 { depth_world.max(SHADOW_BIAS_WORLD_MIN) } else { 0.0 };
        *slot = ShadowCascadeData {
            view_proj: c.view.view_proj().to_cols_array_2d(),
            atlas_rect: [r.x as f32 / atlas, r.y as f32 / atlas, r.width as f32 / atlas, r.height as f32 / atlas],
            far_depth: c.far_depth,
            blend_start: c.blend_start,
            bias: bias_world / c.depth_range.max(1e-6),
            normal_bias: bias.normal * c.texel_world,
        };
    }
    out
}

fn view_uniform(
    (v, temporal): (&SceneView, TemporalView),
    views: &InitViews,
    grid: ViewGrid,
    cascades: &[ShadowCascadeData; 4],
    shadow_size: u32,
) -> ViewUniformData {
    let (has_shadow, sky) = (views.has_shadow(), views.shading.sky_light);
    let (right, up) = v.right_up();
    let mut directional_lights = [DirectionalLightData::default(); 4];
    for (slot, (d, shadowed)) in directional_lights.iter_mut().zip(&views.directional) {
        *slot = DirectionalLightData {
            direction: d.direction.normalize_or_zero().to_array(),
            shadowed: u32::from(*shadowed && has_shadow),
            color: (d.color * d.intensity).to_array(),
            _pad: 0.0,
        };
    }
    ViewUniformData {
        view_proj: v.view_proj().to_cols_array_2d(),
        camera_position: v.origin.to_array(),
        perspective: u32::from(v.perspective),
        camera_right: right.to_array(),
        directional_light_count: views.directional.len().min(4) as u32,
        camera_up: up.to_array(),
        shadow_cascade_count: views.cascades.len() as u32,
        view_depth_axis: v.depth_axis().to_array(),
        light_grid_origin: grid.origin.to_array(),
        light_grid_tile_size: grid.tile_pixels.max(1) as f32,
        light_grid_base: grid.base,
        light_grid_size: grid.size,
        shadow_filter: views.shadow_filter,
        light_grid_z_scale: grid.z_scale,
        light_grid_z_bias: grid.z_bias,
        shadow_texel: 1.0 / shadow_size.max(1) as f32,
        specular_aa_variance: views.shading.specular_aa_variance,
        sky_radiance: SKY_RADIANCE.map(|c| c * sky),
        specular_aa_threshold: ShadingSettings::SPECULAR_AA_THRESHOLD,
        ground_radiance: GROUND_RADIANCE.map(|c| c * sky),
        light_grid_has_shadows: u32::from(!views.grid.shadowed.is_empty()),
        wireframe_color: [0.85, 0.9, 1.0, 1.0],
        directional_lights,
        shadow_cascades: *cascades,
        environment_levels: views.environment.0,
        environment_intensity: views.environment.1 * sky,
        jitter: temporal.jitter.to_array(),
        prev_view_proj: temporal.prev_view_proj.to_cols_array_2d(),
        _reserved: [[0; 4]; 13],
    }
}

const _: () = assert!(VIEW_UNIFORM_SIZE == 1024 && VIEW_UNIFORM_SIZE.is_multiple_of(256));
