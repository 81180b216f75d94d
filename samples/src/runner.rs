//! The frame loop every engine-based sample shares: builds the [`Engine`]
//! from the common options (validation on unless `PROXIMA_VALIDATION=0`,
//! `--serial` = inline render commands and serial pass setup and recording,
//! `--cvar`, `--wireframe`), runs `--frames` frames with a progress line,
//! writes the last frame as PNG and the stats file, prints the summary.

use crate::{write_png, CommonOptions, InstanceStats, MeshDrawCommandsBuilt, PassStats, Progress, SampleStats, Timings, ValidationStats};
use anyhow::{bail, Context};
use engine_core::{Engine, EngineDesc};
use renderer::{FrameStats, MeshPass, RenderThreadMode};
use rhi_vulkan::{DeviceDesc, Validation};
use std::time::Instant;

/// Extra figures a sample reports (instances, particles).
#[derive(Clone, Copy, Debug, Default)]
pub struct SampleFigures {
    pub particles: u64,
    pub instances: InstanceStats,
}

/// Builds the engine for `common`.
pub fn engine(sample: &str, common: &CommonOptions) -> anyhow::Result<Engine> {
    let validation = match std::env::var("PROXIMA_VALIDATION").as_deref() {
        Ok("0") => Validation::Disabled,
        _ => Validation::Enabled,
    };
    let mode = if common.serial { RenderThreadMode::Inline } else { RenderThreadMode::Threaded };
    let mut engine = Engine::new(&EngineDesc {
        width: common.width,
        height: common.height,
        mode,
        device: DeviceDesc { app_name: sample.into(), validation, ..Default::default() },
    })?;
    let rt = engine.render_thread();
    if common.serial {
        rt.set_cvar("r.MeshDrawCommands.ParallelPassSetup", "0")?;
        rt.set_cvar("r.RHICmdList.ParallelRecord", "0")?;
    }
    if common.wireframe {
        rt.set_cvar("r.Wireframe", "1")?;
    }
    for (name, value) in &common.cvar {
        rt.set_cvar(name, value).with_context(|| format!("--cvar {name}={value}"))?;
    }
    if common.wants_window() && common.window {
        eprintln!("{sample}: this build renders offscreen only (no window support yet); writing a PNG instead");
    }
    Ok(engine)
}

/// Runs the frames; `update(engine, frame, dt)` runs before each tick and
/// returns the sample's figures.
pub fn run(sample: &str, common: &CommonOptions, engine: &mut Engine, mut update: impl FnMut(&mut Engine, u64, f32) -> anyhow::Result<SampleFigures>) -> anyhow::Result<()> {
    let frames = common.frame_count();
    let dt = 1.0 / 60.0;
    let mut progress = Progress::new(frames);
    let mut figures = SampleFigures::default();
    let mut frame_ms = 0.0;
    let mut game = engine.timings;
    for i in 0..frames {
        let start = Instant::now();
        figures = update(engine, i, dt)?;
        engine.tick(dt, i + 1 == frames)?;
        game = engine.timings;
        if i + 1 == frames {
            engine.flush()?;
        }
        frame_ms = start.elapsed().as_secs_f64() * 1e3;
        progress.frame_done(i + 1);
    }
    progress.finish();
    let stats: FrameStats = engine.stats()?.context("no frame was rendered")?;
    let image = engine.read_back()?.context("no image was read back")?;
    let out = common.out_path(sample);
    write_png(&out, &image).with_context(|| format!("writing {}", out.display()))?;
    let (device, v) = {
        let rt = engine.render_thread();
        let name = rt.device_name().to_string();
        (name, rt.with_context(|ctx| ctx.device.validation())?)
    };
    let mut s = SampleStats::new(sample, common.width, common.height);
    s.frames = frames;
    s.device = device;
    s.validation = ValidationStats { enabled: v.enabled(), errors: v.errors(), warnings: v.warnings() };
    s.primitives = stats.primitives;
    s.visible_primitives = stats.visible_primitives;
    for (name, pass) in [("depth", MeshPass::DepthPrepass), ("shadow", MeshPass::ShadowDepth), ("base", MeshPass::Base), ("translucency", MeshPass::Translucency), ("wireframe", MeshPass::Wireframe)] {
        let p = stats.pass(pass);
        if pass != MeshPass::Wireframe || p.draws > 0 {
            s.passes.insert(name.into(), PassStats { mesh_draw_commands: p.mesh_draw_commands, draws: p.draws, instances: p.instances });
        }
    }
    s.mesh_draw_commands_built = MeshDrawCommandsBuilt { cached: stats.cached_commands_built, dynamic: stats.dynamic_commands_built };
    s.proxies_created = stats.proxies_created;
    s.triangles = stats.triangles;
    s.particles = figures.particles;
    s.instances = figures.instances;
    s.timings_ms = Timings { game: game.game, end_of_frame: game.end_of_frame, render_cpu: stats.timings.render_cpu(), gpu: stats.timings.gpu, frame: frame_ms };
    if let Some(path) = &common.stats {
        s.write(path).with_context(|| format!("writing {}", path.display()))?;
    }
    let draws = |n: &str| s.passes.get(n).map(|p| p.draws).unwrap_or(0);
    println!(
        "{sample}: {frames} frame(s) at {}x{} on {}; {} primitives, {} visible; draws: depth {}, shadow {}, base {}, translucency {}; commands built: {} cached, {} dynamic; last frame {:.1} ms (game {:.2}, end of frame {:.2}, render CPU {:.1}, GPU {:.1}); validation {} ({} errors, {} warnings); image written to {}",
        common.width,
        common.height,
        s.device,
        s.primitives,
        s.visible_primitives,
        draws("depth"),
        draws("shadow"),
        draws("base"),
        draws("translucency"),
        s.mesh_draw_commands_built.cached,
        s.mesh_draw_commands_built.dynamic,
        s.timings_ms.frame,
        s.timings_ms.game,
        s.timings_ms.end_of_frame,
        s.timings_ms.render_cpu,
        s.timings_ms.gpu,
        if s.validation.enabled { "on" } else { "off" },
        s.validation.errors,
        s.validation.warnings,
        out.display()
    );
    if s.validation.errors > 0 {
        bail!("the validation layer reported {} error(s): {:#?}", s.validation.errors, v.messages());
    }
    Ok(())
}
