//! Frames in flight (`r.FramesInFlight`): the render thread records frame
//! N+1 while the GPU still works on frame N. Everything the host writes per
//! frame (view uniforms, GPU-scene deltas, id streams, the material table)
//! must not be overwritten while the GPU may read it, so 1, 2 and 3 frames
//! in flight give byte-identical images and the same stats, under
//! synchronization validation; stats arrive complete, naming their frame,
//! once the frame's GPU work is done.

mod common;

use common::*;
use glam::{Mat4, Quat, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::Image;

const FRAMES: usize = 8;

/// Large enough that lavapipe is still drawing frame N while frame N+1
/// is recorded (so a buffer rewritten too early shows in the image).
const BIG_W: u32 = 1280;
const BIG_H: u32 = 720;

/// A view that moves every frame (new view uniforms each frame).
fn view_at(i: usize) -> ViewFamily {
    let eye = Vec3::new(3.0 * (i as f32 * 0.7).sin(), -10.0 + i as f32 * 0.5, 12.0);
    ViewFamily::new(
        BIG_W,
        BIG_H,
        vec![SceneView::perspective(eye, Vec3::ZERO, Vec3::Z, 1.2, 0.1, 200.0, rhi_vulkan::Rect::from_size(BIG_W, BIG_H)).unwrap()],
    )
}

/// Renders `FRAMES` frames that each change the scene (transforms, a
/// material, primitives added and removed), each read back without
/// waiting; returns every frame's image and complete stats, as retired.
fn run(frames_in_flight: u32) -> (Vec<(u64, Image)>, Vec<FrameStats>) {
    let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, frames_in_flight);
    sun(&mut rt, true);
    let mats: Vec<MaterialId> = colors(4).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
    let prims = cube_grid(&mut rt, 100, &mats, 1.5);
    let mut images = Vec::new();
    let mut stats = Vec::new();
    let mut extra = Vec::new();
    for i in 0..FRAMES {
        // GPU-scene deltas: a row of cubes moves every frame.
        let moved: Vec<_> = prims[i * 10..i * 10 + 10]
            .iter()
            .enumerate()
            .map(|(k, id)| {
                let m = Mat4::from_scale_rotation_translation(
                    Vec3::splat(0.9),
                    Quat::from_rotation_z(0.3 * i as f32),
                    Vec3::new(k as f32 * 1.5 - 7.0, i as f32 * 1.5 - 7.0, 1.0 + 0.2 * i as f32),
                );
                (*id, m, None)
            })
            .collect();
        rt.update_primitive_transforms(moved).unwrap();
        // The material table changes.
        rt.set_material(mats[i % mats.len()], Material::colored(Vec4::new(0.1 * i as f32, 0.5, 0.9 - 0.1 * i as f32, 1.0))).unwrap();
        // Id streams change length: primitives come and go.
        if i % 2 == 0 {
            extra.extend(cube_grid(&mut rt, 9, &mats[..1], 3.0));
        } else {
            rt.remove_primitives(std::mem::take(&mut extra)).unwrap();
        }
        let n = rt.render_frame(FrameRequest { family: view_at(i), read_back: true, execute: true }).unwrap();
        assert_eq!(n, i as u64);
        let retired = rt
            .with_context(move |ctx| {
                assert!(ctx.renderer.frames_on_gpu() <= frames_in_flight as usize, "at most r.FramesInFlight frames on the GPU");
                ctx.renderer.take_retired()
            })
            .unwrap();
        retired_so_far(&mut images, &mut stats, retired);
    }
    retired_so_far(&mut images, &mut stats, rt.finish_frames().unwrap());
    // Frame data has a buffer per frame slot: no host write waited for a frame in flight.
    assert_eq!(rt.with_context(|ctx| ctx.device.counts().host_write_waits).unwrap(), 0, "{frames_in_flight} in flight");
    assert_clean(&mut rt);
    (images, stats)
}

fn retired_so_far(images: &mut Vec<(u64, Image)>, stats: &mut Vec<FrameStats>, retired: Vec<RetiredFrame>) {
    for f in retired {
        images.push((f.stats.frame, f.image.expect("every frame was read back")));
        stats.push(f.stats);
    }
}

/// The stats without the times (which differ from run to run).
fn figures(s: &FrameStats) -> FrameStats {
    FrameStats { timings: StageTimings::default(), ..s.clone() }
}

#[test]
fn one_two_and_three_frames_in_flight_give_identical_images_and_stats() {
    let (images1, stats1) = run(1);
    assert_eq!(
        images1.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        (0..FRAMES as u64).collect::<Vec<_>>(),
        "each read-back names its frame"
    );
    assert_eq!(stats1.iter().map(|s| s.frame).collect::<Vec<_>>(), (0..FRAMES as u64).collect::<Vec<_>>(), "every frame's stats, in order");
    for fif in [2, 3] {
        let (images, stats) = run(fif);
        assert_eq!(images.len(), images1.len());
        for ((n1, a), (n, b)) in images1.iter().zip(&images) {
            assert_eq!(n1, n, "{fif} in flight: the read-back's frame");
            assert_images_equal(a, b, &format!("frame {n} with r.FramesInFlight={fif} vs 1"));
        }
        assert_eq!(stats.len(), stats1.len(), "{fif} in flight: every frame retired once");
        for (a, b) in stats1.iter().zip(&stats) {
            assert_eq!(figures(a), figures(b), "frame {} with r.FramesInFlight={fif} vs 1", a.frame);
        }
    }
}

#[test]
fn retired_stats_are_complete_and_name_their_frame() {
    let mut rt = render_thread_in_flight(RenderThreadMode::Inline, 3, 3);
    sun(&mut rt, true);
    let m = rt.create_material(Material::colored(Vec4::new(0.7, 0.4, 0.2, 1.0))).unwrap();
    cube_grid(&mut rt, 64, &[m], 1.5);
    let fam = family(vec![top_view(12.0)]);
    let mut seen = Vec::new();
    for i in 0..5u64 {
        rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
        // The newest frame the GPU has finished, if any yet: complete, its
        // own figures, and not older than the frames in flight allow (frame
        // i began once at most 2 were on the GPU: i-3 and older had retired).
        if let Some(s) = rt.last_stats().unwrap() {
            assert!(s.gpu_complete && s.frame <= i && s.frame + 3 >= i, "after frame {i}: frame {}", s.frame);
            seen.push(s);
        }
    }
    let retired: Vec<FrameStats> = rt.finish_frames().unwrap().into_iter().map(|f| f.stats).collect();
    assert_eq!(retired.iter().map(|s| s.frame).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
    for s in &retired {
        assert!(s.gpu_complete, "frame {}: retired means its GPU work is done", s.frame);
        assert!(s.timings.gpu_timestamps && s.timings.gpu > 0.0, "frame {}: its own GPU time: {:?}", s.frame, s.timings);
        assert!(s.timings.stage(Stage::Record) > 0.0, "frame {}: its CPU stage times", s.frame);
    }
    for s in &seen {
        assert_eq!(s, &retired[s.frame as usize], "last_stats gave frame {} as it retired", s.frame);
    }
    assert_eq!(rt.last_stats().unwrap().map(|s| s.frame), Some(4), "after the frames are finished: the last frame's stats");
    assert!(rt.finish_frames().unwrap().is_empty(), "each frame is delivered once");
    // A read-back waits for its frame and names it.
    rt.render_frame(FrameRequest { family: fam, read_back: true, execute: true }).unwrap();
    let (n, image) = rt.read_back_frame().unwrap().expect("an image");
    assert_eq!(n, 5);
    assert_eq!((image.width, image.height), (W, H));
    let retired = rt.finish_frames().unwrap();
    assert_eq!(retired.len(), 1);
    assert_eq!(retired[0].stats.frame, 5);
    assert_eq!(retired[0].image.as_ref(), Some(&image), "the retired frame carries its image");
    assert_clean(&mut rt);
}

#[test]
fn destroying_what_frames_in_flight_use_is_clean() {
    let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, 3);
    sun(&mut rt, true);
    let fam = family(vec![top_view(14.0)]);
    for round in 0..4 {
        let mats: Vec<MaterialId> = colors(3).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
        // A mesh of this round only: its buffers go when its primitives do.
        let mesh = StaticMeshRenderData::new(vec![shapes::cube(1.0 + round as f32 * 0.1)]).unwrap();
        let prims: Vec<PrimitiveId> = (0..27)
            .map(|i| {
                let proxy = StaticMeshSceneProxy::new(mesh.clone(), vec![mats[i % 3]]);
                rt.add_primitive(
                    Box::new(proxy),
                    Mat4::from_translation(Vec3::new((i % 9) as f32 * 1.5 - 6.0, (i / 9) as f32 * 1.5 - 2.0, 0.0)),
                )
                .unwrap()
            })
            .collect();
        drop(mesh);
        rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
        // Gone while that frame may still be on the GPU.
        rt.remove_primitives(prims).unwrap();
        for m in mats {
            rt.destroy_material(m).unwrap();
        }
        rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
    }
    let retired = rt.finish_frames().unwrap();
    assert_eq!(retired.len(), 8);
    assert!(retired.iter().all(|f| f.stats.gpu_complete && f.image.is_none()));
    assert_clean(&mut rt);
}

/// The counters [`Probe`] reports: one when collected, one from the
/// frame's GPU memory when the frame retires.
const COLLECTED: &str = "test.collected";
const RETIRED: &str = "test.retired";

/// A dynamic primitive that draws nothing and, every frame, writes the
/// frame's number `n` into the frame's memory and asks to hear when the
/// frame's GPU work is done: it then reads the number back, records
/// `(frame, n)` in `heard` and counts `RETIRED` = 10 × n into the frame's
/// stats (as a GPU cull's count is); while collected it counts
/// `COLLECTED` = n + 1.
#[derive(Default)]
struct Probe {
    heard: std::sync::Arc<std::sync::Mutex<Vec<(u64, u64)>>>,
    frames: std::sync::atomic::AtomicU64,
}

impl PrimitiveSceneProxy for Probe {
    fn local_bounds(&self) -> Bounds {
        Bounds::from_box(Vec3::splat(-1.0), Vec3::splat(1.0))
    }
    fn view_relevance(&self, _: &SceneView) -> ViewRelevance {
        ViewRelevance { draw: true, dynamic_relevance: true, opaque: true, ..Default::default() }
    }
    fn get_dynamic_mesh_elements(&self, _views: &[&SceneView], _visibility: &[bool], collector: &mut MeshElementCollector<'_, '_>) {
        let n = self.frames.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        collector.add_counter(COLLECTED, n + 1);
        let (buffer, offset) = collector.upload(&n.to_le_bytes()).unwrap();
        let heard = self.heard.clone();
        collector.when_retired(move |r| {
            let read = u64::from_le_bytes(r.read_buffer(buffer, offset, 8).unwrap().try_into().unwrap());
            heard.lock().unwrap().push((r.frame, read));
            r.add_counter(RETIRED, 10 * read);
        });
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn proxies_hear_of_each_frame_once_its_gpu_work_is_done_in_order() {
    for fif in [1, 3] {
        let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, fif);
        let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        rt.add_primitive(Box::new(Probe { heard: heard.clone(), ..Default::default() }), Mat4::IDENTITY).unwrap();
        let fam = family(vec![top_view(8.0)]);
        for i in 0..6u64 {
            rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
            rt.flush().unwrap();
            let h = heard.lock().unwrap().clone();
            if fif == 1 {
                assert_eq!(h.len() as u64, i + 1, "1 in flight: heard when the frame is rendered");
            }
            // Never ahead of the frames rendered, never more than r.FramesInFlight behind.
            assert!(h.len() as u64 <= i + 1 && h.len() as u64 + u64::from(fif) > i, "{fif}: frame {i}: heard {h:?}");
        }
        let retired = rt.finish_frames().unwrap();
        assert!(!retired.is_empty());
        let h = heard.lock().unwrap().clone();
        assert_eq!(h, (0..6).map(|n| (n, n)).collect::<Vec<_>>(), "{fif}: each frame heard once, in order, with its own memory");
        assert_clean(&mut rt);
    }
}

#[test]
fn counters_proxies_report_reach_the_stats_of_their_frame_summed() {
    for fif in [1, 3] {
        let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, fif);
        for _ in 0..2 {
            rt.add_primitive(Box::<Probe>::default(), Mat4::IDENTITY).unwrap();
        }
        let fam = family(vec![top_view(8.0)]);
        for _ in 0..6 {
            rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
        }
        let retired = rt.finish_frames().unwrap();
        assert_eq!(retired.len(), 6, "{fif}");
        for f in &retired {
            let (s, n) = (&f.stats, f.stats.frame);
            assert!(s.gpu_complete);
            assert_eq!(s.counter(COLLECTED), 2 * (n + 1), "{fif}: frame {n}: both proxies' counts, summed: {:?}", s.counters);
            assert_eq!(s.counter(RETIRED), 2 * 10 * n, "{fif}: frame {n}: the read-back counts are the frame's own: {:?}", s.counters);
            assert_eq!(s.counter("test.nobody"), 0);
        }
        assert_eq!(rt.last_stats().unwrap().map(|s| s.counter(RETIRED)), Some(2 * 10 * 5), "{fif}: the last frame's, complete");
        assert_clean(&mut rt);
    }
}
