//! What an instanced proxy reports about its frames.
//!
//! The renderer's frame statistics count draws, not instances: the instance
//! counts of an indirect draw are written by the GPU. So each proxy reports
//! its main view's visible instances into the frame's stats as the counter
//! [`VISIBLE_INSTANCES_COUNTER`] (`renderer::FrameStats::counter`) — when
//! the frame is collected on the CPU paths, when it retires on the GPU path,
//! so the figure is always the frame's own; the samples' `instances.visible`
//! is that counter. Each proxy also keeps its own detailed figures
//! ([`IsmStats`]: per view, per LOD, the path taken, update sizes) in a
//! handle shared with the game side (clone it before handing the proxy to
//! the render thread), for tests.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::cluster_tree::TreeCullStats;

/// The frame counter (`renderer::FrameStats::counters`) of the instances
/// that survived culling in the frame's first view (the main camera),
/// summed over the instanced proxies drawn — [`IsmStatsSnapshot::visible`]
/// of each, for that frame.
pub const VISIBLE_INSTANCES_COUNTER: &str = "instances.visible";

/// How the last frame culled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CullPath {
    #[default]
    None,
    Gpu,
    Cpu,
    /// HISM: CPU culling through the cluster tree.
    CpuTree,
    UeMode,
}

/// Figures of one proxy, shared with the game side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IsmStatsSnapshot {
    pub instances: u64,
    /// Visible instances per view of the last frame — drawn copies: an
    /// instance inside a dithered LOD transition band
    /// ([`crate::LodDitherBand`]) is drawn at two LODs and counts twice,
    /// once in each LOD of `visible_per_lod`, on every path (GPU path: of frame
    /// `gpu_frame`, read back from its counters when its GPU work finished —
    /// at the end of the frame with `r.FramesInFlight=1`, later with more).
    pub visible_per_view: Vec<u64>,
    /// Visible instances per LOD, summed over views, same timing.
    pub visible_per_lod: Vec<u64>,
    /// GPU path: the frame (`FrameStats::frame`) whose counts
    /// `visible_per_view` and `visible_per_lod` are.
    pub gpu_frame: Option<u64>,
    pub path: CullPath,
    /// Bytes passed to `ProxyUpdateContext::upload` by the last update.
    pub last_update_upload_bytes: u64,
    /// Instance-buffer recreations (growth) so far.
    pub instance_buffer_recreations: u64,
    /// HISM: what the cluster-tree cull of the first view did last frame
    /// (`None` for other paths).
    pub tree_cull: Option<TreeCullStats>,
    /// HISM: the store generation of the proxy's tree (`None`: no tree yet).
    pub tree_generation: Option<u64>,
    /// Dynamic updates the proxy rejected whole ([`crate::IsmUpdate::validate`]).
    pub rejected_updates: u64,
}

impl IsmStatsSnapshot {
    /// Visible instances of the first view (the main camera).
    pub fn visible(&self) -> u64 {
        self.visible_per_view.first().copied().unwrap_or(0)
    }
}

/// A handle to a proxy's [`IsmStatsSnapshot`], cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct IsmStats(Arc<Mutex<IsmStatsSnapshot>>);

impl IsmStats {
    pub fn snapshot(&self) -> IsmStatsSnapshot {
        self.lock().clone()
    }
    pub(crate) fn lock(&self) -> MutexGuard<'_, IsmStatsSnapshot> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}
