//! The light grid: clustered forward lighting (UE's forward light grid,
//! Bevy's clusters, Godot's clustered renderer).
//!
//! Each main view is cut into clusters ("froxels"): screen tiles of
//! `r.Forward.LightGridPixelSize` pixels × `r.Forward.LightGridSizeZ` depth
//! slices, spaced exponentially between the view's near plane and the
//! farthest visible light. Every frame, on the CPU, the scene's point and
//! spot lights are culled to each view's frustum, then each cluster gets
//! the list of lights whose sphere of influence touches its box (and,
//! for a spot light, whose cone touches the box's bounding sphere). The base
//! and translucency passes find their pixel's cluster and shade only its
//! lights (`base.inc.wgsl`), so a frame's cost follows the lights near each
//! pixel, not the scene's count.
//!
//! A list has no cap: the index buffer holds every (cluster, light) pair
//! (it grows as needed), so no light is ever dropped from a cluster it
//! touches. Lights do not touch mesh draw commands: adding, moving or
//! removing one rebuilds none.
//!
//! **Why on the CPU.** The build is a few independent loops (cull, bin by
//! slice, test boxes) that rayon spreads over the workers; at 100,000
//! lights it costs about two milliseconds (`docs/perf/renderer.md`). The
//! same build in compute passes ([`gpu`], measured by the renderer bench
//! `lights`) takes 3.5–4.8× as long on lavapipe, whose "GPU" is the same
//! two cores, needs atomics and a sort per cluster to stay deterministic,
//! and must size its index buffer before it knows the count. The CPU
//! build keeps the frame's lists inspectable, deterministic (lights in id
//! order in every list) and testable without a device.
//!
//! The buffers: `lights` (every light some view sees, [`LocalLightData`]),
//! `clusters` (per cluster of every view, its first index and count) and
//! `indices` (into `lights`). A view's uniform names its grid's size, its
//! first cluster and the depth slicing ([`ViewGrid`]).

pub mod gpu;

pub(crate) use crate::scene::LocalLightData;
use crate::scene::{Light, SceneLights, SpotCone};
use crate::settings::LightGridSettings;
use crate::view::SceneView;
use glam::{Mat4, Vec2, Vec3, Vec4, Vec4Swizzles};
use rayon::prelude::*;

/// One view's grid as its uniform describes it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ViewGrid {
    /// Tiles across, tiles down, depth slices (all 0: no grid, no local lights).
    pub size: [u32; 3],
    /// The tiles' size in pixels.
    pub tile_pixels: u32,
    /// The view's first cluster in [`LightGrid::clusters`].
    pub base: u32,
    /// slice = floor(log2(depth) · z_scale + z_bias), clamped.
    pub z_scale: f32,
    pub z_bias: f32,
    /// The viewport's top-left corner in pixels.
    pub origin: Vec2,
}

impl ViewGrid {
    /// The slice of view depth `depth`, as the shader computes it.
    pub fn slice_of(&self, depth: f32) -> u32 {
        let s = (depth.max(1e-6).log2() * self.z_scale + self.z_bias).floor();
        s.clamp(0.0, self.size[2].saturating_sub(1) as f32) as u32
    }
}

/// Figures of the frame's grids (the stats file's `clusters`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClusterStats {
    /// Clusters over every main view.
    pub count: u64,
    /// The most lights one cluster lists.
    pub max_lights: u64,
    /// Lights per cluster, on average.
    pub mean_lights: f64,
}

/// What the frame's lights are, by kind (the stats file's `lights`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LightStats {
    /// Directional lights in the scene.
    pub directional: u64,
    /// Point lights in the scene.
    pub point: u64,
    /// Spot lights in the scene.
    pub spot: u64,
    /// Lights asking for shadows.
    pub shadowed: u64,
    /// Point and spot lights inside at least one main view's frustum.
    pub visible: u64,
}

/// The frame's light grid: every main view's clusters and their lists.
#[derive(Clone, Debug, Default)]
pub(crate) struct LightGrid {
    /// The point and spot lights some main view sees.
    pub lights: Vec<LocalLightData>,
    /// Per light of `lights`, its index in the scene's point and spot lights.
    pub scene_indices: Vec<u32>,
    /// Per cluster of every view (views one after another, each slice by
    /// slice, row by row): its first index in `indices` and its count.
    pub clusters: Vec<[u32; 2]>,
    /// Indices into `lights`.
    pub indices: Vec<u32>,
    /// Per cluster (as `clusters`), how many of its lights have a shadow:
    /// they are listed last (`order_shadowed_last`). Empty when no light
    /// has one.
    pub shadowed: Vec<u32>,
    /// Per view of the frame (shadow views get an empty grid).
    pub views: Vec<ViewGrid>,
    pub light_stats: LightStats,
    pub cluster_stats: ClusterStats,
}

/// Lights from which culling and binning run as parallel tasks.
const PARALLEL_LIGHTS: usize = 2048;

/// A light as one view sees it: its index in the frame's `lights`, its
/// bounding sphere in view space (depth along the view, the sphere's center
/// in view coordinates) and, for a spot light, its cone there.
#[derive(Clone, Copy)]
struct ViewLight {
    index: u32,
    center: Vec3,
    radius: f32,
    cone: Option<SpotCone>,
}

impl ViewLight {
    /// Whether the light reaches the cluster box `b`: its sphere touches
    /// the box, and a spot light's cone touches the box's bounding sphere.
    fn touches(&self, b: (Vec3, Vec3)) -> bool {
        sphere_touches_box(self.center, self.radius, b)
            && self.cone.is_none_or(|c| !c.sphere_outside((b.0 + b.1) * 0.5, (b.1 - b.0).length() * 0.5))
    }
}

/// Builds the grid of every main view of `views` (`main[i]`: view i
/// shades) from the scene's `lights`.
pub(crate) fn build_light_grid(
    lights: &SceneLights,
    views: &[SceneView],
    main: &[bool],
    settings: &LightGridSettings,
    parallel: bool,
) -> LightGrid {
    let counts = lights.counts();
    let spheres = lights.spheres();
    let parallel = parallel && spheres.len() >= PARALLEL_LIGHTS;
    // Each main view's lights (indices into the scene's), then the union in order.
    let culled: Vec<Vec<u32>> =
        views.iter().zip(main).map(|(v, &m)| if m { cull_to_view(spheres, v, parallel) } else { Vec::new() }).collect();
    let mut grid = LightGrid::default();
    let mut remap: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    let mut union: Vec<u32> = culled.iter().flatten().copied().collect();
    if culled.iter().filter(|c| !c.is_empty()).count() > 1 {
        union.sort_unstable();
        union.dedup();
    }
    grid.lights = union.iter().map(|&i| lights.gpu()[i as usize]).collect();
    grid.scene_indices = union.clone();
    let single = culled.iter().filter(|c| !c.is_empty()).count() <= 1;
    if !single {
        remap = union.iter().enumerate().map(|(k, &i)| (i, k as u32)).collect();
    }
    for (v, view_lights) in views.iter().zip(&culled) {
        // With one view that sees lights, its k-th light is the frame's k-th.
        let index = |k: usize, i: u32| if single { k as u32 } else { remap[&i] };
        let in_view = view_lights_of(lights, v, view_lights, index);
        append_view_grid(&mut grid, v, &in_view, settings, parallel);
    }
    grid.light_stats = LightStats {
        directional: counts.directional,
        point: counts.point,
        spot: counts.spot,
        shadowed: counts.shadowed,
        visible: grid.lights.len() as u64,
    };
    let total = grid.clusters.len() as u64;
    let max = grid.clusters.iter().map(|c| c[1]).max().unwrap_or(0);
    let mean = if total == 0 { 0.0 } else { grid.indices.len() as f64 / total as f64 };
    grid.cluster_stats = ClusterStats { count: total, max_lights: u64::from(max), mean_lights: mean };
    grid
}

/// The scene's lights `culled` (indices into its arrays) as `view` sees
/// them, each named by `index(k, i)` (its k-th, the scene's i-th).
fn view_lights_of(lights: &SceneLights, view: &SceneView, culled: &[u32], index: impl Fn(usize, u32) -> u32) -> Vec<ViewLight> {
    // Without spot lights, the lights themselves are not read.
    let any_spot = lights.counts().spot > 0;
    culled
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let s = lights.spheres()[i as usize];
            let cone = match any_spot.then(|| &lights.local()[i as usize]) {
                Some(Light::Spot(spot)) => Some(view_space_cone(view, spot.cone())),
                _ => None,
            };
            ViewLight { index: index(k, i), center: view_space(view, s.truncate()), radius: s.w, cone }
        })
        .collect()
}

/// The lights (by their spheres) that touch `view`'s frustum, in order.
fn cull_to_view(spheres: &[Vec4], view: &SceneView, parallel: bool) -> Vec<u32> {
    let frustum = view.frustum();
    let keep = |(i, s): (usize, &Vec4)| (!frustum.sphere_outside(s.truncate(), s.w)).then_some(i as u32);
    if parallel {
        spheres.par_iter().enumerate().filter_map(keep).collect()
    } else {
        spheres.iter().enumerate().filter_map(keep).collect()
    }
}

/// `p` in view coordinates with z the depth in front of the camera.
fn view_space(view: &SceneView, p: Vec3) -> Vec3 {
    let v = view.view_matrix.transform_point3(p);
    Vec3::new(v.x, v.y, -v.z)
}

/// A cone in the grid's view coordinates ([`view_space`]).
fn view_space_cone(view: &SceneView, cone: SpotCone) -> SpotCone {
    let axis = view.view_matrix.transform_vector3(cone.axis);
    SpotCone { apex: view_space(view, cone.apex), axis: Vec3::new(axis.x, axis.y, -axis.z), ..cone }
}

/// [`SceneView::point_at_depth`] with z the depth (the grid's view coordinates).
fn unproject_at_depth(inv_proj: &Mat4, x: f32, y: f32, depth: f32) -> Vec3 {
    let p = SceneView::point_at_depth(inv_proj, x, y, depth);
    Vec3::new(p.x, p.y, depth)
}

/// Adds `view`'s grid and lists to `grid`.
fn append_view_grid(grid: &mut LightGrid, view: &SceneView, lights: &[ViewLight], settings: &LightGridSettings, parallel: bool) {
    let base = grid.clusters.len() as u32;
    if lights.is_empty() {
        grid.views.push(ViewGrid { base, ..Default::default() });
        return;
    }
    let (vg, bounds) = grid_of(view, lights, settings, base);
    let size = vg.size;
    let per_slice = (size[0] * size[1]) as usize;
    grid.clusters.reserve(per_slice * size[2] as usize);
    for slice in bin_lights(view, &vg, &bounds, lights, parallel) {
        let first = grid.indices.len() as u32;
        if slice.counts.is_empty() {
            grid.clusters.extend(std::iter::repeat_n([first, 0], per_slice));
            continue;
        }
        let mut at = first;
        grid.clusters.extend(slice.counts.iter().map(|&n| {
            let c = [at, n];
            at += n;
            c
        }));
        grid.indices.extend_from_slice(&slice.indices);
    }
    grid.views.push(vg);
}

/// A view's grid (its first cluster `base`) for its `lights` (not empty),
/// and its clusters' boxes.
fn grid_of(view: &SceneView, lights: &[ViewLight], settings: &LightGridSettings, base: u32) -> (ViewGrid, ClusterBounds) {
    let vp = view.viewport;
    let tile = settings.pixel_size;
    let size = [vp.width.div_ceil(tile), vp.height.div_ceil(tile), settings.slices];
    let (near, far) = view.depth_range();
    // The slices span the lights' depths: from the nearest light's front
    // (no nearer than the near plane) to the farthest light's back (past
    // it nothing is lit; no farther than the far plane). A scene whose
    // lights are all far away gets its slices there, not near the camera.
    let front = lights.iter().map(|l| l.center.z - l.radius).fold(f32::MAX, f32::min);
    let near = front.max(near).max(1e-4).min(far * 0.999);
    let reach = lights.iter().map(|l| l.center.z + l.radius).fold(near * 1.001, f32::max).min(far).max(near * 1.001);
    let z_scale = size[2] as f32 / (reach / near).log2();
    let vg =
        ViewGrid { size, tile_pixels: tile, base, z_scale, z_bias: -near.log2() * z_scale, origin: Vec2::new(vp.x as f32, vp.y as f32) };
    let bounds = ClusterBounds::new(view, &vg, near, reach);
    (vg, bounds)
}

/// The view-space boxes of a view's clusters. At a fixed depth a view-space
/// point is affine in its NDC position, so a tile column's x extent over a
/// slice is reached at the column's edge rays in the first and last rows,
/// at the slice's near or far depth (and likewise a row's y extent): the
/// boxes are products of per-slice column, row and depth extents, made
/// once per slice rather than per light and cluster.
struct ClusterBounds {
    /// Per slice: per tile column its x extent, per tile row its y extent,
    /// and the slice's depths.
    slices: Vec<SliceBounds>,
}

struct SliceBounds {
    columns: Vec<(f32, f32)>,
    rows: Vec<(f32, f32)>,
    depth: (f32, f32),
}

impl ClusterBounds {
    fn new(view: &SceneView, g: &ViewGrid, near: f32, reach: f32) -> Self {
        let vp = view.viewport;
        let edge = |i: u32, pixels: u32| (i * g.tile_pixels).min(pixels) as f32 / pixels as f32 * 2.0 - 1.0;
        let inv_proj = view.projection.inverse();
        // The view-space ray (point at depth 0, change per unit of depth) through an NDC point.
        let ray = |nx: f32, ny: f32| {
            let a = unproject_at_depth(&inv_proj, nx, ny, 0.0);
            (a, unproject_at_depth(&inv_proj, nx, ny, 1.0) - a)
        };
        let (top, bottom) = (edge(0, vp.height), edge(g.size[1], vp.height));
        let (left, right) = (edge(0, vp.width), edge(g.size[0], vp.width));
        // Per column edge its rays in the first and last rows; per row edge,
        // in the first and last columns.
        let column_rays: Vec<[(Vec3, Vec3); 2]> =
            (0..=g.size[0]).map(|x| [ray(edge(x, vp.width), top), ray(edge(x, vp.width), bottom)]).collect();
        let row_rays: Vec<[(Vec3, Vec3); 2]> =
            (0..=g.size[1]).map(|y| [ray(left, edge(y, vp.height)), ray(right, edge(y, vp.height))]).collect();
        let slices = g.size[2];
        let at = |s: u32| near * (reach / near).powf(s as f32 / slices as f32);
        // The first slice reaches back to the camera and the last one on
        // (far enough for any light that reaches it): a pixel's clamped
        // slice is always a box that holds it.
        let extent = |rays: &[[(Vec3, Vec3); 2]], i: usize, axis: usize, (z0, z1): (f32, f32)| {
            let (mut lo, mut hi) = (f32::MAX, f32::MIN);
            for (a, d) in rays[i].iter().chain(&rays[i + 1]) {
                for z in [z0, z1] {
                    let v = (*a + *d * z)[axis];
                    (lo, hi) = (lo.min(v), hi.max(v));
                }
            }
            let pad = (hi - lo) * 1e-4 + 1e-5;
            (lo - pad, hi + pad)
        };
        let slices = (0..slices)
            .map(|s| {
                let depth = (if s == 0 { 0.0 } else { at(s) }, if s + 1 == slices { reach * 4.0 + 1.0 } else { at(s + 1) });
                SliceBounds {
                    columns: (0..g.size[0] as usize).map(|x| extent(&column_rays, x, 0, depth)).collect(),
                    rows: (0..g.size[1] as usize).map(|y| extent(&row_rays, y, 1, depth)).collect(),
                    depth,
                }
            })
            .collect();
        Self { slices }
    }

    /// The view-space box (z = depth) of cluster (x, y, slice), padded a little.
    fn cluster_box(&self, x: u32, y: u32, slice: u32) -> (Vec3, Vec3) {
        let s = &self.slices[slice as usize];
        let ((x0, x1), (y0, y1), (z0, z1)) = (s.columns[x as usize], s.rows[y as usize], s.depth);
        let pad = (z1 - z0) * 1e-4 + 1e-5;
        (Vec3::new(x0, y0, z0 - pad), Vec3::new(x1, y1, z1 + pad))
    }
}

/// Whether a sphere touches a box.
fn sphere_touches_box(center: Vec3, radius: f32, (lo, hi): (Vec3, Vec3)) -> bool {
    let d = center - center.clamp(lo, hi);
    d.length_squared() <= radius * radius
}

/// The tiles (x, y ranges, inclusive) a light's sphere may cover: its
/// view-space box's corners projected (clamped in front of the near plane).
fn tile_range(view: &SceneView, g: &ViewGrid, l: &ViewLight, near: f32) -> Option<([u32; 2], [u32; 2])> {
    let (lo, hi) = (l.center - l.radius, l.center + l.radius);
    let (mut min, mut max) = (Vec2::splat(f32::MAX), Vec2::splat(f32::MIN));
    for &x in &[lo.x, hi.x] {
        for &y in &[lo.y, hi.y] {
            for &z in &[lo.z.max(near), hi.z.max(near)] {
                let clip = view.projection * Vec4::new(x, y, -z, 1.0);
                let ndc = clip.xy() / clip.w.max(1e-6);
                (min, max) = (min.min(ndc), max.max(ndc));
            }
        }
    }
    let vp = view.viewport;
    let to_tile = |ndc: f32, pixels: u32, tiles: u32| {
        let px = (ndc * 0.5 + 0.5) * pixels as f32;
        ((px / g.tile_pixels as f32).floor().max(0.0) as u32).min(tiles - 1)
    };
    if max.x < -1.0 || max.y < -1.0 || min.x > 1.0 || min.y > 1.0 {
        return None;
    }
    let xs = [to_tile(min.x, vp.width, g.size[0]), to_tile(max.x, vp.width, g.size[0])];
    let ys = [to_tile(min.y, vp.height, g.size[1]), to_tile(max.y, vp.height, g.size[1])];
    Some((xs, ys))
}

/// One depth slice's lists: per cluster of the slice (row by row) its
/// light count (empty: no light in the slice), and the lists one after
/// another.
struct SliceLists {
    counts: Vec<u32>,
    indices: Vec<u32>,
}

/// Per slice, its clusters' lists (indices into the frame's lights, in order).
fn bin_lights(view: &SceneView, g: &ViewGrid, bounds: &ClusterBounds, lights: &[ViewLight], parallel: bool) -> Vec<SliceLists> {
    let near = view.depth_range().0.max(1e-4);
    // Each light's tiles and slices.
    let range = |l: &ViewLight| {
        tile_range(view, g, l, near).map(|(xs, ys)| (xs, ys, [g.slice_of(l.center.z - l.radius), g.slice_of(l.center.z + l.radius)]))
    };
    let ranges: Vec<_> = if parallel { lights.par_iter().map(range).collect() } else { lights.iter().map(range).collect() };
    // The lights of each slice, in order.
    let mut by_slice: Vec<Vec<u32>> = vec![Vec::new(); g.size[2] as usize];
    for (i, r) in ranges.iter().enumerate() {
        if let Some((_, _, zs)) = r {
            for s in zs[0]..=zs[1] {
                by_slice[s as usize].push(i as u32);
            }
        }
    }
    // A slice's (cluster, light) hits in light order, then a counting sort
    // by cluster (stable: each list keeps the lights' order).
    let fill = |(slice, members): (usize, &Vec<u32>)| -> SliceLists {
        if members.is_empty() {
            return SliceLists { counts: Vec::new(), indices: Vec::new() };
        }
        let tx = g.size[0] as usize;
        let mut counts = vec![0u32; tx * g.size[1] as usize];
        let mut hits: Vec<(u32, u32)> = Vec::with_capacity(members.len() * 2);
        for &i in members {
            let ((xs, ys, _), l) = (ranges[i as usize].expect("binned"), &lights[i as usize]);
            for y in ys[0]..=ys[1] {
                for x in xs[0]..=xs[1] {
                    if l.touches(bounds.cluster_box(x, y, slice as u32)) {
                        let c = y as usize * tx + x as usize;
                        counts[c] += 1;
                        hits.push((c as u32, l.index));
                    }
                }
            }
        }
        let mut next: Vec<u32> = counts
            .iter()
            .scan(0u32, |sum, &n| {
                let start = *sum;
                *sum += n;
                Some(start)
            })
            .collect();
        let mut indices = vec![0u32; hits.len()];
        for (c, light) in hits {
            let at = &mut next[c as usize];
            indices[*at as usize] = light;
            *at += 1;
        }
        SliceLists { counts, indices }
    };
    if parallel {
        by_slice.par_iter().enumerate().map(fill).collect()
    } else {
        by_slice.iter().enumerate().map(fill).collect()
    }
}

impl LightGrid {
    /// Moves each cluster's lights that have a shadow (`shadow >= 0`) to
    /// the end of its list, in order, and counts them in `shadowed`; does
    /// nothing when no light has one.
    pub fn order_shadowed_last(&mut self) {
        if self.lights.iter().all(|l| l.shadow < 0) {
            self.shadowed.clear();
            return;
        }
        let lights = &self.lights;
        let mut scratch = Vec::new();
        self.shadowed = self
            .clusters
            .iter()
            .map(|&[first, count]| {
                let list = &mut self.indices[first as usize..(first + count) as usize];
                scratch.clear();
                scratch.extend(list.iter().copied().filter(|&i| lights[i as usize].shadow < 0));
                let plain = scratch.len();
                scratch.extend(list.iter().copied().filter(|&i| lights[i as usize].shadow >= 0));
                list.copy_from_slice(&scratch);
                (count as usize - plain) as u32
            })
            .collect();
    }
}

#[cfg(test)]
mod tests;
