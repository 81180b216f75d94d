//! The animation module's error type.

use super::channel::ChannelTarget;

/// Why animation data or a playback request was refused.
///
/// Each variant names the offending index or value so an importer can point
/// at the exact accessor element of a bad glTF file; engine-core's
/// `EngineError` wraps this type rather than flattening it into a string.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnimationError {
    /// A channel has no key times. glTF requires at least one key, and
    /// sampling has nothing to return without one.
    #[error("a channel needs at least one key time")]
    EmptyTimes,
    /// A key time is NaN or infinite; binary search over times needs a total order.
    #[error("key time {index} is not finite")]
    NonFiniteTime {
        /// The index of the bad key time.
        index: usize,
    },
    /// The first key time is negative; glTF requires `times[0] >= 0`.
    #[error("key time 0 is negative ({time})")]
    NegativeTime {
        /// The negative first key time.
        time: f32,
    },
    /// A key time is not strictly greater than the one before it, so the
    /// interval between the two keys would be empty or backwards.
    #[error("key time {index} is not greater than key time {}", index - 1)]
    TimesNotIncreasing {
        /// The index of the key whose time is not after its predecessor's.
        index: usize,
    },
    /// The number of output floats does not match the key count, the
    /// interpolation (cubic splines store three elements per key) and the
    /// target's component count.
    #[error("expected {expected} output values, got {got}")]
    OutputCountMismatch {
        /// The float count the times, interpolation and target call for.
        expected: usize,
        /// The float count supplied.
        got: usize,
    },
    /// An output value is NaN or infinite; it would poison every pose it touches.
    #[error("output value {index} is not finite")]
    NonFiniteValue {
        /// The index of the bad float in the flat output array.
        index: usize,
    },
    /// A rotation key is (numerically) the zero quaternion, which is no
    /// rotation at all and cannot be normalized.
    #[error("rotation key {key} is a zero-length quaternion")]
    ZeroQuaternion {
        /// The key whose rotation value has zero length.
        key: usize,
    },
    /// A morph-weights target animates zero weights, so each key would be empty.
    #[error("a morph-weights channel must animate at least one weight")]
    ZeroMorphWeightCount,
    /// A clip has no channels; glTF requires at least one per animation.
    #[error("an animation clip needs at least one channel")]
    NoChannels,
    /// Two channels of one clip animate the same property of the same node,
    /// which glTF forbids: the later channel would silently win.
    #[error("two channels animate the same target {target:?}")]
    DuplicateTarget {
        /// The target animated twice.
        target: ChannelTarget,
    },
    /// A channel animates a joint the skeleton or pose does not have.
    #[error("joint {joint} is out of range for {joints} joints")]
    JointOutOfRange {
        /// The out-of-range joint index.
        joint: u32,
        /// How many joints there are.
        joints: usize,
    },
    /// A skeleton lists a joint's parent at or after the joint itself.
    /// Parents must come first so one forward pass computes global transforms.
    #[error("joint {joint} has parent {parent}, which does not come before it")]
    ParentAfterChild {
        /// The joint whose parent index is not smaller than its own.
        joint: u32,
        /// The parent index given for it.
        parent: u32,
    },
    /// Two arrays that must be the same length (two poses, a skeleton's
    /// parents and inverse bind matrices, a skeleton and a pose) are not.
    #[error("{what}: expected {expected} entries, got {got}")]
    LengthMismatch {
        /// What was being compared.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length found.
        got: usize,
    },
    /// An inverse bind matrix contains NaN or infinity.
    #[error("the inverse bind matrix of joint {joint} is not finite")]
    NonFiniteMatrix {
        /// The joint whose matrix is bad.
        joint: usize,
    },
    /// A playback parameter (speed, seek time, fade length) is NaN,
    /// infinite or out of its range.
    #[error("invalid {what}: {value}")]
    InvalidParameter {
        /// Which parameter.
        what: &'static str,
        /// The refused value.
        value: f32,
    },
}
