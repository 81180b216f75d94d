//! The mesh-drawing pipeline on the real device: caching, merging, sorting,
//! culling, passes, threading modes. Validation on; zero messages asserted.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Rect;
use std::sync::Arc;

#[test]
fn a_thousand_cubes_of_one_material_merge_into_one_draw_and_match_unmerged() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, true);
    let m = rt.create_material(Material::colored(Vec4::new(0.9, 0.4, 0.1, 1.0))).unwrap();
    cube_grid(&mut rt, 1000, &[m], 1.0);
    let fam = family(vec![top_view(40.0)]);
    let (merged, merged_img) = frame(&mut rt, &fam);
    assert_eq!(merged.primitives, 1000);
    assert_eq!(merged.visible_primitives, 1000);
    assert_eq!(merged.pass(MeshPass::Base), PassStats { mesh_draw_commands: 1000, draws: 1, instances: 1000, indirect_draws: 0 });
    assert_eq!(merged.pass(MeshPass::DepthPrepass).draws, 1);
    // One merged draw per shadow cascade that sees the cubes (from 40
    // units up, the nearest cascade, 10 deep, sees none).
    assert_eq!(merged.shadow.cascades, 4);
    assert_eq!(merged.pass(MeshPass::ShadowDepth).draws, 3);
    assert_eq!(merged.shadow.draws, 3);
    assert_eq!(merged.triangles, 12_000);
    rt.set_cvar(cvars::DYNAMIC_INSTANCING, "0").unwrap();
    let (unmerged, unmerged_img) = frame(&mut rt, &fam);
    assert_eq!(unmerged.pass(MeshPass::Base), PassStats { mesh_draw_commands: 1000, draws: 1000, instances: 1000, indirect_draws: 0 });
    assert_images_equal(&merged_img, &unmerged_img, "merged vs unmerged");
    assert_ne!(unmerged.draw_list_digest, merged.draw_list_digest, "other draws, another digest");
    // The same scene forced through the dynamic path (the general gather/sort/merge)
    // gives the cached path's draws, in the same order, and the same image.
    rt.set_cvar(cvars::DYNAMIC_INSTANCING, "1").unwrap();
    rt.set_cvar(cvars::FORCE_DYNAMIC_PATH, "1").unwrap();
    let (forced, forced_img) = frame(&mut rt, &fam);
    assert_eq!(forced.draw_list_digest, merged.draw_list_digest);
    assert_eq!(forced.dynamic_commands_built, 5000, "depth and base for each cube, and shadow in each of the 3 cascades that see it");
    assert_images_equal(&forced_img, &merged_img, "forced dynamic path vs cached");
    // Something was drawn: the middle is a lit cube, not the clear color.
    assert!(luminance(merged_img.pixel(W / 2, H / 2)) > 100, "{:?}", merged_img.pixel(W / 2, H / 2));
    assert_clean(&mut rt);
}

#[test]
fn a_thousand_cubes_over_four_materials_take_four_base_draws() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let mats: Vec<MaterialId> = colors(4).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
    cube_grid(&mut rt, 1000, &mats, 1.0);
    let (stats, _) = frame(&mut rt, &family(vec![top_view(40.0)]));
    assert_eq!(stats.pass(MeshPass::Base).draws, 4);
    assert_eq!(stats.pass(MeshPass::Base).instances, 1000);
    // Depth-only passes use the default material for opaque geometry: one draw.
    assert_eq!(stats.pass(MeshPass::DepthPrepass).draws, 1);
    assert_clean(&mut rt);
}

#[test]
fn static_frames_build_nothing_and_moves_rebuild_nothing_while_a_material_change_rebuilds_one_primitive() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, true);
    let mats: Vec<MaterialId> = colors(2).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
    let ids = cube_grid(&mut rt, 400, &mats[..1], 1.5);
    let fam = family(vec![top_view(40.0)]);
    let (first, _) = frame(&mut rt, &fam);
    assert_eq!(first.proxies_created, 400);
    assert!(first.cached_commands_built >= 400 * 3, "{}", first.cached_commands_built);
    let (second, before) = frame(&mut rt, &fam);
    assert_eq!((second.cached_commands_built, second.dynamic_commands_built, second.proxies_created), (0, 0, 0));

    // Move 100 primitives: no command is built, the image changes.
    for (i, id) in ids.iter().take(100).enumerate() {
        let m = Mat4::from_scale_rotation_translation(
            Vec3::splat(0.9),
            glam::Quat::from_rotation_z(0.7),
            Vec3::new(-14.0 + i as f32 * 0.3, 9.0, 2.0),
        );
        rt.update_primitive_transform(*id, m).unwrap();
    }
    let (moved, after) = frame(&mut rt, &fam);
    assert_eq!((moved.cached_commands_built, moved.proxies_created), (0, 0));
    assert!(diff_pixels(&before, &after) > 50, "the moved cubes show");
    assert_eq!(moved.gpu_scene_upload_bytes, 100 * 176, "only the moved primitives are uploaded");

    // Changing one primitive's material = a new proxy for it: only its commands are built.
    let target = ids[200];
    let m = rt.with_context(move |ctx| ctx.scene.local_to_world(target).unwrap()).unwrap();
    rt.remove_primitive(target).unwrap();
    let mesh = cube_mesh();
    let new_id = rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh, vec![mats[1]])), m).unwrap();
    let (changed, _) = frame(&mut rt, &fam);
    let per_primitive: usize =
        rt.with_context(move |ctx| MeshPass::ALL.iter().map(|p| ctx.scene.cached_command_count(new_id, *p)).sum()).unwrap();
    assert_eq!(changed.proxies_created, 1);
    assert_eq!(changed.cached_commands_built, per_primitive as u64);
    assert_eq!(changed.pass(MeshPass::Base).draws, 2, "two materials now");
    assert_clean(&mut rt);
}

/// A translucent quad drawn through the dynamic path.
struct DynamicQuad {
    mesh: Arc<StaticMeshRenderData>,
    material: MaterialId,
}

impl PrimitiveSceneProxy for DynamicQuad {
    fn local_bounds(&self) -> Bounds {
        self.mesh.bounds()
    }
    fn view_relevance(&self, _: &SceneView) -> ViewRelevance {
        ViewRelevance { draw: true, dynamic_relevance: true, translucent: true, ..Default::default() }
    }
    fn create_render_resources(&mut self, device: &rhi_vulkan::Device) -> rhi_vulkan::Result<()> {
        self.mesh.init_gpu(device)
    }
    fn get_dynamic_mesh_elements(&self, _views: &[&SceneView], visibility: &[bool], collector: &mut MeshElementCollector<'_, '_>) {
        let mut batches = Vec::new();
        StaticMeshSceneProxy::new(self.mesh.clone(), vec![self.material]).draw_static_elements(&mut batches);
        for (i, visible) in visibility.iter().enumerate() {
            if *visible {
                for b in &batches {
                    let mut b = b.clone();
                    b.cast_shadow = false;
                    collector.add_mesh(i, b);
                }
            }
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn overlapping_quads(near_is_red: bool) -> (FrameStats, rhi_vulkan::Image) {
    overlapping_quads_with(near_is_red, true, None)
}

/// Two overlapping translucent quads seen from above, drawn through the
/// dynamic path (`dynamic`) or the cached one, the far one with sort
/// priority `far_priority` when given (the near one keeps 0).
fn overlapping_quads_with(near_is_red: bool, dynamic: bool, far_priority: Option<i16>) -> (FrameStats, rhi_vulkan::Image) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, true);
    let red = rt.create_material(Material::colored(Vec4::new(1.0, 0.0, 0.0, 0.6)).with_blend(BlendMode::Translucent)).unwrap();
    let blue = rt.create_material(Material::colored(Vec4::new(0.0, 0.0, 1.0, 0.6)).with_blend(BlendMode::Translucent)).unwrap();
    let mesh = StaticMeshRenderData::new(vec![shapes::plane(4.0)]).unwrap();
    let (near, far) = if near_is_red { (red, blue) } else { (blue, red) };
    let quad = |material: MaterialId| -> Box<dyn PrimitiveSceneProxy> {
        match dynamic {
            true => Box::new(DynamicQuad { mesh: mesh.clone(), material }),
            false => Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![material])),
        }
    };
    // Far quad first, so submission order alone would be wrong for one case.
    let far_id = rt.add_primitive(quad(far), Mat4::from_translation(Vec3::new(0.5, 0.0, 0.0))).unwrap();
    rt.add_primitive(quad(near), Mat4::from_translation(Vec3::new(-0.5, 0.0, 1.0))).unwrap();
    if let Some(p) = far_priority {
        rt.set_primitive_settings(vec![(far_id, PrimitiveRenderSettings { translucency_sort_priority: p, ..Default::default() })]).unwrap();
    }
    let out = frame(&mut rt, &family(vec![top_view(8.0)]));
    assert_clean(&mut rt);
    out
}

#[test]
fn translucency_sort_priority_draws_a_higher_priority_over_nearer_primitives_on_both_paths() {
    let p = |img: &rhi_vulkan::Image| img.pixel(W / 2, H / 2);
    for dynamic in [false, true] {
        // Red near, blue far: by distance red is on top.
        let (_, by_distance) = overlapping_quads_with(true, dynamic, None);
        let (_, equal) = overlapping_quads_with(true, dynamic, Some(0));
        let (stats, far_first) = overlapping_quads_with(true, dynamic, Some(1));
        let (_, far_lower) = overlapping_quads_with(true, dynamic, Some(-1));
        assert_eq!(stats.pass(MeshPass::Translucency).draws, 2);
        let (a, b, c) = (p(&by_distance), p(&far_first), p(&far_lower));
        assert!(a[0] > a[2], "dynamic {dynamic}: red (near) over blue: {a:?}");
        assert!(b[2] > b[0], "dynamic {dynamic}: blue (far, priority 1) over red: {b:?}");
        assert_eq!(c, a, "dynamic {dynamic}: a lower priority on the far quad keeps the distance order");
        assert_eq!(p(&equal), a, "dynamic {dynamic}: equal priorities sort by distance");
    }
}

#[test]
fn translucent_dynamic_quads_skip_depth_and_shadow_and_blend_back_to_front() {
    let (stats, red_on_top) = overlapping_quads(true);
    assert_eq!(stats.pass(MeshPass::DepthPrepass).mesh_draw_commands, 0);
    assert_eq!(stats.pass(MeshPass::ShadowDepth).mesh_draw_commands, 0);
    assert_eq!(stats.pass(MeshPass::Translucency).draws, 2);
    assert_eq!(stats.dynamic_commands_built, 2);
    let (_, blue_on_top) = overlapping_quads(false);
    let p = |img: &rhi_vulkan::Image| img.pixel(W / 2, H / 2);
    let (a, b) = (p(&red_on_top), p(&blue_on_top));
    assert!(a[0] > a[2], "red over blue: {a:?}");
    assert!(b[2] > b[0], "blue over red: {b:?}");
}

#[test]
fn primitives_outside_the_frustum_are_neither_counted_nor_drawn() {
    let render = |with_outside: bool| {
        let mut rt = render_thread(RenderThreadMode::Threaded);
        sun(&mut rt, false);
        let m = rt.create_material(Material::colored(Vec4::new(0.2, 0.7, 0.3, 1.0))).unwrap();
        cube_grid(&mut rt, 25, &[m], 2.0);
        if with_outside {
            let mesh = cube_mesh();
            for i in 0..50 {
                // Behind the camera (above it) and far to the side.
                let p = if i % 2 == 0 { Vec3::new(i as f32, 0.0, 60.0) } else { Vec3::new(500.0 + i as f32, 0.0, 0.0) };
                rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![m])), Mat4::from_translation(p)).unwrap();
            }
        }
        let out = frame(&mut rt, &family(vec![top_view(30.0)]));
        assert_clean(&mut rt);
        out
    };
    let (with, with_img) = render(true);
    let (without, without_img) = render(false);
    assert_eq!(with.primitives, 75);
    assert_eq!(with.visible_primitives, 25);
    assert_eq!(with.pass(MeshPass::Base).instances, 25);
    assert_eq!(without.visible_primitives, 25);
    assert_images_equal(&with_img, &without_img, "with vs without");
}

fn threading_run(mode: RenderThreadMode, parallel: bool) -> (FrameStats, rhi_vulkan::Image) {
    let mut rt = render_thread(mode);
    let flag = if parallel { "1" } else { "0" };
    rt.set_cvar(cvars::PARALLEL_PASS_SETUP, flag).unwrap();
    rt.set_cvar(cvars::PARALLEL_RECORD, flag).unwrap();
    sun(&mut rt, true);
    let mats: Vec<MaterialId> = colors(3).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
    cube_grid(&mut rt, 600, &mats, 1.0);
    let mut fam = family(vec![top_view(30.0)]);
    fam.views[0].max_draw_distance = 0.0;
    let out = frame(&mut rt, &fam);
    assert_clean(&mut rt);
    out
}

#[test]
fn inline_and_threaded_serial_and_parallel_give_identical_images_and_draw_lists() {
    let (a, a_img) = threading_run(RenderThreadMode::Threaded, true);
    let (b, b_img) = threading_run(RenderThreadMode::Inline, true);
    let (c, c_img) = threading_run(RenderThreadMode::Inline, false);
    let (d, d_img) = threading_run(RenderThreadMode::Threaded, false);
    for (what, s, img) in [("inline parallel", &b, &b_img), ("inline serial", &c, &c_img), ("threaded serial", &d, &d_img)] {
        assert_eq!(s.draw_list_digest, a.draw_list_digest);
        assert_eq!(s.passes, a.passes);
        assert_images_equal(img, &a_img, &format!("{what} vs threaded parallel"));
    }
}

#[test]
fn two_views_in_one_family_each_draw_their_own_visible_set() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let red = rt.create_material(Material::colored(Vec4::new(0.9, 0.1, 0.1, 1.0))).unwrap();
    let blue = rt.create_material(Material::colored(Vec4::new(0.1, 0.1, 0.9, 1.0))).unwrap();
    let mesh = cube_mesh();
    for i in 0..9 {
        let (x, y) = ((i % 3) as f32 * 2.0 - 2.0, (i / 3) as f32 * 2.0 - 2.0);
        rt.add_primitive(
            Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![red])),
            Mat4::from_translation(Vec3::new(x - 100.0, y, 0.0)),
        )
        .unwrap();
    }
    for i in 0..4 {
        let (x, y) = ((i % 2) as f32 * 2.0 - 1.0, (i / 2) as f32 * 2.0 - 1.0);
        rt.add_primitive(
            Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![blue])),
            Mat4::from_translation(Vec3::new(x + 100.0, y, 0.0)),
        )
        .unwrap();
    }
    let half = Rect::new(0, 0, W / 2, H);
    let left = SceneView::perspective(Vec3::new(-100.0, -0.01, 15.0), Vec3::new(-100.0, 0.0, 0.0), Vec3::Y, 1.0, 0.1, 100.0, half).unwrap();
    let right = SceneView::perspective(
        Vec3::new(100.0, -0.01, 15.0),
        Vec3::new(100.0, 0.0, 0.0),
        Vec3::Y,
        1.0,
        0.1,
        100.0,
        Rect::new(W as i32 / 2, 0, W / 2, H),
    )
    .unwrap();
    let (stats, img) = frame(&mut rt, &family(vec![left, right]));
    assert_eq!(stats.visible_primitives, 13);
    assert_eq!(stats.pass(MeshPass::Base).instances, 13);
    assert_eq!(stats.pass(MeshPass::Base).draws, 2, "one merged draw per view");
    let l = img.pixel(W / 4, H / 2);
    let r = img.pixel(3 * W / 4 - 6, H / 2 - 6);
    assert!(l[0] > l[2], "left view shows red cubes: {l:?}");
    assert!(r[2] > r[0], "right view shows blue cubes: {r:?}");
    assert_clean(&mut rt);
}

#[test]
fn a_cube_above_a_plane_shadows_it() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.add_light(Light::Directional(DirectionalLight {
        direction: Vec3::new(0.0, 0.0, -1.0),
        color: Vec3::ONE,
        intensity: 3.0,
        cast_shadows: true,
        ..Default::default()
    }))
    .unwrap();
    let white = rt.create_material(Material::colored(Vec4::new(0.8, 0.8, 0.8, 1.0))).unwrap();
    let plane = StaticMeshRenderData::new(vec![shapes::plane(20.0)]).unwrap();
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(plane, vec![white])), Mat4::IDENTITY).unwrap();
    rt.add_primitive(
        Box::new(StaticMeshSceneProxy::new(cube_mesh(), vec![white])),
        Mat4::from_scale_rotation_translation(Vec3::splat(2.0), glam::Quat::IDENTITY, Vec3::new(3.0, 0.0, 3.0)),
    )
    .unwrap();
    let view =
        SceneView::perspective(Vec3::new(-2.0, -0.01, 14.0), Vec3::new(-2.0, 0.0, 0.0), Vec3::Y, 1.1, 0.1, 100.0, Rect::from_size(W, H))
            .unwrap();
    let fam = family(vec![view.clone()]);
    let (stats, img) = frame(&mut rt, &fam);
    assert!(stats.pass(MeshPass::ShadowDepth).draws > 0);
    // Project world points to pixels.
    let px = |p: Vec3| {
        let c = view.view_proj() * p.extend(1.0);
        let ndc = c.truncate() / c.w;
        (((ndc.x * 0.5 + 0.5) * W as f32) as u32, ((ndc.y * 0.5 + 0.5) * H as f32) as u32)
    };
    // The plane beside the cube's shadow is lit; under the cube it is shadowed.
    // (The cube hides part of its shadow from this camera: sample the visible edge of it.)
    let (lx, ly) = px(Vec3::new(-6.0, 0.0, 0.0));
    let lit = img.pixel(lx, ly);
    let (sx, sy) = px(Vec3::new(2.4, 0.0, 0.0));
    let shadowed = img.pixel(sx, sy);
    assert!(luminance(lit) > luminance(shadowed) + 90, "lit {lit:?} vs shadowed {shadowed:?}");
    // Without shadows the same spot is lit.
    rt.set_cvar(cvars::SHADOW_ENABLE, "0").unwrap();
    let (no_shadow_stats, img2) = frame(&mut rt, &fam);
    assert_eq!(no_shadow_stats.pass(MeshPass::ShadowDepth).draws, 0);
    assert!(luminance(img2.pixel(sx, sy)) > luminance(shadowed) + 90);
    assert_clean(&mut rt);
}

#[test]
fn a_removed_primitive_is_gone_next_frame_without_validation_errors() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, true);
    let m = rt.create_material(Material::colored(Vec4::new(0.9, 0.9, 0.2, 1.0))).unwrap();
    let ids = cube_grid(&mut rt, 4, &[m], 3.0);
    let fam = family(vec![top_view(12.0)]);
    // Two frames in flight, then remove while they may still execute.
    rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
    rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
    for id in &ids[..2] {
        rt.remove_primitive(*id).unwrap();
    }
    let (stats, _) = frame(&mut rt, &fam);
    assert_eq!(stats.primitives, 2);
    assert_eq!(stats.pass(MeshPass::Base).instances, 2);
    let counts = rt.with_context(|ctx| ctx.scene.num_primitives()).unwrap();
    assert_eq!(counts, 2);
    assert_clean(&mut rt);
}

#[test]
fn wireframe_views_draw_only_the_wireframe_pass() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let m = rt.create_material(Material::colored(Vec4::new(0.5, 0.5, 0.5, 1.0))).unwrap();
    cube_grid(&mut rt, 16, &[m], 2.0);
    rt.set_cvar(cvars::WIREFRAME, "1").unwrap();
    let (stats, img) = frame(&mut rt, &family(vec![top_view(20.0)]));
    assert_eq!(stats.pass(MeshPass::Base).draws, 0);
    assert_eq!(stats.pass(MeshPass::Wireframe).draws, 1);
    assert_eq!(stats.pass(MeshPass::Wireframe).instances, 16);
    let bright = img.rgba8.chunks(4).filter(|p| p[0] > 200 && p[2] > 200).count();
    assert!(bright > 100, "edges drawn: {bright}");
    assert_clean(&mut rt);
}

#[test]
fn a_panicking_render_command_surfaces_as_an_error_on_the_game_side() {
    for mode in [RenderThreadMode::Threaded, RenderThreadMode::Inline] {
        let mut rt = render_thread(mode);
        let _ = rt.enqueue_render_command(|_| panic!("proxy exploded"));
        let err = rt.flush().unwrap_err();
        assert!(matches!(&err, RendererError::RenderThreadPanicked(m) if m.contains("proxy exploded")), "{err:?}");
        // Every later call fails the same way, without blocking.
        assert!(matches!(
            rt.render_frame(FrameRequest { family: family(vec![top_view(5.0)]), read_back: false, execute: true }),
            Err(RendererError::RenderThreadPanicked(_))
        ));
        assert!(rt
            .add_light(Light::Point(PointLight {
                position: Vec3::ZERO,
                color: Vec3::ONE,
                intensity: 1.0,
                radius: 1.0,
                ..Default::default()
            }))
            .is_err());
        drop(rt);
    }
}

#[test]
fn bad_transforms_and_cvars_are_rejected_before_anything_is_queued() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let mesh = cube_mesh();
    let nan = Mat4::from_translation(Vec3::new(f32::NAN, 0.0, 0.0));
    assert!(matches!(
        rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![])), nan),
        Err(RendererError::InvalidTransform { .. })
    ));
    assert!(matches!(
        rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh, vec![])), Mat4::from_scale(Vec3::ZERO)),
        Err(RendererError::InvalidTransform { .. })
    ));
    assert!(matches!(rt.set_cvar("r.NoSuchThing", "1"), Err(RendererError::UnknownCvar(_))));
    assert!(matches!(rt.set_cvar(cvars::WIREFRAME, "sometimes"), Err(RendererError::InvalidCvarValue { .. })));
    assert_eq!(rt.with_context(|ctx| ctx.scene.num_primitives()).unwrap(), 0);
    assert!(matches!(
        StaticMeshRenderData::new(vec![StaticMeshLod::single_section(shapes::cube(1.0).vertices, vec![0, 1, 99])]),
        Err(RendererError::InvalidMesh(_))
    ));
}

#[test]
fn static_meshes_pick_their_lod_by_screen_size_and_views_cull_by_distance() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    // LOD 0: a cube (12 triangles) while the screen size is >= 0.3; LOD 1: a plane (2 triangles).
    let mut lod0 = shapes::cube(1.0);
    lod0.screen_size = 0.3;
    let mut lod1 = shapes::plane(1.0);
    lod1.screen_size = 0.0;
    let mesh = StaticMeshRenderData::new(vec![lod0, lod1]).unwrap();
    let m = rt.create_material(Material::colored(Vec4::new(0.7, 0.7, 0.7, 1.0))).unwrap();
    // One near, one far along the view direction.
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![m])), Mat4::from_translation(Vec3::new(0.0, 3.0, 0.0))).unwrap();
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh, vec![m])), Mat4::from_translation(Vec3::new(0.0, 60.0, 0.0))).unwrap();
    let view =
        SceneView::perspective(Vec3::new(0.0, -1.0, 0.5), Vec3::new(0.0, 10.0, 0.5), Vec3::Z, 1.0, 0.1, 500.0, Rect::from_size(W, H))
            .unwrap();
    let (stats, _) = frame(&mut rt, &family(vec![view.clone()]));
    assert_eq!(stats.visible_primitives, 2);
    assert_eq!(stats.triangles, 12 + 2, "near cube at LOD 0, far one at LOD 1");
    assert_eq!(stats.pass(MeshPass::Base).draws, 2, "two LODs, two draws");
    // A view draw distance of 20 drops the far one.
    let mut near_only = view.clone();
    near_only.max_draw_distance = 20.0;
    let (stats, _) = frame(&mut rt, &family(vec![near_only]));
    assert_eq!(stats.visible_primitives, 1);
    assert_eq!(stats.triangles, 12);
    // A primitive's own draw distances (UE's MaxDrawDistance and
    // MinDrawDistance, scene settings) cull it alone: a third cube beside
    // the near one, limited to 2 units, set in the frame it is added.
    let cube = StaticMeshRenderData::new(vec![shapes::cube(1.0)]).unwrap();
    let limited = rt
        .add_primitive(Box::new(StaticMeshSceneProxy::new(cube.clone(), vec![m])), Mat4::from_translation(Vec3::new(1.5, 3.0, 0.0)))
        .unwrap();
    let max = |d| PrimitiveRenderSettings { max_draw_distance: d, ..Default::default() };
    rt.set_primitive_settings(vec![(limited, max(2.0))]).unwrap();
    let (stats, _) = frame(&mut rt, &family(vec![view.clone()]));
    assert_eq!(stats.visible_primitives, 2, "the limited cube is 3.5 units away: culled");
    let other =
        rt.add_primitive(Box::new(StaticMeshSceneProxy::new(cube, vec![m])), Mat4::from_translation(Vec3::new(-1.5, 3.0, 0.0))).unwrap();
    rt.set_primitive_settings(vec![(other, max(10.0))]).unwrap();
    let (stats, _) = frame(&mut rt, &family(vec![view.clone()]));
    assert_eq!(stats.visible_primitives, 3, "within its limit of 10: drawn");
    // Changed settings take effect the next frame without a new proxy: the
    // limited cube's limit lifted, the other given a minimum of 5 units
    // (its centre is about 4.3 away: too close, culled).
    let min = PrimitiveRenderSettings { min_draw_distance: 5.0, ..Default::default() };
    rt.set_primitive_settings(vec![(limited, PrimitiveRenderSettings::default()), (other, min)]).unwrap();
    let (stats, _) = frame(&mut rt, &family(vec![view.clone()]));
    assert_eq!((stats.visible_primitives, stats.proxies_created), (3, 0), "one back, one culled, no proxy rebuilt");
    // A bad setting is refused alone with a typed error; the batch's good
    // one (the limited cube's unchanged settings) still arrives.
    for bad in [max(-1.0), max(f32::NAN), PrimitiveRenderSettings { min_draw_distance: 3.0, max_draw_distance: 2.0, ..Default::default() }]
    {
        let refused = rt.set_primitive_settings(vec![(limited, PrimitiveRenderSettings::default()), (other, bad)]).unwrap();
        let [(id, err)] = refused.as_slice() else { panic!("{refused:?}") };
        assert!(*id == other && matches!(err, RendererError::InvalidPrimitiveSettings { primitive, .. } if *primitive == other), "{err}");
    }
    let (stats, _) = frame(&mut rt, &family(vec![view]));
    assert_eq!(stats.visible_primitives, 3, "nothing of the refused settings applied");
    assert_eq!(stats.failed_updates, 3, "each refusal counted");
    assert_clean(&mut rt);
}

#[test]
fn an_orthographic_view_and_point_lights_render() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let white = rt.create_material(Material::colored(Vec4::new(0.8, 0.8, 0.8, 1.0))).unwrap();
    let plane = StaticMeshRenderData::new(vec![shapes::plane(10.0)]).unwrap();
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(plane, vec![white])), Mat4::IDENTITY).unwrap();
    // No sun: only a red point light over the left half.
    rt.add_light(Light::Point(PointLight {
        position: Vec3::new(-3.0, 0.0, 1.0),
        color: Vec3::new(1.0, 0.0, 0.0),
        intensity: 3.0,
        radius: 3.0,
        ..Default::default()
    }))
    .unwrap();
    let view = SceneView::orthographic(
        Vec3::new(0.0, 0.0, 10.0),
        Vec3::ZERO,
        Vec3::Y,
        10.0,
        10.0 * H as f32 / W as f32,
        0.1,
        50.0,
        Rect::from_size(W, H),
    )
    .unwrap();
    let (stats, img) = frame(&mut rt, &family(vec![view]));
    assert_eq!(stats.visible_primitives, 1);
    // Ortho: the plane spans the full width; x = -3 maps to 20% of the width.
    let lit = img.pixel(W / 5, H / 2);
    let unlit = img.pixel(4 * W / 5, H / 2);
    assert!(lit[0] > unlit[0] + 80 && lit[0] > lit[1] + 60, "red light on the left: {lit:?} vs {unlit:?}");
    assert_clean(&mut rt);
}

#[test]
fn a_static_meshs_gpu_buffers_go_with_its_last_proxy() {
    // Meshes made and dropped at run time (the soak sample's churn) must not
    // keep their vertex and index buffers until shutdown.
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let m = rt.create_material(Material::colored(Vec4::new(0.5, 0.6, 0.7, 1.0))).unwrap();
    let fam = family(vec![top_view(12.0)]);
    frame(&mut rt, &fam);
    let idle_buffers = |rt: &mut RenderThread| {
        rt.with_context(|ctx| {
            ctx.device.wait_idle().unwrap();
            ctx.device.counts().buffers
        })
        .unwrap()
    };
    let mesh = cube_mesh();
    let a = rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![m])), Mat4::IDENTITY).unwrap();
    let b = rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![m])), Mat4::from_translation(Vec3::X * 3.0)).unwrap();
    assert_eq!(frame(&mut rt, &fam).0.pass(MeshPass::Base).instances, 2);
    // (The scene's own buffers grow with it and stay: count differences.)
    let both = idle_buffers(&mut rt);
    rt.remove_primitive(a).unwrap();
    frame(&mut rt, &fam);
    assert_eq!(idle_buffers(&mut rt), both, "still used by the other proxy");
    rt.remove_primitive(b).unwrap();
    frame(&mut rt, &fam);
    assert_eq!(idle_buffers(&mut rt), both - 2, "its vertex and index buffers go with the last proxy");
    // Drawn again later: uploaded again.
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh, vec![m])), Mat4::IDENTITY).unwrap();
    let (stats, img) = frame(&mut rt, &fam);
    assert_eq!(stats.pass(MeshPass::Base).instances, 1);
    assert_eq!(idle_buffers(&mut rt), both);
    assert!(img.rgba8.chunks(4).any(|p| luminance([p[0], p[1], p[2], p[3]]) > 150), "the cube is drawn again");
    assert_clean(&mut rt);
}

#[test]
fn a_proxy_recreated_in_one_batch_keeps_its_meshs_gpu_buffers() {
    // A material change re-creates the proxy: remove + add in one batch. The
    // scene adds before it removes, so the mesh's buffers pass from the old
    // proxy to the new one instead of being freed and uploaded again.
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let m = rt.create_material(Material::colored(Vec4::new(0.5, 0.6, 0.7, 1.0))).unwrap();
    let fam = family(vec![top_view(12.0)]);
    let mesh = cube_mesh();
    let a = rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![m])), Mat4::IDENTITY).unwrap();
    frame(&mut rt, &fam);
    frame(&mut rt, &fam);
    let counts = |rt: &mut RenderThread| rt.with_context(|ctx| ctx.device.counts()).unwrap();
    let before = counts(&mut rt);
    rt.remove_primitive(a).unwrap();
    let b = rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![m])), Mat4::IDENTITY).unwrap();
    assert_eq!(frame(&mut rt, &fam).0.pass(MeshPass::Base).instances, 1);
    let after = counts(&mut rt);
    assert_eq!(after.buffers, before.buffers);
    assert!(after.pending_deletions < before.pending_deletions + 2, "the mesh's two buffers were not retired: {before:?} -> {after:?}");
    // Removing the last user still frees them.
    rt.remove_primitive(b).unwrap();
    frame(&mut rt, &fam);
    assert_eq!(counts(&mut rt).pending_deletions, before.pending_deletions + 2, "vertex and index buffers retired");
    assert_clean(&mut rt);
}

/// UE's position-only streams: the depth-only passes draw opaque local
/// geometry through the factory's position-only variant, binding stream 0
/// alone; the base pass and masked depth draws keep every stream.
#[test]
fn depth_only_passes_bind_the_position_stream_alone_for_opaque_batches() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let masked = rt.create_material(Material::colored(Vec4::ONE).with_blend(BlendMode::Masked)).unwrap();
    let mesh = cube_mesh();
    mesh_streams_checked(&mut rt, mesh, masked);
    // The depth the position-only draws write is the depth the base pass
    // tests its full-stream vertices against (`LessEqual`): the image is
    // the one the same cubes give with a masked material that keeps every
    // texel (whose depth draws read every stream to discard).
    let render = |masked: bool| {
        let mut rt = render_thread(RenderThreadMode::Threaded);
        let red = Material::colored(Vec4::new(0.9, 0.1, 0.1, 1.0));
        let m = rt.create_material(if masked { red.with_blend(BlendMode::Masked) } else { red }).unwrap();
        sun(&mut rt, true);
        cube_grid(&mut rt, 9, &[m], 2.0);
        let (stats, img) = frame(&mut rt, &family(vec![top_view(12.0)]));
        assert_eq!(stats.pass(MeshPass::DepthPrepass).instances, 9);
        assert_clean(&mut rt);
        img
    };
    let (opaque, masked) = (render(false), render(true));
    let red = (0..H).flat_map(|y| (0..W).map(move |x| (x, y))).filter(|&(x, y)| opaque.pixel(x, y)[0] > 100).count();
    assert!(red > 500, "nine lit cube tops: {red} red pixels");
    assert_images_equal(&opaque, &masked, "position-only depth vs full-stream depth");
    assert_clean(&mut rt);
}

fn mesh_streams_checked(rt: &mut RenderThread, mesh: Arc<StaticMeshRenderData>, masked: MaterialId) {
    rt.with_context(move |ctx| {
        mesh.init_gpu(&ctx.device).unwrap();
        let mut batches = Vec::new();
        StaticMeshSceneProxy::new(mesh.clone(), vec![MaterialId::DEFAULT]).draw_static_elements(&mut batches);
        let opaque = batches.remove(0);
        let masked = MeshBatch { material: masked, ..opaque.clone() };
        let pipelines = renderer::mesh_pass::PipelineLibrary::default();
        let build = |pass, batch: &MeshBatch| {
            renderer::mesh_pass::build_mesh_draw_command(pass, batch, &ctx.device, &ctx.scene.materials, &pipelines).unwrap().unwrap()
        };
        for pass in [MeshPass::DepthPrepass, MeshPass::ShadowDepth] {
            let c = build(pass, &opaque);
            assert_eq!(c.streams[0], opaque.streams[0], "{pass:?}: the position stream");
            assert!(c.streams[1..].iter().all(Option::is_none), "{pass:?}: nothing else bound");
            assert_eq!(c.id_stream_slot, Some(1), "{pass:?}: the id stream right after it");
            let m = build(pass, &masked);
            assert_eq!((m.streams, m.id_stream_slot), (opaque.streams, Some(4)), "{pass:?}: masked reads UVs to discard");
        }
        let base = build(MeshPass::Base, &opaque);
        assert_eq!((base.streams, base.id_stream_slot), (opaque.streams, Some(4)));
        pipelines.invalidate(&ctx.device);
        mesh.release_gpu(&ctx.device);
    })
    .unwrap();
}
