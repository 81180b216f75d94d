//! The run's figures: timings summed over the frames after warm-up
//! ([`MeanTimings`]), the stats file (`docs/samples.md`) made from the last
//! frame's [`FrameStats`] — the proxies' counters included — and the
//! one-line summary printed at the end.

use super::threads::Snapshot;
use super::SampleFigures;
use crate::{
    write_png, ClusterStats, CommonOptions, ImageStats, InstanceStats, LightStats, MaterialStats, MeshDrawCommandsBuilt, PassStats,
    Percentiles, PipelineStats, SampleStats, ShadowStats, StageMs, TextureStats, ThreadCpu, Timings, ValidationStats,
};
use anyhow::{bail, Context};
use engine_core::Engine;
use renderer::passes::PassViews;
use renderer::FrameStats;
use std::collections::BTreeMap;

/// Sums each frame's timings after warm-up, for [`SampleStats::mean_timings_ms`],
/// and keeps the frame and render-CPU times for their percentiles
/// ([`SampleStats::frame_time_ms`], [`SampleStats::render_cpu_time_ms`]).
#[derive(Default)]
pub(super) struct MeanTimings {
    warmup: u64,
    frame_times: Vec<f64>,
    render_cpu_times: Vec<f64>,
    game_frames: u64,
    game: f64,
    end_of_frame: f64,
    frame: f64,
    render_frames: u64,
    render_cpu: f64,
    gpu: f64,
    /// GPU milliseconds per pass, summed (a pass that did not draw in a
    /// frame counts 0 there).
    gpu_passes: BTreeMap<String, f64>,
    /// CPU milliseconds per frame stage, summed.
    stages: [f64; renderer::Stage::COUNT],
    /// The last render-thread frame counted (stats lag the game thread).
    last_render_frame: Option<u64>,
    /// The threads' scheduler counters as the first frame after warm-up began.
    threads_start: Option<Snapshot>,
}

impl MeanTimings {
    pub(super) fn new(frames: u64) -> Self {
        let warmup = if frames >= 2 { (frames / 5).max(1) } else { 0 };
        Self { warmup, threads_start: if warmup == 0 { Snapshot::take() } else { None }, ..Default::default() }
    }

    /// Counts game frame `index` (0-based) and the render thread's latest frame.
    pub(super) fn add(&mut self, index: u64, game: engine_core::GameTimings, frame_ms: f64, render: Option<&FrameStats>) {
        if index + 1 == self.warmup {
            self.threads_start = Snapshot::take();
        }
        if index >= self.warmup {
            self.game_frames += 1;
            self.game += game.game;
            self.end_of_frame += game.end_of_frame;
            self.frame += frame_ms;
            self.frame_times.push(frame_ms);
        }
        if let Some(s) = render {
            // Render frames are numbered from 0, as game frames are.
            if s.frame >= self.warmup && self.last_render_frame.is_none_or(|f| s.frame > f) {
                self.last_render_frame = Some(s.frame);
                self.render_frames += 1;
                self.render_cpu += s.timings.render_cpu();
                self.render_cpu_times.push(s.timings.render_cpu());
                self.gpu += s.timings.gpu;
                for (sum, ms) in self.stages.iter_mut().zip(s.timings.stages) {
                    *sum += ms;
                }
                for (pass, ms) in gpu_passes(s) {
                    *self.gpu_passes.entry(pass).or_default() += ms;
                }
            }
        }
    }

    pub(super) fn mean(&self) -> Timings {
        let per = |sum: f64, n: u64| if n == 0 { 0.0 } else { sum / n as f64 };
        Timings {
            game: per(self.game, self.game_frames),
            end_of_frame: per(self.end_of_frame, self.game_frames),
            render_cpu: per(self.render_cpu, self.render_frames),
            stages: StageMs::from_stages(&self.stages.map(|ms| per(ms, self.render_frames))),
            gpu: per(self.gpu, self.render_frames),
            gpu_passes: self.gpu_passes.iter().map(|(p, &ms)| (p.clone(), per(ms, self.render_frames))).collect(),
            frame: per(self.frame, self.game_frames),
        }
    }

    /// CPU time per frame of each group of threads since warm-up ended
    /// (`None` without scheduler figures).
    pub(super) fn threads(&self) -> Option<ThreadCpu> {
        Some(Snapshot::take()?.since(self.threads_start.as_ref()?, self.game_frames))
    }

    /// Percentiles of (frame time, render-thread CPU time) after warm-up.
    pub(super) fn percentiles(&self) -> (Percentiles, Percentiles) {
        (Percentiles::of(&self.frame_times), Percentiles::of(&self.render_cpu_times))
    }
}

/// GPU milliseconds of each pass that drew in `stats`' frame, by the
/// pass's name in the stats file (none without GPU timestamps).
fn gpu_passes(stats: &FrameStats) -> BTreeMap<String, f64> {
    stats
        .mesh_passes
        .iter()
        .copied()
        .filter(|&p| stats.timings.gpu_timestamps && stats.pass(p).draws > 0)
        .map(|p| (p.name().to_string(), stats.timings.gpu_pass(p)))
        .collect()
}

/// "GPU 3.1 ms (depth 0.4, base 2.2)": the frame's GPU time and its passes'
/// (for the summary line and the window title).
pub(super) fn gpu_summary(stats: &FrameStats) -> String {
    let passes: Vec<String> = gpu_passes(stats).iter().map(|(p, ms)| format!("{p} {ms:.1}")).collect();
    let source = if stats.timings.gpu_timestamps { "" } else { " (submit to fence: no GPU timestamps)" };
    if passes.is_empty() {
        format!("GPU {:.1}{source}", stats.timings.gpu)
    } else {
        format!("GPU {:.1}: {}", stats.timings.gpu, passes.join(", "))
    }
}

/// What the frame loop leaves for the summary.
pub(super) struct Done {
    pub frames: u64,
    pub figures: SampleFigures,
    pub frame_ms: f64,
    pub game: engine_core::GameTimings,
    pub mean: Timings,
    /// Percentiles of frame time and render-thread CPU time after warm-up.
    pub percentiles: (Percentiles, Percentiles),
    /// CPU time per frame of each group of threads after warm-up.
    pub threads: Option<ThreadCpu>,
    /// Whether the last frame was read back (a PNG can be written).
    pub read_back: bool,
}

/// Writes the trace, the PNG and the stats file of the run, prints the
/// summary line; an error when the validation layer reported one.
pub(super) fn finish(sample: &str, common: &CommonOptions, engine: &mut Engine, done: Done) -> anyhow::Result<()> {
    let stats: FrameStats = engine.stats()?.context("no frame was rendered")?;
    let traced = super::write_trace(common)?;
    let out = common.out_path(sample);
    let written = if done.read_back {
        let image = engine.read_back()?.context("no image was read back")?;
        write_png(&out, &image).with_context(|| format!("writing {}", out.display()))?;
        out.display().to_string()
    } else {
        "(no image: window mode writes one with --out and --frames)".to_string()
    };
    let (device, (v, emulated_discrete_gpu, staging_upload_bytes, host_write_waits, scene_owners)) = {
        let rt = engine.render_thread();
        let name = rt.device_name().to_string();
        let d = rt.with_context(|ctx| {
            let d = &ctx.device;
            (d.validation(), d.emulates_discrete_gpu(), d.staging_upload_bytes(), d.counts().host_write_waits, ctx.scene.memory().owners())
        })?;
        (name, d)
    };
    let validation = ValidationStats { enabled: v.enabled(), errors: v.errors(), warnings: v.warnings() };
    // The engine's size: `--width`×`--height`, or a window's last size.
    let (width, height) = engine.size();
    let s = SampleStats {
        device,
        validation,
        emulated_discrete_gpu,
        staging_upload_bytes,
        host_write_waits,
        ..SampleStats::new(sample, width, height)
    };
    let mut s = sample_stats(s, &stats, done);
    s.memory = crate::memory::stats();
    if let Some(m) = s.memory.as_mut() {
        m.scene_owners = scene_owners.iter().map(|(name, bytes)| (name.to_string(), *bytes)).collect();
    }
    if let Some(path) = &common.stats {
        s.write(path).with_context(|| format!("writing {}", path.display()))?;
    }
    println!("{}; image written to {written}{traced}", summary_line(&s, &stats));
    if s.validation.errors > 0 {
        bail!("the validation layer reported {} error(s): {:#?}", s.validation.errors, v.messages());
    }
    Ok(())
}

/// The stats file (`docs/samples.md`): `s` (sample, size, device and
/// validation set) completed from the last frame's `stats`, its counters
/// included, and the run's figures.
fn sample_stats(mut s: SampleStats, stats: &FrameStats, done: Done) -> SampleStats {
    let Done { frames, figures, frame_ms, game, mean, percentiles, threads, read_back: _ } = done;
    s.frames = frames;
    s.primitives = stats.primitives;
    s.visible_primitives = stats.visible_primitives;
    s.occluded_primitives = stats.occluded_primitives;
    s.occluded_instances = stats.occluded_instances;
    s.primitives_tested = stats.primitives_tested;
    // Every pass of the renderer's pass table by its name; a wireframe-view
    // pass only when it drew.
    for &pass in &stats.mesh_passes {
        let p = stats.pass(pass);
        if pass.desc().views != PassViews::Wireframe || p.draws > 0 {
            s.passes.insert(
                pass.name().into(),
                PassStats {
                    mesh_draw_commands: p.mesh_draw_commands,
                    draws: p.draws,
                    instances: p.instances,
                    indirect_draws: p.indirect_draws,
                },
            );
        }
    }
    s.mesh_draw_commands_built = MeshDrawCommandsBuilt { cached: stats.cached_commands_built, dynamic: stats.dynamic_commands_built };
    s.proxies_created = stats.proxies_created;
    s.element_failures = stats.element_failures;
    s.triangles = stats.triangles;
    s.pipelines = Some(PipelineStats { created: stats.pipelines_created, live: stats.pipelines_live });
    s.materials = Some(MaterialStats { live: stats.materials_live, bytes_uploaded: stats.material_bytes_uploaded });
    s.textures = Some(TextureStats { live: stats.textures_live, bytes: stats.texture_bytes_uploaded });
    // What the feature crates' proxies counted in that frame.
    s.particles = stats.counter(particles::LIVE_PARTICLES_COUNTER);
    s.instances = InstanceStats { total: figures.instances_total, visible: stats.counter(instancing::VISIBLE_INSTANCES_COUNTER) };
    s.import = figures.import;
    s.skinned = figures.skinned;
    let (l, c, sh) = (stats.lights, stats.clusters, stats.shadow);
    s.lights = Some(LightStats { directional: l.directional, point: l.point, spot: l.spot, shadowed: l.shadowed, visible: l.visible });
    s.clusters = Some(ClusterStats { count: c.count, max_lights: c.max_lights, mean_lights: c.mean_lights });
    s.shadow = Some(ShadowStats {
        cascades: sh.cascades,
        atlas_tiles: sh.atlas_tiles,
        tiles_rendered: sh.tiles_rendered,
        tiles_cached: sh.tiles_cached,
        draws: sh.draws,
        unshadowed_lights: sh.unshadowed_lights,
    });
    s.image = Some(ImageStats {
        aa: stats.image.aa.into(),
        environment: stats.image.environment.into(),
        bloom: stats.image.bloom,
        exposure_ev100: f64::from(stats.image.exposure_ev100),
        auto_exposure: stats.image.auto_exposure,
        tonemapper: stats.image.tonemapper.into(),
    });
    s.timings_ms = Timings {
        game: game.game,
        end_of_frame: game.end_of_frame,
        render_cpu: stats.timings.render_cpu(),
        stages: StageMs::from_stages(&stats.timings.stages),
        gpu: stats.timings.gpu,
        gpu_passes: gpu_passes(stats),
        frame: frame_ms,
    };
    s.mean_timings_ms = mean;
    (s.frame_time_ms, s.render_cpu_time_ms) = percentiles;
    s.thread_cpu_ms = threads;
    s
}

/// The run in one line: frames, size, device, primitives, draws per pass,
/// commands built, element failures (when there were any), the last
/// frame's times and validation.
fn summary_line(s: &SampleStats, stats: &FrameStats) -> String {
    let draws = |n: &str| s.passes.get(n).map(|p| p.draws).unwrap_or(0);
    let failures = match s.element_failures {
        0 => String::new(),
        n => format!("; {n} mesh element failure(s) (not drawn, logged)"),
    };
    format!(
        "{}: {} frame(s) at {}x{} on {}; {} primitives, {} visible, {} occluded; draws: depth {}, shadow {}, base {}, translucency {}; commands built: {} cached, {} dynamic{}; last frame {:.1} ms (game {:.2}, end of frame {:.2}, render CPU {:.1}, {}); validation {} ({} errors, {} warnings)",
        s.sample,
        s.frames,
        s.width,
        s.height,
        s.device,
        s.primitives,
        s.visible_primitives,
        s.occluded_primitives,
        draws("depth"),
        draws("shadow"),
        draws("base"),
        draws("translucency"),
        s.mesh_draw_commands_built.cached,
        s.mesh_draw_commands_built.dynamic,
        failures,
        s.timings_ms.frame,
        s.timings_ms.game,
        s.timings_ms.end_of_frame,
        s.timings_ms.render_cpu,
        gpu_summary(stats),
        if s.validation.enabled { "on" } else { "off" },
        s.validation.errors,
        s.validation.warnings,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_line_names_element_failures_only_when_there_are_some() {
        let stats = FrameStats::default();
        let mut s = SampleStats::new("particles", 64, 64);
        assert!(!summary_line(&s, &stats).contains("failure"), "{}", summary_line(&s, &stats));
        s.element_failures = 3;
        let line = summary_line(&s, &stats);
        assert!(line.contains("commands built: 0 cached, 0 dynamic; 3 mesh element failure(s) (not drawn, logged); last frame"), "{line}");
    }
}
