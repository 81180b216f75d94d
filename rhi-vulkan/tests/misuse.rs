//! Misuse a real program makes by accident, each ending in a typed error with
//! nothing sent to Vulkan — on the real device (lavapipe in CI) with the
//! Khronos validation layer on, which must report nothing: an error here
//! means a safe call reached the driver with invalid arguments.

use rhi_vulkan::*;
use std::time::Duration;
use test_support::QuadGrid;
use test_support::{assert_clean, new_device as device};

const W: u32 = 32;
const H: u32 = 32;

fn target(device: &Device) -> TextureHandle {
    device.create_texture(&TextureDesc::render_target("color", W, H, Format::Rgba8Unorm)).unwrap()
}

fn pass(texture: TextureHandle) -> RenderingDesc {
    RenderingDesc {
        color: vec![ColorAttachment { texture, load: LoadOp::Clear([0.0; 4]), store: true }],
        depth: None,
        area: Rect::from_size(W, H),
    }
}

/// A quad grid of `cols` × `rows` instances on `device` and a color target to draw it into.
fn grid_and_target(device: &Device, cols: u32, rows: u32) -> (QuadGrid, TextureHandle) {
    (QuadGrid::new(device, Format::Rgba8Unorm, cols, rows).unwrap(), target(device))
}

/// Ends the frame's open pass and submits it.
fn end_and_submit(mut frame: Frame<'_>) {
    frame.cmd().end_rendering().unwrap();
    frame.submit().unwrap();
}

/// Waits for the device, then checks the validation layer reported nothing.
fn finish(device: &Device) {
    device.wait_idle().unwrap();
    assert_clean(device);
}

/// [`finish`] for a test that drew [`grid_and_target`]'s grid: frees both first.
fn finish_grid(device: &Device, grid: QuadGrid, color: TextureHandle) {
    device.wait_idle().unwrap();
    grid.destroy(device);
    device.destroy_texture(color);
    assert_clean(device);
}

fn is_state_err<T: std::fmt::Debug>(r: Result<T>) -> bool {
    matches!(r, Err(RhiError::InvalidState(_)))
}

fn is_desc_err<T: std::fmt::Debug>(r: Result<T>) -> bool {
    matches!(r, Err(RhiError::InvalidDesc(_)))
}

/// Opens a frame with `color` cleared in an inline pass and the grid's
/// pipeline, streams, viewport and scissor bound, ready to draw.
fn ready_to_draw<'d>(device: &'d Device, grid: &QuadGrid, color: TextureHandle) -> Frame<'d> {
    let mut frame = device.begin_frame().unwrap();
    let cmd = frame.cmd();
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    grid.record(cmd, Rect::from_size(W, H), 0, 1, 1).unwrap();
    frame
}

#[test]
fn draws_dispatches_and_pass_ends_need_their_state() {
    let device = device();
    let (grid, color) = grid_and_target(&device, 2, 2);
    let mut frame = device.begin_frame().unwrap();
    let cmd = frame.cmd();
    // Nothing open, nothing bound.
    assert!(is_state_err(cmd.draw(3, 1, 0, 0)));
    assert!(is_state_err(cmd.draw_indexed(3, 1, 0, 0, 0)));
    assert!(is_state_err(cmd.dispatch(1, 1, 1)));
    assert!(is_state_err(cmd.end_rendering()));
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    // A pass is open but no pipeline is bound.
    assert!(is_state_err(cmd.draw(3, 1, 0, 0)));
    assert!(is_state_err(cmd.begin_rendering(&pass(color), RenderingContents::Inline)), "nested pass");
    cmd.bind_pipeline(grid.pipeline).unwrap();
    // Pipeline bound, streams and viewport not.
    assert!(is_state_err(cmd.draw(6, 1, 0, 0)));
    cmd.bind_vertex_buffers(0, &[(grid.corners, 0), (grid.instances, 0)]).unwrap();
    assert!(is_state_err(cmd.draw(6, 1, 0, 0)), "no viewport or scissor");
    cmd.set_viewport(Rect::from_size(W, H)).unwrap();
    cmd.set_scissor(Rect::from_size(W, H)).unwrap();
    // A graphics pipeline does not dispatch, and copies and barriers stay out of passes.
    assert!(is_state_err(cmd.dispatch(1, 1, 1)));
    assert!(is_state_err(cmd.texture_barrier(color, TextureState::ColorAttachment, TextureState::ShaderRead)));
    // No index buffer bound.
    assert!(is_state_err(cmd.draw_indexed(3, 1, 0, 0, 0)));
    // The grid's shaders read a 16-byte push-constant block: all of it must be written.
    assert!(is_state_err(cmd.draw(6, 1, 0, 0)), "push constants unset");
    cmd.push_constants(0, &[0; 8]).unwrap();
    assert!(is_state_err(cmd.draw(6, 1, 0, 0)), "half the push constants unset");
    assert!(is_desc_err(cmd.push_constants(12, &[0; 8])), "past the block");
    cmd.push_constants(8, &[0; 8]).unwrap();
    cmd.draw(6, 1, 0, 0).unwrap();
    // A pass left open is not submitted.
    assert!(is_state_err(frame.submit()));
    // The device goes on working.
    let mut frame = ready_to_draw(&device, &grid, color);
    frame.cmd().draw(6, 1, 0, 0).unwrap();
    end_and_submit(frame);
    finish_grid(&device, grid, color);
}

#[test]
fn draw_ranges_stay_inside_the_bound_buffers() {
    let device = device();
    let (grid, color) = grid_and_target(&device, 2, 2);
    let index =
        device.create_buffer_init(&BufferDesc::gpu_only("indices", 24, BufferUsage::INDEX), bytemuck_u32(&[0, 1, 2, 3, 4, 5])).unwrap();
    let indirect = device
        .create_buffer_init(&BufferDesc::gpu_only("args", 40, BufferUsage::INDIRECT), bytemuck_u32(&[6, 1, 0, 0, 0, 6, 1, 0, 0, 0]))
        .unwrap();
    let mut frame = ready_to_draw(&device, &grid, color);
    let cmd = frame.cmd();
    // 6 corners, 4 instances.
    assert!(is_desc_err(cmd.draw(7, 1, 0, 0)), "vertex 6 is past the corners");
    assert!(is_desc_err(cmd.draw(6, 1, 0, 4)), "instance 4 is past the grid");
    assert!(is_desc_err(cmd.draw(6, u32::MAX, 0, u32::MAX)), "u32 overflow of the instance range");
    assert!(is_desc_err(cmd.bind_vertex_buffers(0, &[(grid.corners, 48)])), "offset at the end");
    assert!(is_desc_err(cmd.bind_vertex_buffers(7, &[(grid.corners, 0), (grid.corners, 0)])), "stream 8");
    cmd.draw(6, 4, 0, 0).unwrap();
    assert!(is_desc_err(cmd.bind_index_buffer(index, 24, IndexFormat::Uint32)), "index offset at the end");
    assert!(is_desc_err(cmd.bind_index_buffer(index, 2, IndexFormat::Uint32)), "misaligned index offset");
    cmd.bind_index_buffer(index, 4, IndexFormat::Uint32).unwrap();
    assert!(is_desc_err(cmd.draw_indexed(6, 1, 0, 0, 0)), "5 indices remain after offset 4");
    assert!(is_desc_err(cmd.draw_indexed(1, 1, u32::MAX, 0, 0)));
    cmd.draw_indexed(5, 1, 0, 0, 0).unwrap();
    // Indirect: 2 records of 20 bytes.
    assert!(is_desc_err(cmd.draw_indexed_indirect(indirect, 24, 1, 20)), "record past the end");
    assert!(is_desc_err(cmd.draw_indexed_indirect(indirect, 2, 1, 20)), "misaligned offset");
    assert!(is_desc_err(cmd.draw_indexed_indirect(indirect, u64::MAX - 3, 1, 20)), "offset overflow");
    if device.features().multi_draw_indirect {
        assert!(is_desc_err(cmd.draw_indexed_indirect(indirect, 0, 3, 20)), "3 records in 40 bytes");
        assert!(is_desc_err(cmd.draw_indexed_indirect(indirect, 0, 2, 12)), "stride below the record");
        assert!(is_desc_err(cmd.draw_indexed_indirect(indirect, 0, u32::MAX, u32::MAX)), "span overflow");
        cmd.draw_indexed_indirect(indirect, 0, 2, 20).unwrap();
    }
    cmd.draw_indexed_indirect(indirect, 20, 1, 20).unwrap();
    assert!(is_desc_err(cmd.set_viewport(Rect::new(1, 0, u32::MAX, 10))), "viewport past the limits");
    assert!(is_desc_err(cmd.set_scissor(Rect::new(i32::MAX, 0, 10, 10))), "scissor offset + extent overflows");
    assert!(is_desc_err(cmd.set_scissor(Rect::new(-1, 0, 10, 10))), "negative scissor offset");
    end_and_submit(frame);
    for b in [index, indirect] {
        device.destroy_buffer(b);
    }
    finish_grid(&device, grid, color);
}

fn bytemuck_u32(v: &[u32]) -> &[u8] {
    bytemuck::cast_slice(v)
}

#[test]
fn copies_and_fills_check_their_ranges_without_overflow() {
    let device = device();
    let usage = BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST | BufferUsage::STORAGE;
    let a = device.create_buffer(&BufferDesc::gpu_only("a", 64, usage)).unwrap();
    let b = device.create_buffer(&BufferDesc::gpu_only("b", 64, usage)).unwrap();
    let tex = device.create_texture(&TextureDesc::sampled("t", 4, 4, Format::Rgba8Unorm)).unwrap();
    let r = device.immediate(|cmd| {
        // The issue's example: in release `u64::MAX - 15 + 32` wrapped to 16 and passed.
        assert!(is_desc_err(cmd.copy_buffer(a, u64::MAX - 15, b, 0, 32)));
        assert!(is_desc_err(cmd.copy_buffer(a, 0, b, u64::MAX - 15, 32)));
        assert!(is_desc_err(cmd.copy_buffer(a, 0, b, 0, 65)));
        assert!(is_desc_err(cmd.copy_buffer(a, 0, a, 16, 32)), "overlapping copy within one buffer");
        assert!(is_desc_err(cmd.copy_buffer_regions(a, b, &[(0, 0, 16), (u64::MAX, 0, 2)])));
        assert!(is_desc_err(cmd.fill_buffer(a, u64::MAX - 3, 8, 0)));
        assert!(is_desc_err(cmd.fill_buffer(a, 0, 0, 0)), "empty fill");
        assert!(is_desc_err(cmd.copy_buffer_to_texture(a, u64::MAX - 15, tex)));
        assert!(is_desc_err(cmd.copy_buffer_to_texture(a, 2, tex)), "unaligned texel offset");
        assert!(is_desc_err(cmd.copy_texture_to_buffer(tex, a, 0)), "the texture lacks TRANSFER_SRC");
        cmd.fill_buffer(a, 0, 64, 7)?;
        cmd.buffer_barrier(a, BufferState::TransferDst, BufferState::TransferSrc)?;
        cmd.copy_buffer(a, 0, b, 0, 64)
    });
    r.unwrap();
    assert_eq!(device.read_buffer(b, 60, 4).unwrap(), 7u32.to_le_bytes());
    device.destroy_buffer(a);
    device.destroy_buffer(b);
    device.destroy_texture(tex);
    finish(&device);
}

#[test]
fn secondaries_run_once_in_the_pass_they_were_recorded_for() {
    let device = device();
    let other_device = self::device();
    let (grid, color) = grid_and_target(&device, 2, 2);
    let rgba = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None };
    let bgra = RenderingLayout { color_formats: vec![Format::Bgra8Unorm], depth_format: None };
    // Recorded on another device, in its frame 0 like ours: only the device tells them apart.
    let foreign = {
        let f = other_device.begin_frame().unwrap();
        f.record_secondary(&rgba, |_| Ok(())).unwrap().0
    };
    let mut frame = device.begin_frame().unwrap();
    assert_eq!(frame.index(), 0);
    let (a, ()) = frame.record_secondary(&rgba, |cmd| grid.record(cmd, Rect::from_size(W, H), 0, 4, 1)).unwrap();
    let (wrong_layout, ()) = frame.record_secondary(&bgra, |_| Ok(())).unwrap();
    // In a secondary, the grid's pipeline (RGBA8) does not fit a BGRA pass.
    let (_, r) = frame.record_secondary(&bgra, |cmd| Ok(grid.record(cmd, Rect::from_size(W, H), 0, 4, 1))).unwrap();
    assert!(is_state_err(r), "a pipeline for other formats draws nothing");
    let bad = RenderingLayout { color_formats: vec![Format::Depth32Float], depth_format: None };
    assert!(is_desc_err(frame.record_secondary(&bad, |_| Ok(()))), "a depth format as color");
    let cmd = frame.cmd();
    assert!(is_state_err(cmd.execute_secondaries(std::slice::from_ref(&a))), "outside a pass");
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    assert!(is_state_err(cmd.execute_secondaries(std::slice::from_ref(&a))), "an inline pass");
    cmd.end_rendering().unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Secondary).unwrap();
    assert!(is_state_err(cmd.draw(6, 1, 0, 0)), "an inline draw in a secondaries pass");
    assert!(is_state_err(cmd.bind_pipeline(grid.pipeline)), "state set in a secondaries pass");
    assert!(is_state_err(cmd.set_viewport(Rect::from_size(W, H))));
    assert!(is_desc_err(cmd.execute_secondaries(std::slice::from_ref(&wrong_layout))));
    assert!(is_desc_err(cmd.execute_secondaries(std::slice::from_ref(&foreign))));
    cmd.execute_secondaries(std::slice::from_ref(&a)).unwrap();
    assert!(is_desc_err(cmd.execute_secondaries(std::slice::from_ref(&a))), "executed twice");
    end_and_submit(frame);
    finish_grid(&device, grid, color);
    assert_clean(&other_device);
}

const BINDINGS_WGSL: &str = r#"
struct Params { tint: vec4<f32> }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> data: array<vec4<f32>>;
@group(1) @binding(0) var tex: texture_2d<f32>;
@group(1) @binding(1) var samp: sampler;

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let p = vec2<f32>(f32(i & 1u), f32(i >> 1u)) * 2.0 - 1.0;
    return vec4<f32>(p, 0.0, 1.0) + data[0] * 0.0;
}

@fragment
fn fs_main() -> @location(0) vec4<f32> {
    return params.tint * textureSampleLevel(tex, samp, vec2<f32>(0.5), 0.0);
}
"#;

const OTHER_GROUP0_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> only: array<vec4<f32>>;
@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    return only[i];
}
@fragment
fn fs_main() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
"#;

fn pipeline(device: &Device, name: &str, wgsl: &str) -> PipelineHandle {
    let shader = device.create_shader(name, wgsl).unwrap();
    device
        .create_graphics_pipeline(&GraphicsPipelineDesc {
            primitive: PrimitiveState { topology: PrimitiveTopology::TriangleStrip, ..Default::default() },
            ..GraphicsPipelineDesc::color(shader, Format::Rgba8Unorm)
        })
        .unwrap()
}

#[test]
fn bind_groups_check_their_entries_and_where_they_bind() {
    let device = device();
    let p = pipeline(&device, "bindings.wgsl", BINDINGS_WGSL);
    let other = pipeline(&device, "other.wgsl", OTHER_GROUP0_WGSL);
    let limits = device.info().clone();
    let uniform = device.create_buffer(&BufferDesc::host_visible("uniform", 4096, BufferUsage::UNIFORM)).unwrap();
    let storage = device.create_buffer(&BufferDesc::host_visible("storage", 4096, BufferUsage::STORAGE)).unwrap();
    let vertex_only = device.create_buffer(&BufferDesc::host_visible("vertex", 4096, BufferUsage::VERTEX)).unwrap();
    let tex = device.create_texture(&TextureDesc::sampled("t", 4, 4, Format::Rgba8Unorm)).unwrap();
    let not_sampled = device
        .create_texture(&TextureDesc { usage: TextureUsage::RENDER_TARGET, ..TextureDesc::render_target("rt", 4, 4, Format::Rgba8Unorm) })
        .unwrap();
    let sampler = device.create_sampler(&SamplerDesc::linear_clamp()).unwrap();
    let shadow_sampler = device.create_sampler(&SamplerDesc::shadow()).unwrap();
    let color = target(&device);
    let mut frame = device.begin_frame().unwrap();
    let g0 = |a: BindingResource, b: BindingResource| [(0, a), (1, b)];
    let ub = BindingResource::Buffer(uniform);
    let sb = BindingResource::Buffer(storage);
    // Duplicate binding numbers (the count matches, binding 1 is missing).
    assert!(is_desc_err(frame.create_bind_group(p, 0, &[(0, ub), (0, ub)])));
    // Wrong usages.
    assert!(is_desc_err(frame.create_bind_group(p, 0, &g0(BindingResource::Buffer(vertex_only), sb))));
    assert!(is_desc_err(frame.create_bind_group(p, 0, &g0(ub, BindingResource::Buffer(uniform)))));
    assert!(is_desc_err(frame.create_bind_group(
        p,
        1,
        &[(0, BindingResource::Texture(not_sampled)), (1, BindingResource::Sampler(sampler))]
    )));
    assert!(is_desc_err(frame.create_bind_group(
        p,
        1,
        &[(0, BindingResource::Texture(tex)), (1, BindingResource::Sampler(shadow_sampler))]
    )));
    // Misaligned uniform offset, and ranges over the limits or the buffer.
    if limits.min_uniform_buffer_offset_alignment > 1 {
        let r = BindingResource::BufferRange { buffer: uniform, offset: 1, size: 16 };
        assert!(is_desc_err(frame.create_bind_group(p, 0, &g0(r, sb))));
    }
    let over = BindingResource::BufferRange { buffer: uniform, offset: 0, size: u64::from(limits.max_uniform_buffer_range) + 1 };
    assert!(is_desc_err(frame.create_bind_group(p, 0, &g0(over, sb))));
    let wraps = BindingResource::BufferRange { buffer: storage, offset: u64::MAX - 15, size: 32 };
    assert!(is_desc_err(frame.create_bind_group(p, 0, &g0(ub, wraps))));
    let group0 = frame.create_bind_group(p, 0, &g0(ub, sb)).unwrap();
    let group1 = frame.create_bind_group(p, 1, &[(0, BindingResource::Texture(tex)), (1, BindingResource::Sampler(sampler))]).unwrap();
    let foreign0 = frame.create_bind_group(other, 0, &[(0, sb)]).unwrap();
    let cmd = frame.cmd();
    cmd.texture_barrier(tex, TextureState::Undefined, TextureState::ShaderRead).unwrap();
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    assert!(is_state_err(cmd.bind_group(0, &group0)), "no pipeline bound");
    cmd.bind_pipeline(p).unwrap();
    cmd.set_viewport(Rect::from_size(W, H)).unwrap();
    cmd.set_scissor(Rect::from_size(W, H)).unwrap();
    assert!(is_desc_err(cmd.bind_group(0, &foreign0)), "another layout's group");
    assert!(is_desc_err(cmd.bind_group(1, &group0)), "group 0's set at index 1");
    assert!(is_desc_err(cmd.bind_group(2, &group0)), "past the layout");
    cmd.bind_group(0, &group0).unwrap();
    assert!(is_state_err(cmd.draw(4, 1, 0, 0)), "group 1 is not bound");
    cmd.bind_group(1, &group1).unwrap();
    cmd.draw(4, 1, 0, 0).unwrap();
    // Another layout disturbs the sets: the draw needs them bound again.
    cmd.bind_pipeline(other).unwrap();
    assert!(is_state_err(cmd.draw(4, 1, 0, 0)));
    cmd.bind_group(0, &foreign0).unwrap();
    cmd.draw(4, 1, 0, 0).unwrap();
    cmd.end_rendering().unwrap();
    frame.submit().unwrap();
    // A group of a finished frame is refused in the next.
    let mut next = device.begin_frame().unwrap();
    next.cmd().texture_barrier(color, TextureState::ColorAttachment, TextureState::ColorAttachment).unwrap();
    next.cmd().begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    next.cmd().bind_pipeline(p).unwrap();
    assert!(is_desc_err(next.cmd().bind_group(0, &group0)));
    next.cmd().end_rendering().unwrap();
    next.submit().unwrap();
    device.wait_idle().unwrap();
    for b in [uniform, storage, vertex_only] {
        device.destroy_buffer(b);
    }
    for t in [tex, not_sampled, color] {
        device.destroy_texture(t);
    }
    device.destroy_sampler(sampler);
    device.destroy_sampler(shadow_sampler);
    assert_clean(&device);
}

#[test]
fn bindings_past_the_devices_per_stage_limits_are_refused_at_pipeline_creation() {
    let device = device();
    // One storage image more than a stage may see.
    let n = device.info().max_per_stage_storage_images + 1;
    let mut wgsl = String::new();
    for i in 0..n {
        wgsl += &format!("@group(0) @binding({i}) var img{i}: texture_storage_2d<rgba8unorm, write>;\n");
    }
    wgsl += "@compute @workgroup_size(1)\nfn main() {\n";
    for i in 0..n {
        wgsl += &format!("    textureStore(img{i}, vec2<i32>(0), vec4<f32>(1.0));\n");
    }
    wgsl += "}\n";
    let shader = device.create_shader("many.wgsl", &wgsl).unwrap();
    let r = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "main") });
    assert!(matches!(r, Err(RhiError::Unsupported(_))), "{r:?}");
    assert_eq!(device.counts().pipelines, 0);
    device.destroy_shader(shader);
    finish(&device);
}

#[test]
fn immediates_nest_and_run_on_many_threads() {
    let device = device();
    let usage = BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST;
    let a = device.create_buffer(&BufferDesc::gpu_only("a", 16, usage)).unwrap();
    let b = device.create_buffer(&BufferDesc::gpu_only("b", 16, usage)).unwrap();
    let device = &device;
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            device.immediate(|cmd| {
                cmd.fill_buffer(a, 0, 16, 1)?;
                // An immediate inside an immediate used to deadlock on the pool's lock.
                device.immediate(|inner| inner.fill_buffer(b, 0, 16, 2))
            })
        });
        let start = std::time::Instant::now();
        while !h.is_finished() {
            assert!(start.elapsed() < Duration::from_secs(30), "nested immediate deadlocked");
            std::thread::sleep(Duration::from_millis(10));
        }
        h.join().unwrap().unwrap();
        let workers: Vec<_> =
            (0..4u32).map(|i| s.spawn(move || device.immediate(|cmd| cmd.fill_buffer(if i % 2 == 0 { a } else { b }, 0, 16, i)))).collect();
        for w in workers {
            w.join().unwrap().unwrap();
        }
    });
    assert_eq!(device.read_buffer(a, 0, 4).unwrap().len(), 4);
    // A pass left open by an immediate is refused and nothing is submitted.
    let color = target(device);
    let r = device.immediate(|cmd| {
        cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment)?;
        cmd.begin_rendering(&pass(color), RenderingContents::Inline).map(|_| ())
    });
    assert!(is_state_err(r));
    device.destroy_texture(color);
    device.destroy_buffer(a);
    device.destroy_buffer(b);
    finish(device);
}

#[test]
fn a_buffer_destroyed_during_an_immediate_waits_for_its_submission() {
    let device = device();
    let usage = BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST;
    let a = device.create_buffer(&BufferDesc::gpu_only("a", 1 << 20, usage)).unwrap();
    let b = device.create_buffer(&BufferDesc::gpu_only("b", 1 << 20, usage)).unwrap();
    device
        .immediate(|cmd| {
            cmd.copy_buffer(a, 0, b, 0, 1 << 20)?;
            // Another thread destroys the source while this is being recorded.
            std::thread::scope(|s| s.spawn(|| device.destroy_buffer(a)).join().unwrap());
            // Nothing submitted has used it; collecting must not free it now.
            device.collect_garbage()?;
            assert_eq!(device.counts().pending_deletions, 1, "freed under a recording");
            Ok(())
        })
        .unwrap();
    device.collect_garbage().unwrap();
    assert_eq!(device.counts().pending_deletions, 0);
    device.destroy_buffer(b);
    finish(&device);
}

#[test]
fn a_panic_while_recording_a_secondary_returns_its_pool() {
    let device = device();
    let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None };
    // Every frame slot gets its recorder pool first.
    for _ in 0..device.frames_in_flight() {
        let frame = device.begin_frame().unwrap();
        frame.record_secondary(&layout, |_| Ok(())).unwrap();
    }
    let pools = device.counts().command_pools;
    for _ in 0..3 {
        let frame = device.begin_frame().unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            frame.record_secondary(&layout, |_| -> Result<()> { panic!("a recording task panicked") })
        }));
        assert!(r.is_err());
        frame.record_secondary(&layout, |_| Ok(())).unwrap();
    }
    assert_eq!(device.counts().command_pools, pools, "the panicking recorder's pool was lost");
    finish(&device);
}

#[test]
fn gpu_only_writes_after_draws_read_the_buffer_are_ordered() {
    // Synchronization validation (on in tests) reports the write-after-read
    // hazard of a copy into a buffer an earlier submission still reads.
    let device = device();
    let (grid, color) = grid_and_target(&device, 4, 4);
    for i in 0..3u32 {
        let mut frame = device.begin_frame().unwrap();
        let state = if i == 0 { TextureState::Undefined } else { TextureState::ColorAttachment };
        frame.cmd().texture_barrier(color, state, TextureState::ColorAttachment).unwrap();
        frame.cmd().begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
        grid.record(frame.cmd(), Rect::from_size(W, H), 0, grid.instance_count, 1).unwrap();
        end_and_submit(frame);
        // Not waited for: the frame may still read the instances.
        let data = vec![0u8; 24 * grid.instance_count as usize];
        device.write_buffer(grid.instances, 0, &data).unwrap();
    }
    finish_grid(&device, grid, color);
}

#[test]
fn draw_ranges_follow_the_streams_bound_since_the_last_draw() {
    // Draws check their ranges against limits computed once per state
    // change: rebinding a stream between draws must narrow or widen them.
    let device = device();
    let (grid, color) = grid_and_target(&device, 2, 2);
    let mut frame = ready_to_draw(&device, &grid, color);
    let cmd = frame.cmd();
    cmd.draw(6, 4, 0, 0).unwrap();
    // Instances from byte 24 (instance 1) on: 3 of the grid's 4 remain.
    cmd.bind_vertex_buffers(1, &[(grid.instances, 24)]).unwrap();
    assert!(is_desc_err(cmd.draw(6, 4, 0, 0)), "4 instances after rebinding at instance 1");
    assert!(is_desc_err(cmd.draw(6, 1, 0, 3)), "instance 3 after rebinding at instance 1");
    cmd.draw(6, 3, 0, 0).unwrap();
    // Corners from byte 8 (corner 1) on: 5 of 6 remain.
    cmd.bind_vertex_buffers(0, &[(grid.corners, 8)]).unwrap();
    assert!(is_desc_err(cmd.draw(6, 1, 0, 0)), "6 corners after rebinding at corner 1");
    cmd.draw(5, 3, 0, 0).unwrap();
    // The whole buffers again: the whole grid draws.
    cmd.bind_vertex_buffers(0, &[(grid.corners, 0), (grid.instances, 0)]).unwrap();
    cmd.draw(6, 4, 0, 0).unwrap();
    end_and_submit(frame);
    finish_grid(&device, grid, color);
}

#[test]
fn immediate_submissions_reuse_their_command_buffers() {
    let device = device();
    let usage = BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST;
    let a = device.create_buffer(&BufferDesc::gpu_only("a", 256, usage)).unwrap();
    device.write_buffer(a, 0, &[1; 256]).unwrap();
    let before = device.counts();
    for i in 0..50u8 {
        device.write_buffer(a, 0, &[i; 256]).unwrap();
        assert_eq!(device.read_buffer(a, 255, 1).unwrap(), [i]);
    }
    let after = device.counts();
    // A command buffer allocated per call (never freed) grew host memory every frame.
    assert_eq!(after.command_buffers, before.command_buffers, "{before:?} -> {after:?}");
    assert_eq!(after.command_pools, before.command_pools);
    device.destroy_buffer(a);
    finish(&device);
}

#[test]
fn a_transfer_only_texture_gets_no_view() {
    // Found by the property test: Vulkan forbids views of images no shader
    // or pass can see, and the RHI made one for every texture.
    let device = device();
    let usage = TextureUsage::TRANSFER_SRC | TextureUsage::TRANSFER_DST;
    let t = device.create_texture(&TextureDesc { usage, ..TextureDesc::sampled("staging image", 32, 32, Format::Rgba8Unorm) }).unwrap();
    let b = device.create_buffer(&BufferDesc::gpu_only("texels", 32 * 32 * 4, BufferUsage::TRANSFER_SRC)).unwrap();
    device
        .immediate(|cmd| {
            cmd.texture_barrier(t, TextureState::Undefined, TextureState::TransferDst)?;
            cmd.copy_buffer_to_texture(b, 0, t)
        })
        .unwrap();
    device.destroy_texture(t);
    device.destroy_buffer(b);
    finish(&device);
}
