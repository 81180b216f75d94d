//! [`AnimationClip`]: a named set of channels played together (one glTF
//! animation), sampled into a [`Pose`].

use std::collections::HashSet;

use super::channel::{Channel, ChannelTarget};
use super::error::AnimationError;
use super::pose::Pose;

/// A named animation: channels that play together over one timeline.
///
/// Clips are immutable once built and shared between players as
/// `Arc<AnimationClip>`, so many characters can play one clip without
/// copying its keys.
#[derive(Debug, Clone, PartialEq)]
pub struct AnimationClip {
    name: String,
    duration: f32,
    channels: Vec<Channel>,
    /// One past the largest node index any channel targets: the joint
    /// count a pose needs, checked once per sample instead of per channel.
    joints_needed: usize,
    /// One past the last morph-weight slot any channel writes.
    morph_weights_needed: usize,
}

impl AnimationClip {
    /// Builds a clip from validated channels. Its duration is the largest
    /// last key time among them (glTF defines no separate length).
    ///
    /// Refuses an empty channel list and two channels animating the same
    /// property of the same node, both of which glTF forbids.
    pub fn new(name: impl Into<String>, channels: Vec<Channel>) -> Result<Self, AnimationError> {
        if channels.is_empty() {
            return Err(AnimationError::NoChannels);
        }
        let mut seen = HashSet::with_capacity(channels.len());
        for channel in &channels {
            if !seen.insert(channel.target().property_key()) {
                return Err(AnimationError::DuplicateTarget { target: channel.target() });
            }
        }
        let duration = channels.iter().map(Channel::end_time).fold(0.0, f32::max);
        let joints_needed = channels.iter().map(|c| c.target().node() as usize + 1).max().unwrap_or(0);
        let morph_weights_needed = channels.iter().map(|c| weight_range(c.target()).end).max().unwrap_or(0);
        Ok(Self { name: name.into(), duration, channels, joints_needed, morph_weights_needed })
    }

    /// The clip's name (glTF `animation.name`, possibly empty).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Seconds from 0 to the last key of the longest channel.
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// The clip's channels, in the order given.
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// How many morph weights a pose needs for this clip to write all of its
    /// weight channels. [`AnimationClip::sample_into`] grows shorter weight
    /// arrays (with zeros) on first use.
    pub fn morph_weight_count(&self) -> usize {
        self.morph_weights_needed
    }

    /// Checks that every channel targets a node below `joint_count`, so a
    /// clip can be refused when bound to a skeleton rather than failing on
    /// its first frame. The error names the largest offending node.
    pub fn validate_for(&self, joint_count: usize) -> Result<(), AnimationError> {
        if self.joints_needed > joint_count {
            return Err(AnimationError::JointOutOfRange { joint: (self.joints_needed - 1) as u32, joints: joint_count });
        }
        Ok(())
    }

    /// Samples every channel at `time` seconds into `pose`, overwriting only
    /// the animated properties; the rest keep what `pose` held (normally a
    /// copy of the rest pose). Times outside `[0, duration]` hold the first or
    /// last keys; looping is the player's business.
    ///
    /// Allocates nothing unless `pose.morph_weights` is shorter than
    /// [`AnimationClip::morph_weight_count`], in which case it grows once.
    /// Fails, writing nothing, if the pose has too few joints.
    pub fn sample_into(&self, time: f32, pose: &mut Pose) -> Result<(), AnimationError> {
        self.validate_for(pose.joints.len())?;
        if pose.morph_weights.len() < self.morph_weights_needed {
            pose.morph_weights.resize(self.morph_weights_needed, 0.0);
        }
        for channel in &self.channels {
            channel.write_to(time, pose);
        }
        Ok(())
    }
}

/// The morph-weight slots a target writes (empty for transforms).
fn weight_range(target: ChannelTarget) -> std::ops::Range<usize> {
    match target {
        ChannelTarget::MorphWeights { first, count, .. } => first as usize..first as usize + count as usize,
        _ => 0..0,
    }
}
