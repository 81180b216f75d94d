//! HISM's cluster tree: cull whole groups of instances with one test.
//!
//! UE's `UHierarchicalInstancedStaticMeshComponent` sorts its instances into
//! a bounding-volume tree whose leaves hold a few instances each, and culls
//! top-down, so a view that sees 10% of a forest touches about 10% of it.
//! This is that tree, built over component-space instance spheres so that
//! moving the component never needs a rebuild.
//!
//! * **Leaf size.** As UE's `DesiredInstancesPerLeaf`:
//!   `clamp(min_verts_to_split_node / lod0_vertex_count, 1, max_instances_per_leaf)`
//!   with `foliage.MinVertsToSplitNode`'s default 8192 and a cap of 1024: a
//!   leaf holds about 8 K vertices' worth of instances, so tiny meshes get big
//!   leaves (test cost dominates) and huge meshes get one instance per leaf
//!   (draw cost dominates).
//! * **Build.** Recursive median split on the longest axis of the instance
//!   centres (`select_nth_unstable`, ties broken by index, so deterministic).
//!   The tree stores a permutation of instance indices; each node covers a
//!   contiguous range of it, with the box of its instances' centres and their
//!   largest radius. Subtrees over 64 K instances build their halves in
//!   parallel and splice them in depth-first order: the same tree as a
//!   sequential build, on any thread count.
//! * **Cull.** Top-down; a node is rejected when its centres box, grown by
//!   the largest radius, is outside a plane or wholly past the end distance.
//!   A node wholly inside all planes marks its subtree *inside*: its
//!   instances skip the plane tests. Leaves run the exact per-instance test
//!   of [`crate::culling`], so the visible set, LODs and fades are the same
//!   as flat culling's, bit for bit; node tests carry a small relative
//!   margin so rounding can only send a node to the exact per-instance path,
//!   never skip it wrongly.
//! * **Edits.** A tree describes the store at one `generation`. Used against
//!   a store that has changed since (while a rebuild runs, see
//!   [`crate::tree_builder`]), entries are found by stable id; instances
//!   added, moved or re-indexed since the build are skipped in the tree and
//!   culled flat from the store's edit list instead; removed ones are skipped.
//!   The result is still exact — only slower in proportion to the edits.
//! * **Occlusion** (the proxy's HISM path). Given the view's
//!   occlusion buffer (`renderer::OcclusionBuffer`), a node that passes the
//!   frustum is also tested by its box (centres box grown by the largest
//!   radius, in world space) with `test_box`: an occluded node is not
//!   descended, and no instance under it is drawn or tested against the
//!   buffer. Its instances are still classified (frustum, cull distance),
//!   and those that pass count as occluded, so the occluded count is the
//!   flat path's figure (frustum-visible instances occlusion hid) on every
//!   path. Instances of nodes that are not occluded are tested one by one,
//!   as the flat path does. `test_box` is monotone (a box inside an
//!   occluded box is occluded), so the visible set is the flat path's.

use glam::{Affine3A, Vec3, Vec4};
use rayon::prelude::*;

use crate::bounds::{instance_sphere, Aabb, Bounds};
use crate::culling::{cull_instances_into, CullOutput, InstanceCuller};
use crate::id::InstanceId;
use crate::instance_data::InstanceStore;
use crate::mesh::InstancedMesh;
use renderer::OcclusionBuffer;

/// Leaf sizing; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClusterTreeSettings {
    /// UE's `foliage.MinVertsToSplitNode` (default 8192).
    pub min_verts_to_split_node: u32,
    /// Upper bound on instances per leaf (UE clamps to 1024).
    pub max_instances_per_leaf: u32,
}

impl Default for ClusterTreeSettings {
    fn default() -> Self {
        Self { min_verts_to_split_node: 8192, max_instances_per_leaf: 1024 }
    }
}

impl ClusterTreeSettings {
    /// UE's `DesiredInstancesPerLeaf` for a mesh whose LOD 0 has this many
    /// vertices.
    pub fn instances_per_leaf(&self, lod0_vertex_count: u32) -> u32 {
        (self.min_verts_to_split_node / lod0_vertex_count.max(1)).clamp(1, self.max_instances_per_leaf.max(1))
    }
}

const LEAF: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq)]
struct ClusterNode {
    /// Box of the instance sphere centres (component space).
    centers: Aabb,
    /// Largest instance sphere radius (component space).
    max_radius: f32,
    first: u32,
    count: u32,
    /// Right child (the left child is the next node); `LEAF` for leaves.
    right: u32,
}

/// What a rebuild needs, copied from the store so the build can run on
/// another thread while the store keeps changing.
#[derive(Clone, Debug)]
pub struct TreeSnapshot {
    transforms: Vec<Affine3A>,
    ids: Vec<InstanceId>,
    generation: u64,
    mesh_bounds: Bounds,
    leaf_size: u32,
}

impl TreeSnapshot {
    /// Copies the store's transforms and ids (two memcpys).
    pub fn capture(store: &InstanceStore, mesh: &InstancedMesh, settings: &ClusterTreeSettings) -> Self {
        Self {
            transforms: store.transforms().to_vec(),
            ids: store.ids().to_vec(),
            generation: store.generation(),
            mesh_bounds: *mesh.bounds(),
            leaf_size: settings.instances_per_leaf(mesh.lod0_vertex_count()),
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }
}

/// What one tree cull did (for tests, stats and benches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeCullStats {
    pub nodes_visited: u32,
    pub leaves_visible: u32,
    pub leaves_fully_inside: u32,
    /// Instances culled flat because they changed after the tree was built.
    pub stale_instances: u32,
    /// The tree did not match the mesh or store; everything was culled flat.
    pub fell_back_to_flat: bool,
    /// Nodes skipped whole because the occlusion buffer hid their box.
    pub nodes_occluded: u32,
    /// Instances inside the frustum and cull distance that the occlusion
    /// buffer hid (by their node's box or their own sphere).
    pub occluded_instances: u32,
}

/// A cluster tree over one store's instances at one generation.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterTree {
    nodes: Vec<ClusterNode>,
    /// Instance index per entry, as at `generation`.
    order: Vec<u32>,
    /// Stable id per entry.
    ids: Vec<InstanceId>,
    generation: u64,
    mesh_bounds: Bounds,
    leaf_size: u32,
}

/// Leaves per parallel task when culling (fixed, so output order is too).
const LEAVES_PER_TASK: usize = 64;

impl ClusterTree {
    /// Builds synchronously.
    pub fn build(store: &InstanceStore, mesh: &InstancedMesh, settings: &ClusterTreeSettings) -> Self {
        Self::from_snapshot(TreeSnapshot::capture(store, mesh, settings))
    }

    /// Builds from a snapshot (what the background builder runs).
    pub fn from_snapshot(s: TreeSnapshot) -> Self {
        let spheres: Vec<Vec4> = s
            .transforms
            .par_iter()
            .with_min_len(4096)
            .map(|t| {
                let (c, r) = instance_sphere(&s.mesh_bounds, t);
                c.extend(r)
            })
            .collect();
        let mut order: Vec<u32> = (0..spheres.len() as u32).collect();
        let nodes = if order.is_empty() { Vec::new() } else { build_subtree(&mut order, 0, &spheres, s.leaf_size as usize) };
        let ids = order.iter().map(|&i| s.ids[i as usize]).collect();
        Self { nodes, order, ids, generation: s.generation, mesh_bounds: s.mesh_bounds, leaf_size: s.leaf_size }
    }

    /// The store generation this tree describes.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn leaf_size(&self) -> u32 {
        self.leaf_size
    }

    pub fn instance_count(&self) -> usize {
        self.order.len()
    }

    /// The permutation of instance indices the tree holds (leaves in order).
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// Whether the store has changed (for culling) since this tree was built.
    pub fn is_stale_for(&self, store: &InstanceStore) -> bool {
        self.generation != store.generation()
    }

    /// Culls the store through the tree; see the module docs.
    pub fn cull(&self, store: &InstanceStore, culler: &InstanceCuller<'_>) -> (CullOutput, TreeCullStats) {
        let mut out = CullOutput::default();
        let stats = self.cull_into(store, culler, &mut out);
        (out, stats)
    }

    /// [`Self::cull`] into a reused output.
    pub fn cull_into(&self, store: &InstanceStore, culler: &InstanceCuller<'_>, out: &mut CullOutput) -> TreeCullStats {
        let fresh = !self.is_stale_for(store);
        let mut stats = TreeCullStats::default();
        if culler.mesh_bounds != self.mesh_bounds || (fresh && self.order.len() != store.instance_count() as usize) {
            cull_instances_into(store, culler, out);
            stats.fell_back_to_flat = true;
            return stats;
        }
        out.reset(culler.lod_count());
        let transforms = store.transforms();
        let resolve = |e: usize| -> Option<u32> {
            if fresh {
                return Some(self.order[e]);
            }
            store.index_of(self.ids[e]).filter(|&i| store.modified_generation(i) <= self.generation)
        };
        self.cull_entries(culler, None, culler.lod_count(), resolve, |i| transforms[i as usize], out, &mut stats);

        if !fresh {
            for index in store.cull_edits() {
                if store.modified_generation(index) > self.generation {
                    stats.stale_instances += 1;
                    if let Some((lod, fade)) = culler.classify(&transforms[index as usize], true) {
                        out.push(index, lod, fade);
                    }
                }
            }
        }
        stats
    }

    /// The mesh bounds the tree's spheres were built with.
    pub fn mesh_bounds(&self) -> &Bounds {
        &self.mesh_bounds
    }

    /// The top-down walk and the leaf tests over any instance source (the
    /// game side's store, or the render side's copy, see [`crate::hism`]):
    /// `resolve(e)` maps tree entry `e` to the instance index to test
    /// (`None`: skip it, the caller culls it flat), `transform(i)` is
    /// instance `i`'s component-space transform. Appends to `out`, which
    /// must already have one bin per LOD. With `occlusion`, occluded nodes
    /// and instances are left out and counted (module docs).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cull_entries<R, T>(
        &self,
        culler: &InstanceCuller<'_>,
        occlusion: Option<&OcclusionBuffer>,
        lod_count: usize,
        resolve: R,
        transform: T,
        out: &mut CullOutput,
        stats: &mut TreeCullStats,
    ) where
        R: Fn(usize) -> Option<u32> + Sync,
        T: Fn(u32) -> Affine3A + Sync,
    {
        // Top-down: collect visible leaves (and occluded nodes) with their
        // "inside" flag, in left-to-right order.
        let mut leaves: Vec<Visit> = Vec::new();
        let mut stack: Vec<(u32, bool)> = Vec::new();
        if !self.nodes.is_empty() {
            stack.push((0, false));
        }
        while let Some((n, inside)) = stack.pop() {
            stats.nodes_visited += 1;
            let node = &self.nodes[n as usize];
            let inside = match node_test(node, culler, !inside) {
                NodeTest::Outside => continue,
                NodeTest::Inside => true,
                NodeTest::Intersects => inside,
            };
            if occlusion.is_some_and(|o| o.test_box(&node_world_box(node, culler))) {
                stats.nodes_occluded += 1;
                leaves.push(Visit { node: n, inside, occluded: true });
            } else if node.right == LEAF {
                stats.leaves_visible += 1;
                stats.leaves_fully_inside += u32::from(inside);
                leaves.push(Visit { node: n, inside, occluded: false });
            } else {
                stack.push((node.right, inside));
                stack.push((n + 1, inside));
            }
        }

        // Per group: the instances drawn, and those occlusion hid.
        let cull_leaves = |group: &[Visit], part: &mut CullOutput| -> u32 {
            let mut occluded = 0;
            for v in group {
                let node = &self.nodes[v.node as usize];
                for e in node.first as usize..(node.first + node.count) as usize {
                    let Some(index) = resolve(e) else { continue };
                    let local = transform(index);
                    let Some((lod, fade)) = culler.classify(&local, !v.inside) else { continue };
                    if v.occluded || occlusion.is_some_and(|o| culler.occluded(&local, o)) {
                        occluded += 1;
                    } else {
                        part.push(index, lod, fade);
                    }
                }
            }
            occluded
        };
        if leaves.len() <= LEAVES_PER_TASK {
            stats.occluded_instances += cull_leaves(&leaves, out);
        } else {
            let parts: Vec<(CullOutput, u32)> = leaves
                .par_chunks(LEAVES_PER_TASK)
                .map(|group| {
                    let mut part = CullOutput::new(lod_count);
                    let occluded = cull_leaves(group, &mut part);
                    (part, occluded)
                })
                .collect();
            for (part, occluded) in &parts {
                out.append(part);
                stats.occluded_instances += occluded;
            }
        }
    }
}

/// A node the walk reached: a visible leaf, or a node (leaf or not) whose
/// box the occlusion buffer hides.
#[derive(Clone, Copy)]
struct Visit {
    node: u32,
    /// Wholly inside the frustum: its instances skip the plane tests.
    inside: bool,
    occluded: bool,
}

/// A node's world-space box: its centres box, transformed, grown by its
/// largest radius (what [`node_test`] tests against the planes).
fn node_world_box(node: &ClusterNode, culler: &InstanceCuller<'_>) -> Aabb {
    let world = node.centers.transformed(&culler.component_to_world);
    let radius = node.max_radius * culler.component_scale;
    Aabb::new(world.min - radius, world.max + radius)
}

enum NodeTest {
    Outside,
    Inside,
    Intersects,
}

/// Conservative node test; see the module docs for the margin.
fn node_test(node: &ClusterNode, culler: &InstanceCuller<'_>, test_planes: bool) -> NodeTest {
    let world = node.centers.transformed(&culler.component_to_world);
    let (c, e) = (world.center(), world.extent());
    let radius = node.max_radius * culler.component_scale;
    if culler.distances.end() > 0.0 {
        let origin = culler.view.origin();
        let nearest = origin.clamp(world.min, world.max).distance(origin);
        if nearest - 1e-5 * (nearest + 1.0) >= culler.distances.end() {
            return NodeTest::Outside;
        }
    }
    if !test_planes {
        return NodeTest::Intersects;
    }
    let mut inside = true;
    for p in culler.view.frustum().planes() {
        let n = p.truncate();
        let d = n.dot(c) + p.w;
        let reach = n.abs().dot(e) + radius;
        let margin = 1e-5 * (d.abs() + reach + 1.0);
        if d + reach < -margin {
            return NodeTest::Outside;
        }
        if d - reach < margin {
            inside = false;
        }
    }
    if inside {
        NodeTest::Inside
    } else {
        NodeTest::Intersects
    }
}

/// Subtrees above this many instances build their halves in parallel.
const PARALLEL_BUILD_MIN: usize = 64 * 1024;

/// Builds the subtree over `order` (entries `first..first + order.len()`)
/// into its own node vector (root at 0). Large subtrees build their two
/// halves with `rayon::join` and splice them in depth-first order, so the
/// result is the same node for node as a sequential build, whatever the
/// thread count.
fn build_subtree(order: &mut [u32], first: u32, spheres: &[Vec4], leaf: usize) -> Vec<ClusterNode> {
    if order.len() < PARALLEL_BUILD_MIN {
        let mut nodes = Vec::with_capacity(2 * order.len() / leaf + 1);
        build_node(&mut nodes, order, first, spheres, leaf);
        return nodes;
    }
    let (root, mid) = split(order, first, spheres);
    let (left, right) = order.split_at_mut(mid);
    let (left, right) =
        rayon::join(|| build_subtree(left, first, spheres, leaf), || build_subtree(right, first + mid as u32, spheres, leaf));
    let mut nodes = Vec::with_capacity(1 + left.len() + right.len());
    nodes.push(ClusterNode { right: 1 + left.len() as u32, ..root });
    let offset = |base: u32| move |n: &ClusterNode| ClusterNode { right: if n.right == LEAF { LEAF } else { n.right + base }, ..*n };
    nodes.extend(left.iter().map(offset(1)));
    nodes.extend(right.iter().map(offset(1 + left.len() as u32)));
    nodes
}

/// A leaf node over `order`: the box of the centres, the largest radius.
fn leaf_node(order: &[u32], first: u32, spheres: &[Vec4]) -> ClusterNode {
    let mut centers = Aabb::EMPTY;
    let mut max_radius = 0.0f32;
    for &i in order {
        let s = spheres[i as usize];
        let c = s.truncate();
        centers = centers.union(Aabb::new(c, c));
        max_radius = max_radius.max(s.w);
    }
    ClusterNode { centers, max_radius, first, count: order.len() as u32, right: LEAF }
}

/// The node over `order` and its median split along the longest axis of
/// the centres (ties broken by index, so deterministic).
fn split(order: &mut [u32], first: u32, spheres: &[Vec4]) -> (ClusterNode, usize) {
    let node = leaf_node(order, first, spheres);
    let size: Vec3 = node.centers.max - node.centers.min;
    let axis = if size.x >= size.y && size.x >= size.z {
        0
    } else if size.y >= size.z {
        1
    } else {
        2
    };
    let mid = order.len() / 2;
    order.select_nth_unstable_by(mid, |&a, &b| spheres[a as usize][axis].total_cmp(&spheres[b as usize][axis]).then(a.cmp(&b)));
    (node, mid)
}

/// Sequential build, appending to `nodes`; returns the subtree's root index.
fn build_node(nodes: &mut Vec<ClusterNode>, order: &mut [u32], first: u32, spheres: &[Vec4], leaf: usize) -> u32 {
    let index = nodes.len() as u32;
    if order.len() <= leaf {
        nodes.push(leaf_node(order, first, spheres));
        return index;
    }
    let (node, mid) = split(order, first, spheres);
    nodes.push(node);
    let (left, right) = order.split_at_mut(mid);
    build_node(nodes, left, first, spheres, leaf);
    let r = build_node(nodes, right, first + mid as u32, spheres, leaf);
    nodes[index as usize].right = r;
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_size_follows_ue() {
        let s = ClusterTreeSettings::default();
        assert_eq!(s.instances_per_leaf(8), 1024);
        assert_eq!(s.instances_per_leaf(512), 16);
        assert_eq!(s.instances_per_leaf(100_000), 1);
        assert_eq!(s.instances_per_leaf(0), 1024);
    }

    #[test]
    fn parallel_build_equals_sequential() {
        let mesh = InstancedMesh::simple(Bounds::new(Vec3::ZERO, Vec3::ONE, 3f32.sqrt()), 512, 1536, &[1.0]).unwrap();
        let mut store = InstanceStore::new(*mesh.bounds());
        let n = 3 * PARALLEL_BUILD_MIN as u32;
        let ts: Vec<Affine3A> = (0..n)
            .map(|i| {
                let h = crate::id::mix64(u64::from(i));
                Affine3A::from_translation(Vec3::new((h % 1000) as f32, 0.0, ((h >> 20) % 1000) as f32))
            })
            .collect();
        store.add_instances(&ts).unwrap();
        let settings = ClusterTreeSettings::default();
        let parallel = ClusterTree::build(&store, &mesh, &settings);
        let mut order: Vec<u32> = (0..n).collect();
        let spheres: Vec<Vec4> = ts
            .iter()
            .map(|t| {
                let (c, r) = instance_sphere(mesh.bounds(), t);
                c.extend(r)
            })
            .collect();
        let mut nodes = Vec::new();
        build_node(&mut nodes, &mut order, 0, &spheres, parallel.leaf_size() as usize);
        assert_eq!(parallel.nodes, nodes);
        assert_eq!(parallel.order, order);
    }

    #[test]
    fn tree_covers_every_instance_once() {
        let mesh = InstancedMesh::simple(Bounds::new(Vec3::ZERO, Vec3::ONE, 3f32.sqrt()), 512, 1536, &[1.0]).unwrap();
        let mut store = InstanceStore::new(*mesh.bounds());
        let ts: Vec<Affine3A> = (0..1000).map(|i| Affine3A::from_translation(Vec3::new((i % 37) as f32, (i / 37) as f32, 0.0))).collect();
        store.add_instances(&ts).unwrap();
        let tree = ClusterTree::build(&store, &mesh, &ClusterTreeSettings::default());
        let mut seen = tree.order().to_vec();
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<u32>>());
        for n in &tree.nodes {
            if n.right == LEAF {
                assert!(n.count as usize <= tree.leaf_size as usize);
            }
        }
    }
}
