//! `InstancedStaticMeshComponent` in an engine-core `World` with a render
//! thread (real device, validation on): one proxy and one base-pass draw per
//! component, edits reach the existing proxy without recreating it, moving a
//! parent re-culls, and `PerInstanceRandom` reaches materials per seed.

mod common;

use common::{assert_world_clean, world};
use engine_core::{ComponentId, StaticMesh, Transform, World};
use glam::{Affine3A, Quat, Vec3, Vec4};
use instancing::*;
use renderer::*;
use rhi_vulkan::Rect;

const W: u32 = 160;
const H: u32 = 120;
const CLEAR: [u8; 4] = [0, 0, 255, 255];

fn grid(n: u32, center: Vec3) -> Vec<Affine3A> {
    let side = (n as f32).sqrt().ceil() as u32;
    let half = (side - 1) as f32 * 0.5;
    (0..n)
        .map(|i| {
            let p = center + Vec3::new((i % side) as f32 - half, (i / side) as f32 - half, 0.0);
            Affine3A::from_scale_rotation_translation(Vec3::splat(0.6), Quat::from_rotation_z(i as f32 * 0.37), p)
        })
        .collect()
}

fn frame(w: &mut World) -> FrameStats {
    frame_image(w).0
}

fn main_view() -> SceneView {
    SceneView::perspective(Vec3::new(0.0, -0.01, 60.0), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap()
}

/// Pixel of a world point in the main view.
fn project(p: Vec3) -> (u32, u32) {
    let c = main_view().view_proj() * p.extend(1.0);
    (((c.x / c.w * 0.5 + 0.5) * W as f32) as u32, ((c.y / c.w * 0.5 + 0.5) * H as f32) as u32)
}

fn frame_image(w: &mut World) -> (FrameStats, rhi_vulkan::Image) {
    let view = main_view();
    let mut family = ViewFamily::new(W, H, vec![view]);
    family.clear_color = [0.0, 0.0, 1.0, 1.0];
    let rt = w.render_thread().unwrap();
    rt.render_frame(FrameRequest { family, read_back: true, execute: true }).unwrap();
    let image = rt.read_back().unwrap().expect("image");
    (rt.last_stats().unwrap().expect("stats"), image)
}

fn stats_of(w: &mut World, id: ComponentId) -> IsmStats {
    let pid = w.primitive_id(id).unwrap().expect("a proxy");
    w.render_thread()
        .unwrap()
        .with_context(move |ctx| {
            ctx.scene.proxy(pid).expect("proxy").as_any().downcast_ref::<InstancedStaticMeshSceneProxy>().expect("ISM").stats()
        })
        .unwrap()
}

#[test]
fn two_components_of_a_thousand_instances_draw_twice_and_edits_recreate_nothing() {
    let mut w = world();
    let rt = w.render_thread().unwrap();
    let red = rt.create_material(Material::colored(Vec4::new(0.9, 0.05, 0.05, 1.0))).unwrap();
    let green = rt.create_material(Material::colored(Vec4::new(0.05, 0.9, 0.05, 1.0))).unwrap();
    let cube = StaticMesh::cube();
    let small = StaticMesh::new("small cube", vec![shapes::cube(0.8)], vec!["default".into()]).unwrap();
    let mut ids = Vec::new();
    for (mesh, x, mat) in [(cube, -17.0, red), (small, 17.0, green)] {
        let mut c = InstancedStaticMeshComponent::new(mesh).unwrap();
        c.add_instances(&grid(1000, Vec3::new(x, 0.0, 0.0)), TransformSpace::Component).unwrap();
        let (_, id) = w.spawn_actor("ism", Box::new(c), Transform::IDENTITY).unwrap();
        w.set_material(id, 0, mat).unwrap();
        ids.push(id);
    }
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 2);
    let stats = frame(&mut w);
    assert_eq!(stats.pass(MeshPass::Base).draws, 2, "one draw per component: {stats:#?}");
    frame(&mut w);
    assert_eq!(stats_of(&mut w, ids[0]).snapshot().visible(), 1000);
    assert_eq!(stats_of(&mut w, ids[1]).snapshot().visible(), 1000);

    // One instance moved inside the bounds: dynamic data only.
    let moved = Affine3A::from_scale_rotation_translation(Vec3::splat(0.6), Quat::IDENTITY, Vec3::new(-17.0, 0.0, 0.0));
    w.with_component_mut(ids[0], |c: &mut InstancedStaticMeshComponent| c.update_instance_transform(5, moved, TransformSpace::Component))
        .unwrap()
        .unwrap();
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent, eof.transforms_sent), (0, 1, 0), "{eof:?}");
    let stats = frame(&mut w);
    assert_eq!(stats.proxies_created, 0);
    assert_eq!(stats.pass(MeshPass::Base).draws, 2);

    // Added past the bounds: the new bounds go as a transform update, still no new proxy.
    w.with_component_mut(ids[1], |c: &mut InstancedStaticMeshComponent| {
        c.add_instance(Affine3A::from_translation(Vec3::new(17.0, 20.0, 0.0)), TransformSpace::Component)
    })
    .unwrap()
    .unwrap();
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent, eof.transforms_sent), (0, 1, 1), "{eof:?}");
    assert_eq!(frame(&mut w).proxies_created, 0);
    frame(&mut w);
    assert_eq!(stats_of(&mut w, ids[1]).snapshot().visible(), 1001);

    assert_world_clean(&mut w);
}

/// Moving a *parent* through the `World` is enough: the end-of-frame
/// transform update reaches the proxy (`on_transform_changed`), which then
/// culls and draws at the new place — no instance data is re-sent.
#[test]
fn moving_the_parent_through_the_world_moves_and_reculls_the_instances() {
    let mut w = world();
    // Pixels are compared with the clear color exactly: no tone mapping.
    w.render_thread().unwrap().set_cvar(cvars::TONEMAPPER, "0").unwrap();
    let red = w.render_thread().unwrap().create_material(Material::colored(Vec4::new(0.9, 0.05, 0.05, 1.0))).unwrap();
    let (actor, parent) = w.spawn_actor("parent", Box::new(engine_core::SceneComponent), Transform::IDENTITY).unwrap();
    let mut c = InstancedStaticMeshComponent::new(StaticMesh::cube()).unwrap();
    c.add_instances(&grid(1000, Vec3::new(-17.0, 0.0, 0.0)), TransformSpace::Component).unwrap();
    let id = w.add_component(actor, Box::new(c), Some(parent), Transform::IDENTITY).unwrap();
    w.set_material(id, 0, red).unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    // Pixels not of the (blue) clear color, in columns x0..x1.
    let drawn = |img: &rhi_vulkan::Image, x0: u32, x1: u32| {
        (x0..x1).flat_map(|x| (0..H).map(move |y| (x, y))).filter(|&(x, y)| img.pixel(x, y) != CLEAR).count()
    };
    let (_, before) = frame_image(&mut w);
    frame(&mut w);
    assert_eq!(stats_of(&mut w, id).snapshot().visible(), 1000);
    assert!(drawn(&before, 0, W / 2) > 500 && drawn(&before, W / 2, W) == 0, "the grid starts on the left");

    // Half the grid leaves the view: the proxy must cull with the new transform.
    w.set_relative_transform(parent, Transform { translation: Vec3::new(0.0, 30.0, 0.0), ..Transform::IDENTITY }).unwrap();
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent, eof.transforms_sent), (0, 0, 1), "a transform update only: {eof:?}");
    frame(&mut w);
    frame(&mut w);
    let visible = stats_of(&mut w, id).snapshot().visible();
    assert!(visible > 100 && visible < 900, "{visible} visible after the parent moved up");

    // Across the view: the pixels follow, and every instance is visible again.
    w.set_relative_transform(parent, Transform { translation: Vec3::new(34.0, 0.0, 0.0), ..Transform::IDENTITY }).unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    let (_, after) = frame_image(&mut w);
    frame(&mut w);
    assert_eq!(stats_of(&mut w, id).snapshot().visible(), 1000);
    assert!(drawn(&after, W / 2, W) > 500 && drawn(&after, 0, W / 2) == 0, "the grid moved to the right");
    assert_world_clean(&mut w);
}

#[test]
fn edits_record_the_right_dirty_flags_without_a_renderer() {
    use engine_core::{DirtyFlags, PrimitiveComponent};
    let mut c = InstancedStaticMeshComponent::new(StaticMesh::cube()).unwrap();
    c.add_instances(&grid(4, Vec3::ZERO), TransformSpace::Component).unwrap();
    assert_eq!(c.take_dirty(), DirtyFlags::DYNAMIC_DATA | DirtyFlags::TRANSFORM);
    c.update_instance_transform(0, grid(4, Vec3::ZERO)[3], TransformSpace::Component).unwrap();
    assert_eq!(c.take_dirty(), DirtyFlags::DYNAMIC_DATA);
    c.set_num_custom_data_floats(1).unwrap();
    c.take_dirty();
    c.set_custom_data_value(1, 0, 2.0).unwrap();
    assert_eq!(c.take_dirty(), DirtyFlags::DYNAMIC_DATA);
    assert!(c.set_custom_data_value(9, 0, 2.0).is_err());
    assert_eq!(c.take_dirty(), DirtyFlags::NONE);
    c.set_custom_data(2, &[4.0]).unwrap();
    assert_eq!(c.take_dirty(), DirtyFlags::DYNAMIC_DATA);
    assert_eq!(c.store().instance_custom_data(2).unwrap(), &[4.0]);
    assert!(c.set_custom_data(2, &[1.0, 2.0]).is_err(), "one float per instance");
    assert!(c.set_custom_data(9, &[1.0]).is_err());
    assert_eq!(c.take_dirty(), DirtyFlags::NONE);
    assert_eq!(c.store().instance_custom_data(2).unwrap(), &[4.0], "a rejected call changes nothing");
    let far = Affine3A::from_translation(Vec3::new(50.0, 0.0, 0.0));
    let added = c.add_instance_with_custom_data(far, TransformSpace::Component, &[7.0]).unwrap();
    assert_eq!(c.take_dirty(), DirtyFlags::DYNAMIC_DATA | DirtyFlags::TRANSFORM, "outside the bounds");
    assert_eq!(c.store().instance_custom_data(4).unwrap(), &[7.0]);
    assert!(c.add_instance_with_custom_data(far, TransformSpace::Component, &[]).is_err());
    assert_eq!((c.instance_count(), c.take_dirty()), (5, DirtyFlags::NONE));
    assert!(c.remove_instances_by_id(&[added, added]).is_err(), "an id twice");
    assert_eq!((c.instance_count(), c.take_dirty()), (5, DirtyFlags::NONE));
    c.remove_instances_by_id(&[added]).unwrap();
    assert_eq!(c.instance_count(), 4);
    assert!(c.take_dirty().dynamic_data);
    c.set_cull_distances(10.0, 20.0).unwrap();
    assert_eq!(c.take_dirty(), DirtyFlags::DYNAMIC_DATA);
    c.set_random_seed(3);
    assert_eq!(c.take_dirty(), DirtyFlags::DYNAMIC_DATA);
    c.set_random_seed(3);
    assert_eq!(c.take_dirty(), DirtyFlags::NONE, "the same seed changes nothing");
    c.set_mesh(StaticMesh::sphere(8)).unwrap();
    assert!(c.take_dirty().render_state);
    c.remove_instance(0).unwrap();
    assert_eq!(c.instance_count(), 3);
    assert!(c.take_dirty().dynamic_data);
    let world_t = Affine3A::from_translation(Vec3::X * 3.0);
    let got = c.get_instance_transform(0, TransformSpace::World(world_t)).unwrap();
    assert!(got.translation.x > 2.0);
    c.clear_instances();
    assert_eq!(c.instance_count(), 0);
    assert!(c.take_dirty().dynamic_data);

    // In a world without a renderer, the helpers still work.
    let mut w = World::new(None);
    let (_, id) =
        w.spawn_actor("ism", Box::new(InstancedStaticMeshComponent::new(StaticMesh::cube()).unwrap()), Transform::IDENTITY).unwrap();
    w.set_relative_transform(id, Transform { translation: Vec3::Y, ..Transform::IDENTITY }).unwrap();
    assert_eq!(w.world_transform(id).unwrap().w_axis.truncate(), Vec3::Y);
    assert_eq!(w.send_all_end_of_frame_updates().unwrap().transforms_sent, 0, "no renderer, nothing sent");
}

/// Unlit: the instance's `PerInstanceRandom` as a gray level.
const RANDOM_GRAY_WGSL: &str = "
fn material_main(in: MaterialInput) -> MaterialOutput {
    var out = default_material(in);
    out.base_color = vec3<f32>(0.0);
    out.specular = 0.0;
    out.emissive = vec3<f32>(in.custom.w);
    return out;
}
";

/// The per-instance random value reaches the material: each instance's gray
/// level orders like its random value, a new `instancing_random_seed`
/// changes the picture and the old seed brings back the same pixels.
#[test]
fn per_instance_random_colors_instances_deterministically_per_seed() {
    let mut w = world();
    let material = w
        .render_thread()
        .unwrap()
        .create_material(Material { shader: MaterialShader::new("ism_random_gray.wgsl", RANDOM_GRAY_WGSL), ..Material::default() })
        .unwrap();
    let centers: Vec<Vec3> = (0..8).map(|i| Vec3::new(-28.0 + i as f32 * 8.0, 0.0, 0.0)).collect();
    let mut c = InstancedStaticMeshComponent::new(StaticMesh::cube()).unwrap();
    c.set_random_seed(7);
    let placed: Vec<Affine3A> =
        centers.iter().map(|&p| Affine3A::from_scale_rotation_translation(Vec3::splat(3.0), Quat::IDENTITY, p)).collect();
    c.add_instances(&placed, TransformSpace::Component).unwrap();
    let (_, id) = w.spawn_actor("ism", Box::new(c), Transform::IDENTITY).unwrap();
    w.set_material(id, 0, material).unwrap();
    w.send_all_end_of_frame_updates().unwrap();

    let randoms = |w: &World| -> Vec<f32> {
        let c: &InstancedStaticMeshComponent = w.component(id).unwrap();
        (0..8).map(|i| c.store().instance_random(i).unwrap()).collect()
    };
    // The top face (z = +3) of each cube, seen from above.
    let grays = |img: &rhi_vulkan::Image| -> Vec<[u8; 4]> {
        centers.iter().map(|&p| project(p + Vec3::Z * 3.0)).map(|(x, y)| img.pixel(x, y)).collect()
    };
    let check = |r: &[f32], g: &[[u8; 4]]| {
        for p in g {
            assert!(p[0] == p[1] && p[1] == p[2] && p[3] == 255, "gray, not the clear color: {g:?}");
        }
        for i in 0..8 {
            for j in 0..8 {
                if r[i] + 0.02 < r[j] {
                    assert!(g[i][0] < g[j][0], "instance {i} (random {}) darker than {j} (random {}): {g:?}", r[i], r[j]);
                }
            }
        }
        let mut distinct: Vec<u8> = g.iter().map(|p| p[0]).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() >= 6, "instances differ: {g:?} for randoms {r:?}");
    };
    let (_, image) = frame_image(&mut w);
    let (r7, g7) = (randoms(&w), grays(&image));
    check(&r7, &g7);

    w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_random_seed(8)).unwrap();
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent), (0, 1), "a new seed re-sends the instances in place: {eof:?}");
    let (_, image) = frame_image(&mut w);
    let (r8, g8) = (randoms(&w), grays(&image));
    check(&r8, &g8);
    assert!(r7.iter().zip(&r8).filter(|(a, b)| (*a - *b).abs() > 0.02).count() >= 6, "another seed, other randoms: {r7:?} {r8:?}");
    assert!(g7.iter().zip(&g8).filter(|(a, b)| a != b).count() >= 6, "another seed, another picture");

    w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_random_seed(7)).unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    let (_, image) = frame_image(&mut w);
    assert_eq!(randoms(&w), r7);
    assert_eq!(grays(&image), g7, "the same seed, the same pixels");
    assert_world_clean(&mut w);
}
