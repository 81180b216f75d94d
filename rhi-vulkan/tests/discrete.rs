//! The paths a discrete GPU takes, on lavapipe: with
//! `DeviceDesc::emulate_discrete_gpu` (`PROXIMA_EMULATE_DISCRETE_GPU=1`)
//! device-local memory is held to a budget (an allocation past it is a
//! typed error, with nothing created, and fits again once memory is
//! freed), `GpuOnly` memory is never mapped (written and read through
//! staging copies) and the staged bytes are counted. Validation on.

use rhi_vulkan::*;
use test_support::{assert_clean, device_desc};

const MIB: u64 = 1 << 20;

fn emulated(budget: u64) -> Device {
    let desc = DeviceDesc { emulate_discrete_gpu: true, device_local_budget: Some(budget), ..device_desc() };
    Device::new(&desc).expect("a Vulkan device (run `cargo xtask test`)")
}

#[test]
fn device_local_memory_past_the_budget_is_a_typed_error_and_fits_again_once_freed() {
    let device = emulated(64 * MIB);
    assert!(device.emulates_discrete_gpu());
    let big = |label: &str, mib: u64| BufferDesc::gpu_only(label, mib * MIB, BufferUsage::STORAGE);
    let first = device.create_buffer(&big("first", 40)).unwrap();
    let (used, budget) = device.device_local_memory();
    assert!(used >= 40 * MIB && budget == 64 * MIB, "{used} of {budget}");
    assert!(matches!(device.create_buffer(&big("second", 40)), Err(RhiError::OutOfDeviceMemory)));
    let texture = TextureDesc::sampled("too big", 4096, 4096, Format::Rgba8Unorm); // 64 MiB
    assert!(matches!(device.create_texture(&texture), Err(RhiError::OutOfDeviceMemory)));
    assert_eq!(device.device_local_memory().0, used, "a refused allocation charges nothing");
    // Host-visible memory is not device-local: not held to the budget.
    let host = device.create_buffer(&BufferDesc::host_visible("host", 40 * MIB, BufferUsage::STORAGE)).unwrap();
    device.destroy_buffer(first);
    device.wait_idle().unwrap();
    let second = device.create_buffer(&big("second", 40)).unwrap();
    for b in [second, host] {
        device.destroy_buffer(b);
    }
    device.wait_idle().unwrap();
    assert_eq!(device.device_local_memory().0, 0, "everything freed is given back");
    assert_clean(&device);
}

#[test]
fn uploads_to_gpu_only_memory_go_through_staging_and_are_counted() {
    let device = emulated(256 * MIB);
    let data: Vec<u8> = (0..4096u32).flat_map(|i| (i.wrapping_mul(2654435761)).to_le_bytes()).collect();
    let staged = device.staging_upload_bytes();
    let gpu = device.create_buffer_init(&BufferDesc::gpu_only("gpu", data.len() as u64, BufferUsage::STORAGE), &data).unwrap();
    assert_eq!(device.staging_upload_bytes() - staged, data.len() as u64, "one staged copy of the data");
    // A host-visible write is not a staging upload.
    let host = device.create_buffer_init(&BufferDesc::host_visible("host", 64, BufferUsage::STORAGE), &data[..64]).unwrap();
    assert_eq!(device.staging_upload_bytes() - staged, data.len() as u64);
    // A read of GPU-only memory goes through a host-visible copy, and
    // gives the bytes back.
    assert_eq!(device.read_buffer_after(gpu, 0, data.len() as u64, 0).unwrap(), data);
    let texels = vec![0x5au8; 64 * 64 * 4];
    let desc = TextureDesc::sampled("texture", 64, 64, Format::Rgba8Unorm);
    let texture = device.create_texture_with_data(&desc, TextureData::Level0(&texels)).unwrap();
    assert!(device.staging_upload_bytes() - staged >= (data.len() + texels.len()) as u64, "the texture's texels were staged");
    device.destroy_texture(texture);
    device.destroy_buffer(gpu);
    device.destroy_buffer(host);
    device.wait_idle().unwrap();
    assert_clean(&device);
}
