//! Culling a large batch added in any order. Culling tests the box around
//! each chunk of 4,096 slots first and skips the chunk when its box is out
//! of view; a batch of more than one chunk takes its slots in space order,
//! so that holds for a scene spawned in an order with no locality (here a
//! shuffled grid, where each chunk in queue order would be a cloud across
//! the whole scene and no chunk could be skipped, as it is with
//! `r.Scene.SpaceOrderAdds=0`).

mod common;

use common::*;
use glam::{Mat4, Quat, Vec3};
use renderer::*;

const SIDE: usize = 256;
const CUBES: usize = SIDE * SIDE;
const CHUNK: u64 = 4096;

/// The grid's cubes (as `cube_grid` places them: spacing 1, size 0.6),
/// in row order or shuffled.
fn grid(material: MaterialId, shuffled: bool) -> Vec<(Box<dyn PrimitiveSceneProxy>, Mat4)> {
    let mesh = cube_mesh();
    let mut order: Vec<usize> = (0..CUBES).collect();
    if shuffled {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        for i in (1..CUBES).rev() {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            order.swap(i, (s >> 33) as usize % (i + 1));
        }
    }
    let offset = (SIDE as f32 - 1.0) / 2.0;
    order
        .into_iter()
        .map(|i| {
            let at = Vec3::new((i % SIDE) as f32 - offset, (i / SIDE) as f32 - offset, 0.0);
            let m = Mat4::from_scale_rotation_translation(Vec3::splat(0.6), Quat::IDENTITY, at);
            (Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![material])) as Box<dyn PrimitiveSceneProxy>, m)
        })
        .collect()
}

fn render(shuffled: bool, space_order: bool) -> (FrameStats, rhi_vulkan::Image) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::SPACE_ORDER_ADDS, if space_order { "1" } else { "0" }).unwrap();
    sun(&mut rt, false);
    let material = rt.create_material(colors(1).remove(0)).unwrap();
    rt.add_primitives(grid(material, shuffled)).unwrap();
    // Looking down at the middle of the grid: about 40 x 27 of its cubes.
    let out = frame(&mut rt, &family(vec![top_view(20.0)]));
    assert_clean(&mut rt);
    out
}

#[test]
fn a_shuffled_batch_is_culled_chunk_by_chunk_as_a_grid_added_in_order_is() {
    let (shuffled, shuffled_img) = render(true, true);
    assert_eq!(shuffled.primitives, CUBES as u64);
    assert!((500..5_000).contains(&shuffled.visible_primitives), "{} visible", shuffled.visible_primitives);
    // The view meets the boxes of the few chunks round the grid's middle;
    // in queue order every chunk's box would be the whole grid (all 65,536
    // tested).
    assert!(
        shuffled.primitives_tested >= shuffled.visible_primitives && shuffled.primitives_tested <= 6 * CHUNK,
        "{} of {CUBES} tested one by one for {} visible",
        shuffled.primitives_tested,
        shuffled.visible_primitives
    );
    // The same cubes added row by row: the same cubes drawn.
    let (ordered, ordered_img) = render(false, true);
    assert_eq!(ordered.visible_primitives, shuffled.visible_primitives);
    assert!(ordered.primitives_tested <= 6 * CHUNK, "{} tested", ordered.primitives_tested);
    assert_images_equal(&shuffled_img, &ordered_img, "shuffled vs row order");
    // With `r.Scene.SpaceOrderAdds=0` the shuffled batch keeps its order:
    // every chunk is tested, for the same cubes drawn.
    let (queue_order, queue_img) = render(true, false);
    assert_eq!(queue_order.primitives_tested, CUBES as u64);
    assert_eq!(queue_order.visible_primitives, shuffled.visible_primitives);
    assert_images_equal(&queue_img, &ordered_img, "shuffled in queue order vs row order");
    let lit = (0..H).flat_map(|y| (0..W).map(move |x| (x, y))).filter(|&(x, y)| luminance(shuffled_img.pixel(x, y)) > 60).count();
    assert!(lit > (W * H / 5) as usize, "lit cubes cover the view: {lit} pixels");
}

/// Where the scene's bytes go (`Scene::memory`, issue 40's breakdown by
/// owner): each owner holds at least what its structures need per
/// primitive, and the whole grows with the primitives.
#[test]
fn the_scenes_memory_by_owner_grows_with_its_primitives() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let m = rt.create_material(Material::colored(glam::Vec4::ONE)).unwrap();
    let fam = family(vec![top_view(40.0)]);
    let measure = |rt: &mut RenderThread, n: usize| {
        cube_grid(rt, n, &[m], 1.0);
        frame(rt, &fam);
        rt.with_context(|ctx| ctx.scene.memory()).unwrap()
    };
    let small = measure(&mut rt, 1000);
    // A sphere, a box, flags and a transform; a GPU-scene record on each side; a map entry.
    assert!(small.culling >= 1000 * (16 + 12 + 4 + 64), "{small:?}");
    assert!(small.gpu_scene_cpu >= 1000 * 176 && small.gpu_scene_buffer >= 1000 * 176, "{small:?}");
    assert!(small.ids >= 1000 * 12 && small.proxies >= 1000 * 16 && small.cached_commands >= 1000 * 8, "{small:?}");
    assert!(small.state_buckets > 0 && small.primitive_infos > 0);
    assert_eq!(small.total(), small.owners().iter().map(|o| o.1).sum::<u64>());
    let large = measure(&mut rt, 9000);
    assert!(large.total() >= 5 * small.total(), "10,000 primitives hold more than 5x 1,000's: {small:?} -> {large:?}");
    assert_clean(&mut rt);
}
