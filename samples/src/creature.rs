//! A creature made in code, for the samples that animate without a file
//! (the showcase's crawlers, the soak's churn): a worm — a tapered tube
//! along +X over a chain of joints, each vertex bound to the two joints
//! nearest it — and its wriggle, a looping clip that turns every joint
//! about Z on a travelling sine wave (linear keys, slerped).

use engine_core::animation::{AnimationClip, Channel, ChannelTarget, Interpolation, JointTransform};
use engine_core::{JointDesc, SkeletalMesh};
use glam::{Mat4, Quat, Vec3};
use renderer::{LocalVertex, StaticMeshLod, VertexInfluences};
use std::f32::consts::TAU;
use std::sync::Arc;

/// Joints along the worm, the length between two, its radius at the head.
const JOINTS: u32 = 6;
const SEGMENT: f32 = 0.5;
const RADIUS: f32 = 0.22;
/// Rings per segment and vertices per ring.
const RINGS_PER_SEGMENT: u32 = 4;
const RING_VERTICES: u32 = 10;
/// The wriggle: its period (s), keys per period and the turn of each joint (rad).
const PERIOD: f32 = 1.2;
const KEYS: u32 = 12;
const TURN: f32 = 0.35;

/// The tube's vertices and their influences.
fn tube() -> (StaticMeshLod, Vec<VertexInfluences>) {
    let rings = (JOINTS - 1) * RINGS_PER_SEGMENT + 1;
    let length = SEGMENT * (JOINTS - 1) as f32;
    let (mut vertices, mut influences, mut indices) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rings {
        let x = length * r as f32 / (rings - 1) as f32;
        // Tapered towards the tail (x = 0), rounded at both ends.
        let along = x / length;
        let radius = RADIUS * (0.45 + 0.55 * along) * (1.0 - (2.0 * along - 1.0).powi(8)).sqrt().max(0.2);
        let f = x / SEGMENT;
        let j0 = (f.floor() as u32).min(JOINTS - 2);
        let t = (f - j0 as f32).clamp(0.0, 1.0);
        for k in 0..RING_VERTICES {
            let a = TAU * k as f32 / RING_VERTICES as f32;
            let normal = Vec3::new(0.0, a.cos(), a.sin());
            vertices.push(LocalVertex {
                position: (Vec3::X * x + normal * radius).to_array(),
                tangent_x: [1.0, 0.0, 0.0, 1.0],
                normal: normal.to_array(),
                color: [255; 4],
                uvs: [[along, k as f32 / RING_VERTICES as f32], [0.0; 2], [0.0; 2], [0.0; 2]],
            });
            influences.push(VertexInfluences::four([j0 as u16, j0 as u16 + 1, 0, 0], [1.0 - t, t, 0.0, 0.0]));
        }
    }
    for r in 0..rings - 1 {
        for k in 0..RING_VERTICES {
            let (a, b) = (r * RING_VERTICES + k, r * RING_VERTICES + (k + 1) % RING_VERTICES);
            let (c, d) = (a + RING_VERTICES, b + RING_VERTICES);
            indices.extend_from_slice(&[a, c, b, b, c, d]);
        }
    }
    (StaticMeshLod::single_section(vertices, indices), influences)
}

/// The worm's skeletal mesh (one material slot) and its wriggle clip.
pub fn worm() -> engine_core::Result<(Arc<SkeletalMesh>, Arc<AnimationClip>)> {
    let (lod, influences) = tube();
    let joints: Vec<JointDesc> = (0..JOINTS)
        .map(|j| JointDesc {
            name: format!("segment {j}"),
            parent: j.checked_sub(1),
            rest: JointTransform::new(if j == 0 { Vec3::ZERO } else { Vec3::X * SEGMENT }, Quat::IDENTITY, Vec3::ONE),
            inverse_bind: Mat4::from_translation(-Vec3::X * SEGMENT * j as f32),
        })
        .collect();
    let mesh = SkeletalMesh::new("worm", vec![lod], vec![influences], joints, vec!["skin".into()])?;
    let times: Vec<f32> = (0..=KEYS).map(|k| PERIOD * k as f32 / KEYS as f32).collect();
    let channels = (1..JOINTS)
        .map(|j| {
            let values: Vec<f32> = times
                .iter()
                .flat_map(|t| {
                    let angle = TURN * (TAU * (t / PERIOD - 0.15 * j as f32)).sin();
                    Quat::from_rotation_z(angle).to_array()
                })
                .collect();
            Channel::new(ChannelTarget::Rotation(j), Interpolation::Linear, times.clone(), values)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((mesh, Arc::new(AnimationClip::new("wriggle", channels)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worm_builds_and_its_wriggle_bends_it() {
        let (mesh, clip) = worm().unwrap();
        assert_eq!(mesh.skeleton().len(), JOINTS as usize);
        let mut c = engine_core::SkeletalMeshComponent::new(mesh);
        c.add_clip(clip).unwrap();
        c.play(0, true).unwrap();
        c.advance(PERIOD / 4.0);
        // Bent: some joint's matrix is not the bind pose's identity.
        assert!(c.joint_matrices().iter().any(|m| !m.abs_diff_eq(Mat4::IDENTITY, 1e-3)));
    }
}
