//! Per-instance culling and LOD: the CPU reference the GPU pass mirrors.
//!
//! UE's plain ISM culls and picks a LOD for the whole component from the
//! union bounds: one near instance makes 100,000 far ones draw at LOD 0, and
//! instances past the cull distance are still drawn, faded to nothing in the
//! vertex shader. (HISM and UE 5's GPU-driven path fix this with a tree or
//! GPU culling.) Here every instance is tested on its own:
//!
//! 1. **Sphere vs frustum.** The instance's sphere ([`instance_sphere`]
//!    under the component transform, radius scaled by the component's
//!    largest axis scale) against the six planes of the view-projection
//!    matrix (Gribb–Hartmann, Vulkan clip depth `0..w`; a plane with zero
//!    normal, as infinite far planes give, is dropped).
//! 2. **Cull distance.** Distance from the view origin to the sphere centre:
//!    culled at or past `end` (`end == 0` disables it); the fade factor is 1
//!    up to `start`, 0 at `end`, linear between — UE's
//!    `InstanceStartCullDistance` / `InstanceEndCullDistance`. When
//!    `start < end` ([`CullDistances::has_fade_band`]) the proxy draws
//!    opaque instances with a dithered fade (the instanced vertex factory's
//!    dithered variant): instead of popping at `end`, an instance covers a
//!    fraction `fade` of its pixels (a 4×4 ordered dither,
//!    `renderer::vertex_factory::dither_threshold`), the same pixels in the
//!    depth, shadow and base passes.
//! 3. **LOD.** UE's `ComputeBoundsScreenSize`:
//!    `multiple = max(0.5·proj[0][0], 0.5·proj[1][1])`,
//!    `screen size = 2 · multiple · radius / max(1, distance)`; the LOD is the
//!    highest `i` with `screen_sizes[i] > screen size`, else 0 (UE's
//!    `ComputeStaticMeshLOD`), and never below the component's minimum LOD
//!    (UE's `MinLOD`, clamped to the mesh's last LOD: [`select_lod`]).
//! 4. **Dithered LOD transition** (opt-in, [`LodDitherBand`]): within a
//!    band around each threshold the instance is drawn at both neighbouring
//!    LODs ([`select_lod_dithered`]); the finer LOD's share of the pixels
//!    rises linearly from 0 to 1 across the band and the two copies'
//!    dither masks are complementary
//!    (`renderer::vertex_factory::dithered_lod_fade`), so nothing pops at
//!    the threshold and no pixel is drawn twice or left out. Each copy is binned in its LOD, so the
//!    counts include both.
//!
//! Visible instances are compacted into one index list per LOD, with their
//! fade factors; [`CullOutput::draw_args`] turns the counts into one
//! `DrawIndexedIndirectArgs` per LOD and section — what the GPU pass
//! writes itself on its path.
//!
//! Large stores are split into fixed 16 K-instance chunks culled in parallel
//! (rayon) and concatenated in chunk order, so the output — order included —
//! does not depend on the thread count. [`crate::cluster_tree`] calls the
//! same per-instance test at its leaves, which is why it agrees exactly.

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Mat4, Vec3};
use rayon::prelude::*;

use crate::bounds::{instance_sphere, max_scale, Bounds};
use crate::error::{InstancingError, Result};
use crate::gpu_data::InstanceGpuData;
use crate::instance_data::InstanceStore;
use crate::mesh::InstancedMesh;

/// Instances per parallel chunk; fixed so that output order is too.
pub const CULL_CHUNK: usize = 16 * 1024;

/// The workspace's one frustum (`renderer::Frustum`): six normalised planes
/// `(n, d)`, a point inside when `n·p + d >= 0`; a plane a projection does
/// not have (an infinite far plane) is zero and culls nothing.
pub use renderer::Frustum;

/// A view as culling sees it: frustum, origin and LOD screen multiple.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CullView {
    frustum: Frustum,
    origin: Vec3,
    screen_multiple: f32,
}

impl CullView {
    /// From a world→view matrix and a projection (Vulkan depth `0..1`,
    /// either handedness, reversed or infinite depth allowed).
    pub fn new(view: Mat4, projection: Mat4) -> Result<Self> {
        if !view.is_finite() || !projection.is_finite() || view.determinant() == 0.0 {
            return Err(InstancingError::NonFiniteView);
        }
        let origin = view.inverse().w_axis.truncate();
        Ok(Self {
            frustum: Frustum::from_view_proj(&(projection * view)),
            origin,
            screen_multiple: (0.5 * projection.x_axis.x).max(0.5 * projection.y_axis.y),
        })
    }

    /// A right-handed perspective camera at `eye` looking at `target`.
    pub fn look_at(eye: Vec3, target: Vec3, up: Vec3, fov_y: f32, aspect: f32, near: f32, far: f32) -> Result<Self> {
        Self::new(
            glam::camera::rh::view::look_at_mat4(eye, target, up),
            glam::camera::rh::proj::directx::perspective(fov_y, aspect, near, far),
        )
    }

    /// A view whose distances and LOD are measured from another view's
    /// origin and screen multiple (the proxy's shadow views).
    pub(crate) fn from_parts(frustum: Frustum, origin: Vec3, screen_multiple: f32) -> Self {
        Self { frustum, origin, screen_multiple }
    }

    pub fn frustum(&self) -> &Frustum {
        &self.frustum
    }

    pub fn origin(&self) -> Vec3 {
        self.origin
    }

    pub fn screen_multiple(&self) -> f32 {
        self.screen_multiple
    }
}

/// UE's `InstanceStartCullDistance` / `InstanceEndCullDistance`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CullDistances {
    start: f32,
    end: f32,
}

impl CullDistances {
    /// No distance culling (UE's default 0 / 0).
    pub const NONE: CullDistances = CullDistances { start: 0.0, end: 0.0 };

    /// `0 <= start <= end`, finite; `end == 0` turns distance culling off.
    pub fn new(start: f32, end: f32) -> Result<Self> {
        let ok = start.is_finite() && end.is_finite() && start >= 0.0 && end >= 0.0 && (end == 0.0 || start <= end);
        if !ok {
            return Err(InstancingError::InvalidCullDistances { start, end });
        }
        Ok(Self { start, end })
    }

    pub fn start(&self) -> f32 {
        self.start
    }

    /// Both distances times `scale` (`r.ViewDistanceScale`; more than 0 and
    /// finite, or the distances stay as they are): off stays off.
    pub fn scaled(self, scale: f32) -> Self {
        if !(scale.is_finite() && scale > 0.0) {
            return self;
        }
        let (start, end) = (self.start * scale, self.end * scale);
        if start.is_finite() && end.is_finite() {
            Self { start, end }
        } else {
            self
        }
    }

    pub fn end(&self) -> f32 {
        self.end
    }

    /// Culled at or past the end distance.
    #[inline]
    pub fn culls(&self, distance: f32) -> bool {
        self.end > 0.0 && distance >= self.end
    }

    /// Whether instances fade (dithered) between the distances rather than
    /// pop at `end`: distance culling on and `start < end` (UE fades only
    /// then too).
    pub fn has_fade_band(&self) -> bool {
        self.end > 0.0 && self.start < self.end
    }

    /// 1 up to `start`, 0 at `end`, linear between.
    #[inline]
    pub fn fade(&self, distance: f32) -> f32 {
        if self.end <= 0.0 || distance <= self.start {
            1.0
        } else if distance >= self.end {
            0.0
        } else {
            ((self.end - distance) / (self.end - self.start)).clamp(0.0, 1.0)
        }
    }
}

/// UE's `ComputeBoundsScreenSize`: the sphere's projected diameter as a
/// fraction of the screen.
#[inline]
pub fn bounds_screen_size(distance: f32, radius: f32, screen_multiple: f32) -> f32 {
    2.0 * screen_multiple * radius / distance.max(1.0)
}

/// UE's `ComputeStaticMeshLOD`: the highest LOD whose screen size is still
/// above `screen_size`, else 0.
#[inline]
pub fn lod_for_screen_size(screen_size: f32, screen_sizes: &[f32]) -> u8 {
    (1..screen_sizes.len()).rev().find(|&i| screen_sizes[i] > screen_size).unwrap_or(0) as u8
}

/// [`lod_for_screen_size`], but never below `min_lod` (UE's `MinLOD`),
/// which is clamped to the last LOD (`screen_sizes.len() - 1`): a minimum
/// past a mesh's LODs draws its last one.
#[inline]
pub fn select_lod(screen_size: f32, screen_sizes: &[f32], min_lod: u8) -> u8 {
    lod_for_screen_size(screen_size, screen_sizes).max(clamp_min_lod(min_lod, screen_sizes.len()))
}

/// The dithered LOD transition band of a component (UE's dithered LOD
/// transition): within `band / 2 · S` of each LOD threshold `S`
/// (in screen size, `S` one of the mesh's `screen_sizes[1..]`) an instance
/// is drawn at both neighbouring LODs with complementary dither masks
/// ([`select_lod_dithered`]). `0` ([`LodDitherBand::OFF`], the default)
/// switches LODs abruptly at the thresholds, as UE does without it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LodDitherBand {
    band: f32,
}

impl LodDitherBand {
    /// No transition: LODs switch at the thresholds (the default).
    pub const OFF: LodDitherBand = LodDitherBand { band: 0.0 };
    /// The band [`crate::InstancedStaticMeshComponent::set_dithered_lod_transition`]
    /// documents as a good start: ±10 % of each threshold's screen size.
    pub const DEFAULT_BAND: f32 = 0.2;

    /// `band` in `0..=1`, finite: the width of the band around each
    /// threshold as a fraction of the threshold's screen size; `0` is off.
    /// Anything else is [`InstancingError::InvalidLodDitherBand`].
    pub fn new(band: f32) -> Result<Self> {
        if !(band.is_finite() && (0.0..=1.0).contains(&band)) {
            return Err(InstancingError::InvalidLodDitherBand { band });
        }
        Ok(Self { band })
    }

    pub fn band(&self) -> f32 {
        self.band
    }

    /// Whether instances near a threshold are drawn at two LODs.
    pub fn is_on(&self) -> bool {
        self.band > 0.0
    }
}

/// An instance inside a [`LodDitherBand`]: drawn at LOD `finer` and at
/// `finer + 1`. The finer copy covers the fraction `finer_share` of its
/// pixels, the coarser one exactly the rest (see
/// [`crate::InstanceGpuData::lod_dither_flags`] and
/// `renderer::vertex_factory::dithered_fade_keeps`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodBlend {
    pub finer: u8,
    /// In `0..=1`: 0 at the band's small-screen-size edge, 1 at its
    /// large one, linear (so monotone) in screen size between.
    pub finer_share: f32,
}

/// The LOD (or pair of LODs) one instance is drawn at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodChoice {
    /// The LOD [`select_lod`] picks: the one drawn without a transition,
    /// and in a transition the *primary* copy (the one translucent
    /// sections draw, with no dither).
    pub lod: u8,
    /// In a transition band: the two LODs and the finer one's share.
    pub blend: Option<LodBlend>,
}

impl LodChoice {
    /// A single LOD, no transition.
    pub fn single(lod: u8) -> Self {
        Self { lod, blend: None }
    }

    /// The copies to draw: `(lod, flags)` with the
    /// [`crate::InstanceGpuData`] LOD-dither flags to OR into the
    /// instance's (0 outside a band). One or two, finer first.
    pub fn copies(&self) -> impl Iterator<Item = (u8, u32)> {
        let (a, b) = match self.blend {
            None => ((self.lod, 0), None),
            Some(bl) => {
                let flags = |finer: bool, lod: u8| InstanceGpuData::lod_dither_flags(finer, lod == self.lod, bl.finer_share);
                ((bl.finer, flags(true, bl.finer)), Some((bl.finer + 1, flags(false, bl.finer + 1))))
            }
        };
        std::iter::once(a).chain(b)
    }
}

/// [`select_lod`] with a [`LodDitherBand`]: also the neighbouring LOD and
/// the finer LOD's share when `screen_size` lies within `band / 2 · S` of
/// a threshold `S = screen_sizes[i]` (`i ≥ 1`) between two LODs both
/// allowed by `min_lod`. The finer share is
/// `(screen_size − S·(1 − band/2)) / (S · band)`: 0 and 1 at the band's
/// edges, ½ at the threshold, where the plain LOD switches. Outside every
/// band (or with the band off) exactly one LOD is drawn. Bands wider than
/// the gap between two thresholds overlap; there the band of the threshold
/// above the plain LOD's screen-size range wins.
#[inline]
pub fn select_lod_dithered(screen_size: f32, screen_sizes: &[f32], min_lod: u8, band: LodDitherBand) -> LodChoice {
    let lod = select_lod(screen_size, screen_sizes, min_lod);
    if !band.is_on() {
        return LodChoice::single(lod);
    }
    let min = clamp_min_lod(min_lod, screen_sizes.len());
    let h = 0.5 * band.band;
    let share = |s: f32| ((screen_size - s * (1.0 - h)) / (s * band.band)).clamp(0.0, 1.0);
    let l = usize::from(lod);
    // Just below the threshold into this LOD: blends with the finer one.
    if lod > min {
        let s = screen_sizes[l];
        if screen_size >= s * (1.0 - h) && screen_size < s {
            return LodChoice { lod, blend: Some(LodBlend { finer: lod - 1, finer_share: share(s) }) };
        }
    }
    // Just above the threshold into the next LOD: blends with the coarser one.
    if l + 1 < screen_sizes.len() {
        let s = screen_sizes[l + 1];
        if screen_size >= s && screen_size < s * (1.0 + h) {
            return LodChoice { lod, blend: Some(LodBlend { finer: lod, finer_share: share(s) }) };
        }
    }
    LodChoice::single(lod)
}

/// `min_lod` clamped to a mesh of `lod_count` LODs (its last LOD at most).
#[inline]
pub fn clamp_min_lod(min_lod: u8, lod_count: usize) -> u8 {
    min_lod.min(lod_count.saturating_sub(1).min(usize::from(u8::MAX)) as u8)
}

/// `VkDrawIndexedIndirectCommand`, one per LOD and section.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct DrawIndexedIndirectArgs {
    pub index_count: u32,
    pub instance_count: u32,
    pub first_index: u32,
    pub vertex_offset: i32,
    pub first_instance: u32,
}

/// The visible instances of one LOD: indices into the store, and fades.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LodBin {
    pub instances: Vec<u32>,
    pub fades: Vec<f32>,
    /// The LOD-dither flags of each entry ([`LodChoice::copies`]; 0
    /// outside a transition band).
    pub flags: Vec<u32>,
}

/// The result of culling one component for one view.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CullOutput {
    /// One bin per mesh LOD.
    pub lods: Vec<LodBin>,
}

impl CullOutput {
    pub fn new(lod_count: usize) -> Self {
        Self { lods: vec![LodBin::default(); lod_count] }
    }

    /// Empties the bins, keeping their allocations.
    pub fn reset(&mut self, lod_count: usize) {
        self.lods.resize_with(lod_count, LodBin::default);
        for b in &mut self.lods {
            b.instances.clear();
            b.fades.clear();
            b.flags.clear();
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, index: u32, choice: LodChoice, fade: f32) {
        for (lod, flags) in choice.copies() {
            let b = &mut self.lods[lod as usize];
            b.instances.push(index);
            b.fades.push(fade);
            b.flags.push(flags);
        }
    }

    pub(crate) fn append(&mut self, other: &CullOutput) {
        for (a, b) in self.lods.iter_mut().zip(&other.lods) {
            a.instances.extend_from_slice(&b.instances);
            a.fades.extend_from_slice(&b.fades);
            a.flags.extend_from_slice(&b.flags);
        }
    }

    /// Visible instances per LOD. In a dithered LOD transition an instance
    /// counts once in each of its two LODs (both copies are drawn).
    pub fn counts(&self) -> Vec<u32> {
        self.lods.iter().map(|b| b.instances.len() as u32).collect()
    }

    pub fn visible_count(&self) -> usize {
        self.lods.iter().map(|b| b.instances.len()).sum()
    }

    /// The compacted instance-index buffer: LOD 0's list, then LOD 1's, ...
    pub fn instance_buffer(&self) -> Vec<u32> {
        self.lods.iter().flat_map(|b| b.instances.iter().copied()).collect()
    }

    /// One draw per LOD and section, LOD-major; LOD `l`'s draws start at
    /// its offset in [`Self::instance_buffer`]. Empty LODs keep their
    /// (zero-instance) draws so the layout depends on the mesh alone.
    pub fn draw_args(&self, mesh: &InstancedMesh) -> Vec<DrawIndexedIndirectArgs> {
        let mut first_instance = 0;
        let mut out = Vec::new();
        for (lod, bin) in mesh.lods().iter().zip(&self.lods) {
            let count = bin.instances.len() as u32;
            out.extend(lod.sections.iter().map(|s| DrawIndexedIndirectArgs {
                index_count: s.index_count,
                instance_count: count,
                first_index: s.first_index,
                vertex_offset: s.vertex_offset,
                first_instance,
            }));
            first_instance += count;
        }
        out
    }
}

/// One culling request, checked and prepared once: a mesh's bounds and LOD
/// screen sizes, the component's transform, a view and the cull distances.
/// Every CPU cull ([`cull_instances`], [`cull_ue_mode`], the cluster tree's
/// [`crate::ClusterTree::cull`]) takes one, so the request is validated in
/// one place (a degenerate component transform is refused here) and the
/// per-view constants are computed once, not per instance.
#[derive(Clone, Copy, Debug)]
pub struct InstanceCuller<'a> {
    pub(crate) mesh_bounds: Bounds,
    pub(crate) screen_sizes: &'a [f32],
    pub(crate) component_to_world: Affine3A,
    pub(crate) component_scale: f32,
    pub(crate) view: CullView,
    pub(crate) distances: CullDistances,
    pub(crate) min_lod: u8,
    pub(crate) lod_dither: LodDitherBand,
}

impl<'a> InstanceCuller<'a> {
    /// The request to cull `mesh`'s instances placed by `component_to_world`
    /// for `view`; [`InstancingError::DegenerateTransform`] (or another
    /// transform error) when the component transform cannot place them.
    pub fn new(mesh: &'a InstancedMesh, component_to_world: &Affine3A, view: &CullView, distances: CullDistances) -> Result<Self> {
        crate::transform::validate_transform(component_to_world)?;
        Ok(Self {
            mesh_bounds: *mesh.bounds(),
            screen_sizes: mesh.screen_sizes(),
            component_to_world: *component_to_world,
            component_scale: max_scale(&component_to_world.matrix3),
            view: *view,
            distances,
            min_lod: 0,
            lod_dither: LodDitherBand::OFF,
        })
    }

    /// The same request with a minimum LOD (UE's `MinLOD`; see
    /// [`select_lod`]: clamped to the mesh's last LOD).
    pub fn with_min_lod(mut self, min_lod: u8) -> Self {
        self.min_lod = min_lod;
        self
    }

    /// The same request with a dithered LOD transition band (see
    /// [`select_lod_dithered`]).
    pub fn with_lod_dither(mut self, band: LodDitherBand) -> Self {
        self.lod_dither = band;
        self
    }

    /// The mesh's LOD count (one output bin each).
    pub fn lod_count(&self) -> usize {
        self.screen_sizes.len()
    }

    /// The per-instance test: `Some((lods, fade))` if visible. With
    /// `test_planes == false` the caller vouches that the sphere is inside
    /// the frustum (the cluster tree's fully-inside shortcut).
    #[inline]
    pub(crate) fn classify(&self, local: &Affine3A, test_planes: bool) -> Option<(LodChoice, f32)> {
        let (c, r) = instance_sphere(&self.mesh_bounds, local);
        let center = self.component_to_world.transform_point3(c);
        let radius = r * self.component_scale;
        if test_planes && self.view.frustum.sphere_outside(center, radius) {
            return None;
        }
        let distance = center.distance(self.view.origin);
        if self.distances.culls(distance) {
            return None;
        }
        let size = bounds_screen_size(distance, radius, self.view.screen_multiple);
        Some((select_lod_dithered(size, self.screen_sizes, self.min_lod, self.lod_dither), self.distances.fade(distance)))
    }

    /// Whether `occlusion` hides the instance placed by `local` (its world
    /// sphere, the one [`Self::classify`] tests against the frustum).
    pub(crate) fn occluded(&self, local: &Affine3A, occlusion: &renderer::OcclusionBuffer) -> bool {
        instance_occluded(occlusion, &self.mesh_bounds, &self.component_to_world, self.component_scale, local)
    }

    fn cull_chunk(&self, first: u32, transforms: &[Affine3A], out: &mut CullOutput) {
        for (i, t) in transforms.iter().enumerate() {
            if let Some((lod, fade)) = self.classify(t, true) {
                out.push(first + i as u32, lod, fade);
            }
        }
    }
}

/// Whether `occlusion` hides the world sphere of the instance placed by
/// `local` in a component placed by `component_to_world` (of largest scale
/// `component_scale`): the one test of every CPU path (flat, cluster tree).
pub(crate) fn instance_occluded(
    occlusion: &renderer::OcclusionBuffer,
    mesh_bounds: &Bounds,
    component_to_world: &Affine3A,
    component_scale: f32,
    local: &Affine3A,
) -> bool {
    let (c, r) = instance_sphere(mesh_bounds, local);
    occlusion.test_sphere(component_to_world.transform_point3(c), r * component_scale)
}

/// Culls every instance of `store` for the culler's view; see the module docs.
pub fn cull_instances(store: &InstanceStore, culler: &InstanceCuller<'_>) -> CullOutput {
    let mut out = CullOutput::default();
    cull_instances_into(store, culler, &mut out);
    out
}

/// [`cull_instances`] into a reused output.
pub fn cull_instances_into(store: &InstanceStore, culler: &InstanceCuller<'_>, out: &mut CullOutput) {
    out.reset(culler.lod_count());
    let transforms = store.transforms();
    if transforms.len() <= CULL_CHUNK {
        culler.cull_chunk(0, transforms, out);
        return;
    }
    let parts: Vec<CullOutput> = transforms
        .par_chunks(CULL_CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut part = CullOutput::new(culler.lod_count());
            culler.cull_chunk((c * CULL_CHUNK) as u32, chunk, &mut part);
            part
        })
        .collect();
    for part in &parts {
        out.append(part);
    }
}

/// What UE's plain ISM does, for comparison: the component is culled as a
/// whole by its (union) bounds, and if visible every instance is drawn at
/// the one LOD the union bounds' screen size selects; instances past the
/// end distance are still drawn (with fade 0, as UE's vertex shader does).
pub fn cull_ue_mode(store: &InstanceStore, culler: &InstanceCuller<'_>) -> CullOutput {
    let mut out = CullOutput::new(culler.lod_count());
    let view = &culler.view;
    let world = store.world_bounds(&culler.component_to_world);
    if store.is_empty() || view.frustum.box_outside(&world.aabb()) {
        return out;
    }
    let size = bounds_screen_size(world.origin.distance(view.origin), world.radius, view.screen_multiple);
    let lod = LodChoice::single(select_lod(size, culler.screen_sizes, culler.min_lod));
    for (i, t) in store.transforms().iter().enumerate() {
        let (c, _) = instance_sphere(&culler.mesh_bounds, t);
        let distance = culler.component_to_world.transform_point3(c).distance(view.origin);
        out.push(i as u32, lod, culler.distances.fade(distance));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fade_is_linear_between_start_and_end() {
        let d = CullDistances::new(100.0, 200.0).unwrap();
        assert_eq!(d.fade(50.0), 1.0);
        assert_eq!(d.fade(100.0), 1.0);
        assert!((d.fade(150.0) - 0.5).abs() < 1e-6);
        assert_eq!(d.fade(200.0), 0.0);
        assert!(!d.culls(199.9) && d.culls(200.0));
        assert!(!CullDistances::NONE.culls(1e30));
        assert!(CullDistances::new(300.0, 200.0).is_err());
        assert!(CullDistances::new(-1.0, 200.0).is_err());
        assert!(CullDistances::new(0.0, f32::NAN).is_err());
    }

    #[test]
    fn lod_selection_matches_ue() {
        let sizes = [1.0, 0.5, 0.25];
        assert_eq!(lod_for_screen_size(2.0, &sizes), 0);
        assert_eq!(lod_for_screen_size(0.6, &sizes), 0);
        assert_eq!(lod_for_screen_size(0.4, &sizes), 1);
        assert_eq!(lod_for_screen_size(0.1, &sizes), 2);
    }

    #[test]
    fn min_lod_is_a_floor_clamped_to_the_last_lod() {
        let sizes = [1.0, 0.5, 0.25];
        assert_eq!(select_lod(2.0, &sizes, 0), 0);
        assert_eq!(select_lod(2.0, &sizes, 1), 1);
        assert_eq!(select_lod(0.1, &sizes, 1), 2, "a farther LOD than the minimum stays");
        assert_eq!(select_lod(2.0, &sizes, 7), 2, "clamped to the last LOD");
        assert_eq!(select_lod(2.0, &[1.0], u8::MAX), 0);
        assert_eq!(clamp_min_lod(5, 0), 0);
    }

    #[test]
    fn lod_dither_band_shares_are_0_and_1_at_the_edges_monotone_inside_and_single_outside() {
        let sizes = [1.0, 0.5, 0.25];
        let band = LodDitherBand::new(0.4).unwrap();
        assert_eq!(LodDitherBand::default(), LodDitherBand::OFF);
        for bad in [-0.1, 1.5, f32::NAN, f32::INFINITY] {
            assert!(matches!(LodDitherBand::new(bad), Err(InstancingError::InvalidLodDitherBand { .. })), "{bad}");
        }
        // Threshold 0.5 (LOD 0 | LOD 1): band 0.4..0.6.
        let at = |size: f32| select_lod_dithered(size, &sizes, 0, band);
        assert_eq!(at(0.4).blend, Some(LodBlend { finer: 0, finer_share: 0.0 }), "the small edge: all coarse");
        assert_eq!(at(0.4).lod, 1);
        let top = at(0.6 - 1e-6).blend.unwrap();
        assert!(top.finer == 0 && (top.finer_share - 1.0).abs() < 1e-4, "the large edge: all fine: {top:?}");
        assert_eq!(at(0.6), LodChoice::single(0), "past the band: the finer LOD alone");
        assert_eq!(at(0.399), LodChoice::single(1), "below the band: the coarser LOD alone");
        let mid = at(0.5);
        assert_eq!((mid.lod, mid.blend.unwrap().finer), (0, 0), "at the threshold the plain LOD switches");
        assert!((mid.blend.unwrap().finer_share - 0.5).abs() < 1e-6);
        // Monotone across the band, and the plain LOD switches at the threshold.
        let mut last = -1.0;
        for k in 0..=400 {
            let size = 0.4 + 0.2 * k as f32 / 400.0;
            let c = at(size);
            assert_eq!(c.lod, select_lod(size, &sizes, 0));
            let share = c.blend.map_or(1.0, |b| b.finer_share);
            assert!(share >= last, "monotone at {size}: {share} < {last}");
            last = share;
            let copies: Vec<(u8, u32)> = c.copies().collect();
            match c.blend {
                Some(_) => {
                    assert_eq!(copies.len(), 2);
                    assert_eq!((copies[0].0, copies[1].0), (0, 1));
                    let primary = copies.iter().filter(|c| c.1 & InstanceGpuData::FLAG_LOD_PRIMARY != 0).count();
                    assert_eq!(primary, 1, "exactly one primary copy");
                    assert_ne!(copies[0].1 & InstanceGpuData::FLAG_LOD_FINER, 0);
                    assert_eq!(copies[1].1 & InstanceGpuData::FLAG_LOD_FINER, 0);
                }
                None => assert_eq!(copies, vec![(c.lod, 0)]),
            }
        }
        // Far from every threshold: one LOD; the band off: one LOD.
        for size in [2.0, 0.75, 0.35, 0.1] {
            assert_eq!(at(size), LodChoice::single(select_lod(size, &sizes, 0)), "{size}");
            assert_eq!(select_lod_dithered(0.5, &sizes, 0, LodDitherBand::OFF), LodChoice::single(0));
        }
        // The second threshold, 0.25 (LOD 1 | LOD 2): band 0.2..0.3.
        assert_eq!(at(0.26).blend.unwrap().finer, 1);
        // MinLOD 1: no blend towards LOD 0.
        assert_eq!(select_lod_dithered(0.45, &sizes, 1, band), LodChoice::single(1));
        assert_eq!(select_lod_dithered(0.55, &sizes, 1, band), LodChoice::single(1));
        // The shares quantise into the flags as unorm16.
        let f = InstanceGpuData::lod_dither_flags(true, true, 0.5);
        assert_eq!(f >> InstanceGpuData::LOD_SHARE_SHIFT, 32768);
        assert_eq!(f & 0xf, 0b1110);
    }

    #[test]
    fn a_fade_band_needs_distance_culling_and_start_before_end() {
        assert!(CullDistances::new(0.0, 10.0).unwrap().has_fade_band());
        assert!(CullDistances::new(5.0, 10.0).unwrap().has_fade_band());
        assert!(!CullDistances::new(10.0, 10.0).unwrap().has_fade_band());
        assert!(!CullDistances::new(10.0, 0.0).unwrap().has_fade_band());
        assert!(!CullDistances::NONE.has_fade_band());
    }

    #[test]
    fn frustum_planes_face_inwards() {
        let v = CullView::look_at(Vec3::ZERO, -Vec3::Z, Vec3::Y, 1.0, 1.0, 0.1, 100.0).unwrap();
        assert_eq!(v.frustum().planes().len(), 6);
        assert!(!v.frustum().sphere_outside(Vec3::new(0.0, 0.0, -10.0), 0.5));
        assert!(v.frustum().sphere_outside(Vec3::new(0.0, 0.0, 10.0), 0.5));
        assert!(v.frustum().sphere_outside(Vec3::new(0.0, 0.0, -200.0), 0.5));
        let inf = CullView::new(
            glam::camera::rh::view::look_at_mat4(Vec3::ZERO, -Vec3::Z, Vec3::Y),
            glam::camera::rh::proj::directx::perspective_infinite_reverse(1.0, 1.0, 0.1),
        )
        .unwrap();
        // The infinite far plane is zero: it culls nothing.
        assert_eq!(inf.frustum().planes().len(), 6);
        assert!(!inf.frustum().sphere_outside(Vec3::new(0.0, 0.0, -1e6), 0.5));
    }
}
