//! `cargo xtask fuzz [--seconds N] [TARGET]`: coverage-guided fuzzing of the
//! procmesh section, particle asset and glTF import targets with cargo-fuzz
//! (libFuzzer).
//!
//! Why a separate command: libFuzzer needs a nightly compiler
//! (`-Zsanitizer`) and an instrumented build, so the cargo-fuzz package
//! (`fuzz/`) is excluded from the workspace and never built by `cargo
//! build` or `cargo xtask test`. The test suite runs the same target bodies
//! (`fuzzing/`, proxima-fuzzing) on stable over the checked-in seed corpus
//! and a few thousand mutations (`fuzzing/tests/ci.rs`); this command is
//! the long run that finds new inputs.
//!
//! Each target runs for N seconds (default 60), reading the seeds in
//! `fuzzing/corpus/<target>/` and growing a scratch corpus in
//! `fuzz/corpus/<target>/` (git-ignored). A crash leaves its input in
//! `fuzz/artifacts/<target>/`; fix the bug, then copy the input into
//! `fuzzing/corpus/<target>/` so every test run replays it.

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use crate::{exit_code, workspace_root, Result};

/// The targets, as named in `fuzz/fuzz_targets/` and `fuzzing/corpus/`.
pub(crate) const TARGETS: &[&str] = &["procmesh_section", "particle_asset", "gltf_import"];

/// A `cargo` for the nightly toolchain: the rustup proxy, without the
/// variables the outer (stable) `cargo xtask` set, which would otherwise
/// send cargo-fuzz's own cargo calls back to stable.
fn nightly_cargo() -> Command {
    let mut cmd = Command::new("cargo");
    cmd.arg("+nightly").current_dir(workspace_root());
    for var in ["CARGO", "RUSTUP_TOOLCHAIN", "RUSTC", "RUSTDOC", "CARGO_TARGET_DIR"] {
        cmd.env_remove(var);
    }
    cmd
}

/// Whether `cmd` runs and exits 0 (output discarded).
fn succeeds(mut cmd: Command) -> bool {
    cmd.stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// The nightly toolchain and cargo-fuzz, installing cargo-fuzz if missing.
fn ensure_tools() -> Result<()> {
    let mut version = nightly_cargo();
    version.arg("--version");
    if !succeeds(version) {
        return Err("fuzzing needs the nightly toolchain (libFuzzer uses -Zsanitizer), and `cargo +nightly` does not run.\n\
             Install it with:  rustup toolchain install nightly\n\
             (libFuzzer itself is compiled from C++ by libfuzzer-sys: a C++ compiler such as g++ or clang++ must be installed too)"
            .into());
    }
    let mut fuzz = nightly_cargo();
    fuzz.args(["fuzz", "--version"]);
    if !succeeds(fuzz) {
        eprintln!("xtask: cargo-fuzz is missing; installing it with `cargo install cargo-fuzz`");
        let status = Command::new("cargo").args(["install", "cargo-fuzz"]).status().map_err(|e| format!("running cargo install: {e}"))?;
        if !status.success() {
            return Err("`cargo install cargo-fuzz` failed; install cargo-fuzz by hand (cargo install cargo-fuzz) and retry".into());
        }
    }
    Ok(())
}

/// Fuzzes `targets` (names from [`TARGETS`]; all when empty) for `seconds` each.
pub(crate) fn fuzz(seconds: u64, targets: &[String]) -> Result<ExitCode> {
    let targets: Vec<&str> = if targets.is_empty() { TARGETS.to_vec() } else { targets.iter().map(String::as_str).collect() };
    ensure_tools()?;
    let root = workspace_root();
    for target in targets {
        let scratch = Path::new("fuzz/corpus").join(target);
        std::fs::create_dir_all(root.join(&scratch)).map_err(|e| format!("creating {}: {e}", scratch.display()))?;
        let seeds = Path::new("fuzzing/corpus").join(target);
        println!("xtask: fuzzing {target} for {seconds} s (seeds: {}, new inputs: {})", seeds.display(), scratch.display());
        let mut cmd = nightly_cargo();
        cmd.args(["fuzz", "run", target]).arg(&scratch).arg(&seeds).args([
            "--",
            &format!("-max_total_time={seconds}"),
            "-print_final_stats=1",
        ]);
        let status = cmd.status().map_err(|e| format!("running cargo +nightly fuzz: {e}"))?;
        if !status.success() {
            eprintln!(
                "xtask: {target} failed. The crashing input is in fuzz/artifacts/{target}/; reproduce it with\n  \
                 cargo +nightly fuzz run {target} fuzz/artifacts/{target}/<file>\n\
                 then fix the bug and copy the input into {}/ so `cargo xtask test` replays it.",
                seeds.display()
            );
            return Ok(exit_code(status));
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every target has a libFuzzer entry and a seed corpus.
    #[test]
    fn targets_have_an_entry_and_seeds() {
        let root = workspace_root();
        for t in TARGETS {
            assert!(root.join("fuzz/fuzz_targets").join(format!("{t}.rs")).is_file(), "{t}");
            assert!(root.join("fuzzing/corpus").join(t).read_dir().unwrap().next().is_some(), "{t}");
        }
    }
}
