//! Simulates `assets/fountain.json` (velocity-aligned translucent water
//! drops and additive mist) on a lit ground plane, the way a game does: a
//! `ParticleSystemComponent` in an engine-core `World`, ticked every frame,
//! its snapshot sent by the world's end-of-frame update, then rendered.
//! Writes `target/examples/particle_fountain.png`.
//!
//! `cargo run -p proxima-particles --example render_fountain`

use std::sync::Arc;

use engine_core::{look_rotation, DirectionalLightComponent, StaticMesh, StaticMeshComponent, Transform, World};
use glam::{Vec3, Vec4};
use particles::{sprite_material, BlendMode, ParticleMaterials, ParticleSystem, ParticleSystemComponent};
use renderer::{shapes, FrameRequest, Material, MeshPass, RenderThread, RenderThreadMode, SceneView, ViewFamily};
use rhi_vulkan::{DeviceDesc, Rect};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The crates' `log` lines (device chosen, validation messages) on stderr; `RUST_LOG` filters them.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let (w, h) = (640, 360);
    let mut rt = RenderThread::new(&DeviceDesc::default(), RenderThreadMode::Threaded)?;
    let ground = rt.create_material(Material::colored(Vec4::new(0.35, 0.4, 0.3, 1.0)))?;
    let json = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/fountain.json"))?;
    let system = Arc::new(ParticleSystem::from_json_str(&json)?);
    // Round, soft sprites tinted per material (the asset names them).
    let water = sprite_material(BlendMode::Translucent, Vec4::new(0.8, 0.9, 1.0, 0.9), 0.6);
    let mist = sprite_material(BlendMode::Additive, Vec4::new(0.25, 0.3, 0.35, 1.0), 1.0);
    let materials = ParticleMaterials::new().with("M_WaterDrop", rt.create_material(water)?).with("M_Mist", rt.create_material(mist)?);

    let mut world = World::new(Some(rt));
    let sun = DirectionalLightComponent { color: Vec3::new(1.0, 0.95, 0.85), intensity: 1.5, cast_shadows: true, ..Default::default() };
    let sun_at = Transform { rotation: look_rotation(Vec3::ZERO, Vec3::new(-0.4, 0.3, -1.0)), ..Transform::IDENTITY };
    world.spawn_actor("sun", Box::new(sun), sun_at)?;
    let plane = StaticMesh::new("ground", vec![shapes::plane(1200.0)], vec!["ground".into()])?;
    let (_, plane_id) = world.spawn_actor("ground", Box::new(StaticMeshComponent::new(plane)), Transform::IDENTITY)?;
    world.set_material(plane_id, 0, ground)?;
    let (_, fountain) =
        world.spawn_actor("fountain", Box::new(ParticleSystemComponent::new(system, 7, materials)?), Transform::IDENTITY)?;

    let view = SceneView::perspective(
        Vec3::new(0.0, -900.0, 260.0),
        Vec3::new(0.0, 0.0, 170.0),
        Vec3::Z,
        0.9,
        1.0,
        5000.0,
        Rect::from_size(w, h),
    )?;
    let family = ViewFamily::new(w, h, vec![view]);
    let dt = 1.0 / 60.0;
    let frames = 150;
    for frame in 1..=frames {
        world.tick(dt);
        world.send_all_end_of_frame_updates()?;
        // Render every tenth frame to keep it quick.
        if frame % 10 == 0 {
            let last = frame == frames;
            let rt = world.render_thread().ok_or("no render thread")?;
            rt.render_frame(FrameRequest { family: family.clone(), read_back: last, execute: true })?;
        }
    }
    let live = world.component::<ParticleSystemComponent>(fountain)?.instance().live_particles();
    let rt = world.render_thread().ok_or("no render thread")?;
    let image = rt.read_back()?.ok_or("no image")?;
    let stats = rt.last_stats()?.ok_or("no stats")?;
    std::fs::create_dir_all("target/examples")?;
    let file = std::fs::File::create("target/examples/particle_fountain.png")?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.write_header()?.write_image_data(&image.rgba8)?;
    let t = stats.pass(MeshPass::Translucency);
    println!(
        "render_fountain: {} live particles; translucency {} draws, {} instances; {:.1} ms CPU, {:.1} ms GPU; wrote target/examples/particle_fountain.png",
        live,
        t.draws,
        t.instances,
        stats.timings.render_cpu(),
        stats.timings.gpu
    );
    Ok(())
}
