//! Rasterizing occluders into the [`OcclusionBuffer`]: inner-conservative
//! coverage of each occluder as one region, the farthest depth of its
//! triangles over each covered pixel (the rules are in the
//! [module docs](super)).

use super::{OccluderSection, OcclusionBuffer, COVERAGE_MARGIN};
use crate::vertex_factory::LocalVertex;
use glam::{DVec2, Mat4, Vec3, Vec4};

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

impl OcclusionBuffer {
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
}

#[cfg(test)]
mod tests {
    use super::super::tests::{at_pixels, buffer, view};
    use super::super::FAR;
    use super::*;
    use crate::math::Aabb;
    use crate::shapes;
    use glam::Vec2;
    use proptest::prelude::*;
    use test_support::f32_in;

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

    /// A triangle's three corners: pixel positions around a 32x32 buffer
    /// (partly off it) and depths.
    fn corners() -> impl Strategy<Value = Vec<(f32, f32, f32)>> {
        proptest::collection::vec((f32_in(-8.0, 40.0), f32_in(-8.0, 40.0), f32_in(0.0, 1.0)), 3)
    }

    /// The screen triangle of `corners` on `b` (`None` when it is not one).
    fn triangle(b: &OcclusionBuffer, corners: &[(f32, f32, f32)]) -> Option<ScreenTriangle> {
        b.screen_triangle([0, 1, 2].map(|i| at_pixels(b, Vec2::new(corners[i].0, corners[i].1), corners[i].2)))
    }

    proptest! {
        /// A row's span holds every pixel whose grown square is not wholly
        /// outside an edge: the rasterizer skips nothing it would keep.
        #[test]
        fn a_row_span_holds_every_pixel_the_edges_do_not_reject(p in corners()) {
            let b = buffer(32, 32);
            let Some(t) = triangle(&b, &p) else { return Ok(()) };
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
        fn an_inner_span_holds_only_pixels_wholly_inside(p in corners()) {
            let b = buffer(32, 32);
            let Some(t) = triangle(&b, &p) else { return Ok(()) };
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
