//! Faults on the real device (lavapipe in CI), each ending in a typed error
//! rather than an abort, with the device still usable or cleanly dropped:
//!
//! * **Out of device memory.** Lavapipe's heap is host memory (often many
//!   GiB), so "allocate until failure" is bounded here: buffers as large as
//!   the device allows are allocated until the first error or until their
//!   sizes add up to twice the heap (lavapipe grants them all), and the
//!   first and last granted buffer must hold a write at their very end (only
//!   those pages are touched) — and a single request
//!   larger than every heap must fail with [`RhiError::OutOfDeviceMemory`]
//!   up front (Vulkan forbids asking a heap for more than its size). After
//!   freeing, a small buffer works, and dropping the device reports no
//!   leaked allocation and no validation message.
//! * **Missing driver or loader.** The environment variables that steer the
//!   Vulkan loader are process-wide and tests run in parallel, so these
//!   run in a child process (this test binary again, one test, with the
//!   variables set) and check that its error names the packages to install.
//! * **Device lost** cannot be provoked on lavapipe without undefined
//!   behaviour (it has no hang detection or reset), so the test injects it
//!   with `Device::simulate_device_lost` while frames are on the GPU: from
//!   then on every submission, wait, frame begin and submit and immediate
//!   submission is [`RhiError::DeviceLost`] without the driver being asked
//!   (an immediate's closure does not even run), objects can still be
//!   destroyed, and shutdown frees everything with nothing leaked and no
//!   validation message. A real `VK_ERROR_DEVICE_LOST` from any submit,
//!   wait or present maps to [`RhiError::DeviceLost`] through the RHI's one
//!   conversion (`vk_err`, unit-tested in `src/error.rs`) and marks the
//!   device lost the same way; a wait that times out is reported as device
//!   lost too.

use rhi_vulkan::*;
use std::process::Command;
use test_support::{assert_clean, new_device};

const GIB: u64 = 1 << 30;

#[test]
fn out_of_device_memory_is_a_typed_error_and_the_device_recovers() {
    // Its own device (validation asserted on): it counts buffers and shuts down.
    let device = new_device();
    let validation = device.validation();
    let info = device.info().clone();
    let heap = info.memory_heaps.iter().copied().max().expect("a memory heap");
    assert!(heap > 0);

    // One buffer larger than every heap: refused before Vulkan is asked.
    let too_big = heap.saturating_mul(2);
    if too_big <= info.max_buffer_size {
        let r = device.create_buffer(&BufferDesc::gpu_only("larger than the heap", too_big, BufferUsage::STORAGE));
        assert!(matches!(r, Err(RhiError::OutOfDeviceMemory)), "{r:?}");
    } else {
        let r = device.create_buffer(&BufferDesc::gpu_only("larger than maxBufferSize", info.max_buffer_size + 1, BufferUsage::STORAGE));
        let (value, max) = (info.max_buffer_size + 1, info.max_buffer_size);
        assert!(matches!(r, Err(RhiError::OutOfLimits { what: "size", value: v, max: m, .. }) if (v, m) == (value, max)), "{r:?}");
    }
    assert_eq!(device.counts().buffers, 0, "a refused buffer leaves nothing behind");

    // Allocate until failure, or until twice the heap is asked for.
    let chunk = info.max_buffer_size.min(info.max_memory_allocation_size).min(heap).clamp(1 << 20, 4 * GIB);
    let fill_usage = BufferUsage::STORAGE | BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST;
    let mut held = Vec::new();
    let mut failure = None;
    let mut asked = 0u64;
    while asked < heap.saturating_mul(2) {
        match device.create_buffer(&BufferDesc::gpu_only("fill", chunk, fill_usage)) {
            Ok(b) => held.push(b),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
        asked += chunk;
    }
    match &failure {
        Some(e) => assert!(matches!(e, RhiError::OutOfDeviceMemory | RhiError::OutOfHostMemory), "a typed error: {e:?}"),
        None => eprintln!("note: {} buffers of {chunk} bytes ({asked} bytes, twice the heap of {heap}) were all granted", held.len()),
    }
    let live = device.counts();
    assert_eq!(live.buffers, held.len(), "a failed allocation leaves no buffer");
    // What was granted is real memory bound over the whole buffer: the last
    // bytes of the first and the last buffer take a write and read it back
    // (this touches one page each; the rest stays unwritten).
    for (i, &b) in [held.first(), held.last()].into_iter().flatten().enumerate() {
        let marker = [0xA5 ^ i as u8; 16];
        device.write_buffer(b, chunk - 16, &marker).unwrap();
        assert_eq!(device.read_buffer(b, chunk - 16, 16).unwrap(), marker, "buffer {i} of {} reads back its last bytes", held.len());
    }

    // Free everything; a small buffer works again, end to end.
    for b in held.drain(..) {
        device.destroy_buffer(b);
    }
    device.wait_idle().unwrap();
    let small = device.create_buffer_init(&BufferDesc::host_visible("after", 16, BufferUsage::STORAGE), &[7u8; 16]).unwrap();
    assert_eq!(device.counts().buffers, 1);
    device.destroy_buffer(small);
    let report = device.shutdown();
    assert_eq!(report.leaked_allocations, 0, "{report:?}");
    assert_eq!((report.validation_errors, report.validation_warnings), (0, 0), "{:#?}", validation.messages());
    assert_clean(&validation);
}

fn lost<T: std::fmt::Debug>(r: Result<T>) -> bool {
    matches!(r, Err(RhiError::DeviceLost))
}

#[test]
fn a_lost_device_fails_every_submission_and_wait_and_still_shuts_down_cleanly() {
    // Its own device (validation asserted on): it is lost and shut down.
    let device = new_device();
    let validation = device.validation();
    const SIZE: u64 = 32 << 20;
    let usage = BufferUsage::STORAGE | BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST;
    let a = device.create_buffer(&BufferDesc::gpu_only("a", SIZE, usage)).unwrap();
    let b = device.create_buffer(&BufferDesc::gpu_only("b", SIZE, usage)).unwrap();
    let host = device.create_buffer(&BufferDesc::host_visible("host", 256, BufferUsage::STORAGE)).unwrap();
    // Frames in flight: each fills and copies 32 MiB, nothing waited for.
    let mut submitted = Vec::new();
    for i in 0..device.frames_in_flight() as u32 {
        let mut frame = device.begin_frame().unwrap();
        let cmd = frame.cmd();
        cmd.fill_buffer(a, 0, SIZE, i).unwrap();
        cmd.buffer_barrier(a, BufferState::TransferDst, BufferState::TransferSrc).unwrap();
        cmd.copy_buffer(a, 0, b, 0, SIZE).unwrap();
        cmd.buffer_barrier(a, BufferState::TransferSrc, BufferState::TransferDst).unwrap();
        submitted.push(frame.submit().unwrap());
    }
    // A frame being recorded when the device is lost.
    let mut open = device.begin_frame().unwrap();
    open.cmd().fill_buffer(b, 0, 256, 7).unwrap();
    assert!(!device.is_lost());

    device.simulate_device_lost();
    assert!(device.is_lost());
    assert!(lost(open.submit()), "the open frame's submission");
    for s in &submitted {
        assert!(lost(device.wait_for(s.value)), "waiting for frame {}", s.frame);
        assert!(lost(device.frame_timestamps(*s)), "frame {}'s timestamps", s.frame);
    }
    assert!(lost(device.wait_for(0)), "even a wait for nothing answers that the device is lost");
    assert!(lost(device.wait_idle()));
    assert!(lost(device.completed_value()));
    assert!(lost(device.collect_garbage()));
    // No frame can be begun, again and again (the failed one left none open).
    for _ in 0..3 {
        assert!(lost(device.begin_frame().map(|_| ())));
    }
    // An immediate submission fails before its commands are recorded.
    let mut ran = false;
    assert!(lost(device.immediate(|_| {
        ran = true;
        Ok(())
    })));
    assert!(!ran, "an immediate on a lost device does not record");
    assert!(lost(device.write_buffer(a, 0, &[1u8; 16])), "a staged write is an immediate submission");
    assert!(lost(device.read_buffer(host, 0, 16)), "a read waits for the GPU");
    assert!(lost(device.read_buffer(b, 0, 16)));

    // Destroying still works; shutdown frees everything.
    for buffer in [a, b, host] {
        device.destroy_buffer(buffer);
    }
    assert_eq!(device.counts().buffers, 0);
    let report = device.shutdown();
    assert_eq!(report.leaked_allocations, 0, "{report:?}");
    assert_eq!((report.validation_errors, report.validation_warnings), (0, 0), "{:#?}", validation.messages());
    assert_clean(&validation);
}

/// Runs this test binary's test `name` in a child with `env` set, with
/// `PROXIMA_FAULT_CHILD=1`; returns its combined output.
fn child(name: &str, env: &[(&str, &str)]) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args([name, "--exact", "--nocapture", "--test-threads", "1"]).env("PROXIMA_FAULT_CHILD", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the child failed: {text}");
    text
}

/// The child's `DEVICE ERROR: ...` (the test harness may print before it on the line).
fn error_line(out: &str) -> &str {
    out.lines().find_map(|l| l.find("DEVICE ERROR: ").map(|i| &l[i..])).unwrap_or_else(|| panic!("no error printed: {out}"))
}

/// In the child: creating a device must fail; prints the error.
fn device_error_in_child() {
    match Device::new(&DeviceDesc::default()) {
        Ok(d) => panic!("a device was created without a driver or loader: {}", d.name()),
        Err(e) => println!("DEVICE ERROR: {e}"),
    }
}

#[test]
fn a_missing_driver_names_the_package_to_install() {
    if std::env::var_os("PROXIMA_FAULT_CHILD").is_some() {
        return device_error_in_child();
    }
    let nothing = "/nonexistent/proxima/icd.json";
    let out = child("a_missing_driver_names_the_package_to_install", &[("VK_ICD_FILENAMES", nothing), ("VK_DRIVER_FILES", nothing)]);
    let line = error_line(&out);
    assert!(line.contains("mesa-vulkan-drivers"), "{line}");
    assert!(line.contains("no driver") && line.contains(nothing), "says what was searched: {line}");
}

#[test]
fn a_missing_loader_names_the_package_to_install() {
    if std::env::var_os("PROXIMA_FAULT_CHILD").is_some() {
        return device_error_in_child();
    }
    let out = child("a_missing_loader_names_the_package_to_install", &[("PROXIMA_VULKAN_LOADER", "/nonexistent/proxima/libvulkan.so.1")]);
    let line = error_line(&out);
    assert!(line.contains("libvulkan1") && line.contains("mesa-vulkan-drivers"), "{line}");
    assert!(line.contains("loader could not be loaded"), "{line}");
}
