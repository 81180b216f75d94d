//! Presenting to a window (the `window` feature): a `VkSurfaceKHR` made from
//! raw window/display handles with `ash-window`, a swapchain of B8G8R8A8
//! (sRGB preferred) images in the [`PresentMode`] asked for (FIFO, with a
//! log line, where the surface lacks it), and [`Swapchain::present_texture`],
//! which blits any texture onto the next image and presents it.
//!
//! ## Lifetime
//! A swapchain and its surface are children of the device and instance, so
//! they must go first: call [`Swapchain::destroy`] with the same [`Device`]
//! before the device is dropped or shut down. Dropping a `Swapchain` without
//! `destroy` cannot free anything (it holds no device): it logs an error and
//! leaks the handles, and the validation layer then reports the leaked
//! surface/swapchain when the device and instance are destroyed.
//!
//! ## Synchronization
//! Each present uses one of a small ring of slots (an acquire semaphore and a
//! command buffer) and waits on the device's timeline for the slot's previous
//! submission before reusing it. Each swapchain image has its own "ready to
//! present" semaphore. The blit submission goes through the device's queue
//! and timeline like every other submission, so [`Device::wait_idle`] covers it.

use crate::device::Device;
use crate::error::{vk_err, Result, RhiError};
use crate::texture::{subresource_range, TextureHandle};
use crate::{conv, PresentMode, TextureState};
use ash::{khr, vk};
use raw_window_handle::{HasDisplayHandle, HasWindowHandle, RawDisplayHandle};
use std::ffi::CStr;
use std::sync::Arc;

/// Slots in the acquire/record ring (frames the CPU may present ahead).
const SLOTS: usize = 3;

/// The instance extensions needed to present to windows of `display`, for
/// [`crate::DeviceDesc::surface_extensions`].
pub fn surface_instance_extensions(display: RawDisplayHandle) -> Result<Vec<&'static CStr>> {
    let names = ash_window::enumerate_required_extensions(display).map_err(vk_err("ash_window::enumerate_required_extensions"))?;
    Ok(names
        .iter()
        // SAFETY: ash-window returns pointers to its `'static` extension-name constants.
        .map(|&p| unsafe { CStr::from_ptr(p) })
        .collect())
}

/// A window a swapchain can present to: anything that hands out its window
/// and display handles and can cross to the render thread, such as
/// `Arc<winit::window::Window>`. The swapchain keeps it (an `Arc`) until it
/// is destroyed, so the window outlives its surface by construction — no
/// raw pointer a safe caller could let dangle (wgpu's `SurfaceTarget` works
/// the same way).
pub trait WindowSource: HasWindowHandle + HasDisplayHandle + Send + Sync {}

impl<T: HasWindowHandle + HasDisplayHandle + Send + Sync + ?Sized> WindowSource for T {}

struct Slot {
    acquire: vk::Semaphore,
    cmd: vk::CommandBuffer,
    /// The timeline value of the submission that last used this slot.
    value: u64,
}

/// A window's surface and swapchain. See the module docs for its lifetime.
pub struct Swapchain {
    /// The window the surface was made for, kept alive until `destroy`.
    window: Arc<dyn WindowSource>,
    /// The device it was made on; calls with another device are refused.
    device: u64,
    surface_loader: khr::surface::Instance,
    loader: khr::swapchain::Device,
    surface: vk::SurfaceKHR,
    raw: vk::SwapchainKHR,
    images: Vec<vk::Image>,
    /// One per image: signalled by the blit, waited by the present.
    ready: Vec<vk::Semaphore>,
    format: vk::SurfaceFormatKHR,
    /// The mode asked for, and the one the swapchain uses (FIFO where the
    /// surface lacks the wanted one).
    wanted_mode: PresentMode,
    mode: PresentMode,
    extent: vk::Extent2D,
    wanted: vk::Extent2D,
    pool: vk::CommandPool,
    slots: Vec<Slot>,
    next_slot: usize,
    stale: bool,
    destroyed: bool,
}

impl Swapchain {
    /// Creates a surface for the window and a swapchain of `width`×`height`
    /// (the surface's own extent wins where it has one) presenting in
    /// `mode`, or in FIFO where the surface does not offer `mode` (logged;
    /// [`Swapchain::present_mode`] tells which). The device must have been
    /// created with [`surface_instance_extensions`] of the same display, and
    /// its queue must be able to present to the surface.
    pub fn new(device: &Device, window: Arc<dyn WindowSource>, width: u32, height: u32, mode: PresentMode) -> Result<Self> {
        let handle_err = |e: raw_window_handle::HandleError| RhiError::InvalidDesc(format!("window handle: {e}"));
        let display = window.display_handle().map_err(handle_err)?.as_raw();
        let raw_window = window.window_handle().map_err(handle_err)?.as_raw();
        if !device.presentable() {
            return Err(RhiError::InvalidDesc("the device was created without DeviceDesc::surface_extensions; it cannot present".into()));
        }
        let instance = device.instance_raw();
        let entry = device.entry();
        // SAFETY: the handles come from a live window that `self.window`
        // keeps alive until the surface is destroyed; the instance enables
        // the display's surface extensions (checked above).
        let surface =
            unsafe { ash_window::create_surface(entry, instance, display, raw_window, None) }.map_err(vk_err("vkCreate*SurfaceKHR"))?;
        let surface_loader = khr::surface::Instance::new(entry, instance);
        let loader = khr::swapchain::Device::new(instance, &device.raw);
        let mut this = Self {
            window,
            device: device.id(),
            surface_loader,
            loader,
            surface,
            raw: vk::SwapchainKHR::null(),
            images: Vec::new(),
            ready: Vec::new(),
            format: vk::SurfaceFormatKHR::default(),
            wanted_mode: mode,
            mode: PresentMode::Fifo,
            extent: vk::Extent2D::default(),
            wanted: vk::Extent2D { width, height },
            pool: vk::CommandPool::null(),
            slots: Vec::new(),
            next_slot: 0,
            stale: false,
            destroyed: false,
        };
        // From here on, `destroy` frees whatever was made, also on error.
        match this.init(device) {
            Ok(()) => Ok(this),
            Err(e) => {
                this.destroy_ref(device);
                Err(e)
            }
        }
    }

    fn init(&mut self, device: &Device) -> Result<()> {
        // SAFETY: live physical device, queue family and surface.
        let supported =
            unsafe { self.surface_loader.get_physical_device_surface_support(device.physical, device.queue_family, self.surface) }
                .map_err(vk_err("vkGetPhysicalDeviceSurfaceSupportKHR"))?;
        if !supported {
            return Err(RhiError::Unsupported(format!(
                "queue family {} of {} cannot present to this window",
                device.queue_family,
                device.name()
            )));
        }
        self.format = self.pick_format(device)?;
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(device.queue_family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER | vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid device and create info.
        self.pool = unsafe { device.raw.create_command_pool(&pool_info, None) }.map_err(vk_err("vkCreateCommandPool"))?;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(SLOTS as u32);
        // SAFETY: the pool is ours and used on one thread at a time (`&mut self`).
        let cmds = unsafe { device.raw.allocate_command_buffers(&alloc) }.map_err(vk_err("vkAllocateCommandBuffers"))?;
        for cmd in cmds {
            let acquire = create_semaphore(device)?;
            self.slots.push(Slot { acquire, cmd, value: 0 });
        }
        self.create_swapchain(device)
    }

    fn pick_format(&self, device: &Device) -> Result<vk::SurfaceFormatKHR> {
        // SAFETY: live physical device and surface.
        let formats = unsafe { self.surface_loader.get_physical_device_surface_formats(device.physical, self.surface) }
            .map_err(vk_err("vkGetPhysicalDeviceSurfaceFormatsKHR"))?;
        let blit_dst = |f: vk::Format| {
            // SAFETY: plain query on a live physical device.
            let props = unsafe { device.instance_raw().get_physical_device_format_properties(device.physical, f) };
            props.optimal_tiling_features.contains(vk::FormatFeatureFlags::BLIT_DST)
        };
        for wanted in [vk::Format::B8G8R8A8_SRGB, vk::Format::B8G8R8A8_UNORM, vk::Format::R8G8B8A8_SRGB, vk::Format::R8G8B8A8_UNORM] {
            if let Some(f) = formats.iter().find(|f| f.format == wanted && f.color_space == vk::ColorSpaceKHR::SRGB_NONLINEAR) {
                if blit_dst(wanted) {
                    return Ok(*f);
                }
            }
        }
        formats
            .iter()
            .copied()
            .find(|f| blit_dst(f.format))
            .ok_or_else(|| RhiError::Unsupported(format!("no surface format can be a blit destination: {formats:?}")))
    }

    /// (Re)creates the swapchain for the surface's current extent. The queue
    /// must be idle (nothing in flight uses the old images or semaphores).
    fn create_swapchain(&mut self, device: &Device) -> Result<()> {
        // SAFETY: live physical device and surface.
        let caps = unsafe { self.surface_loader.get_physical_device_surface_capabilities(device.physical, self.surface) }
            .map_err(vk_err("vkGetPhysicalDeviceSurfaceCapabilitiesKHR"))?;
        let extent = if caps.current_extent.width != u32::MAX {
            caps.current_extent
        } else {
            vk::Extent2D {
                width: self.wanted.width.clamp(caps.min_image_extent.width, caps.max_image_extent.width),
                height: self.wanted.height.clamp(caps.min_image_extent.height, caps.max_image_extent.height),
            }
        };
        self.stale = false;
        if extent.width == 0 || extent.height == 0 {
            // Minimized: keep the old swapchain (if any) and skip presents.
            self.extent = extent;
            return Ok(());
        }
        if !caps.supported_usage_flags.contains(vk::ImageUsageFlags::TRANSFER_DST) {
            return Err(RhiError::Unsupported("swapchain images cannot be transfer destinations".into()));
        }
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count != 0 {
            count = count.min(caps.max_image_count);
        }
        let mode = self.pick_present_mode(device)?;
        let alpha = [
            vk::CompositeAlphaFlagsKHR::OPAQUE,
            vk::CompositeAlphaFlagsKHR::INHERIT,
            vk::CompositeAlphaFlagsKHR::PRE_MULTIPLIED,
            vk::CompositeAlphaFlagsKHR::POST_MULTIPLIED,
        ]
        .into_iter()
        .find(|a| caps.supported_composite_alpha.contains(*a))
        .unwrap_or(vk::CompositeAlphaFlagsKHR::OPAQUE);
        let old = self.raw;
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(self.surface)
            .min_image_count(count)
            .image_format(self.format.format)
            .image_color_space(self.format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(vk::ImageUsageFlags::TRANSFER_DST)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(alpha)
            .present_mode(vk_present_mode(mode))
            .clipped(true)
            .old_swapchain(old);
        // SAFETY: live surface; `old` is ours (or null) and nothing in flight uses it.
        let raw = unsafe { self.loader.create_swapchain(&info, None) }.map_err(vk_err("vkCreateSwapchainKHR"))?;
        self.destroy_swapchain(device);
        self.raw = raw;
        self.extent = extent;
        self.mode = mode;
        // SAFETY: `raw` is a live swapchain.
        self.images = unsafe { self.loader.get_swapchain_images(raw) }.map_err(vk_err("vkGetSwapchainImagesKHR"))?;
        for _ in 0..self.images.len() {
            let s = create_semaphore(device)?;
            self.ready.push(s);
        }
        log::info!("swapchain: {} images of {}x{} {:?}, {}", self.images.len(), extent.width, extent.height, self.format.format, mode);
        Ok(())
    }

    /// The wanted present mode if the surface offers it, else FIFO (which
    /// every surface offers), with a log line.
    fn pick_present_mode(&self, device: &Device) -> Result<PresentMode> {
        // SAFETY: live physical device and surface.
        let offered = unsafe { self.surface_loader.get_physical_device_surface_present_modes(device.physical, self.surface) }
            .map_err(vk_err("vkGetPhysicalDeviceSurfacePresentModesKHR"))?;
        Ok(choose_present_mode(self.wanted_mode, &offered))
    }

    /// Destroys the swapchain and its per-image semaphores (the queue is idle).
    fn destroy_swapchain(&mut self, device: &Device) {
        for s in self.ready.drain(..) {
            // SAFETY: the queue is idle, so no present waits on it any more.
            unsafe { device.raw.destroy_semaphore(s, None) };
        }
        self.images.clear();
        if self.raw != vk::SwapchainKHR::null() {
            // SAFETY: the queue is idle; the images are not used any more.
            unsafe { self.loader.destroy_swapchain(self.raw, None) };
            self.raw = vk::SwapchainKHR::null();
        }
    }

    fn wait_queue_idle(device: &Device) -> Result<()> {
        // Bounded first (every submission signals the timeline), so the
        // idle wait below only covers presents, which end with it.
        device.wait_for(device.timeline.last_submitted())?;
        // SAFETY: the queue is externally synchronized by the device's queue lock.
        device.with_queue(|q| unsafe { device.raw.queue_wait_idle(q) }).map_err(vk_err("vkQueueWaitIdle"))
    }

    /// The size of the swapchain images (zero while minimized).
    pub fn extent(&self) -> (u32, u32) {
        (self.extent.width, self.extent.height)
    }

    /// The present mode in use: the one asked for, or FIFO where the surface
    /// lacks it.
    pub fn present_mode(&self) -> PresentMode {
        self.mode
    }

    /// Asks for another present mode; the swapchain is recreated in it
    /// (or in FIFO, see [`Swapchain::new`]) before the next present.
    pub fn set_present_mode(&mut self, mode: PresentMode) {
        if mode != self.wanted_mode {
            self.wanted_mode = mode;
            self.stale = true;
        }
    }

    /// The swapchain's image format.
    pub fn format(&self) -> vk::Format {
        self.format.format
    }

    /// Asks for a new size (the window was resized); the swapchain is
    /// recreated before the next present.
    pub fn resize(&mut self, width: u32, height: u32) {
        self.wanted = vk::Extent2D { width, height };
        self.stale = true;
    }

    fn recreate(&mut self, device: &Device) -> Result<()> {
        Self::wait_queue_idle(device)?;
        self.create_swapchain(device)
    }

    /// Blits `texture` (currently in `state`, left in `state`) onto the next
    /// swapchain image, scaled with a linear filter, and presents it. An
    /// out-of-date or suboptimal swapchain is recreated (that frame may be
    /// skipped); a minimized window skips presents. On a lost device
    /// ([`Device::is_lost`]) it is [`RhiError::DeviceLost`].
    pub fn present_texture(&mut self, device: &Device, texture: TextureHandle, state: TextureState) -> Result<()> {
        self.check_device(device)?;
        if self.destroyed {
            return Err(RhiError::InvalidState("present on a destroyed swapchain".into()));
        }
        // A lost device presents nothing (nothing is acquired or recorded).
        device.timeline.check_lost()?;
        if matches!(state, TextureState::Undefined | TextureState::Present) {
            return Err(RhiError::WrongTextureState { state, role: "presented" });
        }
        if device.frame_open.load(std::sync::atomic::Ordering::Acquire) {
            return Err(RhiError::FrameOpen { command: "present_texture" });
        }
        if self.stale {
            self.recreate(device)?;
        }
        if self.extent.width == 0 || self.extent.height == 0 || self.raw == vk::SwapchainKHR::null() {
            // Minimized; look again next time.
            self.stale = true;
            return Ok(());
        }
        // Until the blit is submitted, a texture destroyed on another thread
        // waits for it in the deletion queue.
        let _recording = crate::device::Recording::begin(device);
        let src = blit_source(device, texture)?;
        let slot_index = self.next_slot;
        let Some((image_index, suboptimal)) = self.acquire_image(device, slot_index)? else {
            return Ok(());
        };
        let image = self.images[image_index as usize];
        self.record_blit(device, self.slots[slot_index].cmd, &src, state, image)?;
        self.submit_and_present(device, slot_index, image_index, suboptimal)
    }

    /// Waits for slot `slot_index`'s last submission, then acquires the next
    /// image with its semaphore: the image index and whether the swapchain is
    /// suboptimal, or `None` where it was out of date (it is recreated, and
    /// this frame skipped).
    fn acquire_image(&mut self, device: &Device, slot_index: usize) -> Result<Option<(u32, bool)>> {
        device.wait_for(self.slots[slot_index].value)?;
        let slot = &self.slots[slot_index];
        // SAFETY: live swapchain; the acquire semaphore is unsignalled (its
        // last wait has completed: the timeline wait above).
        let acquired = unsafe { self.loader.acquire_next_image(self.raw, device.timeline.timeout_ns(), slot.acquire, vk::Fence::null()) };
        match acquired {
            Ok(r) => Ok(Some(r)),
            // No image within the device's wait timeout: as a wait on the GPU.
            Err(vk::Result::TIMEOUT | vk::Result::NOT_READY) => Err(crate::RhiError::DeviceLost),
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                // Nothing was signalled; recreate and skip this frame.
                self.recreate(device)?;
                Ok(None)
            }
            Err(e) => Err(vk_err("vkAcquireNextImageKHR")(e)),
        }
    }

    /// Resets `cmd` (its last submission has completed) and records into it
    /// the blit of `src` (in `state`, left in `state`) onto the swapchain
    /// image `image`, scaled to the swapchain's extent.
    fn record_blit(&self, device: &Device, cmd: vk::CommandBuffer, src: &BlitSource, state: TextureState, image: vk::Image) -> Result<()> {
        // SAFETY: the command buffer's last submission has completed (the
        // timeline wait in acquire_image).
        unsafe { device.raw.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty()) }.map_err(vk_err("vkResetCommandBuffer"))?;
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the command buffer was reset above.
        unsafe { device.raw.begin_command_buffer(cmd, &begin) }.map_err(vk_err("vkBeginCommandBuffer"))?;

        let (before, after) = blit_barriers(src, state, image);
        let layers =
            vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 0, base_array_layer: 0, layer_count: 1 };
        let region = vk::ImageBlit2::default()
            .src_subresource(layers)
            .src_offsets([vk::Offset3D { x: 0, y: 0, z: 0 }, vk::Offset3D { x: src.width as i32, y: src.height as i32, z: 1 }])
            .dst_subresource(layers)
            .dst_offsets([
                vk::Offset3D { x: 0, y: 0, z: 0 },
                vk::Offset3D { x: self.extent.width as i32, y: self.extent.height as i32, z: 1 },
            ]);
        let regions = [region];
        let blit = vk::BlitImageInfo2::default()
            .src_image(src.image)
            .src_image_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
            .dst_image(image)
            .dst_image_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .regions(&regions)
            .filter(vk::Filter::LINEAR);
        // SAFETY: the command buffer is recording; both images are live (the
        // texture handle was resolved by the caller under its recording guard;
        // the swapchain image was just acquired); synchronization2 and
        // Vulkan 1.3 blits are enabled.
        unsafe {
            device.raw.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().image_memory_barriers(&before));
            device.raw.cmd_blit_image2(cmd, &blit);
            device.raw.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().image_memory_barriers(&after));
        }
        // SAFETY: the buffer is in the recording state.
        unsafe { device.raw.end_command_buffer(cmd) }.map_err(vk_err("vkEndCommandBuffer"))?;
        Ok(())
    }

    /// Submits slot `slot_index`'s recorded blit (waiting on its acquire
    /// semaphore, signalling the image's ready semaphore), moves the ring on
    /// and presents image `image_index`; an out-of-date or suboptimal
    /// swapchain is marked for recreation.
    fn submit_and_present(&mut self, device: &Device, slot_index: usize, image_index: u32, suboptimal: bool) -> Result<()> {
        let (cmd, acquire) = (self.slots[slot_index].cmd, self.slots[slot_index].acquire);
        let ready = self.ready[image_index as usize];
        let waits = [vk::SemaphoreSubmitInfo::default().semaphore(acquire).stage_mask(vk::PipelineStageFlags2::BLIT)];
        let signal = vk::SemaphoreSubmitInfo::default().semaphore(ready).stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS);
        let value = device.submit_with(cmd, &waits, Some(signal))?;
        self.slots[slot_index].value = value;
        self.next_slot = (slot_index + 1) % self.slots.len();

        let swapchains = [self.raw];
        let indices = [image_index];
        let wait = [ready];
        let present = vk::PresentInfoKHR::default().wait_semaphores(&wait).swapchains(&swapchains).image_indices(&indices);
        // SAFETY: the queue is externally synchronized by the device's queue
        // lock; the image was acquired and its blit signals `ready`.
        let presented = device.with_queue(|q| unsafe { self.loader.queue_present(q, &present) });
        match presented {
            Ok(sub) => self.stale |= sub || suboptimal,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => self.stale = true,
            Err(e) => return device.timeline.note(Err(vk_err("vkQueuePresentKHR")(e))),
        }
        Ok(())
    }

    /// Waits for the queue, then destroys the swapchain, its semaphores,
    /// command buffers and the surface, and lets the window go. Call it
    /// before the device goes, with the device it was made on (another
    /// device is an error and nothing is destroyed). Destroying twice is a
    /// no-op.
    pub fn destroy(&mut self, device: &Device) -> Result<()> {
        self.check_device(device)?;
        self.destroy_ref(device);
        Ok(())
    }

    fn check_device(&self, device: &Device) -> Result<()> {
        if device.id() != self.device {
            return Err(RhiError::OtherDevice { what: "the swapchain" });
        }
        Ok(())
    }

    /// The window it presents to.
    pub fn window(&self) -> &Arc<dyn WindowSource> {
        &self.window
    }

    fn destroy_ref(&mut self, device: &Device) {
        if self.destroyed {
            return;
        }
        self.destroyed = true;
        if let Err(e) = Self::wait_queue_idle(device) {
            log::error!("waiting for the queue before destroying the swapchain failed: {e}");
        }
        self.destroy_swapchain(device);
        for slot in self.slots.drain(..) {
            // SAFETY: the queue is idle; nothing waits on the semaphore.
            unsafe { device.raw.destroy_semaphore(slot.acquire, None) };
        }
        if self.pool != vk::CommandPool::null() {
            // SAFETY: the queue is idle; the pool's buffers are not in use.
            unsafe { device.raw.destroy_command_pool(self.pool, None) };
        }
        // SAFETY: the swapchain made from the surface is destroyed above.
        unsafe { self.surface_loader.destroy_surface(self.surface, None) };
    }
}

/// The texture a present blits from: its raw image, format and size (level
/// 0 is blitted; barriers move every level).
struct BlitSource {
    image: vk::Image,
    width: u32,
    height: u32,
    /// Every level and layer of the source.
    range: vk::ImageSubresourceRange,
}

/// Resolves `texture` into the image a present blits from; it must have
/// TRANSFER_SRC usage.
fn blit_source(device: &Device, texture: TextureHandle) -> Result<BlitSource> {
    let t = crate::device::read(&device.resources.textures);
    let e = t.get(texture).ok_or_else(|| RhiError::InvalidHandle(format!("{texture:?}")))?;
    if !e.desc.usage.contains(crate::TextureUsage::TRANSFER_SRC) {
        let usage = crate::Usage::Texture(crate::TextureUsage::TRANSFER_SRC);
        return Err(RhiError::MissingUsage { label: e.desc.label.clone(), usage, needed_for: "a present (the blit source)" });
    }
    Ok(BlitSource { image: e.raw, width: e.desc.width, height: e.desc.height, range: subresource_range(&e.desc) })
}

/// The barriers before a present's blit (the source from `state` to
/// TRANSFER_SRC at BLIT, the swapchain image `image` to TRANSFER_DST) and
/// after it (the source back to `state`, the image to PRESENT_SRC).
fn blit_barriers(
    src: &BlitSource,
    state: TextureState,
    image: vk::Image,
) -> ([vk::ImageMemoryBarrier2<'static>; 2], [vk::ImageMemoryBarrier2<'static>; 2]) {
    let color_range = vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    };
    let (state_layout, state_stage, state_access) = conv::texture_state(state);
    // Blits run in the BLIT stage (sync2's COPY does not cover it); only BLIT here.
    let (src_layout, src_stage, src_access) =
        (vk::ImageLayout::TRANSFER_SRC_OPTIMAL, vk::PipelineStageFlags2::BLIT, vk::AccessFlags2::TRANSFER_READ);
    let texture_barrier = |from: conv::ImageAccess, to: conv::ImageAccess| conv::image_barrier(src.image, src.range, from, to);
    let to_src = texture_barrier((state_layout, state_stage, state_access), (src_layout, src_stage, src_access));
    let back = texture_barrier((src_layout, src_stage, src_access), (state_layout, state_stage, state_access));
    // The acquire semaphore is waited at BLIT; the transition chains after it.
    let image_to_dst = conv::image_barrier(
        image,
        color_range,
        (vk::ImageLayout::UNDEFINED, vk::PipelineStageFlags2::BLIT, vk::AccessFlags2::NONE),
        (vk::ImageLayout::TRANSFER_DST_OPTIMAL, vk::PipelineStageFlags2::BLIT, vk::AccessFlags2::TRANSFER_WRITE),
    );
    let image_to_present = conv::image_barrier(
        image,
        color_range,
        (vk::ImageLayout::TRANSFER_DST_OPTIMAL, vk::PipelineStageFlags2::BLIT, vk::AccessFlags2::TRANSFER_WRITE),
        (vk::ImageLayout::PRESENT_SRC_KHR, vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE),
    );
    // Also when `state` is TransferSrc: the barrier then only adds the BLIT stage.
    ([to_src, image_to_dst], [back, image_to_present])
}

fn vk_present_mode(mode: PresentMode) -> vk::PresentModeKHR {
    match mode {
        PresentMode::Fifo => vk::PresentModeKHR::FIFO,
        PresentMode::Mailbox => vk::PresentModeKHR::MAILBOX,
        PresentMode::Immediate => vk::PresentModeKHR::IMMEDIATE,
    }
}

/// `wanted` if `offered` has it, else FIFO (logged once per swapchain
/// creation): the Vulkan spec requires every surface to offer FIFO.
fn choose_present_mode(wanted: PresentMode, offered: &[vk::PresentModeKHR]) -> PresentMode {
    if offered.contains(&vk_present_mode(wanted)) {
        return wanted;
    }
    log::warn!("swapchain: the surface offers no {wanted} present mode (it offers {offered:?}); using fifo");
    PresentMode::Fifo
}

fn create_semaphore(device: &Device) -> Result<vk::Semaphore> {
    // SAFETY: valid device and a default (binary) create info.
    unsafe { device.raw.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }.map_err(vk_err("vkCreateSemaphore"))
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        if !self.destroyed {
            log::error!("a Swapchain was dropped without Swapchain::destroy(&device): its surface and swapchain leak (the validation layer will report them)");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_present_mode_falls_back_to_fifo() {
        let offered = [vk::PresentModeKHR::FIFO, vk::PresentModeKHR::IMMEDIATE];
        assert_eq!(choose_present_mode(PresentMode::Immediate, &offered), PresentMode::Immediate);
        assert_eq!(choose_present_mode(PresentMode::Mailbox, &offered), PresentMode::Fifo);
        assert_eq!(choose_present_mode(PresentMode::Fifo, &[vk::PresentModeKHR::FIFO]), PresentMode::Fifo);
    }
}
