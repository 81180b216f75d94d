//! A dynamic proxy that cannot emit part of its mesh elements reports it
//! (`MeshElementCollector::report_failure`), on the real device with
//! validation on: that part is not drawn, the rest of the primitive and of
//! the frame is, the frame's stats count the failures
//! (`FrameStats::element_failures`, 0 again in the next frame without
//! one) and the primitive's failures are logged as one warning per frame.
//!
//! The test proxy fails on purpose (it has nothing that really fails on
//! lavapipe): two cubes, one mesh section each, either of which it reports
//! as failed with the error an upload out of memory would give.

mod common;

use common::*;
use glam::{Mat4, Vec4};
use renderer::*;
use rhi_vulkan::RhiError;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// The warnings logged while the tests run (this binary's logger).
static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }
    fn log(&self, record: &log::Record<'_>) {
        if record.level() == log::Level::Warn {
            WARNINGS.lock().unwrap().push(record.args().to_string());
        }
    }
    fn flush(&self) {}
}

static CAPTURE: Capture = Capture;

fn capture_warnings() {
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| {
        log::set_logger(&CAPTURE).expect("the only logger of this test binary");
        log::set_max_level(log::LevelFilter::Warn);
    });
}

/// The warnings about elements not drawn logged since the last call.
fn take_failure_warnings() -> Vec<String> {
    let mut all = WARNINGS.lock().unwrap();
    let lines = all.iter().filter(|l| l.contains("mesh elements not drawn")).cloned().collect();
    all.clear();
    lines
}

/// The section index of the left cube, and of the right one.
const LEFT: u8 = 1;
const RIGHT: u8 = 2;

/// Two cubes (sections 0 and 1 of one mesh, at x = -1.5 and x = 1.5) drawn
/// through the dynamic path; those whose bit is set in `failing` are
/// reported failed instead of drawn.
struct TwoCubes {
    mesh: Arc<StaticMeshRenderData>,
    materials: Vec<MaterialId>,
    failing: Arc<AtomicU8>,
}

const WHAT: &str = "test cube";

impl PrimitiveSceneProxy for TwoCubes {
    fn local_bounds(&self) -> Bounds {
        self.mesh.bounds()
    }
    fn view_relevance(&self, _: &SceneView) -> ViewRelevance {
        ViewRelevance { draw: true, dynamic_relevance: true, opaque: true, ..Default::default() }
    }
    fn create_render_resources(&mut self, device: &rhi_vulkan::Device) -> rhi_vulkan::Result<()> {
        self.mesh.init_gpu(device)
    }
    fn release_render_resources(&mut self, device: &rhi_vulkan::Device) {
        self.mesh.release_gpu(device);
    }
    fn get_dynamic_mesh_elements(&self, _views: &[&SceneView], visibility: &[bool], collector: &mut MeshElementCollector<'_, '_>) {
        let failing = self.failing.load(Ordering::Relaxed);
        let mut batches = Vec::new();
        StaticMeshSceneProxy::new(self.mesh.clone(), self.materials.clone()).draw_static_elements(&mut batches);
        assert_eq!(batches.len(), 2, "one batch per section");
        for (section, batch) in batches.into_iter().enumerate() {
            if failing & (1 << section) != 0 {
                // Once per element, not per view.
                collector.report_failure(ElementFailure::new(WHAT, RhiError::OutOfDeviceMemory));
                continue;
            }
            for (view, _) in visibility.iter().enumerate().filter(|(_, v)| **v) {
                collector.add_mesh(view, batch.clone());
            }
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Two unit cubes side by side, one section each (material slots 0 and 1).
fn two_cube_mesh() -> Arc<StaticMeshRenderData> {
    let cube = shapes::cube(1.0);
    let moved =
        |dx: f32| cube.vertices.iter().map(move |v| LocalVertex { position: [v.position[0] + dx, v.position[1], v.position[2]], ..*v });
    let vertices: Vec<LocalVertex> = moved(-1.5).chain(moved(1.5)).collect();
    let n = cube.vertices.len() as u32;
    let indices: Vec<u32> = cube.indices.iter().copied().chain(cube.indices.iter().map(|i| i + n)).collect();
    let count = cube.indices.len() as u32;
    let sections = vec![
        StaticMeshSection { first_index: 0, index_count: count, material_slot: 0 },
        StaticMeshSection { first_index: count, index_count: count, material_slot: 1 },
    ];
    StaticMeshRenderData::new(vec![StaticMeshLod { vertices, indices, sections, screen_size: 0.0 }]).unwrap()
}

/// Pixels mostly red, and mostly green.
fn red_and_green(img: &rhi_vulkan::Image) -> (usize, usize) {
    let (mut red, mut green) = (0, 0);
    for y in 0..img.height {
        for x in 0..img.width {
            let [r, g, b, _] = img.pixel(x, y).map(u32::from);
            if r > g + 60 && r > b + 60 {
                red += 1;
            }
            if g > r + 60 && g > b + 60 {
                green += 1;
            }
        }
    }
    (red, green)
}

#[test]
fn a_failed_element_is_not_drawn_the_rest_is_and_the_frame_counts_it() {
    capture_warnings();
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let red = rt.create_material(Material::colored(Vec4::new(1.0, 0.0, 0.0, 1.0))).unwrap();
    let green = rt.create_material(Material::colored(Vec4::new(0.0, 1.0, 0.0, 1.0))).unwrap();
    let failing = Arc::new(AtomicU8::new(0));
    let proxy = TwoCubes { mesh: two_cube_mesh(), materials: vec![red, green], failing: failing.clone() };
    rt.add_primitive(Box::new(proxy), Mat4::IDENTITY).unwrap();
    let fam = family(vec![top_view(4.0)]);
    let frame_failing = |rt: &mut RenderThread, bits: u8| {
        failing.store(bits, Ordering::Relaxed);
        let (stats, img) = frame(rt, &fam);
        (stats, red_and_green(&img))
    };

    let (all, (red_all, green_all)) = frame_failing(&mut rt, 0);
    assert_eq!(all.element_failures, 0);
    assert_eq!(all.pass(MeshPass::Base).draws, 2, "{:?}", all.pass(MeshPass::Base));
    assert!(red_all > 200 && green_all > 200, "both cubes drawn: {red_all} red, {green_all} green pixels");
    assert!(take_failure_warnings().is_empty());

    // The right (green) cube fails: the left one still draws, exactly as before.
    let (one, (red_one, green_one)) = frame_failing(&mut rt, RIGHT);
    assert_eq!(one.element_failures, 1, "one failure counted");
    assert_eq!(one.pass(MeshPass::Base).draws, 1, "{:?}", one.pass(MeshPass::Base));
    assert_eq!(green_one, 0, "the failed cube is not drawn");
    assert_eq!(red_one, red_all, "the other cube draws as before");
    let warnings = take_failure_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains(WHAT) && warnings[0].contains(&RhiError::OutOfDeviceMemory.to_string()), "{warnings:?}");
    assert!(!warnings[0].contains("more"), "{warnings:?}");

    // The next frame without failure counts none and draws both again.
    let (again, (red_again, green_again)) = frame_failing(&mut rt, 0);
    assert_eq!(again.element_failures, 0, "the count is the frame's own");
    assert_eq!((red_again, green_again), (red_all, green_all));
    assert_eq!(again.pass(MeshPass::Base).draws, 2);
    assert!(take_failure_warnings().is_empty());

    // Both fail: two failures counted, one warning for the primitive, an
    // empty frame that still renders.
    let (both, (red_none, green_none)) = frame_failing(&mut rt, LEFT | RIGHT);
    assert_eq!(both.element_failures, 2);
    assert_eq!(both.pass(MeshPass::Base).draws, 0);
    assert_eq!((red_none, green_none), (0, 0));
    let warnings = take_failure_warnings();
    assert_eq!(warnings.len(), 1, "one warning per primitive and frame: {warnings:?}");
    assert!(warnings[0].contains("(and 1 more)"), "{warnings:?}");

    assert_eq!(frame_failing(&mut rt, 0).0.element_failures, 0);
    assert_clean(&mut rt);
}

#[test]
fn an_element_failure_names_what_failed_and_keeps_its_error() {
    let failure = ElementFailure::new("particle emitter upload", RhiError::OutOfDeviceMemory);
    assert_eq!(failure.to_string(), format!("particle emitter upload: {}", RhiError::OutOfDeviceMemory));
    assert!(matches!(failure.error.downcast_ref::<RhiError>(), Some(RhiError::OutOfDeviceMemory)), "{failure:?}");
    let source = std::error::Error::source(&failure).expect("the error is the source");
    assert_eq!(source.to_string(), RhiError::OutOfDeviceMemory.to_string());
    // A message will do where there is no error value.
    assert_eq!(ElementFailure::new("x", "no room").to_string(), "x: no room");
}
