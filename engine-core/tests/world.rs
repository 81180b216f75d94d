//! The world on the real device (validation on): registration, dirty flags,
//! transforms, attachment, batches, pacing, ray casts.

use engine_core::*;
use glam::{Mat4, Quat, Vec3, Vec4};
use renderer::{FrameRequest, MeshPass, RenderThreadMode, SceneView, ViewFamily};
use rhi_vulkan::Rect;
use test_support::{device_desc, render_thread};

const W: u32 = 160;
const H: u32 = 120;

fn world() -> World {
    World::new(Some(render_thread(RenderThreadMode::Threaded)))
}

/// The harness's check on the world's render thread: the layer active, no
/// validation error or warning so far.
#[track_caller]
fn assert_clean(w: &mut World) {
    test_support::assert_clean(w.render_thread().unwrap());
}

fn view() -> ViewFamily {
    let v = SceneView::perspective(Vec3::new(0.0, -0.01, 12.0), Vec3::ZERO, Vec3::Y, 1.0, 0.1, 100.0, Rect::from_size(W, H)).unwrap();
    ViewFamily::new(W, H, vec![v])
}

/// End of frame + render + wait: the frame's stats and image.
fn frame(w: &mut World) -> (renderer::FrameStats, rhi_vulkan::Image) {
    w.send_all_end_of_frame_updates().unwrap();
    let rt = w.render_thread().unwrap();
    rt.render_frame(FrameRequest { family: view(), read_back: true, execute: true }).unwrap();
    let img = rt.read_back().unwrap().unwrap();
    (rt.last_stats().unwrap().unwrap(), img)
}

fn scene_primitives(w: &mut World) -> usize {
    w.render_thread().unwrap().with_context(|ctx| ctx.scene.num_primitives()).unwrap()
}

fn cube_at(w: &mut World, p: Vec3) -> ComponentId {
    w.spawn_actor("cube", Box::new(StaticMeshComponent::new(StaticMesh::cube())), Transform::from_translation(p)).unwrap().1
}

#[test]
fn registering_creates_one_proxy_and_unregistering_removes_it() {
    let mut w = world();
    let c = cube_at(&mut w, Vec3::ZERO);
    let (stats, _) = frame(&mut w);
    assert_eq!(stats.proxies_created, 1);
    assert_eq!(scene_primitives(&mut w), 1);
    assert!(w.primitive_id(c).unwrap().is_some());
    w.unregister_component(c).unwrap();
    let (stats, _) = frame(&mut w);
    assert_eq!(stats.proxies_created, 0);
    assert_eq!(scene_primitives(&mut w), 0);
    assert!(w.primitive_id(c).unwrap().is_none());
    w.register_component(c).unwrap();
    frame(&mut w);
    assert_eq!(scene_primitives(&mut w), 1);
    // Destroying the actor unregisters it.
    let actor = w.actor_of(c).unwrap();
    w.destroy_actor(actor).unwrap();
    frame(&mut w);
    assert_eq!(scene_primitives(&mut w), 0);
    assert!(matches!(w.world_transform(c), Err(EngineError::UnknownComponent(_))));
    assert_clean(&mut w);
}

#[test]
fn moving_sends_only_a_transform_and_mesh_or_material_changes_recreate_one_proxy() {
    let mut w = world();
    let a = cube_at(&mut w, Vec3::new(-2.0, 0.0, 0.0));
    let _b = cube_at(&mut w, Vec3::new(2.0, 0.0, 0.0));
    let (_, before) = frame(&mut w);
    w.set_relative_transform(a, Transform::from_translation(Vec3::new(-2.0, 2.5, 0.0))).unwrap();
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.visited, eof.transforms_sent, eof.proxies_created), (1, 1, 0));
    let (moved, after) = frame(&mut w);
    assert_eq!((moved.proxies_created, moved.cached_commands_built), (0, 0));
    assert!(before.rgba8 != after.rgba8, "the moved cube shows in the image");
    // Material change: exactly one proxy recreated.
    let red = w.render_thread().unwrap().create_material(renderer::Material::colored(Vec4::new(1.0, 0.0, 0.0, 1.0))).unwrap();
    w.set_material(a, 0, red).unwrap();
    let (changed, _) = frame(&mut w);
    assert_eq!(changed.proxies_created, 1);
    // Mesh change: exactly one proxy recreated.
    w.with_component_mut::<StaticMeshComponent, _>(a, |c| c.set_mesh(StaticMesh::sphere(16))).unwrap();
    let (changed, _) = frame(&mut w);
    assert_eq!(changed.proxies_created, 1);
    assert_eq!(scene_primitives(&mut w), 2);
    assert_clean(&mut w);
}

#[test]
fn moving_a_parent_moves_its_attached_children() {
    let mut w = world();
    let (actor, root) = w.spawn_actor("parent", Box::new(StaticMeshComponent::new(StaticMesh::cube())), Transform::IDENTITY).unwrap();
    let child = w
        .add_component(
            actor,
            Box::new(StaticMeshComponent::new(StaticMesh::cube())),
            Some(root),
            Transform::from_translation(Vec3::new(0.0, 0.0, 2.0)),
        )
        .unwrap();
    frame(&mut w);
    w.set_relative_transform(root, Transform::new(Vec3::new(3.0, 0.0, 0.0), Quat::from_rotation_y(std::f32::consts::FRAC_PI_2), Vec3::ONE))
        .unwrap();
    frame(&mut w);
    let expected = w.world_transform(child).unwrap();
    assert!((expected.w_axis.truncate() - Vec3::new(5.0, 0.0, 0.0)).length() < 1e-4, "{expected:?}");
    let pid = w.primitive_id(child).unwrap().unwrap();
    let on_render = w.render_thread().unwrap().with_context(move |ctx| ctx.scene.local_to_world(pid).unwrap()).unwrap();
    assert!(on_render.abs_diff_eq(expected, 1e-5));
    // Cycles are refused.
    assert!(matches!(w.attach(root, child), Err(EngineError::InvalidAttachment { .. })));
    assert_clean(&mut w);
}

#[test]
fn a_move_gives_motion_from_the_last_frame_and_a_teleport_none() {
    let mut w = world();
    let (actor, root) = w.spawn_actor("mover", Box::new(StaticMeshComponent::new(StaticMesh::cube())), Transform::IDENTITY).unwrap();
    let child = w
        .add_component(actor, Box::new(StaticMeshComponent::new(StaticMesh::cube())), Some(root), Transform::from_translation(Vec3::Z))
        .unwrap();
    frame(&mut w);
    let on_render = |w: &mut World, c| {
        let pid = w.primitive_id(c).unwrap().unwrap();
        w.render_thread()
            .unwrap()
            .with_context(move |ctx| (ctx.scene.local_to_world(pid).unwrap(), ctx.scene.previous_local_to_world(pid).unwrap()))
            .unwrap()
    };
    let start = w.world_transform(child).unwrap();
    w.set_relative_transform(root, Transform::from_translation(Vec3::X)).unwrap();
    frame(&mut w);
    let (now, previous) = on_render(&mut w, child);
    assert_eq!(previous, start, "a move's previous transform is the last frame's");
    assert_ne!(now, previous);
    // Still for a frame: no motion.
    frame(&mut w);
    let (now, previous) = on_render(&mut w, child);
    assert_eq!(now, previous, "a primitive that stopped has no motion");
    // A teleport moves the subtree with no motion from where it was.
    w.teleport(root, Transform::from_translation(Vec3::new(40.0, 0.0, 0.0))).unwrap();
    frame(&mut w);
    for c in [root, child] {
        let (now, previous) = on_render(&mut w, c);
        assert_eq!(now, previous, "a teleport has no motion");
        assert_eq!(now, w.world_transform(c).unwrap());
    }
    // A camera cut marks the camera's view; it is refused on a component
    // that is not a camera.
    let (_, camera) =
        w.spawn_actor("camera", Box::new(CameraComponent::default()), Transform::from_translation(Vec3::new(-5.0, 0.0, 1.0))).unwrap();
    assert!(w.collect_views(64, 64).iter().all(|v| !v.camera_cut));
    w.cut_camera(camera).unwrap();
    assert!(w.collect_views(64, 64).iter().all(|v| v.camera_cut) && !w.collect_views(64, 64).is_empty());
    assert!(matches!(w.cut_camera(root), Err(EngineError::WrongComponentType(_, "camera"))));
    assert_clean(&mut w);
}

#[test]
fn a_nan_transform_is_rejected_and_the_last_good_one_stays() {
    let mut w = World::new(None);
    let (_, c) =
        w.spawn_actor("cube", Box::new(StaticMeshComponent::new(StaticMesh::cube())), Transform::from_translation(Vec3::X)).unwrap();
    let good = w.world_transform(c).unwrap();
    for bad in [
        Transform::from_translation(Vec3::new(f32::NAN, 0.0, 0.0)),
        Transform::from_translation(Vec3::new(f32::INFINITY, 0.0, 0.0)),
        Transform::from_translation_scale(Vec3::ZERO, Vec3::new(1.0, 0.0, 1.0)),
        Transform::new(Vec3::ZERO, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0), Vec3::ONE),
    ] {
        assert!(matches!(w.set_relative_transform(c, bad), Err(EngineError::InvalidTransform { .. })), "{bad:?}");
        assert_eq!(w.world_transform(c).unwrap(), good);
        assert_eq!(w.relative_transform(c).unwrap(), Transform::from_translation(Vec3::X));
    }
}

#[test]
fn a_mesh_whose_bounds_its_transform_overflows_is_not_drawn_and_the_frame_goes_on() {
    // Found by the property test: a tiny mesh accepts a 1e20 scale, then a
    // sphere set in place makes its world bounds overflow (radius inf); the
    // renderer refused the batch and the whole end of frame failed.
    let mut w = world();
    let point = renderer::StaticMeshLod::single_section(vec![renderer::LocalVertex::default(); 3], vec![0, 1, 2]);
    let tiny = StaticMesh::new("point", vec![point], vec!["default".into()]);
    let huge = Transform::from_translation_scale(Vec3::ZERO, Vec3::new(0.1, 1e20, 0.1));
    let (_, c) = w.spawn_actor("tiny", Box::new(StaticMeshComponent::new(tiny.unwrap())), huge).unwrap();
    cube_at(&mut w, Vec3::ZERO);
    assert_eq!(frame(&mut w).0.primitives, 2);
    w.with_component_mut(c, |s: &mut StaticMeshComponent| s.set_mesh(StaticMesh::sphere(8))).unwrap();
    let (stats, _) = frame(&mut w);
    assert_eq!(stats.primitives, 1, "the overflowing sphere is left out, the cube stays");
    // Back to a sane scale: drawn again.
    w.set_relative_transform(c, Transform::IDENTITY).unwrap();
    w.mark_render_state_dirty(c).unwrap();
    let (stats, _) = frame(&mut w);
    assert_eq!(stats.primitives, 2);
    assert_clean(&mut w);
}

#[test]
fn cameras_the_renderer_would_refuse_give_no_view() {
    // Found by the property test: a camera with a negative draw distance,
    // or an infinite ortho width, gave views the renderer refused.
    let mut w = World::new(None);
    let eye = Vec3::new(-6.0, 0.0, 6.0);
    let at = Transform::new(eye, look_rotation(eye, Vec3::ZERO), Vec3::ONE);
    let (_, cam) = w.spawn_actor("camera", Box::new(CameraComponent::default()), at).unwrap();
    assert_eq!(w.collect_views(W, H).len(), 1);
    let good = CameraComponent::default().0;
    for bad in [
        CameraDesc { max_draw_distance: -3e38, ..good },
        CameraDesc { max_draw_distance: f32::NAN, ..good },
        CameraDesc { ortho_width: Some(f32::INFINITY), ..good },
    ] {
        w.with_component_mut(cam, |c: &mut CameraComponent| c.0 = bad).unwrap();
        assert!(w.collect_views(W, H).is_empty(), "{bad:?}");
    }
    w.with_component_mut(cam, |c: &mut CameraComponent| c.0 = good).unwrap();
    let views = w.collect_views(W, H);
    assert_eq!(views.len(), 1);
    assert!(views[0].validate_in(W, H).is_ok());
}

#[test]
fn ten_thousand_components_register_in_one_batch() {
    let mut w = world();
    let mesh = StaticMesh::cube();
    let items: Vec<(Box<dyn Component>, Transform)> = (0..10_000)
        .map(|i| {
            (
                Box::new(StaticMeshComponent::new(mesh.clone())) as Box<dyn Component>,
                Transform::from_translation(Vec3::new((i % 100) as f32, (i / 100) as f32, 0.0)),
            )
        })
        .collect();
    w.spawn_actors(items).unwrap();
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 10_000);
    let (stats, _) = frame(&mut w);
    assert_eq!(stats.proxies_created, 10_000, "added on the render thread in one batch");
    assert_eq!(scene_primitives(&mut w), 10_000);
    // Nothing dirty: the next update visits nothing.
    assert_eq!(w.send_all_end_of_frame_updates().unwrap().visited, 0);
    assert_clean(&mut w);
}

#[test]
fn the_game_thread_runs_one_frame_ahead_and_never_more() {
    let mut engine = Engine::new(&EngineDesc { width: 64, height: 48, mode: RenderThreadMode::Threaded, device: device_desc() }).unwrap();
    let mut saw_ahead = false;
    for _ in 0..8 {
        // A slow render thread: every frame takes at least 30 ms.
        engine.render_thread().enqueue_render_command(|_| std::thread::sleep(std::time::Duration::from_millis(30))).unwrap();
        let n = engine.tick(1.0 / 60.0, false).unwrap();
        let rendered = engine.frames_rendered();
        // At the start of frame n the game waited for frame n-2: rendered >= n-1.
        assert!(rendered + 1 >= n, "frame {n} started with only {rendered} rendered");
        if rendered < n {
            saw_ahead = true;
        }
    }
    assert!(saw_ahead, "the game thread overlapped the render thread at least once");
    engine.flush().unwrap();
    assert_eq!(engine.frames_rendered(), 8);
    test_support::assert_clean(engine.render_thread());
}

#[cfg(feature = "collision")]
#[test]
fn a_raycast_hits_a_cube_at_the_right_point_and_normal() {
    let mut w = World::new(None);
    let c = w
        .spawn_actor(
            "cube",
            Box::new(StaticMeshComponent::new(StaticMesh::cube())),
            Transform::from_translation_scale(Vec3::new(5.0, 0.0, 0.0), Vec3::splat(2.0)),
        )
        .unwrap()
        .1;
    w.send_all_end_of_frame_updates().unwrap();
    let hit = w.raycast(Vec3::new(0.0, 0.2, 0.3), Vec3::X, 100.0, CollisionComplexity::Complex).unwrap().expect("a hit");
    assert_eq!(hit.component, c);
    assert!((hit.position - Vec3::new(4.0, 0.2, 0.3)).length() < 1e-4, "{hit:?}");
    assert!((hit.normal - Vec3::NEG_X).length() < 1e-4);
    assert!(w.raycast(Vec3::new(0.0, 5.0, 0.0), Vec3::X, 100.0, CollisionComplexity::Complex).unwrap().is_none());
    // Moving the cube moves its body.
    w.set_relative_transform(c, Transform::from_translation(Vec3::new(0.0, 0.0, 10.0))).unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    let down = w.raycast(Vec3::new(0.0, 0.0, 20.0), Vec3::NEG_Z, 100.0, CollisionComplexity::Complex).unwrap().expect("hit from above");
    assert!((down.position.z - 10.5).abs() < 1e-4 && (down.normal - Vec3::Z).length() < 1e-4);
    // Unregistered: no body.
    w.unregister_component(c).unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    assert!(w.raycast(Vec3::new(0.0, 0.0, 20.0), Vec3::NEG_Z, 100.0, CollisionComplexity::Complex).unwrap().is_none());
}

#[test]
fn lights_and_cameras_come_from_components() {
    let mut engine = Engine::new(&EngineDesc { width: W, height: H, mode: RenderThreadMode::Inline, device: device_desc() }).unwrap();
    let w = &mut engine.world;
    let eye = Vec3::new(-6.0, 0.0, 6.0);
    w.spawn_actor("camera", Box::new(CameraComponent::default()), Transform::new(eye, look_rotation(eye, Vec3::ZERO), Vec3::ONE)).unwrap();
    let sun = Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, Vec3::new(0.3, 0.2, -1.0)), Vec3::ONE);
    let (_, sun_id) = w.spawn_actor("sun", Box::new(DirectionalLightComponent::default()), sun).unwrap();
    w.spawn_actor(
        "floor",
        Box::new(StaticMeshComponent::new(StaticMesh::plane())),
        Transform::from_translation_scale(Vec3::ZERO, Vec3::splat(20.0)),
    )
    .unwrap();
    cube_at(w, Vec3::new(0.0, 0.0, 0.5));
    assert_eq!(w.collect_views(W, H).len(), 1);
    engine.tick(0.016, true).unwrap();
    let stats = engine.stats().unwrap().unwrap();
    assert_eq!(stats.primitives, 2);
    assert!(stats.pass(MeshPass::ShadowDepth).draws > 0, "the sun casts shadows");
    let img = engine.read_back().unwrap().unwrap();
    let centre = img.pixel(W / 2, H / 2);
    assert!(centre[0] as u32 + centre[1] as u32 + centre[2] as u32 > 150, "lit cube in the middle: {centre:?}");
    // Editing the light through the world resends it: no shadow next frame.
    engine.world.with_component_mut(sun_id, |l: &mut DirectionalLightComponent| l.cast_shadows = false).unwrap();
    engine.tick(0.016, false).unwrap();
    engine.flush().unwrap();
    assert_eq!(engine.stats().unwrap().unwrap().pass(MeshPass::ShadowDepth).draws, 0, "the edited sun casts no shadow");
    test_support::assert_clean(engine.render_thread());
    let _ = Mat4::IDENTITY;
}

/// Counts its ticks while `wants` is set.
#[derive(Default)]
struct Ticker {
    wants: bool,
    ticks: u32,
}

impl Component for Ticker {
    fn tick(&mut self, _dt: f32) -> DirtyFlags {
        self.ticks += 1;
        DirtyFlags::NONE
    }
    fn wants_tick(&self) -> bool {
        self.wants
    }
}

#[test]
fn only_components_that_want_a_tick_are_ticked_and_the_wish_can_change() {
    let mut w = World::new(None);
    let (_, eager) = w.spawn_actor("eager", Box::new(Ticker { wants: true, ticks: 0 }), Transform::IDENTITY).unwrap();
    let (_, late) = w.spawn_actor("late", Box::new(Ticker::default()), Transform::IDENTITY).unwrap();
    w.tick(0.1);
    let ticks = |w: &World, id| w.component::<Ticker>(id).unwrap().ticks;
    assert_eq!((ticks(&w, eager), ticks(&w, late)), (1, 0));
    // Wanting a tick later, through the world's mutable access, is enough.
    w.with_component_mut(late, |t: &mut Ticker| t.wants = true).unwrap();
    w.tick(0.1);
    assert_eq!((ticks(&w, eager), ticks(&w, late)), (2, 1));
    // So is stopping; and wanting it again.
    w.with_component_mut(eager, |t: &mut Ticker| t.wants = false).unwrap();
    w.tick(0.1);
    w.with_component_mut(eager, |t: &mut Ticker| t.wants = true).unwrap();
    w.tick(0.1);
    assert_eq!((ticks(&w, eager), ticks(&w, late)), (3, 3));
    // Deactivated components keep their place but are not ticked.
    w.set_active(late, false).unwrap();
    w.tick(0.1);
    assert_eq!((ticks(&w, eager), ticks(&w, late)), (4, 3));
    let actor = w.actor_of(eager).unwrap();
    w.destroy_actor(actor).unwrap();
    w.tick(0.1);
    assert!(w.component::<Ticker>(eager).is_err());
}

/// A resized window: the next frame renders at the new size (its image has
/// it), and a zero side is refused without changing the size.
#[test]
fn set_size_renders_the_next_frame_at_the_new_size() {
    let mut engine = Engine::new(&EngineDesc { width: 64, height: 48, mode: RenderThreadMode::Threaded, device: device_desc() }).unwrap();
    let eye = Vec3::new(-6.0, 0.0, 6.0);
    engine
        .world
        .spawn_actor("camera", Box::new(CameraComponent::default()), Transform::new(eye, look_rotation(eye, Vec3::ZERO), Vec3::ONE))
        .unwrap();
    cube_at(&mut engine.world, Vec3::ZERO);
    engine.tick(0.016, true).unwrap();
    let img = engine.read_back().unwrap().unwrap();
    assert_eq!((img.width, img.height), (64, 48));
    assert!(matches!(engine.set_size(0, 30), Err(EngineError::InvalidSize { width: 0, height: 30 })));
    assert_eq!(engine.size(), (64, 48), "a refused size changes nothing");
    engine.set_size(90, 30).unwrap();
    engine.tick(0.016, true).unwrap();
    let img = engine.read_back().unwrap().unwrap();
    assert_eq!((img.width, img.height), (90, 30), "the frame after the resize has the new size");
    test_support::assert_clean(engine.render_thread());
}

#[test]
fn draw_distances_and_sort_priority_reach_the_scene_without_a_new_proxy_and_follow_a_recreated_one() {
    let mut w = world();
    // The view is 12 units above the origin: a cube there is ~12 away.
    let c = cube_at(&mut w, Vec3::ZERO);
    cube_at(&mut w, Vec3::new(3.0, 0.0, 0.0));
    let (stats, _) = frame(&mut w);
    assert_eq!(stats.visible_primitives, 2);
    // Closer than its minimum: culled, by a settings update alone.
    w.set_draw_distances(c, 20.0, 0.0).unwrap();
    w.set_translucency_sort_priority(c, 3).unwrap();
    assert_eq!(w.settings(c).unwrap().render.translucency_sort_priority, 3);
    let (stats, _) = frame(&mut w);
    assert_eq!((stats.visible_primitives, stats.proxies_created), (1, 0));
    assert_eq!(w.last_update.proxies_created, 0);
    // A material change recreates the proxy: the settings follow it.
    w.set_material(c, 0, renderer::MaterialId::DEFAULT).unwrap();
    w.set_cast_shadow(c, false).unwrap();
    let (stats, _) = frame(&mut w);
    assert_eq!((stats.visible_primitives, stats.proxies_created), (1, 1), "the new proxy is still culled");
    // Within a maximum: drawn again; beyond it: culled.
    w.set_draw_distances(c, 0.0, 50.0).unwrap();
    assert_eq!(frame(&mut w).0.visible_primitives, 2);
    w.set_draw_distances(c, 0.0, 5.0).unwrap();
    assert_eq!(frame(&mut w).0.visible_primitives, 1);
    // Bad distances: a typed error, the settings unchanged.
    for (min, max) in [(-1.0, 0.0), (f32::NAN, 0.0), (0.0, f32::INFINITY), (6.0, 5.0)] {
        let err = w.set_draw_distances(c, min, max).unwrap_err();
        assert!(matches!(err, EngineError::InvalidRenderSettings { component, .. } if component == c), "{err}");
    }
    assert_eq!(w.settings(c).unwrap().render.max_draw_distance, 5.0);
    assert_eq!(w.settings(c).unwrap().render.translucency_sort_priority, 3);
    assert_eq!(frame(&mut w).0.visible_primitives, 1);
    assert_clean(&mut w);
}

/// The mobility and position of the scene's one point or spot light.
fn scene_light(w: &mut World) -> (Mobility, Vec3) {
    w.render_thread()
        .unwrap()
        .with_context(|ctx| match ctx.scene.lights().next().copied() {
            Some(renderer::Light::Spot(s)) => (s.mobility, s.position),
            other => panic!("{other:?}"),
        })
        .unwrap()
}

#[test]
fn a_stationary_light_refuses_to_move_and_keeps_its_shadow_until_made_movable() {
    let mut w = world();
    let lamp = SpotLightComponent { intensity: 40.0, radius: 12.0, cast_shadows: true, ..Default::default() };
    let down = Transform::new(Vec3::new(0.0, 0.0, 5.0), look_rotation(Vec3::ZERO, Vec3::NEG_Z), Vec3::ONE);
    let (actor, post) = w.spawn_actor("post", Box::new(SceneComponent), Transform::IDENTITY).unwrap();
    let light = w.add_component(actor, Box::new(lamp), Some(post), down).unwrap();
    cube_at(&mut w, Vec3::new(0.5, 0.0, 1.0));
    assert_eq!(w.settings(light).unwrap().mobility, Mobility::Movable, "lights start movable");
    w.set_mobility(light, Mobility::Stationary).unwrap();
    let (first, _) = frame(&mut w);
    assert_eq!((first.shadow.tiles_rendered, scene_light(&mut w)), (1, (Mobility::Stationary, Vec3::new(0.0, 0.0, 5.0))));
    // Neither the light nor what it is attached to may move it.
    let elsewhere = Transform { translation: Vec3::new(2.0, 0.0, 5.0), ..down };
    assert!(
        matches!(w.set_relative_transform(light, elsewhere), Err(EngineError::NotMovable { component, mobility: Mobility::Stationary }) if component == light)
    );
    assert!(matches!(w.set_world_location(post, Vec3::X), Err(EngineError::NotMovable { .. })));
    assert_eq!(w.world_transform(light).unwrap(), down.to_mat4(), "nothing moved");
    // Its colour may change; its shadow is kept.
    w.with_component_mut(light, |l: &mut SpotLightComponent| l.color = Vec3::new(1.0, 0.5, 0.2)).unwrap();
    let (recoloured, _) = frame(&mut w);
    assert_eq!((recoloured.shadow.tiles_rendered, recoloured.shadow.tiles_cached), (0, 1));
    // Made movable, it moves, and its shadow with it.
    w.set_mobility(light, Mobility::Movable).unwrap();
    w.set_relative_transform(light, elsewhere).unwrap();
    let (moved, _) = frame(&mut w);
    assert_eq!((moved.shadow.tiles_rendered, scene_light(&mut w)), (1, (Mobility::Movable, Vec3::new(2.0, 0.0, 5.0))));
    assert_clean(&mut w);
}

/// Every component starts movable; a static one (UE's mobility) refuses
/// to move once registered, and so does its parent's move that would carry
/// it, while an unregistered one may be placed; made movable it moves.
#[test]
fn a_static_primitive_refuses_to_move_once_registered() {
    let mut w = World::new(None);
    let (actor, root) = w.spawn_actor("a", Box::new(SceneComponent), Transform::IDENTITY).unwrap();
    let cube = w.add_component(actor, Box::new(StaticMeshComponent::new(StaticMesh::cube())), None, Transform::IDENTITY).unwrap();
    assert_eq!(w.settings(cube).unwrap().mobility, Mobility::Movable, "components start movable");
    w.set_world_location(cube, Vec3::X).unwrap();
    w.set_mobility(cube, Mobility::Static).unwrap();
    let at = w.world_transform(cube).unwrap();
    let r = w.set_world_location(cube, Vec3::Y);
    assert!(matches!(r, Err(EngineError::NotMovable { component, mobility: Mobility::Static }) if component == cube), "{r:?}");
    assert!(matches!(w.teleport(cube, Transform::IDENTITY), Err(EngineError::NotMovable { .. })));
    assert!(matches!(w.set_world_location(root, Vec3::Z), Err(EngineError::NotMovable { .. })), "the parent carries it");
    assert_eq!(w.world_transform(cube).unwrap(), at, "nothing moved");
    // Unregistered, it may be placed (as UE allows before registration).
    w.unregister_component(cube).unwrap();
    w.set_world_location(cube, Vec3::Y).unwrap();
    w.register_component(cube).unwrap();
    w.set_mobility(cube, Mobility::Movable).unwrap();
    w.set_world_location(cube, Vec3::Z).unwrap();
    assert_eq!(w.world_transform(cube).unwrap().w_axis.truncate(), Vec3::Z);
}

/// A cube whose local bounds the test can grow past what its transform
/// carries, asking for a transform update (not a new proxy) on its tick.
struct Stretchy {
    cube: StaticMeshComponent,
    bounds_scale: f32,
    send: bool,
}

impl Component for Stretchy {
    fn tick(&mut self, _dt: f32) -> DirtyFlags {
        DirtyFlags { transform: std::mem::take(&mut self.send), ..DirtyFlags::NONE }
    }
    fn wants_tick(&self) -> bool {
        true
    }
    fn as_primitive(&self) -> Option<&dyn PrimitiveComponent> {
        Some(self)
    }
    fn as_primitive_mut(&mut self) -> Option<&mut dyn PrimitiveComponent> {
        Some(self)
    }
}

impl PrimitiveComponent for Stretchy {
    fn create_scene_proxy(&self, ctx: &ProxyCreateContext<'_>) -> Option<Box<dyn renderer::PrimitiveSceneProxy>> {
        self.cube.create_scene_proxy(ctx)
    }
    fn local_bounds(&self) -> renderer::Bounds {
        let b = self.cube.local_bounds();
        renderer::Bounds::from_box(b.origin, b.extent * self.bounds_scale)
    }
}

#[test]
fn an_update_the_renderer_would_refuse_is_left_out_alone_and_the_frames_other_moves_arrive() {
    // Issue 40's probe: a primitive whose bounds overflow in the same frame
    // as other moves made the render thread refuse the whole transform
    // batch, and those moves were lost for good.
    let mut w = world();
    let mover = cube_at(&mut w, Vec3::ZERO);
    let stretchy = Stretchy { cube: StaticMeshComponent::new(StaticMesh::cube()), bounds_scale: 1.0, send: false };
    let at = Transform::from_translation_scale(Vec3::new(100.0, 0.0, 0.0), Vec3::splat(4.0));
    let (_, s) = w.spawn_actor("stretchy", Box::new(stretchy), at).unwrap();
    let (_, before) = frame(&mut w);
    let centre = |img: &rhi_vulkan::Image| img.pixel(W / 2, H / 2);
    let cube_colour = centre(&before);
    // The stretchy cube's bounds grow to 3e38 (times its scale of 4: past
    // f32's range) and it asks to send its transform; the mover leaves the view.
    w.with_component_mut(s, |c: &mut Stretchy| {
        c.bounds_scale = 3e38;
        c.send = true;
    })
    .unwrap();
    w.tick(0.1);
    w.set_relative_transform(mover, Transform::from_translation(Vec3::new(0.0, 0.0, -500.0))).unwrap();
    let stats = w.send_all_end_of_frame_updates().expect("one bad update does not fail the frame");
    assert_eq!((stats.rejected_updates, stats.transforms_sent), (1, 1), "{stats:?}");
    let (_, after) = frame(&mut w);
    assert_ne!(centre(&after), cube_colour, "the mover's move arrived: the view's centre is empty");
    assert_clean(&mut w);
}
