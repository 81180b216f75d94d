//! Faults on the render thread, on the real device with validation on.
//!
//! A scene proxy that panics in the middle of a frame (inside
//! `get_dynamic_mesh_elements`, during pass setup, possibly on a rayon
//! worker) must not take the game down or hang it: the game side gets
//! [`RendererError::RenderThreadPanicked`] naming the panic, every later
//! call fails the same way at once, and dropping the handle shuts the
//! device down cleanly — no validation message (with the layer asserted
//! active), even though the frame was abandoned half recorded. A hang
//! would be the worst outcome, so each scenario runs on its own thread and
//! the test fails if it does not finish within a generous time.
//!
//! A lost device (injected with `Device::simulate_device_lost`, lavapipe
//! cannot lose its own) with 1, 2 and 3 frames in flight: the frame that
//! hits it fails with `RendererError::Rhi(RhiError::DeviceLost)`, the
//! frames in flight are abandoned rather than waited for, every later
//! game-side call fails the same way at once, and dropping the handle shuts
//! the device down cleanly (validation asserted clean).

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::{Rect, RhiError};
use std::sync::mpsc;
use std::time::Duration;

/// Long enough for a debug build on a loaded two-core machine; a hang never ends.
const DEADLINE: Duration = Duration::from_secs(180);

/// A dynamic primitive that panics when asked for its mesh elements.
struct ExplodingProxy;

impl PrimitiveSceneProxy for ExplodingProxy {
    fn local_bounds(&self) -> Bounds {
        Bounds::from_box(Vec3::splat(-1.0), Vec3::splat(1.0))
    }

    fn view_relevance(&self, _view: &SceneView) -> ViewRelevance {
        ViewRelevance { draw: true, dynamic_relevance: true, opaque: true, ..Default::default() }
    }

    fn get_dynamic_mesh_elements(&self, _views: &[&SceneView], _visibility: &[bool], _collector: &mut MeshElementCollector<'_, '_>) {
        panic!("proxy exploded in get_dynamic_mesh_elements");
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Runs `f` on a thread; fails the test if it panics or takes past [`DEADLINE`].
fn within_deadline(what: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(()) => handle.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => std::panic::resume_unwind(handle.join().unwrap_err()),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no answer after {DEADLINE:?} (a hang)"),
    }
}

fn is_the_panic(r: &Result<impl std::fmt::Debug>) -> bool {
    matches!(r, Err(RendererError::RenderThreadPanicked(m)) if m.contains("proxy exploded"))
}

fn panicking_proxy_mid_frame(mode: RenderThreadMode) {
    panicking_proxy_mid_frame_with(render_thread(mode), mode, 0);
}

/// The same with 3 frames in flight: the panic comes while the frames
/// before it may still be on the GPU.
fn panicking_proxy_with_frames_in_flight(mode: RenderThreadMode) {
    panicking_proxy_mid_frame_with(render_thread_in_flight(mode, 3, 3), mode, 3);
}

/// A good frame, then `unwaited` frames not read back (left in flight), then the panic.
fn panicking_proxy_mid_frame_with(mut rt: RenderThread, mode: RenderThreadMode, unwaited: usize) {
    let validation = validation(&mut rt);
    sun(&mut rt, true);
    let m = rt.create_material(Material::colored(Vec4::new(0.6, 0.6, 0.6, 1.0))).unwrap();
    cube_grid(&mut rt, 9, &[m], 2.0);
    let fam = family(vec![top_view(12.0)]);
    // A good frame first: the renderer is warm.
    let (stats, _) = frame(&mut rt, &fam);
    assert_eq!(stats.primitives, 9);
    for _ in 0..unwaited {
        rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true }).unwrap();
    }

    rt.add_primitive(Box::new(ExplodingProxy), Mat4::IDENTITY).unwrap();
    // Threaded: the frame is queued and the panic shows on a later call;
    // inline: the frame runs at once and the call itself fails.
    let queued = rt.render_frame(FrameRequest { family: fam.clone(), read_back: true, execute: true });
    let flushed = rt.flush();
    assert!(is_the_panic(&queued) || is_the_panic(&flushed), "{mode:?}: {queued:?} / {flushed:?}");
    assert!(is_the_panic(&rt.flush()), "{mode:?}: flush after the panic");

    // Every later call fails the same way, at once.
    assert!(is_the_panic(&rt.render_frame(FrameRequest { family: fam, read_back: false, execute: true })));
    assert!(is_the_panic(&rt.begin_frame()));
    assert!(is_the_panic(&rt.with_context(|ctx| ctx.scene.num_primitives())));
    assert!(is_the_panic(&rt.add_primitive(Box::new(ExplodingProxy), Mat4::IDENTITY)));
    assert!(is_the_panic(&rt.create_material(Material::colored(Vec4::ONE))));
    assert!(is_the_panic(&rt.last_stats()));
    assert!(is_the_panic(&rt.read_back()));
    // A setting the render thread never received is not kept on this side either.
    assert!(is_the_panic(&rt.set_cvar(cvars::EXPOSURE, "2")));
    assert_eq!(rt.cvar(cvars::EXPOSURE), Some(CvarValue::Float(1.0)));

    // Dropping shuts the device down (on the render thread, or here inline).
    drop(rt);
    assert_clean(&validation);
}

#[test]
fn a_proxy_panicking_mid_frame_errors_on_the_game_side_without_a_hang_threaded() {
    within_deadline("threaded", || panicking_proxy_mid_frame(RenderThreadMode::Threaded));
}

#[test]
fn a_proxy_panicking_mid_frame_errors_on_the_game_side_without_a_hang_inline() {
    within_deadline("inline", || panicking_proxy_mid_frame(RenderThreadMode::Inline));
}

#[test]
fn a_proxy_panicking_with_frames_in_flight_errors_without_a_hang_threaded() {
    within_deadline("threaded, in flight", || panicking_proxy_with_frames_in_flight(RenderThreadMode::Threaded));
}

#[test]
fn a_proxy_panicking_with_frames_in_flight_errors_without_a_hang_inline() {
    within_deadline("inline, in flight", || panicking_proxy_with_frames_in_flight(RenderThreadMode::Inline));
}

#[test]
fn a_panic_with_many_frames_and_commands_queued_still_shuts_down() {
    // The game side races ahead: commands pile up behind the panicking frame
    // and must be dropped, not run or waited for.
    within_deadline("queued", || {
        let mut rt = render_thread(RenderThreadMode::Threaded);
        let validation = validation(&mut rt);
        let m = rt.create_material(Material::colored(Vec4::new(0.3, 0.5, 0.7, 1.0))).unwrap();
        cube_grid(&mut rt, 4, &[m], 2.0);
        rt.add_primitive(Box::new(ExplodingProxy), Mat4::from_translation(Vec3::new(0.0, 0.0, 1.0))).unwrap();
        let fam = family(vec![top_view(10.0)]);
        let mut first_error = None;
        for _ in 0..20 {
            let r = rt.render_frame(FrameRequest { family: fam.clone(), read_back: false, execute: true });
            let c = rt.enqueue_render_command(|_| {});
            if let Some(e) = r.err().or(c.err()) {
                first_error = Some(e);
                break;
            }
        }
        let e = first_error.expect("the pacing wait sees the panic within two frames");
        assert!(matches!(&e, RendererError::RenderThreadPanicked(m) if m.contains("proxy exploded")), "{e:?}");
        drop(rt);
        assert_clean(&validation);
    });
}

fn is_device_lost(r: &Result<impl std::fmt::Debug>) -> bool {
    matches!(r, Err(RendererError::Rhi(RhiError::DeviceLost)))
}

fn no_read_back(family: &ViewFamily) -> FrameRequest {
    FrameRequest { family: family.clone(), read_back: false, execute: true }
}

/// A scene warm from one good frame, then `frames_in_flight` frames not
/// waited for. Returns the frame family.
fn warm_with_frames_in_flight(rt: &mut RenderThread, frames_in_flight: u32, family: ViewFamily) -> ViewFamily {
    sun(rt, true);
    let m = rt.create_material(Material::colored(Vec4::new(0.6, 0.6, 0.6, 1.0))).unwrap();
    cube_grid(rt, 9, &[m], 2.0);
    let (stats, _) = frame(rt, &family);
    assert_eq!(stats.primitives, 9);
    for _ in 0..frames_in_flight {
        rt.render_frame(no_read_back(&family)).unwrap();
    }
    family
}

/// The device is lost while `frames_in_flight` frames may be on the GPU,
/// unknown to the game side, which keeps going: the loss shows on its next
/// calls at the latest, then every call fails the same way, at once.
fn device_lost_with_frames_in_flight(mode: RenderThreadMode, frames_in_flight: u32) {
    let mut rt = render_thread_in_flight(mode, 3, frames_in_flight);
    let validation = validation(&mut rt);
    let fam = warm_with_frames_in_flight(&mut rt, frames_in_flight, family(vec![top_view(12.0)]));

    // Threaded: the hook and the frame behind it are queued (the frame
    // then runs on the lost device); inline: the hook's own call reports it.
    let hooked = rt.enqueue_render_command(|ctx| ctx.device.simulate_device_lost());
    let queued = rt.render_frame(FrameRequest { family: fam.clone(), read_back: true, execute: true });
    let flushed = rt.flush();
    assert!(is_device_lost(&flushed), "{mode:?}, {frames_in_flight} in flight: {hooked:?} / {queued:?} / {flushed:?}");
    if mode == RenderThreadMode::Inline {
        assert!(is_device_lost(&hooked), "inline: the command that loses the device reports it: {hooked:?}");
    }

    // Every later call fails the same way, at once.
    let what = format!("{mode:?}, {frames_in_flight} in flight");
    assert!(is_device_lost(&rt.flush()), "{what}: flush");
    assert!(is_device_lost(&rt.render_frame(no_read_back(&fam))), "{what}: render_frame");
    assert!(is_device_lost(&rt.begin_frame()), "{what}: begin_frame");
    assert!(is_device_lost(&rt.last_stats()), "{what}: last_stats");
    assert!(is_device_lost(&rt.read_back()), "{what}: read_back");
    assert!(is_device_lost(&rt.read_back_frame()), "{what}: read_back_frame");
    assert!(is_device_lost(&rt.finish_frames()), "{what}: finish_frames");
    assert!(is_device_lost(&rt.with_context(|ctx| ctx.scene.num_primitives())), "{what}: with_context");
    assert!(is_device_lost(&rt.create_material(Material::colored(Vec4::ONE))), "{what}: create_material");
    let e = rt.last_stats().unwrap_err().to_string();
    assert!(e.contains("device was lost"), "the error names the lost device: {e}");

    // Dropping shuts the device down (on the render thread, or here inline).
    drop(rt);
    assert_clean(&validation);
}

#[test]
fn a_lost_device_with_frames_in_flight_errors_without_a_hang_threaded() {
    for fif in [1, 2, 3] {
        within_deadline(&format!("threaded, {fif} in flight"), move || device_lost_with_frames_in_flight(RenderThreadMode::Threaded, fif));
    }
}

#[test]
fn a_lost_device_with_frames_in_flight_errors_without_a_hang_inline() {
    for fif in [1, 2, 3] {
        within_deadline(&format!("inline, {fif} in flight"), move || device_lost_with_frames_in_flight(RenderThreadMode::Inline, fif));
    }
}

/// What the frame that hits the lost device saw, on the render thread.
#[derive(Debug)]
struct Hit {
    on_gpu_before: usize,
    frame: Result<u64>,
    on_gpu_after: usize,
    finish: Result<()>,
}

#[test]
fn the_frame_that_hits_a_lost_device_fails_and_abandons_the_frames_in_flight() {
    // Large enough that the frame just submitted is still on the GPU when
    // the renderer looks (it checks right after the submit).
    let (w, h) = (640, 360);
    let big = ViewFamily::new(
        w,
        h,
        vec![SceneView::perspective(Vec3::new(0.0, -8.0, 10.0), Vec3::ZERO, Vec3::Z, 1.2, 0.1, 100.0, Rect::from_size(w, h)).unwrap()],
    );
    for fif in [2, 3] {
        let big = big.clone();
        within_deadline(&format!("{fif} in flight"), move || {
            let mut rt = render_thread_in_flight(RenderThreadMode::Threaded, 3, fif);
            let validation = validation(&mut rt);
            let fam = warm_with_frames_in_flight(&mut rt, fif, big);
            // A channel, not `with_context`'s result: the call that loses
            // the device itself answers DeviceLost.
            let (tx, rx) = mpsc::channel();
            let _ = rt.enqueue_render_command(move |ctx| {
                let on_gpu_before = ctx.renderer.frames_on_gpu();
                ctx.device.simulate_device_lost();
                let frame = ctx.render_frame(&no_read_back(&fam)).map(|s| s.frame);
                let on_gpu_after = ctx.renderer.frames_on_gpu();
                let finish = ctx.finish();
                let _ = tx.send(Hit { on_gpu_before, frame, on_gpu_after, finish });
            });
            let hit = rx.recv_timeout(DEADLINE).expect("the render thread answers");
            assert!(hit.on_gpu_before >= 1, "{fif} in flight: a frame was on the GPU when the device was lost: {hit:?}");
            assert!(is_device_lost(&hit.frame), "{fif} in flight: {hit:?}");
            assert_eq!(hit.on_gpu_after, 0, "{fif} in flight: the frames in flight are abandoned: {hit:?}");
            assert!(is_device_lost(&hit.finish), "{fif} in flight: finishing reports the loss: {hit:?}");
            assert!(is_device_lost(&rt.flush()));
            drop(rt);
            assert_clean(&validation);
        });
    }
}
