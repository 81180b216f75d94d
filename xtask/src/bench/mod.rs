//! `cargo xtask bench`: runs each crate's criterion benchmarks and the
//! sample-driven figures ([`samples`]), and gathers the figures they write to
//! `target/bench/<crate>.json` (rows of `{"name", "value", "unit", "goal",
//! "met"}`) into `target/bench/summary.json`, `summary.md` and the plot
//! `summary.png`. `--quick` asks for the short form (`PROXIMA_BENCH_QUICK=1`,
//! fewer sample frames). `-p CRATE` runs one crate's benches (`-p samples`:
//! the sample figures only). `--summary` only rebuilds the summary and plot
//! from the figures already there. Validation is off while benchmarking.

mod font;
mod plot;
mod samples;
mod summary;

use std::process::ExitCode;

const CRATES: &[&str] = &["rhi-vulkan", "renderer", "engine-core", "procmesh", "instancing", "particles"];

fn has_benches(krate: &str) -> bool {
    crate::workspace_root().join(krate).join("benches").is_dir()
}

pub fn bench(args: &[String]) -> Result<ExitCode, String> {
    let quick = args.iter().any(|a| a == "--quick");
    if args.iter().any(|a| a == "--summary") {
        write_summary(&crate::workspace_root().join("target").join("bench"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let only: Option<&str> = args.iter().position(|a| a == "-p").and_then(|i| args.get(i + 1)).map(String::as_str);
    if let Some(name) = only {
        if !CRATES.contains(&name) && name != "samples" {
            return Err(format!("no crate named {name:?} (one of {CRATES:?} or samples)"));
        }
    }
    crate::vulkan::ensure_installed()?;
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
        let _ = std::fs::remove_file(out_dir.join(format!("{krate}.json")));
        println!("== cargo bench -p {krate}");
        let code = crate::cargo_env(&["bench", "-p", krate], &env)?;
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
    let mut sources: Vec<&str> = CRATES.to_vec();
    sources.push("samples");
    let rows = summary::gather(dir, &sources)?;
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
