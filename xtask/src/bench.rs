//! `cargo xtask bench`: runs each crate's criterion benchmarks and gathers
//! the figures they write to `target/bench/<crate>.json` (rows of
//! `{"name", "value", "unit", "goal", "met"}`) into `target/bench/summary.json`
//! and `summary.md`. `--quick` asks the benchmarks for their short form
//! (`PROXIMA_BENCH_QUICK=1`). Validation is off while benchmarking.

use std::process::ExitCode;

const CRATES: &[&str] = &["rhi-vulkan", "renderer", "engine-core", "procmesh", "instancing", "particles"];

fn has_benches(krate: &str) -> bool {
    crate::workspace_root().join(krate).join("benches").is_dir()
}

pub fn bench(args: &[String]) -> Result<ExitCode, String> {
    let quick = args.iter().any(|a| a == "--quick");
    let only: Option<&str> = args.iter().position(|a| a == "-p").and_then(|i| args.get(i + 1)).map(String::as_str);
    if let Some(name) = only {
        if !CRATES.contains(&name) {
            return Err(format!("no crate named {name:?} (one of {CRATES:?})"));
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
    write_summary(&out_dir)?;
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(format!("benchmarks failed: {failed:?}"))
    }
}

/// Concatenates every `<crate>.json` row list (tiny hand-rolled JSON handling:
/// the rows are written by our own benches in a fixed shape).
fn write_summary(dir: &std::path::Path) -> Result<(), String> {
    let mut rows = Vec::new();
    for krate in CRATES {
        let Ok(text) = std::fs::read_to_string(dir.join(format!("{krate}.json"))) else { continue };
        let Some(start) = text.find('[') else { continue };
        let Some(end) = text.rfind(']') else { continue };
        let inner = text[start + 1..end].trim();
        let mut depth = 0;
        let mut begin = None;
        for (i, ch) in inner.char_indices() {
            match ch {
                '{' => {
                    if depth == 0 {
                        begin = Some(i);
                    }
                    depth += 1;
                }
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        if let Some(b) = begin.take() {
                            rows.push((krate.to_string(), inner[b..=i].to_string()));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let json = format!(
        "{{\"rows\": [\n{}\n]}}\n",
        rows.iter().map(|(_, r)| format!("  {r}")).collect::<Vec<_>>().join(",\n")
    );
    std::fs::write(dir.join("summary.json"), json).map_err(|e| e.to_string())?;
    let mut md = String::from("# Benchmark summary\n\n| crate | figure |\n| --- | --- |\n");
    for (krate, row) in &rows {
        md.push_str(&format!("| {krate} | `{row}` |\n"));
    }
    std::fs::write(dir.join("summary.md"), md).map_err(|e| e.to_string())?;
    println!("bench: {} figure(s) in {}", rows.len(), dir.join("summary.md").display());
    Ok(())
}
