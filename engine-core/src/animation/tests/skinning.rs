//! Global transforms and skinning matrices from a skeleton and a pose.

use glam::{Mat4, Quat, Vec3};

use super::super::{JointTransform, Pose, Skeleton};
use super::{assert_vec3, rot_z};

fn assert_mat4(got: Mat4, expected: Mat4) {
    assert!(got.abs_diff_eq(expected, 1e-5), "got {got}, expected {expected}");
}

/// Root at (1, 0, 0) turned 90 degrees about Z; a child 2 up; a grandchild 3 out, scaled by 2.
fn chain() -> (Vec<Option<u32>>, Pose) {
    let pose = Pose::from_rest(&[
        JointTransform::new(Vec3::X, rot_z(90.0), Vec3::ONE),
        JointTransform::new(Vec3::Y * 2.0, Quat::IDENTITY, Vec3::ONE),
        JointTransform::new(Vec3::Z * 3.0, Quat::IDENTITY, Vec3::splat(2.0)),
    ]);
    (vec![None, Some(0), Some(1)], pose)
}

#[test]
fn a_three_joint_chain_gives_the_expected_matrices() {
    let (parents, pose) = chain();
    let skeleton = Skeleton::new(parents, vec![Mat4::IDENTITY; 3]).unwrap();
    let mut globals = Vec::new();
    skeleton.global_transforms(&pose, &mut globals).unwrap();
    // The child's (0, 2, 0) turned 90 degrees is (-2, 0, 0), from (1, 0, 0): (-1, 0, 0).
    assert_mat4(globals[0], Mat4::from_rotation_translation(rot_z(90.0), Vec3::X));
    assert_mat4(globals[1], Mat4::from_rotation_translation(rot_z(90.0), Vec3::new(-1.0, 0.0, 0.0)));
    assert_mat4(globals[2], Mat4::from_scale_rotation_translation(Vec3::splat(2.0), rot_z(90.0), Vec3::new(-1.0, 0.0, 3.0)));
    // A point one unit along the grandchild's X: scaled to 2, turned to +Y.
    assert_vec3(globals[2].transform_point3(Vec3::X), Vec3::new(-1.0, 2.0, 3.0));

    // Skinning matrices are global * inverse bind.
    let inverse_bind = vec![Mat4::from_translation(-Vec3::X), Mat4::from_translation(Vec3::Z), Mat4::from_scale(Vec3::splat(0.5))];
    let skinned = Skeleton::new(vec![None, Some(0), Some(1)], inverse_bind.clone()).unwrap();
    let mut matrices = Vec::new();
    skinned.joint_matrices(&pose, &mut matrices).unwrap();
    for j in 0..3 {
        assert_mat4(matrices[j], globals[j] * inverse_bind[j]);
    }
    assert_vec3(matrices[0].transform_point3(Vec3::X), Vec3::X);
    let mut from_globals = Vec::new();
    skinned.joint_matrices_from_globals(&globals, &mut from_globals).unwrap();
    assert_eq!(from_globals, matrices);
}

#[test]
fn the_bind_pose_deforms_nothing() {
    let (parents, pose) = chain();
    let inverse_bind = Skeleton::inverse_binds_for(&parents, &pose).unwrap();
    let skeleton = Skeleton::new(parents, inverse_bind).unwrap();
    let mut matrices = Vec::new();
    skeleton.joint_matrices(&pose, &mut matrices).unwrap();
    assert_eq!(matrices.len(), 3);
    for m in &matrices {
        assert_mat4(*m, Mat4::IDENTITY);
    }
}

#[test]
fn joint_matrices_reuse_the_output_buffer() {
    let (parents, mut pose) = chain();
    let skeleton = Skeleton::new(parents, vec![Mat4::IDENTITY; 3]).unwrap();
    let mut matrices = Vec::with_capacity(3);
    let ptr = matrices.as_ptr();
    for i in 0..10 {
        pose.joints[1].rotation = rot_z(i as f32);
        skeleton.joint_matrices(&pose, &mut matrices).unwrap();
        assert_eq!((matrices.as_ptr(), matrices.capacity()), (ptr, 3));
    }
}
