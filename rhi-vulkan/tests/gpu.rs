//! GPU tests on the real Vulkan device (lavapipe on CI) with the Khronos
//! validation layer on; every test asserts the layer was active and reported
//! nothing. Tests that open frames, count the device's objects or shut it
//! down have a device of their own; the others share the binary's.

use rhi_vulkan::*;
use test_support::{assert_clean, assert_images_equal, device, new_device};
use test_support::{QuadGrid, QUAD_GRID_WGSL};

const W: u32 = 64;
const H: u32 = 48;
const CLEAR: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

fn target(device: &Device) -> TextureHandle {
    device.create_texture(&TextureDesc::render_target("color", W, H, Format::Rgba8Unorm)).unwrap()
}

fn pass(texture: TextureHandle) -> RenderingDesc {
    RenderingDesc {
        color: vec![ColorAttachment { texture, load: LoadOp::Clear(CLEAR), store: true, resolve: None }],
        depth: None,
        area: Rect::from_size(W, H),
    }
}

/// Renders the quad grid, recording either inline or into secondaries split
/// over `threads` threads, and reads the image back.
fn render_grid(device: &Device, grid: &QuadGrid, draws: u32, threads: usize) -> Image {
    let color = target(device);
    let mut frame = device.begin_frame().unwrap();
    frame.cmd().texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    let viewport = Rect::from_size(W, H);
    if threads == 0 {
        let cmd = frame.cmd();
        cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
        grid.record(cmd, viewport, 0, grid.instance_count, draws).unwrap();
        cmd.end_rendering().unwrap();
    } else {
        let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None, samples: 1 };
        let per = grid.instance_count.div_ceil(threads as u32);
        let secondaries: Vec<SecondaryCommandBuffer> = std::thread::scope(|s| {
            let frame = &frame;
            let layout = &layout;
            let handles: Vec<_> = (0..threads as u32)
                .map(|t| {
                    s.spawn(move || {
                        let first = t * per;
                        let count = per.min(grid.instance_count - first);
                        frame.record_secondary(layout, |cmd| grid.record(cmd, viewport, first, count, draws / threads as u32)).unwrap().0
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let cmd = frame.cmd();
        cmd.begin_rendering(&pass(color), RenderingContents::Secondary).unwrap();
        cmd.execute_secondaries(&secondaries).unwrap();
        cmd.end_rendering().unwrap();
        assert_eq!(cmd.draw_count(), draws);
    }
    frame.submit().unwrap();
    let image = device.read_texture(color, TextureState::ColorAttachment).unwrap();
    device.destroy_texture(color);
    image
}

#[test]
fn creates_a_device_and_reports_its_name() {
    let device = device();
    assert!(!device.name().is_empty());
    assert!(device.info().api_version >= (1, 3, 0));
    if std::env::var("PROXIMA_DEVICE").is_err() && device.info().device_type == "CPU" {
        assert!(device.name().contains("llvmpipe"), "CPU device is lavapipe: {}", device.name());
    }
    assert_clean(&device.validation());
}

#[test]
fn two_devices_live_in_one_process() {
    let a = new_device();
    let b = new_device();
    let ba = a.create_buffer(&BufferDesc::host_visible("a", 16, BufferUsage::STORAGE)).unwrap();
    let bb = b.create_buffer(&BufferDesc::host_visible("b", 16, BufferUsage::STORAGE)).unwrap();
    a.write_buffer(ba, 0, &[1; 16]).unwrap();
    b.write_buffer(bb, 0, &[2; 16]).unwrap();
    assert_eq!(a.read_buffer(ba, 0, 16).unwrap(), vec![1; 16]);
    assert_eq!(b.read_buffer(bb, 0, 16).unwrap(), vec![2; 16]);
    let (va, vb) = (a.validation(), b.validation());
    drop(a);
    drop(b);
    assert_clean(&va);
    assert_clean(&vb);
}

#[test]
fn a_64_mib_buffer_round_trips_through_staging() {
    let device = device();
    let size = 64 << 20;
    let data: Vec<u8> = (0..size).map(|i: usize| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let buffer = device.create_buffer_init(&BufferDesc::gpu_only("big", size as u64, BufferUsage::STORAGE), &data).unwrap();
    let back = device.read_buffer(buffer, 0, size as u64).unwrap();
    assert!(back == data, "64 MiB read back differs");
    // A sub-range too.
    assert_eq!(device.read_buffer(buffer, 1000, 8).unwrap(), data[1000..1008]);
    device.destroy_buffer(buffer);
    assert_clean(&device.validation());
}

#[test]
fn parts_are_written_one_after_another_and_out_of_range_writes_nothing() {
    let device = device();
    let parts: [&[u8]; 4] = [&[1, 2, 3], &[], &[4; 5], &[9]];
    let joined = parts.concat();
    for desc in [BufferDesc::host_visible("parts", 32, BufferUsage::STORAGE), BufferDesc::gpu_only("parts", 32, BufferUsage::STORAGE)] {
        let buffer = device.create_buffer_init(&desc, &[0xee; 32]).unwrap();
        device.write_buffer_parts(buffer, 7, &parts).unwrap();
        let mut expected = vec![0xee; 32];
        expected[7..7 + joined.len()].copy_from_slice(&joined);
        assert_eq!(device.read_buffer(buffer, 0, 32).unwrap(), expected, "{:?}", desc.memory);
        // One byte past the end: an error, and no part written.
        let past = device.write_buffer_parts(buffer, 32 - joined.len() as u64 + 1, &[&[0u8; 8], &joined[8..]]);
        let end = 32 - joined.len() as u64 + 1 + joined.len() as u64;
        assert!(matches!(past, Err(RhiError::OutOfRange { what: "bytes", ref range, limit: 32, .. }) if range.end == end), "{past:?}");
        assert_eq!(device.read_buffer(buffer, 0, 32).unwrap(), expected, "{:?}: unchanged", desc.memory);
        device.write_buffer_parts(buffer, 32, &[&[], &[]]).unwrap();
        device.destroy_buffer(buffer);
    }
    assert_clean(&device.validation());
}

#[test]
fn a_frames_batched_uploads_land_in_order_through_one_staging_buffer() {
    let device = device();
    let a = device.create_buffer_init(&BufferDesc::gpu_only("a", 16, BufferUsage::STORAGE), &[0; 16]).unwrap();
    let b = device.create_buffer_init(&BufferDesc::gpu_only("b", 16, BufferUsage::STORAGE), &[0; 16]).unwrap();
    let mut frame = device.begin_frame().unwrap();
    // Two writes to `a` overlapping (the later wins), one to `b`, one empty.
    let writes = [(a, 0, &[1u8; 8][..]), (b, 4, &[7u8; 4][..]), (a, 4, &[2u8; 8][..]), (b, 0, &[][..])];
    frame.upload_buffers(&[], &writes).unwrap();
    frame.upload_buffers(&[], &[]).unwrap();
    device.wait_for(frame.submit().unwrap().value).unwrap();
    let mut want_a = vec![1u8; 4];
    want_a.extend([2u8; 8]);
    want_a.extend([0u8; 4]);
    assert_eq!(device.read_buffer(a, 0, 16).unwrap(), want_a);
    assert_eq!(device.read_buffer(b, 0, 16).unwrap(), [[0u8; 4], [7; 4], [0; 4], [0; 4]].concat());
    device.destroy_buffer(a);
    device.destroy_buffer(b);
    assert_clean(&device.validation());
}

/// A frame's moves within a buffer happen before its writes land, and
/// read what the earlier frame wrote: the skinned mesh's "previous pose
/// moved on the GPU, only the new pose written" (validation and its
/// synchronization checks clean).
#[test]
fn a_frames_moves_within_a_buffer_come_before_its_writes_and_see_the_last_frames() {
    let device = device();
    // Two slots of [current 8 bytes][previous 8 bytes].
    let pages = device.create_buffer_init(&BufferDesc::gpu_only("pages", 32, BufferUsage::STORAGE), &[0; 32]).unwrap();
    let mut frame = device.begin_frame().unwrap();
    frame.upload_buffers(&[], &[(pages, 0, &[1u8; 8][..]), (pages, 16, &[5u8; 8][..])]).unwrap();
    let first = frame.submit().unwrap().value;
    let mut frame = device.begin_frame().unwrap();
    // Slot 0 gets a new pose, its old one moved beside it; slot 1 keeps its pose (moved only).
    let moves = [(pages, (0, 8, 8)), (pages, (16, 24, 8)), (pages, (0, 8, 0))];
    frame.upload_buffers(&moves, &[(pages, 0, &[2u8; 8][..])]).unwrap();
    let second = frame.submit().unwrap().value;
    assert!(second > first);
    device.wait_for(second).unwrap();
    assert_eq!(device.read_buffer(pages, 0, 32).unwrap(), [[2u8; 8], [1; 8], [5; 8], [5; 8]].concat());
    // Moves alone (no write in the frame) are made too.
    let mut frame = device.begin_frame().unwrap();
    frame.upload_buffers(&[(pages, (0, 8, 8))], &[]).unwrap();
    device.wait_for(frame.submit().unwrap().value).unwrap();
    assert_eq!(device.read_buffer(pages, 0, 16).unwrap(), [[2u8; 8], [2; 8]].concat());
    // An overlapping move is refused.
    let mut frame = device.begin_frame().unwrap();
    assert!(frame.upload_buffers(&[(pages, (0, 4, 8))], &[]).is_err());
    drop(frame);
    device.destroy_buffer(pages);
    assert_clean(&device.validation());
}

#[test]
fn a_triangle_lands_where_clip_space_says_with_the_image_upright() {
    let device = new_device();
    let shader = device.create_shader("triangle.wgsl", include_str!("../shaders/triangle.wgsl")).unwrap();
    let pipeline = device.create_graphics_pipeline(&GraphicsPipelineDesc::color(shader, Format::Rgba8Unorm)).unwrap();
    let params = device
        .create_buffer_init(
            &BufferDesc::gpu_only("params", 16, BufferUsage::UNIFORM),
            &[1.0f32, 0.0, 0.0, 1.0].iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<_>>(),
        )
        .unwrap();
    let color = target(&device);
    let mut frame = device.begin_frame().unwrap();
    let group = frame.create_bind_group(pipeline, 0, &[(0, BindingResource::Buffer(params))]).unwrap();
    let cmd = frame.cmd();
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    cmd.bind_pipeline(pipeline).unwrap();
    cmd.bind_group(0, &group).unwrap();
    cmd.set_viewport(Rect::from_size(W, H)).unwrap();
    cmd.set_scissor(Rect::from_size(W, H)).unwrap();
    cmd.draw(3, 1, 0, 0).unwrap();
    cmd.end_rendering().unwrap();
    frame.submit().unwrap();
    let img = device.read_texture(color, TextureState::ColorAttachment).unwrap();
    let red = [255, 0, 0, 255];
    let clear = [0, 0, 0, 255];
    // Apex near the top row, base just above the middle.
    assert_eq!(img.pixel(W / 2, (H as f32 * 0.1) as u32), red, "just below the apex, top of the image");
    assert_eq!(img.pixel(W / 2, (H as f32 * 0.4) as u32), red, "inside, near the base");
    assert_eq!(img.pixel(W / 2, (H as f32 * 0.8) as u32), clear, "bottom half is empty");
    assert_eq!(img.pixel(1, 1), clear, "top-left corner is outside");
    assert_eq!(img.pixel(W - 2, (H as f32 * 0.4) as u32), clear, "right of the triangle");
    assert_clean(&device.validation());
}

#[test]
fn an_instanced_quad_grid_colors_each_cell() {
    let device = new_device();
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, 4, 4).unwrap();
    let img = render_grid(&device, &grid, 1, 0);
    // Cell (0, 0) is top-left in clip space (y = -1 is the top row): color (u, v, 1-u) = (1/8, 1/8, 7/8).
    let top_left = img.pixel(W / 8, H / 8);
    assert_eq!(top_left, [32, 32, 223, 255]);
    // Cell (3, 3): (7/8, 7/8, 1/8).
    assert_eq!(img.pixel(W * 7 / 8, H * 7 / 8), [223, 223, 32, 255]);
    // Gaps between cells show the clear color (quads are 80% of their cell).
    assert_eq!(img.pixel(W / 4, H / 8), [0, 0, 0, 255]);
    grid.destroy(&device);
    assert_clean(&device.validation());
}

#[test]
fn secondaries_on_two_threads_give_the_primarys_image_byte_for_byte() {
    let device = new_device();
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, 16, 12).unwrap();
    let serial = render_grid(&device, &grid, 8, 0);
    let parallel = render_grid(&device, &grid, 8, 2);
    assert!(serial.rgba8.iter().any(|&b| b != 0 && b != 255), "the image has content");
    assert_images_equal(&serial, &parallel, "secondaries on two threads vs the primary");
    grid.destroy(&device);
    assert_clean(&device.validation());
}

#[test]
fn the_pipeline_cache_returns_the_same_pipeline_for_equal_descriptions() {
    let device = new_device();
    let shader = device.create_shader("quad_grid.wgsl", QUAD_GRID_WGSL).unwrap();
    let before = device.counts();
    let a = QuadGrid::new(&device, Format::Rgba8Unorm, 1, 1).unwrap();
    let b = QuadGrid::new(&device, Format::Rgba8Unorm, 2, 2).unwrap();
    let after = device.counts();
    // Each QuadGrid compiles its own shader module, so the descriptions differ...
    assert_ne!(a.pipeline, b.pipeline);
    // ...while equal descriptions hit the cache.
    let desc = |format| QuadGrid::pipeline_desc(shader, format);
    let p1 = device.create_graphics_pipeline(&desc(Format::Rgba8Unorm)).unwrap();
    let p2 = device.create_graphics_pipeline(&desc(Format::Rgba8Unorm)).unwrap();
    let p3 = device.create_graphics_pipeline(&desc(Format::Bgra8Unorm)).unwrap();
    assert_eq!(p1, p2);
    assert_ne!(p1, p3);
    let end = device.counts();
    assert_eq!(after.pipeline_cache_misses - before.pipeline_cache_misses, 2);
    assert_eq!(end.pipeline_cache_misses - after.pipeline_cache_misses, 2, "one miss per distinct description");
    assert_eq!(end.pipeline_cache_hits - after.pipeline_cache_hits, 1);
    a.destroy(&device);
    b.destroy(&device);
    assert_clean(&device.validation());
}

#[test]
fn bad_descriptions_are_errors_not_panics() {
    let device = new_device();
    let zero = device.create_buffer(&BufferDesc::gpu_only("zero", 0, BufferUsage::VERTEX));
    assert!(matches!(zero, Err(RhiError::OutOfLimits { what: "size", value: 0, min: 1, .. })), "{zero:?}");
    let tex = device.create_texture(&TextureDesc::render_target("empty", 0, 16, Format::Rgba8Unorm));
    assert!(matches!(tex, Err(RhiError::OutOfLimits { what: "width", value: 0, min: 1, .. })), "{tex:?}");
    let storage_depth = device.create_texture(&TextureDesc {
        label: "storage depth".into(),
        width: 4,
        height: 4,
        format: Format::Depth32Float,
        usage: TextureUsage::STORAGE,
        mip_levels: 1,
        dimension: Default::default(),
        samples: 1,
    });
    assert!(matches!(storage_depth, Err(RhiError::Unsupported(_))), "{storage_depth:?}");
    let shader =
        device.create_shader("bad.wgsl", "@vertex\nfn vs_main() -> @builtin(position) vec4<f32> {\n  return vec4<f32>(1.0) * ;\n}\n");
    match shader {
        Err(RhiError::Shader(e)) => {
            assert_eq!(e.file, "bad.wgsl");
            assert_eq!(e.line, 3, "{e}");
        }
        other => panic!("expected a shader error, got {other:?}"),
    }
    // A stale handle is an error, not another object.
    let b = device.create_buffer(&BufferDesc::host_visible("b", 4, BufferUsage::STORAGE)).unwrap();
    device.destroy_buffer(b);
    let b2 = device.create_buffer(&BufferDesc::host_visible("b2", 4, BufferUsage::STORAGE)).unwrap();
    assert!(matches!(device.write_buffer(b, 0, &[0; 4]), Err(RhiError::InvalidHandle(_))));
    let r = device.write_buffer(b2, 2, &[0; 4]);
    assert!(matches!(r, Err(RhiError::OutOfRange { what: "bytes", range: std::ops::Range { start: 2, end: 6 }, limit: 4, .. })), "{r:?}");
    // A vertex shader input no stream provides.
    let grid_shader = device.create_shader("quad_grid.wgsl", QUAD_GRID_WGSL).unwrap();
    let missing = device.create_graphics_pipeline(&GraphicsPipelineDesc::color(grid_shader, Format::Rgba8Unorm));
    assert!(matches!(missing, Err(RhiError::NotFound { what: "vertex location", value: 0, .. })), "{missing:?}");
    assert_eq!(device.counts().pipelines, 0);
    assert_clean(&device.validation());
}

#[test]
fn a_buffer_destroyed_while_its_frame_is_in_flight_outlives_the_gpu_work() {
    let device = new_device();
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, 64, 64).unwrap();
    let color = target(&device);
    let mut frame = device.begin_frame().unwrap();
    let cmd = frame.cmd();
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    grid.record(cmd, Rect::from_size(W, H), 0, grid.instance_count, 64).unwrap();
    cmd.end_rendering().unwrap();
    // Destroyed while recording: must wait for this frame's submission.
    device.destroy_buffer(grid.instances);
    assert_eq!(device.counts().pending_deletions, 1);
    let submitted = frame.submit().unwrap();
    // Still pending unless the GPU has already finished the frame.
    if device.completed_value().unwrap() < submitted.value {
        device.collect_garbage().unwrap();
        let pending = device.counts().pending_deletions;
        let done = device.completed_value().unwrap() >= submitted.value;
        assert!(pending == 1 || done, "destroyed before the GPU finished");
    }
    device.wait_for(submitted.value).unwrap();
    device.collect_garbage().unwrap();
    assert_eq!(device.counts().pending_deletions, 0);
    device.destroy_buffer(grid.corners);
    device.destroy_texture(color);
    device.wait_idle().unwrap();
    assert_eq!(device.counts().buffers, 0);
    assert_clean(&device.validation());
}

#[test]
fn frames_in_flight_reuse_their_slots_and_keep_rendering() {
    let device = new_device();
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, 8, 8).unwrap();
    let color = target(&device);
    let mut state = TextureState::Undefined;
    for _ in 0..5 {
        let mut frame = device.begin_frame().unwrap();
        // A second open frame is refused.
        assert!(device.begin_frame().is_err());
        let cmd = frame.cmd();
        cmd.texture_barrier(color, state, TextureState::ColorAttachment).unwrap();
        state = TextureState::ColorAttachment;
        cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
        grid.record(cmd, Rect::from_size(W, H), 0, grid.instance_count, 1).unwrap();
        cmd.end_rendering().unwrap();
        frame.submit().unwrap();
    }
    let img = device.read_texture(color, state).unwrap();
    assert_ne!(img.pixel(W / 16, H / 16), [0, 0, 0, 255]);
    // A discarded frame submits nothing and frees its slot.
    let frame = device.begin_frame().unwrap();
    drop(frame);
    device.begin_frame().unwrap().submit().unwrap();
    grid.destroy(&device);
    device.destroy_texture(color);
    assert_clean(&device.validation());
}

#[test]
fn shutdown_destroys_everything_and_leaks_no_allocation() {
    let device = new_device();
    let validation = device.validation();
    // Objects the caller never destroys are destroyed by shutdown.
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, 4, 4).unwrap();
    let _ = render_grid(&device, &grid, 2, 2);
    let _sampler = device.create_sampler(&SamplerDesc::shadow()).unwrap();
    let _depth = device.create_texture(&TextureDesc::depth("depth", 32, 32)).unwrap();
    assert!(device.counts().allocations >= 3);
    let report = device.shutdown();
    assert_eq!(report.leaked_allocations, 0);
    assert_eq!(report.validation_errors, 0, "{:#?}", validation.messages());
    // Destroying the device itself raised nothing either (objects destroyed first).
    assert_clean(&validation);
}

/// Copies `len` bytes of `from` into each of `to` in one frame and submits it.
fn copy_in_a_frame(device: &Device, from: BufferHandle, to: &[BufferHandle], len: u64) -> u64 {
    let mut frame = device.begin_frame().unwrap();
    for t in to {
        frame.cmd().copy_buffer(from, 0, *t, 0, len).unwrap();
    }
    frame.submit().unwrap().value
}

#[test]
fn a_host_write_waits_for_the_frame_that_still_reads_the_buffer() {
    let device = new_device();
    // A quarter of a GiB of copies: the frame is still on the GPU when the
    // host writes the end of its source.
    const LEN: u64 = 64 << 20;
    const TAIL: u64 = 4096;
    let usage = BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST;
    let source = device.create_buffer_init(&BufferDesc::host_visible("source", LEN, usage), &vec![1u8; LEN as usize]).unwrap();
    let copies: Vec<_> = (0..4).map(|_| device.create_buffer(&BufferDesc::readback("copy", LEN)).unwrap()).collect();
    let copy = copies[3];
    let before = device.counts().host_write_waits;
    let frame = copy_in_a_frame(&device, source, &copies, LEN);
    device.write_buffer(source, LEN - TAIL, &[2u8; TAIL as usize]).unwrap();
    // The frame copied what the source held when it was submitted: the
    // write waited for it (unless the GPU had already finished).
    let copied = device.read_buffer_after(copy, LEN - TAIL, TAIL, frame).unwrap();
    let later = copied.iter().filter(|b| **b != 1).count();
    assert_eq!(later, 0, "the GPU read {later} bytes of the host's later write");
    assert!(device.counts().host_write_waits - before <= 1);
    // Once the frame is done, a write does not wait.
    device.wait_for(frame).unwrap();
    let waits = device.counts().host_write_waits;
    device.write_buffer(source, 0, &[3u8; 16]).unwrap();
    assert_eq!(device.counts().host_write_waits, waits);
    assert_eq!(device.read_buffer(source, 0, 16).unwrap(), vec![3u8; 16]);
    for b in copies.into_iter().chain([source]) {
        device.destroy_buffer(b);
    }
    assert_clean(&device.validation());
}

#[test]
fn a_read_after_a_frame_is_refused_once_a_later_frame_writes_the_buffer() {
    let device = new_device();
    let usage = BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST;
    let results = device.create_buffer(&BufferDesc::host_visible("results", 16, usage)).unwrap();
    let source = |v: u8| device.create_buffer_init(&BufferDesc::host_visible("source", 16, usage), &[v; 16]).unwrap();
    let (one, two) = (source(1), source(2));
    let first = copy_in_a_frame(&device, one, &[results], 16);
    assert_eq!(device.read_buffer_after(results, 0, 16, first).unwrap(), vec![1u8; 16]);
    let second = copy_in_a_frame(&device, two, &[results], 16);
    // The second frame overwrote (or is overwriting) the first's results.
    let r = device.read_buffer_after(results, 0, 16, first);
    assert!(matches!(r, Err(RhiError::InvalidState(_))), "{r:?}");
    assert_eq!(device.read_buffer_after(results, 0, 16, second).unwrap(), vec![2u8; 16]);
    // A later frame that only reads the buffer leaves the results readable.
    let third = copy_in_a_frame(&device, results, &[one], 16);
    assert!(third > second);
    assert_eq!(device.read_buffer_after(results, 0, 16, second).unwrap(), vec![2u8; 16]);
    for b in [results, one, two] {
        device.destroy_buffer(b);
    }
    assert_clean(&device.validation());
}

#[test]
fn a_read_write_storage_binding_counts_as_a_write_and_a_read_only_one_does_not() {
    let device = new_device();
    let wgsl = "@group(0) @binding(0) var<storage, read> input: array<u32>;\n\
                @group(0) @binding(1) var<storage, read_write> output: array<u32>;\n\
                @compute @workgroup_size(1)\nfn main() { output[0] = output[0] + input[0]; }\n";
    let shader = device.create_shader("add.wgsl", wgsl).unwrap();
    let pipeline = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "main") }).unwrap();
    let storage = |label: &str, v: u32| {
        device
            .create_buffer_init(&BufferDesc::host_visible(label, 16, BufferUsage::STORAGE), &[v, 0, 0, 0].map(u32::to_le_bytes).concat())
            .unwrap()
    };
    let (input, output) = (storage("input", 5), storage("output", 1));
    let entries = [(0, BindingResource::Buffer(input)), (1, BindingResource::Buffer(output))];
    // Once through a frame's bind group, once through a persistent one.
    let persistent = device.create_bind_group(pipeline, 0, &entries).unwrap();
    let dispatch = |frame_group: bool| {
        let mut frame = device.begin_frame().unwrap();
        let group = frame_group.then(|| frame.create_bind_group(pipeline, 0, &entries).unwrap());
        let cmd = frame.cmd();
        cmd.bind_pipeline(pipeline).unwrap();
        match group {
            Some(g) => cmd.bind_group(0, &g).unwrap(),
            None => cmd.bind_group_handle(0, persistent).unwrap(),
        }
        cmd.dispatch(1, 1, 1).unwrap();
        frame.submit().unwrap().value
    };
    let word = |bytes: Vec<u8>| u32::from_le_bytes(bytes[..4].try_into().unwrap());
    let first = dispatch(true);
    assert_eq!(word(device.read_buffer_after(output, 0, 4, first).unwrap()), 6);
    let second = dispatch(false);
    assert!(matches!(device.read_buffer_after(output, 0, 4, first), Err(RhiError::InvalidState(_))));
    assert_eq!(word(device.read_buffer_after(output, 0, 4, second).unwrap()), 11);
    // The input was only read by both frames.
    assert_eq!(word(device.read_buffer_after(input, 0, 4, first).unwrap()), 5);
    device.destroy_bind_group(persistent);
    device.destroy_pipeline(pipeline);
    device.destroy_shader(shader);
    device.destroy_buffer(input);
    device.destroy_buffer(output);
    assert_clean(&device.validation());
}
