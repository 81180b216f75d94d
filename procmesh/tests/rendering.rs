//! The procedural mesh proxy on the real device: in-place updates, bounds,
//! visibility, clearing, both draw paths, wireframe and mirrored
//! transforms. Validation on; zero errors and warnings asserted.

mod common;

use common::*;
use glam::{Mat4, Vec2, Vec3};
use procmesh::{
    ProcMeshData, ProcMeshProxyOptions, ProcMeshRenderState, ProceduralMeshSceneProxy, RecreateReason, RenderUpdate, SectionData,
};
use renderer::*;

const DYNAMIC: ProcMeshProxyOptions = ProcMeshProxyOptions { static_draw_path: false, cast_shadow: true };
const STATIC: ProcMeshProxyOptions = ProcMeshProxyOptions { static_draw_path: true, cast_shadow: true };

/// The proxy of `id` as the render thread holds it: (bounds, mirrored).
fn proxy_state(rt: &mut RenderThread, id: PrimitiveId) -> (procmesh::Aabb, bool, Vec<Option<bool>>) {
    rt.with_context(move |ctx| {
        let proxy = ctx.scene.proxy(id).expect("live proxy");
        let p = proxy.as_any().downcast_ref::<ProceduralMeshSceneProxy>().expect("a procedural mesh proxy");
        (p.bounds(), p.is_mirrored(), (0..2).map(|i| p.is_section_visible(i)).collect())
    })
    .unwrap()
}

#[test]
fn an_update_of_the_same_vertex_count_rewrites_the_buffers_without_a_new_proxy() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt);
    let (red, blue) = red_and_blue(&mut rt);
    let mut mesh = two_sections(red, blue);
    let mut state = ProcMeshRenderState::register(&mut rt, &mesh, Mat4::IDENTITY, DYNAMIC).unwrap();
    let (first, _) = frame(&mut rt);
    assert_eq!(first.proxies_created, 1);
    let (steady, before) = frame(&mut rt);
    assert_eq!(steady.proxies_created, 0);
    assert!(is_reddish(pixel_at(&before, LEFT)) && is_bluish(pixel_at(&before, RIGHT)));
    let corner = Vec3::new(-2.8, 1.3, 0.0);
    assert!(is_reddish(pixel_at(&before, corner)));

    // Shrink the left section towards its centre: same vertex count.
    let shrunk: Vec<Vec3> = mesh.section(0).unwrap().positions().iter().map(|p| LEFT + (*p - LEFT) * 0.5).collect();
    let changes = mesh.update_mesh_section(0, SectionData::positions(&shrunk)).unwrap();
    assert!(changes.transform && !changes.render_state);
    let sent = state.apply(&mut rt, &mesh, &changes).unwrap();
    assert_eq!(sent, RenderUpdate { recreated: None, sections_sent: 1, visibility_sent: 0, bounds_sent: true });
    let (updated, after) = frame(&mut rt);
    assert_eq!(updated.proxies_created, 0, "no proxy recreation");
    assert_eq!(updated.pass(MeshPass::Base).mesh_draw_commands, 2);
    assert!(diff_pixels(&before, &after) > 100, "the GPU buffer changed: {} pixels", diff_pixels(&before, &after));
    assert_eq!(pixel_at(&after, corner), background(&after), "the corner is uncovered");
    assert!(is_reddish(pixel_at(&after, LEFT)));
    assert_eq!(pixel_at(&after, RIGHT), pixel_at(&before, RIGHT), "the other section is untouched");
    // Bounds: the state sent them, the proxy followed the update.
    assert_eq!(state.bounds(), mesh.local_bounds());
    assert_eq!(proxy_state(&mut rt, state.id()).0, mesh.local_bounds());

    // Colors alone: one stream rewritten, the right section turns dark.
    let dark = vec![[40, 40, 40, 255]; mesh.section(1).unwrap().vertex_count()];
    let changes = mesh.update_mesh_section(1, SectionData::default().colors(&dark)).unwrap();
    assert!(!changes.transform);
    let sent = state.apply(&mut rt, &mesh, &changes).unwrap();
    assert_eq!((sent.sections_sent, sent.bounds_sent), (1, false));
    let (colored, darker) = frame(&mut rt);
    assert_eq!(colored.proxies_created, 0);
    let (b, a) = (pixel_at(&after, RIGHT), pixel_at(&darker, RIGHT));
    assert!(a[2] + 40 < b[2], "vertex colors darken the section: {b:?} -> {a:?}");
    assert_clean(&mut rt);
}

#[test]
fn a_section_moved_into_view_is_culled_with_its_new_bounds() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt);
    let (red, _) = red_and_blue(&mut rt);
    let mut mesh = ProcMeshData::new();
    let far = grid(Vec2::new(100.0, -1.0), Vec2::new(102.0, 1.0), 3);
    mesh.create_mesh_section(0, SectionData::new(&far.positions, &far.triangles), false).unwrap();
    mesh.set_material(0, Some(red.into())).unwrap();
    let mut state = ProcMeshRenderState::register(&mut rt, &mesh, Mat4::IDENTITY, DYNAMIC).unwrap();
    let (away, _) = frame(&mut rt);
    assert_eq!(away.visible_primitives, 0, "off screen");

    // Move every vertex into view: outside the bounds it was added with.
    let near = grid(Vec2::new(-1.0, -1.0), Vec2::new(1.0, 1.0), 3);
    let changes = mesh.update_mesh_section(0, SectionData::positions(&near.positions)).unwrap();
    let sent = state.apply(&mut rt, &mesh, &changes).unwrap();
    assert_eq!((sent.recreated, sent.sections_sent, sent.bounds_sent), (None, 1, true));
    let (moved, image) = frame(&mut rt);
    assert_eq!(moved.proxies_created, 0);
    assert_eq!(moved.visible_primitives, 1, "culled with the new bounds");
    assert!(is_reddish(pixel_at(&image, Vec3::ZERO)), "{:?}", pixel_at(&image, Vec3::ZERO));
    assert_clean(&mut rt);
}

#[test]
fn hidden_and_cleared_sections_are_not_drawn() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt);
    let (red, blue) = red_and_blue(&mut rt);
    let mut mesh = two_sections(red, blue);
    let mut state = ProcMeshRenderState::register(&mut rt, &mesh, Mat4::IDENTITY, DYNAMIC).unwrap();
    let (both, original) = frame(&mut rt);
    assert_eq!(both.pass(MeshPass::Base).mesh_draw_commands, 2);

    let changes = mesh.set_mesh_section_visible(1, false).unwrap();
    let sent = state.apply(&mut rt, &mesh, &changes).unwrap();
    assert_eq!((sent.recreated, sent.visibility_sent), (None, 1));
    let (hidden, image) = frame(&mut rt);
    assert_eq!(hidden.proxies_created, 0);
    assert_eq!(hidden.pass(MeshPass::Base).mesh_draw_commands, 1);
    assert_eq!(hidden.pass(MeshPass::DepthPrepass).mesh_draw_commands, 1);
    assert_eq!(hidden.pass(MeshPass::ShadowDepth).mesh_draw_commands, 1);
    assert_eq!(pixel_at(&image, RIGHT), background(&image));
    assert!(is_reddish(pixel_at(&image, LEFT)));
    assert_eq!(proxy_state(&mut rt, state.id()).2, vec![Some(true), Some(false)]);

    let changes = mesh.set_mesh_section_visible(1, true).unwrap();
    state.apply(&mut rt, &mesh, &changes).unwrap();
    let (shown, image) = frame(&mut rt);
    assert_eq!(shown.pass(MeshPass::Base).mesh_draw_commands, 2);
    assert!(image == original, "{} pixels differ", diff_pixels(&image, &original));

    let changes = mesh.clear_mesh_section(0).unwrap();
    let old = state.id();
    let sent = state.apply(&mut rt, &mesh, &changes).unwrap();
    assert_eq!(sent.recreated, Some(RecreateReason::RenderState));
    assert_ne!(state.id(), old);
    let (cleared, image) = frame(&mut rt);
    assert_eq!((cleared.proxies_created, cleared.primitives), (1, 1));
    assert_eq!(cleared.pass(MeshPass::Base).mesh_draw_commands, 1);
    assert_eq!(pixel_at(&image, LEFT), background(&image));
    assert!(is_bluish(pixel_at(&image, RIGHT)));
    assert_eq!(proxy_state(&mut rt, state.id()).2, vec![None, Some(true)]);
    assert_clean(&mut rt);
}

/// Renders `mesh` on the given path through a series of changes; returns
/// each frame's stats and image.
fn path_run(options: ProcMeshProxyOptions) -> Vec<(FrameStats, rhi_vulkan::Image, RenderUpdate)> {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt);
    let (red, blue) = red_and_blue(&mut rt);
    let mut mesh = two_sections(red, blue);
    let mut state = ProcMeshRenderState::register(&mut rt, &mesh, Mat4::IDENTITY, options).unwrap();
    let mut out = Vec::new();
    let mut step = |rt: &mut RenderThread, sent: RenderUpdate| {
        let (stats, image) = frame(rt);
        out.push((stats, image, sent));
    };
    step(&mut rt, RenderUpdate::default());
    step(&mut rt, RenderUpdate::default());
    // Raise and tilt the right section's vertices in place.
    let raised: Vec<Vec3> = mesh.section(1).unwrap().positions().iter().map(|p| *p + Vec3::new(0.0, 0.3, 0.4 + 0.2 * p.x)).collect();
    let changes = mesh.update_mesh_section(1, SectionData::positions(&raised)).unwrap();
    let sent = state.apply(&mut rt, &mesh, &changes).unwrap();
    step(&mut rt, sent);
    let changes = mesh.set_mesh_section_visible(0, false).unwrap();
    let sent = state.apply(&mut rt, &mesh, &changes).unwrap();
    step(&mut rt, sent);
    assert_clean(&mut rt);
    out
}

#[test]
fn static_and_dynamic_draw_paths_give_identical_images() {
    let dynamic = path_run(DYNAMIC);
    let stat = path_run(STATIC);
    for (i, ((_, d, _), (_, s, _))) in dynamic.iter().zip(&stat).enumerate() {
        assert_images_equal(d, s, &format!("frame {i}, dynamic vs static path"));
    }
    // Frame 1, unchanged: the static path builds nothing, the dynamic path
    // its 2 sections x (depth, base, shadow) commands.
    let (d1, s1) = (&dynamic[1].0, &stat[1].0);
    assert_eq!((s1.cached_commands_built, s1.dynamic_commands_built, s1.proxies_created), (0, 0, 0));
    assert_eq!((d1.cached_commands_built, d1.dynamic_commands_built, d1.proxies_created), (0, 6, 0));
    assert_eq!(d1.pass(MeshPass::Base), s1.pass(MeshPass::Base));
    // Frame 2, a vertex update: in place on both paths, nothing rebuilt.
    for run in [&dynamic, &stat] {
        let (stats, _, sent) = &run[2];
        assert_eq!((sent.recreated, sent.sections_sent), (None, 1));
        assert_eq!((stats.proxies_created, stats.cached_commands_built), (0, 0));
    }
    assert!(diff_pixels(&dynamic[1].1, &dynamic[2].1) > 100, "the update shows");
    // Frame 3, a visibility change: a flag on the dynamic path, a new proxy
    // on the static path, cached for the one visible section (depth, shadow,
    // base and wireframe commands: every pass caches).
    assert_eq!((dynamic[3].2.recreated, dynamic[3].0.proxies_created), (None, 0));
    assert_eq!(stat[3].2.recreated, Some(RecreateReason::VisibilityOnStaticPath));
    assert_eq!((stat[3].0.proxies_created, stat[3].0.cached_commands_built), (1, 4));
    assert_eq!(dynamic[3].0.pass(MeshPass::Base).mesh_draw_commands, 1);
}

#[test]
fn wireframe_draws_procedural_sections_on_both_paths() {
    for options in [DYNAMIC, STATIC] {
        let mut rt = render_thread(RenderThreadMode::Threaded);
        sun(&mut rt);
        let (red, blue) = red_and_blue(&mut rt);
        let mesh = two_sections(red, blue);
        ProcMeshRenderState::register(&mut rt, &mesh, Mat4::IDENTITY, options).unwrap();
        rt.set_cvar("r.Wireframe", "1").unwrap();
        let (stats, image) = frame(&mut rt);
        assert_eq!(stats.pass(MeshPass::Base).draws, 0, "{options:?}");
        assert_eq!(stats.pass(MeshPass::Wireframe).draws, 2, "{options:?}");
        let edges = image.rgba8.chunks(4).filter(|p| p[0] > 180 && p[2] > 180).count();
        assert!(edges > 100, "{options:?}: {edges} edge pixels");
        assert_clean(&mut rt);
    }
}

#[test]
fn a_mirrored_transform_still_draws_the_front_faces() {
    let mirror = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    for options in [DYNAMIC, STATIC] {
        let mut rt = render_thread(RenderThreadMode::Threaded);
        sun(&mut rt);
        let (red, blue) = red_and_blue(&mut rt);
        let mesh = two_sections(red, blue);
        let mut state = ProcMeshRenderState::register(&mut rt, &mesh, mirror, options).unwrap();
        let (_, image) = frame(&mut rt);
        // Mirrored in X: red on the right, blue on the left.
        assert!(is_reddish(pixel_at(&image, RIGHT)), "{options:?}: {:?}", pixel_at(&image, RIGHT));
        assert!(is_bluish(pixel_at(&image, LEFT)), "{options:?}: {:?}", pixel_at(&image, LEFT));
        assert_eq!(proxy_state(&mut rt, state.id()).1, !options.static_draw_path);
        // Back to unmirrored and mirrored again, without a new proxy.
        state.set_transform(&mut rt, Mat4::IDENTITY).unwrap();
        let (stats, image) = frame(&mut rt);
        assert_eq!(stats.proxies_created, 0);
        assert!(is_reddish(pixel_at(&image, LEFT)), "{options:?}");
        state.set_transform(&mut rt, mirror).unwrap();
        let (_, image) = frame(&mut rt);
        assert!(is_reddish(pixel_at(&image, RIGHT)), "{options:?}");
        assert_clean(&mut rt);
    }
    // Without the flag, the dynamic batches' flipped triangles are culled:
    // the flag is what keeps them.
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let (red, blue) = red_and_blue(&mut rt);
    let proxy = ProceduralMeshSceneProxy::new(&two_sections(red, blue), DYNAMIC);
    rt.add_primitive(Box::new(proxy), mirror).unwrap();
    let (_, image) = frame(&mut rt);
    assert_eq!(pixel_at(&image, RIGHT), background(&image));
    assert_clean(&mut rt);
}

#[test]
fn inline_and_threaded_modes_give_identical_images() {
    let run = |mode| {
        let mut rt = render_thread(mode);
        sun(&mut rt);
        let (red, blue) = red_and_blue(&mut rt);
        let mut mesh = two_sections(red, blue);
        let mut state = ProcMeshRenderState::register(&mut rt, &mesh, Mat4::IDENTITY, DYNAMIC).unwrap();
        frame(&mut rt);
        let normals = vec![Vec3::new(0.3, 0.0, 1.0).normalize(); mesh.section(0).unwrap().vertex_count()];
        let changes = mesh.update_mesh_section(0, SectionData::default().normals(&normals)).unwrap();
        state.apply(&mut rt, &mesh, &changes).unwrap();
        let (_, image) = frame(&mut rt);
        assert_clean(&mut rt);
        image
    };
    let (threaded, inline) = (run(RenderThreadMode::Threaded), run(RenderThreadMode::Inline));
    assert_images_equal(&threaded, &inline, "threaded vs inline");
}
