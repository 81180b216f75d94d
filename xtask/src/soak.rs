//! `cargo xtask soak [--frames N] [-- OPTIONS]`: the long soak. Builds the
//! `soak` sample in release and runs it headless twice with the validation
//! layer on, so that a leak, a growing allocation count or a validation
//! message shows up as a failing exit code:
//!
//! 1. N frames (default 10,000) with synchronization validation off: host
//!    memory (RSS), every Vulkan object count of the device and the
//!    renderer's material table must stay flat after warm-up. (The layer's
//!    sync validation keeps state for every buffer ever created, so RSS is
//!    judged without it; see the sample's module docs.)
//! 2. N/5 frames (at least 1) with synchronization validation on: no
//!    error or warning, the counts flat.
//!
//! The reports (every series with its first and last window, the rule, the
//! verdict) go to `target/soak/report.json` and
//! `target/soak/report-sync.json`; OPTIONS go to the sample (e.g.
//! `-- --width 256 --height 256`). The test suite runs a short version
//! (`samples/tests/soak.rs`).

use crate::{cargo_env, vulkan, workspace_root, Result};
use std::process::ExitCode;

pub fn soak(frames: u64, options: &[String]) -> Result<ExitCode> {
    vulkan::ensure("soak", vulkan::TEST)?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| workspace_root().join("target"));
    for (sync, frames, file) in [("0", frames, "report.json"), ("1", (frames / 5).max(1), "report-sync.json")] {
        let report = target.join("soak").join(file).to_string_lossy().into_owned();
        let frames = frames.to_string();
        println!("xtask soak: {frames} frames, synchronization validation {}", if sync == "1" { "on" } else { "off" });
        let mut cargo_args = vec![
            "run",
            "--quiet",
            "--release",
            "-p",
            "samples",
            "--bin",
            "soak",
            "--",
            "--headless",
            "--frames",
            frames.as_str(),
            "--report",
            report.as_str(),
        ];
        cargo_args.extend(options.iter().map(String::as_str));
        let code = cargo_env(&cargo_args, &[("PROXIMA_VALIDATION", "1"), ("PROXIMA_SYNC_VALIDATION", sync)])?;
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
    }
    Ok(ExitCode::SUCCESS)
}
