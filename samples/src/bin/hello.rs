//! `cargo xtask run hello`: an instanced grid of colored quads drawn offscreen
//! through rhi-vulkan alone, recorded into secondaries on two threads (or
//! inline with `--serial`), written to a PNG with the stats of `SAMPLES.md`.

use anyhow::{bail, Context};
use clap::Parser;
use rhi_vulkan::*;
use samples::{write_png, CommonOptions, PassStats, Progress, SampleStats};
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(name = "hello", about = "An instanced grid of colored quads, drawn offscreen")]
struct Options {
    /// Quads per row.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    cols: u32,
    /// Quads per column.
    #[arg(long, default_value_t = 18, value_parser = clap::value_parser!(u32).range(1..=4096))]
    rows: u32,
    #[command(flatten)]
    common: CommonOptions,
}

fn main() {
    let options = Options::parse();
    if let Err(e) = run(&options) {
        eprintln!("hello: {e:#}");
        std::process::exit(1);
    }
}

fn run(options: &Options) -> anyhow::Result<()> {
    let common = &options.common;
    if let Some((name, _)) = common.cvar.first() {
        bail!("hello has no console variables (got {name}); they arrive with the renderer");
    }
    if common.wants_window() && common.window {
        eprintln!("hello: this build renders offscreen only; writing a PNG instead of opening a window");
    }
    let validation = match std::env::var("PROXIMA_VALIDATION").as_deref() {
        Ok("0") => Validation::Disabled,
        _ => Validation::Enabled,
    };
    let device = Device::new(&DeviceDesc { app_name: "hello".into(), validation, ..Default::default() })?;
    let (width, height) = (common.width, common.height);
    let color = device.create_texture(&TextureDesc::render_target("hello color", width, height, Format::Rgba8Unorm))?;
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, options.cols, options.rows)?;
    let threads = if common.serial { 1 } else { 2 };
    let frames = common.frame_count();
    let viewport = Rect::from_size(width, height);
    let pass = RenderingDesc {
        color: vec![ColorAttachment { texture: color, load: LoadOp::Clear([0.02, 0.02, 0.03, 1.0]), store: true }],
        depth: None,
        area: viewport,
    };
    let mut progress = Progress::new(frames);
    let mut state = TextureState::Undefined;
    let mut draws = 0;
    let (mut render_cpu, mut gpu, mut frame_ms) = (0.0, 0.0, 0.0);
    for i in 0..frames {
        let frame_start = Instant::now();
        let mut frame = device.begin_frame()?;
        frame.cmd().texture_barrier(color, state, TextureState::ColorAttachment)?;
        state = TextureState::ColorAttachment;
        if common.serial {
            let cmd = frame.cmd();
            cmd.begin_rendering(&pass, RenderingContents::Inline)?;
            grid.record(cmd, viewport, 0, grid.instance_count, 1)?;
            cmd.end_rendering();
            draws = cmd.draw_count();
        } else {
            let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None };
            let per = grid.instance_count.div_ceil(threads);
            let secondaries = rayon::scope(|_| -> anyhow::Result<Vec<SecondaryCommandBuffer>> {
                use rayon::prelude::*;
                (0..threads)
                    .into_par_iter()
                    .filter(|t| t * per < grid.instance_count)
                    .map(|t| {
                        let first = t * per;
                        let count = per.min(grid.instance_count - first);
                        Ok(frame.record_secondary(&layout, |cmd| grid.record(cmd, viewport, first, count, 1))?.0)
                    })
                    .collect()
            })?;
            let cmd = frame.cmd();
            cmd.begin_rendering(&pass, RenderingContents::Secondary)?;
            cmd.execute_secondaries(&secondaries)?;
            cmd.end_rendering();
            draws = cmd.draw_count();
        }
        let recorded = Instant::now();
        let submitted = frame.submit()?;
        device.wait_for(submitted.value)?;
        let done = Instant::now();
        render_cpu = (recorded - frame_start).as_secs_f64() * 1e3;
        gpu = (done - recorded).as_secs_f64() * 1e3;
        frame_ms = (done - frame_start).as_secs_f64() * 1e3;
        progress.frame_done(i + 1);
    }
    progress.finish();
    let image = device.read_texture(color, state)?;
    let out = common.out_path("hello");
    write_png(&out, &image).with_context(|| format!("writing {}", out.display()))?;

    let v = device.validation();
    let mut stats = SampleStats::new("hello", width, height);
    stats.frames = frames;
    stats.device = device.name().to_string();
    stats.validation = samples::ValidationStats { enabled: v.enabled(), errors: v.errors(), warnings: v.warnings() };
    stats.passes.insert(
        "base".into(),
        PassStats { mesh_draw_commands: 0, draws: u64::from(draws), instances: u64::from(grid.instance_count) },
    );
    stats.triangles = u64::from(grid.instance_count) * 2;
    stats.timings_ms.render_cpu = render_cpu;
    stats.timings_ms.gpu = gpu;
    stats.timings_ms.frame = frame_ms;
    if let Some(path) = &common.stats {
        stats.write(path).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "hello: {frames} frame(s) at {width}x{height} on {}; base pass {draws} draw(s) of {} instanced quads recorded on {threads} thread(s); last frame {frame_ms:.2} ms (CPU {render_cpu:.2} ms, GPU {gpu:.2} ms); validation {} with {} error(s), {} warning(s); image written to {}",
        stats.device,
        grid.instance_count,
        if v.enabled() { "on" } else { "off" },
        v.errors(),
        v.warnings(),
        out.display()
    );
    grid.destroy(&device);
    device.destroy_texture(color);
    let report = device.shutdown();
    if report.validation_errors > 0 {
        bail!("the validation layer reported {} error(s)", report.validation_errors);
    }
    Ok(())
}
