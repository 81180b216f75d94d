//! One animated property: [`Channel`], its [`ChannelTarget`] and
//! [`Interpolation`], validated as glTF 2.0 requires and sampled per its
//! Appendix C.

use glam::{Quat, Vec3, Vec4};

use super::error::AnimationError;
use super::interpolate::{find_segment, hermite, normalize_or, slerp_shortest, Segment};
use super::pose::Pose;

/// How values between two keys are computed; glTF 2.0's sampler
/// `interpolation` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Interpolation {
    /// Hold each key's value until the next key: for flip-book or
    /// on/off animation where blending would be wrong.
    Step,
    /// Straight-line blend between keys: lerp for vectors and weights,
    /// shortest-path slerp for rotations. glTF's default.
    #[default]
    Linear,
    /// A cubic Hermite spline through the keys with an in-tangent and an
    /// out-tangent stored per key, for smooth curves with few keys.
    CubicSpline,
}

/// Which property of which node a channel animates (glTF's `target.node`
/// and `target.path`).
///
/// Node indices index [`Pose::joints`]: a pose holds one local transform per
/// animated node, skin joints being such nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChannelTarget {
    /// The node's local translation (3 floats per value).
    Translation(u32),
    /// The node's local rotation, a unit quaternion stored x, y, z, w as glTF
    /// does (4 floats per value).
    Rotation(u32),
    /// The node's local scale (3 floats per value).
    Scale(u32),
    /// The morph-target weights of the mesh on node `node`: `count` floats
    /// per value, written to `Pose::morph_weights[first..first + count]`.
    ///
    /// A pose keeps every animated mesh's weights in one flat array so it
    /// can be reused without per-mesh allocations; the importer chooses each
    /// mesh's `first` slot.
    MorphWeights {
        /// The node carrying the morphed mesh.
        node: u32,
        /// The first slot of this mesh's weights in `Pose::morph_weights`.
        first: u32,
        /// How many weights (morph targets) each key holds; at least 1.
        count: u32,
    },
}

impl ChannelTarget {
    /// The animated node's index, whatever the property.
    pub fn node(&self) -> u32 {
        match *self {
            Self::Translation(n) | Self::Rotation(n) | Self::Scale(n) => n,
            Self::MorphWeights { node, .. } => node,
        }
    }

    /// How many floats one value of this target has: 3, 4, or the weight count.
    pub fn components(&self) -> usize {
        match *self {
            Self::Translation(_) | Self::Scale(_) => 3,
            Self::Rotation(_) => 4,
            Self::MorphWeights { count, .. } => count as usize,
        }
    }

    /// The node and property, ignoring the weights' layout: two channels
    /// with the same key animate the same thing, which glTF forbids.
    pub(super) fn property_key(&self) -> (u32, u8) {
        match *self {
            Self::Translation(n) => (n, 0),
            Self::Rotation(n) => (n, 1),
            Self::Scale(n) => (n, 2),
            Self::MorphWeights { node, .. } => (node, 3),
        }
    }
}

/// The validated output values with the target they animate, typed so
/// sampling does no per-frame conversion and cannot pair a target with the
/// wrong kind of value. Cubic splines store three entries per key:
/// in-tangent, value, out-tangent.
#[derive(Debug, Clone, PartialEq)]
enum Track {
    Translation(u32, Vec<Vec3>),
    Rotation(u32, Vec<Quat>),
    Scale(u32, Vec<Vec3>),
    /// Flat; each output element holds `count` weights.
    Weights {
        node: u32,
        first: u32,
        count: u32,
        values: Vec<f32>,
    },
}

/// One animated property: key times, output values and how to interpolate
/// between them (a glTF channel together with its sampler).
///
/// Built only through [`Channel::new`], which validates everything glTF
/// requires, so sampling never fails and never checks its data.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    interpolation: Interpolation,
    times: Vec<f32>,
    track: Track,
}

impl Channel {
    /// Validates and builds a channel from glTF's raw accessor data.
    ///
    /// `times` are seconds: non-empty, finite, the first `>= 0`, strictly
    /// increasing. `values` is the flat output accessor: `times.len() *
    /// components` floats for [`Interpolation::Step`] and
    /// [`Interpolation::Linear`], three times that for
    /// [`Interpolation::CubicSpline`] (in-tangent, value, out-tangent per
    /// key), all finite. Rotation values are normalized here (importers
    /// often store slightly off-unit quaternions); a zero-length one is
    /// refused because it is no rotation.
    pub fn new(target: ChannelTarget, interpolation: Interpolation, times: Vec<f32>, values: Vec<f32>) -> Result<Self, AnimationError> {
        validate_times(&times)?;
        let components = target.components();
        if components == 0 {
            return Err(AnimationError::ZeroMorphWeightCount);
        }
        let elements_per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
        let expected = times.len().saturating_mul(elements_per_key).saturating_mul(components);
        if values.len() != expected {
            return Err(AnimationError::OutputCountMismatch { expected, got: values.len() });
        }
        if let Some(index) = values.iter().position(|v| !v.is_finite()) {
            return Err(AnimationError::NonFiniteValue { index });
        }
        let vec3s = |values: &[f32]| values.chunks_exact(3).map(Vec3::from_slice).collect();
        let track = match target {
            ChannelTarget::Translation(n) => Track::Translation(n, vec3s(&values)),
            ChannelTarget::Rotation(n) => Track::Rotation(n, rotations(&values, elements_per_key)?),
            ChannelTarget::Scale(n) => Track::Scale(n, vec3s(&values)),
            ChannelTarget::MorphWeights { node, first, count } => Track::Weights { node, first, count, values },
        };
        Ok(Self { interpolation, times, track })
    }

    /// The same channel animating node `node` instead (its property kept):
    /// an importer renumbers nodes into a skeleton's joints with it.
    pub fn retargeted(&self, node: u32) -> Self {
        let track = match &self.track {
            Track::Translation(_, v) => Track::Translation(node, v.clone()),
            Track::Rotation(_, v) => Track::Rotation(node, v.clone()),
            Track::Scale(_, v) => Track::Scale(node, v.clone()),
            Track::Weights { first, count, values, .. } => Track::Weights { node, first: *first, count: *count, values: values.clone() },
        };
        Self { interpolation: self.interpolation, times: self.times.clone(), track }
    }

    /// What this channel animates.
    pub fn target(&self) -> ChannelTarget {
        match self.track {
            Track::Translation(n, _) => ChannelTarget::Translation(n),
            Track::Rotation(n, _) => ChannelTarget::Rotation(n),
            Track::Scale(n, _) => ChannelTarget::Scale(n),
            Track::Weights { node, first, count, .. } => ChannelTarget::MorphWeights { node, first, count },
        }
    }

    /// How values between keys are computed.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// The key times in seconds, strictly increasing.
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// The last key's time: where this channel stops changing. A clip's
    /// duration is the largest of these.
    pub fn end_time(&self) -> f32 {
        self.times[self.times.len() - 1]
    }

    /// Samples a translation or scale channel at `time` seconds; `None` for
    /// other targets. Times outside the keys hold the first or last value.
    pub fn sample_vec3(&self, time: f32) -> Option<Vec3> {
        match &self.track {
            Track::Translation(_, values) | Track::Scale(_, values) => {
                Some(sample_vec3(values, self.interpolation, find_segment(&self.times, time)))
            }
            _ => None,
        }
    }

    /// Samples a rotation channel at `time` seconds; `None` for other
    /// targets. The result is always a unit quaternion.
    pub fn sample_quat(&self, time: f32) -> Option<Quat> {
        match &self.track {
            Track::Rotation(_, values) => Some(sample_quat(values, self.interpolation, find_segment(&self.times, time))),
            _ => None,
        }
    }

    /// Samples a morph-weights channel at `time` seconds into `out`, which
    /// must hold exactly the target's weight count. Writing into a caller's
    /// slice keeps sampling allocation-free.
    pub fn sample_weights(&self, time: f32, out: &mut [f32]) -> Result<(), AnimationError> {
        let Track::Weights { values, count, .. } = &self.track else {
            return Err(AnimationError::LengthMismatch {
                what: "weights of a channel that animates no weights",
                expected: 0,
                got: out.len(),
            });
        };
        if out.len() != *count as usize {
            return Err(AnimationError::LengthMismatch { what: "morph weights per key", expected: *count as usize, got: out.len() });
        }
        sample_weights(values, self.interpolation, find_segment(&self.times, time), out);
        Ok(())
    }

    /// Writes this channel's value at `time` into its target's slot of
    /// `pose`. The caller has checked that the node index is in range and
    /// that `pose.morph_weights` is long enough (the clip does so once per
    /// sample, not once per channel).
    pub(super) fn write_to(&self, time: f32, pose: &mut Pose) {
        let segment = find_segment(&self.times, time);
        match &self.track {
            Track::Translation(n, values) => pose.joints[*n as usize].translation = sample_vec3(values, self.interpolation, segment),
            Track::Rotation(n, values) => pose.joints[*n as usize].rotation = sample_quat(values, self.interpolation, segment),
            Track::Scale(n, values) => pose.joints[*n as usize].scale = sample_vec3(values, self.interpolation, segment),
            Track::Weights { first, count, values, .. } => {
                let first = *first as usize;
                let out = &mut pose.morph_weights[first..first + *count as usize];
                sample_weights(values, self.interpolation, segment, out);
            }
        }
    }
}

/// Checks glTF's rules for an input (time) accessor.
fn validate_times(times: &[f32]) -> Result<(), AnimationError> {
    let Some(&first) = times.first() else {
        return Err(AnimationError::EmptyTimes);
    };
    if let Some(index) = times.iter().position(|t| !t.is_finite()) {
        return Err(AnimationError::NonFiniteTime { index });
    }
    if first < 0.0 {
        return Err(AnimationError::NegativeTime { time: first });
    }
    if let Some(i) = times.windows(2).position(|w| w[1] <= w[0]) {
        return Err(AnimationError::TimesNotIncreasing { index: i + 1 });
    }
    Ok(())
}

/// Squared lengths below this make a quaternion "zero": normalizing it
/// would amplify rounding noise into an arbitrary rotation.
const MIN_QUAT_LENGTH_SQUARED: f32 = 1e-12;

/// Converts flat x, y, z, w floats to quaternions, normalizing each key's
/// value. Cubic-spline tangents (`elements_per_key == 3`) are derivatives,
/// not rotations, and are kept as they are.
fn rotations(values: &[f32], elements_per_key: usize) -> Result<Vec<Quat>, AnimationError> {
    let mut out = Vec::with_capacity(values.len() / 4);
    for (i, q) in values.chunks_exact(4).enumerate() {
        let v = Vec4::from_slice(q);
        let is_value = elements_per_key == 1 || i % 3 == 1;
        if !is_value {
            out.push(Quat::from_vec4(v));
            continue;
        }
        if v.length_squared() < MIN_QUAT_LENGTH_SQUARED {
            return Err(AnimationError::ZeroQuaternion { key: i / elements_per_key });
        }
        out.push(Quat::from_vec4(v.normalize()));
    }
    Ok(out)
}

/// The index of key `key`'s value in a channel's outputs: cubic splines
/// interleave in-tangent, value and out-tangent.
fn value_index(interpolation: Interpolation, key: usize) -> usize {
    if interpolation == Interpolation::CubicSpline {
        3 * key + 1
    } else {
        key
    }
}

/// Samples a Vec3 track (translation or scale).
fn sample_vec3(values: &[Vec3], interpolation: Interpolation, segment: Segment) -> Vec3 {
    match (interpolation, segment) {
        (_, Segment::Clamp(key)) | (Interpolation::Step, Segment::Span { key, .. }) => values[value_index(interpolation, key)],
        (Interpolation::Linear, Segment::Span { key, u, .. }) => values[key].lerp(values[key + 1], u),
        (Interpolation::CubicSpline, Segment::Span { key, u, delta }) => {
            let k = 3 * key;
            hermite(values[k + 1], values[k + 2], values[k + 4], values[k + 3], delta, u)
        }
    }
}

/// Samples a rotation track: slerp for linear, a normalized spline for cubic.
fn sample_quat(values: &[Quat], interpolation: Interpolation, segment: Segment) -> Quat {
    match (interpolation, segment) {
        (_, Segment::Clamp(key)) | (Interpolation::Step, Segment::Span { key, .. }) => values[value_index(interpolation, key)],
        (Interpolation::Linear, Segment::Span { key, u, .. }) => slerp_shortest(values[key], values[key + 1], u),
        (Interpolation::CubicSpline, Segment::Span { key, u, delta }) => {
            let k = 3 * key;
            let v = |i: usize| Vec4::from(values[i]);
            normalize_or(hermite(v(k + 1), v(k + 2), v(k + 4), v(k + 3), delta, u), values[k + 1])
        }
    }
}

/// Samples a morph-weights track into `out` (one key's weight count long).
fn sample_weights(values: &[f32], interpolation: Interpolation, segment: Segment, out: &mut [f32]) {
    let n = out.len();
    // The `n` floats of output element `element` (a value or a tangent).
    let element = |element: usize| &values[element * n..(element + 1) * n];
    match (interpolation, segment) {
        (_, Segment::Clamp(key)) | (Interpolation::Step, Segment::Span { key, .. }) => {
            out.copy_from_slice(element(value_index(interpolation, key)));
        }
        (Interpolation::Linear, Segment::Span { key, u, .. }) => {
            let (v0, v1) = (element(key), element(key + 1));
            for (o, (a, b)) in out.iter_mut().zip(v0.iter().zip(v1)) {
                *o = a + (b - a) * u;
            }
        }
        (Interpolation::CubicSpline, Segment::Span { key, u, delta }) => {
            let k = 3 * key;
            let (v0, b0, a1, v1) = (element(k + 1), element(k + 2), element(k + 3), element(k + 4));
            for (i, o) in out.iter_mut().enumerate() {
                *o = hermite(v0[i], b0[i], v1[i], a1[i], delta, u);
            }
        }
    }
}
