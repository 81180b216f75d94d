//! # samples
//!
//! Proxima's runnable samples (`cargo xtask run <sample>`) and what they all
//! share: the command line and stats file of `SAMPLES.md`
//! ([`CommonOptions`], [`SampleStats`]), PNG output and the progress line.
//! Engine logic lives in the engine crates, never here.

pub mod fly_camera;
pub mod options;
pub mod output;
pub mod runner;
pub mod stats;

pub use options::{parse_cvar, parse_present, CommonOptions};
pub use output::{write_png, Progress};
pub use stats::{InstanceStats, MeshDrawCommandsBuilt, PassStats, Percentiles, SampleStats, StageMs, Timings, ValidationStats};

/// The samples, with a line each (what `cargo xtask run` lists).
pub const SAMPLES: &[(&str, &str)] = &[
    ("hello", "an instanced grid of colored quads, drawn offscreen through rhi-vulkan alone"),
    ("many-cubes", "N static-mesh cubes over M materials, shadowed; --count N --materials M --moving P"),
    ("procmesh", "a procedural terrain with animated water, a hidden section and a raycast marker (ProceduralMeshComponent)"),
    ("instancing", "instanced rocks and a forest with GPU culling; --mesh-a N --mesh-b M --instances K [--hism]"),
    ("particles", "fountains, smoke and sparks (Cascade-style sprite particles); --particles N"),
    ("showcase", "everything together: terrain, water, forest, particles, buildings, lights, a moving camera"),
    ("soak", "frames of churn (components, sections, instances, particle systems); fails if memory grows; --report PATH"),
];
