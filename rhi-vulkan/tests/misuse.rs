//! Misuse a real program makes by accident, each ending in a typed error with
//! nothing sent to Vulkan — on the real device (lavapipe in CI) with the
//! Khronos validation layer on, which must report nothing: an error here
//! means a safe call reached the driver with invalid arguments.

use rhi_vulkan::*;
use std::ops::Range;
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
        color: vec![ColorAttachment { texture, load: LoadOp::Clear([0.0; 4]), store: true, resolve: None }],
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

/// Asserts that `$r` is an error matching `$p` (a [`RhiError`] pattern),
/// printing what it was otherwise.
macro_rules! assert_err {
    ($r:expr, $p:pat $(if $g:expr)? $(, $why:literal)?) => {{
        let r = $r;
        assert!(matches!(r, Err($p) $(if $g)?), "{}{r:?}", concat!($($why, ": ",)? ""));
    }};
}

use PassState::{Inline, Outside, Secondaries, Secondary};

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
    assert_err!(cmd.draw(3, 1, 0, 0), RhiError::WrongPass { command: "draw", found: Outside, needed: Inline });
    assert_err!(cmd.draw_indexed(3, 1, 0, 0, 0), RhiError::WrongPass { command: "draw_indexed", found: Outside, .. });
    assert_err!(cmd.dispatch(1, 1, 1), RhiError::NotBound { command: "dispatch", missing: Unbound::Pipeline });
    assert_err!(cmd.end_rendering(), RhiError::WrongPass { command: "end_rendering", found: Outside, needed: Inline });
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    // A pass is open but no pipeline is bound.
    assert_err!(cmd.draw(3, 1, 0, 0), RhiError::NotBound { command: "draw", missing: Unbound::Pipeline });
    let nested = cmd.begin_rendering(&pass(color), RenderingContents::Inline);
    assert_err!(nested, RhiError::WrongPass { command: "begin_rendering", found: Inline, needed: Outside }, "nested pass");
    cmd.bind_pipeline(grid.pipeline).unwrap();
    // Pipeline bound, streams and viewport not.
    assert_err!(cmd.draw(6, 1, 0, 0), RhiError::NotBound { missing: Unbound::VertexStream(0), .. });
    cmd.bind_vertex_buffers(0, &[(grid.corners, 0), (grid.instances, 0)]).unwrap();
    assert_err!(cmd.draw(6, 1, 0, 0), RhiError::NotBound { missing: Unbound::Viewport, .. }, "no viewport or scissor");
    cmd.set_viewport(Rect::from_size(W, H)).unwrap();
    assert_err!(cmd.draw(6, 1, 0, 0), RhiError::NotBound { missing: Unbound::Scissor, .. }, "no scissor");
    cmd.set_scissor(Rect::from_size(W, H)).unwrap();
    // Copies, barriers and dispatches stay out of passes.
    assert_err!(cmd.dispatch(1, 1, 1), RhiError::WrongPass { command: "dispatch", found: Inline, needed: Outside });
    let barrier = cmd.texture_barrier(color, TextureState::ColorAttachment, TextureState::ShaderRead);
    assert_err!(barrier, RhiError::WrongPass { command: "a texture barrier", found: Inline, needed: Outside });
    // The grid's shaders read a 16-byte push-constant block: all of it must be written.
    assert_err!(cmd.draw(6, 1, 0, 0), RhiError::NotBound { missing: Unbound::PushConstants, .. }, "push constants unset");
    cmd.push_constants(0, &[0; 8]).unwrap();
    assert_err!(cmd.draw(6, 1, 0, 0), RhiError::NotBound { missing: Unbound::PushConstants, .. }, "half unset");
    let past = cmd.push_constants(12, &[0; 8]);
    assert_err!(past, RhiError::OutOfRange { what: "bytes", range: Range { start: 12, end: 20 }, limit: 16, .. }, "past the block");
    assert_err!(cmd.push_constants(2, &[0; 4]), RhiError::Misaligned { what: "offset", value: 2, alignment: 4, .. });
    cmd.push_constants(8, &[0; 8]).unwrap();
    // No index buffer bound.
    assert_err!(cmd.draw_indexed(3, 1, 0, 0, 0), RhiError::NotBound { command: "draw_indexed", missing: Unbound::IndexBuffer });
    cmd.draw(6, 1, 0, 0).unwrap();
    // A pass left open is not submitted.
    assert_err!(frame.submit(), RhiError::WrongPass { command: "Frame::submit", found: Inline, needed: Outside });
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
    // 6 corners, 4 instances: the error names the stream, the range and what the stream holds.
    match cmd.draw(7, 1, 0, 0) {
        Err(RhiError::OutOfRange { what: "vertices", resource, range, limit: 6 }) => {
            assert_eq!((resource.as_str(), range), ("vertex stream 0", 0..7), "vertex 6 is past the corners");
        }
        other => panic!("vertex 6 is past the corners: {other:?}"),
    }
    match cmd.draw(6, 1, 0, 4) {
        Err(RhiError::OutOfRange { what: "instances", resource, range, limit: 4 }) => {
            assert_eq!((resource.as_str(), range), ("vertex stream 1", 4..5), "instance 4 is past the grid");
        }
        other => panic!("instance 4 is past the grid: {other:?}"),
    }
    let overflow = cmd.draw(6, u32::MAX, 0, u32::MAX);
    let end = 2 * u64::from(u32::MAX);
    assert_err!(overflow, RhiError::OutOfRange { what: "instances", ref range, limit: 4, .. } if range.end == end, "no u32 wrap");
    let at_end = cmd.bind_vertex_buffers(0, &[(grid.corners, 48)]);
    assert_err!(at_end, RhiError::OutOfRange { what: "vertex buffer offset", range: Range { start: 48, end: 49 }, limit: 48, .. });
    let stream_8 = cmd.bind_vertex_buffers(7, &[(grid.corners, 0), (grid.corners, 0)]);
    assert_err!(stream_8, RhiError::OutOfRange { what: "vertex streams", range: Range { start: 7, end: 9 }, limit: 8, .. });
    cmd.draw(6, 4, 0, 0).unwrap();
    let at_end = cmd.bind_index_buffer(index, 24, IndexFormat::Uint32);
    assert_err!(at_end, RhiError::OutOfRange { what: "index buffer offset", range: Range { start: 24, end: 25 }, limit: 24, .. });
    let misaligned = cmd.bind_index_buffer(index, 2, IndexFormat::Uint32);
    assert_err!(misaligned, RhiError::Misaligned { what: "offset", value: 2, alignment: 4, .. });
    cmd.bind_index_buffer(index, 4, IndexFormat::Uint32).unwrap();
    let six = cmd.draw_indexed(6, 1, 0, 0, 0);
    assert_err!(six, RhiError::OutOfRange { what: "indices", range: Range { start: 0, end: 6 }, limit: 5, .. }, "5 after offset 4");
    assert_err!(cmd.draw_indexed(1, 1, u32::MAX, 0, 0), RhiError::OutOfRange { what: "indices", limit: 5, .. });
    cmd.draw_indexed(5, 1, 0, 0, 0).unwrap();
    // Indirect: 2 records of 20 bytes.
    let bytes = "indirect argument bytes";
    let past = cmd.draw_indexed_indirect(indirect, 24, 1, 20);
    assert_err!(past, RhiError::OutOfRange { what, range: Range { start: 24, end: 44 }, limit: 40, .. } if what == bytes);
    let misaligned = cmd.draw_indexed_indirect(indirect, 2, 1, 20);
    assert_err!(misaligned, RhiError::Misaligned { what: "offset", value: 2, alignment: 4, .. });
    let wraps = cmd.draw_indexed_indirect(indirect, u64::MAX - 3, 1, 20);
    assert_err!(wraps, RhiError::OutOfRange { range: Range { end: u64::MAX, .. }, limit: 40, .. }, "the end saturates");
    if device.features().multi_draw_indirect {
        let three = cmd.draw_indexed_indirect(indirect, 0, 3, 20);
        assert_err!(three, RhiError::OutOfRange { range: Range { start: 0, end: 60 }, limit: 40, .. }, "3 records in 40 bytes");
        let short = cmd.draw_indexed_indirect(indirect, 0, 2, 12);
        assert_err!(short, RhiError::OutOfLimits { what: "stride", value: 12, min: 20, .. }, "stride below the record");
        let odd = cmd.draw_indexed_indirect(indirect, 0, u32::MAX, u32::MAX);
        assert_err!(odd, RhiError::Misaligned { what: "stride", value: 0xffff_ffff, alignment: 4, .. });
        let far = cmd.draw_indexed_indirect(indirect, 0, u32::MAX, u32::MAX - 3);
        assert_err!(far, RhiError::OutOfRange { limit: 40, .. }, "the widest span");
        cmd.draw_indexed_indirect(indirect, 0, 2, 20).unwrap();
    }
    cmd.draw_indexed_indirect(indirect, 20, 1, 20).unwrap();
    let max_w = u64::from(device.info().max_viewport_dimensions[0]);
    let wide = cmd.set_viewport(Rect::new(1, 0, u32::MAX, 10));
    assert_err!(wide, RhiError::OutOfLimits { what: "width", value: 0xffff_ffff, min: 1, max, .. } if max == max_w);
    let end = i32::MAX as u64 + 10;
    let past = cmd.set_scissor(Rect::new(i32::MAX, 0, 10, 10));
    assert_err!(past, RhiError::OutOfRange { what: "columns", ref range, limit: 0x8000_0000, .. } if range.end == end, "past i32");
    assert_err!(cmd.set_scissor(Rect::new(-1, 0, 10, 10)), RhiError::InvalidDesc(_), "negative scissor offset");
    end_and_submit(frame);
    for b in [index, indirect] {
        device.destroy_buffer(b);
    }
    finish_grid(&device, grid, color);
}

#[test]
fn errors_carry_the_range_the_limit_and_the_usage() {
    let device = device();
    // An out-of-range write or read names the bytes asked for, the buffer and its size; nothing is written.
    for desc in [BufferDesc::host_visible("ring", 256, BufferUsage::STORAGE), BufferDesc::gpu_only("ring", 256, BufferUsage::STORAGE)] {
        let b = device.create_buffer_init(&desc, &[1; 256]).unwrap();
        match device.write_buffer(b, 248, &[0; 16]) {
            Err(RhiError::OutOfRange { what, resource, range, limit }) => {
                assert_eq!((what, resource.as_str(), range, limit), ("bytes", "buffer \"ring\"", 248..264, 256), "{:?}", desc.memory);
            }
            other => panic!("{:?}: {other:?}", desc.memory),
        }
        let r = device.read_buffer(b, 250, 10);
        assert_err!(r, RhiError::OutOfRange { what: "bytes", range: Range { start: 250, end: 260 }, limit: 256, .. });
        let r = device.write_buffer_parts(b, u64::MAX - 1, &[&[0; 4]]);
        assert_err!(r, RhiError::OutOfRange { range: Range { start: 0xffff_ffff_ffff_fffe, end: u64::MAX }, limit: 256, .. }, "saturated");
        assert_eq!(device.read_buffer(b, 0, 256).unwrap(), [1; 256], "{:?}: nothing written", desc.memory);
        device.destroy_buffer(b);
    }
    // A GPU-only buffer is written and read through staging copies: it needs the transfer usages.
    let sealed_desc = BufferDesc { usage: BufferUsage::VERTEX, ..BufferDesc::gpu_only("sealed", 64, BufferUsage::VERTEX) };
    let sealed = device.create_buffer(&sealed_desc).unwrap();
    match device.write_buffer(sealed, 0, &[0; 4]) {
        Err(RhiError::MissingUsage { label, usage, needed_for }) => {
            assert_eq!((label.as_str(), usage), ("sealed", Usage::Buffer(BufferUsage::TRANSFER_DST)));
            assert!(needed_for.contains("GPU-only"), "{needed_for}");
        }
        other => panic!("{other:?}"),
    }
    let r = device.read_buffer(sealed, 0, 4);
    assert_err!(r, RhiError::MissingUsage { usage: Usage::Buffer(BufferUsage::TRANSFER_SRC), .. });
    // Sizes outside the limits name the limit.
    let max = device.info().max_buffer_size;
    let r = device.create_buffer(&BufferDesc::gpu_only("huge", u64::MAX, BufferUsage::STORAGE));
    assert_err!(r, RhiError::OutOfLimits { what: "size", value: u64::MAX, min: 1, max: m, .. } if m == max);
    // generate_mips names only the usages the texture lacks.
    let t = device.create_texture(&TextureDesc::sampled("no mips", 8, 8, Format::Rgba8Unorm)).unwrap();
    let r = device.immediate(|cmd| cmd.generate_mips(t));
    let lacks = device.texture_desc(t).unwrap().usage.contains(TextureUsage::TRANSFER_SRC);
    assert!(!lacks, "TextureDesc::sampled has no TRANSFER_SRC");
    assert_err!(r, RhiError::MissingUsage { usage: Usage::Texture(TextureUsage::TRANSFER_SRC), needed_for: "generate_mips", .. });
    device.destroy_texture(t);
    device.destroy_buffer(sealed);
    finish(&device);
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
        let wraps = Range { start: u64::MAX - 15, end: u64::MAX };
        match cmd.copy_buffer(a, u64::MAX - 15, b, 0, 32) {
            Err(RhiError::OutOfRange { what: "copied bytes", resource, range, limit: 64 }) => {
                assert_eq!((resource.as_str(), range), ("buffer \"a\"", wraps.clone()), "the source's range, its end saturated");
            }
            other => panic!("{other:?}"),
        }
        match cmd.copy_buffer(a, 0, b, u64::MAX - 15, 32) {
            Err(RhiError::OutOfRange { resource, range, .. }) => assert_eq!((resource.as_str(), range), ("buffer \"b\"", wraps)),
            other => panic!("{other:?}"),
        }
        let over = cmd.copy_buffer(a, 0, b, 0, 65);
        assert_err!(over, RhiError::OutOfRange { range: Range { start: 0, end: 65 }, limit: 64, .. });
        assert_err!(cmd.copy_buffer(a, 0, a, 16, 32), RhiError::InvalidDesc(_), "overlapping copy within one buffer");
        let second = cmd.copy_buffer_regions(a, b, &[(0, 0, 16), (u64::MAX, 0, 2)]);
        assert_err!(second, RhiError::OutOfRange { range: Range { start: u64::MAX, end: u64::MAX }, .. }, "the second region");
        let fill = cmd.fill_buffer(a, u64::MAX - 3, 8, 0);
        assert_err!(fill, RhiError::OutOfRange { what: "filled bytes", range: Range { end: u64::MAX, .. }, limit: 64, .. });
        assert_err!(cmd.fill_buffer(a, 0, 0, 0), RhiError::OutOfLimits { what: "size", value: 0, min: 1, .. }, "empty fill");
        assert_err!(cmd.fill_buffer(a, 0, 6, 0), RhiError::Misaligned { what: "size", value: 6, alignment: 4, .. });
        let level = cmd.copy_buffer_to_texture(a, u64::MAX - 15, tex);
        assert_err!(level, RhiError::OutOfRange { what: "bytes of the mip level", range: Range { end: u64::MAX, .. }, limit: 64, .. });
        let unaligned = cmd.copy_buffer_to_texture(a, 2, tex);
        assert_err!(unaligned, RhiError::Misaligned { what: "offset", value: 2, alignment: 4, .. }, "unaligned texel offset");
        assert_err!(cmd.copy_buffer_to_texture_level(a, 0, tex, 1), RhiError::OutOfRange { what: "mip level", limit: 1, .. });
        let lacks = cmd.copy_texture_to_buffer(tex, a, 0);
        let src = Usage::Texture(TextureUsage::TRANSFER_SRC);
        assert_err!(lacks, RhiError::MissingUsage { usage, .. } if usage == src, "the texture lacks TRANSFER_SRC");
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
    let rgba = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None, samples: 1 };
    let bgra = RenderingLayout { color_formats: vec![Format::Bgra8Unorm], depth_format: None, samples: 1 };
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
    assert_err!(r, RhiError::NotBound { missing: Unbound::PipelineForPass, .. }, "a pipeline for other formats draws nothing");
    let (_, r) = frame.record_secondary(&rgba, |cmd| Ok(cmd.begin_rendering(&pass(color), RenderingContents::Inline))).unwrap();
    assert_err!(r, RhiError::WrongPass { command: "begin_rendering", found: Secondary, needed: Outside });
    let bad = RenderingLayout { color_formats: vec![Format::Depth32Float], depth_format: None, samples: 1 };
    let r = frame.record_secondary(&bad, |_| Ok(()));
    assert_err!(r, RhiError::WrongFormat { format: Format::Depth32Float, expected: "a color format", .. }, "a depth format as color");
    let cmd = frame.cmd();
    let outside = cmd.execute_secondaries(std::slice::from_ref(&a));
    assert_err!(outside, RhiError::WrongPass { command: "execute_secondaries", found: Outside, needed: Secondaries });
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    assert_err!(cmd.execute_secondaries(std::slice::from_ref(&a)), RhiError::WrongPass { found: Inline, needed: Secondaries, .. });
    cmd.end_rendering().unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Secondary).unwrap();
    // Inline commands in a secondaries pass belong in the secondaries.
    assert_err!(cmd.draw(6, 1, 0, 0), RhiError::WrongPass { command: "draw", found: Secondaries, needed: Secondary });
    assert_err!(cmd.bind_pipeline(grid.pipeline), RhiError::WrongPass { command: "bind_pipeline", found: Secondaries, .. });
    assert_err!(cmd.set_viewport(Rect::from_size(W, H)), RhiError::WrongPass { command: "set_viewport", needed: Secondary, .. });
    assert_err!(cmd.execute_secondaries(std::slice::from_ref(&wrong_layout)), RhiError::InvalidDesc(_), "another layout");
    assert_err!(cmd.execute_secondaries(std::slice::from_ref(&foreign)), RhiError::OtherDevice { what: "a secondary" });
    cmd.execute_secondaries(std::slice::from_ref(&a)).unwrap();
    assert_err!(cmd.execute_secondaries(std::slice::from_ref(&a)), RhiError::InvalidDesc(_), "executed twice");
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
    let frame_index = frame.index();
    let g0 = |a: BindingResource, b: BindingResource| [(0, a), (1, b)];
    let ub = BindingResource::Buffer(uniform);
    let sb = BindingResource::Buffer(storage);
    // Duplicate binding numbers (the count matches, binding 1 is missing).
    let twice = frame.create_bind_group(p, 0, &[(0, ub), (0, ub)]);
    assert_err!(twice, RhiError::Duplicate { what: "binding", value: 0, .. });
    let unknown = frame.create_bind_group(p, 0, &[(0, ub), (7, sb)]);
    assert_err!(unknown, RhiError::NotFound { what: "binding", value: 7, .. });
    let one = frame.create_bind_group(p, 0, &[(0, ub)]);
    assert_err!(one, RhiError::WrongCount { what: "entries", expected: 2, found: 1, .. });
    // Wrong usages: the error names the flag and the label.
    let (uniform_usage, storage_usage) = (Usage::Buffer(BufferUsage::UNIFORM), Usage::Buffer(BufferUsage::STORAGE));
    match frame.create_bind_group(p, 0, &g0(BindingResource::Buffer(vertex_only), sb)) {
        Err(RhiError::MissingUsage { label, usage, needed_for }) => {
            assert_eq!((label.as_str(), usage, needed_for), ("vertex", uniform_usage, "a uniform buffer binding"));
        }
        other => panic!("a vertex buffer as a uniform: {other:?}"),
    }
    let r = frame.create_bind_group(p, 0, &g0(ub, BindingResource::Buffer(uniform)));
    assert_err!(r, RhiError::MissingUsage { usage, .. } if usage == storage_usage);
    let r = frame.create_bind_group(p, 1, &[(0, BindingResource::Texture(not_sampled)), (1, BindingResource::Sampler(sampler))]);
    assert_err!(r, RhiError::MissingUsage { usage: Usage::Texture(TextureUsage::SAMPLED), .. });
    let r = frame.create_bind_group(p, 1, &[(0, BindingResource::Texture(tex)), (1, BindingResource::Sampler(shadow_sampler))]);
    let found = BindingResource::Sampler(shadow_sampler);
    assert_err!(r, RhiError::BindingMismatch { group: 1, binding: 1, expected: BindingType::Sampler, found: f } if f == found);
    let r = frame.create_bind_group(p, 1, &[(0, BindingResource::Sampler(sampler)), (1, BindingResource::Sampler(sampler))]);
    assert_err!(r, RhiError::BindingMismatch { group: 1, binding: 0, expected: BindingType::SampledTexture, .. });
    // Misaligned uniform offset, and ranges over the limits or the buffer.
    let align = limits.min_uniform_buffer_offset_alignment;
    if align > 1 {
        let r = BindingResource::BufferRange { buffer: uniform, offset: 1, size: 16 };
        let r = frame.create_bind_group(p, 0, &g0(r, sb));
        assert_err!(r, RhiError::Misaligned { what: "offset", value: 1, alignment, .. } if alignment == align);
    }
    let max_range = u64::from(limits.max_uniform_buffer_range);
    let over = BindingResource::BufferRange { buffer: uniform, offset: 0, size: max_range + 1 };
    let r = frame.create_bind_group(p, 0, &g0(over, sb));
    assert_err!(r, RhiError::OutOfLimits { value, min: 1, max, .. } if value == max_range + 1 && max == max_range);
    // An offset aligned to every alignment Vulkan allows (at most 256) whose end wraps u64.
    let wraps = BindingResource::BufferRange { buffer: storage, offset: u64::MAX - 255, size: 512 };
    let r = frame.create_bind_group(p, 0, &g0(ub, wraps));
    assert_err!(r, RhiError::OutOfRange { what: "bound bytes", range: Range { end: u64::MAX, .. }, limit: 4096, .. });
    let group0 = frame.create_bind_group(p, 0, &g0(ub, sb)).unwrap();
    let group1 = frame.create_bind_group(p, 1, &[(0, BindingResource::Texture(tex)), (1, BindingResource::Sampler(sampler))]).unwrap();
    let foreign0 = frame.create_bind_group(other, 0, &[(0, sb)]).unwrap();
    let cmd = frame.cmd();
    cmd.texture_barrier(tex, TextureState::Undefined, TextureState::ShaderRead).unwrap();
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    assert_err!(cmd.bind_group(0, &group0), RhiError::NotBound { command: "bind_group", missing: Unbound::Pipeline });
    cmd.bind_pipeline(p).unwrap();
    cmd.set_viewport(Rect::from_size(W, H)).unwrap();
    cmd.set_scissor(Rect::from_size(W, H)).unwrap();
    assert_err!(cmd.bind_group(0, &foreign0), RhiError::IncompatibleBindGroup { index: 0 }, "another layout's group");
    assert_err!(cmd.bind_group(1, &group0), RhiError::IncompatibleBindGroup { index: 1 }, "group 0's set at index 1");
    let past = cmd.bind_group(2, &group0);
    assert_err!(past, RhiError::OutOfRange { what: "bind group", range: Range { start: 2, end: 3 }, limit: 2, .. }, "past the layout");
    cmd.bind_group(0, &group0).unwrap();
    assert_err!(cmd.draw(4, 1, 0, 0), RhiError::NotBound { missing: Unbound::BindGroup(1), .. }, "group 1 is not bound");
    cmd.bind_group(1, &group1).unwrap();
    cmd.draw(4, 1, 0, 0).unwrap();
    // Another layout disturbs the sets: the draw needs them bound again.
    cmd.bind_pipeline(other).unwrap();
    assert_err!(cmd.draw(4, 1, 0, 0), RhiError::NotBound { missing: Unbound::BindGroup(0), .. });
    cmd.bind_group(0, &foreign0).unwrap();
    cmd.draw(4, 1, 0, 0).unwrap();
    cmd.end_rendering().unwrap();
    frame.submit().unwrap();
    // A group of a finished frame is refused in the next.
    let mut next = device.begin_frame().unwrap();
    next.cmd().texture_barrier(color, TextureState::ColorAttachment, TextureState::ColorAttachment).unwrap();
    next.cmd().begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    next.cmd().bind_pipeline(p).unwrap();
    let (made_in, used_in) = (frame_index, Some(frame_index + 1));
    let r = next.cmd().bind_group(0, &group0);
    assert_err!(r, RhiError::OtherFrame { what: "a bind group", made_in: m, used_in: u } if (m, u) == (made_in, used_in));
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
    assert_err!(r, RhiError::WrongPass { command: "the end of Device::immediate", found: Inline, needed: Outside });
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
    let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None, samples: 1 };
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
    let four = cmd.draw(6, 4, 0, 0);
    assert_err!(four, RhiError::OutOfRange { what: "instances", range: Range { start: 0, end: 4 }, limit: 3, .. }, "from instance 1");
    let third = cmd.draw(6, 1, 0, 3);
    assert_err!(third, RhiError::OutOfRange { what: "instances", range: Range { start: 3, end: 4 }, limit: 3, .. });
    cmd.draw(6, 3, 0, 0).unwrap();
    // Corners from byte 8 (corner 1) on: 5 of 6 remain.
    cmd.bind_vertex_buffers(0, &[(grid.corners, 8)]).unwrap();
    let six = cmd.draw(6, 1, 0, 0);
    assert_err!(six, RhiError::OutOfRange { what: "vertices", range: Range { start: 0, end: 6 }, limit: 5, .. }, "from corner 1");
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

#[test]
fn multisampled_passes_check_their_samples_resolves_and_pipelines() {
    let device = device();
    if !device.supports_samples(Format::Rgba8Unorm, 4) {
        println!("skip: the device has no 4-sample Rgba8Unorm render targets");
        return;
    }
    let ms = device.create_texture(&TextureDesc::multisampled("ms", W, H, Format::Rgba8Unorm, 4)).unwrap();
    let single = target(&device);
    // Multisampled textures are attachments only, and 3 samples is no count.
    let sampled = TextureDesc {
        usage: TextureUsage::RENDER_TARGET | TextureUsage::SAMPLED,
        ..TextureDesc::multisampled("ms", W, H, Format::Rgba8Unorm, 4)
    };
    assert_err!(device.create_texture(&sampled), RhiError::Unsupported(_));
    assert_err!(device.create_texture(&TextureDesc::multisampled("three", W, H, Format::Rgba8Unorm, 3)), RhiError::InvalidDesc(_));
    let grid_1 = QuadGrid::new(&device, Format::Rgba8Unorm, 1, 1).unwrap();
    let mut frame = device.begin_frame().unwrap();
    let cmd = frame.cmd();
    cmd.texture_barrier(ms, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.texture_barrier(single, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    // A resolve target must have one sample; a one-sample attachment has no resolve.
    let resolve_into = |texture, resolve| RenderingDesc {
        color: vec![ColorAttachment { texture, load: LoadOp::Clear([0.0; 4]), store: false, resolve: Some(resolve) }],
        depth: None,
        area: Rect::from_size(W, H),
    };
    assert_err!(cmd.begin_rendering(&resolve_into(ms, ms), RenderingContents::Inline), RhiError::InvalidDesc(_));
    assert_err!(cmd.begin_rendering(&resolve_into(single, single), RenderingContents::Inline), RhiError::InvalidDesc(_));
    // Attachments of different samples in one pass.
    let depth = device.create_texture(&TextureDesc::depth("depth", W, H)).unwrap();
    cmd.texture_barrier(depth, TextureState::Undefined, TextureState::DepthAttachment).unwrap();
    let mixed = RenderingDesc {
        depth: Some(DepthAttachment { texture: depth, load: LoadOp::Clear(1.0), store: false, resolve: None }),
        ..resolve_into(ms, single)
    };
    assert_err!(cmd.begin_rendering(&mixed, RenderingContents::Inline), RhiError::InvalidDesc(_));
    // A 4-sample pass resolving into the one-sample target takes only
    // 4-sample pipelines.
    let layout = cmd.begin_rendering(&resolve_into(ms, single), RenderingContents::Inline).unwrap();
    assert_eq!(layout.samples, 4);
    assert_err!(
        grid_1.record(cmd, Rect::from_size(W, H), 0, 1, 1),
        RhiError::NotBound { missing: Unbound::PipelineForPass, .. },
        "a one-sample pipeline in a 4-sample pass"
    );
    cmd.end_rendering().unwrap();
    cmd.texture_barrier(single, TextureState::ColorAttachment, TextureState::ShaderRead).unwrap();
    frame.submit().unwrap();
    device.wait_idle().unwrap();
    grid_1.destroy(&device);
    for t in [ms, single, depth] {
        device.destroy_texture(t);
    }
    finish(&device);
}
