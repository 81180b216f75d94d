//! HISM: UE's `UHierarchicalInstancedStaticMeshComponent` as a **mode of
//! [`crate::InstancedStaticMeshComponent`]** ([`InstancedStaticMeshComponent::new_hierarchical`](crate::InstancedStaticMeshComponent::new_hierarchical)),
//! and the render side of its cluster-tree culling.
//!
//! ## Why a mode, not a second component type
//!
//! In UE, HISM is a subclass of ISM that changes one thing: how instances
//! are culled (a cluster tree on the CPU instead of nothing). Everything
//! else — the instance API, stable ids, dirty ranges, the dynamic-data path,
//! the vertex factory, the proxy's buffers and indirect draws — is the same
//! code here. A second type would forward the whole instance API for no
//! behaviour of its own, so the component carries an optional
//! [`crate::ClusterTreeBuilder`] and the proxy an optional tree (`ProxyTree`).
//!
//! ## How it flows
//!
//! ```text
//! game thread  edit ─ World::tick: poll builder, request rebuild ─ … ─ tick: tree installed
//!                                      │ (rayon, background)              │
//!                                      └──── ClusterTree::from_snapshot ──┘
//! end of frame                                              IsmUpdate { tree: Some(HismTree) }
//! render thread  per view: tree cull (per cluster, then per instance) on the CPU → compacted
//!                instances + indirect args, one draw per section and LOD
//! ```
//!
//! * The tree is built over component-space spheres (leaf size from the
//!   mesh's LOD-0 vertex count, as UE's `DesiredInstancesPerLeaf`), so moving
//!   the component never rebuilds it.
//! * The component polls and requests builds in its `tick` (HISM components
//!   want ticks); without ticks there is no tree and the proxy culls every
//!   instance flat on the CPU — still exact, only slower.
//! * **Exact while a rebuild runs.** The proxy's instance array mirrors the
//!   store index by index. A tree sent with [`HismTree::edited_since`] (the
//!   indices changed since its snapshot) and every later dynamic update's
//!   written ranges mark indices as *edited*: tree entries pointing at an
//!   edited index, or past the instance count, are skipped, and edited
//!   indices are culled one by one. An index not edited since the snapshot
//!   holds the instance the tree saw, so every instance is tested exactly
//!   once, by the same per-instance test as flat and GPU culling.
//! * HISM proxies cull on the CPU through the tree whatever
//!   `r.InstancedStaticMeshes.GPUCulling` says (that is what HISM is for;
//!   the plain ISM mode has the GPU pass); `r.InstancedStaticMeshes.UEMode`
//!   still draws everything.

use std::sync::Arc;

use crate::cluster_tree::{ClusterTree, TreeCullStats};
use crate::culling::{CullOutput, InstanceCuller};
use crate::mesh::InstancedMesh;
use crate::vertex_factory::InstanceStreamData;
use renderer::OcclusionBuffer;

/// A tree for the proxy, sent through the dynamic-data path.
#[derive(Clone, Debug)]
pub struct HismTree {
    pub tree: Arc<ClusterTree>,
    /// Indices whose instance (or its index) changed after the tree's
    /// snapshot, up to the update that carries it.
    pub edited_since: Vec<u32>,
}

/// The render side's tree and the indices edited since its snapshot.
#[derive(Debug)]
pub(crate) struct ProxyTree {
    tree: Arc<ClusterTree>,
    /// Per index: edited since the snapshot. Never shrinks, so an index is
    /// listed in `edited_list` at most once.
    edited: Vec<bool>,
    edited_list: Vec<u32>,
}

impl ProxyTree {
    pub(crate) fn new(t: HismTree) -> Self {
        let mut s = Self { tree: t.tree, edited: Vec::new(), edited_list: Vec::new() };
        for i in t.edited_since {
            s.mark(i..i + 1);
        }
        s
    }

    pub(crate) fn generation(&self) -> u64 {
        self.tree.generation()
    }

    /// Records that indices `range` were written.
    pub(crate) fn mark(&mut self, range: std::ops::Range<u32>) {
        if self.edited.len() < range.end as usize {
            self.edited.resize(range.end as usize, false);
        }
        for i in range {
            if !std::mem::replace(&mut self.edited[i as usize], true) {
                self.edited_list.push(i);
            }
        }
    }

    /// Culls `instances` through the tree (flat when the tree was built for
    /// other mesh bounds), leaving out what `occlusion` hides (counted in
    /// the stats). Output order is fixed for a given input.
    pub(crate) fn cull(
        &self,
        instances: &[InstanceStreamData],
        mesh: &InstancedMesh,
        culler: &InstanceCuller<'_>,
        occlusion: Option<&OcclusionBuffer>,
    ) -> (CullOutput, TreeCullStats) {
        let n = instances.len() as u32;
        let mut out = CullOutput::new(mesh.lod_count());
        let mut stats = TreeCullStats::default();
        let edited = |i: u32| self.edited.get(i as usize).copied().unwrap_or(false);
        if self.tree.mesh_bounds() != mesh.bounds() {
            return cull_flat(instances, mesh, culler, occlusion);
        }
        let order = self.tree.order();
        let resolve = |e: usize| -> Option<u32> {
            let i = order[e];
            (i < n && !edited(i)).then_some(i)
        };
        self.tree.cull_entries(culler, occlusion, mesh.lod_count(), resolve, |i| instances[i as usize].transform(), &mut out, &mut stats);
        for &i in self.edited_list.iter().filter(|&&i| i < n) {
            stats.stale_instances += 1;
            stats.occluded_instances += cull_one(culler, occlusion, i, &instances[i as usize], &mut out);
        }
        (out, stats)
    }
}

/// Every instance by the per-instance test (no tree yet, or a tree for
/// other mesh bounds), leaving out what `occlusion` hides.
pub(crate) fn cull_flat(
    instances: &[InstanceStreamData],
    mesh: &InstancedMesh,
    culler: &InstanceCuller<'_>,
    occlusion: Option<&OcclusionBuffer>,
) -> (CullOutput, TreeCullStats) {
    let mut out = CullOutput::new(mesh.lod_count());
    let mut stats = TreeCullStats { fell_back_to_flat: true, ..TreeCullStats::default() };
    for (i, inst) in instances.iter().enumerate() {
        stats.occluded_instances += cull_one(culler, occlusion, i as u32, inst, &mut out);
    }
    (out, stats)
}

/// Instance `i` by the per-instance test: pushed when visible; 1 when it
/// passes the frustum and distance but `occlusion` hides it, else 0.
fn cull_one(
    culler: &InstanceCuller<'_>,
    occlusion: Option<&OcclusionBuffer>,
    i: u32,
    inst: &InstanceStreamData,
    out: &mut CullOutput,
) -> u32 {
    let local = inst.transform();
    let Some((lod, fade)) = culler.classify(&local, true) else { return 0 };
    if occlusion.is_some_and(|o| culler.occluded(&local, o)) {
        return 1;
    }
    out.push(i, lod, fade);
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::Bounds;
    use crate::cluster_tree::ClusterTreeSettings;
    use crate::culling::{CullDistances, CullView};
    use crate::instance_data::InstanceStore;
    use crate::transform::TransformSpace;
    use glam::{Affine3A, Vec3};

    fn sorted(out: &CullOutput) -> Vec<(u32, usize, u32)> {
        let mut v: Vec<_> = out
            .lods
            .iter()
            .enumerate()
            .flat_map(|(l, b)| b.instances.iter().zip(&b.fades).map(move |(&i, f)| (i, l, f.to_bits())))
            .collect();
        v.sort_unstable();
        v
    }

    /// What the proxy holds: the store packed index by index.
    fn packed(store: &InstanceStore) -> Vec<InstanceStreamData> {
        store
            .gpu_data_all()
            .iter()
            .enumerate()
            .map(|(i, g)| InstanceStreamData::new(g, store.instance_custom_data(i as u32).unwrap()))
            .collect()
    }

    /// A tree that arrives stale (edits between its snapshot and its
    /// arrival), then more edits through dynamic-data ranges: the proxy's
    /// cull stays equal to flat culling at every step.
    #[test]
    fn proxy_tree_cull_equals_flat_through_stale_arrivals_and_later_edits() {
        let mesh = InstancedMesh::simple(Bounds::new(Vec3::ZERO, Vec3::ONE, 3f32.sqrt()), 512, 1536, &[1.0, 0.3, 0.1]).unwrap();
        let mut store = InstanceStore::new(*mesh.bounds());
        let at = |i: u32| Affine3A::from_translation(Vec3::new((i % 50) as f32 * 4.0 - 100.0, 0.0, (i / 50) as f32 * 4.0 - 100.0));
        store.add_instances(&(0..2500).map(at).collect::<Vec<_>>()).unwrap();
        let view = CullView::look_at(Vec3::new(0.0, 40.0, -120.0), Vec3::ZERO, Vec3::Y, 1.0, 1.5, 0.5, 500.0).unwrap();
        let culler = InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, CullDistances::new(50.0, 150.0).unwrap()).unwrap();
        let check = |proxy: &ProxyTree, store: &InstanceStore| {
            let instances = packed(store);
            let (tree_out, stats) = proxy.cull(&instances, &mesh, &culler, None);
            let (flat, _) = cull_flat(&instances, &mesh, &culler, None);
            assert!(!stats.fell_back_to_flat);
            assert_eq!(sorted(&tree_out), sorted(&flat), "{stats:?}");
            assert!(!flat.lods.iter().all(|b| b.instances.is_empty()), "something in view");
            stats
        };

        let tree = Arc::new(ClusterTree::build(&store, &mesh, &ClusterTreeSettings::default()));
        // Edits after the snapshot, before the tree reaches the proxy.
        for i in 0..40 {
            store.update_instance_transform(i * 31, at(i * 7 + 3), TransformSpace::Component).unwrap();
        }
        for i in 0..30 {
            store.remove_instance(i * 53).unwrap();
        }
        store.add_instances(&(0..20).map(|i| at(i * 11)).collect::<Vec<_>>()).unwrap();
        store.take_dirty_ranges();
        let g = tree.generation();
        let edited_since = store.cull_edits().into_iter().filter(|&i| store.modified_generation(i) > g).collect();
        let mut proxy = ProxyTree::new(HismTree { tree, edited_since });
        assert!(check(&proxy, &store).stale_instances >= 60, "the edits are culled one by one");

        // Later edits arrive as written ranges.
        for round in 0..5u32 {
            store.update_instance_transform(round * 97, at(round * 13 + 1), TransformSpace::Component).unwrap();
            store.remove_instance(round * 101 + 7).unwrap();
            store.add_instance(at(round * 17 + 5)).unwrap();
            for r in store.take_dirty_ranges() {
                proxy.mark(r);
            }
            check(&proxy, &store);
        }
        // Everything removed and re-added: the old tree covers nothing valid.
        store.clear_instances();
        store.add_instances(&(0..100).map(|i| at(i * 25 + 12)).collect::<Vec<_>>()).unwrap();
        for r in store.take_dirty_ranges() {
            proxy.mark(r);
        }
        check(&proxy, &store);
    }
}
