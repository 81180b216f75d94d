//! GPU timestamps (a query pool per frame slot) on the real device
//! (lavapipe in CI), with the Khronos validation layer on and clean.

use rhi_vulkan::*;
use test_support::QuadGrid;
use test_support::{assert_clean, device_desc, new_device};

const W: u32 = 64;
const H: u32 = 48;

fn target(device: &Device) -> TextureHandle {
    device.create_texture(&TextureDesc::render_target("color", W, H, Format::Rgba8Unorm)).unwrap()
}

fn pass(texture: TextureHandle) -> RenderingDesc {
    RenderingDesc {
        color: vec![ColorAttachment { texture, load: LoadOp::Clear([0.0, 0.0, 0.0, 1.0]), store: true, resolve: None }],
        depth: None,
        area: Rect::from_size(W, H),
    }
}

/// Whether `r` is the one-off "timestamps are gone or never were" state error.
fn is_state_err<T: std::fmt::Debug>(r: Result<T>) -> bool {
    matches!(r, Err(RhiError::InvalidState(_)))
}

/// One frame: `pass begin`, a pass drawing `instances` quads of `grid`
/// (in one draw), `pass end`; its timestamps.
fn timed_frame(device: &Device, grid: &QuadGrid, color: TextureHandle, state: &mut TextureState, instances: u32) -> FrameTimestamps {
    let mut frame = device.begin_frame().unwrap();
    let cmd = frame.cmd();
    cmd.texture_barrier(color, *state, TextureState::ColorAttachment).unwrap();
    *state = TextureState::ColorAttachment;
    cmd.write_timestamp("pass begin").unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Inline).unwrap();
    grid.record(cmd, Rect::from_size(W, H), 0, instances, 1).unwrap();
    cmd.end_rendering().unwrap();
    cmd.write_timestamp("pass end").unwrap();
    let submitted = frame.submit().unwrap();
    let t = device.frame_timestamps(submitted).unwrap().expect("lavapipe has timestamps");
    assert_eq!(t.frame, submitted.frame);
    t
}

#[test]
fn a_frames_timestamps_are_monotonic_and_more_work_takes_longer() {
    let device = new_device();
    let features = device.features();
    assert!(features.timestamps, "the device has timestamps ({:?})", device.info());
    assert!(device.info().timestamp_period_ns > 0.0 && device.info().timestamp_valid_bits > 0);
    // 10,000 quads, each scaled to cover the whole target.
    let mut grid = QuadGrid::new(&device, Format::Rgba8Unorm, 100, 100).unwrap();
    grid.scale = [2.0, 2.0];
    let color = target(&device);
    let mut state = TextureState::Undefined;
    let mut light = Vec::new();
    let mut heavy = Vec::new();
    // Alternating, three of each; compared by their medians.
    for _ in 0..3 {
        light.push(timed_frame(&device, &grid, color, &mut state, 1));
        heavy.push(timed_frame(&device, &grid, color, &mut state, grid.instance_count));
    }
    for t in light.iter().chain(&heavy) {
        let labels: Vec<&str> = t.stamps.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, [FRAME_BEGIN, "pass begin", "pass end", FRAME_END], "in recording order");
        assert_eq!(t.stamps[0].1, 0.0, "milliseconds since frame begin");
        for w in t.stamps.windows(2) {
            assert!(w[1].1 >= w[0].1 && w[0].1 >= 0.0, "monotonic and non-negative: {:?}", t.stamps);
        }
        let pass = t.between("pass begin", "pass end").unwrap();
        assert!(pass >= 0.0 && pass <= t.frame_ms(), "{:?}", t.stamps);
    }
    let median = |v: &[FrameTimestamps]| {
        let mut ms: Vec<f64> = v.iter().map(|t| t.between("pass begin", "pass end").unwrap()).collect();
        ms.sort_by(f64::total_cmp);
        ms[ms.len() / 2]
    };
    let (one, many) = (median(&light), median(&heavy));
    assert!(many > one * 2.0 && many > 0.0, "10,000 full-target quads ({many:.3} ms) take longer than one ({one:.3} ms)");
    // Frames are numbered in their submissions and slots are reused: a
    // frame's results last until its slot is begun again.
    let first = device.begin_frame().unwrap().submit().unwrap();
    assert!(device.frame_timestamps(first).unwrap().is_some());
    for _ in 0..device.frames_in_flight() {
        device.begin_frame().unwrap().submit().unwrap();
    }
    assert!(is_state_err(device.frame_timestamps(first)), "the slot holds a later frame");
    grid.destroy(&device);
    device.destroy_texture(color);
    assert_clean(&device.validation());
}

#[test]
fn secondaries_write_timestamps_inside_passes_and_unexecuted_ones_are_left_out() {
    let device = new_device();
    let grid = QuadGrid::new(&device, Format::Rgba8Unorm, 4, 4).unwrap();
    let color = target(&device);
    let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None, samples: 1 };
    let mut frame = device.begin_frame().unwrap();
    let stamp = |label: &'static str| frame.record_secondary(&layout, |cmd| cmd.write_timestamp(label)).unwrap().0;
    let begin = stamp("secondary begin");
    let (draws, ()) = frame
        .record_secondary(&layout, |cmd| {
            cmd.write_timestamp("inside")?;
            grid.record(cmd, Rect::from_size(W, H), 0, grid.instance_count, 1)
        })
        .unwrap();
    let end = stamp("secondary end");
    // Recorded, never executed: its query is never written.
    let _unused = stamp("never executed");
    let cmd = frame.cmd();
    cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(&pass(color), RenderingContents::Secondary).unwrap();
    // In a pass whose contents are secondaries the primary records none.
    let r = cmd.write_timestamp("primary inside");
    let (found, needed) = (PassState::Secondaries, PassState::Secondary);
    assert!(matches!(r, Err(RhiError::WrongPass { command: "a timestamp", found: f, needed: n }) if (f, n) == (found, needed)), "{r:?}");
    cmd.execute_secondaries(&[begin, draws, end]).unwrap();
    cmd.end_rendering().unwrap();
    // Inside an inline pass the primary may.
    cmd.begin_rendering(
        &RenderingDesc { color: vec![ColorAttachment { texture: color, load: LoadOp::Load, store: true, resolve: None }], ..pass(color) },
        RenderingContents::Inline,
    )
    .unwrap();
    cmd.write_timestamp("primary inside").unwrap();
    cmd.end_rendering().unwrap();
    let submitted = frame.submit().unwrap();
    let t = device.frame_timestamps(submitted).unwrap().unwrap();
    let labels: Vec<&str> = t.stamps.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, [FRAME_BEGIN, "secondary begin", "inside", "secondary end", "primary inside", FRAME_END]);
    for w in t.stamps.windows(2) {
        assert!(w[1].1 >= w[0].1, "{:?}", t.stamps);
    }
    grid.destroy(&device);
    device.destroy_texture(color);
    assert_clean(&device.validation());
}

#[test]
fn timestamps_need_a_frame_and_room_in_its_pool() {
    let device = new_device();
    // An immediate submission has no timestamps; nothing is recorded.
    let r = device.immediate(|cmd| {
        assert!(cmd.timestamps_left().is_none());
        assert!(is_state_err(cmd.write_timestamp("immediate")));
        Ok(())
    });
    r.unwrap();
    let mut frame = device.begin_frame().unwrap();
    let layout = RenderingLayout { color_formats: vec![Format::Rgba8Unorm], depth_format: None, samples: 1 };
    // Recorded, never executed.
    let (_unexecuted, ()) = frame.record_secondary(&layout, |cmd| cmd.write_timestamp("in a secondary")).unwrap();
    let cmd = frame.cmd();
    // `frame begin` and the secondary's are taken; `frame end` is kept for the submit.
    let left = cmd.timestamps_left().unwrap();
    assert_eq!(left, MAX_TIMESTAMPS_PER_FRAME - 3);
    for i in 0..left {
        cmd.write_timestamp(&format!("t{i}")).unwrap();
    }
    assert_eq!(cmd.timestamps_left(), Some(0));
    let r = cmd.write_timestamp("one too many");
    let (limit, taken) = (u64::from(MAX_TIMESTAMPS_PER_FRAME), u64::from(MAX_TIMESTAMPS_PER_FRAME) + 1);
    assert!(
        matches!(r, Err(RhiError::OutOfLimits { what: "timestamp queries", value, max, .. }) if value == taken && max == limit),
        "{r:?}"
    );
    let submitted = frame.submit().unwrap();
    let t = device.frame_timestamps(submitted).unwrap().unwrap();
    assert_eq!(t.stamps.len() as u32, MAX_TIMESTAMPS_PER_FRAME - 1, "every query but the unexecuted secondary's, none of the refused one");
    assert_eq!(t.stamps.last().unwrap().0, FRAME_END);
    // The next frame of the slot starts afresh.
    let frame = device.begin_frame().unwrap();
    assert_eq!(frame.timestamps_left(), Some(MAX_TIMESTAMPS_PER_FRAME - 2));
    drop(frame);
    // A discarded frame has no results.
    let discarded = FrameSubmission { value: 0, frame: 1 };
    assert!(is_state_err(device.frame_timestamps(discarded)));
    assert_eq!(device.counts().query_pools, device.frames_in_flight());
    assert_clean(&device.validation());
}

#[test]
fn without_timestamps_nothing_is_recorded_and_the_results_are_none() {
    let device = Device::new(&DeviceDesc { timestamps: false, ..device_desc() }).unwrap();
    assert!(!device.features().timestamps);
    assert_eq!(device.counts().query_pools, 0);
    let mut frame = device.begin_frame().unwrap();
    let cmd = frame.cmd();
    assert!(cmd.timestamps_left().is_none());
    cmd.write_timestamp("nothing").unwrap();
    let submitted = frame.submit().unwrap();
    assert_eq!(device.frame_timestamps(submitted).unwrap(), None);
    assert_clean(&device.validation());
}
