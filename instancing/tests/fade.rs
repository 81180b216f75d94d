//! Dithered distance fade and the minimum LOD on the real device (lavapipe
//! here), validation on (issue #18): an instance with a fade band covers a
//! fraction of its pixels that falls from all to none across the band, on
//! the GPU and CPU culling paths alike, with depth and colour agreeing; a
//! component without a fade band draws as before; `MinLOD` floors the LOD.

mod common;

use std::sync::Arc;

use common::{assert_images_equal, assert_world_clean, sun, world};
use engine_core::{ComponentId, StaticMesh, Transform, World};
use glam::{Affine3A, Quat, Vec3, Vec4};
use instancing::*;
use renderer::vertex_factory::dither_threshold;
use renderer::*;
use rhi_vulkan::{Image, Rect};

const W: u32 = 160;
const H: u32 = 120;
/// The fading cube's instance scale: `shapes::cube(1.0)` has half-extent
/// 0.5, so its faces are 20 wide and fill the view from up to ~21 away.
const SCALE: f32 = 20.0;
const START: f32 = 13.0;
const END: f32 = 20.0;

fn rt(world: &mut World) -> &mut RenderThread {
    world.render_thread().expect("a world with a render thread")
}

fn unlit(w: &mut World, color: Vec4) -> MaterialId {
    rt(w).create_material(Material::colored(color).with_shading_model(ShadingModel::Unlit)).unwrap()
}

fn cube(lods: usize) -> Arc<StaticMesh> {
    let mut l: Vec<StaticMeshLod> = (0..lods).map(|_| shapes::cube(1.0)).collect();
    if lods > 1 {
        // LOD 1 differs: a sphere (more triangles), used only below tiny sizes.
        l[0].screen_size = 0.001;
        l[1] = StaticMeshLod { screen_size: 0.0, ..shapes::uv_sphere(0.5, 8, 4) };
    }
    StaticMesh::new("cube", l, vec!["default".into()]).unwrap()
}

fn spawn(
    w: &mut World,
    mesh: Arc<StaticMesh>,
    at: Affine3A,
    material: MaterialId,
    edit: impl FnOnce(&mut InstancedStaticMeshComponent),
) -> ComponentId {
    let mut c = InstancedStaticMeshComponent::new(mesh).unwrap();
    c.add_instance(at, TransformSpace::Component).unwrap();
    edit(&mut c);
    let (_, id) = w.spawn_actor("ism", Box::new(c), Transform::IDENTITY).unwrap();
    w.set_material(id, 0, material).unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    id
}

/// A view `d` from the origin along -Y, looking at it (Z up).
fn view_at(d: f32) -> ViewFamily {
    let view = SceneView::perspective(Vec3::new(0.0, -d, 0.0), Vec3::ZERO, Vec3::Z, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let mut f = ViewFamily::new(W, H, vec![view]);
    f.clear_color = [0.0, 0.0, 0.0, 1.0];
    f
}

fn frame(w: &mut World, family: &ViewFamily) -> Image {
    let rt = rt(w);
    rt.render_frame(FrameRequest { family: family.clone(), read_back: true, execute: true }).unwrap();
    rt.read_back().unwrap().expect("image")
}

fn is_white(p: [u8; 4]) -> bool {
    p[0] > 100 && p[1] > 100 && p[2] > 100
}

/// Red after tone mapping (ACES fitted mixes channels a little).
fn is_red(p: [u8; 4]) -> bool {
    p[0] > 60 && u32::from(p[0]) > 2 * u32::from(p[1]) && u32::from(p[0]) > 2 * u32::from(p[2])
}

/// A white unlit cube filling the view, fading between [`START`] and
/// [`END`], in front of a big red one without a fade (so a pixel where the
/// depth pass and the base pass disagreed would show black or white where
/// red is due), and a shadow-casting sun (the shadow pass draws the
/// dithered pipelines too).
fn fade_scene() -> (World, ComponentId) {
    let mut w = world();
    sun(&mut w, true);
    let white = unlit(&mut w, Vec4::ONE);
    let red = unlit(&mut w, Vec4::new(1.0, 0.0, 0.0, 1.0));
    let back = Affine3A::from_scale_rotation_translation(Vec3::splat(100.0), Quat::IDENTITY, Vec3::new(0.0, 70.0, 0.0));
    spawn(&mut w, cube(1), back, red, |_| {});
    let id = spawn(&mut w, cube(1), Affine3A::from_scale(Vec3::splat(SCALE)), white, |c| c.set_cull_distances(START, END).unwrap());
    (w, id)
}

/// The fade culling computes for a view `d` from the cube's centre.
fn fade_at(d: f32) -> f32 {
    CullDistances::new(START, END).unwrap().fade(d)
}

/// Renders the fade scene from each distance; per distance the image and
/// its count of white (fading-cube) pixels. Every pixel must be white
/// exactly where the dither keeps the fade, red elsewhere.
fn fade_sweep(w: &mut World, distances: &[f32]) -> Vec<(Image, usize)> {
    distances
        .iter()
        .map(|&d| {
            let image = frame(w, &view_at(d));
            let fade = if d >= END { 0.0 } else { fade_at(d) };
            let mut white = 0;
            for y in 0..H {
                for x in 0..W {
                    let p = image.pixel(x, y);
                    let kept = fade > dither_threshold(x, y);
                    if kept {
                        assert!(is_white(p), "d {d} (fade {fade}): pixel ({x}, {y}) is kept by the dither but shows {p:?}");
                        white += 1;
                    } else {
                        assert!(is_red(p), "d {d} (fade {fade}): pixel ({x}, {y}) is dithered out but shows {p:?}, not the red behind");
                    }
                }
            }
            (image, white)
        })
        .collect()
}

/// The test: the dithered fade covers between 0 and all pixels,
/// monotonically across the fade band — 0 past the end distance, all at and
/// inside the start — the same on the GPU and the CPU culling paths.
#[test]
fn dithered_fade_covers_between_0_and_all_pixels_monotonically_across_the_fade_band() {
    let (mut w, _) = fade_scene();
    // Fades 1, 1, 13.7/16, 11.4/16, ... 1.1/16, then culled: none lies on a
    // dither threshold ((k + 0.5) / 16), so rounding cannot flip a pixel.
    let distances = [12.0, START, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 19.5, END, 20.5];
    let gpu = fade_sweep(&mut w, &distances);
    rt(&mut w).set_cvar(CVAR_GPU_CULLING, "0").unwrap();
    let cpu = fade_sweep(&mut w, &distances);
    let all = (W * H) as usize;
    for (path, sweep) in [("GPU", &gpu), ("CPU", &cpu)] {
        let counts: Vec<usize> = sweep.iter().map(|s| s.1).collect();
        assert_eq!(counts[0], all, "{path}: inside the start distance every pixel: {counts:?}");
        assert_eq!(counts[1], all, "{path}: at the start distance every pixel: {counts:?}");
        assert_eq!(counts[9..], [0, 0], "{path}: at and past the end distance none: {counts:?}");
        assert!(counts.windows(2).all(|p| p[1] <= p[0]), "{path}: non-increasing with distance: {counts:?}");
        assert!(counts[2..9].iter().all(|&c| c > 0 && c < all), "{path}: partial inside the band: {counts:?}");
        // A 4x4 dither on a 160x120 target: whole blocks, fade * 16 levels.
        for (&d, &c) in distances.iter().zip(&counts).take(9) {
            let levels = (fade_at(d) * 16.0 + 0.5).floor() as usize;
            assert_eq!(c, all / 16 * levels, "{path}: d {d}");
        }
    }
    for ((g, _), (c, _)) in gpu.iter().zip(&cpu) {
        assert_images_equal(c, g, "CPU vs GPU culling, dithered");
    }
    assert_world_clean(&mut w);
}

/// A fade band whose instances are all inside the start distance draws the
/// same image as no fade band at all: the dithered pipelines keep every
/// pixel at fade 1 and agree with the plain ones on depth; and a component
/// whose band is removed goes back to the plain pipelines (no fragment
/// stage in the depth passes), the same image again.
#[test]
fn without_a_fade_band_or_inside_the_start_images_are_unchanged() {
    let mut w = world();
    sun(&mut w, true);
    let lit = rt(&mut w).create_material(Material::colored(Vec4::new(0.8, 0.6, 0.3, 1.0))).unwrap();
    let mut c = InstancedStaticMeshComponent::new(cube(1)).unwrap();
    let field: Vec<Affine3A> = (0..49)
        .map(|i| {
            let p = Vec3::new((i % 7) as f32 * 1.6 - 4.8, (i / 7) as f32 * 1.6 - 4.8, 0.0);
            Affine3A::from_scale_rotation_translation(Vec3::splat(1.0), Quat::from_rotation_z(i as f32 * 0.4), p)
        })
        .collect();
    c.add_instances(&field, TransformSpace::Component).unwrap();
    let (_, id) = w.spawn_actor("ism", Box::new(c), Transform::IDENTITY).unwrap();
    w.set_material(id, 0, lit).unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    let view = SceneView::perspective(Vec3::new(2.0, -9.0, 9.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let mut fam = ViewFamily::new(W, H, vec![view]);
    fam.clear_color = [0.0, 0.0, 0.0, 1.0];
    for gpu in ["1", "0"] {
        rt(&mut w).set_cvar(CVAR_GPU_CULLING, gpu).unwrap();
        w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_cull_distances(0.0, 0.0)).unwrap().unwrap();
        w.send_all_end_of_frame_updates().unwrap();
        let plain = frame(&mut w, &fam);
        assert!((0..W).flat_map(|x| (0..H).map(move |y| (x, y))).filter(|&(x, y)| plain.pixel(x, y) != [0, 0, 0, 255]).count() > 2000);
        // Every instance is well inside 100 (the camera is ~20 away).
        w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_cull_distances(100.0, 200.0)).unwrap().unwrap();
        w.send_all_end_of_frame_updates().unwrap();
        let dithered = frame(&mut w, &fam);
        assert_images_equal(&dithered, &plain, "fade band, every instance inside the start distance");
        w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_cull_distances(0.0, 0.0)).unwrap().unwrap();
        w.send_all_end_of_frame_updates().unwrap();
        assert_images_equal(&frame(&mut w, &fam), &plain, "fade band removed again");
    }
    assert_world_clean(&mut w);
}

/// `MinLOD`: with a minimum of 1 a near instance (which would pick LOD 0)
/// draws LOD 1 on every path; a minimum past the mesh's LODs draws its last
/// LOD; one past `MAX_LODS` is refused and changes nothing.
#[test]
fn min_lod_makes_a_near_instance_draw_lod_1() {
    let mut w = world();
    let white = unlit(&mut w, Vec4::ONE);
    let id = spawn(&mut w, cube(2), Affine3A::from_scale(Vec3::splat(SCALE)), white, |_| {});
    let family = view_at(40.0);
    let lod_counts = |w: &mut World| {
        let pid = w.primitive_id(id).unwrap().expect("a proxy");
        rt(w)
            .with_context(move |ctx| {
                let p = ctx.scene.proxy(pid).unwrap().as_any().downcast_ref::<InstancedStaticMeshSceneProxy>().unwrap();
                p.read_gpu_lod_counts(&ctx.device).unwrap()
            })
            .unwrap()
    };
    let cpu_lods = |w: &mut World| {
        rt(w).set_cvar(CVAR_GPU_CULLING, "0").unwrap();
        frame(w, &family);
        let tris = rt(w).last_stats().unwrap().unwrap().triangles;
        rt(w).set_cvar(CVAR_GPU_CULLING, "1").unwrap();
        let pid = w.primitive_id(id).unwrap().expect("a proxy");
        let per_lod = rt(w)
            .with_context(move |ctx| {
                let p = ctx.scene.proxy(pid).unwrap().as_any().downcast_ref::<InstancedStaticMeshSceneProxy>().unwrap();
                p.stats().snapshot().visible_per_lod
            })
            .unwrap();
        (per_lod, tris)
    };
    let sphere_tris = shapes::uv_sphere(0.5, 8, 4).indices.len() as u64 / 3;
    assert_ne!(sphere_tris, 12);

    frame(&mut w, &family);
    assert_eq!(lod_counts(&mut w), vec![vec![1, 0]], "near: LOD 0 without a minimum");
    assert_eq!(cpu_lods(&mut w), (vec![1, 0], 12), "the cube's 12 triangles");

    w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_min_lod(1)).unwrap().unwrap();
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent), (0, 1), "sent to the proxy, not recreated");
    frame(&mut w, &family);
    assert_eq!(lod_counts(&mut w), vec![vec![0, 1]], "GPU: LOD 1 with MinLOD 1");
    assert_eq!(cpu_lods(&mut w), (vec![0, 1], sphere_tris), "CPU: LOD 1, the sphere's triangles");
    let out = w.component::<InstancedStaticMeshComponent>(id).unwrap().cull(&Affine3A::IDENTITY, &cull_view_for(&family.views[0]).unwrap());
    assert_eq!(out.unwrap().0.counts(), vec![0, 1], "the game side's cull agrees");

    // Past the mesh's LODs: its last one.
    w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_min_lod(7)).unwrap().unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    frame(&mut w, &family);
    assert_eq!(lod_counts(&mut w), vec![vec![0, 1]], "clamped to the last LOD");

    // Past MAX_LODS: refused, nothing changes or is sent.
    let err = w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_min_lod(MAX_LODS as u32)).unwrap();
    assert_eq!(err, Err(InstancingError::InvalidMinLod { min_lod: MAX_LODS as u32, max: MAX_LODS as u32 }));
    assert_eq!(w.component::<InstancedStaticMeshComponent>(id).unwrap().min_lod(), 7);
    let eof = w.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.dynamic_data_sent, 0);

    w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_min_lod(0)).unwrap().unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    frame(&mut w, &family);
    assert_eq!(lod_counts(&mut w), vec![vec![1, 0]], "back to LOD 0");
    assert_world_clean(&mut w);
}
