//! The layout tests of every struct the renderer shares with its WGSL: the
//! WGSL side laid out by naga, compared field by field with the Rust side
//! (`test_support::assert_wgsl_layout!`). The scene's structs are read
//! from a composed base-pass shader, the declarations as the GPU sees them.

use crate::frame::submit::DrawPush;
use crate::frame_resources::{DirectionalLightData, ShadowCascadeData, ShadowTileData, ViewUniformData};
use crate::light_grid::LocalLightData;
use crate::mesh_pass::{MeshPass, PassPipelineKey, PipelineLibrary};
use crate::postprocess::tonemap::{TonemapPush, TONEMAP_WGSL};
use crate::scene::PrimitiveGpuData;
use crate::vertex_factory::{VertexFactoryType, LOCAL_VERTEX_FACTORY};
use crate::{BlendMode, Material, MaterialShaderId, MATERIAL_BLOCK_SIZE};
use test_support::assert_wgsl_layout;

/// The base pass over the local vertex factory with the default material.
fn base_pass_wgsl() -> String {
    let key = PassPipelineKey {
        pass: MeshPass::Base,
        vertex_factory: LOCAL_VERTEX_FACTORY.name(),
        material_shader: MaterialShaderId(0),
        blend: BlendMode::Opaque,
        two_sided: false,
        reverse_culling: false,
        samples: 1,
        velocity: false,
        depth_write: false,
        alpha_to_coverage: false,
    };
    let material = Material::colored(glam::Vec4::ONE);
    let wgsl = material.effective_wgsl(&material.layout().expect("the default material lays out"));
    PipelineLibrary::compose(&key, &LOCAL_VERTEX_FACTORY, &wgsl)
}

#[test]
fn the_view_uniform_matches_the_shader() {
    let wgsl = base_pass_wgsl();
    assert_wgsl_layout!(
        ViewUniformData,
        &wgsl,
        "ViewUniform",
        [
            view_proj,
            camera_position,
            perspective,
            camera_right,
            directional_light_count,
            camera_up,
            shadow_cascade_count,
            view_depth_axis,
            light_grid_origin,
            light_grid_tile_size,
            light_grid_base,
            light_grid_size,
            shadow_filter,
            light_grid_z_scale,
            light_grid_z_bias,
            shadow_texel,
            specular_aa_variance,
            sky_radiance,
            specular_aa_threshold,
            ground_radiance,
            light_grid_has_shadows,
            wireframe_color,
            directional_lights,
            shadow_cascades,
            environment_levels,
            environment_intensity,
            jitter,
            prev_view_proj,
            _reserved,
        ]
    );
    assert_wgsl_layout!(ShadowTileData, &wgsl, "ShadowTile", [view_proj, atlas_rect, texel_at_unit, atlas_texel, _pad]);
    assert_wgsl_layout!(ShadowCascadeData, &wgsl, "ShadowCascade", [view_proj, atlas_rect, far_depth, blend_start, bias, normal_bias]);
    assert_wgsl_layout!(DirectionalLightData, &wgsl, "DirectionalLight", [direction, shadowed, color]);
    assert_wgsl_layout!(
        LocalLightData,
        &wgsl,
        "LocalLight",
        [position, radius, color, spot_scale, direction, spot_offset, source_radius, shadow, shadow_depth_bias, shadow_normal_bias]
    );
}

#[test]
fn the_gpu_scene_and_the_draw_push_constants_match_the_shader() {
    let wgsl = base_pass_wgsl();
    assert_wgsl_layout!(
        PrimitiveGpuData,
        &wgsl,
        "PrimitiveData",
        [local_to_world, prev_local_to_world, bounds_origin_radius, bounds_extent, vertex_factory_data, custom]
    );
    assert_wgsl_layout!(DrawPush, &wgsl, "DrawPush", [material_index, primitive_id, pad0, pad1]);
}

/// The material block is written as vec4s (`MaterialParams::write_block`:
/// base colour, metallic-roughness-specular-opacity, emissive, custom, then
/// the declared parameters), which the WGSL struct must lay out densely.
#[test]
fn the_material_block_matches_the_shader() {
    let layout = test_support::wgsl_layout::struct_layout(&base_pass_wgsl(), "MaterialParams").unwrap();
    let offsets: Vec<(&str, u32)> = layout.members.iter().map(|m| (m.name.as_str(), m.offset)).collect();
    assert_eq!(offsets, [("base_color", 0), ("mrso", 16), ("emissive", 32), ("custom", 48), ("user", 64)]);
    assert_eq!(layout.size as usize, MATERIAL_BLOCK_SIZE);
}

#[test]
fn the_tonemap_push_constants_match_the_shader() {
    assert_wgsl_layout!(TonemapPush, TONEMAP_WGSL, "TonemapPush", [exposure, tonemapper, adapted, pad1]);
}

#[test]
fn the_environment_and_exposure_structs_match_their_shaders() {
    use crate::environment::gpu::{PrefilterParams, SkyPush, PREFILTER_SHADER, SKY_SHADER};
    use crate::postprocess::exposure::{Params, SHADER};
    assert_wgsl_layout!(
        PrefilterParams,
        PREFILTER_SHADER,
        "Params",
        [face_size, first_texel, samples, sh_level, roughness, source_texel_solid_angle, source_levels, _pad]
    );
    assert_wgsl_layout!(SkyPush, SKY_SHADER, "SkyPush", [clip_to_world, viewport, intensity, lod, _pad]);
    assert_wgsl_layout!(
        Params,
        SHADER,
        "Params",
        [viewport, min_log2, log2_range, delta_seconds, speed_up, speed_down, min_ev100, max_ev100, compensation]
    );
    // The exposure state: as big in every shader that reads it as the buffers made for it.
    for wgsl in [SHADER, TONEMAP_WGSL] {
        let layout = test_support::wgsl_layout::struct_layout(wgsl, "ExposureState").unwrap();
        assert_eq!(u64::from(layout.size), crate::view_state::EXPOSURE_STATE_SIZE);
    }
}
