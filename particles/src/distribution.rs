//! Distributions: how a module picks a value.
//!
//! Cascade modules take their values from "distributions": a constant, a
//! uniform random range, or a curve. Two kinds of consumer read them:
//!
//! * **initial-value modules** (lifetime, initial size, ...) sample once per
//!   particle at spawn. A constant is the value, a uniform draws from the
//!   emitter's seeded generator (each vector component independently), and a
//!   curve is evaluated at the emitter's normalised loop time, so an emitter
//!   can, say, spawn larger particles late in each loop;
//! * **over-life modules** (colour and size over life) are evaluated for
//!   every particle at its relative time in `[0, 1]` each frame, where the
//!   value is read (the render thread writing sprite vertices; see
//!   [`crate::OverLife`]). That is a hot loop, so a curve is baked once into
//!   a [`CurveLut`] with [`LUT_SIZE`] samples and read with one lerp,
//!   without branches or key searches (UE bakes its distributions into
//!   lookup tables for the same reason). A uniform range has no meaning over
//!   a particle's life and is rejected by validation, except in the
//!   sub-image index, where each particle draws from it at spawn
//!   ([`crate::SubUv`]'s random index).
//!
//! Curves are piecewise linear over keys whose times lie in `[0, 1]` and
//! strictly increase; before the first key and after the last the curve holds
//! the end value.

use glam::{Vec2, Vec3, Vec4};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::ParticleError;
use crate::json_path::{join_field, join_index};
use renderer::Rng;

/// A value type a distribution can produce: `f32`, `Vec2`, `Vec3`, `Vec4`.
pub trait DistributionValue: Copy + PartialEq + std::fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The value's components, for validation.
    fn components(&self) -> Vec<f32>;
    /// `a + (b - a) * t`.
    fn lerp(a: Self, b: Self, t: f32) -> Self;
    /// A value between `min` and `max`, each component drawn independently.
    fn uniform(min: Self, max: Self, rng: &mut Rng) -> Self;
    /// Component-wise product.
    fn scale(a: Self, b: Self) -> Self;
    /// `a - b`.
    fn sub(a: Self, b: Self) -> Self;
    /// `a × f + b` (two roundings, not a fused multiply-add: the same
    /// arithmetic as [`Self::lerp`]).
    fn madd(a: Self, f: f32, b: Self) -> Self;
    /// Zero (what an empty curve, which validation rejects, evaluates to).
    fn zero() -> Self;
}

/// Implements [`DistributionValue`] for `$ty`: the arithmetic is its own
/// operators' for every type; what differs (its components, how a uniform
/// draws it, its zero) comes as closure-like arguments.
macro_rules! impl_distribution_value {
    ($ty:ty, zero: $zero:expr, |$v:ident| $components:expr, |$min:ident, $max:ident, $rng:ident| $uniform:expr) => {
        impl DistributionValue for $ty {
            fn components(&self) -> Vec<f32> {
                let $v = self;
                $components
            }
            #[inline]
            fn lerp(a: Self, b: Self, t: f32) -> Self {
                a + (b - a) * t
            }
            fn uniform($min: Self, $max: Self, $rng: &mut Rng) -> Self {
                $uniform
            }
            fn scale(a: Self, b: Self) -> Self {
                a * b
            }
            fn sub(a: Self, b: Self) -> Self {
                a - b
            }
            #[inline(always)]
            fn madd(a: Self, f: f32, b: Self) -> Self {
                a * f + b
            }
            fn zero() -> Self {
                $zero
            }
        }
    };
}

impl_distribution_value!(f32, zero: 0.0, |v| vec![*v], |min, max, rng| rng.range_f32(min, max));

macro_rules! impl_vector_value {
    ($ty:ty, $($c:ident),+) => {
        // Components in declaration order, so the stream of random numbers a
        // vector consumes is fixed.
        impl_distribution_value!($ty, zero: <$ty>::ZERO, |v| v.to_array().to_vec(), |min, max, rng| <$ty>::new($(rng.range_f32(min.$c, max.$c)),+));
    };
}
impl_vector_value!(Vec2, x, y);
impl_vector_value!(Vec3, x, y, z);
impl_vector_value!(Vec4, x, y, z, w);

/// One key of a piecewise-linear curve over normalised time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveKey<T> {
    /// Normalised time in `[0, 1]`.
    pub time: f32,
    /// The value at `time`.
    pub value: T,
}

/// How a module picks a value; see the module docs.
///
/// JSON: `{"constant": 2.0}`, `{"uniform": {"min": 1.0, "max": 2.0}}`,
/// `{"curve": [{"time": 0.0, "value": 1.0}, {"time": 1.0, "value": 0.0}]}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Distribution<T> {
    /// Always this value.
    Constant(T),
    /// Uniformly random between `min` and `max` (each component independent).
    Uniform {
        /// Lower end.
        min: T,
        /// Upper end (≥ `min` in every component).
        max: T,
    },
    /// Piecewise linear over keys with strictly increasing times in `[0, 1]`.
    Curve(Vec<CurveKey<T>>),
}

impl<T: DistributionValue> Distribution<T> {
    /// Samples the distribution: uniform ranges draw from `rng`, curves are
    /// evaluated at normalised time `t`.
    pub fn sample(&self, t: f32, rng: &mut Rng) -> T {
        match self {
            Distribution::Constant(v) => *v,
            Distribution::Uniform { min, max } => T::uniform(*min, *max, rng),
            Distribution::Curve(keys) => evaluate_curve(keys, t),
        }
    }

    /// Evaluates at normalised time `t` without randomness (a uniform range
    /// gives its midpoint). Used for over-life modules and tests.
    pub fn evaluate(&self, t: f32) -> T {
        match self {
            Distribution::Constant(v) => *v,
            Distribution::Uniform { min, max } => T::lerp(*min, *max, 0.5),
            Distribution::Curve(keys) => evaluate_curve(keys, t),
        }
    }

    /// Every value the distribution names (constant, both ends, all keys).
    pub fn values(&self) -> Vec<T> {
        match self {
            Distribution::Constant(v) => vec![*v],
            Distribution::Uniform { min, max } => vec![*min, *max],
            Distribution::Curve(keys) => keys.iter().map(|k| k.value).collect(),
        }
    }

    /// Checks structure (finite values, `min ≤ max`, keys present, in `[0, 1]`
    /// and strictly increasing) and that every value satisfies `check`, which
    /// returns a message for a bad component. Errors name the field under
    /// `path`.
    pub fn validate(&self, path: &str, check: impl Fn(f32) -> Option<&'static str>) -> Result<(), ParticleError> {
        let check_value = |value: &T, at: String| -> Result<(), ParticleError> {
            for c in value.components() {
                if !c.is_finite() {
                    return Err(ParticleError::invalid(at, "must be finite"));
                }
                if let Some(message) = check(c) {
                    return Err(ParticleError::invalid(at, message));
                }
            }
            Ok(())
        };
        match self {
            Distribution::Constant(v) => check_value(v, join_field(path, "constant")),
            Distribution::Uniform { min, max } => {
                let at = join_field(path, "uniform");
                check_value(min, join_field(&at, "min"))?;
                check_value(max, join_field(&at, "max"))?;
                let below = min.components().iter().zip(max.components()).any(|(a, b)| *a > b);
                if below {
                    return Err(ParticleError::invalid(join_field(&at, "max"), "must be ≥ min in every component"));
                }
                Ok(())
            }
            Distribution::Curve(keys) => {
                let at = join_field(path, "curve");
                if keys.is_empty() {
                    return Err(ParticleError::invalid(at, "a curve needs at least one key"));
                }
                let mut previous: Option<f32> = None;
                for (i, key) in keys.iter().enumerate() {
                    let key_path = join_index(&at, i);
                    let time_path = join_field(&key_path, "time");
                    if !(0.0..=1.0).contains(&key.time) {
                        return Err(ParticleError::invalid(time_path, "must be in [0, 1]"));
                    }
                    if let Some(p) = previous {
                        if key.time <= p {
                            return Err(ParticleError::invalid(
                                time_path,
                                format!("keys out of order: must be greater than the previous key's time ({p})"),
                            ));
                        }
                    }
                    previous = Some(key.time);
                    check_value(&key.value, join_field(&key_path, "value"))?;
                }
                Ok(())
            }
        }
    }
}

/// Piecewise-linear evaluation; keys are non-empty and sorted by time.
fn evaluate_curve<T: DistributionValue>(keys: &[CurveKey<T>], t: f32) -> T {
    let Some(first) = keys.first() else {
        return T::zero();
    };
    if t <= first.time {
        return first.value;
    }
    // Index of the first key after t.
    let next = keys.partition_point(|k| k.time <= t);
    if next >= keys.len() {
        return keys[keys.len() - 1].value;
    }
    let (a, b) = (&keys[next - 1], &keys[next]);
    T::lerp(a.value, b.value, (t - a.time) / (b.time - a.time))
}

/// Samples in a baked over-life table (`LUT_SIZE - 1` segments over `[0, 1]`).
pub const LUT_SIZE: usize = 128;

/// A distribution baked for per-particle evaluation: `LUT_SIZE` samples evenly
/// spaced over `[0, 1]`, read by [`CurveLut::sample`] with one multiply-add.
///
/// Baking is exact where the curve is linear between samples, so curves whose
/// keys sit on multiples of `1 / (LUT_SIZE - 1)` (0, 0.5 is not one, but 0 and
/// 1 are) are reproduced exactly; elsewhere the error is a fraction of the
/// curvature at a key, invisible on screen.
///
/// Each entry holds a sample and the step to the next one (the last entry a
/// zero step), so a lookup is one table read and `value + step × fraction`,
/// the same arithmetic as a lerp between neighbouring samples. The index is
/// masked to the table's size, so the hot loop has no bounds check and no
/// branch, and a NaN time reads some entry instead of panicking.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveLut<T> {
    entries: Box<[(T, T); LUT_SIZE]>,
}

/// Index mask: `LUT_SIZE` is a power of two.
const LUT_MASK: u32 = LUT_SIZE as u32 - 1;
const _: () = assert!(LUT_SIZE.is_power_of_two() && LUT_SIZE <= 256);

/// 1.5 × 2^23: adding it to a float in `(-2^22, 2^22)` gives a sum in
/// `[2^23, 2^24)`, where floats are the integers, so the float is rounded to
/// an integer and that integer sits in the low mantissa bits.
const ROUND: f32 = 12_582_912.0;
/// Subtracted before rounding so that rounding to nearest yields the floor:
/// just under one half, so an exact integer (the last sample at `t = 1`)
/// still rounds to itself. A position within `2^-10` of the next sample
/// rounds up and extrapolates back from it by that much (exact on a line).
const FLOOR_BIAS: f32 = 0.5 - 1.0 / 1024.0;

impl<T: DistributionValue> CurveLut<T> {
    /// Bakes `distribution` (constant or curve; a uniform range bakes to its
    /// midpoint, but validation rejects it for over-life modules).
    pub fn bake(distribution: &Distribution<T>) -> Self {
        Self::from_samples(|i| distribution.evaluate(i as f32 / (LUT_SIZE - 1) as f32))
    }

    fn from_samples(sample: impl Fn(usize) -> T) -> Self {
        let entries: Vec<(T, T)> = (0..LUT_SIZE)
            .map(|i| {
                let v = sample(i);
                let next = if i + 1 < LUT_SIZE { sample(i + 1) } else { v };
                (v, T::sub(next, v))
            })
            .collect();
        let entries: Box<[(T, T); LUT_SIZE]> =
            entries.into_boxed_slice().try_into().unwrap_or_else(|_| unreachable!("LUT_SIZE entries were collected"));
        CurveLut { entries }
    }

    /// This table with every sample multiplied by `factor` (bakes a
    /// uniform initial value into an over-life curve).
    pub fn scaled(&self, factor: T) -> Self {
        Self::from_samples(|i| T::scale(factor, self.entries[i].0))
    }

    /// The baked value at normalised time `t` (clamped to `[0, 1]`).
    #[inline(always)]
    pub fn sample(&self, t: f32) -> T {
        self.sample_unit(t.clamp(0.0, 1.0))
    }

    /// [`Self::sample`] for a `t` the caller knows lies in `[0, 1]` (a live
    /// particle's relative time), without the clamp.
    /// Any other `t` reads some entry of the table: a wrong value, never a
    /// panic.
    #[inline(always)]
    pub(crate) fn sample_unit(&self, t: f32) -> T {
        let (at, f) = lut_coords(t);
        self.at(at, f)
    }

    /// The value at coordinates from [`lut_coords`].
    #[inline(always)]
    pub(crate) fn at(&self, at: f32, f: f32) -> T {
        let (v, step) = self.entries[(at.to_bits() & LUT_MASK) as usize];
        T::madd(step, f, v)
    }
}

impl CurveLut<Vec2> {
    /// The largest magnitude per component a read of this table can
    /// return (what bounds pad by). A read lerps between neighbouring
    /// samples or, within `2^-10` of the next sample, extrapolates back from
    /// that one by up to `2^-10` of its step (see `FLOOR_BIAS`), which can
    /// overshoot a flat top.
    pub(crate) fn largest_abs(&self) -> Vec2 {
        self.entries.iter().fold(Vec2::ZERO, |m, &(v, step)| m.max(v.abs()).max((v - step / 1024.0).abs()))
    }
}

/// Where `t` in `[0, 1]` falls in a [`CurveLut`]: a float whose low bits are
/// the entry index (read by [`CurveLut::at`]), and the fraction towards the
/// next entry. The integer part is found without Rust's saturating
/// float-to-int conversion (several instructions on x86); see `ROUND` and
/// `FLOOR_BIAS`.
#[inline(always)]
pub(crate) fn lut_coords(t: f32) -> (f32, f32) {
    let x = t * (LUT_SIZE - 1) as f32;
    let at = (x - FLOOR_BIAS) + ROUND;
    (at, x - (at - ROUND))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(pairs: &[(f32, f32)]) -> Distribution<f32> {
        Distribution::Curve(pairs.iter().map(|&(time, value)| CurveKey { time, value }).collect())
    }

    #[test]
    fn curve_is_piecewise_linear_and_clamped() {
        let c = keys(&[(0.25, 1.0), (0.75, 3.0)]);
        assert_eq!(c.evaluate(0.0), 1.0);
        assert_eq!(c.evaluate(0.5), 2.0);
        assert_eq!(c.evaluate(1.0), 3.0);
        let single = keys(&[(0.5, 7.0)]);
        assert_eq!(single.evaluate(0.1), 7.0);
        assert_eq!(single.evaluate(0.9), 7.0);
    }

    #[test]
    fn lut_matches_linear_curve_exactly_at_ends_and_closely_between() {
        let c = Distribution::Curve(vec![
            CurveKey { time: 0.0, value: Vec4::ONE },
            CurveKey { time: 1.0, value: Vec4::new(0.0, 0.5, 1.0, 0.0) },
        ]);
        let lut = CurveLut::bake(&c);
        assert_eq!(lut.sample(0.0), Vec4::ONE);
        assert_eq!(lut.sample(1.0), Vec4::new(0.0, 0.5, 1.0, 0.0));
        assert_eq!(lut.sample(7.0), Vec4::new(0.0, 0.5, 1.0, 0.0));
        for i in 0..=100 {
            let t = i as f32 / 100.0;
            assert!((lut.sample(t) - c.evaluate(t)).abs().max_element() < 1e-5);
        }
        // Exactly on samples, just beside them, and between.
        let ramp = keys(&[(0.0, 0.0), (1.0, 127.0)]);
        let lut = CurveLut::bake(&ramp);
        for k in 0..=127 {
            for dx in [0.0f32, 1e-4, 0.25, 0.5, 0.75, 0.9999] {
                let t = ((k as f32 + dx) / 127.0).min(1.0);
                assert!((lut.sample(t) - t * 127.0).abs() < 1e-3, "t {t}: {}", lut.sample(t));
            }
        }
        assert!(lut.sample(f32::NAN).is_nan() || lut.sample(f32::NAN).is_finite());
        let bent = keys(&[(0.0, 0.0), (0.3, 1.0), (1.0, 0.0)]);
        let lut = CurveLut::bake(&bent);
        for i in 0..=100 {
            let t = i as f32 / 100.0;
            assert!((lut.sample(t) - bent.evaluate(t)).abs() < 0.02);
        }
    }

    #[test]
    fn uniform_stays_in_range_and_validation_names_fields() {
        let d = Distribution::Uniform { min: Vec3::splat(-1.0), max: Vec3::new(1.0, 2.0, 3.0) };
        let mut rng = Rng::with_stream(1, 0);
        for _ in 0..1000 {
            let v = d.sample(0.0, &mut rng);
            assert!(v.cmpge(Vec3::splat(-1.0)).all() && v.cmple(Vec3::new(1.0, 2.0, 3.0)).all());
        }
        let positive = |c: f32| (c <= 0.0).then_some("must be > 0");
        let bad = Distribution::Uniform { min: -1.0, max: 2.0 };
        let e = bad.validate("lifetime", positive).unwrap_err();
        assert_eq!(e.to_string(), "lifetime.uniform.min: must be > 0");
        let unordered = keys(&[(0.0, 1.0), (0.6, 1.0), (0.5, 1.0)]);
        let e = unordered.validate("x", positive).unwrap_err();
        assert!(e.to_string().starts_with("x.curve[2].time: keys out of order"), "{e}");
        let e = keys(&[]).validate("x", positive).unwrap_err();
        assert_eq!(e.field_path(), Some("x.curve"));
        let e = Distribution::Constant(f32::NAN).validate("x", positive).unwrap_err();
        assert_eq!(e.to_string(), "x.constant: must be finite");
    }
}
