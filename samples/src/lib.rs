//! # samples
//!
//! Proxima's runnable samples (`cargo xtask run <sample>`) and what they all
//! share: the command line and stats file of `docs/samples.md`
//! ([`CommonOptions`], [`SampleStats`]), PNG output, the progress line and
//! the logger ([`init_logging`]), and the textures the samples generate
//! ([`textures`]).
//! Engine logic lives in the engine crates, never here.

#![expect(
    missing_docs,
    reason = "not yet documented: the stats file's fields (docs/samples.md describes them) and the materials scene have no item docs"
)]

pub mod creature;
pub mod fly_camera;
pub mod materials_scene;
pub mod memory;
pub mod options;
pub mod output;
pub mod peer_scenes;
pub mod runner;
pub mod stats;
pub mod textures;

pub use options::{parse_cvar, parse_present, AaChoice, CommonOptions, EnvironmentOption};
pub use output::{write_png, Progress};
pub use stats::{
    ClusterStats, ImageStats, ImportStats, InstanceStats, LightStats, MaterialStats, MeshDrawCommandsBuilt, PassStats, Percentiles,
    PipelineStats, SampleStats, ShadowStats, SkinnedStats, StageMs, TextureStats, ThreadCpu, ThreadMs, Timings, ValidationStats,
};

/// The render features every sample's engine adds, in order: each feature
/// crate's one registration (its passes, vertex factories and console
/// variables) on the render thread.
pub static FEATURES: &[&dyn renderer::RenderFeature] = &[&procmesh::FEATURE, &instancing::FEATURE, &particles::FEATURE];

/// The log filter when `RUST_LOG` is unset: warnings and errors from every
/// crate (validation messages, a missing validation layer, a lost device), so
/// a default run stays quiet; `RUST_LOG=info` adds the device chosen.
pub const DEFAULT_LOG_FILTER: &str = "warn";

/// Installs the samples' logger (env_logger, to stderr) so the engine crates'
/// `log` lines reach the user, filtered by `RUST_LOG` (e.g. `info`,
/// `rhi_vulkan=debug`) or [`DEFAULT_LOG_FILTER`]. Every sample calls it before
/// making its device ([`runner::engine`] does); a second call does nothing.
pub fn init_logging() {
    let _ = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(DEFAULT_LOG_FILTER)).try_init();
}

/// The `main` of every sample: parses its options `O` from the command line
/// (clap prints a clear message and exits with code 2 on a bad one) and
/// runs `run` with them ([`exit_on_error`]).
pub fn main<O: clap::Parser>(name: &str, run: impl FnOnce(&O) -> anyhow::Result<()>) {
    exit_on_error(name, run(&O::parse()));
}

/// On an error, prints `name: error: its causes` to stderr and exits with
/// code 1 (for a sample that parses its options itself; see [`main`]).
pub fn exit_on_error(name: &str, result: anyhow::Result<()>) {
    if let Err(e) = result {
        eprintln!("{name}: {e:#}");
        std::process::exit(1);
    }
}
