//! The procedural mesh proxy on the real device, driven as a user drives
//! it: a `ProceduralMeshComponent` in an engine-core `World`, whose
//! end-of-frame update creates the proxy and sends the changes. In-place
//! updates, bounds, visibility, clearing, both draw paths, wireframe and
//! mirrored transforms. Validation on; zero errors and warnings asserted.

mod common;

use common::*;
use engine_core::{ComponentId, EndOfFrameStats, Transform, World};
use glam::{Vec2, Vec3, Vec4};
use procmesh::{ProcMeshData, ProcMeshProxyOptions, ProceduralMeshComponent, ProceduralMeshSceneProxy, SectionData};
use renderer::*;

const DYNAMIC: ProcMeshProxyOptions = ProcMeshProxyOptions { static_draw_path: false, cast_shadow: true };
const STATIC: ProcMeshProxyOptions = ProcMeshProxyOptions { static_draw_path: true, cast_shadow: true };

/// A world on a render thread of its own, lit by the sun; the red and blue
/// materials.
fn lit_world(mode: RenderThreadMode) -> (World, MaterialId, MaterialId) {
    let mut rt = render_thread(mode);
    sun(&mut rt);
    let (red, blue) = red_and_blue(&mut rt);
    (World::new(Some(rt)), red, blue)
}

/// Spawns `mesh` as a component drawn with `options` at `transform` and
/// sends the end-of-frame update that creates its proxy.
fn spawn(world: &mut World, mesh: ProcMeshData, transform: Transform, options: ProcMeshProxyOptions) -> ComponentId {
    let component = ProceduralMeshComponent::from_mesh(mesh).with_options(options);
    let (_, id) = world.spawn_actor("pmc", Box::new(component), transform).unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 1);
    id
}

/// Runs `f` on the component (a call that must succeed), then the
/// end-of-frame update; returns what the update sent.
fn edit(world: &mut World, id: ComponentId, f: impl FnOnce(&mut ProceduralMeshComponent) -> procmesh::Result<()>) -> EndOfFrameStats {
    world.with_component_mut(id, f).unwrap().unwrap();
    world.send_all_end_of_frame_updates().unwrap()
}

/// The mesh the component holds, read through `f`.
fn mesh_of<R>(world: &World, id: ComponentId, f: impl FnOnce(&ProcMeshData) -> R) -> R {
    world.component::<ProceduralMeshComponent>(id).unwrap().with_mesh(f)
}

fn primitive(world: &World, id: ComponentId) -> PrimitiveId {
    world.primitive_id(id).unwrap().expect("a proxy")
}

fn rt(world: &mut World) -> &mut RenderThread {
    world.render_thread().expect("a world with a render thread")
}

/// The proxy of `id` as the render thread holds it: (bounds, mirrored,
/// visibility of sections 0 and 1).
fn proxy_state(world: &mut World, id: ComponentId) -> (procmesh::Aabb, bool, Vec<Option<bool>>) {
    let pid = primitive(world, id);
    rt(world)
        .with_context(move |ctx| {
            let proxy = ctx.scene.proxy(pid).expect("live proxy");
            let p = proxy.as_any().downcast_ref::<ProceduralMeshSceneProxy>().expect("a procedural mesh proxy");
            (p.bounds(), p.is_mirrored(), (0..2).map(|i| p.is_section_visible(i)).collect())
        })
        .unwrap()
}

/// What an end-of-frame update sent: (proxies created, dynamic data
/// snapshots, transforms with bounds).
fn sent(eof: EndOfFrameStats) -> (usize, usize, usize) {
    (eof.proxies_created, eof.dynamic_data_sent, eof.transforms_sent)
}

/// Moves the component to `t` the way a user does, through the world
/// alone; returns what the end-of-frame update sent.
fn move_to(world: &mut World, id: ComponentId, t: Transform) -> EndOfFrameStats {
    world.set_relative_transform(id, t).unwrap();
    world.send_all_end_of_frame_updates().unwrap()
}

#[test]
fn an_update_of_the_same_vertex_count_rewrites_the_buffers_without_a_new_proxy() {
    let (mut world, red, blue) = lit_world(RenderThreadMode::Threaded);
    let id = spawn(&mut world, two_sections(red, blue), Transform::IDENTITY, DYNAMIC);
    let pid = primitive(&world, id);
    let (first, _) = frame(rt(&mut world));
    assert_eq!(first.proxies_created, 1);
    let (steady, before) = frame(rt(&mut world));
    assert_eq!(steady.proxies_created, 0);
    assert!(is_reddish(pixel_at(&before, LEFT)) && is_bluish(pixel_at(&before, RIGHT)));
    let corner = Vec3::new(-2.8, 1.3, 0.0);
    assert!(is_reddish(pixel_at(&before, corner)));

    // Shrink the left section towards its centre: same vertex count.
    let shrunk: Vec<Vec3> = mesh_of(&world, id, |m| m.section(0).unwrap().positions().iter().map(|p| LEFT + (*p - LEFT) * 0.5).collect());
    let eof = edit(&mut world, id, |c| c.update_mesh_section(0, SectionData::positions(&shrunk)));
    assert_eq!(sent(eof), (0, 1, 1), "the section's streams to the existing proxy, the moved bounds with the transform");
    assert_eq!(primitive(&world, id), pid, "the same proxy");
    let (updated, after) = frame(rt(&mut world));
    assert_eq!(updated.proxies_created, 0, "no proxy recreation");
    assert_eq!(updated.pass(MeshPass::Base).mesh_draw_commands, 2);
    assert!(diff_pixels(&before, &after) > 100, "the GPU buffer changed: {} pixels", diff_pixels(&before, &after));
    assert_eq!(pixel_at(&after, corner), background(&after), "the corner is uncovered");
    assert!(is_reddish(pixel_at(&after, LEFT)));
    assert_eq!(pixel_at(&after, RIGHT), pixel_at(&before, RIGHT), "the other section is untouched");
    // Bounds: the proxy followed the update.
    let bounds = mesh_of(&world, id, |m| m.local_bounds());
    assert_eq!(proxy_state(&mut world, id).0, bounds);

    // Colors alone: one stream rewritten, the right section turns dark.
    let dark = vec![[40, 40, 40, 255]; mesh_of(&world, id, |m| m.section(1).unwrap().vertex_count())];
    let eof = edit(&mut world, id, |c| c.update_mesh_section(1, SectionData::default().colors(&dark)));
    assert_eq!(sent(eof), (0, 1, 0), "in place, the bounds unchanged");
    let (colored, darker) = frame(rt(&mut world));
    assert_eq!(colored.proxies_created, 0);
    let (b, a) = (pixel_at(&after, RIGHT), pixel_at(&darker, RIGHT));
    assert!(a[2] + 40 < b[2], "vertex colors darken the section: {b:?} -> {a:?}");
    assert_clean(rt(&mut world));
}

#[test]
fn a_section_moved_into_view_is_culled_with_its_new_bounds() {
    let (mut world, red, _) = lit_world(RenderThreadMode::Threaded);
    let mut mesh = ProcMeshData::new();
    let far = grid(Vec2::new(100.0, -1.0), Vec2::new(102.0, 1.0), 3);
    mesh.create_mesh_section(0, SectionData::new(&far.positions, &far.triangles), false).unwrap();
    mesh.set_material(0, Some(red.into())).unwrap();
    let id = spawn(&mut world, mesh, Transform::IDENTITY, DYNAMIC);
    let (away, _) = frame(rt(&mut world));
    assert_eq!(away.visible_primitives, 0, "off screen");

    // Move every vertex into view: outside the bounds it was added with.
    let near = grid(Vec2::new(-1.0, -1.0), Vec2::new(1.0, 1.0), 3);
    let eof = edit(&mut world, id, |c| c.update_mesh_section(0, SectionData::positions(&near.positions)));
    assert_eq!(sent(eof), (0, 1, 1), "in place, with the new bounds");
    let (moved, image) = frame(rt(&mut world));
    assert_eq!(moved.proxies_created, 0);
    assert_eq!(moved.visible_primitives, 1, "culled with the new bounds");
    assert!(is_reddish(pixel_at(&image, Vec3::ZERO)), "{:?}", pixel_at(&image, Vec3::ZERO));
    assert_clean(rt(&mut world));
}

#[test]
fn hidden_and_cleared_sections_are_not_drawn() {
    let (mut world, red, blue) = lit_world(RenderThreadMode::Threaded);
    let id = spawn(&mut world, two_sections(red, blue), Transform::IDENTITY, DYNAMIC);
    let (both, original) = frame(rt(&mut world));
    assert_eq!(both.pass(MeshPass::Base).mesh_draw_commands, 2);

    let eof = edit(&mut world, id, |c| c.set_mesh_section_visible(1, false));
    assert_eq!(sent(eof), (0, 1, 0), "a visibility message to the existing proxy");
    let (hidden, image) = frame(rt(&mut world));
    assert_eq!(hidden.proxies_created, 0);
    assert_eq!(hidden.pass(MeshPass::Base).mesh_draw_commands, 1);
    assert_eq!(hidden.pass(MeshPass::DepthPrepass).mesh_draw_commands, 1);
    assert_eq!(hidden.pass(MeshPass::ShadowDepth).mesh_draw_commands, 1);
    assert_eq!(pixel_at(&image, RIGHT), background(&image));
    assert!(is_reddish(pixel_at(&image, LEFT)));
    assert_eq!(proxy_state(&mut world, id).2, vec![Some(true), Some(false)]);

    let eof = edit(&mut world, id, |c| c.set_mesh_section_visible(1, true));
    assert_eq!(sent(eof), (0, 1, 0));
    let (shown, image) = frame(rt(&mut world));
    assert_eq!(shown.pass(MeshPass::Base).mesh_draw_commands, 2);
    assert!(image == original, "{} pixels differ", diff_pixels(&image, &original));

    // Clearing is render state: a new proxy replaces the old one.
    let old = primitive(&world, id);
    let eof = edit(&mut world, id, |c| c.clear_mesh_section(0));
    assert_eq!((eof.proxies_created, eof.proxies_removed, eof.dynamic_data_sent), (1, 1, 0));
    assert_ne!(primitive(&world, id), old);
    let (cleared, image) = frame(rt(&mut world));
    assert_eq!((cleared.proxies_created, cleared.primitives), (1, 1));
    assert_eq!(cleared.pass(MeshPass::Base).mesh_draw_commands, 1);
    assert_eq!(pixel_at(&image, LEFT), background(&image));
    assert!(is_bluish(pixel_at(&image, RIGHT)));
    assert_eq!(proxy_state(&mut world, id).2, vec![None, Some(true)]);
    assert_clean(rt(&mut world));
}

/// One frame of [`path_run`]: its stats and image, what the end-of-frame
/// update before it sent, and whether the component's proxy was replaced.
struct Step {
    stats: FrameStats,
    image: rhi_vulkan::Image,
    sent: EndOfFrameStats,
    new_proxy: bool,
}

/// Renders `mesh` on the given path through a series of changes; returns
/// each frame.
fn path_run(options: ProcMeshProxyOptions) -> Vec<Step> {
    let (mut world, red, blue) = lit_world(RenderThreadMode::Threaded);
    let id = spawn(&mut world, two_sections(red, blue), Transform::IDENTITY, options);
    let mut out = Vec::new();
    let mut pid = primitive(&world, id);
    let mut step = |world: &mut World, sent: EndOfFrameStats| {
        let (stats, image) = frame(rt(world));
        let now = primitive(world, id);
        out.push(Step { stats, image, sent, new_proxy: std::mem::replace(&mut pid, now) != now });
    };
    step(&mut world, EndOfFrameStats::default());
    step(&mut world, EndOfFrameStats::default());
    // Raise and tilt the right section's vertices in place.
    let raised: Vec<Vec3> =
        mesh_of(&world, id, |m| m.section(1).unwrap().positions().iter().map(|p| *p + Vec3::new(0.0, 0.3, 0.4 + 0.2 * p.x)).collect());
    let eof = edit(&mut world, id, |c| c.update_mesh_section(1, SectionData::positions(&raised)));
    step(&mut world, eof);
    let eof = edit(&mut world, id, |c| c.set_mesh_section_visible(0, false));
    step(&mut world, eof);
    assert_clean(rt(&mut world));
    out
}

#[test]
fn static_and_dynamic_draw_paths_give_identical_images() {
    let dynamic = path_run(DYNAMIC);
    let stat = path_run(STATIC);
    for (i, (d, s)) in dynamic.iter().zip(&stat).enumerate() {
        assert_images_equal(&d.image, &s.image, &format!("frame {i}, dynamic vs static path"));
    }
    // Frame 1, unchanged: the static path builds nothing, the dynamic path
    // its 2 sections x (depth, base, shadow) commands.
    let (d1, s1) = (&dynamic[1].stats, &stat[1].stats);
    assert_eq!((s1.cached_commands_built, s1.dynamic_commands_built, s1.proxies_created), (0, 0, 0));
    assert_eq!((d1.cached_commands_built, d1.dynamic_commands_built, d1.proxies_created), (0, 6, 0));
    assert_eq!(d1.pass(MeshPass::Base), s1.pass(MeshPass::Base));
    // Frame 2, a vertex update: in place on both paths, nothing rebuilt.
    for run in [&dynamic, &stat] {
        let s = &run[2];
        assert_eq!((s.sent.proxies_created, s.sent.dynamic_data_sent, s.new_proxy), (0, 1, false));
        assert_eq!((s.stats.proxies_created, s.stats.cached_commands_built), (0, 0));
    }
    assert!(diff_pixels(&dynamic[1].image, &dynamic[2].image) > 100, "the update shows");
    // Frame 3, a visibility change: a message to the existing proxy on the
    // dynamic path; on the static path a new proxy (the cache holds which
    // sections draw), cached for the one visible section (depth, shadow,
    // base and wireframe commands: every pass caches).
    let (d3, s3) = (&dynamic[3], &stat[3]);
    assert_eq!((d3.sent.proxies_created, d3.sent.dynamic_data_sent, d3.new_proxy, d3.stats.proxies_created), (0, 1, false, 0));
    assert_eq!((s3.sent.proxies_created, s3.sent.proxies_removed, s3.sent.dynamic_data_sent, s3.new_proxy), (1, 1, 0, true));
    assert_eq!((s3.stats.proxies_created, s3.stats.cached_commands_built), (1, 4));
    assert_eq!(d3.stats.pass(MeshPass::Base).mesh_draw_commands, 1);
}

#[test]
fn wireframe_draws_procedural_sections_on_both_paths() {
    for options in [DYNAMIC, STATIC] {
        let (mut world, red, blue) = lit_world(RenderThreadMode::Threaded);
        spawn(&mut world, two_sections(red, blue), Transform::IDENTITY, options);
        rt(&mut world).set_cvar(renderer::cvars::WIREFRAME, "1").unwrap();
        let (stats, image) = frame(rt(&mut world));
        assert_eq!(stats.pass(MeshPass::Base).draws, 0, "{options:?}");
        assert_eq!(stats.pass(MeshPass::Wireframe).draws, 2, "{options:?}");
        let edges = image.rgba8.chunks(4).filter(|p| p[0] > 180 && p[2] > 180).count();
        assert!(edges > 100, "{options:?}: {edges} edge pixels");
        assert_clean(rt(&mut world));
    }
}

#[test]
fn a_mirrored_transform_still_draws_the_front_faces() {
    let mirror = Transform { scale: Vec3::new(-1.0, 1.0, 1.0), ..Transform::IDENTITY };
    for options in [DYNAMIC, STATIC] {
        let (mut world, red, blue) = lit_world(RenderThreadMode::Threaded);
        let id = spawn(&mut world, two_sections(red, blue), mirror, options);
        let (_, image) = frame(rt(&mut world));
        // Mirrored in X: red on the right, blue on the left.
        assert!(is_reddish(pixel_at(&image, RIGHT)), "{options:?}: {:?}", pixel_at(&image, RIGHT));
        assert!(is_bluish(pixel_at(&image, LEFT)), "{options:?}: {:?}", pixel_at(&image, LEFT));
        assert!(proxy_state(&mut world, id).1, "{options:?}: the proxy was told its transform on add");
        // Back to unmirrored and mirrored again, without a new proxy and
        // without telling the component anything: the transform only; the
        // renderer tells the proxy.
        for (t, red_at, mirrored) in [(Transform::IDENTITY, LEFT, false), (mirror, RIGHT, true)] {
            let eof = move_to(&mut world, id, t);
            assert_eq!(sent(eof), (0, 0, 1), "{options:?}");
            let (stats, image) = frame(rt(&mut world));
            assert_eq!(stats.proxies_created, 0);
            assert!(is_reddish(pixel_at(&image, red_at)), "{options:?}, mirrored {mirrored}");
            assert!(is_bluish(pixel_at(&image, if mirrored { LEFT } else { RIGHT })), "{options:?}, mirrored {mirrored}");
            assert_eq!(proxy_state(&mut world, id).1, mirrored);
        }
        assert_clean(rt(&mut world));
    }
    // A bare proxy added straight to the render thread, no component
    // involved: the renderer's on-add transform is all it needs.
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let (red, blue) = red_and_blue(&mut rt);
    let proxy = ProceduralMeshSceneProxy::new(&two_sections(red, blue), DYNAMIC);
    rt.add_primitive(Box::new(proxy), mirror.to_mat4()).unwrap();
    let (_, image) = frame(&mut rt);
    assert!(is_reddish(pixel_at(&image, RIGHT)), "{:?}", pixel_at(&image, RIGHT));
    assert!(is_bluish(pixel_at(&image, LEFT)));
    assert_clean(&mut rt);
}

#[test]
fn inline_and_threaded_modes_give_identical_images() {
    let run = |mode| {
        let (mut world, red, blue) = lit_world(mode);
        let id = spawn(&mut world, two_sections(red, blue), Transform::IDENTITY, DYNAMIC);
        frame(rt(&mut world));
        let normals = vec![Vec3::new(0.3, 0.0, 1.0).normalize(); mesh_of(&world, id, |m| m.section(0).unwrap().vertex_count())];
        let eof = edit(&mut world, id, |c| c.update_mesh_section(0, SectionData::default().normals(&normals)));
        assert_eq!(sent(eof), (0, 1, 0));
        let (_, image) = frame(rt(&mut world));
        assert_clean(rt(&mut world));
        image
    };
    let (threaded, inline) = (run(RenderThreadMode::Threaded), run(RenderThreadMode::Inline));
    assert_images_equal(&threaded, &inline, "threaded vs inline");
}

/// A flat square of `n` × `n` vertices centred on `center`, `size` wide.
fn square(center: Vec3, size: f32) -> (Vec<Vec3>, Vec<u32>) {
    let g = grid(Vec2::splat(-size / 2.0), Vec2::splat(size / 2.0), 3);
    (g.positions.iter().map(|p| *p + center).collect(), g.triangles)
}

#[test]
fn a_shadowed_light_re_renders_only_for_the_sections_that_change_its_shadow() {
    let mut thread = render_thread(RenderThreadMode::Threaded);
    let (red, blue) = red_and_blue(&mut thread);
    let mut glass = Material::colored(Vec4::new(0.8, 0.9, 1.0, 0.4));
    glass.blend_mode = BlendMode::Translucent;
    let glass = thread.create_material(glass).unwrap();
    thread
        .add_light(Light::Spot(SpotLight {
            position: Vec3::new(0.0, 0.0, 4.0),
            direction: Vec3::NEG_Z,
            intensity: 40.0,
            radius: 6.0,
            outer_cone: 0.8,
            cast_shadows: true,
            ..Default::default()
        }))
        .unwrap();
    let mut world = World::new(Some(thread));
    // 0: the ground under the light; 1: a caster above it; 2: a strip out
    // of the light's reach; 3: translucent glass inside it.
    let parts = [
        (Vec3::ZERO, 6.0, red),
        (Vec3::new(0.3, 0.2, 1.5), 1.0, blue),
        (Vec3::new(20.0, 0.0, 0.0), 1.0, red),
        (Vec3::new(-1.0, 1.0, 0.5), 1.0, glass),
    ];
    let mut mesh = ProcMeshData::new();
    for (i, (center, size, material)) in parts.iter().enumerate() {
        let (positions, triangles) = square(*center, *size);
        mesh.create_mesh_section(i, SectionData::new(&positions, &triangles), false).unwrap();
        mesh.set_material(i, Some((*material).into())).unwrap();
    }
    let id = spawn(&mut world, mesh, Transform::IDENTITY, DYNAMIC);
    let tiles = |world: &mut World| {
        let (stats, image) = frame(rt(world));
        (stats.shadow.tiles_rendered, stats.shadow.tiles_cached, image)
    };
    let shifted = |world: &World, section: usize, by: Vec3| -> Vec<Vec3> {
        mesh_of(world, id, |m| m.section(section).unwrap().positions().iter().map(|p| *p + by).collect())
    };
    assert_eq!(tiles(&mut world).0, 1, "the first frame renders the spot light's tile");
    assert_eq!(tiles(&mut world).0, 0, "a procedural mesh on the dynamic path does not re-render it every frame");
    for (section, what) in [(2, "a section out of the light's reach"), (3, "a translucent section (no shadow)")] {
        let moved = shifted(&world, section, Vec3::new(0.2, 0.0, 0.0));
        edit(&mut world, id, |c| c.update_mesh_section(section, SectionData::positions(&moved)));
        assert_eq!(tiles(&mut world).0, 0, "{what} moved: the tile is kept");
    }
    let dark = vec![[40, 40, 40, 255]; 9];
    edit(&mut world, id, |c| c.update_mesh_section(1, SectionData::default().colors(&dark)));
    assert_eq!(tiles(&mut world).0, 0, "new colours move no geometry");
    // The caster moves: its shadow with it.
    let moved = shifted(&world, 1, Vec3::new(-0.6, 0.0, 0.0));
    edit(&mut world, id, |c| c.update_mesh_section(1, SectionData::positions(&moved)));
    let (rendered, cached, image) = tiles(&mut world);
    assert_eq!((rendered, cached), (1, 0), "the caster moved inside the light's reach");
    rt(&mut world).set_cvar(renderer::cvars::SHADOW_CACHE, "0").unwrap();
    let (_, _, uncached) = tiles(&mut world);
    assert_images_equal(&image, &uncached, "the re-rendered tile shows the moved caster's shadow");
    rt(&mut world).set_cvar(renderer::cvars::SHADOW_CACHE, "1").unwrap();
    tiles(&mut world);
    edit(&mut world, id, |c| c.set_mesh_section_visible(1, false));
    assert_eq!(tiles(&mut world).0, 1, "the caster hidden: its shadow goes");
    assert_clean(rt(&mut world));
}
