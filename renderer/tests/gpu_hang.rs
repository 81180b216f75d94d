//! A GPU that does not finish does not hang the CPU: a material whose pixel
//! shader runs for minutes makes the frame's wait end after the device's
//! wait timeout (`DeviceDesc::gpu_wait_timeout`, 2 s here) with
//! `RhiError::DeviceLost`, and dropping the render thread afterwards
//! returns at once, abandoning (leaking) the device's objects rather than
//! destroying what the GPU still uses or waiting for it.
//!
//! Its own test binary: the shader keeps lavapipe's threads busy until the
//! process exits, which would slow every test after it.

use glam::{Mat4, Vec3};
use renderer::*;
use rhi_vulkan::{Rect, RhiError};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A pixel shader that runs for minutes: a loop of llvmpipe's most
/// iterations (it stops any loop after 65,535), each a chain of 256 steps
/// it cannot fold.
fn endless_wgsl() -> String {
    let step = "        x = fract(x * 1.618034 + 0.1);\n".repeat(256);
    format!(
        "fn material_main(i: MaterialInput) -> MaterialOutput {{
    var o = default_material(i);
    var x = i.world_position.x * 0.37 + 0.5;
    for (var k = 0u; k < 65535u; k = k + 1u) {{
{step}    }}
    o.base_color = vec3<f32>(x);
    return o;
}}
"
    )
}

const TIMEOUT: Duration = Duration::from_secs(2);

#[test]
fn a_gpu_that_never_finishes_is_a_lost_device_after_the_timeout_and_shutdown_does_not_wait() {
    let desc = rhi_vulkan::DeviceDesc { gpu_wait_timeout: TIMEOUT, ..test_support::device_desc() };
    let mut rt = RenderThread::new(&desc, RenderThreadMode::Threaded).expect("a Vulkan device (run `cargo xtask test`)");
    let endless =
        rt.create_material(Material { shader: MaterialShader::new("endless.wgsl", &endless_wgsl()), ..Material::default() }).unwrap();
    let cube = StaticMeshRenderData::new(vec![shapes::cube(1.0)]).unwrap();
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(cube, vec![endless])), Mat4::IDENTITY).unwrap();
    let view = SceneView::perspective(Vec3::new(0.0, -1.6, 1.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 20.0, Rect::from_size(256, 256)).unwrap();
    let start = Instant::now();
    rt.render_frame(FrameRequest { family: ViewFamily::new(256, 256, vec![view]), read_back: true, execute: true }).unwrap();
    let answer = rt.read_back();
    let waited = start.elapsed();
    let answer = answer.map(|image| image.is_some());
    assert!(matches!(answer, Err(RendererError::Rhi(RhiError::DeviceLost))), "the frame's wait ends as a lost device: {answer:?}");
    assert!(waited < TIMEOUT * 10, "the wait took {waited:?}, the timeout is {TIMEOUT:?}");
    // Shutdown: the render thread and its device go without waiting for
    // the shader (on a thread, so a hang fails the test instead of
    // blocking it).
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        drop(rt);
        let _ = tx.send(());
    });
    assert!(rx.recv_timeout(TIMEOUT * 10).is_ok(), "dropping the render thread hangs");
    println!("read-back answered after {waited:?}; shutdown took {:?}", start.elapsed());
}
