//! The paths of an instanced static mesh that need no GPU work before the
//! passes: CPU culling (flat, or through the cluster tree in HISM mode) and
//! UE mode.
//!
//! Its own file because these paths share nothing with GPU culling but the
//! draw layout: each decides on the render thread, while the proxy's
//! elements are collected, which instances are visible at which LOD, uploads
//! the compacted instances into the frame's ring memory
//! (`MeshElementCollector::upload`) and adds direct instanced draws with the
//! counts it knows. CPU culling is also the path of frames that are only
//! prepared (`MeshElementCollector::records_gpu_work()` false: benchmarks),
//! and the reference the GPU path is tested against. Its per-instance test
//! mirrors `culling::InstanceCuller::classify` and `instance_cull.wgsl`.
//!
//! Occlusion: both CPU culls drop the instances whose sphere the
//! view's occlusion buffer hides (`MeshElementCollector::occlusion`, the
//! renderer's software occlusion of the current frame; the image does not
//! change) and count them under `renderer::OCCLUDED_INSTANCES_COUNTER`:
//! the flat cull tests each frustum-visible instance; the cluster tree
//! (`crate::cluster_tree`) first tests each node's box and skips occluded
//! clusters whole, then tests the instances of the rest one by one. The
//! count is the same on every path (frustum-visible instances hidden), the
//! GPU path's (`proxy/gpu_culling.rs`) included. UE mode culls nothing.

use glam::Mat4;
use rayon::prelude::*;
use renderer::{MeshElementCollector, OcclusionBuffer, SceneView, OCCLUDED_INSTANCES_COUNTER};

use super::{InstancedStaticMeshSceneProxy, ViewCull};
use crate::bounds::{instance_sphere, max_scale};
use crate::cluster_tree::TreeCullStats;
use crate::culling::{bounds_screen_size, instance_occluded, select_lod, select_lod_dithered, CullView, InstanceCuller, LodChoice};
use crate::stats::CullPath;
use crate::vertex_factory::InstanceStreamData;

impl InstancedStaticMeshSceneProxy {
    /// The per-instance test on the CPU: `Some((lods, fade))` when visible.
    /// Mirrors `culling::InstanceCuller::classify` and the GPU pass.
    fn classify(&self, v: &ViewCull, inst: &InstanceStreamData, component_scale: f32) -> Option<(LodChoice, f32)> {
        let (c, r) = instance_sphere(self.culling_mesh.bounds(), &inst.transform());
        let center = self.component_to_world.transform_point3(c);
        let radius = r * component_scale;
        if v.frustum.sphere_outside(center, radius) {
            return None;
        }
        let distance = center.distance(v.origin);
        if v.distances.culls(distance) {
            return None;
        }
        let size = bounds_screen_size(distance, radius, v.multiple);
        let lods = select_lod_dithered(size, self.culling_mesh.screen_sizes(), self.min_lod, self.lod_dither);
        Some((lods, v.distances.fade(distance)))
    }

    /// Whether `occlusion` hides the instance's sphere.
    fn occluded(&self, occlusion: &OcclusionBuffer, inst: &InstanceStreamData, component_scale: f32) -> bool {
        instance_occluded(occlusion, self.culling_mesh.bounds(), &self.component_to_world, component_scale, &inst.transform())
    }

    /// CPU culling for one view: compacted instances (LOD-major), the
    /// visible count per LOD and the instances `occlusion` hid. Fixed
    /// chunks concatenated in order.
    fn cull_cpu(&self, v: &ViewCull, occlusion: Option<&OcclusionBuffer>) -> (Vec<InstanceStreamData>, Vec<u32>, u64) {
        let lods = self.culling_mesh.lod_count();
        let scale = max_scale(&self.component_to_world.matrix3);
        let parts: Vec<(Vec<Vec<InstanceStreamData>>, u64)> = self
            .instances
            .par_chunks(crate::culling::CULL_CHUNK)
            .map(|chunk| {
                let mut bins = vec![Vec::new(); lods];
                let mut occluded = 0;
                for inst in chunk {
                    if let Some((lods, fade)) = self.classify(v, inst, scale) {
                        if occlusion.is_some_and(|o| self.occluded(o, inst, scale)) {
                            occluded += 1;
                            continue;
                        }
                        for (lod, flags) in lods.copies() {
                            bins[lod as usize].push(InstanceStreamData { fade, flags: inst.flags | flags, ..*inst });
                        }
                    }
                }
                (bins, occluded)
            })
            .collect();
        let occluded = parts.iter().map(|(_, o)| o).sum();
        let parts: Vec<Vec<Vec<InstanceStreamData>>> = parts.into_iter().map(|(bins, _)| bins).collect();
        let mut counts = vec![0u32; lods];
        let mut out = Vec::new();
        for (l, count) in counts.iter_mut().enumerate() {
            for p in &parts {
                out.extend_from_slice(&p[l]);
                *count += p[l].len() as u32;
            }
        }
        (out, counts, occluded)
    }

    pub(super) fn draw_ue_mode(
        &self,
        views: &[&SceneView],
        visibility: &[bool],
        culls: &[ViewCull],
        collector: &mut MeshElementCollector<'_, '_>,
    ) {
        let Some((buffer, _)) = self.instance_buffer else { return };
        let n = self.instances.len() as u32;
        let world = self.local_bounds.transformed(&Mat4::from(self.component_to_world));
        let mut per_view = vec![0u64; views.len()];
        let mut per_lod = vec![0u64; self.culling_mesh.lod_count()];
        for (vi, v) in culls.iter().enumerate() {
            if !visibility[vi] {
                continue;
            }
            let size = bounds_screen_size(world.origin.distance(v.origin), world.radius, v.multiple);
            let lod = select_lod(size, self.culling_mesh.screen_sizes(), self.min_lod);
            per_view[vi] = u64::from(n);
            per_lod[lod as usize] += u64::from(n);
            for d in (0..self.draws.len()).filter(|&d| self.draws[d].0 == lod) {
                collector.add_mesh(vi, self.batch(d, (buffer, 0), n, None));
            }
        }
        self.set_visible_stats(collector, CullPath::UeMode, per_view, per_lod);
    }

    /// HISM: one view through the cluster tree (flat before the first
    /// tree), leaving out what `occlusion` hides; compacted instances
    /// LOD-major, counts per LOD, and the tree's stats (occluded instances
    /// among them).
    fn cull_tree(&self, v: &ViewCull, occlusion: Option<&OcclusionBuffer>) -> (Vec<InstanceStreamData>, Vec<u32>, TreeCullStats) {
        let view = CullView::from_parts(v.frustum, v.origin, v.multiple);
        let culler = match InstanceCuller::new(&self.culling_mesh, &self.component_to_world, &view, v.distances) {
            Ok(c) => c.with_min_lod(self.min_lod).with_lod_dither(self.lod_dither),
            Err(e) => {
                log::error!("instanced static mesh: {e}");
                return (Vec::new(), vec![0; self.culling_mesh.lod_count()], TreeCullStats::default());
            }
        };
        let (out, stats) = match &self.tree {
            Some(t) => t.cull(&self.instances, &self.culling_mesh, &culler, occlusion),
            None => crate::hism::cull_flat(&self.instances, &self.culling_mesh, &culler, occlusion),
        };
        let visible = out
            .lods
            .iter()
            .flat_map(|b| b.instances.iter().zip(&b.fades).zip(&b.flags))
            .map(|((&i, &fade), &flags)| {
                let inst = &self.instances[i as usize];
                InstanceStreamData { fade, flags: inst.flags | flags, ..*inst }
            })
            .collect();
        (visible, out.counts(), stats)
    }

    pub(super) fn draw_cpu_culled(
        &self,
        visibility: &[bool],
        culls: &[ViewCull],
        collector: &mut MeshElementCollector<'_, '_>,
    ) -> rhi_vulkan::Result<()> {
        let mut per_view = vec![0u64; culls.len()];
        let mut per_lod = vec![0u64; self.culling_mesh.lod_count()];
        let mut tree_stats = None;
        for (vi, v) in culls.iter().enumerate() {
            if !visibility[vi] {
                continue;
            }
            let (visible, counts) = if self.hierarchical {
                let (visible, counts, stats) = self.cull_tree(v, collector.occlusion(vi));
                collector.add_counter(OCCLUDED_INSTANCES_COUNTER, u64::from(stats.occluded_instances));
                tree_stats.get_or_insert(stats);
                (visible, counts)
            } else {
                let (visible, counts, occluded) = self.cull_cpu(v, collector.occlusion(vi));
                collector.add_counter(OCCLUDED_INSTANCES_COUNTER, occluded);
                (visible, counts)
            };
            per_view[vi] = visible.len() as u64;
            for (a, c) in per_lod.iter_mut().zip(&counts) {
                *a += u64::from(*c);
            }
            if visible.is_empty() {
                continue;
            }
            let stream = collector.upload(bytemuck::cast_slice(&visible))?;
            // Direct draws: the counts are known here (no argument upload).
            for (d, a) in self.args_template(Some(&counts)).iter().enumerate() {
                if a.instance_count > 0 {
                    let lod_stream = (stream.0, stream.1 + u64::from(a.first_instance) * InstanceStreamData::SIZE);
                    collector.add_mesh(vi, self.batch(d, lod_stream, a.instance_count, None));
                }
            }
        }
        let path = if self.hierarchical { CullPath::CpuTree } else { CullPath::Cpu };
        self.set_visible_stats(collector, path, per_view, per_lod);
        self.stats.lock().tree_cull = tree_stats;
        Ok(())
    }
}
