//! glTF animations (`/animations`): each channel's sampler read into an
//! [`animation::Channel`](crate::animation::Channel) targeting its node
//! (renumbered into a skeleton's joints when a skinned mesh is spawned).
//! Every sampler is validated as glTF requires — input times scalar,
//! finite, non-negative and increasing; output counts matching the
//! interpolation; rotations not zero — into a [`GltfError`] naming the
//! sampler's JSON path. A morph-target weight channel animates the
//! weights of its node's mesh (skipped, with a line in `skipped`, when that
//! mesh has no targets).

use super::accessor::{read_floats, AccessorBudget, Buffer, Read};
use super::{GltfError, GltfLimits};
use crate::animation::{Channel, ChannelTarget, Interpolation};
use gltf::accessor::Dimensions;
use gltf::animation::{Interpolation as GltfInterpolation, Property};

/// An animation: its channels, each targeting a node (by glTF node index).
#[derive(Clone, Debug, PartialEq)]
pub struct GltfAnimation {
    pub name: String,
    pub channels: Vec<Channel>,
}

/// Reads every animation; returns them and how many morph-weight channels
/// were skipped (their node's mesh has no morph targets). Each channel's
/// sampler is read (and charged to `budget`) for that channel, so samplers
/// that channels share count once per channel.
pub(crate) fn read_animations(
    doc: &gltf::Document,
    buffers: &[Buffer<'_>],
    limits: &GltfLimits,
    budget: &AccessorBudget,
) -> Result<(Vec<GltfAnimation>, usize), GltfError> {
    let mut skipped_weights = 0;
    let mut out = Vec::with_capacity(doc.animations().len());
    for a in doc.animations() {
        let mut channels = Vec::new();
        for c in a.channels() {
            let node = c.target().node().index() as u32;
            let target = match c.target().property() {
                Property::Translation => ChannelTarget::Translation(node),
                Property::Rotation => ChannelTarget::Rotation(node),
                Property::Scale => ChannelTarget::Scale(node),
                Property::MorphTargetWeights => {
                    let targets = c.target().node().mesh().and_then(|m| m.primitives().next()).map_or(0, |p| p.morph_targets().len());
                    if targets == 0 {
                        skipped_weights += 1;
                        continue;
                    }
                    ChannelTarget::MorphWeights { node, first: 0, count: targets as u32 }
                }
            };
            let s = c.sampler();
            let path = format!("/animations/{}/samplers/{}", a.index(), s.index());
            channels.push(read_channel(&s, target, buffers, Read { max_count: limits.max_vertices, budget }, &path)?);
        }
        out.push(GltfAnimation { name: a.name().map(str::to_string).unwrap_or_else(|| format!("animation {}", a.index())), channels });
    }
    Ok((out, skipped_weights))
}

fn read_channel(
    s: &gltf::animation::Sampler,
    target: ChannelTarget,
    buffers: &[Buffer<'_>],
    read: Read<'_>,
    path: &str,
) -> Result<Channel, GltfError> {
    let (times, _) = read_floats(&s.input(), buffers, &format!("{path}/input"), &[Dimensions::Scalar], read)?;
    let dims: &[Dimensions] = match target {
        ChannelTarget::Rotation(_) => &[Dimensions::Vec4],
        ChannelTarget::MorphWeights { .. } => &[Dimensions::Scalar],
        _ => &[Dimensions::Vec3],
    };
    let (values, _) = read_floats(&s.output(), buffers, &format!("{path}/output"), dims, read)?;
    let interpolation = match s.interpolation() {
        GltfInterpolation::Step => Interpolation::Step,
        GltfInterpolation::Linear => Interpolation::Linear,
        GltfInterpolation::CubicSpline => Interpolation::CubicSpline,
    };
    Channel::new(target, interpolation, times, values).map_err(|e| GltfError::Invalid { path: path.into(), problem: e.to_string() })
}
