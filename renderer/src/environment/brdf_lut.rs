//! The split sum's environment BRDF (Karis 2013): for a view angle and a
//! roughness, the GGX specular lobe's directional albedo as a scale A and a
//! bias B of F0 (`F0·A + B`). Integrated once on the CPU (a few
//! milliseconds) into a small table the base pass samples.

use glam::Vec3;
use std::f32::consts::PI;

/// Texels along each side of the table: n·v across, roughness down.
pub(crate) const LUT_SIZE: u32 = 32;
/// GGX samples per texel.
const SAMPLES: u32 = 512;

/// The i-th of n points of the Hammersley set (radical inverse base 2).
fn hammersley(i: u32, n: u32) -> (f32, f32) {
    (i as f32 / n as f32, i.reverse_bits() as f32 * (1.0 / 4_294_967_296.0))
}

/// (A, B) for `n_dot_v` and perceptual `roughness` (alpha = roughness²):
/// the average over GGX-importance-sampled half vectors of the
/// height-correlated Smith visibility the base pass's direct light uses,
/// weighted by 1 - Fc and Fc, Fc = (1 - v·h)^5.
pub fn dfg(n_dot_v: f32, roughness: f32) -> (f32, f32) {
    let n_dot_v = n_dot_v.clamp(1e-4, 1.0);
    let a = (roughness * roughness).max(1e-4);
    let a2 = a * a;
    let v = Vec3::new((1.0 - n_dot_v * n_dot_v).sqrt(), 0.0, n_dot_v);
    let (mut sum_a, mut sum_b) = (0.0f64, 0.0f64);
    for i in 0..SAMPLES {
        let (x1, x2) = hammersley(i, SAMPLES);
        let phi = 2.0 * PI * x1;
        let cos_theta = ((1.0 - x2) / (1.0 + (a2 - 1.0) * x2)).sqrt();
        let sin_theta = (1.0 - cos_theta * cos_theta).max(0.0).sqrt();
        let h = Vec3::new(sin_theta * phi.cos(), sin_theta * phi.sin(), cos_theta);
        let l = 2.0 * v.dot(h) * h - v;
        let (n_dot_l, n_dot_h, v_dot_h) = (l.z, h.z.max(0.0), v.dot(h).max(0.0));
        if n_dot_l <= 0.0 {
            continue;
        }
        // Vis = G / (4 n.l n.v) (Heitz's height-correlated Smith); the
        // estimator of ∫ f·n.l with pdf D·n.h / (4 v.h) is Vis·4·n.l·v.h / n.h.
        let vis_v = n_dot_l * (n_dot_v * n_dot_v * (1.0 - a2) + a2).sqrt();
        let vis_l = n_dot_v * (n_dot_l * n_dot_l * (1.0 - a2) + a2).sqrt();
        let vis = 0.5 / (vis_v + vis_l).max(1e-6);
        let g_vis = vis * 4.0 * n_dot_l * v_dot_h / n_dot_h.max(1e-6);
        let fc = (1.0 - v_dot_h).powi(5);
        sum_a += f64::from((1.0 - fc) * g_vis);
        sum_b += f64::from(fc * g_vis);
    }
    ((sum_a / f64::from(SAMPLES)) as f32, (sum_b / f64::from(SAMPLES)) as f32)
}

/// The table: `LUT_SIZE` x `LUT_SIZE` texels of (A, B, 0, 1) at texel
/// centres, n·v = (x + 0.5) / size across, roughness (y + 0.5) / size down.
pub(crate) fn table() -> Vec<[f32; 4]> {
    let at = |i: u32| (i as f32 + 0.5) / LUT_SIZE as f32;
    (0..LUT_SIZE)
        .flat_map(|y| (0..LUT_SIZE).map(move |x| (x, y)))
        .map(|(x, y)| {
            let (a, b) = dfg(at(x), at(y));
            [a, b, 0.0, 1.0]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_smooth_lobe_reflects_everything_and_rough_ones_lose_energy_to_single_scattering() {
        let (a, b) = dfg(1.0, 0.0);
        assert!((a + b - 1.0).abs() < 0.01 && b < 0.01, "{a} {b}");
        // Single-scattering GGX loses energy as roughness grows (the
        // multiple-scattering term gives it back in the shader): at alpha 1
        // and normal incidence the albedo is 1 - ln 2 (the integral of
        // 2(1 - 2x) / (2 - 2x) over the half of the samples that reflect).
        let rough = dfg(1.0, 1.0);
        assert!((rough.0 + rough.1 - (1.0 - std::f32::consts::LN_2)).abs() < 0.01, "{rough:?}");
        assert!(dfg(1.0, 0.5).0 > rough.0);
        // Grazing: Fresnel's bias grows.
        assert!(dfg(0.1, 0.3).1 > dfg(1.0, 0.3).1);
        assert_eq!(table().len(), (LUT_SIZE * LUT_SIZE) as usize);
    }
}
