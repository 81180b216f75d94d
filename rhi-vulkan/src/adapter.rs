//! Physical-device ("adapter") selection: which of the instance's devices
//! Proxima runs on, and the [`DeviceInfo`] it reports about it (as wgpu-hal
//! keeps adapters apart from devices). A device qualifies when it offers
//! Vulkan 1.3, dynamic rendering, synchronization2, timeline semaphores,
//! shader draw parameters and a queue family with graphics and compute; of
//! those (only the ones whose name contains the device filter, when there is
//! one: `DeviceDesc`'s or `PROXIMA_DEVICE`), a discrete GPU beats an
//! integrated one, then a virtual one, then a CPU; on a tie, the first listed.

use crate::device::{DeviceFeatures, DeviceInfo};
use crate::error::{vk_err, Result, RhiError};
use ash::vk;

/// A readable name of a physical-device type.
fn device_type_name(t: vk::PhysicalDeviceType) -> &'static str {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => "discrete GPU",
        vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated GPU",
        vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual GPU",
        vk::PhysicalDeviceType::CPU => "CPU",
        _ => "other",
    }
}

/// The preference of a physical-device type: lower is better (discrete GPUs first).
fn type_rank(t: vk::PhysicalDeviceType) -> u32 {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

/// Picks the physical device to use: of those that offer Vulkan 1.3, the
/// features Proxima needs and a graphics+compute queue family (and match
/// `filter`, when given), the best-ranked type; with its queue family and info.
pub(crate) fn pick_physical_device(instance: &ash::Instance, filter: Option<&str>) -> Result<(vk::PhysicalDevice, u32, DeviceInfo)> {
    // SAFETY: plain query on a live instance.
    let devices = unsafe { instance.enumerate_physical_devices() }.map_err(vk_err("vkEnumeratePhysicalDevices"))?;
    let mut found = Vec::new();
    let mut best: Option<(u32, vk::PhysicalDevice, u32, DeviceInfo)> = None;
    for pd in devices {
        // SAFETY: `pd` comes from this instance.
        let props = unsafe { instance.get_physical_device_properties(pd) };
        let name = props.device_name_as_c_str().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|_| "?".into());
        found.push(name.clone());
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        if props.api_version < vk::API_VERSION_1_3 {
            continue;
        }
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f13).push_next(&mut f12).push_next(&mut f11);
        // SAFETY: `pd` is valid and the chain's structs outlive the call.
        unsafe { instance.get_physical_device_features2(pd, &mut f2) };
        let base = f2.features;
        if f13.dynamic_rendering == 0 || f13.synchronization2 == 0 || f12.timeline_semaphore == 0 || f11.shader_draw_parameters == 0 {
            continue;
        }
        // SAFETY: `pd` is valid.
        let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
        let flags: Vec<vk::QueueFlags> = families.iter().map(|f| f.queue_flags).collect();
        let Some(queues) = pick_queue_families(&flags) else {
            continue;
        };
        let family = queues.graphics as usize;
        let timestamp_valid_bits = families[family].timestamp_valid_bits;
        let mut info = device_info(instance, pd, &props, base, timestamp_valid_bits, name);
        info.queue_families = queues;
        let rank = type_rank(props.device_type);
        if best.as_ref().is_none_or(|b| rank < b.0) {
            best = Some((rank, pd, family as u32, info));
        }
    }
    match best {
        Some((_, pd, family, info)) => Ok((pd, family, info)),
        None => {
            Err(RhiError::NoSuitableDevice { found, filter: filter.map(|f| format!(" matching PROXIMA_DEVICE={f:?}")).unwrap_or_default() })
        }
    }
}

/// The queue families a device offers, picked as a discrete GPU offers
/// them: the graphics family (graphics and compute: everything is
/// submitted there), and where they exist a compute family without
/// graphics (async compute) and a dedicated transfer family (transfer
/// only: the copy engine of a discrete GPU). Lavapipe has one family;
/// NVIDIA's and AMD's drivers offer all three.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueFamilies {
    /// Graphics and compute: the queue every submission goes to.
    pub graphics: u32,
    /// Compute without graphics, if the device has such a family.
    pub async_compute: Option<u32>,
    /// Transfer without graphics or compute, if the device has one.
    pub dedicated_transfer: Option<u32>,
}

/// The families of `flags` (one per family, by index): the first with
/// graphics and compute, the first compute family without graphics, the
/// first transfer family with neither; `None` without a graphics and
/// compute family.
pub(crate) fn pick_queue_families(flags: &[vk::QueueFlags]) -> Option<QueueFamilies> {
    let (g, c, t) = (vk::QueueFlags::GRAPHICS, vk::QueueFlags::COMPUTE, vk::QueueFlags::TRANSFER);
    let first = |f: &dyn Fn(vk::QueueFlags) -> bool| flags.iter().position(|&q| f(q)).map(|i| i as u32);
    Some(QueueFamilies {
        graphics: first(&|q| q.contains(g | c))?,
        async_compute: first(&|q| q.contains(c) && !q.contains(g)),
        dedicated_transfer: first(&|q| q.contains(t) && !q.intersects(g | c)),
    })
}

/// What Proxima reports about a suitable physical device: its name, type,
/// version, limits, memory heaps and optional features.
fn device_info(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    props: &vk::PhysicalDeviceProperties,
    base: vk::PhysicalDeviceFeatures,
    timestamp_valid_bits: u32,
    name: String,
) -> DeviceInfo {
    let mut p11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut p13 = vk::PhysicalDeviceVulkan13Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p11).push_next(&mut p13);
    // SAFETY: `pd` is valid and the chain's structs outlive the call.
    unsafe { instance.get_physical_device_properties2(pd, &mut p2) };
    // SAFETY: `pd` is valid.
    let memory = unsafe { instance.get_physical_device_memory_properties(pd) };
    DeviceInfo {
        name,
        device_type: device_type_name(props.device_type).into(),
        api_version: (
            vk::api_version_major(props.api_version),
            vk::api_version_minor(props.api_version),
            vk::api_version_patch(props.api_version),
        ),
        max_push_constants_size: props.limits.max_push_constants_size,
        max_storage_buffer_range: props.limits.max_storage_buffer_range,
        max_uniform_buffer_range: props.limits.max_uniform_buffer_range,
        min_uniform_buffer_offset_alignment: props.limits.min_uniform_buffer_offset_alignment.max(1),
        min_storage_buffer_offset_alignment: props.limits.min_storage_buffer_offset_alignment.max(1),
        max_compute_work_group_count: props.limits.max_compute_work_group_count,
        max_viewport_dimensions: props.limits.max_viewport_dimensions,
        max_image_dimension_2d: props.limits.max_image_dimension2_d,
        max_sampler_anisotropy: props.limits.max_sampler_anisotropy,
        max_per_stage_uniform_buffers: props.limits.max_per_stage_descriptor_uniform_buffers,
        max_per_stage_storage_buffers: props.limits.max_per_stage_descriptor_storage_buffers,
        max_per_stage_sampled_images: props.limits.max_per_stage_descriptor_sampled_images,
        max_per_stage_storage_images: props.limits.max_per_stage_descriptor_storage_images,
        max_per_stage_samplers: props.limits.max_per_stage_descriptor_samplers,
        max_bound_descriptor_sets: props.limits.max_bound_descriptor_sets,
        max_buffer_size: p13.max_buffer_size,
        max_memory_allocation_size: p11.max_memory_allocation_size,
        memory_heaps: memory.memory_heaps_as_slice().iter().map(|h| h.size).collect(),
        timestamp_period_ns: props.limits.timestamp_period,
        timestamp_valid_bits,
        timestamp_compute_and_graphics: props.limits.timestamp_compute_and_graphics != 0,
        queue_families: QueueFamilies::default(),
        features: DeviceFeatures {
            wireframe: base.fill_mode_non_solid != 0,
            multi_draw_indirect: base.multi_draw_indirect != 0,
            draw_indirect_first_instance: base.draw_indirect_first_instance != 0,
            depth_clamp: base.depth_clamp != 0,
            robust_buffer_access: base.robust_buffer_access != 0,
            timestamps: timestamp_valid_bits > 0 && props.limits.timestamp_period > 0.0,
            // Not on a CPU device: lavapipe (Mesa 22.3) advertises it, but
            // its anisotropic sampling took a glTF model's base pass from
            // 0.7 s to 93 s and speckled it with the smallest mips.
            sampler_anisotropy: base.sampler_anisotropy != 0 && props.device_type != vk::PhysicalDeviceType::CPU,
            texture_compression_bc: base.texture_compression_bc != 0,
        },
    }
}

#[cfg(test)]
mod queue_family_tests {
    use super::*;

    #[test]
    fn queue_families_are_picked_as_discrete_gpus_offer_them() {
        let (g, c, t, sparse) =
            (vk::QueueFlags::GRAPHICS, vk::QueueFlags::COMPUTE, vk::QueueFlags::TRANSFER, vk::QueueFlags::SPARSE_BINDING);
        // Lavapipe: one family for everything.
        assert_eq!(pick_queue_families(&[g | c | t]), Some(QueueFamilies { graphics: 0, async_compute: None, dedicated_transfer: None }));
        // NVIDIA (Ada, 5xx drivers): graphics, transfer-only, compute, then video families.
        let nvidia = [g | c | t | sparse, t | sparse, c | t | sparse, vk::QueueFlags::from_raw(0x20), vk::QueueFlags::from_raw(0x40)];
        assert_eq!(pick_queue_families(&nvidia), Some(QueueFamilies { graphics: 0, async_compute: Some(2), dedicated_transfer: Some(1) }));
        // AMD (RADV): graphics, compute, then transfer.
        let amd = [g | c | t | sparse, c | t | sparse, t | sparse];
        assert_eq!(pick_queue_families(&amd), Some(QueueFamilies { graphics: 0, async_compute: Some(1), dedicated_transfer: Some(2) }));
        // Compute-only devices are not suitable.
        assert_eq!(pick_queue_families(&[c | t]), None);
    }
}
