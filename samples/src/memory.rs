//! The process's resident memory at the points a run's stats file reports
//! (`memory` in `docs/samples.md`): after the engine is made, once the
//! sample has built its scene (before the first frame), and the peak of the
//! whole run. Read from `/proc/self/status` (Linux; elsewhere the figures
//! are absent). Where the bytes of a primitive go is the difference: the
//! game side's (actors, components) between the first two, the render
//! side's (proxies, cached commands, GPU scene, frame memory) up to the peak.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Resident bytes after the engine was made, 0 until then.
static AFTER_ENGINE: AtomicU64 = AtomicU64::new(0);
/// Resident bytes when the first frame began, 0 until then.
static SCENE_BUILT: AtomicU64 = AtomicU64::new(0);

/// The run's memory figures in MiB.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct MemoryStats {
    /// Resident after the engine (device, render thread) was made.
    pub after_engine_mib: f64,
    /// Resident once the sample built its scene, before the first frame:
    /// the world's actors and components on top of the engine.
    pub scene_built_mib: f64,
    /// The run's peak resident memory (`VmHWM`): the render side's proxies,
    /// cached commands, GPU scene and frame memory on top.
    pub peak_mib: f64,
    /// The render side's scene at the end of the run by owner, in bytes
    /// (`renderer::SceneMemory`: counted from the structures, without the
    /// allocator's overhead; the rest of `peak_mib` is frame memory,
    /// staging, the driver and the allocator).
    #[serde(default)]
    pub scene_owners: BTreeMap<String, u64>,
}

impl MemoryStats {
    /// Bytes per primitive of the game side and of the render side (to
    /// the peak), for `primitives` primitives.
    pub fn per_primitive(&self, primitives: u64) -> (f64, f64) {
        let n = primitives.max(1) as f64;
        let mib = 1024.0 * 1024.0;
        ((self.scene_built_mib - self.after_engine_mib) * mib / n, (self.peak_mib - self.scene_built_mib) * mib / n)
    }
}

/// A field of `/proc/self/status` in bytes (`VmRSS`, `VmHWM`).
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Notes the resident memory after the engine was made.
pub(crate) fn note_engine_made() {
    AFTER_ENGINE.store(status_bytes("VmRSS:").unwrap_or(0), Ordering::Relaxed);
}

/// Notes the resident memory as the first frame begins.
pub(crate) fn note_scene_built() {
    SCENE_BUILT.store(status_bytes("VmRSS:").unwrap_or(0), Ordering::Relaxed);
}

/// The run's figures so far, if the platform reports them.
pub(crate) fn stats() -> Option<MemoryStats> {
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let (engine, scene) = (AFTER_ENGINE.load(Ordering::Relaxed), SCENE_BUILT.load(Ordering::Relaxed));
    let peak = status_bytes("VmHWM:")?;
    (engine > 0 && scene > 0).then(|| MemoryStats {
        after_engine_mib: mib(engine),
        scene_built_mib: mib(scene),
        peak_mib: mib(peak),
        scene_owners: BTreeMap::new(),
    })
}
