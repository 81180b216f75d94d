//! Occlusion culling (UE's InitViews occlusion): primitives and instanced
//! mesh instances hidden behind nearer opaque geometry are not drawn.
//!
//! # Why software occlusion of the current frame
//!
//! UE's desktop path issues hardware occlusion queries (or builds a
//! hierarchical Z-buffer from the GPU's depth) and reads the answers a frame
//! later; its mobile path (`r.Mobile.AllowSoftwareOcclusion`) and Intel's
//! Masked Occlusion Culling rasterize a few big occluders on the CPU instead.
//! Proxima takes the second road:
//!
//! - Reading the GPU's depth back in the middle of a frame would make the
//!   CPU wait for the GPU and undo the overlap of frames in flight
//!   (`r.FramesInFlight`); reading last frame's depth instead needs a
//!   reprojection and a second test phase, or objects pop in for a frame.
//! - The occluders of *this* frame are rasterized before this frame's
//!   occludees are tested, so there is no latency: nothing pops and no
//!   two-phase scheme (last frame's visible set first, then the rest against
//!   the new depth) is needed.
//! - On lavapipe the GPU *is* the CPU: a depth hierarchy built by compute
//!   costs the same cores, and a read-back stalls them.
//!
//! The [`OcclusionBuffer`] is a small depth buffer (at most
//! [`OCCLUSION_BUFFER_WIDTH`] pixels wide, at the view's aspect, never finer
//! than the view) with a max-depth mip chain (the HZB). The frame's
//! `occlusion` stage builds one per main view from the largest visible
//! occluders ([`crate::PrimitiveSceneProxy::occluder`], at most
//! [`MAX_OCCLUDERS`] and [`MAX_OCCLUDER_TRIANGLES`] per view, chosen by
//! screen size as UE picks its occluders), tests every other visible
//! primitive that [`can_be_occluded`](crate::PrimitiveSceneProxy::can_be_occluded)
//! against it, and removes the hidden ones from the view's visible list
//! (keeping slot order, the draw-order contract of `mesh_pass::sort`).
//! Dynamic proxies read the buffer through
//! [`MeshElementCollector::occlusion`](crate::MeshElementCollector::occlusion)
//! to cull their own sub-elements (instances) and report them under
//! [`OCCLUDED_INSTANCES_COUNTER`]. `r.AllowOcclusionQueries=0` turns all of
//! it off. The shadow view is never occlusion culled (what the camera cannot
//! see may still cast a shadow into view), nor are wireframe views (they
//! draw without a depth test).
//!
//! # Why the image is the same with it on and off
//!
//! Everything is conservative, so that a culled primitive is one whose every
//! fragment would have failed the depth test:
//!
//! - **Occluders are only what the depth prepass surely writes**: opaque
//!   sections (never masked, which discards, nor translucent, which writes
//!   no depth), at the LOD the view picked, front faces only unless the
//!   material is two-sided (the pass culls back faces, reversed for a
//!   mirrored transform), whole triangles in front of the near plane (a
//!   triangle that crosses it is left out). Every pass the main views draw
//!   tests depth with `LessEqual`/`Less`/`Equal` against that depth;
//!   occlusion is skipped for a frame where a registered pass does not.
//! - **Inner-conservative coverage**: a buffer pixel takes an occluder's
//!   depth only when the occluder's triangles cover the whole pixel square
//!   (grown by [`COVERAGE_MARGIN`] of a pixel, more than the GPU's
//!   sub-pixel snapping and the float differences of the two transforms:
//!   the buffer is never finer than the view, so every view pixel centre in
//!   the square is covered by the GPU too). The triangles of one occluder
//!   count together: the square's centre must lie in one of them and no
//!   *boundary* edge may cross the square — an edge two of its triangles
//!   share from opposite sides (by vertex position: a cube's faces meet
//!   without sharing vertices) is filled by the GPU without a gap, so a
//!   quad's diagonal or a box's corner leaves no crack. The value stored is
//!   the **maximum** depth over the grown square of every triangle that may
//!   overlap it (depth is affine in screen space; each plane is capped by
//!   its triangle's farthest vertex). So a stored depth is never nearer
//!   than what the GPU writes at any view pixel in that square; a pixel
//!   keeps the nearest of its occluders, and a mip texel the farthest of
//!   its four.
//! - **Occludees by their bounds**: the box's corners give its nearest depth
//!   (depth grows with view distance, whose minimum over a box is at a
//!   corner) and its screen rectangle (grown by a pixel). It is occluded
//!   only when that nearest depth is **strictly** farther than the
//!   farthest stored depth over the rectangle, by [`DEPTH_MARGIN`]. A box
//!   that reaches in front of the near plane is never occluded. Most boxes
//!   are not hidden, and most of those are answered by their centre alone:
//!   its pixel lies in the rectangle and its depth is at least the box's
//!   nearest, so a pixel there that stores no nearer depth (or nothing)
//!   already says "not hidden" — one projection instead of eight. Quicker
//!   still, a box whose nearest point lies in front of every occluder
//!   vertex (by view depth, [`OcclusionBuffer::may_hide_at_depth`]) cannot
//!   be hidden: the occlusion stage asks that with each visible
//!   primitive's centre depth, which culling gathered while it had the
//!   sphere at hand, so a view full of small things in front of a few far
//!   occluders (the 1.6M-cube sphere inside its walls) reads no bounds.
//!
//! Then every fragment of an occluded primitive lies strictly behind depth
//! that nearer geometry writes anyway in the prepass, so it fails the base
//! pass's and translucency's `LessEqual` test; leaving it out changes no
//! pixel (the tests render scenes, the showcase path among them, on and off
//! and compare bytes).

use crate::material::MaterialId;
use crate::math::Aabb;
use crate::static_mesh::StaticMeshLod;
use crate::vertex_factory::LocalVertex;
use crate::view::SceneView;
use glam::{DVec2, Mat4, Vec3, Vec4};

/// The frame counter ([`crate::FrameStats::counters`]) under which dynamic
/// proxies report the sub-elements (instances) they culled against the
/// occlusion buffer; also [`crate::FrameStats::occluded_instances`].
pub const OCCLUDED_INSTANCES_COUNTER: &str = "occluded_instances";

/// The occlusion buffer's width in pixels for a landscape view (a portrait
/// view gets this height); the other side follows the view's aspect. Never
/// more than the view's own pixels.
pub const OCCLUSION_BUFFER_WIDTH: u32 = 256;

/// At most this many occluders per view (the largest on screen).
pub const MAX_OCCLUDERS: usize = 64;

/// At most this many occluder triangles per view (an occluder that would
/// go past it is skipped; smaller ones may still fit).
pub const MAX_OCCLUDER_TRIANGLES: usize = 16_384;

/// Primitives smaller than this on screen ([`SceneView::screen_size`]) are
/// not considered as occluders.
pub const MIN_OCCLUDER_SCREEN_SIZE: f32 = 0.05;

/// How far (in buffer pixels) a triangle must reach past a pixel's square
/// to cover it, and how far its maximum depth is taken past the square.
pub const COVERAGE_MARGIN: f64 = 1.0 / 32.0;

/// An occludee's nearest depth must be this much farther than the occluder
/// depth to be occluded (CPU and GPU transforms differ by a few ulps).
pub const DEPTH_MARGIN: f32 = 1e-5;

/// An occludee's rectangle is read at the finest mip level where it spans
/// fewer than this many texels' steps a side (public for ports of
/// [`OcclusionBuffer::test_box`], e.g. GPU culling's).
pub const RECT_TEXELS: u32 = 8;

/// The depth of nothing (the far plane).
const FAR: f32 = 1.0;

/// A proxy's occluder geometry: a LOD of a static mesh (its sections and
/// their material slots) and the proxy's materials by slot (past their end,
/// the default material). The renderer keeps the sections whose material is
/// opaque; see the [module docs](self).
#[derive(Clone, Copy, Debug)]
pub struct OccluderMesh<'a> {
    /// The LOD the view draws.
    pub lod: &'a StaticMeshLod,
    /// Material per section material slot.
    pub materials: &'a [MaterialId],
}

/// One opaque section of an occluder, as the rasterizer takes it: a
/// triangle list into the LOD's vertices, and whether back faces write
/// depth too (a two-sided material).
pub(crate) type OccluderSection<'a> = (&'a [u32], bool);

/// A view's occlusion buffer: conservative occluder depth and its max-depth
/// mip chain (see the [module docs](self)). Read-only once built; dynamic
/// proxies test their own bounds against it
/// ([`crate::MeshElementCollector::occlusion`]).
#[derive(Clone, Debug)]
pub struct OcclusionBuffer {
    width: u32,
    height: u32,
    view_proj: Mat4,
    depth: ViewDepth,
    perspective: bool,
    /// Boxes whose nearest view depth is below this lie in front of every
    /// occluder vertex rasterized and cannot be hidden
    /// ([`Self::may_hide_at_depth`]); +∞ while nothing is rasterized.
    front_limit: f32,
    /// Level 0 (row-major, `width` × `height`), then each coarser level.
    levels: Vec<Level>,
    /// The nearest-depth mip chain from level 1 on (level 0 is `levels[0]`):
    /// whether a whole region can hide anything ([`Self::may_hide_within`]).
    nearest: Vec<Level>,
    triangles: u64,
}

#[derive(Clone, Debug)]
struct Level {
    width: u32,
    height: u32,
    depth: Vec<f32>,
}

impl Level {
    fn at(&self, x: u32, y: u32) -> f32 {
        self.depth[(y * self.width + x) as usize]
    }

    /// The next coarser level: each texel `pick` of its 2×2 (edge texels
    /// of an odd size repeat).
    fn reduce(&self, pick: fn(f32, f32) -> f32) -> Level {
        let (w, h) = (self.width.div_ceil(2), self.height.div_ceil(2));
        let mut depth = Vec::with_capacity((w * h) as usize);
        for y in 0..h {
            for x in 0..w {
                let (xa, xb) = (2 * x, (2 * x + 1).min(self.width - 1));
                let (ya, yb) = (2 * y, (2 * y + 1).min(self.height - 1));
                depth.push(pick(pick(self.at(xa, ya), self.at(xb, ya)), pick(self.at(xa, yb), self.at(xb, yb))));
            }
        }
        Level { width: w, height: h, depth }
    }
}

/// Depth along a view's direction: the distance from the view's origin
/// of the plane through a point, facing the view. For the perspective and
/// orthographic views [`SceneView`] makes, the depth the GPU stores grows
/// with it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewDepth {
    eye: Vec3,
    forward: Vec3,
}

impl ViewDepth {
    /// `view`'s depth (its origin, and the direction it looks along).
    pub fn new(view: &SceneView) -> Self {
        Self { eye: view.origin, forward: -view.view_matrix.inverse().z_axis.truncate().normalize_or_zero() }
    }

    /// The view depth of `p`.
    pub fn of(&self, p: Vec3) -> f32 {
        self.forward.dot(p - self.eye)
    }
}

/// A box projected into the buffer ([`OcclusionBuffer::project_box`]).
struct BoxOnScreen {
    near: f32,
    far: f32,
    lo: DVec2,
    hi: DVec2,
}

/// A triangle in buffer pixels with its depth plane.
#[derive(Clone, Copy, Debug)]
struct ScreenTriangle {
    s: [DVec2; 3],
    z: [f64; 3],
    dzdx: f64,
    dzdy: f64,
    /// Per edge k (from `s[k]` to `s[k+1]`): a point and the direction,
    /// with the inside on the positive side of `direction.perp_dot(p - point)`.
    edges: [(DVec2, DVec2); 3],
    /// Whether edge k bounds its region (see `rasterize_region`).
    boundary: [bool; 3],
}

impl ScreenTriangle {
    /// The pixels `x0..x1` of the row whose centre is at `cy` that may
    /// not lie wholly outside an edge (squares grown to `half` a side):
    /// the per-pixel test of `rasterize_region` rejects every other pixel
    /// of the row, so it tests only these. Each edge's value is linear
    /// along the row; the span is widened by a pixel on each side against
    /// rounding (the per-pixel test stays exact).
    fn row_span(&self, cy: f64, half: f64, x0: u32, x1: u32) -> (u32, u32) {
        let (mut lo, mut hi) = (x0 as f64, x1 as f64);
        for (a, d) in self.edges {
            // value + reach at pixel x = k - d.y * (x + 0.5)
            let k = d.x * (cy - a.y) + d.y * a.x + half * (d.x.abs() + d.y.abs());
            if d.y > 0.0 {
                hi = hi.min((k / d.y - 0.5).floor() + 2.0);
            } else if d.y < 0.0 {
                lo = lo.max((k / d.y - 0.5).ceil() - 1.0);
            } else if k < 0.0 {
                return (x0, x0);
            }
        }
        // NaN bounds were ignored by min/max; kept within the row (which
        // may be empty: x0 ≥ x1).
        let lo = lo.max(x0 as f64).min(x1 as f64) as u32;
        let hi = hi.max(x0 as f64).min(x1 as f64) as u32;
        (lo, hi.max(lo))
    }

    /// The pixels `x0..x1` of the row whose centre is at `cy` whose
    /// squares (grown to `half` a side) lie strictly inside every edge:
    /// there the per-pixel test of `rasterize_region` finds the centre
    /// inside and no edge crossing, so only the depth is computed. Narrowed
    /// by a pixel on each side against rounding; empty (`lo ≥ hi`) when
    /// unsure.
    fn inner_span(&self, cy: f64, half: f64, x0: u32, x1: u32) -> (u32, u32) {
        let (mut lo, mut hi) = (x0 as f64, x1 as f64);
        for (a, d) in self.edges {
            // value - reach at pixel x = k - d.y * (x + 0.5)
            let k = d.x * (cy - a.y) + d.y * a.x - half * (d.x.abs() + d.y.abs());
            if d.y > 0.0 {
                hi = hi.min((k / d.y - 0.5).floor() - 1.0);
            } else if d.y < 0.0 {
                lo = lo.max((k / d.y - 0.5).ceil() + 1.0);
            } else if k.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                return (x0, x0); // parallel to the edge, not wholly inside (or NaN)
            }
        }
        if lo.partial_cmp(&hi) != Some(std::cmp::Ordering::Less) {
            return (x0, x0);
        }
        let lo = lo.max(x0 as f64).min(x1 as f64) as u32;
        let hi = hi.max(x0 as f64).min(x1 as f64) as u32;
        (lo, hi.max(lo))
    }
}

/// Marks the edges shared by exactly two triangles lying on opposite sides
/// of it on screen as inside their region (`boundary` false).
fn mark_inner_edges(tris: &mut [(ScreenTriangle, [[u32; 3]; 3])]) {
    // (triangle, edge) by the edge's two vertex keys, in order.
    type Users = Vec<(usize, usize)>;
    let mut by_edge: rustc_hash::FxHashMap<([u32; 3], [u32; 3]), Users> = Default::default();
    for (i, (_, key)) in tris.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (key[k], key[(k + 1) % 3]);
            by_edge.entry(if a <= b { (a, b) } else { (b, a) }).or_default().push((i, k));
        }
    }
    for users in by_edge.values() {
        let &[(i, k), (j, l)] = users.as_slice() else { continue };
        let side = |t: &ScreenTriangle, k: usize| {
            let (a, b, o) = (t.s[k], t.s[(k + 1) % 3], t.s[(k + 2) % 3]);
            (b - a).perp_dot(o - a)
        };
        // The other triangle's far vertex against this one's edge line.
        let (ti, tj) = (tris[i].0, tris[j].0);
        let (a, b) = (ti.s[k], ti.s[(k + 1) % 3]);
        let other = (b - a).perp_dot(tj.s[(l + 2) % 3] - a);
        if i != j && side(&ti, k) * other < 0.0 {
            tris[i].0.boundary[k] = false;
            tris[j].0.boundary[l] = false;
        }
    }
}

/// Buffer size for a `w` × `h` view.
fn buffer_size(w: u32, h: u32) -> (u32, u32) {
    let (w, h) = (w.max(1), h.max(1));
    let long = OCCLUSION_BUFFER_WIDTH.min(w.max(h));
    if w >= h {
        (long.min(w), ((long as u64 * h as u64 + w as u64 / 2) / w as u64).clamp(1, h as u64) as u32)
    } else {
        (((long as u64 * w as u64 + h as u64 / 2) / h as u64).clamp(1, w as u64) as u32, long.min(h))
    }
}

impl OcclusionBuffer {
    /// An empty buffer (everything at the far plane) for `view`, sized to
    /// its viewport's aspect.
    pub fn new(view: &SceneView) -> Self {
        let (w, h) = buffer_size(view.viewport.width, view.viewport.height);
        Self::with_size(view, w, h)
    }

    /// An empty buffer of `width` × `height` pixels (at least 1) for
    /// `view`. Conservative only while it is no finer than the view's
    /// viewport (as [`Self::new`] makes it).
    pub fn with_size(view: &SceneView, width: u32, height: u32) -> Self {
        let (width, height) = (width.max(1), height.max(1));
        Self {
            width,
            height,
            view_proj: view.view_proj(),
            depth: ViewDepth::new(view),
            perspective: view.perspective,
            front_limit: f32::INFINITY,
            levels: vec![Level { width, height, depth: vec![FAR; (width * height) as usize] }],
            nearest: Vec::new(),
            triangles: 0,
        }
    }

    /// The buffer's size in pixels (level 0).
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The HZB's levels (level 0 included).
    pub fn level_count(&self) -> usize {
        self.levels.len()
    }

    /// The stored depth of pixel (`x`, `y`) of `level` (0 = full size;
    /// each coarser level the farthest of its 2×2), or `None` outside.
    pub fn depth(&self, level: usize, x: u32, y: u32) -> Option<f32> {
        let l = self.levels.get(level)?;
        (x < l.width && y < l.height).then(|| l.at(x, y))
    }

    /// The view-projection matrix the buffer was built and is tested with.
    pub fn view_proj(&self) -> Mat4 {
        self.view_proj
    }

    /// Level `level` of the HZB as `(width, height, depths)`, the depths
    /// row-major — what a port of [`Self::test_box`] to another processor
    /// (the instancing crate's GPU culling) uploads, with
    /// [`Self::view_proj`], [`DEPTH_MARGIN`] and [`RECT_TEXELS`], to run
    /// the same test. `None` past the last level.
    pub fn level(&self, level: usize) -> Option<(u32, u32, &[f32])> {
        self.levels.get(level).map(|l| (l.width, l.height, l.depth.as_slice()))
    }

    /// Occluder triangles rasterized so far (front-facing, whole in front
    /// of the near plane, finite).
    pub fn triangles(&self) -> u64 {
        self.triangles
    }

    /// Rasterizes the opaque `sections` of an occluder with `vertices`,
    /// placed by `local_to_world` (its determinant's sign says whether the
    /// GPU reverses its culling), as one region ([`Self::rasterize_region`]):
    /// triangles facing away are skipped unless `two_sided`, as are
    /// triangles with a non-finite vertex or out-of-range indices and those
    /// not wholly in front of the near plane. Invalidates the mip chain
    /// until [`Self::build_hzb`].
    pub(crate) fn rasterize(&mut self, local_to_world: &Mat4, vertices: &[LocalVertex], sections: &[OccluderSection<'_>]) {
        let mirrored = local_to_world.determinant() < 0.0;
        let world: Vec<Vec3> = vertices.iter().map(|v| local_to_world.transform_point3(Vec3::from(v.position))).collect();
        let mut tris = Vec::new();
        let mut near = f32::INFINITY;
        for &(indices, two_sided) in sections {
            for tri in indices.chunks_exact(3) {
                let [a, b, c] = [tri[0], tri[1], tri[2]].map(|i| i as usize);
                if a.max(b).max(c) >= world.len() {
                    continue;
                }
                let (wa, wb, wc) = (world[a], world[b], world[c]);
                if !(wa.is_finite() && wb.is_finite() && wc.is_finite()) {
                    continue;
                }
                if !two_sided {
                    // The GPU culls back faces, with the winding reversed for a
                    // mirrored transform: the outward side is the front.
                    let n = (wb - wa).cross(wc - wa) * if mirrored { -1.0 } else { 1.0 };
                    let to_eye = if self.perspective { self.depth.eye - wa } else { -self.depth.forward };
                    if n.dot(to_eye) <= 0.0 {
                        continue;
                    }
                }
                let clip = [wa, wb, wc].map(|w| self.view_proj * w.extend(1.0));
                // Shared edges are found by position: faces of a mesh that
                // meet without sharing vertices (a cube's) still close.
                let key = [a, b, c].map(|i| vertices[i].position.map(f32::to_bits));
                if let Some(t) = self.screen_triangle(clip) {
                    tris.push((t, key));
                    near = near.min(self.depth.of(wa)).min(self.depth.of(wb)).min(self.depth.of(wc));
                }
            }
        }
        self.lower_front_limit(near);
        self.rasterize_region(tris);
    }

    /// Keeps [`Self::front_limit`] below `near`, the nearest view depth of
    /// an occluder vertex, by a slack far larger than the rounding of
    /// either depth (so a box that the whole test could find hidden is
    /// never judged in front: see [`Self::may_hide_at_depth`]).
    fn lower_front_limit(&mut self, near: f32) {
        if near < f32::INFINITY {
            let slack = 1e-4 * (near.abs() + self.depth.eye.abs().max_element() + 1.0);
            self.front_limit = self.front_limit.min(near - slack);
        }
    }

    /// Rasterizes one triangle in clip space (Vulkan: depth 0..w), on its
    /// own. Skipped unless every vertex is finite and in front of the near
    /// plane (`z ≥ 0`, `w > 0`).
    pub fn rasterize_clip(&mut self, clip: [Vec4; 3]) {
        if let Some(t) = self.screen_triangle(clip) {
            // No world positions: nothing is known to lie in front of it.
            self.front_limit = f32::NEG_INFINITY;
            self.rasterize_region(vec![(t, [[0; 3], [1; 3], [2; 3]])]);
        }
    }

    /// The triangle in buffer pixels, or `None` (and not counted) when a
    /// vertex is non-finite or not in front of the near plane, or it has no
    /// area.
    fn screen_triangle(&self, clip: [Vec4; 3]) -> Option<ScreenTriangle> {
        if !clip.iter().all(|c| c.is_finite() && c.w > 0.0 && c.z >= 0.0) {
            return None;
        }
        let (w, h) = (self.width as f64, self.height as f64);
        let s = clip.map(|c| DVec2::new((c.x as f64 / c.w as f64 * 0.5 + 0.5) * w, (c.y as f64 / c.w as f64 * 0.5 + 0.5) * h));
        let z = clip.map(|c| c.z as f64 / c.w as f64);
        let cross = (s[1] - s[0]).perp_dot(s[2] - s[0]);
        if cross.is_nan() || cross.abs() <= 1e-9 {
            return None;
        }
        let dzdx = ((z[1] - z[0]) * (s[2].y - s[0].y) - (z[2] - z[0]) * (s[1].y - s[0].y)) / cross;
        let dzdy = ((z[2] - z[0]) * (s[1].x - s[0].x) - (z[1] - z[0]) * (s[2].x - s[0].x)) / cross;
        // Edge k from s[k] to s[k+1], scaled so that the inside is positive.
        let edges = [0, 1, 2].map(|k| (s[k], (s[(k + 1) % 3] - s[k]) * cross.signum()));
        Some(ScreenTriangle { s, z, dzdx, dzdy, edges, boundary: [true; 3] })
    }

    /// Rasterizes triangles that the GPU draws together (one occluder's) as
    /// one region, inner-conservatively: a pixel takes the region's depth
    /// when the pixel's square (grown by [`COVERAGE_MARGIN`]) lies inside
    /// the region — its centre inside a triangle and no boundary edge
    /// crossing it. An edge is inside the region when exactly two of its
    /// triangles share it (by the vertices' keys), one on each side of it
    /// on screen; the GPU fills such an edge without a gap. The depth
    /// stored is the farthest, over the square, of every triangle that may
    /// overlap it (each triangle's plane, capped by its farthest vertex).
    fn rasterize_region(&mut self, mut tris: Vec<(ScreenTriangle, [[u32; 3]; 3])>) {
        if tris.is_empty() {
            return;
        }
        self.levels.truncate(1);
        self.triangles += tris.len() as u64;
        mark_inner_edges(&mut tris);
        let (w, h) = (self.width as f64, self.height as f64);
        let lo = tris.iter().flat_map(|(t, _)| t.s).fold(DVec2::splat(f64::INFINITY), DVec2::min);
        let hi = tris.iter().flat_map(|(t, _)| t.s).fold(DVec2::splat(f64::NEG_INFINITY), DVec2::max);
        let (x0, y0) = (lo.x.floor().clamp(0.0, w) as u32, lo.y.floor().clamp(0.0, h) as u32);
        let (x1, y1) = (hi.x.ceil().clamp(0.0, w) as u32, hi.y.ceil().clamp(0.0, h) as u32);
        if x0 >= x1 || y0 >= y1 {
            return;
        }
        let rw = (x1 - x0) as usize;
        // Per pixel of the region's box: (centre inside, a boundary crosses, farthest depth).
        let mut acc = vec![(false, false, f64::NEG_INFINITY); rw * (y1 - y0) as usize];
        let half = 0.5 + COVERAGE_MARGIN;
        for (t, _) in &tris {
            let reach = half * (t.dzdx.abs() + t.dzdy.abs());
            let z_top = t.z[0].max(t.z[1]).max(t.z[2]);
            let tlo = t.s[0].min(t.s[1]).min(t.s[2]);
            let thi = t.s[0].max(t.s[1]).max(t.s[2]);
            let (tx0, ty0) = ((tlo.x - 1.0).floor().max(x0 as f64) as u32, (tlo.y - 1.0).floor().max(y0 as f64) as u32);
            let (tx1, ty1) = ((thi.x + 1.0).ceil().min(x1 as f64) as u32, (thi.y + 1.0).ceil().min(y1 as f64) as u32);
            for y in ty0..ty1 {
                let (sx0, sx1) = t.row_span(y as f64 + 0.5, half, tx0, tx1);
                let (ix0, ix1) = t.inner_span(y as f64 + 0.5, half, sx0, sx1);
                let row = &mut acc[(y - y0) as usize * rw..][..rw];
                // The pixels wholly inside: the depth alone.
                for x in ix0..ix1 {
                    let c = DVec2::new(x as f64 + 0.5, y as f64 + 0.5);
                    let px = &mut row[(x - x0) as usize];
                    px.0 = true;
                    let zc = t.z[0] + t.dzdx * (c.x - t.s[0].x) + t.dzdy * (c.y - t.s[0].y);
                    px.2 = px.2.max((zc + reach).min(z_top));
                }
                for x in (sx0..ix0).chain(ix1..sx1) {
                    let c = DVec2::new(x as f64 + 0.5, y as f64 + 0.5);
                    let e = t.edges.map(|(a, d)| (d.perp_dot(c - a), half * (d.x.abs() + d.y.abs())));
                    if e.iter().any(|&(v, r)| v + r < 0.0) {
                        continue; // the square is wholly outside an edge
                    }
                    let px = &mut row[(x - x0) as usize];
                    px.0 |= e.iter().all(|&(v, _)| v >= 0.0);
                    px.1 |= (0..3).any(|k| t.boundary[k] && e[k].0 - e[k].1 <= 0.0);
                    let zc = t.z[0] + t.dzdx * (c.x - t.s[0].x) + t.dzdy * (c.y - t.s[0].y);
                    px.2 = px.2.max((zc + reach).min(z_top));
                }
            }
        }
        let level = &mut self.levels[0];
        for y in y0..y1 {
            for x in x0..x1 {
                let (inside, crossed, far) = acc[(y - y0) as usize * rw + (x - x0) as usize];
                if inside && !crossed {
                    // Rounding to f32 must not bring it nearer.
                    let f = far as f32;
                    let f = if (f as f64) < far { f.next_up() } else { f };
                    let px = &mut level.depth[(y * level.width + x) as usize];
                    *px = px.min(f);
                }
            }
        }
    }

    /// Builds the max-depth mip chain from level 0 (down to 1×1), and the
    /// nearest-depth chain beside it.
    pub fn build_hzb(&mut self) {
        self.levels.truncate(1);
        self.nearest.clear();
        while let Some(last) = self.levels.last().filter(|l| l.width > 1 || l.height > 1) {
            let next = last.reduce(f32::max);
            let near = self.nearest.last().unwrap_or(&self.levels[0]).reduce(f32::min);
            self.levels.push(next);
            self.nearest.push(near);
        }
    }

    /// Whether anything inside the world-space box `region` may be hidden
    /// ([`Self::test_box`] of a box within it): false when the region lies
    /// wholly off screen, or its farthest depth is not behind the nearest
    /// depth stored over its screen rectangle. The occlusion stage asks it
    /// once per culling chunk and skips the tests of a chunk where it is
    /// false. It is conservative: true whenever unsure (a corner not in
    /// front of the near plane, non-finite), and false only where every
    /// box inside gets false from `test_box` — a box inside reaches no
    /// farther than the region, and the pixels it would read lie inside the
    /// region's rectangle (grown here by two pixels against rounding),
    /// where nothing stored is nearer than the region's farthest depth.
    pub fn may_hide_within(&self, region: &Aabb) -> bool {
        let Some(BoxOnScreen { far, lo, hi, .. }) = self.project_box(region) else { return true };
        let Some((level, x0, y0, x1, y1)) = self.rect_level(lo - DVec2::ONE, hi + DVec2::ONE) else { return false };
        let l = if level == 0 { &self.levels[0] } else { &self.nearest[level - 1] };
        let mut nearest = FAR;
        for y in y0..=y1.min(l.height - 1) {
            for x in x0..=x1.min(l.width - 1) {
                nearest = nearest.min(l.at(x, y));
            }
        }
        far > nearest
    }

    /// Whether the world-space box is hidden behind the occluders (strictly,
    /// by [`DEPTH_MARGIN`]). False for a box reaching in front of the near
    /// plane, off screen or non-finite. Call [`Self::build_hzb`] first
    /// (without it only level 0 is read, which gives the same answer slower).
    pub fn test_box(&self, b: &Aabb) -> bool {
        let nearest = self.depth.of((b.min + b.max) * 0.5) - self.depth.forward.abs().dot((b.max - b.min) * 0.5);
        self.may_hide_at_depth(nearest) && !self.visible_at_centre(b) && self.box_hidden(b)
    }

    /// Whether something whose nearest point lies at view depth `depth`
    /// ([`ViewDepth`]) may be hidden: false when it lies in front of every
    /// occluder vertex rasterized (or nothing is), so the quickest answer
    /// for most of a view full of small things in front of a few far
    /// occluders (the occlusion stage asks it with each visible
    /// primitive's centre depth before reading its bounds). Exact: depth
    /// in the buffer grows with view depth, every stored depth is at least
    /// that of the nearest occluder vertex, and a box is hidden only when
    /// its nearest depth is strictly behind the stored depth over its
    /// rectangle by [`DEPTH_MARGIN`]. NaN may hide (the whole test decides).
    pub fn may_hide_at_depth(&self, depth: f32) -> bool {
        depth.partial_cmp(&self.front_limit) != Some(std::cmp::Ordering::Less)
    }

    /// How the buffer measures view depth ([`Self::may_hide_at_depth`]).
    pub fn view_depth(&self) -> ViewDepth {
        self.depth
    }

    /// The whole test of [`Self::test_box`]: the box's eight corners give
    /// its nearest depth and its screen rectangle.
    fn box_hidden(&self, b: &Aabb) -> bool {
        let Some(BoxOnScreen { near, lo, hi, .. }) = self.project_box(b) else { return false };
        self.rect_farthest(lo, hi).is_some_and(|far| near > far + DEPTH_MARGIN)
    }

    /// The quick answer for most boxes that are not hidden: the box's
    /// centre projects onto a level-0 pixel whose stored depth is not
    /// nearer than the centre's own (an uncovered pixel stores the far
    /// plane). Then the box is not hidden, as the full test would find:
    /// the box's nearest depth is at most its centre's (depth grows with
    /// view distance), and the pixel lies inside the rectangle the full
    /// test reads (the centre projects inside the hull of the corners, and
    /// the rectangle is grown by a pixel), whose farthest depth is at least
    /// the pixel's. One projection instead of eight; `false` says nothing.
    fn visible_at_centre(&self, b: &Aabb) -> bool {
        let c = self.view_proj * ((b.min + b.max) * 0.5).extend(1.0);
        if !(c.is_finite() && c.w > 0.0 && c.z >= 0.0) {
            return false;
        }
        let inv = 1.0 / c.w;
        let (x, y) = ((c.x * inv * 0.5 + 0.5) * self.width as f32, (c.y * inv * 0.5 + 0.5) * self.height as f32);
        if !(x >= 0.0 && y >= 0.0 && x < self.width as f32 && y < self.height as f32) {
            return false;
        }
        c.z * inv <= self.levels[0].at(x as u32, y as u32) + DEPTH_MARGIN
    }

    /// Whether the sphere is hidden (the box around it; see [`Self::test_box`]).
    pub fn test_sphere(&self, center: Vec3, radius: f32) -> bool {
        self.test_box(&Aabb::from_center_extent(center, Vec3::splat(radius.max(0.0))))
    }

    /// The box's eight corners projected: its nearest and farthest depth
    /// and its screen rectangle in buffer pixels; `None` when a corner is
    /// non-finite or not in front of the near plane.
    fn project_box(&self, b: &Aabb) -> Option<BoxOnScreen> {
        let mut out = BoxOnScreen {
            near: f32::INFINITY,
            far: f32::NEG_INFINITY,
            lo: DVec2::splat(f64::INFINITY),
            hi: DVec2::splat(f64::NEG_INFINITY),
        };
        for i in 0..8 {
            let p = Vec3::new(
                if i & 1 == 0 { b.min.x } else { b.max.x },
                if i & 2 == 0 { b.min.y } else { b.max.y },
                if i & 4 == 0 { b.min.z } else { b.max.z },
            );
            let c = self.view_proj * p.extend(1.0);
            if !(c.is_finite() && c.w > 0.0 && c.z >= 0.0) {
                return None;
            }
            let z = c.z / c.w;
            out.near = out.near.min(z);
            out.far = out.far.max(z);
            let s = DVec2::new(
                (c.x as f64 / c.w as f64 * 0.5 + 0.5) * self.width as f64,
                (c.y as f64 / c.w as f64 * 0.5 + 0.5) * self.height as f64,
            );
            out.lo = out.lo.min(s);
            out.hi = out.hi.max(s);
        }
        Some(out)
    }

    /// The farthest stored depth over the pixels of the screen rectangle
    /// (`lo`..`hi` in buffer pixels, grown by a pixel), or `None` when it
    /// is not wholly on screen.
    fn rect_farthest(&self, lo: DVec2, hi: DVec2) -> Option<f32> {
        let (level, x0, y0, x1, y1) = self.rect_level(lo, hi)?;
        let l = &self.levels[level];
        let mut far = 0.0f32;
        for y in y0..=y1.min(l.height - 1) {
            for x in x0..=x1.min(l.width - 1) {
                far = far.max(l.at(x, y));
            }
        }
        Some(far)
    }

    /// The texels of the screen rectangle (`lo`..`hi` in buffer pixels,
    /// grown by a pixel) at the level [`Self::rect_farthest`] reads: the
    /// level and its texel range, or `None` when it is wholly off screen.
    fn rect_level(&self, lo: DVec2, hi: DVec2) -> Option<(usize, u32, u32, u32, u32)> {
        let (w, h) = (self.width as f64, self.height as f64);
        let (x0, y0, x1, y1) = ((lo.x - 1.0).floor(), (lo.y - 1.0).floor(), (hi.x + 1.0).floor(), (hi.y + 1.0).floor());
        if x1 < 0.0 || y1 < 0.0 || x0 >= w || y0 >= h {
            return None;
        }
        let (x0, y0) = (x0.max(0.0) as u32, y0.max(0.0) as u32);
        let (x1, y1) = (x1.min(w - 1.0) as u32, y1.min(h - 1.0) as u32);
        // The finest level where the rectangle spans at most 8×8 texels (a
        // coarser texel reaches farther past the rectangle's edges).
        let mut level = 0;
        while level + 1 < self.levels.len()
            && ((x1 >> level) - (x0 >> level) >= RECT_TEXELS || (y1 >> level) - (y0 >> level) >= RECT_TEXELS)
        {
            level += 1;
        }
        Some((level, x0 >> level, y0 >> level, x1 >> level, y1 >> level))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes;
    use glam::{Quat, Vec2};
    use proptest::prelude::*;
    use rhi_vulkan::Rect;
    use test_support::f32_in;

    fn view(w: u32, h: u32) -> SceneView {
        SceneView::perspective(Vec3::new(0.0, -10.0, 0.0), Vec3::ZERO, Vec3::Z, 1.0, 0.5, 100.0, Rect::from_size(w, h)).unwrap()
    }

    /// A buffer of `w` × `h` pixels; `ndc` maps buffer pixels to NDC for
    /// triangles given in pixels at `w` = 1.
    fn buffer(w: u32, h: u32) -> OcclusionBuffer {
        OcclusionBuffer::with_size(&view(w * 4, h * 4), w, h)
    }

    fn at_pixels(b: &OcclusionBuffer, p: Vec2, z: f32) -> Vec4 {
        let (w, h) = b.size();
        Vec4::new(p.x / w as f32 * 2.0 - 1.0, p.y / h as f32 * 2.0 - 1.0, z, 1.0)
    }

    #[test]
    fn buffer_size_follows_the_aspect_and_is_never_finer_than_the_view() {
        assert_eq!(buffer_size(1280, 720), (256, 144));
        assert_eq!(buffer_size(720, 1280), (144, 256));
        assert_eq!(buffer_size(64, 48), (64, 48));
        assert_eq!(buffer_size(1, 1000), (1, 256));
        assert_eq!(OcclusionBuffer::new(&view(192, 128)).size(), (192, 128));
    }

    #[test]
    fn a_pixel_takes_depth_only_when_wholly_covered() {
        let mut b = buffer(8, 8);
        // A triangle whose hypotenuse runs through pixel centres: the
        // pixels on the diagonal are half covered.
        // (Pixels (x, y) with x + y = 6 touch it at a corner only.)
        b.rasterize_clip([Vec2::new(-1.0, -1.0), Vec2::new(9.0, -1.0), Vec2::new(-1.0, 9.0)].map(|p| at_pixels(&b, p, 0.5)));
        for y in 0..8 {
            for x in 0..8 {
                let d = b.depth(0, x, y).unwrap();
                if x + y < 6 {
                    assert!((d - 0.5).abs() < 1e-6, "({x}, {y}) inside: {d}");
                } else {
                    assert_eq!(d, FAR, "({x}, {y}) half or not covered");
                }
            }
        }
        // A triangle within one pixel covers nothing.
        let mut b = buffer(8, 8);
        b.rasterize_clip([Vec2::new(2.1, 2.1), Vec2::new(2.9, 2.1), Vec2::new(2.1, 2.9)].map(|p| at_pixels(&b, p, 0.1)));
        assert!((0..64).all(|i| b.depth(0, i % 8, i / 8) == Some(FAR)));
    }

    #[test]
    fn a_pixel_keeps_the_nearest_triangle_and_its_farthest_depth_over_the_square() {
        let mut b = buffer(4, 4);
        let (w, _) = b.size();
        // One triangle over the whole buffer, depth `z` at its corners.
        let cover = |b: &mut OcclusionBuffer, z: [f32; 3]| {
            let p = [Vec2::new(-1.0, -1.0), Vec2::new(20.0, -1.0), Vec2::new(-1.0, 20.0)];
            b.rasterize_clip([0, 1, 2].map(|i| at_pixels(b, p[i], z[i])));
        };
        cover(&mut b, [0.5; 3]);
        cover(&mut b, [0.7; 3]);
        assert!((b.depth(0, 1, 1).unwrap() - 0.5).abs() < 1e-6, "the nearer stays");
        // A slope along x: depth 0.1 at x = -1, 0.1 more per pixel.
        let mut s = buffer(4, 4);
        cover(&mut s, [0.1, 2.2, 0.1]);
        for x in 0..w {
            let far_edge = 0.1 + 0.1 * (x as f32 + 1.0 + 1.0 + COVERAGE_MARGIN as f32);
            assert!((s.depth(0, x, 2).unwrap() - far_edge).abs() < 1e-5, "x {x}: {:?} vs {far_edge}", s.depth(0, x, 2));
        }
    }

    #[test]
    fn the_mip_chain_keeps_the_farthest_of_each_two_by_two() {
        let mut b = buffer(5, 3);
        for (i, d) in b.levels[0].depth.iter_mut().enumerate() {
            *d = (i as f32 * 0.37).fract();
        }
        b.build_hzb();
        assert_eq!(b.level_count(), 4, "5x3, 3x2, 2x1, 1x1");
        for l in 1..b.level_count() {
            let (lw, lh) = (b.levels[l].width, b.levels[l].height);
            let below = &b.levels[l - 1];
            for y in 0..lh {
                for x in 0..lw {
                    let mut m = 0.0f32;
                    for (cx, cy) in [(2 * x, 2 * y), (2 * x + 1, 2 * y), (2 * x, 2 * y + 1), (2 * x + 1, 2 * y + 1)] {
                        if cx < below.width && cy < below.height {
                            m = m.max(below.at(cx, cy));
                        }
                    }
                    assert_eq!(b.depth(l, x, y), Some(m), "level {l} ({x}, {y})");
                }
            }
        }
        assert_eq!(b.depth(3, 0, 0), Some(b.levels[0].depth.iter().copied().fold(0.0, f32::max)));
        assert_eq!(b.depth(9, 0, 0), None);
    }

    /// A wall (the cube mesh scaled to 6 × 1 × 10 at y = 0) seen from y = -10.
    fn wall_buffer() -> OcclusionBuffer {
        let v = view(256, 256);
        let mut b = OcclusionBuffer::new(&v);
        let cube = shapes::cube(1.0);
        let m = Mat4::from_scale(Vec3::new(6.0, 1.0, 10.0));
        b.rasterize(&m, &cube.vertices, &[(&cube.indices, false)]);
        b.build_hzb();
        b
    }

    #[test]
    fn the_test_is_strict_and_never_occludes_across_the_near_plane() {
        let b = wall_buffer();
        assert_eq!(b.triangles(), 2, "the face seen from the front; the others face away or are edge-on");
        let behind = |y: f32| Aabb::from_center_extent(Vec3::new(0.0, y, 0.0), Vec3::splat(1.0));
        assert!(b.test_box(&behind(3.0)), "well behind the wall");
        assert!(!b.test_box(&behind(-3.0)), "in front");
        // The wall's front face is at y = -0.5: a box whose front touches it is not hidden.
        assert!(!b.test_box(&behind(0.5)), "touching the wall's front face");
        assert!(!b.test_box(&behind(-0.5 + 1.0 + 1e-4)), "a hair behind: within the margin");
        assert!(!b.test_box(&Aabb::from_center_extent(Vec3::new(6.0, 3.0, 0.0), Vec3::splat(1.0))), "beside the wall");
        assert!(!b.test_box(&Aabb::from_center_extent(Vec3::new(3.5, 3.0, 0.0), Vec3::splat(1.0))), "partly beside");
        assert!(!b.test_box(&Aabb::from_center_extent(Vec3::new(0.0, -10.0, 0.0), Vec3::new(1.0, 20.0, 1.0))), "across the near plane");
        assert!(!b.test_box(&Aabb::from_center_extent(Vec3::new(0.0, 3.0, 0.0), Vec3::splat(f32::NAN))), "non-finite");
        assert!(b.test_sphere(Vec3::new(0.0, 5.0, 0.0), 1.0));
        assert!(b.may_hide_within(&behind(3.0)), "a region behind the wall may hide what it holds");
        assert!(!b.may_hide_within(&Aabb::from_center_extent(Vec3::new(0.0, -3.0, 0.0), Vec3::splat(1.0))), "in front of it");
        assert!(!b.may_hide_within(&Aabb::from_center_extent(Vec3::new(40.0, 3.0, 0.0), Vec3::splat(1.0))), "off screen");
        assert!(!b.test_sphere(Vec3::new(0.0, 5.0, 0.0), 50.0), "reaching in front of the wall");
        // The wall's front face lies at depth 9.5 from the eye (y = -10).
        assert!(!b.may_hide_at_depth(9.4) && b.may_hide_at_depth(9.5) && b.may_hide_at_depth(f32::NAN));
        assert!(!OcclusionBuffer::new(&view(64, 64)).may_hide_at_depth(1e30), "nothing rasterized hides nothing");
        let mut clip = buffer(8, 8);
        clip.rasterize_clip([Vec2::new(-1.0, -1.0), Vec2::new(9.0, -1.0), Vec2::new(-1.0, 9.0)].map(|p| at_pixels(&clip, p, 0.5)));
        assert!(clip.may_hide_at_depth(-1e30), "clip-space triangles: no depth known, every box tested");
    }

    #[test]
    fn back_faces_and_bad_input_are_not_occluders() {
        // A plane facing +Z seen from -Y after a rotation that turns it away.
        let v = view(128, 128);
        let plane = shapes::plane(10.0);
        let toward = Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2);
        let away = Mat4::from_rotation_x(-std::f32::consts::FRAC_PI_2);
        let hidden = Aabb::from_center_extent(Vec3::new(0.0, 5.0, 0.0), Vec3::splat(1.0));
        let test = |m: Mat4, two_sided: bool| {
            let mut b = OcclusionBuffer::new(&v);
            b.rasterize(&m, &plane.vertices, &[(&plane.indices, two_sided)]);
            b.build_hzb();
            b.test_box(&hidden)
        };
        assert!(test(toward, false), "facing the camera");
        assert!(!test(away, false), "facing away: culled by the GPU");
        assert!(test(away, true), "two-sided");
        // Mirrored: the GPU reverses its culling, so the outward side stays the front.
        let mirror = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
        assert!(test(toward * mirror, false) && !test(away * mirror, false));
        // Out-of-range indices and non-finite vertices are skipped.
        let mut bad = plane.clone();
        bad.vertices[1].position = [f32::NAN, 0.0, 0.0];
        let mut b = OcclusionBuffer::new(&v);
        b.rasterize(&toward, &bad.vertices, &[(&bad.indices, false), (&[0, 1, 99][..], false)]);
        assert_eq!(b.triangles(), 1, "only the triangle without the NaN vertex");
        // A triangle crossing the near plane is left out.
        b.rasterize_clip([Vec4::new(0.0, 0.0, -0.1, 1.0), Vec4::new(1.0, 0.0, 0.5, 1.0), Vec4::new(0.0, 1.0, 0.5, 1.0)]);
        assert_eq!(b.triangles(), 1);
    }

    proptest! {
        /// The quick answer at the box's centre never disagrees with the
        /// whole test: it only says "not hidden" where that is the answer.
        #[test]
        fn the_centre_shortcut_never_changes_the_answer(
            c in (f32_in(-12.0, 12.0), f32_in(-9.0, 30.0), f32_in(-12.0, 12.0)),
            e in (f32_in(0.01, 6.0), f32_in(0.01, 6.0), f32_in(0.01, 6.0)),
        ) {
            let b = wall_buffer();
            let aabb = Aabb::from_center_extent(Vec3::new(c.0, c.1, c.2), Vec3::new(e.0, e.1, e.2));
            let whole = b.box_hidden(&aabb);
            prop_assert!(!(whole && b.visible_at_centre(&aabb)), "{aabb:?}: hidden, yet the shortcut says visible");
            prop_assert_eq!(b.test_box(&aabb), whole);
        }

        /// A box in front of every occluder vertex by view depth is never
        /// hidden by the whole test: the depth shortcut changes no answer.
        #[test]
        fn the_depth_shortcut_never_changes_the_answer(
            wall in f32_in(-4.0, 20.0),
            behind in f32_in(-0.2, 0.2),
            c in (f32_in(-1.0, 1.0), f32_in(-1.0, 1.0)),
            e in (f32_in(0.001, 2.0), f32_in(0.001, 2.0), f32_in(0.001, 2.0)),
        ) {
            // Boxes behind the wall's face (at y = wall - 0.5) on screen,
            // their nearest depth around it.
            let c = (c.0, wall - 0.5 + behind + e.1, c.1);
            let v = view(256, 256);
            let mut b = OcclusionBuffer::new(&v);
            let cube = shapes::cube(1.0);
            b.rasterize(&Mat4::from_scale_rotation_translation(Vec3::new(6.0, 1.0, 10.0), Quat::IDENTITY, Vec3::new(0.0, wall, 0.0)), &cube.vertices, &[(&cube.indices, false)]);
            b.build_hzb();
            let aabb = Aabb::from_center_extent(Vec3::new(c.0, c.1, c.2), Vec3::new(e.0, e.1, e.2));
            let nearest = b.view_depth().of(aabb.center()) - (aabb.max.y - aabb.min.y) * 0.5;
            if !b.may_hide_at_depth(nearest) {
                prop_assert!(!b.box_hidden(&aabb), "{aabb:?} in front (nearest depth {nearest}) yet hidden");
            }
            // In front of the wall's face by more than the slack the shortcut answers; behind it, the test.
            let face = wall - 0.5 - v.origin.y;
            prop_assert!(nearest >= face - 0.01 || !b.may_hide_at_depth(nearest));
            prop_assert!(nearest < face || b.may_hide_at_depth(nearest));
        }

        /// A region that can hide nothing holds no hidden box: the
        /// occlusion stage may skip every test inside it.
        #[test]
        fn a_region_that_can_hide_nothing_holds_no_hidden_box(
            c in (f32_in(-14.0, 14.0), f32_in(-9.0, 40.0), f32_in(-14.0, 14.0)),
            e in (f32_in(0.1, 12.0), f32_in(0.1, 12.0), f32_in(0.1, 12.0)),
            inner in proptest::collection::vec((f32_in(0.0, 1.0), f32_in(0.0, 1.0), f32_in(0.0, 1.0), f32_in(0.0, 1.0)), 16),
        ) {
            let b = wall_buffer();
            let region = Aabb::from_center_extent(Vec3::new(c.0, c.1, c.2), Vec3::new(e.0, e.1, e.2));
            if b.may_hide_within(&region) {
                return Ok(());
            }
            for &(u, v, w, s) in &inner {
                let size = (region.max - region.min) * s * 0.5;
                let min = region.min + (region.max - region.min - size) * Vec3::new(u, v, w);
                let sub = Aabb { min, max: min + size };
                prop_assert!(!b.test_box(&sub), "{sub:?} inside {region:?} is hidden");
            }
        }

        /// A row's span holds every pixel whose grown square is not wholly
        /// outside an edge: the rasterizer skips nothing it would keep.
        #[test]
        fn a_row_span_holds_every_pixel_the_edges_do_not_reject(
            p in proptest::collection::vec((f32_in(-8.0, 40.0), f32_in(-8.0, 40.0), f32_in(0.0, 1.0)), 3),
        ) {
            let b = buffer(32, 32);
            let Some(t) = b.screen_triangle([0, 1, 2].map(|i| at_pixels(&b, Vec2::new(p[i].0, p[i].1), p[i].2))) else { return Ok(()) };
            let half = 0.5 + COVERAGE_MARGIN;
            for y in 0..32u32 {
                let (x0, x1) = t.row_span(y as f64 + 0.5, half, 0, 32);
                // An empty row (a triangle's box clipped away) stays empty.
                let (a, b) = t.row_span(y as f64 + 0.5, half, 20, 10);
                prop_assert!(a >= b, "an empty row gave {a}..{b}");
                for x in 0..32u32 {
                    let c = DVec2::new(x as f64 + 0.5, y as f64 + 0.5);
                    let kept = t.edges.iter().all(|&(a, d)| d.perp_dot(c - a) + half * (d.x.abs() + d.y.abs()) >= 0.0);
                    prop_assert!(!kept || (x0..x1).contains(&x), "pixel ({x}, {y}) outside the span {x0}..{x1}");
                }
            }
        }

        /// Every pixel of a row's inner span has its grown square strictly
        /// inside every edge: the rasterizer's shortcut there (centre
        /// inside, no edge crossing) is what the per-pixel test finds.
        #[test]
        fn an_inner_span_holds_only_pixels_wholly_inside(
            p in proptest::collection::vec((f32_in(-8.0, 40.0), f32_in(-8.0, 40.0), f32_in(0.0, 1.0)), 3),
        ) {
            let b = buffer(32, 32);
            let Some(t) = b.screen_triangle([0, 1, 2].map(|i| at_pixels(&b, Vec2::new(p[i].0, p[i].1), p[i].2))) else { return Ok(()) };
            let half = 0.5 + COVERAGE_MARGIN;
            let mut inside = 0;
            for y in 0..32u32 {
                let (x0, x1) = t.row_span(y as f64 + 0.5, half, 0, 32);
                let (i0, i1) = t.inner_span(y as f64 + 0.5, half, x0, x1);
                prop_assert!(i0 >= i1 || (x0 <= i0 && i1 <= x1), "inner {i0}..{i1} outside the span {x0}..{x1}");
                for x in i0..i1 {
                    let c = DVec2::new(x as f64 + 0.5, y as f64 + 0.5);
                    let wholly = t.edges.iter().all(|&(a, d)| d.perp_dot(c - a) - half * (d.x.abs() + d.y.abs()) > 0.0);
                    prop_assert!(wholly, "pixel ({x}, {y}) in the inner span {i0}..{i1} is not wholly inside");
                    inside += 1;
                }
            }
            // A big triangle has an inner part (the shortcut is taken).
            let area = ((p[1].0 - p[0].0) * (p[2].1 - p[0].1) - (p[2].0 - p[0].0) * (p[1].1 - p[0].1)).abs() / 2.0;
            let on_buffer = p.iter().all(|q| (0.0..=32.0).contains(&q.0) && (0.0..=32.0).contains(&q.1));
            prop_assert!(!on_buffer || area < 400.0 || inside > 0, "area {area} but no pixel inside");
        }

        #[test]
        fn stored_depth_is_never_nearer_than_the_triangle(
            p in proptest::collection::vec((f32_in(-8.0, 40.0), f32_in(-8.0, 40.0), f32_in(0.0, 1.0)), 3),
            samples in proptest::collection::vec((f32_in(0.0, 1.0), f32_in(0.0, 1.0)), 8),
        ) {
            let mut b = buffer(32, 32);
            let s: Vec<DVec2> = p.iter().map(|&(x, y, _)| DVec2::new(x as f64, y as f64)).collect();
            let z: Vec<f64> = p.iter().map(|&(_, _, z)| z as f64).collect();
            b.rasterize_clip([0, 1, 2].map(|i| at_pixels(&b, Vec2::new(p[i].0, p[i].1), p[i].2)));
            let cross = (s[1] - s[0]).perp_dot(s[2] - s[0]);
            for y in 0..32 {
                for x in 0..32 {
                    let d = b.depth(0, x, y).unwrap();
                    if d == FAR {
                        continue;
                    }
                    for &(u, v) in &samples {
                        let q = DVec2::new(x as f64 + u as f64, y as f64 + v as f64);
                        // Barycentrics of q: inside, and the exact depth there.
                        let l1 = (q - s[0]).perp_dot(s[2] - s[0]) / cross;
                        let l2 = (s[1] - s[0]).perp_dot(q - s[0]) / cross;
                        let l0 = 1.0 - l1 - l2;
                        prop_assert!(l0 >= -1e-9 && l1 >= -1e-9 && l2 >= -1e-9, "({x}, {y}) stored {d} but {q:?} is outside");
                        let exact = l0 * z[0] + l1 * z[1] + l2 * z[2];
                        prop_assert!(d as f64 >= exact - 1e-7, "({x}, {y}): stored {d} < exact {exact} at {q:?}");
                    }
                }
            }
        }
    }
}
