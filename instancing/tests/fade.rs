//! Dithered distance fade and the minimum LOD on the real device (lavapipe
//! here), validation on (issue #18): an instance with a fade band covers a
//! fraction of its pixels that falls from all to none across the band, on
//! the GPU and CPU culling paths alike, with depth and colour agreeing; a
//! component without a fade band draws as before; `MinLOD` floors the LOD;
//! the dithered LOD transition covers an instance's pixels exactly once
//! with two LODs, combined with the distance fade, alike on the GPU, CPU
//! and HISM paths.

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

/// The unlit green (LOD 0) / blue (LOD 1) materials of [`two_colour_cube`].
fn green_blue(w: &mut World) -> (MaterialId, MaterialId) {
    (unlit(w, Vec4::new(0.0, 1.0, 0.0, 1.0)), unlit(w, Vec4::new(0.0, 0.0, 1.0, 1.0)))
}

/// Two LODs of identical geometry (the cube) with a material slot each, so
/// a pixel's colour tells which LOD drew it: LOD 1 below screen size
/// `threshold` (the renderer's convention; the cull's UE threshold is the
/// same number).
fn two_colour_cube(threshold: f32) -> Arc<StaticMesh> {
    let mut lod0 = shapes::cube(1.0);
    lod0.screen_size = threshold;
    let mut lod1 = shapes::cube(1.0);
    lod1.sections[0].material_slot = 1;
    StaticMesh::new("two-colour cube", vec![lod0, lod1], vec!["fine".into(), "coarse".into()]).unwrap()
}

fn is_green(p: [u8; 4]) -> bool {
    p[1] > 60 && u32::from(p[1]) > 2 * u32::from(p[0]) && u32::from(p[1]) > 2 * u32::from(p[2])
}

fn is_blue(p: [u8; 4]) -> bool {
    p[2] > 60 && u32::from(p[2]) > 2 * u32::from(p[0]) && u32::from(p[2]) > 2 * u32::from(p[1])
}

const BLACK: [u8; 4] = [0, 0, 0, 255];

/// The screen size culling measures for an instance of `mesh` scaled by
/// `scale` at the origin, seen by `family`'s view `d` away.
fn screen_size_of(mesh: &Arc<StaticMesh>, scale: f32, family: &ViewFamily, d: f32) -> f32 {
    let radius = instanced_mesh_for(mesh.render_data()).unwrap().bounds().radius * scale;
    bounds_screen_size(d, radius, cull_view_for(&family.views[0]).unwrap().screen_multiple())
}

fn proxy_stats(w: &mut World, id: ComponentId) -> IsmStatsSnapshot {
    let pid = w.primitive_id(id).unwrap().expect("a proxy");
    rt(w)
        .with_context(move |ctx| {
            let p = ctx.scene.proxy(pid).unwrap().as_any().downcast_ref::<InstancedStaticMeshSceneProxy>().unwrap();
            p.stats().snapshot()
        })
        .unwrap()
}

/// Issue 18's coverage test: one instance a quarter of the way into a LOD
/// transition band (finer share 0.25), LOD 0 green and LOD 1 blue with the
/// same geometry. With the transition off it is all blue (LOD 1); with it
/// on, every pixel of that silhouette — and no other — is drawn exactly
/// once, blue where the dither threshold is below the coarser share 0.75
/// and green elsewhere; both copies are counted. With a distance fade on
/// top, a pixel is drawn (by one LOD) exactly where the fade keeps it. The
/// same on the GPU and CPU culling paths.
#[test]
fn dithered_lod_transition_covers_the_silhouette_once_with_both_lods_in_proportion() {
    const D: f32 = 20.0;
    const BAND: f32 = 0.4;
    let mut w = world();
    let (green, blue) = green_blue(&mut w);
    let family = view_at(D);
    let scale = 8.0;
    let size = screen_size_of(&cube(1), scale, &family, D);
    // size = S · (1 − BAND/2 + 0.25 · BAND) = 0.9 S: finer share 0.25.
    let threshold = size / 0.9;
    let at = Affine3A::from_scale_rotation_translation(Vec3::splat(scale), Quat::from_rotation_z(0.3), Vec3::ZERO);
    let id = spawn(&mut w, two_colour_cube(threshold), at, green, |c| {
        assert_eq!(c.dithered_lod_transition(), LodDitherBand::OFF, "off by default");
    });
    w.set_material(id, 1, blue).unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    let set = |w: &mut World, band: f32, start: f32, end: f32| {
        w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| {
            c.set_dithered_lod_transition(band).unwrap();
            c.set_cull_distances(start, end).unwrap();
        })
        .unwrap();
        w.send_all_end_of_frame_updates().unwrap();
    };
    for gpu in ["1", "0"] {
        rt(&mut w).set_cvar(CVAR_GPU_CULLING, gpu).unwrap();
        set(&mut w, 0.0, 0.0, 0.0);
        let off = frame(&mut w, &family);
        let silhouette: Vec<(u32, u32)> =
            (0..W).flat_map(|x| (0..H).map(move |y| (x, y))).filter(|&(x, y)| off.pixel(x, y) != BLACK).collect();
        assert!(silhouette.len() > 1000, "the cube shows ({} px)", silhouette.len());
        assert!(silhouette.iter().all(|&(x, y)| is_blue(off.pixel(x, y))), "off: LOD 1 alone");
        assert_eq!(proxy_stats(&mut w, id).visible_per_lod, vec![0, 1]);

        set(&mut w, BAND, 0.0, 0.0);
        let on = frame(&mut w, &family);
        let (mut greens, mut blues) = (0, 0);
        for y in 0..H {
            for x in 0..W {
                let p = on.pixel(x, y);
                if off.pixel(x, y) == BLACK {
                    assert_eq!(p, BLACK, "gpu {gpu}: ({x}, {y}) outside the silhouette is drawn: {p:?}");
                } else if dither_threshold(x, y) < 0.75 {
                    assert!(is_blue(p), "gpu {gpu}: ({x}, {y}) is the coarser LOD's, shows {p:?}");
                    blues += 1;
                } else {
                    assert!(is_green(p), "gpu {gpu}: ({x}, {y}) is the finer LOD's, shows {p:?}");
                    greens += 1;
                }
            }
        }
        let share = greens as f32 / (greens + blues) as f32;
        assert!((share - 0.25).abs() < 0.05, "gpu {gpu}: the finer LOD's share {share}");
        assert_eq!(proxy_stats(&mut w, id).visible_per_lod, vec![1, 1], "gpu {gpu}: both copies counted");
        let out =
            w.component::<InstancedStaticMeshComponent>(id).unwrap().cull(&Affine3A::IDENTITY, &cull_view_for(&family.views[0]).unwrap());
        assert_eq!(out.unwrap().0.counts(), vec![1, 1], "the game side's cull agrees");

        // A distance fade of 0.5 on top: drawn where the fade keeps the
        // pixel, by the LOD whose side of the pattern it is on.
        set(&mut w, BAND, D - 5.0, D + 5.0);
        let faded = frame(&mut w, &family);
        for &(x, y) in &silhouette {
            let p = faded.pixel(x, y);
            let t = dither_threshold(x, y);
            if 0.5 <= t {
                assert_eq!(p, BLACK, "gpu {gpu}: ({x}, {y}) is faded out, shows {p:?}");
            } else {
                assert!(is_blue(p), "gpu {gpu}: ({x}, {y}) kept by the fade, the coarser LOD's: {p:?}");
            }
        }
        // Half the band's pixels: the finer share is past the fade here
        // (0.75 > 0.5), so the finer copy draws nothing and the coarser its
        // fade's half; with the share flipped (0.75 finer), both draw.
        let threshold_hi = size / 1.1; // size = 1.1 S: finer share 0.75.
        w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_mesh(two_colour_cube(threshold_hi))).unwrap().unwrap();
        w.set_material(id, 0, green).unwrap();
        w.set_material(id, 1, blue).unwrap();
        w.send_all_end_of_frame_updates().unwrap();
        let both = frame(&mut w, &family);
        for &(x, y) in &silhouette {
            let p = both.pixel(x, y);
            let t = dither_threshold(x, y);
            if 0.5 <= t {
                assert_eq!(p, BLACK, "gpu {gpu}: ({x}, {y}) is faded out, shows {p:?}");
            } else if t < 0.25 {
                assert!(is_blue(p), "gpu {gpu}: ({x}, {y}) the coarser LOD's: {p:?}");
            } else {
                assert!(is_green(p), "gpu {gpu}: ({x}, {y}) the finer LOD's: {p:?}");
            }
        }
        w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_mesh(two_colour_cube(threshold))).unwrap().unwrap();
        w.set_material(id, 0, green).unwrap();
        w.set_material(id, 1, blue).unwrap();
        w.send_all_end_of_frame_updates().unwrap();
    }
    let bad = w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_dithered_lod_transition(1.5)).unwrap();
    assert_eq!(bad, Err(InstancingError::InvalidLodDitherBand { band: 1.5 }));
    assert_world_clean(&mut w);
}

/// Issue 18: a forest receding from the camera across a LOD threshold with
/// the transition on draws the same image and the same per-LOD counts on
/// the GPU path, the CPU flat path and the HISM path (its cluster tree),
/// some instances counted twice (inside the band); with it off the image
/// has no green/blue mixture per instance and the counts are one per
/// instance.
#[test]
fn dithered_lod_transition_is_the_same_on_the_gpu_cpu_and_hism_paths() {
    let mut w = world();
    let (green, blue) = green_blue(&mut w);
    let view =
        SceneView::perspective(Vec3::new(0.0, -4.0, 3.0), Vec3::new(0.0, 40.0, 0.0), Vec3::Z, 1.0, 0.1, 500.0, Rect::from_size(W, H))
            .unwrap();
    let mut family = ViewFamily::new(W, H, vec![view]);
    family.clear_color = [0.0, 0.0, 0.0, 1.0];
    // Rows of cubes from 6 to ~90 away; the threshold at the screen size of
    // one ~30 away, a wide band so that many instances are inside it.
    let forest: Vec<Affine3A> = (0..240)
        .map(|i| {
            let (row, col) = (i / 8, i % 8);
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(1.5),
                Quat::from_rotation_z(i as f32 * 0.7),
                Vec3::new(col as f32 * 3.0 - 10.5, 6.0 + row as f32 * 2.8, 0.0),
            )
        })
        .collect();
    let threshold = screen_size_of(&cube(1), 1.5, &family, 30.0);
    let mut ids = Vec::new();
    for hierarchical in [false, true] {
        let mesh = two_colour_cube(threshold);
        let mut c =
            if hierarchical { InstancedStaticMeshComponent::new_hierarchical(mesh) } else { InstancedStaticMeshComponent::new(mesh) }
                .unwrap();
        c.add_instances(&forest, TransformSpace::Component).unwrap();
        c.set_dithered_lod_transition(0.6).unwrap();
        let (_, id) = w.spawn_actor("forest", Box::new(c), Transform::IDENTITY).unwrap();
        w.set_material(id, 0, green).unwrap();
        w.set_material(id, 1, blue).unwrap();
        ids.push(id);
    }
    let (ism, hism) = (ids[0], ids[1]);
    w.tick(0.0);
    w.with_component_mut(hism, |c: &mut InstancedStaticMeshComponent| c.wait_for_cluster_tree()).unwrap().unwrap();
    w.send_all_end_of_frame_updates().unwrap();
    let draw = |w: &mut World, shown: ComponentId, hidden: ComponentId, gpu: &str| {
        rt(w).set_cvar(CVAR_GPU_CULLING, gpu).unwrap();
        w.set_visibility(hidden, false).unwrap();
        w.set_visibility(shown, true).unwrap();
        w.send_all_end_of_frame_updates().unwrap();
        let image = frame(w, &family);
        frame(w, &family);
        (image, proxy_stats(w, shown))
    };
    let (gpu_image, gpu) = draw(&mut w, ism, hism, "1");
    // The GPU's copies, LOD by LOD, in instance order within each LOD.
    let pid = w.primitive_id(ism).unwrap().expect("a proxy");
    let gpu_visible = rt(&mut w)
        .with_context(move |ctx| {
            let p = ctx.scene.proxy(pid).unwrap().as_any().downcast_ref::<InstancedStaticMeshSceneProxy>().unwrap();
            p.read_gpu_visible(&ctx.device, 0).unwrap()
        })
        .unwrap();
    let (cpu_image, cpu) = draw(&mut w, ism, hism, "0");
    let (hism_image, tree) = draw(&mut w, hism, ism, "1");
    assert_eq!((gpu.path, cpu.path, tree.path), (CullPath::Gpu, CullPath::Cpu, CullPath::CpuTree));
    let game =
        w.component::<InstancedStaticMeshComponent>(ism).unwrap().cull(&Affine3A::IDENTITY, &cull_view_for(&family.views[0]).unwrap());
    let game = game.unwrap().0;
    let distinct = {
        let mut v = game.instance_buffer();
        v.sort_unstable();
        v.dedup();
        v.len() as u64
    };
    let counts: Vec<u64> = game.counts().iter().map(|&c| u64::from(c)).collect();
    assert_eq!(gpu.visible_per_lod, counts, "GPU = game side, per LOD");
    let store = w.component::<InstancedStaticMeshComponent>(ism).unwrap().store();
    let game_order: Vec<u32> = game.instance_buffer().iter().map(|&i| store.ids()[i as usize].index()).collect();
    assert_eq!(gpu_visible.iter().map(|v| v.0).collect::<Vec<_>>(), game_order, "GPU copies in the CPU's order, both LODs");
    assert_eq!(cpu.visible_per_lod, counts, "CPU flat = game side");
    assert_eq!(tree.visible_per_lod, counts, "HISM = game side");
    assert!(counts.iter().all(|&c| c > 10), "both LODs drawn: {counts:?}");
    let twice = gpu.visible() - distinct;
    assert!(twice > 5 && twice < distinct, "some instances inside the band, counted twice: {twice} of {distinct}");
    assert_images_equal(&cpu_image, &gpu_image, "CPU flat vs GPU, LOD transition");
    assert_images_equal(&hism_image, &gpu_image, "HISM vs GPU, LOD transition");
    let colours = |img: &Image| {
        let px: Vec<[u8; 4]> = (0..W).flat_map(|x| (0..H).map(move |y| (x, y))).map(|(x, y)| img.pixel(x, y)).collect();
        (px.iter().filter(|&&p| is_green(p)).count(), px.iter().filter(|&&p| is_blue(p)).count())
    };
    let (g, b) = colours(&gpu_image);
    assert!(g > 200 && b > 200, "both LODs show: {g} green, {b} blue");

    // Off again: one copy per instance on every path, the same images.
    for id in [ism, hism] {
        w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_dithered_lod_transition(0.0)).unwrap().unwrap();
    }
    let (off_gpu, gpu) = draw(&mut w, ism, hism, "1");
    let (off_cpu, _) = draw(&mut w, ism, hism, "0");
    let (off_hism, tree) = draw(&mut w, hism, ism, "1");
    assert_eq!(gpu.visible(), distinct, "off: each instance once");
    assert_eq!(tree.visible_per_lod, gpu.visible_per_lod);
    assert_images_equal(&off_cpu, &off_gpu, "CPU flat vs GPU, no transition");
    assert_images_equal(&off_hism, &off_gpu, "HISM vs GPU, no transition");
    assert_world_clean(&mut w);
}

/// Translucent sections keep today's behaviour with the transition on: only
/// the copy at the plainly selected LOD draws (its opacity times the
/// distance fade), the image is the one without the transition, on either
/// side of the threshold, on the GPU and CPU paths.
#[test]
fn translucent_sections_draw_only_the_plainly_selected_lod_in_a_transition() {
    const D: f32 = 20.0;
    let mut w = world();
    let glass = |w: &mut World, c: Vec4| {
        rt(w).create_material(Material::colored(c).with_shading_model(ShadingModel::Unlit).with_blend(BlendMode::Translucent)).unwrap()
    };
    let green = glass(&mut w, Vec4::new(0.0, 1.0, 0.0, 1.0));
    let blue = glass(&mut w, Vec4::new(0.0, 0.0, 1.0, 1.0));
    let family = view_at(D);
    let scale = 8.0;
    let size = screen_size_of(&cube(1), scale, &family, D);
    let at = Affine3A::from_scale_rotation_translation(Vec3::splat(scale), Quat::from_rotation_z(0.3), Vec3::ZERO);
    // Finer shares 0.25 (LOD 1 selected) and 0.75 (LOD 0 selected).
    for (threshold, selected_green) in [(size / 0.9, false), (size / 1.1, true)] {
        let id = spawn(&mut w, two_colour_cube(threshold), at, green, |_| {});
        w.set_material(id, 1, blue).unwrap();
        w.send_all_end_of_frame_updates().unwrap();
        for gpu in ["1", "0"] {
            rt(&mut w).set_cvar(CVAR_GPU_CULLING, gpu).unwrap();
            w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_dithered_lod_transition(0.0)).unwrap().unwrap();
            w.send_all_end_of_frame_updates().unwrap();
            let off = frame(&mut w, &family);
            let drawn: Vec<[u8; 4]> =
                (0..W).flat_map(|x| (0..H).map(move |y| (x, y))).map(|(x, y)| off.pixel(x, y)).filter(|&p| p != BLACK).collect();
            assert!(drawn.len() > 1000);
            assert!(drawn.iter().all(|&p| if selected_green { is_green(p) } else { is_blue(p) }));
            w.with_component_mut(id, |c: &mut InstancedStaticMeshComponent| c.set_dithered_lod_transition(0.4)).unwrap().unwrap();
            w.send_all_end_of_frame_updates().unwrap();
            let on = frame(&mut w, &family);
            assert_images_equal(&on, &off, "translucent: the selected LOD alone, as without the transition");
            assert_eq!(proxy_stats(&mut w, id).visible_per_lod, vec![1, 1], "both copies still culled and counted");
        }
        w.set_visibility(id, false).unwrap();
        w.send_all_end_of_frame_updates().unwrap();
    }
    assert_world_clean(&mut w);
}
