//! A few hundred cubes of four materials on a ground plane, lit by a
//! shadow-casting sun and two point lights, through the renderer alone.
//! Writes `target/examples/lit_cubes.png`.
//!
//! `cargo run -p proxima-renderer --example lit_cubes`

use glam::{Mat4, Quat, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::{DeviceDesc, Rect};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The crates' `log` lines (device chosen, validation messages) on stderr; `RUST_LOG` filters them.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let (w, h) = (960, 540);
    let mut rt = RenderThread::new(&DeviceDesc::default(), RenderThreadMode::Threaded)?;
    rt.add_light(Light::Directional(DirectionalLight {
        direction: Vec3::new(-0.5, -0.3, -1.0),
        color: Vec3::new(1.0, 0.95, 0.85),
        intensity: 1.4,
        cast_shadows: true,
        ..Default::default()
    }))?;
    rt.add_light(Light::Point(PointLight {
        position: Vec3::new(-6.0, -6.0, 2.0),
        color: Vec3::new(1.0, 0.3, 0.1),
        intensity: 16.0,
        radius: 8.0,
        ..Default::default()
    }))?;
    rt.add_light(Light::Point(PointLight {
        position: Vec3::new(6.0, 4.0, 2.0),
        color: Vec3::new(0.2, 0.5, 1.0),
        intensity: 16.0,
        radius: 8.0,
        ..Default::default()
    }))?;
    let ground = rt.create_material(Material::colored(Vec4::new(0.55, 0.55, 0.5, 1.0)))?;
    let colors =
        [Vec4::new(0.9, 0.2, 0.15, 1.0), Vec4::new(0.2, 0.7, 0.3, 1.0), Vec4::new(0.2, 0.35, 0.9, 1.0), Vec4::new(0.95, 0.8, 0.2, 1.0)];
    let mats: Vec<MaterialId> = colors.iter().map(|c| rt.create_material(Material::colored(*c))).collect::<Result<_, _>>()?;
    let plane = StaticMeshRenderData::new(vec![shapes::plane(40.0)])?;
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(plane, vec![ground])), Mat4::IDENTITY)?;
    let cube = StaticMeshRenderData::new(vec![shapes::cube(1.0)])?;
    let mut prims: Vec<(Box<dyn PrimitiveSceneProxy>, Mat4)> = Vec::new();
    for i in 0..400 {
        let (x, y) = ((i % 20) as f32 - 9.5, (i / 20) as f32 - 9.5);
        let height = 0.3 + ((x * 0.7).sin() * (y * 0.5).cos()).abs() * 1.5;
        let m = Mat4::from_scale_rotation_translation(
            Vec3::new(0.7, 0.7, height),
            Quat::from_rotation_z(x * 0.1),
            Vec3::new(x * 1.4, y * 1.4, height / 2.0),
        );
        prims.push((Box::new(StaticMeshSceneProxy::new(cube.clone(), vec![mats[i % 4]])), m));
    }
    rt.add_primitives(prims)?;
    let view =
        SceneView::perspective(Vec3::new(-18.0, -22.0, 14.0), Vec3::new(0.0, 0.0, 0.0), Vec3::Z, 0.9, 0.1, 200.0, Rect::from_size(w, h))?;
    rt.render_frame(FrameRequest { family: ViewFamily::new(w, h, vec![view]), read_back: true, execute: true })?;
    let image = rt.read_back()?.ok_or("no image")?;
    let stats = rt.last_stats()?.ok_or("no stats")?;
    std::fs::create_dir_all("target/examples")?;
    let file = std::fs::File::create("target/examples/lit_cubes.png")?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.write_header()?.write_image_data(&image.rgba8)?;
    println!(
        "lit_cubes: {} primitives; base pass {} commands -> {} draws; shadow {} draws; {:.1} ms CPU, {:.1} ms GPU; wrote target/examples/lit_cubes.png",
        stats.primitives,
        stats.pass(MeshPass::Base).mesh_draw_commands,
        stats.pass(MeshPass::Base).draws,
        stats.pass(MeshPass::ShadowDepth).draws,
        stats.timings.render_cpu(),
        stats.timings.gpu
    );
    Ok(())
}
