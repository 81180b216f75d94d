//! Colour and size over life: derived from a particle's spawn value and age,
//! evaluated where they are read instead of stored by the tick. See
//! [`OverLife`].

use std::sync::Arc;

use crate::distribution::{CurveLut, Distribution, DistributionValue};

/// How an emitter turns a particle's spawn value and age (relative time)
/// into its current colour or size.
///
/// Cascade's ColorOverLife and SizeOverLife modules write every particle's
/// current colour and size on every tick. Here, the current value is a pure
/// function of two fields the particle already stores (its spawn value and
/// its relative time) and of the emitter's curve:
///
/// ```text
/// color = base_color × color_over_life(relative_time)
/// size  = base_size  × size_over_life(relative_time)
/// ```
///
/// So it is not stored. The snapshot for the render thread
/// ([`crate::EmitterDynamicData`]) carries the spawn values and this
/// evaluation (its tables shared, not copied), and the render thread
/// evaluates it while it writes each sprite vertex, which holds the colour
/// and size anyway. The game side evaluates it only for the accessors
/// [`crate::EmitterInstance::current_colors`] and
/// [`crate::EmitterInstance::current_sizes`] (bounds need only the largest
/// size an emitter can make, fixed at compile time). Unity's particle system
/// treats its over-lifetime modules the same way
/// (`Particle.GetCurrentColor`, `GetCurrentSize`).
///
/// Why: every stage that touches all particles is bound by memory, and the
/// tick runs every frame over every particle. A stored colour and size
/// would be written by every tick (each cache line read for ownership
/// first), copied by the snapshot and read again by the sprite conversion.
/// Derived, the tick moves neither, the snapshot copies only spawn sizes
/// that differ between particles, and the conversion reads a small table
/// (in L1) instead of a colour array. Each stage moves fewer bytes; the
/// cost is a table lookup per particle in the conversion, which waits on
/// memory anyway.
///
/// This holds while nothing but age changes colour or size after spawn. No
/// module in the asset format does. A module that did (colour by speed, or
/// on collision) would need the stored field back for its emitters.
#[derive(Clone, Debug, PartialEq)]
pub enum OverLife<T> {
    /// No over-life module, and spawn values that differ between
    /// particles: the current value is the spawn value.
    Off,
    /// `value = base × curve(t)`: spawn values differ between particles.
    PerParticle(Arc<CurveLut<T>>),
    /// `value = curve(t)`, with the spawn value (the same for every
    /// particle) already multiplied into the curve, so the per-particle
    /// spawn values are not read (and a snapshot does not carry them).
    /// Without an over-life module the table is that constant.
    Baked(Arc<CurveLut<T>>),
}

impl<T: DistributionValue> OverLife<T> {
    /// The evaluation for an over-life `curve` (if the emitter has one) and
    /// its `initial` module. No initial module means every particle starts at
    /// `default`.
    pub(crate) fn compile(curve: Option<&Distribution<T>>, initial: Option<&Distribution<T>>, default: T) -> Self {
        // The spawn value every particle shares, if they do.
        let shared = match initial {
            None => Some(default),
            Some(Distribution::Constant(v)) => Some(*v),
            Some(_) => None,
        };
        match (curve, shared) {
            (None, None) => OverLife::Off,
            // A constant table reads back exactly its value (zero steps).
            (None, Some(v)) => OverLife::Baked(Arc::new(CurveLut::bake(&Distribution::Constant(v)))),
            (Some(c), Some(v)) => OverLife::Baked(Arc::new(CurveLut::bake(c).scaled(v))),
            (Some(c), None) => OverLife::PerParticle(Arc::new(CurveLut::bake(c))),
        }
    }

    /// Whether the current value depends on the particle's spawn value
    /// (false when that value is baked into the curve).
    pub fn reads_base(&self) -> bool {
        !matches!(self, OverLife::Baked(_))
    }

    /// One particle's current value from its spawn value `base` (ignored
    /// when [`Self::reads_base`] is false) and relative time `t`, clamped
    /// to `[0, 1]`.
    #[inline]
    pub fn at(&self, base: T, t: f32) -> T {
        match self {
            OverLife::Off => base,
            OverLife::PerParticle(lut) => T::scale(base, lut.sample(t)),
            OverLife::Baked(lut) => lut.sample(t),
        }
    }

    /// The current values of the particles with spawn values `base` and
    /// relative times `t`, as [`Self::eval`] writes them.
    pub(crate) fn eval_all(&self, base: &[T], t: &[f32]) -> Vec<T> {
        let mut out = vec![T::zero(); t.len()];
        self.eval(&mut out, base, t);
        out
    }

    /// Writes the current values of the particles with spawn values `base`
    /// (not read, and may be empty, when [`Self::reads_base`] is false) and
    /// relative times `t` into `out` (as long as `t`). The times must be
    /// live particles' times, in `[0, 1]`: no clamp in this loop, and any
    /// other time reads a wrong table entry, never panics.
    pub(crate) fn eval(&self, out: &mut [T], base: &[T], t: &[f32]) {
        let t = &t[..out.len()];
        match self {
            OverLife::Off => out.copy_from_slice(&base[..out.len()]),
            OverLife::PerParticle(lut) => {
                let base = &base[..out.len()];
                for ((o, &b), &t) in out.iter_mut().zip(base).zip(t) {
                    *o = T::scale(b, lut.sample_unit(t));
                }
            }
            OverLife::Baked(lut) => {
                for (o, &t) in out.iter_mut().zip(t) {
                    *o = lut.sample_unit(t);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distribution::CurveKey;
    use glam::Vec2;

    fn line(a: Vec2, b: Vec2) -> Distribution<Vec2> {
        Distribution::Curve(vec![CurveKey { time: 0.0, value: a }, CurveKey { time: 1.0, value: b }])
    }

    #[test]
    fn each_mode_is_base_times_curve_in_bulk_and_one_at_a_time() {
        let curve = line(Vec2::new(1.0, 2.0), Vec2::new(3.0, 0.0));
        let base = [Vec2::new(2.0, 1.0), Vec2::new(0.5, 4.0), Vec2::ONE];
        let t = [0.0, 0.5, 1.0];
        let drawn = Distribution::Uniform { min: Vec2::ONE, max: Vec2::splat(2.0) };
        let constant = Distribution::Constant(Vec2::new(2.0, 1.0));
        let cases = [
            (OverLife::compile(None, Some(&drawn), Vec2::ONE), false),
            (OverLife::compile(Some(&curve), Some(&drawn), Vec2::ONE), true),
            (OverLife::compile(Some(&curve), Some(&constant), Vec2::ONE), true),
        ];
        assert!(matches!(cases[0].0, OverLife::Off));
        assert!(matches!(cases[1].0, OverLife::PerParticle(_)));
        assert!(matches!(cases[2].0, OverLife::Baked(_)));
        for (i, (mode, curved)) in cases.iter().enumerate() {
            // The baked case's particles all spawned with the constant.
            let base: Vec<Vec2> = if i == 2 { vec![Vec2::new(2.0, 1.0); 3] } else { base.to_vec() };
            let mut bulk = [Vec2::splat(-1.0); 4];
            mode.eval(&mut bulk[1..], &base, &t);
            assert_eq!(bulk[0], Vec2::splat(-1.0), "writes only its slice");
            for k in 0..3 {
                let want = if *curved { base[k] * curve.evaluate(t[k]) } else { base[k] };
                assert!((bulk[k + 1] - want).abs().max_element() < 1e-5, "{i} {k}");
                assert_eq!(mode.at(base[k], t[k]), bulk[k + 1]);
            }
        }
        // No initial module: every particle starts at the default.
        let default = OverLife::compile(Some(&curve), None, Vec2::ONE);
        assert_eq!(default.at(Vec2::ONE, 1.0), Vec2::new(3.0, 0.0));
        // No curve but a shared spawn value: a constant table, read back
        // exactly, and the per-particle values are not needed.
        for (initial, want) in [(Some(&constant), Vec2::new(2.0, 1.0)), (None, Vec2::ONE)] {
            let mode = OverLife::compile(None, initial, Vec2::ONE);
            assert!(!mode.reads_base());
            for t in [0.0, 0.3, 0.99, 1.0] {
                assert_eq!(mode.at(Vec2::splat(9.0), t), want);
            }
            let mut out = [Vec2::ZERO; 2];
            mode.eval(&mut out, &[], &[0.1, 0.7]);
            assert_eq!(out, [want; 2]);
        }
    }
}
