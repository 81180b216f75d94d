//! Axis-aligned bounding boxes of particles.
//!
//! The renderer culls a particle system by one box. Computing it walks every
//! live particle, so it is done on request (once per frame, when the
//! component sends its bounds), not inside the tick; a system whose extent is
//! known can skip the walk with fixed bounds.
//!
//! An emitter's box is the box of its particles' positions, padded by the
//! largest half-diagonal any of its sprites can have (its spawn sizes'
//! largest times its size curve's largest, fixed when the emitter is
//! compiled): a box that holds every sprite under any rotation, found by
//! reading positions only ([`of_points_padded`], four particles per
//! SIMD step). Padding each particle by its own size, as
//! [`of_sprites`] does, gives a tighter box but reads sizes the tick
//! does not store and costs a square root per particle.

use glam::{Vec2, Vec3, Vec4};

/// The workspace's one axis-aligned box (`renderer::Aabb`); the particle
/// boxes below are functions over it.
pub use renderer::Aabb;

/// The box holding sprites centred at `locations` with quad `sizes`
/// under any rotation (each padded by half its diagonal in every axis).
/// `None` when there are none.
pub fn of_sprites(locations: &[Vec3], sizes: &[Vec2]) -> Option<Aabb> {
    if locations.is_empty() {
        return None;
    }
    let mut min = Vec3::splat(f32::INFINITY);
    let mut max = Vec3::splat(f32::NEG_INFINITY);
    for (p, s) in locations.iter().zip(sizes) {
        // A rotated quad reaches at most half its diagonal from the centre.
        let r = Vec3::splat(s.length() * 0.5);
        min = min.min(*p - r);
        max = max.max(*p + r);
    }
    Some(Aabb { min, max })
}

/// The box of `points`, grown by `pad` on every side. `None` when there
/// are none.
pub fn of_points_padded(points: &[Vec3], pad: f32) -> Option<Aabb> {
    if points.is_empty() {
        return None;
    }
    // Four points are twelve floats, three `Vec4`s; lane `j` of the
    // `k`-th holds component `(4k + j) % 3`.
    let flat: &[f32] = bytemuck::cast_slice(points);
    let mut lo = [Vec4::splat(f32::INFINITY); 3];
    let mut hi = [Vec4::splat(f32::NEG_INFINITY); 3];
    for c in flat.chunks_exact(12) {
        for k in 0..3 {
            let v = Vec4::from_slice(&c[4 * k..4 * k + 4]);
            lo[k] = lo[k].min(v);
            hi[k] = hi[k].max(v);
        }
    }
    let mut min = Vec3::splat(f32::INFINITY);
    let mut max = Vec3::splat(f32::NEG_INFINITY);
    for k in 0..3 {
        for j in 0..4 {
            let axis = (4 * k + j) % 3;
            min[axis] = min[axis].min(lo[k][j]);
            max[axis] = max[axis].max(hi[k][j]);
        }
    }
    for p in &points[points.len() - points.len() % 4..] {
        min = min.min(*p);
        max = max.max(*p);
    }
    Some(Aabb { min: min - Vec3::splat(pad), max: max + Vec3::splat(pad) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sprite_bounds_pad_by_half_diagonal() {
        let b = of_sprites(&[Vec3::ZERO, Vec3::new(10.0, 0.0, -2.0)], &[Vec2::new(6.0, 8.0), Vec2::ZERO]).unwrap();
        assert_eq!(b.min, Vec3::new(-5.0, -5.0, -5.0));
        assert_eq!(b.max, Vec3::new(10.0, 5.0, 5.0));
        assert!(of_sprites(&[], &[]).is_none());
        assert!(b.contains(b.center()));
    }

    #[test]
    fn padded_point_box_matches_a_plain_fold_for_every_remainder() {
        let mut rng = renderer::Rng::with_stream(3, 3);
        for n in [1, 3, 4, 5, 11, 12, 13, 1000] {
            let points: Vec<Vec3> =
                (0..n).map(|_| Vec3::new(rng.range_f32(-50.0, 50.0), rng.range_f32(-5.0, 80.0), rng.range_f32(-9.0, 1.0))).collect();
            let b = of_points_padded(&points, 0.5).unwrap();
            let min = points.iter().fold(Vec3::INFINITY, |m, p| m.min(*p));
            let max = points.iter().fold(Vec3::NEG_INFINITY, |m, p| m.max(*p));
            assert_eq!((b.min, b.max), (min - 0.5, max + 0.5), "{n} points");
        }
        assert!(of_points_padded(&[], 1.0).is_none());
    }
}
