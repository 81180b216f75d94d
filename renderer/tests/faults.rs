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

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
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
