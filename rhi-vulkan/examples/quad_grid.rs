//! The RHI alone: create a device, draw an instanced grid of quads offscreen
//! on two recording threads, read the image back and print a few pixels and
//! the validation counts.
//!
//! `cargo run -p proxima-rhi-vulkan --example quad_grid`

use rhi_vulkan::*;
use test_support::QuadGrid;

fn main() -> Result<()> {
    // The crates' `log` lines (device chosen, validation messages) on stderr; `RUST_LOG` filters them.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let device = Device::new(&DeviceDesc { validation: Validation::Enabled, ..Default::default() })?;
    println!("device: {} ({})", device.name(), device.info().device_type);
    let (w, h) = (256, 144);
    let color = device.create_texture(&TextureDesc::render_target("color", w, h, Format::Rgba8Unorm))?;
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, 16, 9)?;
    let mut frame = device.begin_frame()?;
    let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None, samples: 1 };
    let half = grid.instance_count / 2;
    let viewport = Rect::from_size(w, h);
    let (a, b) = rayon::join(
        || frame.record_secondary(&layout, |cmd| grid.record(cmd, viewport, 0, half, 1)),
        || frame.record_secondary(&layout, |cmd| grid.record(cmd, viewport, half, grid.instance_count - half, 1)),
    );
    let cmd = frame.cmd();
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment)?;
    cmd.begin_rendering(
        &RenderingDesc {
            color: vec![ColorAttachment { texture: color, load: LoadOp::Clear([0.0, 0.0, 0.0, 1.0]), store: true, resolve: None }],
            depth: None,
            area: viewport,
        },
        RenderingContents::Secondary,
    )?;
    cmd.execute_secondaries(&[a?.0, b?.0])?;
    cmd.end_rendering().unwrap();
    frame.submit()?;
    let image = device.read_texture(color, TextureState::ColorAttachment)?;
    println!("pixel (8, 8) = {:?}, pixel (248, 136) = {:?}", image.pixel(8, 8), image.pixel(248, 136));
    grid.destroy(&device);
    device.destroy_texture(color);
    let report = device.shutdown();
    println!(
        "validation errors: {}, warnings: {}, leaked allocations: {}",
        report.validation_errors, report.validation_warnings, report.leaked_allocations
    );
    Ok(())
}
