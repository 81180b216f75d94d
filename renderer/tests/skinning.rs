//! GPU skinning on the real device (validation on, zero messages
//! asserted): a mesh skinned on the GPU by the skinned vertex factory
//! renders byte for byte as the same mesh skinned on the CPU by the same
//! formula and drawn as a static mesh; a new pose rebuilds no command;
//! a bad pose is refused and the mesh keeps its last one.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;

/// A `n`×`n` grid of quads in the XY plane, `size` across, facing +Z.
fn grid(n: u32, size: f32) -> StaticMeshLod {
    let mut vertices = Vec::new();
    for y in 0..=n {
        for x in 0..=n {
            let (u, v) = (x as f32 / n as f32, y as f32 / n as f32);
            vertices.push(vertex_factory::LocalVertex {
                position: [(u - 0.5) * size, (v - 0.5) * size, 0.0],
                tangent_x: [1.0, 0.0, 0.0, 1.0],
                normal: [0.0, 0.0, 1.0],
                color: [255; 4],
                uvs: [[u, v], [0.0; 2], [0.0; 2], [0.0; 2]],
            });
        }
    }
    let mut indices = Vec::new();
    for y in 0..n {
        for x in 0..n {
            let i = y * (n + 1) + x;
            indices.extend_from_slice(&[i, i + 1, i + n + 2, i, i + n + 2, i + n + 1]);
        }
    }
    StaticMeshLod::single_section(vertices, indices)
}

/// Left third on joint 0, right third on joint 1, the middle half and half.
fn influences(lod: &StaticMeshLod) -> Vec<VertexInfluences> {
    lod.vertices
        .iter()
        .map(|v| {
            let x = v.position[0];
            let weights = if x < -0.6 {
                [1.0, 0.0, 0.0, 0.0]
            } else if x > 0.6 {
                [0.0, 1.0, 0.0, 0.0]
            } else {
                [0.5, 0.5, 0.0, 0.0]
            };
            VertexInfluences { joints: [0, 1, 0, 0], weights }
        })
        .collect()
}

/// The same formula as the vertex factory: the weighted sum of the joint
/// matrices, times the position.
fn skin_on_cpu(lod: &StaticMeshLod, influences: &[VertexInfluences], pose: &[Mat4]) -> StaticMeshLod {
    let mut out = lod.clone();
    for (v, i) in out.vertices.iter_mut().zip(influences) {
        let m = (0..4).fold(Mat4::ZERO, |acc, k| acc + pose[i.joints[k] as usize] * i.weights[k]);
        v.position = m.transform_point3(Vec3::from(v.position)).to_array();
    }
    out
}

#[test]
fn gpu_skinning_renders_as_the_cpu_reference_and_a_new_pose_rebuilds_no_command() {
    let lod = grid(12, 4.0);
    let inf = influences(&lod);
    let skinned = SkinnedMeshRenderData::new(vec![lod.clone()], vec![inf.clone()], 2).unwrap();
    // Dyadic translations and weights of 1 and 1/2: both sides compute exactly.
    let pose = vec![Mat4::from_translation(Vec3::new(0.0, 0.5, 1.0)), Mat4::from_translation(Vec3::new(0.25, -0.5, 2.0))];
    let fam = family(vec![top_view(12.0)]);
    let material = Material::colored(Vec4::new(0.8, 0.5, 0.2, 1.0));

    let mut gpu = render_thread(RenderThreadMode::Threaded);
    sun(&mut gpu, true);
    let m = gpu.create_material(material.clone()).unwrap();
    let proxy = SkeletalMeshSceneProxy::new(skinned.clone(), vec![m], SkeletalPose { joint_matrices: vec![Mat4::IDENTITY; 2] }).unwrap();
    let id = gpu.add_primitive(Box::new(proxy), Mat4::IDENTITY).unwrap();
    frame(&mut gpu, &fam);
    gpu.update_dynamic_data(id, Box::new(SkeletalPose { joint_matrices: pose.clone() })).unwrap();
    let (stats, on_gpu) = frame(&mut gpu, &fam);
    assert_eq!(stats.cached_commands_built, 0, "a new pose changes the joint buffer, not a command");

    let mut cpu = render_thread(RenderThreadMode::Threaded);
    sun(&mut cpu, true);
    let m = cpu.create_material(material).unwrap();
    let reference = StaticMeshRenderData::new(vec![skin_on_cpu(&lod, &inf, &pose)]).unwrap();
    cpu.add_primitive(Box::new(StaticMeshSceneProxy::new(reference, vec![m])), Mat4::IDENTITY).unwrap();
    frame(&mut cpu, &fam);
    let (_, on_cpu) = frame(&mut cpu, &fam);
    test_support::save_test_output(&on_gpu, "skinning-gpu");
    assert_images_equal(&on_cpu, &on_gpu, "GPU skinning vs the CPU reference");
    // The bind pose differs: the pose did something.
    let mut bind = render_thread(RenderThreadMode::Threaded);
    sun(&mut bind, true);
    let m = bind.create_material(Material::colored(Vec4::new(0.8, 0.5, 0.2, 1.0))).unwrap();
    bind.add_primitive(Box::new(StaticMeshSceneProxy::new(StaticMeshRenderData::new(vec![lod]).unwrap(), vec![m])), Mat4::IDENTITY)
        .unwrap();
    let (_, bind_img) = frame(&mut bind, &fam);
    assert_ne!(bind_img.rgba8, on_gpu.rgba8);

    // A pose of the wrong size is a failed update; the mesh keeps its pose.
    gpu.update_dynamic_data(id, Box::new(SkeletalPose { joint_matrices: vec![Mat4::IDENTITY; 3] })).unwrap();
    let (stats, kept) = frame(&mut gpu, &fam);
    assert_eq!(stats.failed_updates, 1);
    assert_images_equal(&on_gpu, &kept, "a refused pose changes nothing");
    for rt in [&mut gpu, &mut cpu, &mut bind] {
        assert_clean(rt);
    }
}
