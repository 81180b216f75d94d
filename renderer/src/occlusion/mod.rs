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
use crate::view::SceneView;
use glam::{DVec2, Mat4, Vec3};

mod raster;

/// The frame counter ([`crate::FrameStats::counters`]) under which dynamic
/// proxies report the sub-elements (instances) they culled against the
/// occlusion buffer; also [`crate::FrameStats::occluded_instances`].
pub const OCCLUDED_INSTANCES_COUNTER: &str = "occluded_instances";

/// The occlusion buffer's width in pixels for a landscape view (a portrait
/// view gets this height); the other side follows the view's aspect. Never
/// more than the view's own pixels.
pub const OCCLUSION_BUFFER_WIDTH: u32 = 256;

/// The largest side [`OcclusionBuffer::with_size`] makes (4096² depths: 64 MB).
pub const MAX_OCCLUSION_BUFFER_SIDE: u32 = 4096;

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

    /// An empty buffer of `width` × `height` pixels for `view`, each side
    /// clamped to 1..=[`MAX_OCCLUSION_BUFFER_SIDE`] (a coarser buffer
    /// stays conservative; 65536² would overflow a `u32` pixel count and
    /// 60000² take 14 GB). Conservative only while it is no finer than the
    /// view's viewport (as [`Self::new`] makes it).
    pub fn with_size(view: &SceneView, width: u32, height: u32) -> Self {
        let side = |s: u32| s.clamp(1, MAX_OCCLUSION_BUFFER_SIDE);
        let (width, height) = (side(width), side(height));
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
    use glam::{Quat, Vec2, Vec4};
    use proptest::prelude::*;
    use rhi_vulkan::Rect;
    use test_support::f32_in;

    pub(super) fn view(w: u32, h: u32) -> SceneView {
        SceneView::perspective(Vec3::new(0.0, -10.0, 0.0), Vec3::ZERO, Vec3::Z, 1.0, 0.5, 100.0, Rect::from_size(w, h)).unwrap()
    }

    /// A buffer of `w` × `h` pixels; `ndc` maps buffer pixels to NDC for
    /// triangles given in pixels at `w` = 1.
    pub(super) fn buffer(w: u32, h: u32) -> OcclusionBuffer {
        OcclusionBuffer::with_size(&view(w * 4, h * 4), w, h)
    }

    pub(super) fn at_pixels(b: &OcclusionBuffer, p: Vec2, z: f32) -> Vec4 {
        let (w, h) = b.size();
        Vec4::new(p.x / w as f32 * 2.0 - 1.0, p.y / h as f32 * 2.0 - 1.0, z, 1.0)
    }

    #[test]
    fn a_huge_or_empty_buffer_size_is_capped_not_a_panic() {
        let v = view(640, 360);
        assert_eq!(OcclusionBuffer::with_size(&v, 65536, 65536).size(), (MAX_OCCLUSION_BUFFER_SIDE, MAX_OCCLUSION_BUFFER_SIDE));
        assert_eq!(OcclusionBuffer::with_size(&v, 0, u32::MAX).size(), (1, MAX_OCCLUSION_BUFFER_SIDE));
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



    }
}
