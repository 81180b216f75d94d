//! Occlusion culling of instances (issue 18): on every path — flat CPU
//! culling, the HISM cluster tree (whole occluded clusters skipped) and
//! GPU culling (the occlusion buffer uploaded, `test_sphere` ported to
//! WGSL) — the instances the view's occlusion buffer hides are not drawn
//! and are counted as `occluded_instances`, the same count and the same
//! visible set on each path, and the image stays the same byte for byte.

mod common;

use std::sync::Arc;

use glam::{Affine3A, Mat4, Quat, Vec3, Vec4};
use instancing::*;
use renderer::*;
use rhi_vulkan::{Image, Rect};

const W: u32 = 160;
const H: u32 = 120;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    Flat,
    Hism,
    Gpu,
}

/// One path's frames with occlusion on and off.
struct Run {
    on: FrameStats,
    on_image: Image,
    off: FrameStats,
    off_image: Image,
    ism: IsmStatsSnapshot,
}

/// Sets `rt` up for `path` and adds a wall (x in -6..6, y in -0.5..0.5, z
/// in 0..6) and, behind it, a forest of `transforms` (component space =
/// world); returns the forest proxy's statistics handle.
fn forest_scene(rt: &mut RenderThread, path: Path, transforms: &[Affine3A]) -> IsmStats {
    rt.set_cvar(CVAR_GPU_CULLING, if path == Path::Gpu { "1" } else { "0" }).unwrap();
    let white = rt.create_material(Material::colored(Vec4::ONE)).unwrap();
    let grey = rt.create_material(Material::colored(Vec4::new(0.5, 0.5, 0.5, 1.0))).unwrap();
    let mesh: Arc<StaticMeshRenderData> = StaticMeshRenderData::new(vec![shapes::cube(1.0)]).unwrap();
    let wall = Mat4::from_scale_rotation_translation(Vec3::new(12.0, 1.0, 6.0), Quat::IDENTITY, Vec3::new(0.0, 0.0, 3.0));
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![grey])), wall).unwrap();
    let mut store = InstanceStore::new(mesh.bounds());
    store.add_instances(transforms).unwrap();
    let mut proxy = common::store_proxy(&mesh, &mut store, white);
    if path == Path::Hism {
        let culling_mesh = instanced_mesh_for(&mesh).unwrap();
        let tree = Arc::new(ClusterTree::build(&store, &culling_mesh, &ClusterTreeSettings::default()));
        proxy = proxy.with_hierarchical(Some(HismTree { tree, edited_since: Vec::new() }));
    }
    let stats = proxy.stats();
    rt.add_primitive(Box::new(proxy), Mat4::IDENTITY).unwrap();
    stats
}

/// A view from in front of the wall, `x` to the side of its middle.
fn view_from(x: f32) -> ViewFamily {
    let view =
        SceneView::perspective(Vec3::new(x, -12.0, 2.0), Vec3::new(x, 10.0, 2.0), Vec3::Z, 1.0, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    ViewFamily::new(W, H, vec![view])
}

/// The forest behind the wall drawn on `path`: a frame with occlusion on,
/// then off.
fn forest_behind_a_wall(path: Path, transforms: &[Affine3A]) -> Run {
    let mut rt = common::render_thread();
    let stats = forest_scene(&mut rt, path, transforms);
    let family = view_from(0.0);
    let mut render = |on: &str| {
        rt.set_cvar(cvars::ALLOW_OCCLUSION_QUERIES, on).unwrap();
        rt.render_frame(FrameRequest { family: family.clone(), read_back: true, execute: true }).unwrap();
        let image = rt.read_back().unwrap().expect("image");
        (rt.last_stats().unwrap().expect("stats"), image)
    };
    let (on, on_image) = render("1");
    let ism = stats.snapshot();
    let (off, off_image) = render("0");
    let expected = match path {
        Path::Flat => CullPath::Cpu,
        Path::Hism => CullPath::CpuTree,
        Path::Gpu => CullPath::Gpu,
    };
    assert_eq!(ism.path, expected);
    test_support::assert_clean(&mut rt);
    Run { on, on_image, off, off_image, ism }
}

fn occluded(s: &FrameStats) -> u64 {
    s.counter(OCCLUDED_INSTANCES_COUNTER)
}

fn visible(s: &FrameStats) -> u64 {
    s.counter(VISIBLE_INSTANCES_COUNTER)
}

/// What every path must show: some instances occluded, none with occlusion
/// off, each frustum-visible instance drawn or occluded, the same image.
fn check(run: &Run, what: &str) {
    assert!(occluded(&run.on) > 0, "{what}: instances behind the wall: {}", occluded(&run.on));
    assert_eq!(occluded(&run.off), 0, "{what}");
    assert_eq!(run.on.occluded_primitives, 0, "{what}: the component reaches past the wall: not hidden whole");
    assert_eq!(visible(&run.on) + occluded(&run.on), visible(&run.off), "{what}: every frustum-visible instance is drawn or occluded");
    if run.ism.path != CullPath::Gpu {
        // (Indirect draws' instances are the GPU's: the pass counts none.)
        assert_eq!(run.on.pass(MeshPass::Base).instances + occluded(&run.on), run.off.pass(MeshPass::Base).instances, "{what}");
    }
    test_support::assert_images_equal(&run.on_image, &run.off_image, &format!("{what}: occlusion on vs off"));
}

#[test]
fn instances_behind_a_wall_are_counted_occluded_and_the_image_does_not_change() {
    // 11 × 4 cubes behind it, from x = -15 to 15: the middle ones hidden.
    let transforms: Vec<Affine3A> =
        (0..44).map(|i| Affine3A::from_translation(Vec3::new((i % 11) as f32 * 3.0 - 15.0, 5.0 + (i / 11) as f32 * 3.0, 1.0))).collect();
    let run = forest_behind_a_wall(Path::Flat, &transforms);
    check(&run, "flat CPU culling");
    // The CPU path reports it in the frame's figure too.
    assert_eq!(occluded(&run.on), run.on.occluded_instances);
}

/// The forest behind the wall: the three paths agree on what is occluded
/// and what is drawn; the HISM path skips whole clusters.
/// 4 000 small cubes (16 GPU workgroups, a dozen HISM clusters) in rows
/// behind the wall, at three heights.
fn forest() -> Vec<Affine3A> {
    (0..4000)
        .map(|i| {
            let (col, row) = ((i % 50) as f32, (i / 50) as f32);
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(0.3),
                Quat::from_rotation_z(i as f32 * 0.37),
                Vec3::new(col * 0.6 - 14.7, 4.0 + row * 0.6, 1.0 + (i % 3) as f32),
            )
        })
        .collect()
}

#[test]
fn every_cull_path_occludes_the_same_instances_of_a_forest_behind_a_wall() {
    let transforms = forest();
    let flat = forest_behind_a_wall(Path::Flat, &transforms);
    check(&flat, "flat CPU culling");
    let hism = forest_behind_a_wall(Path::Hism, &transforms);
    check(&hism, "HISM");
    let gpu = forest_behind_a_wall(Path::Gpu, &transforms);
    check(&gpu, "GPU culling");

    let tree = hism.ism.tree_cull.expect("a tree cull");
    assert!(!tree.fell_back_to_flat);
    assert!(tree.nodes_occluded > 0, "whole clusters behind the wall are skipped: {tree:?}");
    assert_eq!(u64::from(tree.occluded_instances), occluded(&hism.on));
    for (run, what) in [(&hism, "HISM"), (&gpu, "GPU culling")] {
        assert_eq!(occluded(&run.on), occluded(&flat.on), "{what} occludes as many instances as the flat CPU path");
        assert_eq!(visible(&run.on), visible(&flat.on), "{what} draws as many instances as the flat CPU path");
        assert_eq!(visible(&run.off), visible(&flat.off), "{what}");
        // The frame's figure has it too, the GPU's count included (it
        // arrives when the frame retires).
        assert_eq!(run.on.occluded_instances, occluded(&run.on), "{what}: FrameStats::occluded_instances");
    }
    assert!(occluded(&flat.on) > 100 && visible(&flat.on) > 100, "{} occluded, {} drawn", occluded(&flat.on), visible(&flat.on));
    // GPU culling draws in the CPU path's order: the same image.
    test_support::assert_images_equal(&gpu.on_image, &flat.on_image, "GPU vs flat CPU culling");
}

/// With three frames in flight and the camera moving every frame, each
/// frame's GPU cull tests against its own occlusion buffer (uploaded into
/// its own slot of ring memory, not overwritten while it runs): every
/// frame's occluded and visible counts are the flat CPU path's of that
/// frame, delivered with the frame.
#[test]
fn each_frame_in_flight_culls_against_its_own_occlusion_buffer() {
    let transforms = forest();
    let per_frame = |path: Path| -> Vec<(u64, u64, u64)> {
        let mut rt = common::render_thread_in_flight(3);
        forest_scene(&mut rt, path, &transforms);
        for i in 0..6 {
            let family = view_from(i as f32 * 1.5 - 4.0);
            rt.render_frame(FrameRequest { family, read_back: false, execute: true }).unwrap();
        }
        let frames = rt.finish_frames().unwrap();
        test_support::assert_clean(&mut rt);
        frames.iter().map(|f| (f.stats.frame, occluded(&f.stats), visible(&f.stats))).collect()
    };
    let cpu = per_frame(Path::Flat);
    assert_eq!(cpu.len(), 6);
    let occluded: Vec<u64> = cpu.iter().map(|c| c.1).collect();
    assert!(occluded.windows(2).all(|w| w[0] != w[1]), "each frame occludes a different count: {cpu:?}");
    assert_eq!(per_frame(Path::Gpu), cpu, "GPU culling, frame by frame: (frame, occluded, visible)");
}
