//! glTF skins (`/skins`): each a list of joint nodes and their inverse
//! bind matrices, the skeleton a skinned mesh node's vertices follow.

use super::accessor::{read_floats, AccessorBudget, Buffer, Read};
use super::GltfError;
use crate::animation::{AnimationClip, Channel, ChannelTarget, JointTransform};
use crate::skeletal_mesh::{JointDesc, Morphs, SkeletalMesh};
use glam::Mat4;
use gltf::accessor::Dimensions;
use renderer::VertexInfluences;
use std::sync::Arc;

/// A skin: the nodes that are its joints (the mesh's `JOINTS_0` index this
/// list) and each joint's inverse bind matrix (glTF space).
#[derive(Clone, Debug, PartialEq)]
pub struct GltfSkin {
    pub name: String,
    /// Node indices, one per joint.
    pub joints: Vec<usize>,
    /// One per joint (identity where the file gives none).
    pub inverse_bind_matrices: Vec<Mat4>,
    /// The node the file names as the skeleton's root, if any.
    pub skeleton: Option<usize>,
}

/// The most joints one skin may have (the renderer's limit).
pub const MAX_JOINTS: usize = renderer::skeletal::MAX_SKIN_JOINTS as usize;

/// Reads every skin. Errors name the skin's JSON path: no joints, more than
/// [`MAX_JOINTS`], a joint listed twice, inverse bind matrices of the wrong
/// type or count, a matrix that is not finite or not invertible.
pub(crate) fn read_skins(doc: &gltf::Document, buffers: &[Buffer<'_>], budget: &AccessorBudget) -> Result<Vec<GltfSkin>, GltfError> {
    doc.skins().map(|s| read_skin(&s, buffers, budget)).collect()
}

fn read_skin(s: &gltf::Skin, buffers: &[Buffer<'_>], budget: &AccessorBudget) -> Result<GltfSkin, GltfError> {
    let path = format!("/skins/{}", s.index());
    let joints: Vec<usize> = s.joints().map(|n| n.index()).collect();
    let invalid = |at: &str, problem: String| GltfError::Invalid { path: format!("{path}{at}"), problem };
    if joints.is_empty() || joints.len() > MAX_JOINTS {
        return Err(invalid("/joints", format!("{} joints: a skin has 1 to {MAX_JOINTS}", joints.len())));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = joints.iter().find(|j| !seen.insert(**j)) {
        return Err(invalid("/joints", format!("node {twice} is listed twice")));
    }
    let inverse_bind_matrices = match s.inverse_bind_matrices() {
        None => vec![Mat4::IDENTITY; joints.len()],
        Some(acc) => {
            let at = format!("{path}/inverseBindMatrices");
            if acc.count() != joints.len() {
                return Err(GltfError::Accessor { path: at, problem: format!("{} matrices for {} joints", acc.count(), joints.len()) });
            }
            let (m, _) = read_floats(&acc, buffers, &at, &[Dimensions::Mat4], Read { max_count: joints.len() as u64, budget })?;
            let matrices: Vec<Mat4> = m.chunks_exact(16).map(Mat4::from_cols_slice).collect();
            if let Some(bad) = matrices.iter().position(|m| !m.is_finite() || m.determinant().abs() < 1e-12) {
                return Err(invalid("/inverseBindMatrices", format!("matrix {bad} is not finite or not invertible")));
            }
            matrices
        }
    };
    Ok(GltfSkin { name: s.name().unwrap_or("").into(), joints, inverse_bind_matrices, skeleton: s.skeleton().map(|n| n.index()) })
}

/// The skeletal mesh of glTF mesh `mesh` skinned by `skin`, and the clips
/// of the file's animations that move its skeleton.
///
/// The skeleton is the skin's joints and every node above them up to the
/// scene's root (the joints' world transforms in glTF space are then the
/// skeleton's model space, so the component sits at the scene's root,
/// as glTF places a skinned mesh: by its joints, not by its node), parents
/// before children; nodes added above the joints have an identity inverse
/// bind and influence no vertex. Each clip keeps the channels that animate
/// a node of the skeleton (renumbered into its joints); an animation that
/// moves none of them gives no clip.
pub(crate) fn skeletal_mesh(
    import: &super::GltfImport,
    mesh: usize,
    skin: usize,
) -> Result<(Arc<SkeletalMesh>, Vec<Arc<AnimationClip>>), GltfError> {
    let path = format!("/skins/{skin}");
    let s = &import.skins[skin];
    let gm = import
        .meshes
        .get(mesh)
        .and_then(|m| m.as_ref())
        .ok_or_else(|| GltfError::Invalid { path: format!("/meshes/{mesh}"), problem: "a skinned node's mesh has no triangles".into() })?;
    let influences = gm.influences.as_ref().ok_or_else(|| GltfError::Invalid {
        path: format!("/meshes/{mesh}"),
        problem: "a node with a skin names a mesh without JOINTS_0/WEIGHTS_0".into(),
    })?;
    let (nodes, index) = skeleton_nodes(import, &s.joints);
    // Each node's place in the skin's joints (the first, were one listed twice).
    let mut joint_of = vec![NONE; import.nodes.len()];
    for (k, &j) in s.joints.iter().enumerate().rev() {
        joint_of[j] = k as u32;
    }
    let joints: Vec<JointDesc> = nodes
        .iter()
        .map(|&n| {
            let node = &import.nodes[n];
            let ibm = if joint_of[n] == NONE { Mat4::IDENTITY } else { s.inverse_bind_matrices[joint_of[n] as usize] };
            let t = node.transform;
            JointDesc {
                name: node.name.clone(),
                parent: node.parent.map(|p| index[p]),
                rest: JointTransform::new(t.translation, t.rotation, t.scale),
                inverse_bind: ibm,
            }
        })
        .collect();
    let mut remapped = influences.clone();
    for (v, i) in remapped.iter_mut().enumerate() {
        for (j, w) in i.joints.iter_mut().zip(i.weights) {
            match s.joints.get(*j as usize) {
                Some(&node) => *j = index[node] as u16,
                None if w == 0.0 => *j = 0,
                None => {
                    return Err(GltfError::Invalid {
                        path: format!("/meshes/{mesh}"),
                        problem: format!("vertex {v} names joint {j} of skin {skin}, which has {}", s.joints.len()),
                    })
                }
            }
        }
    }
    let lods = gm.mesh.render_data().lods().to_vec();
    let name = if s.name.is_empty() { gm.name.clone() } else { format!("{} ({})", gm.name, s.name) };
    let skeletal = SkeletalMesh::with_morph_targets(&name, lods, vec![remapped], morphs_of(gm), joints, gm.mesh.material_slots.clone())
        .map_err(|e| GltfError::Invalid { path: path.clone(), problem: e.to_string() })?;
    let clips = clips_for(import, mesh, |node| index.get(node).copied().filter(|&i| i != NONE))?;
    Ok((skeletal, clips))
}

/// "No such node" in the per-node tables of [`skeleton_nodes`] and
/// [`skeletal_mesh`].
const NONE: u32 = u32::MAX;

/// A skeleton's nodes: `joints` and every node above them, shallowest
/// first (by depth, then node index), and per node of the import its place
/// in that list ([`NONE`]: not in the skeleton). Linear: each node's depth
/// is found once (a walk up stops at the first node already seen, whose
/// depth is known) and the nodes are bucketed by depth (only nodes of one
/// depth are sorted), not walked to the root per comparison. The hierarchy
/// is acyclic (checked by the caller).
fn skeleton_nodes(import: &super::GltfImport, joints: &[usize]) -> (Vec<usize>, Vec<u32>) {
    // Per node: its depth, then (below) its place.
    let mut table = vec![NONE; import.nodes.len()];
    let mut found: Vec<(usize, usize)> = Vec::new(); // (depth, node)
    let mut walk = Vec::new();
    for &j in joints {
        let mut n = Some(j);
        let mut above = None;
        while let Some(x) = n {
            if table[x] != NONE {
                above = Some(table[x] as usize);
                break;
            }
            walk.push(x);
            n = import.nodes[x].parent;
        }
        // `walk` runs from the joint up; its top is a root or sits under `above`.
        for (d, &x) in (above.map_or(0, |d| d + 1)..).zip(walk.iter().rev()) {
            table[x] = d as u32;
            found.push((d, x));
        }
        walk.clear();
    }
    // A counting sort by depth: each depth's first place, then its nodes.
    let deepest = found.iter().map(|&(d, _)| d).max().unwrap_or(0);
    let mut first = vec![0usize; deepest + 2];
    for &(d, _) in &found {
        first[d + 1] += 1;
    }
    for d in 1..first.len() {
        first[d] += first[d - 1];
    }
    let (mut nodes, mut next) = (vec![0; found.len()], first.clone());
    for &(d, x) in &found {
        nodes[next[d]] = x;
        next[d] += 1;
    }
    for depth in first.windows(2) {
        nodes[depth[0]..depth[1]].sort_unstable();
    }
    for (i, &n) in nodes.iter().enumerate() {
        table[n] = i as u32;
    }
    (nodes, table)
}

/// The morph targets of `gm` as a skeletal mesh takes them.
fn morphs_of(gm: &super::GltfMesh) -> Morphs {
    Morphs { targets: vec![gm.morph_targets.clone()], default_weights: gm.default_weights.clone() }
}

/// The clips of the file's animations for a skeletal mesh of glTF mesh
/// `mesh` whose joints `joint_of` numbers (by node): the channels that move
/// its joints, and those that weigh the morph targets of a node drawing
/// `mesh` (joint 0 stands for that node: the weights are the pose's, not a
/// joint's).
fn clips_for(
    import: &super::GltfImport,
    mesh: usize,
    joint_of: impl Fn(usize) -> Option<u32>,
) -> Result<Vec<Arc<AnimationClip>>, GltfError> {
    let mut clips = Vec::new();
    for (a, anim) in import.animations.iter().enumerate() {
        let channels: Vec<Channel> = anim
            .channels
            .iter()
            .filter_map(|c| match c.target() {
                ChannelTarget::MorphWeights { node, .. } => (import.nodes[node as usize].mesh == Some(mesh)).then(|| c.retargeted(0)),
                t => joint_of(t.node() as usize).map(|j| c.retargeted(j)),
            })
            .collect();
        if channels.is_empty() {
            continue;
        }
        let clip = AnimationClip::new(anim.name.clone(), channels)
            .map_err(|e| GltfError::Invalid { path: format!("/animations/{a}"), problem: e.to_string() })?;
        clips.push(Arc::new(clip));
    }
    Ok(clips)
}

/// A mesh with morph targets and no skin as a skeletal mesh of one joint
/// (its node: the component sits there), every vertex on it, and the clips
/// that weigh its targets.
pub(crate) fn morphed_mesh(import: &super::GltfImport, mesh: usize) -> Result<(Arc<SkeletalMesh>, Vec<Arc<AnimationClip>>), GltfError> {
    let path = format!("/meshes/{mesh}");
    let gm = import
        .meshes
        .get(mesh)
        .and_then(|m| m.as_ref())
        .ok_or_else(|| GltfError::Invalid { path: path.clone(), problem: "a morphed node's mesh has no triangles".into() })?;
    let lods = gm.mesh.render_data().lods().to_vec();
    let on_root = vec![VertexInfluences::four([0; 4], [1.0, 0.0, 0.0, 0.0]); lods[0].vertices.len()];
    let root = JointDesc { name: gm.name.clone(), parent: None, rest: JointTransform::IDENTITY, inverse_bind: Mat4::IDENTITY };
    let skeletal =
        SkeletalMesh::with_morph_targets(&gm.name, lods, vec![on_root], morphs_of(gm), vec![root], gm.mesh.material_slots.clone())
            .map_err(|e| GltfError::Invalid { path, problem: e.to_string() })?;
    Ok((skeletal, clips_for(import, mesh, |_| None)?))
}
