//! The RHI's error type and the named conversions from `vk::Result`.

use ash::vk;

/// Where in a WGSL source a shader error was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShaderError {
    /// The file (or label) the source came from.
    pub file: String,
    /// 1-based line, 0 when naga gave no location.
    pub line: u32,
    /// 1-based column in bytes, 0 when naga gave no location.
    pub column: u32,
    /// naga's message, with its rendered snippet.
    pub message: String,
}

impl std::fmt::Display for ShaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
    }
}

/// Everything the RHI can fail with. Bad descriptions are errors, not panics.
#[derive(Debug, thiserror::Error)]
pub enum RhiError {
    /// The Vulkan loader (`libvulkan.so.1`, or `PROXIMA_VULKAN_LOADER`) could not be loaded.
    #[error("the Vulkan loader could not be loaded ({reason}); install `libvulkan1` and a driver such as `mesa-vulkan-drivers` (lavapipe), or run `cargo xtask test`, which installs them")]
    LoaderNotFound {
        /// Why loading failed (the loader's error).
        reason: String,
    },
    /// The loader found no Vulkan driver (ICD) at all.
    #[error("the Vulkan loader found no driver ({detail}); install `mesa-vulkan-drivers` (lavapipe, a CPU driver) or your GPU's Vulkan driver, or run `cargo xtask test`, which installs it")]
    DriverNotFound {
        /// What the loader said.
        detail: String,
    },
    /// No physical device offers Vulkan 1.3 with dynamic rendering and synchronization2.
    #[error("no Vulkan 1.3 device with dynamic rendering and synchronization2{filter} (found: {found:?}); install `mesa-vulkan-drivers` for the lavapipe CPU driver")]
    NoSuitableDevice {
        /// The names of the devices that were found.
        found: Vec<String>,
        /// ` matching PROXIMA_DEVICE="..."` when a device filter was given,
        /// else empty.
        filter: String,
    },
    /// Device memory ran out (`VK_ERROR_OUT_OF_DEVICE_MEMORY`, or an
    /// allocation larger than any heap that could hold it).
    #[error("out of device memory")]
    OutOfDeviceMemory,
    /// Host memory ran out (`VK_ERROR_OUT_OF_HOST_MEMORY`).
    #[error("out of host memory")]
    OutOfHostMemory,
    /// The device was lost (`VK_ERROR_DEVICE_LOST`, or a wait timed out);
    /// the device stays lost ([`crate::Device::is_lost`]).
    #[error("the Vulkan device was lost")]
    DeviceLost,
    /// The device lacks a feature, format or usage the call needs.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// WGSL that naga rejected, with where and why.
    #[error("shader error at {0}")]
    Shader(Box<ShaderError>),
    /// A description or argument the RHI refuses (a bad size, usage, range,
    /// format, binding…); nothing was created or recorded.
    #[error("invalid description: {0}")]
    InvalidDesc(String),
    /// A command recorded where the command list's state does not allow it
    /// (a draw outside a pass, no pipeline bound, a pass left open…).
    #[error("invalid command order: {0}")]
    InvalidState(String),
    /// A handle that names no live object (destroyed, or from another device).
    #[error("invalid handle: {0}")]
    InvalidHandle(String),
    /// gpu-allocator failed for a reason other than running out of memory.
    #[error("memory allocation failed: {0}")]
    Allocation(String),
    /// A Vulkan call failed with a code the RHI has no own variant for.
    #[error("{context}: {result}")]
    Vulkan {
        /// The Vulkan function that failed.
        context: &'static str,
        /// The code it returned.
        result: vk::Result,
    },
}

/// The RHI's result type ([`RhiError`] unless said otherwise).
pub type Result<T, E = RhiError> = std::result::Result<T, E>;

/// Maps a `vk::Result` from the call named by `context` to an [`RhiError`],
/// turning the codes callers act on into their own variants.
pub(crate) fn vk_err(context: &'static str) -> impl Fn(vk::Result) -> RhiError {
    move |result| match result {
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => RhiError::OutOfDeviceMemory,
        vk::Result::ERROR_OUT_OF_HOST_MEMORY => RhiError::OutOfHostMemory,
        vk::Result::ERROR_DEVICE_LOST => RhiError::DeviceLost,
        vk::Result::ERROR_FORMAT_NOT_SUPPORTED | vk::Result::ERROR_FEATURE_NOT_PRESENT => {
            RhiError::Unsupported(format!("{context}: {result}"))
        }
        result => RhiError::Vulkan { context, result },
    }
}

impl From<gpu_allocator::AllocationError> for RhiError {
    fn from(e: gpu_allocator::AllocationError) -> Self {
        match e {
            gpu_allocator::AllocationError::OutOfMemory => RhiError::OutOfDeviceMemory,
            other => RhiError::Allocation(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every submit, wait and present path maps its `vk::Result` through
    /// `vk_err`: device lost and out-of-memory come out as their own variants.
    #[test]
    fn device_lost_and_out_of_memory_become_their_own_variants() {
        assert!(matches!(vk_err("vkQueueSubmit2")(vk::Result::ERROR_DEVICE_LOST), RhiError::DeviceLost));
        assert!(matches!(vk_err("vkWaitSemaphores")(vk::Result::ERROR_DEVICE_LOST), RhiError::DeviceLost));
        assert!(matches!(vk_err("vkAllocateMemory")(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY), RhiError::OutOfDeviceMemory));
        assert!(matches!(vk_err("vkCreateBuffer")(vk::Result::ERROR_OUT_OF_HOST_MEMORY), RhiError::OutOfHostMemory));
        assert!(matches!(vk_err("vkCreateBuffer")(vk::Result::ERROR_UNKNOWN), RhiError::Vulkan { context: "vkCreateBuffer", .. }));
        assert!(matches!(gpu_allocator::AllocationError::OutOfMemory.into(), RhiError::OutOfDeviceMemory));
    }

    #[test]
    fn missing_loader_and_driver_errors_name_the_packages() {
        let loader = RhiError::LoaderNotFound { reason: "libvulkan.so.1: cannot open".into() }.to_string();
        assert!(loader.contains("libvulkan1") && loader.contains("mesa-vulkan-drivers"), "{loader}");
        let driver = RhiError::DriverNotFound { detail: "VK_ICD_FILENAMES=/x".into() }.to_string();
        assert!(driver.contains("mesa-vulkan-drivers") && driver.contains("VK_ICD_FILENAMES=/x"), "{driver}");
    }
}
