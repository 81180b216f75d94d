//! The headless frame loop: `--frames` frames (3 by default) at
//! `--width`×`--height`, a progress line, the last one read back.

use super::summary::{Done, MeanTimings};
use super::SampleFigures;
use crate::{CommonOptions, Progress};
use engine_core::Engine;
use std::time::Instant;

/// Runs the frames; `update(engine, frame, dt)` runs before each tick.
pub(super) fn run(
    common: &CommonOptions,
    engine: &mut Engine,
    mut update: impl FnMut(&mut Engine, u64, f32) -> anyhow::Result<SampleFigures>,
) -> anyhow::Result<Done> {
    let frames = common.frame_count();
    let dt = common.headless_dt();
    let mut progress = Progress::new(frames);
    let mut figures = SampleFigures::default();
    let mut frame_ms = 0.0;
    let mut game = engine.timings;
    let mut mean = MeanTimings::new(frames);
    for i in 0..frames {
        let start = Instant::now();
        let span = renderer::trace::Span::new("game", "game_frame");
        figures = update(engine, i, dt)?;
        engine.tick(dt, i + 1 == frames)?;
        game = engine.timings;
        if i + 1 == frames {
            engine.flush()?;
        }
        drop(span);
        profiling::finish_frame!();
        frame_ms = start.elapsed().as_secs_f64() * 1e3;
        mean.add(i, game, frame_ms, engine.stats()?.as_ref());
        progress.frame_done(i + 1);
    }
    progress.finish();
    Ok(Done {
        frames,
        figures,
        frame_ms,
        game,
        mean: mean.mean(),
        percentiles: mean.percentiles(),
        threads: mean.threads(),
        read_back: true,
    })
}
