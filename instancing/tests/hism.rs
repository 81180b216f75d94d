//! HISM mode of `InstancedStaticMeshComponent` in an engine-core `World` on
//! the real device (validation on): it draws what the GPU-culled ISM draws,
//! its cluster-tree culls (game side and proxy) agree with GPU culling for
//! the same view, and edits rebuild the tree in the background while culling
//! stays exact.

mod common;

use std::sync::Arc;

use common::{assert_images_equal, assert_world_clean, world};
use engine_core::{ComponentId, StaticMesh, Transform, World};
use glam::{Affine3A, Quat, Vec3, Vec4};
use instancing::*;
use renderer::*;
use rhi_vulkan::{Image, Rect};

const W: u32 = 160;
const H: u32 = 120;
const CLEAR: [u8; 4] = [0, 0, 255, 255];

/// A cube with two LODs: LOD 1 below screen size 0.02.
fn two_lod_cube() -> Arc<StaticMesh> {
    let mut lod0 = shapes::cube(1.0);
    lod0.screen_size = 0.02;
    StaticMesh::new("two-lod cube", vec![lod0, shapes::cube(1.0)], vec!["default".into()]).unwrap()
}

/// `n` instances on a grid in the XY plane, far enough to need both LODs.
fn grid(n: u32) -> Vec<Affine3A> {
    let side = (n as f32).sqrt().ceil() as u32;
    let half = (side - 1) as f32 * 1.5;
    (0..n)
        .map(|i| {
            let p = Vec3::new((i % side) as f32 * 3.0 - half, (i / side) as f32 * 3.0 - half + 200.0, 0.0);
            Affine3A::from_rotation_translation(Quat::from_rotation_z(i as f32 * 0.37), p)
        })
        .collect()
}

fn view() -> SceneView {
    SceneView::perspective(Vec3::new(0.0, 0.0, 6.0), Vec3::new(0.0, 60.0, 0.0), Vec3::Z, 1.0, 0.1, 2000.0, Rect::from_size(W, H)).unwrap()
}

fn frame(w: &mut World) -> (FrameStats, Image) {
    let mut family = ViewFamily::new(W, H, vec![view()]);
    family.clear_color = [0.0, 0.0, 1.0, 1.0];
    let rt = w.render_thread().unwrap();
    rt.render_frame(FrameRequest { family, read_back: true, execute: true }).unwrap();
    let image = rt.read_back().unwrap().expect("image");
    (rt.last_stats().unwrap().expect("stats"), image)
}

fn with_proxy<R: Send + 'static>(
    w: &mut World,
    id: ComponentId,
    f: impl FnOnce(&InstancedStaticMeshSceneProxy, &rhi_vulkan::Device) -> R + Send + 'static,
) -> R {
    let pid = w.primitive_id(id).unwrap().expect("a proxy");
    w.render_thread()
        .unwrap()
        .with_context(move |ctx| {
            f(ctx.scene.proxy(pid).expect("proxy").as_any().downcast_ref::<InstancedStaticMeshSceneProxy>().expect("ISM"), &ctx.device)
        })
        .unwrap()
}

fn stats(w: &mut World, id: ComponentId) -> IsmStatsSnapshot {
    with_proxy(w, id, |p, _| p.stats().snapshot())
}

fn placement() -> Transform {
    Transform { translation: Vec3::new(1.0, 2.0, 0.5), rotation: Quat::from_rotation_z(0.1), ..Transform::IDENTITY }
}

/// The component's game-side cull as sorted stable-id slots.
fn game_side_ids(w: &World, id: ComponentId) -> (Vec<u32>, Vec<u32>, TreeCullStats) {
    let c: &InstancedStaticMeshComponent = w.component(id).unwrap();
    let c2w = Affine3A::from_mat4(w.world_transform(id).unwrap());
    let (out, tree) = c.cull(&c2w, &cull_view_for(&view()).unwrap()).unwrap();
    let mut ids: Vec<u32> = out.instance_buffer().iter().map(|&i| c.store().ids()[i as usize].index()).collect();
    ids.sort_unstable();
    (ids, out.counts(), tree)
}

#[test]
fn hism_draws_like_the_gpu_culled_ism_and_its_cluster_cull_agrees_with_gpu_culling() {
    let mut w = world();
    let white = w.render_thread().unwrap().create_material(Material::colored(Vec4::ONE)).unwrap();
    let instances = grid(20_000);
    let mut ids = Vec::new();
    for hierarchical in [true, false] {
        let mesh = two_lod_cube();
        let mut c =
            if hierarchical { InstancedStaticMeshComponent::new_hierarchical(mesh) } else { InstancedStaticMeshComponent::new(mesh) }
                .unwrap();
        c.add_instances(&instances, TransformSpace::Component).unwrap();
        let (_, id) = w.spawn_actor("ism", Box::new(c), placement()).unwrap();
        w.set_material(id, 0, white).unwrap();
        ids.push(id);
    }
    let (hism, ism) = (ids[0], ids[1]);
    // The first tick starts the background build; wait for it here.
    w.tick(0.0);
    w.with_component_mut(hism, |c: &mut InstancedStaticMeshComponent| c.wait_for_cluster_tree()).unwrap().unwrap();
    let tree = w.component::<InstancedStaticMeshComponent>(hism).unwrap().cluster_tree().expect("a tree").clone();
    let lod0_vertices = two_lod_cube().render_data().lods()[0].vertices.len() as u32;
    assert_eq!(
        tree.leaf_size(),
        ClusterTreeSettings::default().instances_per_leaf(lod0_vertices),
        "leaf size from the mesh's vertex count"
    );
    assert!(tree.leaf_size() > 1 && tree.leaf_size() < 20_000);
    w.send_all_end_of_frame_updates().unwrap();
    let (frame_stats, _) = frame(&mut w);
    assert_eq!(frame_stats.pass(MeshPass::Base).draws, 4, "one draw per LOD and component");
    frame(&mut w);

    // The GPU cull of the plain ISM, the proxy's cluster cull and the game
    // side's cluster cull: the same instances, LOD by LOD.
    let mut gpu_ids: Vec<u32> = with_proxy(&mut w, ism, |p, d| p.read_gpu_visible(d, 0).unwrap()).into_iter().map(|(id, _)| id).collect();
    gpu_ids.sort_unstable();
    let (gpu, tree_side) = (stats(&mut w, ism), stats(&mut w, hism));
    assert_eq!(gpu.path, CullPath::Gpu);
    assert_eq!(tree_side.path, CullPath::CpuTree);
    assert_eq!(tree_side.tree_generation, Some(tree.generation()));
    let tc = tree_side.tree_cull.expect("tree stats");
    assert!(!tc.fell_back_to_flat && tc.stale_instances == 0, "{tc:?}");
    assert!(tc.leaves_visible < tree.node_count() as u32 / 2, "whole clusters culled: {tc:?} of {} nodes", tree.node_count());
    assert_eq!(tree_side.visible_per_lod, gpu.visible_per_lod, "proxy cluster cull = GPU cull, per LOD");
    assert!(gpu.visible_per_lod.iter().all(|&c| c > 100), "both LODs in view: {:?}", gpu.visible_per_lod);
    assert!(gpu.visible() < 20_000, "part of the grid is culled");
    let (game_ids, game_counts, game_tree) = game_side_ids(&w, hism);
    assert!(!game_tree.fell_back_to_flat);
    assert_eq!(game_ids, gpu_ids, "game-side cluster cull = GPU cull, instance by instance");
    assert_eq!(game_counts.iter().map(|&c| u64::from(c)).collect::<Vec<_>>(), gpu.visible_per_lod);

    // Drawn alone, each gives the same picture.
    w.set_visibility(ism, false).unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    let (_, hism_image) = frame(&mut w);
    w.set_visibility(ism, true).unwrap();
    w.set_visibility(hism, false).unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    let (_, ism_image) = frame(&mut w);
    let drawn = (0..W).flat_map(|x| (0..H).map(move |y| (x, y))).filter(|&(x, y)| hism_image.pixel(x, y) != CLEAR).count();
    assert!(drawn > 1000, "the HISM draws ({drawn} px)");
    assert_images_equal(&hism_image, &ism_image, "HISM vs GPU-culled ISM");
    assert_world_clean(&mut w);
}

#[test]
fn hism_edits_rebuild_the_tree_in_the_background_and_culling_stays_exact_meanwhile() {
    let mut w = world();
    let white = w.render_thread().unwrap().create_material(Material::colored(Vec4::ONE)).unwrap();
    let mut c = InstancedStaticMeshComponent::new_hierarchical(two_lod_cube()).unwrap();
    c.add_instances(&grid(10_000), TransformSpace::Component).unwrap();
    let (_, id) = w.spawn_actor("hism", Box::new(c), placement()).unwrap();
    w.set_material(id, 0, white).unwrap();
    w.tick(0.0);
    w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.wait_for_cluster_tree()).unwrap().unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    frame(&mut w);
    let first = stats(&mut w, id);
    let g0 = first.tree_generation.expect("the proxy has the tree");
    assert_eq!(first.tree_cull.unwrap().stale_instances, 0);

    // Edits: move instances from out of view into view and back, remove some
    // (swap-remove re-indexes others), add some.
    let reference = |w: &World| {
        let c: &InstancedStaticMeshComponent = w.component(id).unwrap();
        let mesh = instanced_mesh_for(c.mesh().render_data()).unwrap();
        let c2w = Affine3A::from_mat4(w.world_transform(id).unwrap());
        cull_instances(c.store(), &InstanceCuller::new(&mesh, &c2w, &cull_view_for(&view()).unwrap(), c.cull_distances()).unwrap()).counts()
    };
    w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| {
        for i in 0..200u32 {
            let t = Affine3A::from_translation(Vec3::new(i as f32 * 0.5 - 50.0, 40.0 + i as f32, 0.0));
            c.update_instance_transform(i * 37, t, TransformSpace::Component).unwrap();
        }
        for i in 0..300u32 {
            c.remove_instance(i * 29).unwrap();
        }
        c.add_instances(
            &(0..100).map(|i| Affine3A::from_translation(Vec3::new(-20.0 + i as f32 * 0.4, 30.0, 1.0))).collect::<Vec<_>>(),
            TransformSpace::Component,
        )
        .unwrap();
        c.update_instance_transform(5, Affine3A::from_translation(Vec3::new(0.0, -500.0, 0.0)), TransformSpace::Component).unwrap();
    })
    .unwrap();
    // This tick requests the rebuild; the proxy keeps the old tree until a
    // later tick (or a wait) installs the new one.
    w.tick(0.0);
    assert!(w.component::<InstancedStaticMeshComponent>(id).unwrap().is_building_tree(), "edits start a background rebuild");
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 0, "edits recreate nothing");
    frame(&mut w);
    let meanwhile = stats(&mut w, id);
    assert_eq!(meanwhile.tree_generation, Some(g0), "still the old tree");
    let tc = meanwhile.tree_cull.unwrap();
    assert!(tc.stale_instances >= 300 && !tc.fell_back_to_flat, "edited instances culled one by one: {tc:?}");
    let expected: Vec<u64> = reference(&w).iter().map(|&c| u64::from(c)).collect();
    assert_eq!(meanwhile.visible_per_lod, expected, "exact with the stale tree");
    assert_eq!(meanwhile.instances, 9_800);
    let (stale_game_ids, _, game_tree) = game_side_ids(&w, id);
    assert!(game_tree.stale_instances > 0);

    // The rebuild lands: a newer tree, nothing stale, the same result.
    w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.wait_for_cluster_tree()).unwrap().unwrap();
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent), (0, 1), "{eof:?}");
    frame(&mut w);
    let after = stats(&mut w, id);
    assert!(after.tree_generation.unwrap() > g0);
    assert_eq!(after.tree_cull.unwrap().stale_instances, 0);
    assert_eq!(after.visible_per_lod, expected);
    let (fresh_game_ids, _, fresh_tree) = game_side_ids(&w, id);
    assert_eq!(fresh_tree.stale_instances, 0);
    assert_eq!(fresh_game_ids, stale_game_ids, "game side: the same instances before and after the rebuild");
    // Nothing changed since: further ticks start no build.
    w.tick(0.0);
    assert!(!w.component::<InstancedStaticMeshComponent>(id).unwrap().is_building_tree());
    assert_world_clean(&mut w);
}
