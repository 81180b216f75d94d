//! Per-instance culling, cull distances with fade, LOD, draw args, UE mode.

mod common;

use common::*;
use glam::{Affine3A, Vec3};
use instancing::*;

/// A camera at the origin looking down -Z, 90° vertical field of view.
fn forward_view() -> CullView {
    CullView::look_at(Vec3::ZERO, -Vec3::Z, Vec3::Y, std::f32::consts::FRAC_PI_2, 1.0, 0.1, 100_000.0).unwrap()
}

#[test]
fn behind_camera_and_beyond_end_are_culled() {
    let s = store_with(&[
        translate(0.0, 0.0, -10.0),   // 0: in front
        translate(0.0, 0.0, 10.0),    // 1: behind
        translate(0.0, 0.0, -500.0),  // 2: beyond end
        translate(500.0, 0.0, -10.0), // 3: far to the right, outside
        translate(0.0, 0.0, -150.0),  // 4: between start and end
    ]);
    let mesh = cube_mesh();
    let d = CullDistances::new(100.0, 200.0).unwrap();
    let out = cull_instances(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &forward_view(), d).unwrap());
    let mut vis: Vec<u32> = out.instance_buffer();
    vis.sort_unstable();
    assert_eq!(vis, vec![0, 4]);
    let fade_of = |i: u32| out.lods.iter().find_map(|b| b.instances.iter().position(|&x| x == i).map(|p| b.fades[p])).unwrap();
    assert_eq!(fade_of(0), 1.0);
    assert!((fade_of(4) - 0.5).abs() < 1e-4, "{}", fade_of(4));

    // Without distances the far one comes back.
    let out = cull_instances(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &forward_view(), CullDistances::NONE).unwrap());
    assert_eq!(out.visible_count(), 3);
}

#[test]
fn fade_ramps_linearly_along_a_line() {
    let ts: Vec<Affine3A> = (0..30).map(|i| translate(0.0, 0.0, -(i as f32) * 10.0 - 10.0)).collect();
    let s = store_with(&ts);
    let d = CullDistances::new(100.0, 200.0).unwrap();
    let out = cull_instances(&s, &InstanceCuller::new(&cube_mesh(), &Affine3A::IDENTITY, &forward_view(), d).unwrap());
    let vs = visible_set(&out);
    assert_eq!(vs.len(), 19, "distances 10..=190");
    for (i, _, fade) in vs {
        let dist = (i as f32) * 10.0 + 10.0;
        let expect = if dist <= 100.0 { 1.0 } else { (200.0 - dist) / 100.0 };
        assert!((f32::from_bits(fade) - expect).abs() < 1e-5, "{dist}: {}", f32::from_bits(fade));
    }
}

#[test]
fn lod_by_projected_screen_size() {
    // 90° fov: multiple = 0.5, screen size = radius / dist (radius √3).
    // LOD1 below 0.3 → dist > 5.77; LOD2 below 0.1 → dist > 17.3.
    let ts: Vec<Affine3A> = [3.0, 4.0, 8.0, 10.0, 12.0, 30.0, 50.0].iter().map(|&z| translate(0.0, 0.0, -z)).collect();
    let s = store_with(&ts);
    let mesh = cube_mesh();
    let view = forward_view();
    assert!((view.screen_multiple() - 0.5).abs() < 1e-5);
    let out = cull_instances(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, CullDistances::NONE).unwrap());
    assert_eq!(out.counts(), vec![2, 3, 2]);
    assert_eq!(out.lods[0].instances, vec![0, 1]);
    assert_eq!(out.lods[2].instances, vec![5, 6]);

    // Scaling the whole component about the camera scales distances and
    // radii alike: the LODs do not change.
    let big = Affine3A::from_scale(Vec3::splat(4.0));
    let out = cull_instances(&s, &InstanceCuller::new(&mesh, &big, &view, CullDistances::NONE).unwrap());
    assert_eq!(out.counts(), vec![2, 3, 2]);

    // Scaling the instances 4x makes each 4x bigger on screen.
    let scaled: Vec<Affine3A> = ts.iter().map(|t| *t * Affine3A::from_scale(Vec3::splat(4.0))).collect();
    let s = store_with(&scaled);
    let out = cull_instances(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, CullDistances::NONE).unwrap());
    assert_eq!(out.counts(), vec![5, 2, 0]);
}

#[test]
fn draw_args_one_per_lod_and_section() {
    let ts: Vec<Affine3A> = [3.0, 10.0, 12.0, 50.0].iter().map(|&z| translate(0.0, 0.0, -z)).collect();
    let s = store_with(&ts);
    let mesh = cube_mesh();
    let out = cull_instances(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &forward_view(), CullDistances::NONE).unwrap());
    let args = out.draw_args(&mesh);
    assert_eq!(args.len(), 3);
    assert_eq!(
        args[1],
        DrawIndexedIndirectArgs { index_count: 768, instance_count: 2, first_index: 1536, vertex_offset: 0, first_instance: 1 }
    );
    assert_eq!(args[2].first_instance, 3);
    assert_eq!(out.instance_buffer(), vec![0, 1, 2, 3]);
    assert_eq!(bytemuck::cast_slice::<_, u8>(&args).len(), 3 * 20);
}

#[test]
fn result_does_not_depend_on_thread_count() {
    let ts = scattered(100_000, 2000.0, 9);
    let s = store_with(&ts);
    let mesh = cube_mesh();
    let view = CullView::look_at(Vec3::new(0.0, 50.0, 800.0), Vec3::ZERO, Vec3::Y, 1.0, 1.5, 0.1, 5000.0).unwrap();
    let d = CullDistances::new(500.0, 1500.0).unwrap();
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| cull_instances(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, d).unwrap()))
    };
    let one = run(1);
    assert!(one.visible_count() > 1000);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

#[test]
fn ue_mode_draws_everything_at_one_lod() {
    // One instance near the camera, many far away.
    let mut ts = vec![translate(0.0, 0.0, -3.0)];
    ts.extend((0..99).map(|i| translate((i as f32) - 50.0, 0.0, -400.0)));
    let s = store_with(&ts);
    let mesh = cube_mesh();
    let d = CullDistances::new(100.0, 200.0).unwrap();
    let ue = cull_ue_mode(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &forward_view(), d).unwrap());
    // Everything drawn, one LOD, far ones faded to 0 but still there.
    assert_eq!(ue.visible_count(), 100);
    assert_eq!(ue.counts().iter().filter(|&&c| c > 0).count(), 1);
    assert_eq!(ue.lods.iter().flat_map(|b| &b.fades).filter(|&&f| f == 0.0).count(), 99);
    let ours = cull_instances(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &forward_view(), d).unwrap());
    assert_eq!(ours.visible_count(), 1);
    // A component wholly behind the camera draws nothing either way.
    let behind = translate(0.0, 0.0, 10_000.0);
    assert_eq!(cull_ue_mode(&s, &InstanceCuller::new(&mesh, &behind, &forward_view(), d).unwrap()).visible_count(), 0);
}

#[test]
fn bad_view_and_component_rejected() {
    let mesh = cube_mesh();
    assert!(CullView::new(glam::Mat4::NAN, glam::Mat4::IDENTITY).is_err());
    let zero = Affine3A::from_scale(Vec3::ZERO);
    assert_eq!(InstanceCuller::new(&mesh, &zero, &forward_view(), CullDistances::NONE).err(), Some(InstancingError::DegenerateTransform));
}
