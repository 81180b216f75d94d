//! The checks behind [`SectionData`](crate::SectionData): finite values,
//! indices in range, and the positions' box, fast enough to run on every
//! per-frame update of a large section.
//!
//! An update's cost is dominated by memory: reading the new arrays to check
//! them, then copying them into the section. The checks are written to run
//! at the speed of that first read. They go over cache-sized blocks,
//! branch-free inside a block (exiting at the first bad block, where a
//! second, simple scan finds the exact element to report), and treat runs
//! of four `Vec3`s as three SIMD vectors of floats, so finiteness and the
//! box are a handful of vector operations per four vertices. A float is
//! finite exactly when multiplying it by zero gives zero rather than NaN,
//! so one multiply and one compare test four lanes at once.

use glam::{BVec4A, Vec2, Vec3, Vec4};

use crate::bounds::Aabb;
use crate::error::{ProcMeshError, Result};

/// Elements per block in the check passes.
const BLOCK: usize = 4096;

/// The largest position coordinate, either sign. Finite is not enough:
/// the renderer's bounds take the box's extent and its length, and with
/// coordinates near `f32::MAX` the difference of two corners, or the sum
/// of squares behind a length, overflows to infinity. Below this limit
/// neither can, for any two sections of a mesh (2e18 across, and
/// 3 * (1e18)^2 is far below `f32::MAX`); it is still ten orders of
/// magnitude beyond any world.
pub const MAX_COORDINATE: f32 = 1e18;

/// The first triangle index at or past `vertex_count`, as an error.
pub(crate) fn check_indices(triangles: &[u32], vertex_count: usize) -> Result<()> {
    // `vertex_count` fits in u32 (checked by the caller), so compare as u32.
    let limit = vertex_count as u32;
    for (block, indices) in triangles.chunks(BLOCK * 3).enumerate() {
        let max = indices.iter().copied().fold(0, u32::max);
        if indices.is_empty() || max < limit {
            continue;
        }
        let at = indices.iter().position(|&i| i >= limit).unwrap_or(0);
        let at = block * BLOCK * 3 + at;
        return Err(ProcMeshError::IndexOutOfRange { triangle: at / 3, index: triangles[at], vertex_count });
    }
    Ok(())
}

/// Whether `x` is NaN or infinite: all exponent bits set. Plain integer
/// operations, so a block of them has no branches.
#[inline(always)]
fn non_finite(x: f32) -> bool {
    x.to_bits() & 0x7f80_0000 == 0x7f80_0000
}

pub(crate) fn non_finite3(v: &Vec3) -> bool {
    non_finite(v.x) | non_finite(v.y) | non_finite(v.z)
}

pub(crate) fn non_finite2(v: &Vec2) -> bool {
    non_finite(v.x) | non_finite(v.y)
}

/// Four consecutive `Vec3`s as three `Vec4`s holding their twelve floats
/// in memory order, lanes `(x y z x) (y z x y) (z x y z)`: three plain
/// vector loads, where converting each `Vec3` to a SIMD vector would cost
/// three scalar loads and two shuffles.
#[inline(always)]
fn quad_lanes(a: Vec3, b: Vec3, c: Vec3, d: Vec3) -> [Vec4; 3] {
    [Vec4::new(a.x, a.y, a.z, b.x), Vec4::new(b.y, b.z, c.x, c.y), Vec4::new(c.z, d.x, d.y, d.z)]
}

/// Folds `f` over `points` as [`quad_lanes`]; a tail shorter than four
/// is folded one point at a time, each repeated to fill a quad.
#[inline(always)]
fn fold_quads<A>(points: &[Vec3], init: A, mut f: impl FnMut(A, [Vec4; 3]) -> A) -> A {
    let mut quads = points.chunks_exact(4);
    let mut acc = init;
    for quad in &mut quads {
        if let &[a, b, c, d] = quad {
            acc = f(acc, quad_lanes(a, b, c, d));
        }
    }
    for &p in quads.remainder() {
        acc = f(acc, quad_lanes(p, p, p, p));
    }
    acc
}

/// Which lanes of `v` are NaN or infinite (`v * 0` is NaN exactly then).
#[inline(always)]
fn non_finite_lanes(v: Vec4) -> BVec4A {
    (v * 0.0).is_nan_mask()
}

/// Checks that every position is finite and returns their box, in one
/// pass over the floats in SIMD registers.
pub(crate) fn scan_positions(positions: &[Vec3]) -> Result<Aabb> {
    // Per vector of the quad, a min and a max; lane k of vector j always
    // holds the same axis, so the axes are sorted out at the end. NaN may
    // or may not pass through `min`, but it never gets past the mask.
    let mut lo = [Vec4::INFINITY; 3];
    let mut hi = [Vec4::NEG_INFINITY; 3];
    for (block, points) in positions.chunks(BLOCK).enumerate() {
        let bad = fold_quads(points, BVec4A::FALSE, |bad, lanes| {
            for (j, &v) in lanes.iter().enumerate() {
                lo[j] = lo[j].min(v);
                hi[j] = hi[j].max(v);
            }
            bad | non_finite_lanes(lanes[0]) | non_finite_lanes(lanes[1]) | non_finite_lanes(lanes[2])
        });
        if bad.any() {
            let at = points.iter().position(non_finite3).unwrap_or(0);
            return Err(ProcMeshError::NonFinitePosition { vertex: block * BLOCK + at });
        }
    }
    // Lanes (x y z x) (y z x y) (z x y z).
    let axes = |[a, b, c]: [Vec4; 3], pick: fn(f32, f32) -> f32| {
        Vec3::new(pick(pick(a.x, a.w), pick(b.z, c.y)), pick(pick(a.y, b.x), pick(b.w, c.z)), pick(pick(a.z, b.y), pick(c.x, c.w)))
    };
    let (min, max) = (axes(lo, f32::min), axes(hi, f32::max));
    // One compare on the box; the exact vertex only on the error path.
    if min.min_element() < -MAX_COORDINATE || max.max_element() > MAX_COORDINATE {
        let vertex = positions.iter().position(|p| p.abs().max_element() > MAX_COORDINATE).unwrap_or(0);
        return Err(ProcMeshError::PositionOutOfRange { vertex, limit: MAX_COORDINATE });
    }
    Ok(Aabb::new(min, max))
}

/// The index of the first vector that is not finite.
pub(crate) fn first_non_finite_vec3(items: &[Vec3]) -> Option<usize> {
    first_bad_block(items, |chunk| {
        fold_quads(chunk, BVec4A::FALSE, |bad, [a, b, c]| bad | non_finite_lanes(a) | non_finite_lanes(b) | non_finite_lanes(c)).any()
    })
    .map(|(start, chunk)| start + chunk.iter().position(non_finite3).unwrap_or(0))
}

/// The first block for which `is_bad` holds, with its start index.
fn first_bad_block<T>(items: &[T], is_bad: impl Fn(&[T]) -> bool) -> Option<(usize, &[T])> {
    items.chunks(BLOCK).enumerate().find(|(_, chunk)| is_bad(chunk)).map(|(block, chunk)| (block * BLOCK, chunk))
}

/// The index of the first element for which `is_bad` holds, checking a
/// block at a time without branching inside the block.
pub(crate) fn first_bad<T>(items: &[T], is_bad: impl Fn(&T) -> bool) -> Option<usize> {
    for (block, chunk) in items.chunks(BLOCK).enumerate() {
        if chunk.iter().fold(false, |any, item| any | is_bad(item)) {
            let at = chunk.iter().position(&is_bad).unwrap_or(0);
            return Some(block * BLOCK + at);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_scan_finds_nan_and_bounds() {
        let mut positions = vec![Vec3::ONE; 10_000];
        positions[17] = Vec3::new(-2.0, 0.0, 9.0);
        assert_eq!(scan_positions(&positions), Ok(Aabb::new(Vec3::new(-2.0, 0.0, 1.0), Vec3::new(1.0, 1.0, 9.0))));
        positions[8197].y = f32::NAN;
        assert_eq!(scan_positions(&positions), Err(ProcMeshError::NonFinitePosition { vertex: 8197 }));
        positions[8197].y = f32::NEG_INFINITY;
        assert_eq!(scan_positions(&positions), Err(ProcMeshError::NonFinitePosition { vertex: 8197 }));
    }

    #[test]
    fn positions_scan_matches_a_plain_fold_for_every_tail_length() {
        for n in [0, 1, 2, 3, 4, 5, 7, 8, 4099] {
            let positions: Vec<Vec3> = (0..n)
                .map(|i| {
                    let f = i as f32;
                    Vec3::new((f * 1.7).sin() * f, (f * 0.3).cos() - f, f * 0.5 - 7.0)
                })
                .collect();
            assert_eq!(scan_positions(&positions), Ok(Aabb::from_points(&positions)), "{n}");
            if n > 0 {
                let mut bad = positions.clone();
                bad[n - 1].z = f32::INFINITY;
                assert_eq!(scan_positions(&bad), Err(ProcMeshError::NonFinitePosition { vertex: n - 1 }));
                assert_eq!(first_non_finite_vec3(&bad), Some(n - 1));
            }
            assert_eq!(first_non_finite_vec3(&positions), None);
        }
    }

    #[test]
    fn index_check_reports_the_first_bad_triangle() {
        let mut triangles = vec![0u32; 3 * 6000];
        triangles[3 * 5000 + 1] = 7;
        triangles[3 * 5100] = 9;
        assert_eq!(check_indices(&triangles, 7), Err(ProcMeshError::IndexOutOfRange { triangle: 5000, index: 7, vertex_count: 7 }));
        assert_eq!(check_indices(&triangles, 10), Ok(()));
    }
}
