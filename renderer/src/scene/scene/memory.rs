//! Where the scene's bytes go, by owner: what a primitive costs on the
//! render side, counted from the structures themselves (issue 40's
//! memory per primitive). Capacities, not lengths — what is allocated —
//! and without the allocator's own overhead per allocation, so the sum is
//! a lower bound of what the process holds for the scene; the samples'
//! stats file puts it beside the resident memory the OS reports.

use super::{PrimitiveSceneInfo, Scene};
use crate::mesh_pass::CachedEntry;
use std::mem::size_of;

/// Bytes of the scene by owner ([`Scene::memory`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SceneMemory {
    /// The proxies, by their own figure
    /// ([`crate::scene::PrimitiveSceneProxy::memory_footprint`]).
    pub proxies: u64,
    /// Each slot's scene info (the proxy's box, its bounds, LOD sizes, the
    /// buckets and material slots it holds) and their lists' heap.
    pub primitive_infos: u64,
    /// The culling arrays: spheres, boxes, flags, transforms, draw
    /// distances, sort priorities, chunk bounds, free slots.
    pub culling: u64,
    /// The id → slot map.
    pub ids: u64,
    /// Each pass's cache of each slot's command buckets.
    pub cached_commands: u64,
    /// The state buckets: the distinct commands, their map and draw order.
    pub state_buckets: u64,
    /// The GPU scene's CPU copy and its change lists.
    pub gpu_scene_cpu: u64,
    /// The GPU scene's buffer (device memory; the host's on lavapipe).
    pub gpu_scene_buffer: u64,
}

impl SceneMemory {
    /// Each owner with its bytes, in declaration order.
    pub fn owners(&self) -> [(&'static str, u64); 8] {
        [
            ("proxies", self.proxies),
            ("primitive_infos", self.primitive_infos),
            ("culling", self.culling),
            ("ids", self.ids),
            ("cached_commands", self.cached_commands),
            ("state_buckets", self.state_buckets),
            ("gpu_scene_cpu", self.gpu_scene_cpu),
            ("gpu_scene_buffer", self.gpu_scene_buffer),
        ]
    }

    /// Every owner's bytes together.
    pub fn total(&self) -> u64 {
        self.owners().iter().map(|(_, b)| b).sum()
    }
}

/// Bytes a `Vec<T>` of `capacity` holds.
fn vec_bytes<T>(v: &Vec<T>) -> u64 {
    (v.capacity() * size_of::<T>()) as u64
}

/// Bytes a hash map of `capacity` entries of `entry` bytes holds (hashbrown:
/// the entries and a control byte each).
fn map_bytes(capacity: usize, entry: usize) -> u64 {
    (capacity * (entry + 1)) as u64
}

impl Scene {
    /// Where the scene's bytes go, by owner ([`SceneMemory`]). Walks every
    /// slot: call it for a report, not every frame.
    pub fn memory(&self) -> SceneMemory {
        let mut m = SceneMemory { primitive_infos: vec_bytes(&self.infos), ..Default::default() };
        for info in self.infos.iter().flatten() {
            m.proxies += info.proxy.memory_footprint() as u64;
            m.primitive_infos += info_heap(info);
        }
        m.culling = vec_bytes(&self.spheres)
            + vec_bytes(&self.extents)
            + vec_bytes(&self.flags)
            + vec_bytes(&self.transforms)
            + vec_bytes(&self.draw_distances)
            + vec_bytes(&self.sort_priority)
            + vec_bytes(&self.chunks)
            + vec_bytes(&self.free);
        m.ids = map_bytes(self.ids.capacity(), size_of::<(crate::scene::PrimitiveId, u32)>());
        for c in &self.cache {
            m.cached_commands += vec_bytes(&c.first) + map_bytes(c.extra.capacity(), size_of::<(u32, Vec<CachedEntry>)>());
            m.cached_commands += c.extra.values().map(vec_bytes).sum::<u64>();
        }
        m.state_buckets = self.buckets.memory_bytes();
        (m.gpu_scene_cpu, m.gpu_scene_buffer) = self.gpu_scene.memory_bytes();
        m
    }
}

/// The heap a slot's info holds beside its inline fields and its proxy.
fn info_heap(info: &PrimitiveSceneInfo) -> u64 {
    vec_bytes(&info.lod_screen_sizes) + vec_bytes(&info.cached) + vec_bytes(&info.materials)
}
