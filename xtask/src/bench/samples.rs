//! Figures measured end to end by running the `many-cubes` sample (release,
//! validation off) and reading its stats file (`SAMPLES.md`), written to
//! `target/bench/samples.json` in the benches' row format:
//!
//! - lavapipe end to end: the mean frame time at 10,000 cubes with
//!   merging (dynamic instancing) on vs. `r.MeshDrawCommands.DynamicInstancing=0`;
//! - peer scale: `--layout sphere` (Bevy's many_cubes scene) at 160,000 and
//!   1,600,000 cubes, 1920×1080: the CPU cost of a frame — game + end of
//!   frame + render-thread CPU, means over the frames after warm-up,
//!   excluding GPU execution — against a third of Bevy 0.19's (17 ms and
//!   113 ms on this kind of machine).

use super::summary::Row;
use std::path::Path;
use std::process::Command;

#[derive(serde::Deserialize)]
struct Stats {
    mean_timings_ms: Timings,
    visible_primitives: u64,
    passes: std::collections::BTreeMap<String, Pass>,
}

#[derive(serde::Deserialize)]
struct Timings {
    game: f64,
    end_of_frame: f64,
    render_cpu: f64,
    frame: f64,
}

#[derive(serde::Deserialize)]
struct Pass {
    draws: u64,
}

impl Timings {
    fn cpu(&self) -> f64 {
        self.game + self.end_of_frame + self.render_cpu
    }
}

/// Runs many-cubes with `args` and reads its stats.
fn many_cubes(dir: &Path, tag: &str, args: &[&str]) -> Result<Stats, String> {
    let stats = dir.join(format!("many-cubes-{tag}.json"));
    let out = dir.join(format!("many-cubes-{tag}.png"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    println!("== many-cubes {}", args.join(" "));
    let status = Command::new(cargo)
        .args(["run", "--quiet", "--release", "-p", "samples", "--bin", "many-cubes", "--", "--headless"])
        .args(args)
        .arg("--stats")
        .arg(&stats)
        .arg("--out")
        .arg(&out)
        .env("PROXIMA_VALIDATION", "0")
        .current_dir(crate::workspace_root())
        .status()
        .map_err(|e| format!("running many-cubes: {e}"))?;
    if !status.success() {
        return Err(format!("many-cubes {} failed ({status})", args.join(" ")));
    }
    let text = std::fs::read_to_string(&stats).map_err(|e| format!("{}: {e}", stats.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", stats.display()))
}

fn row(name: &str, value: f64, unit: &str, goal: Option<&str>) -> Row {
    Row { name: format!("samples: {name}"), value, unit: unit.into(), goal: goal.map(Into::into), ..Default::default() }
}

/// Runs the sample figures and writes `samples.json` into `dir`.
pub fn bench(dir: &Path, quick: bool) -> Result<(), String> {
    let frames = if quick { "12" } else { "40" };
    let mut rows = Vec::new();

    let merged = many_cubes(dir, "merged", &["--count", "10000", "--frames", frames, "--width", "640", "--height", "360"])?;
    let unmerged = many_cubes(dir, "unmerged", &["--count", "10000", "--frames", frames, "--width", "640", "--height", "360", "--cvar", "r.MeshDrawCommands.DynamicInstancing=0"])?;
    let base_draws = |s: &Stats| s.passes.get("base").map_or(0, |p| p.draws) as f64;
    rows.push(row("many-cubes 10k on lavapipe, frame time with merging", merged.mean_timings_ms.frame, "ms", None));
    rows.push(row("many-cubes 10k on lavapipe, frame time with DynamicInstancing=0", unmerged.mean_timings_ms.frame, "ms", None));
    rows.push(row("many-cubes 10k on lavapipe, unmerged vs merged frame time", unmerged.mean_timings_ms.frame / merged.mean_timings_ms.frame, "x", None));
    rows.push(row("many-cubes 10k, base draws merged", base_draws(&merged), "draws", None));
    rows.push(row("many-cubes 10k, base draws with DynamicInstancing=0", base_draws(&unmerged), "draws", None));

    let sphere_frames = if quick { "10" } else { "30" };
    for (count, label, goal, bevy) in [("160000", "160k", "<= 6", 17.0), ("1600000", "1.6M", "<= 38", 113.0)] {
        let s = many_cubes(dir, &format!("sphere-{label}"), &["--layout", "sphere", "--count", count, "--frames", sphere_frames, "--width", "1920", "--height", "1080"])?;
        let t = &s.mean_timings_ms;
        rows.push(row(&format!("peer scale, sphere of {label} cubes at 1920x1080, CPU per frame"), t.cpu(), "ms", Some(goal)));
        // The same goal as a ratio, for reading; the goal is judged once, above.
        rows.push(row(&format!("peer scale {label}: Bevy 0.19's CPU per frame vs ours"), bevy / t.cpu(), "x", None));
        rows.push(row(&format!("peer scale {label}: game + end of frame"), t.game + t.end_of_frame, "ms", None));
        rows.push(row(&format!("peer scale {label}: render-thread CPU"), t.render_cpu, "ms", None));
        rows.push(row(&format!("peer scale {label}: visible cubes"), s.visible_primitives as f64, "primitives", None));
    }
    let json = serde_json::to_string_pretty(&serde_json::json!({ "rows": rows })).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("samples.json"), json + "\n").map_err(|e| e.to_string())
}
