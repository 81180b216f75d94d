//! `cargo xtask bench`: runs each crate's criterion benchmarks and the
//! sample-driven figures ([`samples`]), and gathers the figures they write to
//! `target/bench/<crate>.json` (rows of `{"name", "value", "unit", "goal",
//! "met"}`, with `"min"`, `"max"`, `"pairs"` where the value is the median of
//! paired measurements) into `target/bench/summary.json`, `summary.md` and the plot
//! `summary.png`. `--quick` asks for the short form (`PROXIMA_BENCH_QUICK=1`,
//! fewer sample frames). `-p CRATE` runs one crate's benches (`-p samples`:
//! the sample figures only). `--summary` only rebuilds the summary and plot
//! from the figures already there. Validation is off while benchmarking.

mod font;
mod plot;
mod samples;
mod summary;

use std::process::ExitCode;

use crate::PUBLISHED_CRATES as CRATES;
/// What `-p` may name: a crate with benches, or `samples` (the sample figures).
pub const SOURCES: &[&str] = &["rhi-vulkan", "renderer", "engine-core", "procmesh", "instancing", "particles", "samples"];

fn has_benches(krate: &str) -> bool {
    crate::workspace_root().join(krate).join("benches").is_dir()
}

/// `only`: one of [`SOURCES`] (the command line checks it).
pub fn bench(quick: bool, only: Option<&str>, summary_only: bool) -> Result<ExitCode, String> {
    if summary_only {
        write_summary(&crate::workspace_root().join("target").join("bench"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = only {
        if !SOURCES.contains(&name) {
            return Err(format!("no crate named {name:?} (one of {SOURCES:?})"));
        }
    }
    // Validation is off while benchmarking: the layer is not needed.
    crate::vulkan::ensure("bench", crate::vulkan::RENDER)?;
    let root = crate::workspace_root();
    let out_dir = root.join("target").join("bench");
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    let mut env = vec![("PROXIMA_VALIDATION", "0")];
    if quick {
        env.push(("PROXIMA_BENCH_QUICK", "1"));
    }
    let mut failed = Vec::new();
    for krate in CRATES.iter().filter(|c| only.is_none_or(|o| o == **c)) {
        if !has_benches(krate) {
            continue;
        }
        for old in summary::figure_files(&out_dir, krate) {
            let _ = std::fs::remove_file(old);
        }
        println!("== cargo bench -p {krate}");
        let code = crate::cargo_env(&["bench", "-p", &crate::package_name(krate)], &env)?;
        if code != ExitCode::SUCCESS {
            failed.push(*krate);
        }
    }
    if only.is_none_or(|o| o == "samples") {
        let _ = std::fs::remove_file(out_dir.join("samples.json"));
        if let Err(e) = samples::bench(&out_dir, quick) {
            eprintln!("bench: sample figures: {e}");
            failed.push("samples");
        }
    }
    write_summary(&out_dir)?;
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(format!("benchmarks failed: {failed:?}"))
    }
}

fn write_summary(dir: &std::path::Path) -> Result<(), String> {
    let rows = summary::gather(dir, SOURCES)?;
    summary::write(dir, &rows)?;
    let plotted = plot::write(&dir.join("summary.png"), &rows)?;
    let missed = rows.iter().filter(|r| r.met == Some(false)).count();
    println!(
        "bench: {} figure(s), {missed} goal(s) missed, in {} ({plotted} plotted in summary.png)",
        rows.len(),
        dir.join("summary.md").display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_the_crates_and_samples() {
        assert_eq!(&SOURCES[..CRATES.len()], CRATES);
        assert_eq!(&SOURCES[CRATES.len()..], ["samples"]);
    }
}
