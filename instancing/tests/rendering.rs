//! The rendering half on the real device (lavapipe here), validation on,
//! driven as a user drives it: `InstancedStaticMeshComponent`s in an
//! engine-core `World`, whose end-of-frame update creates the proxies and
//! sends the edits. Draws per mesh, GPU culling against the CPU reference
//! and the HISM tree, cull distance and fade, per-instance LODs, in-place
//! edits, custom data.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{assert_images_equal, assert_world_clean, sun, world};
use engine_core::{ComponentId, EndOfFrameStats, StaticMesh, Transform, World};
use glam::{Affine3A, Vec3, Vec4};
use instancing::*;
use renderer::*;
use rhi_vulkan::{Image, Rect};

const W: u32 = 160;
const H: u32 = 120;
const CLEAR: [u8; 4] = [0, 0, 0, 255];

fn family(view: SceneView) -> ViewFamily {
    let mut f = ViewFamily::new(W, H, vec![view]);
    f.clear_color = [0.0, 0.0, 0.0, 1.0];
    f
}

fn rt(world: &mut World) -> &mut RenderThread {
    world.render_thread().expect("a world with a render thread")
}

fn frame(world: &mut World, family: &ViewFamily) -> (FrameStats, Image) {
    let rt = rt(world);
    rt.render_frame(FrameRequest { family: family.clone(), read_back: true, execute: true }).unwrap();
    let image = rt.read_back().unwrap().expect("image");
    (rt.last_stats().unwrap().expect("stats"), image)
}

fn cube_mesh(lod1_below: Option<f32>) -> Arc<StaticMesh> {
    let lods = match lod1_below {
        None => vec![shapes::cube(1.0)],
        Some(s) => {
            let mut lod0 = shapes::cube(1.0);
            lod0.screen_size = s;
            vec![lod0, shapes::cube(1.0)]
        }
    };
    StaticMesh::new("cube", lods, vec!["default".into()]).unwrap()
}

/// A component of `mesh` holding `transforms` (component space).
fn ism(mesh: Arc<StaticMesh>, transforms: &[Affine3A]) -> InstancedStaticMeshComponent {
    let mut c = InstancedStaticMeshComponent::new(mesh).unwrap();
    c.add_instances(transforms, TransformSpace::Component).unwrap();
    c
}

/// Spawns `component` at `at` drawn with `material`, and sends the
/// end-of-frame update that creates its proxy.
fn spawn(world: &mut World, component: InstancedStaticMeshComponent, material: MaterialId, at: Transform) -> ComponentId {
    let (_, id) = world.spawn_actor("ism", Box::new(component), at).unwrap();
    world.set_material(id, 0, material).unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 1);
    id
}

/// Runs `f` on the component (a call that must succeed), then the
/// end-of-frame update; returns what the update sent.
fn edit<T>(
    world: &mut World,
    id: ComponentId,
    f: impl FnOnce(&mut InstancedStaticMeshComponent) -> instancing::Result<T>,
) -> EndOfFrameStats {
    world.with_component_mut(id, f).unwrap().unwrap();
    world.send_all_end_of_frame_updates().unwrap()
}

/// What an end-of-frame update sent: (proxies created, dynamic data
/// snapshots, transforms with bounds).
fn sent(eof: EndOfFrameStats) -> (usize, usize, usize) {
    (eof.proxies_created, eof.dynamic_data_sent, eof.transforms_sent)
}

fn component(world: &World, id: ComponentId) -> &InstancedStaticMeshComponent {
    world.component::<InstancedStaticMeshComponent>(id).unwrap()
}

fn primitive(world: &World, id: ComponentId) -> PrimitiveId {
    world.primitive_id(id).unwrap().expect("a proxy")
}

/// `n` instances on a square grid in the XY plane centred on `center`.
fn grid(n: u32, spacing: f32, scale: f32, center: Vec3) -> Vec<Affine3A> {
    let side = (n as f32).sqrt().ceil() as u32;
    let half = (side - 1) as f32 * spacing * 0.5;
    (0..n)
        .map(|i| {
            let p = center + Vec3::new((i % side) as f32 * spacing - half, (i / side) as f32 * spacing - half, 0.0);
            Affine3A::from_scale_rotation_translation(Vec3::splat(scale), glam::Quat::from_rotation_z(i as f32 * 0.37), p)
        })
        .collect()
}

/// Pixel of a world point in a view of the `W`x`H` target.
fn project(view: &SceneView, p: Vec3) -> (u32, u32) {
    let c = view.view_proj() * p.extend(1.0);
    let (x, y) = (c.x / c.w, c.y / c.w);
    (((x * 0.5 + 0.5) * W as f32) as u32, ((y * 0.5 + 0.5) * H as f32) as u32)
}

/// Runs `f` on the component's proxy on the render thread.
fn with_proxy<R: Send + 'static>(
    world: &mut World,
    id: ComponentId,
    f: impl FnOnce(&InstancedStaticMeshSceneProxy, &rhi_vulkan::Device) -> R + Send + 'static,
) -> R {
    let pid = primitive(world, id);
    rt(world)
        .with_context(move |ctx| {
            let proxy =
                ctx.scene.proxy(pid).expect("proxy").as_any().downcast_ref::<InstancedStaticMeshSceneProxy>().expect("an ISM proxy");
            f(proxy, &ctx.device)
        })
        .unwrap()
}

/// The statistics handle of the component's proxy.
fn stats_of(world: &mut World, id: ComponentId) -> IsmStats {
    with_proxy(world, id, |p, _| p.stats())
}

#[test]
fn two_meshes_of_a_thousand_instances_take_two_base_draws_and_both_show() {
    let mut w = world();
    sun(&mut w, true);
    let red = rt(&mut w).create_material(Material::colored(Vec4::new(0.9, 0.05, 0.05, 1.0))).unwrap();
    let green = rt(&mut w).create_material(Material::colored(Vec4::new(0.05, 0.9, 0.05, 1.0))).unwrap();
    let small = StaticMesh::new("small cube", vec![shapes::cube(0.8)], vec!["default".into()]).unwrap();
    let a = ism(cube_mesh(None), &grid(1000, 1.0, 0.6, Vec3::new(-17.0, 0.0, 0.0)));
    let b = ism(small, &grid(1000, 1.0, 0.6, Vec3::new(17.0, 0.0, 0.0)));
    let sa = spawn(&mut w, a, red, Transform::IDENTITY);
    let sb = spawn(&mut w, b, green, Transform::IDENTITY);
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 60.0), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let (stats, image) = frame(&mut w, &family(view.clone()));
    assert_eq!(stats.pass(MeshPass::Base).draws, 2, "one draw per mesh: {stats:#?}");
    assert_eq!(stats.proxies_created, 2);
    // Count red- and green-dominated pixels in each half.
    let count = |x0: u32, x1: u32, c: usize| {
        (x0..x1)
            .flat_map(|x| (0..H).map(move |y| (x, y)))
            .filter(|&(x, y)| {
                let p = image.pixel(x, y);
                p[c] > 40 && u32::from(p[c]) > 2 * u32::from(p[1 - c])
            })
            .count()
    };
    let (red_left, green_right) = (count(0, W / 2, 0), count(W / 2, W, 1));
    assert!(red_left > 500 && green_right > 500, "mesh A red on the left ({red_left} px), mesh B green on the right ({green_right} px)");
    assert_eq!(count(0, W / 2, 1) + count(W / 2, W, 0), 0, "each mesh on its own side");
    // Next frame: the GPU counts of this one come back into the stats.
    frame(&mut w, &family(view));
    assert_eq!(stats_of(&mut w, sa).snapshot().path, CullPath::Gpu);
    assert_eq!(stats_of(&mut w, sa).snapshot().visible(), 1000);
    assert_eq!(stats_of(&mut w, sb).snapshot().visible(), 1000);
    assert_world_clean(&mut w);
}

#[test]
fn instances_behind_the_camera_or_past_the_end_distance_are_not_drawn_and_fade_between() {
    let mut w = world();
    let white = rt(&mut w).create_material(Material::colored(Vec4::ONE)).unwrap();
    let mesh = cube_mesh(None);
    let place = |p: Vec3, s: f32| Affine3A::from_scale_rotation_translation(Vec3::splat(s), glam::Quat::IDENTITY, p);
    let near = Vec3::new(-3.0, 20.0, 0.0);
    let far = Vec3::new(15.0, 60.0, 0.0);
    let fading = Vec3::new(8.0, 45.0, 0.0);
    let behind = Vec3::new(0.0, -20.0, 0.0);
    let mut c = ism(mesh.clone(), &[place(near, 2.0), place(far, 4.0), place(fading, 3.0), place(behind, 2.0)]);
    c.set_cull_distances(40.0, 50.0).unwrap();
    let distances = c.cull_distances();
    let id = spawn(&mut w, c, white, Transform::IDENTITY);
    rt(&mut w)
        .add_light(Light::Directional(DirectionalLight {
            direction: Vec3::new(0.0, 0.5, -1.0),
            color: Vec3::ONE,
            intensity: 2.0,
            cast_shadows: false,
            ..Default::default()
        }))
        .unwrap();
    let view = SceneView::perspective(Vec3::new(0.0, 0.0, 1.0), Vec3::new(0.0, 10.0, 0.0), Vec3::Z, 1.2, 0.1, 500.0, Rect::from_size(W, H))
        .unwrap();
    let (_, image) = frame(&mut w, &family(view.clone()));
    let (pn, pf) = (project(&view, near), project(&view, far));
    assert_ne!(image.pixel(pn.0, pn.1), CLEAR, "the near instance is drawn");
    assert_eq!(image.pixel(pf.0, pf.1), CLEAR, "the instance past the end distance is not");

    let (counts, visible) = with_proxy(&mut w, id, |p, d| (p.read_gpu_lod_counts(d).unwrap(), p.read_gpu_visible(d, 0).unwrap()));
    assert_eq!(counts[0], vec![2], "near and fading only");
    let store = component(&w, id).store().clone();
    let cpu = cull_instances(
        &store,
        &InstanceCuller::new(
            &instanced_mesh_for(mesh.render_data()).unwrap(),
            &Affine3A::IDENTITY,
            &cull_view_for(&view).unwrap(),
            distances,
        )
        .unwrap(),
    );
    let expected: BTreeMap<u32, f32> =
        cpu.lods[0].instances.iter().zip(&cpu.lods[0].fades).map(|(&i, &f)| (store.ids()[i as usize].index(), f)).collect();
    let got: BTreeMap<u32, f32> = visible.into_iter().collect();
    assert_eq!(expected.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>());
    for (k, f) in &expected {
        assert!((got[k] - f).abs() < 1e-4, "fade of {k}: GPU {} CPU {f}", got[k]);
    }
    let fade = got[&store.ids()[2].index()];
    assert!(fade > 0.0 && fade < 1.0, "between start and end the instance fades: {fade}");
    assert_eq!(got[&store.ids()[0].index()], 1.0);

    // The CPU path draws the same.
    rt(&mut w).set_cvar(CVAR_GPU_CULLING, "0").unwrap();
    let (_, cpu_image) = frame(&mut w, &family(view.clone()));
    let s = stats_of(&mut w, id).snapshot();
    assert_eq!(s.path, CullPath::Cpu);
    assert_eq!(s.visible(), 2);
    assert_eq!(cpu_image.pixel(pf.0, pf.1), CLEAR);
    assert_ne!(cpu_image.pixel(pn.0, pn.1), CLEAR);

    // `r.ViewDistanceScale` scales the cull distances on both paths: at 2x
    // (80..100) the far instance (about 62 away) is drawn, at 0.5x (20..25)
    // only the near one (about 20 away) is left.
    for gpu in ["0", "1"] {
        rt(&mut w).set_cvar(CVAR_GPU_CULLING, gpu).unwrap();
        for (scale, visible, far_drawn) in [("2", 3, true), ("0.5", 1, false), ("1", 2, false)] {
            rt(&mut w).set_cvar(renderer::cvars::VIEW_DISTANCE_SCALE, scale).unwrap();
            let (_, image) = frame(&mut w, &family(view.clone()));
            assert_eq!(stats_of(&mut w, id).snapshot().visible(), visible, "scale {scale}, GPU culling {gpu}");
            assert_eq!(image.pixel(pf.0, pf.1) != CLEAR, far_drawn, "scale {scale}, GPU culling {gpu}: the far instance");
        }
    }
    assert!(rt(&mut w).set_cvar(renderer::cvars::VIEW_DISTANCE_SCALE, "0").is_err(), "a scale of 0 is refused");
    assert_world_clean(&mut w);
}

#[test]
fn gpu_lods_match_the_cpu_reference_and_the_cluster_tree_agrees_on_visibility() {
    let mut w = world();
    let white = rt(&mut w).create_material(Material::colored(Vec4::ONE)).unwrap();
    let mesh = cube_mesh(Some(0.02));
    let at = Transform::new(Vec3::new(1.0, 2.0, 0.5), glam::Quat::from_rotation_z(0.1), Vec3::ONE);
    let id = spawn(&mut w, ism(mesh.clone(), &grid(40_000, 3.0, 1.0, Vec3::new(0.0, 290.0, 0.0))), white, at);
    // The component-to-world the proxy culls with.
    let component_to_world = Affine3A::from_mat4(w.world_transform(id).unwrap());
    let view =
        SceneView::perspective(Vec3::new(0.0, 0.0, 6.0), Vec3::new(0.0, 60.0, 0.0), Vec3::Z, 1.0, 0.1, 2000.0, Rect::from_size(W, H))
            .unwrap();
    let (stats, _) = frame(&mut w, &family(view.clone()));
    assert_eq!(stats.pass(MeshPass::Base).draws, 2, "one indirect draw per LOD");
    let (counts, visible) = with_proxy(&mut w, id, |p, d| (p.read_gpu_lod_counts(d).unwrap(), p.read_gpu_visible(d, 0).unwrap()));

    let store = component(&w, id).store().clone();
    let culling_mesh = instanced_mesh_for(mesh.render_data()).unwrap();
    let cull_view = cull_view_for(&view).unwrap();
    let cpu = cull_instances(&store, &InstanceCuller::new(&culling_mesh, &component_to_world, &cull_view, CullDistances::NONE).unwrap());
    assert_eq!(counts[0], cpu.counts(), "GPU per-LOD counts = CPU reference");
    assert!(cpu.counts()[0] > 100 && cpu.counts()[1] > 100, "near instances at LOD 0, far ones at LOD 1: {:?}", cpu.counts());
    assert!(cpu.visible_count() < 40_000, "part of the grid is outside the frustum");

    // Issue 15: the GPU writes each LOD's instances in instance order, as
    // the CPU reference lists them (157 workgroups, two LODs).
    let cpu_ids: Vec<u32> = cpu.lods.iter().flat_map(|b| b.instances.iter().map(|&i| store.ids()[i as usize].index())).collect();
    let gpu_in_order: Vec<u32> = visible.iter().map(|v| v.0).collect();
    assert_eq!(gpu_in_order, cpu_ids, "GPU visible list = CPU reference, in the same order");

    let tree = ClusterTree::build(&store, &culling_mesh, &ClusterTreeSettings::default());
    let (tree_out, _) =
        tree.cull(&store, &InstanceCuller::new(&culling_mesh, &component_to_world, &cull_view, CullDistances::NONE).unwrap());
    let mut tree_ids: Vec<u32> = tree_out.instance_buffer().iter().map(|&i| store.ids()[i as usize].index()).collect();
    let mut gpu_ids: Vec<u32> = visible.iter().map(|v| v.0).collect();
    tree_ids.sort_unstable();
    gpu_ids.sort_unstable();
    assert_eq!(gpu_ids, tree_ids, "GPU culling and the HISM tree see the same instances");

    // The CPU path (benchmarks' fallback) counts the same per LOD.
    rt(&mut w).set_cvar(CVAR_GPU_CULLING, "0").unwrap();
    frame(&mut w, &family(view));
    let s = stats_of(&mut w, id).snapshot();
    assert_eq!(s.visible_per_lod, cpu.counts().iter().map(|&c| u64::from(c)).collect::<Vec<_>>());
    assert_world_clean(&mut w);
}

#[test]
fn editing_one_of_100k_instances_uploads_only_its_bytes_and_recreates_nothing() {
    let mut w = world();
    let white = rt(&mut w).create_material(Material::colored(Vec4::ONE)).unwrap();
    let id = spawn(&mut w, ism(cube_mesh(None), &grid(100_000, 2.0, 1.0, Vec3::ZERO)), white, Transform::IDENTITY);
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 40.0), Vec3::ZERO, Vec3::Y, 1.0, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let fam = family(view);
    frame(&mut w, &fam);
    let pid = primitive(&w, id);
    let buffer_before = with_proxy(&mut w, id, |p, _| p.instance_buffer());

    let t = component(&w, id).store().transforms()[5000];
    let eof = edit(&mut w, id, |c| {
        c.update_instance_transform(5000, Affine3A::from_translation(Vec3::new(0.3, 0.0, 0.0)) * t, TransformSpace::Component)
    });
    assert_eq!(sent(eof), (0, 1, 0), "the dirty range in place; inside the bounds, so no new bounds");
    let (stats, _) = frame(&mut w, &fam);
    assert_eq!(stats.proxies_created, 0, "no proxy recreated");
    assert_eq!(primitive(&w, id), pid);
    let s = stats_of(&mut w, id).snapshot();
    assert_eq!(s.last_update_upload_bytes, InstanceStreamData::SIZE, "one instance's bytes");
    assert_eq!(s.instance_buffer_recreations, 0);
    let (buffer_after, moved) = with_proxy(&mut w, id, |p, _| (p.instance_buffer(), p.instance_count()));
    assert_eq!(buffer_after, buffer_before, "the instance buffer is updated in place");
    assert_eq!(moved, 100_000);
    // Nothing edited since: nothing is sent.
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.visited, sent(eof)), (0, (0, 0, 0)));
    assert_world_clean(&mut w);
}

const CUSTOM_COLOR_WGSL: &str = "
fn material_main(in: MaterialInput) -> MaterialOutput {
    var out = default_material(in);
    // Unlit: the instance's custom floats 0..2 are its color.
    out.base_color = vec3<f32>(0.0);
    out.specular = 0.0;
    out.emissive = in.custom.xyz;
    return out;
}
";

#[test]
fn custom_data_reaches_the_material() {
    let mut w = world();
    // The custom data's colors exactly: no tone mapping.
    rt(&mut w).set_cvar(cvars::TONEMAPPER, "0").unwrap();
    let material = rt(&mut w)
        .create_material(Material { shader: MaterialShader::new("ism_custom_color.wgsl", CUSTOM_COLOR_WGSL), ..Material::default() })
        .unwrap();
    let place = |x: f32| Affine3A::from_scale_rotation_translation(Vec3::splat(4.0), glam::Quat::IDENTITY, Vec3::new(x, 0.0, 0.0));
    let mut c = ism(cube_mesh(None), &[place(-6.0), place(6.0)]);
    c.set_num_custom_data_floats(3).unwrap();
    c.set_custom_data(0, &[1.0, 0.0, 0.0]).unwrap();
    c.set_custom_data(1, &[0.0, 0.0, 1.0]).unwrap();
    let id = spawn(&mut w, c, material, Transform::IDENTITY);
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 30.0), Vec3::ZERO, Vec3::Y, 1.0, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let (_, image) = frame(&mut w, &family(view.clone()));
    let (l, r) = (project(&view, Vec3::new(-6.0, 0.0, 2.0)), project(&view, Vec3::new(6.0, 0.0, 2.0)));
    assert_eq!(image.pixel(l.0, l.1), [255, 0, 0, 255]);
    assert_eq!(image.pixel(r.0, r.1), [0, 0, 255, 255]);

    // An edit of one value goes up in place (one instance's bytes) and
    // shows next frame.
    let eof = edit(&mut w, id, |c| c.set_custom_data_value(1, 1, 1.0));
    assert_eq!(sent(eof), (0, 1, 0));
    let (_, image) = frame(&mut w, &family(view));
    assert_eq!(stats_of(&mut w, id).snapshot().last_update_upload_bytes, InstanceStreamData::SIZE + 3 * 4);
    assert_eq!(image.pixel(r.0, r.1), [0, 255, 255, 255]);
    assert_world_clean(&mut w);
}

/// Instances added past the bounds the scene knows: the new bounds go to
/// the scene with a transform update and to the proxy with the instances;
/// no proxy is recreated, and the new instance is culled and counted.
#[test]
fn ue_mode_draws_every_instance_at_one_lod_and_bounds_growth_keeps_the_proxy() {
    let mut w = world();
    let white = rt(&mut w).create_material(Material::colored(Vec4::ONE)).unwrap();
    let id = spawn(&mut w, ism(cube_mesh(Some(0.08)), &grid(2_500, 3.0, 1.0, Vec3::new(0.0, 80.0, 0.0))), white, Transform::IDENTITY);
    rt(&mut w).set_cvar(CVAR_UE_MODE, "1").unwrap();
    let view =
        SceneView::perspective(Vec3::new(0.0, 0.0, 6.0), Vec3::new(0.0, 60.0, 0.0), Vec3::Z, 1.0, 0.1, 2000.0, Rect::from_size(W, H))
            .unwrap();
    let (stats, _) = frame(&mut w, &family(view.clone()));
    let s = stats_of(&mut w, id).snapshot();
    assert_eq!(s.path, CullPath::UeMode);
    assert_eq!(s.visible(), 2_500, "no per-instance culling");
    assert_eq!(stats.pass(MeshPass::Base).draws, 1, "one LOD for all");
    assert_eq!(stats.pass(MeshPass::Base).instances, 2_500);

    let pid = primitive(&w, id);
    let eof = edit(&mut w, id, |c| c.add_instance(Affine3A::from_translation(Vec3::new(0.0, 500.0, 0.0)), TransformSpace::Component));
    assert_eq!(sent(eof), (0, 1, 1), "the instance in place, the grown bounds with the transform");
    let (stats, _) = frame(&mut w, &family(view));
    assert_eq!(stats.proxies_created, 0);
    assert_eq!(primitive(&w, id), pid);
    assert_eq!(stats.pass(MeshPass::Base).instances, 2_501);
    assert_eq!(stats_of(&mut w, id).snapshot().visible(), 2_501);
    assert_world_clean(&mut w);
}

#[test]
fn moving_the_component_moves_and_reculls_the_instances_without_re_sending_them() {
    let mut w = world();
    let white = rt(&mut w).create_material(Material::colored(Vec4::ONE)).unwrap();
    let id = spawn(&mut w, ism(cube_mesh(None), &grid(1000, 1.0, 0.6, Vec3::ZERO)), white, Transform::IDENTITY);
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 60.0), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let fam = family(view);
    frame(&mut w, &fam);
    frame(&mut w, &fam);
    assert_eq!(stats_of(&mut w, id).snapshot().visible(), 1000);

    // Up by 45: most of the grid leaves the top of the view.
    w.set_relative_transform(id, Transform::from_translation(Vec3::new(0.0, 45.0, 0.0))).unwrap();
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!(sent(eof), (0, 0, 1), "the transform only");
    frame(&mut w, &fam);
    frame(&mut w, &fam);
    let s = stats_of(&mut w, id).snapshot();
    assert!(s.visible() > 50 && s.visible() < 700, "{} visible after the move", s.visible());
    assert_eq!(s.last_update_upload_bytes, 0, "no instance data re-sent");
    let singular = Transform { scale: Vec3::ZERO, ..Transform::IDENTITY };
    assert!(w.set_relative_transform(id, singular).is_err(), "a singular transform is rejected");
    assert_world_clean(&mut w);
}

/// `IsmUpdate`'s fields are public: an update with `instance_count:
/// u32::MAX` used to make the proxy allocate ~340 GB and abort the process.
/// The proxy now validates dynamic data first: the update is rejected whole
/// (counted in the stats, returned to the renderer as the frame's error),
/// the proxy keeps its instances and buffer, and later frames draw as
/// before.
#[test]
fn a_dynamic_update_that_does_not_fit_is_rejected_and_changes_nothing() {
    let mut w = world();
    let white = rt(&mut w).create_material(Material::colored(Vec4::ONE)).unwrap();
    sun(&mut w, false);
    let id = spawn(&mut w, ism(cube_mesh(None), &grid(100, 1.5, 0.6, Vec3::ZERO)), white, Transform::IDENTITY);
    let pid = primitive(&w, id);
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 30.0), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let (_, before) = frame(&mut w, &family(view.clone()));
    let held = |w: &mut World| with_proxy(w, id, |p, _| (p.instance_count(), p.instance_buffer(), p.custom_data_buffer()));
    let held_before = held(&mut w);
    assert_eq!(held_before.0, 100);

    let one = || vec![(0, vec![InstanceStreamData::default()])];
    for bad in [
        IsmUpdate { instance_count: u32::MAX, ..Default::default() },
        IsmUpdate { instance_count: u32::MAX - 1, ..Default::default() },
        IsmUpdate { instance_count: 100, ranges: vec![(99, vec![InstanceStreamData::default(); 2])], ..Default::default() },
        // Custom floats that do not match the instances sent.
        IsmUpdate {
            instance_count: 100,
            ranges: one(),
            custom_data: Some(IsmCustomData { floats_per_instance: 0, values: vec![1.0] }),
            ..Default::default()
        },
        // A new layout (2 floats per instance) that re-sends one instance of 100.
        IsmUpdate {
            instance_count: 100,
            ranges: one(),
            custom_data: Some(IsmCustomData { floats_per_instance: 2, values: vec![1.0; 2] }),
            ..Default::default()
        },
        // More floats per instance than the crate's maximum.
        IsmUpdate {
            instance_count: 100,
            ranges: vec![(0, vec![InstanceStreamData::default(); 100])],
            custom_data: Some(IsmCustomData {
                floats_per_instance: MAX_CUSTOM_DATA_FLOATS + 1,
                values: vec![0.0; 100 * (MAX_CUSTOM_DATA_FLOATS as usize + 1)],
            }),
            ..Default::default()
        },
    ] {
        // Hand-made: no component sends such an update.
        let rt = rt(&mut w);
        rt.update_dynamic_data(pid, Box::new(bad)).unwrap();
        rt.render_frame(FrameRequest { family: family(view.clone()), read_back: true, execute: true }).unwrap();
        rt.flush().unwrap();
        if let Err(e) = rt.last_stats() {
            assert!(e.to_string().contains("invalid instanced mesh update"), "{e}");
        }
        assert_eq!(held(&mut w), held_before, "the proxy kept its instances and buffer");
    }
    let stats = stats_of(&mut w, id).snapshot();
    assert_eq!(stats.rejected_updates, 6);
    assert_eq!(stats.instances, 100);

    let (_, after) = frame(&mut w, &family(view));
    assert_images_equal(&after, &before, "later frames draw as before");
    assert_world_clean(&mut w);
}

/// The linear value whose sRGB encoding is exactly byte `b` (so an unlit
/// material showing it, without tone mapping, writes `b`).
fn linear(b: u8) -> f32 {
    let c = f32::from(b) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// An unlit material whose colour is (custom float `r`, `g`, `b`) of the
/// instance, read through `custom_data` (the custom data buffer).
fn custom_floats_material(w: &mut World, name: &str, [r, g, b]: [u32; 3]) -> MaterialId {
    let wgsl = format!(
        "fn material_main(in: MaterialInput) -> MaterialOutput {{\n    var out = default_material(in);\n    out.base_color = vec3<f32>(custom_data(in, {r}u), custom_data(in, {g}u), custom_data(in, {b}u));\n    out.emissive = vec3<f32>(0.0);\n    return out;\n}}\n"
    );
    rt(w).create_material(Material::with_shader(name, &wgsl).with_shading_model(ShadingModel::Unlit)).unwrap()
}

/// Byte of custom float `k` of the instance made `j`-th (distinct per
/// instance and per float, so a wrong slot or stride shows).
fn custom_byte(j: u32, k: u32) -> u8 {
    (20 + 40 * j + 3 * k) as u8
}

fn custom_floats(j: u32, n: u32) -> Vec<f32> {
    (0..n).map(|k| linear(custom_byte(j, k))).collect()
}

/// Every custom float reaches the material through `custom_data(in, k)`,
/// found by the instance's id slot: after an in-place edit (no command
/// rebuilt, only the edited instance's bytes sent), after a swap-remove
/// (the moved instance keeps its floats) and an add that reuses the removed
/// slot; GPU and CPU culling draw the same.
#[test]
fn all_custom_floats_reach_the_material_through_edits_and_culling() {
    let mut w = world();
    rt(&mut w).set_cvar(cvars::TONEMAPPER, "0").unwrap();
    let material = custom_floats_material(&mut w, "ism_custom_float6.wgsl", [6, 6, 6]);
    let place = |x: f32| Affine3A::from_scale_rotation_translation(Vec3::splat(4.0), glam::Quat::IDENTITY, Vec3::new(x, 0.0, 0.0));
    let xs = [-12.0, -6.0, 0.0, 6.0, 12.0];
    let mut c = ism(cube_mesh(None), &xs.map(place));
    c.set_num_custom_data_floats(8).unwrap();
    for j in 0..5 {
        c.set_custom_data(j, &custom_floats(j, 8)).unwrap();
    }
    let id = spawn(&mut w, c, material, Transform::IDENTITY);
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 30.0), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let fam = family(view.clone());
    let at = |x: f32| project(&view, Vec3::new(x, 0.0, 2.0));
    let grey = |b: u8| [b, b, b, 255];
    // The proxy's add is applied at the start of the next frame.
    frame(&mut w, &fam);
    let stats_handle = stats_of(&mut w, id);
    // Each instance shows its own float 6; with GPU culling and without.
    let check = |w: &mut World, want: [[u8; 4]; 5], what: &str| -> Image {
        rt(w).set_cvar(CVAR_GPU_CULLING, "1").unwrap();
        let (_, gpu) = frame(w, &fam);
        assert_eq!(stats_handle.snapshot().path, CullPath::Gpu);
        for (x, want) in xs.iter().zip(want) {
            let (px, py) = at(*x);
            assert_eq!(gpu.pixel(px, py), want, "{what}: instance at x = {x}");
        }
        rt(w).set_cvar(CVAR_GPU_CULLING, "0").unwrap();
        let (_, cpu) = frame(w, &fam);
        assert_eq!(stats_handle.snapshot().path, CullPath::Cpu);
        assert_images_equal(&cpu, &gpu, what);
        rt(w).set_cvar(CVAR_GPU_CULLING, "1").unwrap();
        gpu
    };
    check(&mut w, [0, 1, 2, 3, 4].map(|j| grey(custom_byte(j, 6))), "as added");
    let pid = primitive(&w, id);
    let buffer = with_proxy(&mut w, id, |p, _| p.custom_data_buffer());
    assert!(buffer.is_some());
    // One instance's bytes: its stream entry and its 8 floats.
    let one_instance = InstanceStreamData::SIZE + 8 * 4;

    // One value changed: the next frame shows it, no command rebuilt, only
    // that instance's bytes sent.
    let eof = edit(&mut w, id, |c| c.set_custom_data_value(2, 6, linear(250)));
    assert_eq!(sent(eof), (0, 1, 0));
    let (stats, image) = frame(&mut w, &fam);
    assert_eq!(stats.cached_commands_built, 0);
    assert_eq!(stats.proxies_created, 0);
    let (px, py) = at(0.0);
    assert_eq!(image.pixel(px, py), grey(250), "the new value, next frame");
    assert_eq!(stats_handle.snapshot().last_update_upload_bytes, one_instance);
    assert_eq!(with_proxy(&mut w, id, |p, _| p.custom_data_buffer()), buffer, "updated in place");
    let want = [grey(custom_byte(0, 6)), grey(custom_byte(1, 6)), grey(250), grey(custom_byte(3, 6)), grey(custom_byte(4, 6))];
    check(&mut w, want, "one value edited");

    // Remove the instance at x = -6 (index 1): the last one (x = 12) moves
    // into index 1 and keeps its floats; only its bytes are sent.
    let eof = edit(&mut w, id, |c| c.remove_instance(1));
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent), (0, 1));
    check(&mut w, [want[0], CLEAR, want[2], want[3], want[4]], "one removed");
    assert_eq!(stats_handle.snapshot().last_update_upload_bytes, one_instance);
    // A new instance there takes the freed id slot with floats of its own.
    let eof = edit(&mut w, id, |c| c.add_instance_with_custom_data(place(-6.0), TransformSpace::Component, &custom_floats(5, 8)));
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent), (0, 1));
    check(&mut w, [want[0], grey(custom_byte(5, 6)), want[2], want[3], want[4]], "one added");
    assert_eq!(stats_handle.snapshot().last_update_upload_bytes, one_instance);
    assert_eq!(primitive(&w, id), pid, "never recreated");
    assert_world_clean(&mut w);
}

/// With the crate's maximum of 256 floats per instance, the last one
/// reaches the material and the one past it reads 0; changing the count on
/// a live proxy re-lays its buffer out and keeps the values.
#[test]
fn the_last_of_256_custom_floats_reaches_the_material() {
    let mut w = world();
    rt(&mut w).set_cvar(cvars::TONEMAPPER, "0").unwrap();
    // Red: float 255, green: float 256 (past the last: 0), blue: float 6.
    let material = custom_floats_material(&mut w, "ism_custom_float255.wgsl", [255, 256, 6]);
    let place = |x: f32| Affine3A::from_scale_rotation_translation(Vec3::splat(4.0), glam::Quat::IDENTITY, Vec3::new(x, 0.0, 0.0));
    let mut c = ism(cube_mesh(None), &[place(-6.0), place(6.0)]);
    c.set_num_custom_data_floats(8).unwrap();
    for j in 0..2 {
        c.set_custom_data(j, &custom_floats(j, 8)).unwrap();
    }
    let id = spawn(&mut w, c, material, Transform::IDENTITY);
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 30.0), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let fam = family(view.clone());
    let (l, r) = (project(&view, Vec3::new(-6.0, 0.0, 2.0)), project(&view, Vec3::new(6.0, 0.0, 2.0)));
    let (_, image) = frame(&mut w, &fam);
    assert_eq!(image.pixel(l.0, l.1), [0, 0, custom_byte(0, 6), 255], "8 floats: 255 is past them");
    assert_eq!(image.pixel(r.0, r.1), [0, 0, custom_byte(1, 6), 255]);

    let pid = primitive(&w, id);
    let eof = edit(&mut w, id, |c| {
        c.set_num_custom_data_floats(MAX_CUSTOM_DATA_FLOATS)?;
        (0..2).try_for_each(|j| c.set_custom_data_value(j, 255, linear(200 + 30 * j as u8)))
    });
    assert_eq!(sent(eof), (0, 1, 0), "both instances in place");
    let (_, image) = frame(&mut w, &fam);
    assert_eq!(primitive(&w, id), pid, "the same proxy");
    // Both instances' bytes went (and the custom data buffer, re-laid out
    // for the new count).
    let both = 2 * (InstanceStreamData::SIZE + u64::from(MAX_CUSTOM_DATA_FLOATS) * 4);
    let uploaded = stats_of(&mut w, id).snapshot().last_update_upload_bytes;
    assert!(uploaded >= both, "{uploaded} bytes uploaded, both instances' are {both}");
    assert_eq!(image.pixel(l.0, l.1), [200, 0, custom_byte(0, 6), 255]);
    assert_eq!(image.pixel(r.0, r.1), [230, 0, custom_byte(1, 6), 255]);
    rt(&mut w).set_cvar(CVAR_GPU_CULLING, "0").unwrap();
    let (_, cpu) = frame(&mut w, &fam);
    assert_images_equal(&cpu, &image, "CPU culling draws the same");
    assert_world_clean(&mut w);
}

/// Issue 15: instances covering the same pixels at the same depth resolve
/// by draw order, so GPU culling must write them in a fixed order — the
/// CPU path's, instance order within a LOD. 2048 places each hold two
/// identical cubes (instances j and j + 2048, 16 workgroups apart), the
/// first red, the second green: the later one wins every pixel, run after
/// run, on either path.
#[test]
fn coincident_instances_draw_in_instance_order_and_the_image_repeats_byte_for_byte() {
    let mut w = world();
    rt(&mut w).set_cvar(cvars::TONEMAPPER, "0").unwrap();
    let material = custom_floats_material(&mut w, "ism_pair_colors.wgsl", [0, 1, 2]);
    let places = grid(2048, 1.0, 0.45, Vec3::ZERO);
    let transforms: Vec<Affine3A> = places.iter().chain(&places).copied().collect();
    let mut c = ism(cube_mesh(None), &transforms);
    c.set_num_custom_data_floats(3).unwrap();
    for j in 0..transforms.len() {
        let color = if j < places.len() { [1.0, 0.0, 0.0] } else { [0.0, 1.0, 0.0] };
        c.set_custom_data(j as u32, &color).unwrap();
    }
    let id = spawn(&mut w, c, material, Transform::IDENTITY);
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 40.0), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let fam = family(view.clone());
    frame(&mut w, &fam);
    let (_, first) = frame(&mut w, &fam);
    assert_eq!(stats_of(&mut w, id).snapshot().path, CullPath::Gpu);
    for run in 0..3 {
        let (_, again) = frame(&mut w, &fam);
        assert_images_equal(&first, &again, &format!("GPU culling, run {run} vs the first"));
    }
    let (px, py) = project(&view, places[1000].translation.into());
    assert_eq!(first.pixel(px, py), [0, 255, 0, 255], "the later (green) instance of the pair wins");
    let red = (0..H).flat_map(|y| (0..W).map(move |x| (x, y))).filter(|&(x, y)| first.pixel(x, y)[0] > 0).count();
    assert_eq!(red, 0, "no pixel of an earlier (red) instance shows");
    rt(&mut w).set_cvar(CVAR_GPU_CULLING, "0").unwrap();
    let (_, cpu) = frame(&mut w, &fam);
    assert_eq!(stats_of(&mut w, id).snapshot().path, CullPath::Cpu);
    assert_images_equal(&cpu, &first, "GPU vs CPU culling");
    assert_world_clean(&mut w);
}

#[test]
fn a_shadowed_light_re_renders_only_for_the_instances_that_change_its_shadow() {
    let mut w = world();
    let grey = rt(&mut w).create_material(Material::colored(Vec4::new(0.6, 0.6, 0.6, 1.0))).unwrap();
    rt(&mut w)
        .add_light(Light::Spot(SpotLight {
            position: Vec3::new(0.0, 0.0, 5.0),
            direction: Vec3::NEG_Z,
            intensity: 60.0,
            radius: 7.0,
            outer_cone: 0.8,
            cast_shadows: true,
            ..Default::default()
        }))
        .unwrap();
    // 0: the ground under the light; 1: a caster above it; 2: a cube out of
    // the light's reach.
    let placed = [
        Affine3A::from_scale_rotation_translation(Vec3::new(8.0, 8.0, 0.1), glam::Quat::IDENTITY, Vec3::new(0.0, 0.0, -0.1)),
        Affine3A::from_scale_rotation_translation(Vec3::splat(0.4), glam::Quat::IDENTITY, Vec3::new(0.3, 0.2, 1.5)),
        Affine3A::from_translation(Vec3::new(30.0, 0.0, 0.5)),
    ];
    let id = spawn(&mut w, ism(cube_mesh(None), &placed), grey, Transform::IDENTITY);
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 14.0), Vec3::ZERO, Vec3::Y, 1.0, 0.1, 100.0, Rect::from_size(W, H)).unwrap();
    let fam = family(view);
    let tiles = |w: &mut World| {
        let (stats, image) = frame(w, &fam);
        (stats.shadow.tiles_rendered, image)
    };
    assert_eq!(tiles(&mut w).0, 1, "the first frame renders the spot light's tile");
    assert_eq!(tiles(&mut w).0, 0, "an instanced mesh does not re-render it every frame");
    let far = Affine3A::from_translation(Vec3::new(31.0, 2.0, 0.5));
    edit(&mut w, id, |c| c.update_instance_transform(2, far, TransformSpace::Component));
    assert_eq!(tiles(&mut w).0, 0, "an instance out of the light's reach moved: the tile is kept");
    let near = Affine3A::from_scale_rotation_translation(Vec3::splat(0.4), glam::Quat::IDENTITY, Vec3::new(-0.5, 0.2, 1.5));
    edit(&mut w, id, |c| c.update_instance_transform(1, near, TransformSpace::Component));
    let (rendered, image) = tiles(&mut w);
    assert_eq!(rendered, 1, "the caster moved inside the light's reach");
    rt(&mut w).set_cvar(renderer::cvars::SHADOW_CACHE, "0").unwrap();
    assert_images_equal(&image, &tiles(&mut w).1, "the re-rendered tile shows the moved caster's shadow");
    rt(&mut w).set_cvar(renderer::cvars::SHADOW_CACHE, "1").unwrap();
    tiles(&mut w);
    edit(&mut w, id, |c| c.remove_instance(2));
    assert_eq!(tiles(&mut w).0, 0, "the far instance removed");
    edit(&mut w, id, |c| c.add_instance(Affine3A::from_translation(Vec3::new(1.0, -1.0, 1.0)), TransformSpace::Component));
    assert_eq!(tiles(&mut w).0, 1, "an instance added under the light");
    assert_world_clean(&mut w);
}

/// With TAA the depth prepass writes each instance's motion: a component
/// moved between two frames moves its instances on screen by as much.
#[test]
fn a_moved_components_instances_write_its_screen_motion_into_the_velocity_target() {
    let mut world = world();
    rt(&mut world).set_cvar(cvars::ANTI_ALIASING_METHOD, "2").unwrap();
    let material = rt(&mut world).create_material(Material::colored(Vec4::new(0.8, 0.3, 0.2, 1.0))).unwrap();
    let id = spawn(&mut world, ism(cube_mesh(None), &grid(4, 3.0, 1.0, Vec3::ZERO)), material, Transform::IDENTITY);
    let view = SceneView::perspective(Vec3::new(0.0, -0.01, 30.0), Vec3::ZERO, Vec3::Y, 1.0, 0.1, 500.0, Rect::from_size(W, H))
        .unwrap()
        .with_state(ViewStateId(1));
    frame(&mut world, &family(view.clone()));
    let step = Vec3::new(1.0, 0.5, 0.0);
    world.set_relative_transform(id, Transform::from_translation(step)).unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    frame(&mut world, &family(view.clone()));
    let bytes = rt(&mut world)
        .with_context(|ctx| {
            let (texture, state) = ctx.renderer.velocity_target().expect("made by the TAA frame");
            ctx.device.read_texture_texels(texture, state)
        })
        .unwrap()
        .unwrap();
    // The first instance's top face centre (the cube is 1 unit, scale 1).
    let instance = grid(4, 3.0, 1.0, Vec3::ZERO)[0].translation;
    let top = Vec3::from(instance) + Vec3::new(0.0, 0.0, 0.5);
    let uv = |p: Vec3| {
        let c = view.view_proj() * p.extend(1.0);
        glam::Vec2::new(c.x / c.w, c.y / c.w) * 0.5
    };
    let expected = uv(top + step) - uv(top);
    let (x, y) = project(&view, top + step);
    let at = (y * W + x) as usize * 4;
    let half = |i: usize| half::f16::from_le_bytes([bytes[i], bytes[i + 1]]).to_f32();
    let got = glam::Vec2::new(half(at), half(at + 2));
    assert!((got - expected).abs().max_element() < 2e-3 && expected.length() > 0.01, "{got} vs {expected}");
    assert_world_clean(&mut world);
}
