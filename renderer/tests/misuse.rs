//! Misuse of the renderer's public API, as a real program makes it by
//! accident, on the real device with validation on: every call ends in a
//! typed error that changes nothing (or is applied in part, for a queued
//! batch, with the failure reported), never a panic, abort or hang.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Rect;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Runs `f` on a thread; fails the test if it panics or takes past `limit` (a hang).
fn within(limit: Duration, what: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(limit) {
        Ok(()) => handle.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => std::panic::resume_unwind(handle.join().unwrap_err()),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no answer after {limit:?} (a hang)"),
    }
}

/// An unlit material whose shader emits `color` (each channel 0 or 1).
fn emissive_material(name: &str, color: [u8; 3]) -> Material {
    let [r, g, b] = color;
    let wgsl = format!(
        "fn material_main(i: MaterialInput) -> MaterialOutput {{\n    var o = default_material(i);\n    o.base_color = vec3<f32>(0.0);\n    o.specular = 0.0;\n    o.emissive = vec3<f32>({r}.0, {g}.0, {b}.0);\n    return o;\n}}\n"
    );
    Material { shader: MaterialShader::new(name, &wgsl), ..Material::default() }
}

/// One of the 7 colors with channels 0 or 1 that are not black.
fn color_bits(n: u32) -> [u8; 3] {
    let k = n % 7 + 1;
    [(k & 1) as u8, ((k >> 1) & 1) as u8, ((k >> 2) & 1) as u8]
}

/// The image's centre pixel is `color` (sRGB 0 or 255 per channel: the
/// emissive as it is, with `r.Tonemapper=0`).
fn assert_centre(image: &rhi_vulkan::Image, color: [u8; 3], what: &str) {
    let i = ((H / 2 * W + W / 2) * 4) as usize;
    let p = &image.rgba8[i..i + 3];
    let want: Vec<u8> = color.iter().map(|c| c * 255).collect();
    assert!(p.iter().zip(&want).all(|(a, b)| a.abs_diff(*b) <= 2), "{what}: centre {p:?}, want {want:?}");
}

#[test]
fn material_ids_never_created_are_rejected() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    for id in [MaterialId(u32::MAX), MaterialId(1), MaterialId(7)] {
        let r = rt.set_material(id, Material::colored(Vec4::ONE));
        assert!(matches!(r, Err(RendererError::UnknownMaterial(i)) if i == id), "{id:?}: {r:?}");
        assert!(matches!(rt.destroy_material(id), Err(RendererError::UnknownMaterial(_))));
    }
    assert!(matches!(rt.destroy_material(MaterialId::DEFAULT), Err(RendererError::UnknownMaterial(MaterialId::DEFAULT))));
    let red = rt.create_material(Material::colored(Vec4::new(1.0, 0.0, 0.0, 1.0))).unwrap();
    assert_eq!(red, MaterialId(1));
    rt.set_material(red, Material::colored(Vec4::new(0.0, 1.0, 0.0, 1.0))).unwrap();
    rt.set_material(MaterialId::DEFAULT, Material::default()).unwrap();
    assert!(rt.set_material(MaterialId(2), Material::default()).is_err(), "the next id is not created yet");
    // The render-thread side checks too: a scene never sizes its tables by an id.
    let (far, len) = rt
        .with_context(|ctx| (ctx.scene.set_material(MaterialId(u32::MAX), Material::default()).is_err(), ctx.scene.materials.len()))
        .unwrap();
    assert!(far);
    assert_eq!(len, 2);
    cube_grid(&mut rt, 4, &[red], 1.5);
    frame(&mut rt, &family(vec![top_view(10.0)]));
    assert_clean(&mut rt);
}

#[test]
fn a_destroyed_material_id_never_draws_with_the_material_that_reuses_its_slot() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let fam = family(vec![top_view(10.0)]);
    let mesh = cube_mesh();
    let scale = Mat4::from_scale(Vec3::splat(4.0));
    let cube =
        |rt: &mut RenderThread, m: MaterialId| rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![m])), scale).unwrap();
    // Both materials share the default shader (and so the pipeline): only
    // the GPU table's entry, indexed by the slot, tells them apart.
    let red = rt.create_material(Material::colored(Vec4::new(1.0, 0.0, 0.0, 1.0))).unwrap();
    let held = cube(&mut rt, red);
    frame(&mut rt, &fam);
    rt.destroy_material(red).unwrap();
    let green = rt.create_material(Material::colored(Vec4::new(0.0, 1.0, 0.0, 1.0))).unwrap();
    assert_eq!(green.slot(), red.slot(), "the destroyed material's slot is reused");
    assert_ne!(green, red, "under a new id");
    // The stale id is refused and changes nothing...
    assert!(matches!(rt.set_material(red, Material::colored(Vec4::ONE)), Err(RendererError::UnknownMaterial(i)) if i == red));
    assert!(matches!(rt.destroy_material(red), Err(RendererError::UnknownMaterial(i)) if i == red));
    // ...and a primitive still holding it draws with the default material, not green.
    let (_, stale) = frame(&mut rt, &fam);
    rt.remove_primitive(held).unwrap();
    let plain = cube(&mut rt, MaterialId::DEFAULT);
    let (_, default) = frame(&mut rt, &fam);
    assert_images_equal(&stale, &default, "a stale material id draws as the default material");
    rt.remove_primitive(plain).unwrap();
    cube(&mut rt, green);
    let (_, with_green) = frame(&mut rt, &fam);
    let i = ((H / 2 * W + W / 2) * 4) as usize;
    let p = &with_green.rgba8[i..i + 3];
    // (ACES desaturates bright colors: green dominates, the others are not 0.)
    assert!(p[1] > 100 && p[1] > p[0] + 40 && p[1] > p[2] + 40, "the new material draws green: {p:?}");
    // Churn: the table stays as large as the most materials alive at once.
    for i in 0..200 {
        let m = rt.create_material(Material::colored(Vec4::new(i as f32 / 200.0, 0.0, 1.0, 1.0))).unwrap();
        rt.destroy_material(m).unwrap();
    }
    frame(&mut rt, &fam);
    let slots = rt.with_context(|ctx| ctx.scene.materials.len()).unwrap();
    assert!(slots <= 3, "{slots} table entries for at most 3 live materials");
    assert_clean(&mut rt);
}

const BROKEN_WGSL: &str = "// A material with a typo.
fn material_main(in: MaterialInput) -> MaterialOutput {
    var out = default_material(in);
    out.roughness = 0.5 * roughnes;
    return out;
}
";

#[test]
fn a_material_that_does_not_compile_is_rejected_at_once_saying_where() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let broken = Material { shader: MaterialShader::new("typo.wgsl", BROKEN_WGSL), ..Material::default() };
    let e = rt.create_material(broken.clone()).unwrap_err();
    let RendererError::MaterialShader { material, error } = &e else { panic!("{e:?}") };
    assert_eq!(material, "typo.wgsl");
    assert_eq!((error.file.as_str(), error.line, error.column), ("typo.wgsl", 4, 27), "{e}");
    assert!(e.to_string().contains("typo.wgsl:4:27"), "{e}");
    // Nothing was created: the next material gets the id the broken one would have.
    let good = rt.create_material(Material::colored(Vec4::ONE)).unwrap();
    assert_eq!(good, MaterialId(1));
    let e = rt.set_material(good, broken.clone().with_blend(BlendMode::Translucent)).unwrap_err();
    assert!(e.to_string().contains("typo.wgsl:4:27"), "{e}");
    // Also on the render-thread side.
    let rejected = rt.with_context(move |ctx| ctx.scene.set_material(MaterialId(1), broken).is_err()).unwrap();
    assert!(rejected);
    // The scene still renders, every frame.
    let ids = cube_grid(&mut rt, 9, &[good], 1.5);
    let fam = family(vec![top_view(10.0)]);
    frame(&mut rt, &fam);
    rt.update_primitive_transform(ids[0], Mat4::from_translation(Vec3::new(0.5, 0.0, 0.0))).unwrap();
    let (stats, _) = frame(&mut rt, &fam);
    assert_eq!(stats.failed_updates, 0);
    assert_eq!(rt.frames_failed(), 0, "{:?}", rt.last_frame_error());
    assert_clean(&mut rt);
}

/// A cube whose dynamic data is refused when it says so.
struct PickyCube {
    inner: StaticMeshSceneProxy,
    accepted: Arc<AtomicU64>,
}

impl PrimitiveSceneProxy for PickyCube {
    fn local_bounds(&self) -> Bounds {
        self.inner.local_bounds()
    }
    fn view_relevance(&self, view: &SceneView) -> ViewRelevance {
        self.inner.view_relevance(view)
    }
    fn draw_static_elements(&self, out: &mut Vec<MeshBatch>) {
        self.inner.draw_static_elements(out)
    }
    fn create_render_resources(&mut self, device: &rhi_vulkan::Device) -> rhi_vulkan::Result<()> {
        self.inner.create_render_resources(device)
    }
    fn release_render_resources(&mut self, device: &rhi_vulkan::Device) {
        self.inner.release_render_resources(device)
    }
    fn update_dynamic_data(&mut self, data: Box<dyn std::any::Any + Send>, _ctx: &mut ProxyUpdateContext<'_>) -> rhi_vulkan::Result<()> {
        match data.downcast::<bool>() {
            Ok(ok) if *ok => {
                self.accepted.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            _ => Err(rhi_vulkan::RhiError::InvalidDesc("refused".into())),
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The batch commands end-of-frame updates send (adds, transforms, render
/// settings, light transforms) refuse a bad item alone: it is returned
/// with why and counted in the next frame's `failed_updates`, and every
/// other item of the batch arrives (before, one bad item refused the whole
/// batch, and the frame's other moves were lost for good).
#[test]
fn a_batch_command_refuses_a_bad_item_alone() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let ids = cube_grid(&mut rt, 3, &[MaterialId::DEFAULT], 2.0);
    let fam = family(vec![top_view(12.0)]);
    frame(&mut rt, &fam);
    // Transforms: the middle one overflows its bounds to infinity.
    let at = |x: f32| Mat4::from_translation(Vec3::new(x, 0.5, 0.0));
    let huge = Mat4::from_scale(Vec3::splat(1e38));
    let moves = vec![
        (ids[0], at(-1.0), None),
        (ids[1], huge, Some(Bounds::from_box(Vec3::splat(-1.0), Vec3::splat(1.0)))),
        (ids[2], at(1.0), None),
    ];
    let refused = rt.update_primitive_transforms(moves).unwrap();
    assert_eq!(refused.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [ids[1]]);
    assert!(matches!(refused[0].1, RendererError::InvalidTransform { .. }), "{:?}", refused[0].1);
    // Render settings: one invalid beside a valid one.
    let bad = PrimitiveRenderSettings { max_draw_distance: f32::NAN, ..Default::default() };
    let refused = rt
        .set_primitive_settings(vec![
            (ids[0], bad),
            (ids[2], PrimitiveRenderSettings { translucency_sort_priority: 3, ..Default::default() }),
        ])
        .unwrap();
    assert_eq!(refused.len(), 1);
    // Adds: a NaN transform refused, the other added.
    let (good_id, bad_id) = (PrimitiveId::new(), PrimitiveId::new());
    let cube = || Box::new(StaticMeshSceneProxy::new(cube_mesh(), vec![MaterialId::DEFAULT])) as Box<dyn PrimitiveSceneProxy>;
    let refused = rt.add_primitives_with_ids(vec![(bad_id, cube(), Mat4::from_scale(Vec3::NAN)), (good_id, cube(), at(4.0))]).unwrap();
    assert_eq!(refused.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [bad_id]);
    let (stats, _) = frame(&mut rt, &fam);
    assert_eq!(stats.failed_updates, 3, "each refusal counts once");
    let (placed, added, refused_known) = rt
        .with_context(move |ctx| {
            let s = &ctx.scene;
            ((s.local_to_world(ids[0]), s.local_to_world(ids[2])), s.local_to_world(good_id).is_some(), s.local_to_world(bad_id).is_some())
        })
        .unwrap();
    assert_eq!(placed, (Some(at(-1.0)), Some(at(1.0))), "the batch's other moves arrived");
    assert!(added && !refused_known, "the good add arrived, the bad one did not");
    // Light transforms: a stationary light may not move; the movable one does.
    let movable = rt.add_light(Light::Point(PointLight { position: Vec3::new(0.0, 0.0, 1.0), ..Default::default() })).unwrap();
    let post = rt.add_light(Light::Point(PointLight { mobility: Mobility::Stationary, ..Default::default() })).unwrap();
    let refused = rt.update_light_transforms(vec![(post, at(2.0)), (movable, at(-3.0))]).unwrap();
    assert!(matches!(refused.as_slice(), [(id, RendererError::InvalidLight { .. })] if *id == post), "{refused:?}");
    let (stats, _) = frame(&mut rt, &fam);
    assert_eq!(stats.failed_updates, 1);
    let positions: Vec<Vec3> = rt
        .with_context(|ctx| ctx.scene.lights().filter_map(|l| if let Light::Point(p) = l { Some(p.position) } else { None }).collect())
        .unwrap();
    assert!(positions.contains(&Vec3::new(-3.0, 0.5, 0.0)), "the movable light moved: {positions:?}");
    assert!(positions.contains(&Vec3::ZERO), "the stationary light stayed: {positions:?}");
    assert_clean(&mut rt);
}

/// Textures waiting in the render-command queue are bounded by bytes, not
/// only by count: with the render thread held up, four 256 KiB textures
/// fit a 1 MiB limit and a fifth waits until the queue drains (before, a
/// queue of `create_texture`s could hold many GiB).
#[test]
fn textures_waiting_in_the_queue_are_bounded_by_bytes() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_queue_byte_limit(1 << 20);
    let (tx, rx) = mpsc::channel::<()>();
    rt.enqueue_render_command(move |_| {
        let _ = rx.recv_timeout(Duration::from_secs(60));
    })
    .unwrap();
    let released = Arc::new(AtomicBool::new(false));
    let releaser = {
        let released = released.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            released.store(true, Ordering::SeqCst);
            let _ = tx.send(());
        })
    };
    let texture = |n: u8| Texture2D::new("queued", 256, 256, TextureFormat::Rgba8Unorm, vec![n; 256 * 256 * 4]).without_mips();
    for n in 0..4 {
        rt.create_texture(texture(n)).unwrap();
        assert!(rt.queued_bytes() <= rt.queue_byte_limit(), "{} bytes queued", rt.queued_bytes());
    }
    assert_eq!(rt.queued_bytes(), 1 << 20);
    rt.create_texture(texture(4)).unwrap();
    assert!(released.load(Ordering::SeqCst), "the fifth texture waited for the queue to drain");
    releaser.join().unwrap();
    rt.flush().unwrap();
    assert_eq!(rt.queued_bytes(), 0, "every texture's bytes given back once it was made");
    assert_clean(&mut rt);
}

/// A mesh's render data shared by two render threads (two devices): the
/// second device's proxy is refused (its add a failed update naming the
/// other device) instead of drawing with the first device's buffers, and
/// both keep rendering cleanly.
#[test]
fn mesh_render_data_is_refused_on_a_second_device() {
    let mut first = render_thread(RenderThreadMode::Threaded);
    let mut second = render_thread(RenderThreadMode::Threaded);
    let mesh = cube_mesh();
    let fam = family(vec![top_view(6.0)]);
    first.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![MaterialId::DEFAULT])), Mat4::IDENTITY).unwrap();
    let (stats, _) = frame(&mut first, &fam);
    assert_eq!((stats.failed_updates, stats.visible_primitives), (0, 1));
    second.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![MaterialId::DEFAULT])), Mat4::IDENTITY).unwrap();
    let (stats, _) = frame(&mut second, &fam);
    assert_eq!((stats.failed_updates, stats.visible_primitives), (1, 0), "the second device's proxy is refused");
    let errors = second.with_context(|ctx| ctx.scene.update_errors().to_vec()).unwrap();
    assert!(errors.iter().any(|e| e.contains("another device")), "{errors:?}");
    // Render data made again for the second device draws there.
    let own = StaticMeshRenderData::new(mesh.lods().to_vec()).unwrap();
    second.add_primitive(Box::new(StaticMeshSceneProxy::new(own, vec![MaterialId::DEFAULT])), Mat4::IDENTITY).unwrap();
    let (stats, _) = frame(&mut second, &fam);
    assert_eq!((stats.failed_updates, stats.visible_primitives), (0, 1));
    let (stats, _) = frame(&mut first, &fam);
    assert_eq!(stats.visible_primitives, 1, "the first device still draws its own");
    assert_clean(&mut first);
    assert_clean(&mut second);
}

#[test]
fn one_bad_update_does_not_drop_the_rest_of_the_batch() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let accepted = Arc::new(AtomicU64::new(0));
    let picky = |accepted: &Arc<AtomicU64>| {
        Box::new(PickyCube { inner: StaticMeshSceneProxy::new(cube_mesh(), vec![MaterialId::DEFAULT]), accepted: accepted.clone() })
    };
    let a = rt.add_primitive(picky(&accepted), Mat4::IDENTITY).unwrap();
    let b = rt.add_primitive(picky(&accepted), Mat4::from_translation(Vec3::X * 3.0)).unwrap();
    let fam = family(vec![top_view(12.0)]);
    frame(&mut rt, &fam);
    // One batch: a refused update first, then updates that must all land.
    rt.update_dynamic_data(a, Box::new(false)).unwrap();
    let moved = Mat4::from_translation(Vec3::new(-2.0, 1.0, 0.0));
    rt.update_primitive_transform(b, moved).unwrap();
    rt.update_dynamic_data(b, Box::new(true)).unwrap();
    rt.update_dynamic_data(a, Box::new(7u32)).unwrap();
    rt.update_dynamic_data(a, Box::new(true)).unwrap();
    rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
    rt.flush().unwrap();
    assert_eq!(rt.frames_failed(), 0, "the frame renders: {:?}", rt.last_frame_error());
    let stats = rt.last_stats().unwrap().unwrap();
    assert_eq!(stats.failed_updates, 2, "both refusals are reported");
    let (errors, at) = rt.with_context(move |ctx| (ctx.scene.update_errors().to_vec(), ctx.scene.local_to_world(b))).unwrap();
    assert_eq!(errors.len(), 2);
    assert!(errors[0].contains("refused"), "{errors:?}");
    assert_eq!(at, Some(moved), "the transform after the refused update was applied");
    assert_eq!(accepted.load(Ordering::Relaxed), 2, "both good dynamic data were applied");
    // The next frame is clean again.
    let (stats, _) = frame(&mut rt, &fam);
    assert_eq!(stats.failed_updates, 0);
    assert_clean(&mut rt);
}

#[test]
fn views_outside_the_target_are_rejected_without_overflow() {
    for mode in [RenderThreadMode::Inline, RenderThreadMode::Threaded] {
        let mut rt = render_thread(mode);
        cube_grid(&mut rt, 4, &[MaterialId::DEFAULT], 1.5);
        let view = |r: Rect| SceneView::perspective(Vec3::new(0.0, -0.01, 10.0), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 100.0, r).unwrap();
        let bad = [
            Rect::new(1, 0, u32::MAX, 10),
            Rect::new(0, 1, 10, u32::MAX),
            Rect::new(i32::MAX, 0, u32::MAX, 10),
            Rect::new(-1, 0, 10, 10),
            Rect::new(0, i32::MIN, 10, 10),
            Rect::new(0, 0, W + 1, H),
            Rect::new(W as i32, 0, 1, H),
        ];
        for r in bad {
            let fam = family(vec![view(r)]);
            assert!(matches!(fam.validate(), Err(RendererError::InvalidView(_))), "{r:?}");
            let n = rt.next_frame();
            let e = rt.render_frame(FrameRequest { family: fam, read_back: false, execute: true });
            assert!(matches!(e, Err(RendererError::InvalidView(_))), "{mode:?} {r:?}: {e:?}");
            assert_eq!(rt.next_frame(), n, "nothing enqueued");
        }
        let mut nan = view(Rect::from_size(W, H));
        nan.projection.x_axis.x = f32::NAN;
        assert!(rt.render_frame(FrameRequest { family: family(vec![nan]), read_back: false, execute: true }).is_err());
        let mut far = view(Rect::from_size(W, H));
        far.max_draw_distance = -1.0;
        assert!(rt.render_frame(FrameRequest { family: family(vec![far]), read_back: false, execute: true }).is_err());
        // The edge fits, and the thread is fine.
        frame(&mut rt, &family(vec![view(Rect::new(W as i32 - 1, H as i32 - 1, 1, 1)), view(Rect::from_size(W, H))]));
        assert_eq!(rt.frames_failed(), 0);
        assert_clean(&mut rt);
    }
}

#[test]
fn materials_created_and_replaced_at_run_time_leave_no_shaders_or_pipelines_behind() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    // The emissive colors exactly: no tone mapping.
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    sun(&mut rt, true);
    let fam = family(vec![top_view(12.0)]);
    let mesh = cube_mesh();
    let counts = |rt: &mut RenderThread| rt.with_context(|ctx| ctx.device.counts()).unwrap();
    let mut seen = Vec::new();
    let scale = Mat4::from_scale(Vec3::splat(4.0));
    for i in 0..8u32 {
        // A new material with its own shader, drawn...
        let m = rt.create_material(emissive_material(&format!("runtime_{i}.wgsl"), color_bits(2 * i))).unwrap();
        let p = rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![m])), scale).unwrap();
        let (_, image) = frame(&mut rt, &fam);
        assert_centre(&image, color_bits(2 * i), &format!("material {i}"));
        // ...replaced by another shader (an edit at run time): drawn with the new one...
        rt.set_material(m, emissive_material(&format!("runtime_{i}_edited.wgsl"), color_bits(2 * i + 1))).unwrap();
        let (_, image) = frame(&mut rt, &fam);
        assert_centre(&image, color_bits(2 * i + 1), &format!("material {i} edited"));
        // ...and dropped with its primitive.
        rt.remove_primitive(p).unwrap();
        rt.destroy_material(m).unwrap();
        frame(&mut rt, &fam);
        let c = counts(&mut rt);
        seen.push((c.shaders, c.pipelines, c.pending_deletions));
    }
    let (shaders, pipelines, _) = seen[2];
    for (i, &(s, p, pending)) in seen.iter().enumerate().skip(2) {
        assert_eq!((s, p), (shaders, pipelines), "iteration {i}: shader modules and pipelines stay flat: {seen:?}");
        assert!(pending < 64, "iteration {i}: the deletion queue drains: {seen:?}");
    }
    let pipelines_in_library = rt.with_context(|ctx| ctx.renderer.pipeline_count()).unwrap();
    assert!(pipelines_in_library <= pipelines, "{pipelines_in_library} > {pipelines}");
    assert_clean(&mut rt);
}

#[test]
fn a_game_that_does_not_render_cannot_grow_the_command_queue() {
    within(Duration::from_secs(300), "bounded queue", || {
        let mut rt = render_thread(RenderThreadMode::Threaded);
        // Hold the render thread until a helper opens the gate, so the queue
        // would grow without limit if nothing pushed back.
        let gate = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let g = gate.clone();
        rt.enqueue_render_command(move |_| {
            let (lock, cv) = &*g;
            let mut open = lock.lock().unwrap();
            while !*open {
                open = cv.wait(open).unwrap();
            }
        })
        .unwrap();
        let opener = {
            let gate = gate.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(500));
                *gate.0.lock().unwrap() = true;
                gate.1.notify_all();
            })
        };
        const N: u64 = 1_000_000;
        let next = Arc::new(AtomicU64::new(0));
        let out_of_order = Arc::new(AtomicBool::new(false));
        let mut most_queued = 0;
        for i in 0..N {
            let (next, out_of_order) = (next.clone(), out_of_order.clone());
            rt.enqueue_render_command(move |_| {
                if next.fetch_add(1, Ordering::Relaxed) != i {
                    out_of_order.store(true, Ordering::Relaxed);
                }
            })
            .unwrap();
            if i % 512 == 0 {
                most_queued = most_queued.max(rt.queued_commands());
            }
        }
        most_queued = most_queued.max(rt.queued_commands());
        assert!(most_queued <= MAX_QUEUED_COMMANDS as u64 + 1, "{most_queued} commands queued");
        assert!(most_queued >= MAX_QUEUED_COMMANDS as u64 / 2, "the gate held the render thread ({most_queued})");
        rt.flush().unwrap();
        opener.join().unwrap();
        assert_eq!(next.load(Ordering::Relaxed), N, "every command ran");
        assert!(!out_of_order.load(Ordering::Relaxed), "in order");
        assert_eq!(rt.queued_commands(), 0);
        // with_context and frame pacing still work.
        cube_grid(&mut rt, 4, &[MaterialId::DEFAULT], 1.5);
        for _ in 0..3 {
            rt.render_frame(FrameRequest { family: family(vec![top_view(10.0)]), read_back: false, execute: true }).unwrap();
        }
        assert_eq!(rt.with_context(|ctx| ctx.scene.num_primitives()).unwrap(), 4);
        assert_eq!(rt.frames_rendered(), 3);
        assert_eq!(rt.frames_failed(), 0);
        assert_clean(&mut rt);
    });
}

/// The game thread enqueues from inside a rayon job while the render
/// thread's commands need that pool: a blocked send must let the pool work
/// (a one-thread pool makes the wait certain), or both wait for ever.
#[test]
fn a_full_queue_does_not_deadlock_with_rayon_work_on_the_render_thread() {
    within(Duration::from_secs(60), "rayon + full queue", || {
        let mut rt = render_thread(RenderThreadMode::Threaded);
        let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap());
        let sum = Arc::new(AtomicU64::new(0));
        let count = MAX_QUEUED_COMMANDS as u64 + 64;
        pool.install(|| {
            for _ in 0..count {
                let (p, s) = (pool.clone(), sum.clone());
                rt.enqueue_render_command(move |_| {
                    use rayon::prelude::*;
                    let v: u64 = p.install(|| (0..8u64).into_par_iter().sum());
                    s.fetch_add(v, Ordering::Relaxed);
                })
                .unwrap();
            }
        });
        rt.flush().unwrap();
        assert_eq!(sum.load(Ordering::Relaxed), count * 28);
    });
}
