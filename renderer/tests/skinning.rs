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

/// The left part (x < -0.4) on joint 0, the right part (x > 0.4) on joint 1, the middle half and half.
fn influences(lod: &StaticMeshLod) -> Vec<VertexInfluences> {
    lod.vertices
        .iter()
        .map(|v| {
            let x = v.position[0];
            let weights = if x < -0.4 {
                [1.0, 0.0, 0.0, 0.0]
            } else if x > 0.4 {
                [0.0, 1.0, 0.0, 0.0]
            } else {
                [0.5, 0.5, 0.0, 0.0]
            };
            VertexInfluences::four([0, 1, 0, 0], weights)
        })
        .collect()
}

/// The same formula as the vertex factory: the weighted sum of the joint
/// matrices, times the position.
fn skin_on_cpu(lod: &StaticMeshLod, influences: &[VertexInfluences], pose: &[Mat4]) -> StaticMeshLod {
    let mut out = lod.clone();
    for (v, i) in out.vertices.iter_mut().zip(influences) {
        let m = (0..MAX_INFLUENCES).fold(Mat4::ZERO, |acc, k| acc + pose[i.joints[k] as usize] * i.weights[k]);
        v.position = m.transform_point3(Vec3::from(v.position)).to_array();
    }
    out
}

/// The CPU side of a comparison: `meshes`, each placed by its transform,
/// drawn as static meshes with `material` under the shadowing sun; the
/// second frame's stats and image (the render thread checked clean).
fn render_static(meshes: Vec<(StaticMeshLod, Mat4)>, material: Material, fam: &ViewFamily) -> (FrameStats, rhi_vulkan::Image) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, true);
    let m = rt.create_material(material).unwrap();
    for (lod, at) in meshes {
        rt.add_primitive(Box::new(StaticMeshSceneProxy::new(StaticMeshRenderData::new(vec![lod]).unwrap(), vec![m])), at).unwrap();
    }
    frame(&mut rt, fam);
    let out = frame(&mut rt, fam);
    assert_clean(&mut rt);
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
    let proxy = SkeletalMeshSceneProxy::new(skinned.clone(), vec![m], SkeletalPose::joints(vec![Mat4::IDENTITY; 2])).unwrap();
    let id = gpu.add_primitive(Box::new(proxy), Mat4::IDENTITY).unwrap();
    frame(&mut gpu, &fam);
    gpu.update_dynamic_data(id, Box::new(SkeletalPose::joints(pose.clone()))).unwrap();
    let (stats, on_gpu) = frame(&mut gpu, &fam);
    assert_eq!(stats.cached_commands_built, 0, "a new pose changes the joint buffer, not a command");

    let (_, on_cpu) = render_static(vec![(skin_on_cpu(&lod, &inf, &pose), Mat4::IDENTITY)], material.clone(), &fam);
    test_support::save_test_output(&on_gpu, "skinning-gpu");
    assert_images_equal(&on_cpu, &on_gpu, "GPU skinning vs the CPU reference");
    // The bind pose differs: the pose did something.
    let (_, bind_img) = render_static(vec![(lod, Mat4::IDENTITY)], material, &fam);
    assert_ne!(bind_img.rgba8, on_gpu.rgba8);

    // A pose of the wrong size is a failed update; the mesh keeps its pose.
    gpu.update_dynamic_data(id, Box::new(SkeletalPose::joints(vec![Mat4::IDENTITY; 3]))).unwrap();
    let (stats, kept) = frame(&mut gpu, &fam);
    assert_eq!(stats.failed_updates, 1);
    assert_images_equal(&on_gpu, &kept, "a refused pose changes nothing");
    assert_clean(&mut gpu);
}

/// 16 skinned grids whose poses change every frame, with TAA (motion
/// vectors from the previous frame's joint matrices) and shadows: the
/// same image serial and parallel and with 1 or 3 frames in flight; the
/// velocity of a skinned surface is its joints' screen motion.
#[test]
fn animated_skinned_meshes_are_the_same_serial_and_parallel_and_in_flight_and_write_their_motion() {
    // Render data holds one device's buffers: each render thread makes its own.
    let skinned = || {
        let lod = grid(6, 1.5);
        let inf = influences(&lod);
        SkinnedMeshRenderData::new(vec![lod], vec![inf], 2).unwrap()
    };
    let pose = |frame: u32, k: usize| {
        let t = frame as f32 * 0.25 + k as f32;
        SkeletalPose::joints(vec![Mat4::from_translation(Vec3::new(0.0, 0.0, 0.5)), Mat4::from_translation(Vec3::new(0.0, t.sin(), 1.0))])
    };
    let view = top_view(14.0).with_state(ViewStateId(3));
    let render = |parallel: &str, in_flight: u32| {
        let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, in_flight);
        for (name, value) in
            [(cvars::ANTI_ALIASING_METHOD, "2"), (cvars::PARALLEL_RECORD, parallel), (cvars::PARALLEL_PASS_SETUP, parallel)]
        {
            rt.set_cvar(name, value).unwrap();
        }
        sun(&mut rt, true);
        let m = rt.create_material(Material::colored(Vec4::new(0.3, 0.6, 0.9, 1.0))).unwrap();
        let skinned = skinned();
        let ids: Vec<PrimitiveId> = (0..16)
            .map(|k| {
                let at = Vec3::new((k % 4) as f32 * 2.5 - 3.75, (k / 4) as f32 * 2.5 - 3.75, 0.0);
                let proxy = SkeletalMeshSceneProxy::new(skinned.clone(), vec![m], pose(0, k)).unwrap();
                rt.add_primitive(Box::new(proxy), Mat4::from_translation(at)).unwrap()
            })
            .collect();
        let fam = family(vec![view.clone()]);
        for frame in 1..6 {
            for (k, &id) in ids.iter().enumerate() {
                rt.update_dynamic_data(id, Box::new(pose(frame, k))).unwrap();
            }
            rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
        }
        let (stats, img) = frame(&mut rt, &fam);
        assert_eq!(stats.cached_commands_built, 0);
        assert_clean(&mut rt);
        img
    };
    let reference = render("1", 1);
    test_support::save_test_output(&reference, "skinning-animated-taa");
    assert_images_equal(&reference, &render("0", 1), "skinned meshes: serial vs parallel");
    assert_images_equal(&reference, &render("1", 3), "skinned meshes: 1 vs 3 frames in flight");

    // Motion vectors: one grid whose right joint moves 0.5 up the screen's y between two frames.
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::ANTI_ALIASING_METHOD, "2").unwrap();
    let m = rt.create_material(Material::colored(Vec4::ONE)).unwrap();
    let still = SkeletalPose::joints(vec![Mat4::IDENTITY; 2]);
    let id = rt.add_primitive(Box::new(SkeletalMeshSceneProxy::new(skinned(), vec![m], still).unwrap()), Mat4::IDENTITY).unwrap();
    let fam = family(vec![view.clone()]);
    frame(&mut rt, &fam);
    let step = Vec3::new(0.0, 0.5, 0.0);
    rt.update_dynamic_data(id, Box::new(SkeletalPose::joints(vec![Mat4::IDENTITY, Mat4::from_translation(step)]))).unwrap();
    frame(&mut rt, &fam);
    let bytes = rt
        .with_context(|ctx| {
            let (texture, state) = ctx.renderer.velocity_target().unwrap();
            ctx.device.read_texture_texels(texture, state)
        })
        .unwrap()
        .unwrap();
    let screen = |p: Vec3| {
        let c = view.view_proj() * p.extend(1.0);
        glam::Vec2::new(c.x / c.w, c.y / c.w) * 0.5
    };
    // The grid's last column of cells (x from 0.5 to 0.75) follows joint 1 alone.
    let p = Vec3::new(0.62, 0.0, 0.0) + step;
    let expected = screen(p) - screen(p - step);
    let pixel = (screen(p) + 0.5) * glam::Vec2::new(W as f32, H as f32);
    let at = (pixel.y as u32 * W + pixel.x as u32) as usize * 4;
    let half = |i: usize| half::f16::from_le_bytes([bytes[i], bytes[i + 1]]).to_f32();
    let got = glam::Vec2::new(half(at), half(at + 2));
    assert!((got - expected).abs().max_element() < 2e-3 && expected.length() > 0.01, "skinned motion {got} vs {expected}");
    assert_clean(&mut rt);
}

/// Morph targets: a grid whose one target lifts its middle rows renders at
/// weight 0 as the base shape and at weight 1 as the target shape, byte
/// for byte as the same shapes built on the CPU; weight changes rebuild no
/// command, and a weight that is not finite is refused.
#[test]
fn morph_weights_0_and_1_give_the_base_and_the_target_shape() {
    let lod = grid(8, 3.0);
    let n = lod.vertices.len();
    let lift = |p: [f32; 3]| if p[1].abs() < 0.8 { [0.0, 0.0, 0.5] } else { [0.0; 3] };
    let target = MorphTarget { position_deltas: lod.vertices.iter().map(|v| lift(v.position)).collect(), normal_deltas: Vec::new() };
    let one_joint = vec![VertexInfluences::four([0; 4], [1.0, 0.0, 0.0, 0.0]); n];
    let fam = family(vec![top_view(8.0)]);
    let material = Material::colored(Vec4::new(0.9, 0.4, 0.3, 1.0));
    let morphed_render = |weight: f32| {
        let mut rt = render_thread(RenderThreadMode::Threaded);
        sun(&mut rt, false);
        let m = rt.create_material(material.clone()).unwrap();
        let data =
            SkinnedMeshRenderData::with_morph_targets(vec![lod.clone()], vec![one_joint.clone()], 1, vec![vec![target.clone()]]).unwrap();
        let proxy = SkeletalMeshSceneProxy::new(data, vec![m], SkeletalPose::joints(vec![Mat4::IDENTITY])).unwrap();
        let id = rt.add_primitive(Box::new(proxy), Mat4::IDENTITY).unwrap();
        frame(&mut rt, &fam);
        let pose = SkeletalPose { joint_matrices: vec![Mat4::IDENTITY], morph_weights: vec![weight] };
        rt.update_dynamic_data(id, Box::new(pose)).unwrap();
        let (stats, img) = frame(&mut rt, &fam);
        assert_eq!((stats.cached_commands_built, stats.failed_updates), (0, 0));
        let bad = SkeletalPose { joint_matrices: vec![Mat4::IDENTITY], morph_weights: vec![f32::NAN] };
        rt.update_dynamic_data(id, Box::new(bad)).unwrap();
        let (stats, kept) = frame(&mut rt, &fam);
        assert_eq!(stats.failed_updates, 1, "a NaN weight is refused");
        assert_images_equal(&img, &kept, "a refused weight changes nothing");
        assert_clean(&mut rt);
        img
    };
    let static_render = |shape: StaticMeshLod| {
        let mut rt = render_thread(RenderThreadMode::Threaded);
        sun(&mut rt, false);
        let m = rt.create_material(material.clone()).unwrap();
        rt.add_primitive(Box::new(StaticMeshSceneProxy::new(StaticMeshRenderData::new(vec![shape]).unwrap(), vec![m])), Mat4::IDENTITY)
            .unwrap();
        let (_, img) = frame(&mut rt, &fam);
        assert_clean(&mut rt);
        img
    };
    let mut lifted = lod.clone();
    for (v, d) in lifted.vertices.iter_mut().zip(&target.position_deltas) {
        v.position = (Vec3::from(v.position) + Vec3::from(*d)).to_array();
    }
    let (at_0, at_1) = (morphed_render(0.0), morphed_render(1.0));
    test_support::save_test_output(&at_1, "morph-target-weight-1");
    assert_images_equal(&static_render(lod.clone()), &at_0, "weight 0: the base shape");
    assert_images_equal(&static_render(lifted), &at_1, "weight 1: the target shape");
    assert_ne!(at_0.rgba8, at_1.rgba8);
}

/// Identical skinned meshes with one material share a joint page: their
/// cached commands merge into one instanced draw per pass, and each still
/// draws its own pose — byte for byte as the same grids skinned on the
/// CPU, each a static mesh of its own (16 draws there).
#[test]
fn identical_skinned_meshes_merge_into_one_instanced_draw_and_each_draws_its_own_pose() {
    let lod = grid(4, 1.5);
    let inf = influences(&lod);
    // Dyadic poses and places: both sides compute exactly.
    let pose = |k: usize| {
        let lift = Vec3::new(0.25 * (k % 4) as f32, 0.125 * (k / 4) as f32 - 0.25, 1.0 + 0.125 * k as f32);
        vec![Mat4::from_translation(Vec3::new(0.0, 0.0, 0.5)), Mat4::from_translation(lift)]
    };
    let at = |k: usize| Mat4::from_translation(Vec3::new((k % 4) as f32 * 2.5 - 3.75, (k / 4) as f32 * 2.5 - 3.75, 0.0));
    let fam = family(vec![top_view(14.0)]);
    let material = Material::colored(Vec4::new(0.3, 0.7, 0.4, 1.0));

    let mut gpu = render_thread(RenderThreadMode::Threaded);
    sun(&mut gpu, true);
    let m = gpu.create_material(material.clone()).unwrap();
    let skinned = SkinnedMeshRenderData::new(vec![lod.clone()], vec![inf.clone()], 2).unwrap();
    let ids: Vec<PrimitiveId> = (0..16)
        .map(|k| {
            let proxy = SkeletalMeshSceneProxy::new(skinned.clone(), vec![m], SkeletalPose::joints(vec![Mat4::IDENTITY; 2])).unwrap();
            gpu.add_primitive(Box::new(proxy), at(k)).unwrap()
        })
        .collect();
    frame(&mut gpu, &fam);
    for (k, &id) in ids.iter().enumerate() {
        gpu.update_dynamic_data(id, Box::new(SkeletalPose::joints(pose(k)))).unwrap();
    }
    let (stats, on_gpu) = frame(&mut gpu, &fam);
    assert_eq!(skinned.joint_pages(), 1, "16 small skeletons fit the first page");
    for pass in [MeshPass::DepthPrepass, MeshPass::Base] {
        let s = &stats.passes[pass.index()];
        assert_eq!((s.mesh_draw_commands, s.draws, s.instances), (16, 1, 16), "{pass:?}: 16 commands merged into one draw");
    }
    assert_eq!(stats.cached_commands_built, 0);

    let references = (0..16).map(|k| (skin_on_cpu(&lod, &inf, &pose(k)), at(k))).collect();
    let (cpu_stats, on_cpu) = render_static(references, material, &fam);
    assert_eq!(cpu_stats.passes[MeshPass::Base.index()].draws, 16, "different meshes do not merge");
    test_support::save_test_output(&on_gpu, "skinning-merged");
    assert_images_equal(&on_cpu, &on_gpu, "16 merged skinned grids vs their CPU references");
    assert_clean(&mut gpu);
}

/// A mesh's joint pages: the first holds a quarter MiB of slots and each
/// next one four times as many, so a skeleton of 2,048 joints (256 KiB a
/// slot) takes pages of 1, 4 and 16 slots — one draw each; a page whose
/// last slot is freed goes, and a new proxy takes its place.
#[test]
fn joint_pages_grow_fourfold_and_go_with_their_last_slot() {
    const JOINTS: u32 = 2048;
    let lod = grid(2, 1.0);
    let inf = influences(&lod);
    let skinned = SkinnedMeshRenderData::new(vec![lod], vec![inf], JOINTS).unwrap();
    let fam = family(vec![top_view(14.0)]);
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let m = rt.create_material(Material::colored(Vec4::ONE)).unwrap();
    let add = |rt: &mut RenderThread, k: usize| {
        let proxy =
            SkeletalMeshSceneProxy::new(skinned.clone(), vec![m], SkeletalPose::joints(vec![Mat4::IDENTITY; JOINTS as usize])).unwrap();
        rt.add_primitive(Box::new(proxy), Mat4::from_translation(Vec3::new(k as f32 * 1.25 - 4.0, 0.0, 0.0))).unwrap()
    };
    let ids: Vec<PrimitiveId> = (0..6).map(|k| add(&mut rt, k)).collect();
    let (stats, _) = frame(&mut rt, &fam);
    assert_eq!(skinned.joint_pages(), 3, "1 + 4 slots, then a third page");
    let base = &stats.passes[MeshPass::Base.index()];
    assert_eq!((base.mesh_draw_commands, base.draws, base.instances), (6, 3, 6), "one draw per page");
    rt.remove_primitives(ids).unwrap();
    frame(&mut rt, &fam);
    assert_eq!(skinned.joint_pages(), 0, "each page went with its last slot");
    add(&mut rt, 0);
    let (stats, _) = frame(&mut rt, &fam);
    assert_eq!((skinned.joint_pages(), stats.passes[MeshPass::Base.index()].draws), (1, 1));
    assert_clean(&mut rt);
}

/// Eight influences per vertex (glTF's `JOINTS_1`/`WEIGHTS_1`): a grid
/// whose every vertex is moved by eight joints renders byte for byte as
/// the same grid skinned on the CPU over all eight; a mesh that uses four
/// or fewer is skinned with four.
#[test]
fn eight_influences_per_vertex_render_as_the_cpu_reference() {
    let lod = grid(8, 4.0);
    let eight: Vec<VertexInfluences> = lod
        .vertices
        .iter()
        .enumerate()
        .map(|(v, _)| {
            // Joint k of the eight weighs 1/8, except that vertices in
            // turn move two eighths from the last four to the first four.
            let mut weights = [0.125f32; MAX_INFLUENCES];
            let k = v % 4;
            weights[k] += 0.125;
            weights[4 + k] -= 0.125;
            VertexInfluences { joints: [0, 1, 2, 3, 4, 5, 6, 7], weights }
        })
        .collect();
    let skinned = SkinnedMeshRenderData::new(vec![lod.clone()], vec![eight.clone()], 8).unwrap();
    assert_eq!(skinned.influences_per_vertex(), 8);
    let four = SkinnedMeshRenderData::new(vec![lod.clone()], vec![influences(&lod)], 2).unwrap();
    assert_eq!(four.influences_per_vertex(), 4);
    // Dyadic translations: both sides compute exactly.
    let pose: Vec<Mat4> =
        (0..8).map(|j| Mat4::from_translation(Vec3::new(0.25 * j as f32 - 1.0, 0.125 * j as f32, 1.0 + 0.0625 * (j * j) as f32))).collect();
    let fam = family(vec![top_view(12.0)]);
    let material = Material::colored(Vec4::new(0.5, 0.6, 0.9, 1.0));
    let mut gpu = render_thread(RenderThreadMode::Threaded);
    sun(&mut gpu, true);
    let m = gpu.create_material(material.clone()).unwrap();
    gpu.add_primitive(Box::new(SkeletalMeshSceneProxy::new(skinned, vec![m], SkeletalPose::joints(pose.clone())).unwrap()), Mat4::IDENTITY)
        .unwrap();
    frame(&mut gpu, &fam);
    let (_, on_gpu) = frame(&mut gpu, &fam);
    let (_, on_cpu) = render_static(vec![(skin_on_cpu(&lod, &eight, &pose), Mat4::IDENTITY)], material, &fam);
    test_support::save_test_output(&on_gpu, "skinning-eight-influences");
    assert_images_equal(&on_cpu, &on_gpu, "eight influences: GPU vs the CPU reference");
    assert_clean(&mut gpu);
}
