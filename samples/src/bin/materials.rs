//! `cargo xtask run materials`: the material system on show (UE's materials
//! and material instances). Every group below is instances of one parent
//! material, and every texture is generated in code (`samples::textures`):
//! - a grid of spheres sweeping metallic (columns) × roughness (rows);
//! - a brick-textured sphere and a checkered floor (sRGB albedo textures);
//! - a normal-mapped sphere (a linear bump map), lit by a low sun from the side;
//! - a standing panel of leaves, alpha-tested (masked, two-sided), whose
//!   shadow on the back wall shows the holes;
//! - a row of translucent spheres of rising opacity;
//! - a band of 1,000 floor tiles, each its own instance of one parent, whose
//!   `tint` parameter is set every frame: 1,000 × 256 bytes of parameter
//!   blocks uploaded per frame, and no command or pipeline rebuilt.
//!
//! The layout (shared with the test) is `samples::materials_scene`.

use clap::Parser;
use engine_core::*;
use glam::{Quat, Vec3, Vec4};
use renderer::{BlendMode, Material, MaterialId, MaterialInstance, MaterialParameter, ParameterValue, TextureId};
use rhi_vulkan::SamplerDesc;
use samples::materials_scene as layout;
use samples::{runner, textures, CommonOptions};
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(
    name = "materials",
    about = "Material parents and instances: metallic × roughness, textures, normal maps, masked, translucent, 1,000 animated instances"
)]
struct Options {
    #[command(flatten)]
    common: CommonOptions,
}

fn main() {
    samples::main("materials", run);
}

/// A colour set per instance, every frame.
const TINT_WGSL: &str = "fn material_main(in: MaterialInput) -> MaterialOutput {
    var out = default_material(in);
    out.base_color = param_tint().rgb * in.color.rgb;
    return out;
}
";

/// Trilinear, repeating, anisotropic where the device filters so (the RHI
/// leaves it off on CPU devices: lavapipe filters anisotropically in
/// software, about 100 times slower, 21 s instead of 0.2 s for this
/// frame's base pass at 1280×720 with 8×).
fn sampler() -> SamplerDesc {
    SamplerDesc::material()
}

fn spawn_mesh(engine: &mut Engine, name: &str, mesh: &Arc<StaticMesh>, t: Transform, material: MaterialId) -> anyhow::Result<ComponentId> {
    let (_, id) = engine.world.spawn_actor(name, Box::new(StaticMeshComponent::new(mesh.clone())), t)?;
    engine.world.set_material(id, 0, material)?;
    Ok(id)
}

fn run(o: &Options) -> anyhow::Result<()> {
    let mut engine = runner::engine_lit("materials", &o.common, layout::SUN_DIRECTION)?;
    let sphere = StaticMesh::new("uv sphere", vec![renderer::shapes::uv_sphere(1.0, 48, 24)], vec!["default".into()])?;
    let plane = StaticMesh::plane();
    let cube = StaticMesh::cube();

    // Textures, generated here.
    let rt = engine.render_thread();
    let (brick_albedo, _) = textures::bricks(256);
    let bricks = rt.create_texture(brick_albedo)?;
    let checker = rt.create_texture(textures::checker(64, [0.62, 0.62, 0.60], [0.44, 0.44, 0.43]))?;
    let bumps = rt.create_texture(textures::normal_map("bumps", 256, &textures::bumps(256, 6), 12.0))?;
    let leaves = rt.create_texture(textures::leaves(256, 0.45, 11))?;

    // Parents.
    let lit = rt.create_material(Material::colored(Vec4::new(0.85, 0.22, 0.12, 1.0)))?;
    let textured = rt.create_material(
        Material::with_shader("textured.wgsl", textures::TEXTURED_WGSL)
            .with_parameter(MaterialParameter::texture("albedo", TextureId::WHITE, sampler()))
            .with_parameter(MaterialParameter::vector("uv_scale", Vec4::ONE)),
    )?;
    let mut normal_mapped = Material::with_shader("normal_mapped.wgsl", textures::NORMAL_MAPPED_WGSL)
        .with_parameter(MaterialParameter::texture("normal_map", bumps, sampler()))
        .with_parameter(MaterialParameter::vector("uv_scale", Vec4::new(8.0, 4.0, 0.0, 0.0)));
    normal_mapped.params.base_color = Vec4::new(0.55, 0.62, 0.72, 1.0);
    normal_mapped.params.roughness = 0.35;
    let normal_mapped = rt.create_material(normal_mapped)?;
    let mut masked = Material::with_shader("leaves.wgsl", textures::LEAVES_WGSL)
        .with_blend(BlendMode::Masked)
        .with_two_sided(true)
        .with_parameter(MaterialParameter::texture("leaves", leaves, sampler()))
        .with_parameter(MaterialParameter::vector("uv_scale", Vec4::new(1.5, 1.5, 0.0, 0.0)));
    masked.params.base_color = Vec4::ONE;
    masked.params.roughness = 0.6;
    let masked = rt.create_material(masked)?;
    let translucent = rt.create_material(Material::colored(Vec4::new(0.2, 0.5, 0.9, 1.0)).with_blend(BlendMode::Translucent))?;
    let tinted =
        rt.create_material(Material::with_shader("tint.wgsl", TINT_WGSL).with_parameter(MaterialParameter::vector("tint", Vec4::ONE)))?;
    let wall = rt.create_material(Material::colored(Vec4::new(0.62, 0.62, 0.64, 1.0)))?;

    // Instances.
    let mut grid = Vec::new();
    for row in 0..layout::GRID_ROWS {
        for column in 0..layout::GRID_COLUMNS {
            let instance = MaterialInstance::of(lit)
                .with_scalar("metallic", layout::grid_metallic(column))
                .with_scalar("roughness", layout::grid_roughness(row));
            grid.push((column, row, rt.create_material_instance(instance)?));
        }
    }
    let brick_sphere = rt.create_material_instance(
        MaterialInstance::of(textured).with_texture("albedo", bricks).with_vector("uv_scale", Vec4::new(2.0, 1.0, 0.0, 0.0)),
    )?;
    let floor = rt.create_material_instance(
        MaterialInstance::of(textured).with_texture("albedo", checker).with_vector("uv_scale", Vec4::new(13.0, 8.0, 0.0, 0.0)),
    )?;
    let glass: Vec<MaterialId> = (0..layout::TRANSLUCENT_COUNT)
        .map(|i| {
            let t = i as f32 / (layout::TRANSLUCENT_COUNT - 1) as f32;
            let color = Vec4::new(0.15 + 0.75 * t, 0.55, 0.95 - 0.75 * t, 1.0);
            rt.create_material_instance(
                MaterialInstance::of(translucent).with_vector("base_color", color).with_scalar("opacity", layout::translucent_opacity(i)),
            )
        })
        .collect::<Result<_, _>>()?;
    let tiles: Vec<MaterialId> =
        (0..layout::TILES).map(|_| rt.create_material_instance(MaterialInstance::of(tinted))).collect::<Result<_, _>>()?;

    // Camera, sun, studio.
    let w = &mut engine.world;
    let mut camera = CameraComponent::default();
    (camera.0.fov_y, camera.0.near, camera.0.far) = (layout::FOV_Y, layout::NEAR, layout::FAR);
    let (_, camera_id) =
        w.spawn_actor("camera", Box::new(camera), Transform::new(layout::EYE, look_rotation(layout::EYE, layout::TARGET), Vec3::ONE))?;
    samples::fly_camera::control_camera(camera_id);
    let sun = DirectionalLightComponent { color: Vec3::new(1.0, 0.96, 0.9), intensity: 1.6, cast_shadows: true, ..Default::default() };
    w.spawn_actor("sun", Box::new(sun), Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, layout::SUN_DIRECTION), Vec3::ONE))?;
    spawn_mesh(
        &mut engine,
        "floor",
        &plane,
        Transform::from_translation_scale(Vec3::new(0.6, -3.0, 0.0), Vec3::new(26.0, 16.0, 1.0)),
        floor,
    )?;
    let wall_t =
        Transform::new(Vec3::new(0.6, layout::WALL_Y, 5.0), Quat::from_rotation_x(std::f32::consts::FRAC_PI_2), Vec3::new(26.0, 10.0, 1.0));
    spawn_mesh(&mut engine, "wall", &plane, wall_t, wall)?;

    for (column, row, material) in grid {
        spawn_mesh(
            &mut engine,
            "grid sphere",
            &sphere,
            Transform::from_translation_scale(layout::grid_sphere(column, row), Vec3::splat(layout::GRID_RADIUS)),
            material,
        )?;
    }
    let feature = |p: Vec3| Transform::new(p, Quat::from_rotation_z(-0.5), Vec3::splat(layout::FEATURE_RADIUS));
    spawn_mesh(&mut engine, "brick sphere", &sphere, feature(layout::TEXTURED_SPHERE), brick_sphere)?;
    spawn_mesh(&mut engine, "bumpy sphere", &sphere, feature(layout::NORMAL_MAPPED_SPHERE), normal_mapped)?;
    // The plane faces +Z; turned a quarter about X it stands facing -Y, upright.
    let panel_t = Transform::new(
        layout::PANEL_CENTRE,
        Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
        Vec3::new(layout::PANEL_SIZE, layout::PANEL_SIZE, 1.0),
    );
    spawn_mesh(&mut engine, "leaf panel", &plane, panel_t, masked)?;
    let top = layout::PANEL_CENTRE.z + layout::PANEL_SIZE / 2.0;
    for side in [-1.0, 1.0] {
        let at = layout::PANEL_CENTRE + Vec3::new(side * (layout::PANEL_SIZE / 2.0 + 0.05), 0.0, 0.0);
        spawn_mesh(
            &mut engine,
            "post",
            &cube,
            Transform::from_translation_scale(Vec3::new(at.x, at.y, top / 2.0), Vec3::new(0.1, 0.1, top)),
            wall,
        )?;
    }
    for (i, material) in glass.iter().enumerate() {
        let id = spawn_mesh(
            &mut engine,
            "glass sphere",
            &sphere,
            Transform::from_translation_scale(layout::translucent_sphere(i as u32), Vec3::splat(layout::TRANSLUCENT_RADIUS)),
            *material,
        )?;
        engine.world.set_cast_shadow(id, false)?;
    }
    let items: Vec<(Box<dyn Component>, Transform)> = (0..layout::TILES)
        .map(|i| {
            (
                Box::new(StaticMeshComponent::new(cube.clone())) as Box<dyn Component>,
                Transform::from_translation_scale(layout::tile(i), Vec3::new(layout::TILE_SIZE, layout::TILE_SIZE, 0.04)),
            )
        })
        .collect();
    let tile_ids = engine.world.spawn_actors(items)?;
    for (id, material) in tile_ids.iter().zip(&tiles) {
        engine.world.set_material(*id, 0, *material)?;
        engine.world.set_cast_shadow(*id, false)?;
    }

    let mut t = 0.0f32;
    runner::run("materials", &o.common, &mut engine, |engine, _frame, dt| {
        // Every tile's tint, every frame: a parameter-block write each, no rebuild.
        t += dt;
        let rt = engine.render_thread();
        for (i, material) in tiles.iter().enumerate() {
            let [r, g, b] = layout::tile_tint(i as u32, t);
            rt.set_material_parameter(*material, "tint", ParameterValue::Vector(Vec4::new(r, g, b, 1.0)))?;
        }
        Ok(runner::SampleFigures::default())
    })
}
