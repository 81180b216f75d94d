//! The Vulkan instance, the validation layer and the debug messenger.
//!
//! Validation is on in debug builds (and so in tests) whenever the Khronos
//! layer is installed; `PROXIMA_VALIDATION=0` turns it off, `=1` turns it on in
//! release builds. A layer that is wanted but not installed is an `info`
//! line, and a warning only under `=1` (a demand the machine cannot meet). The messenger counts errors and warnings into
//! [`ValidationCounters`], shared by `Arc` so a test can assert zero even
//! after the device is gone. Synchronization validation is enabled with it
//! when the layer offers `VK_EXT_validation_features`
//! (`PROXIMA_SYNC_VALIDATION=0` turns it off).
//!
//! A missing loader library or driver is the most common first-run failure,
//! so both get their own error naming the packages to install
//! ([`RhiError::LoaderNotFound`], [`RhiError::DriverNotFound`]).
//! `PROXIMA_VULKAN_LOADER` names another loader library to load (and lets
//! a test point it at nothing).

use crate::error::{vk_err, Result, RhiError};
use ash::{ext, vk};
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";
/// Names the Vulkan loader library to load instead of the system's
/// `libvulkan.so.1` (a loader built from source, an SDK's).
pub(crate) const LOADER_VAR: &str = "PROXIMA_VULKAN_LOADER";

/// Where the loader looked for drivers, for [`RhiError::DriverNotFound`]:
/// the driver-list variables when set (a common cause), else the default.
fn driver_search_detail() -> String {
    let set: Vec<String> = ["VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| format!("{k}={v}")))
        .collect();
    if set.is_empty() {
        "vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER; no ICD manifest in the default search paths".into()
    } else {
        format!("vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER with {}", set.join(", "))
    }
}
const KEPT_MESSAGES: usize = 64;

/// Whether to load the Khronos validation layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Validation {
    /// On in debug builds, off in release; `PROXIMA_VALIDATION=0/1` overrides.
    #[default]
    Auto,
    /// On if the layer is installed (`PROXIMA_VALIDATION=0` still turns it off).
    Enabled,
    /// Never loaded.
    Disabled,
}

impl Validation {
    /// Whether the environment demands the layer (`PROXIMA_VALIDATION=1`).
    fn demanded() -> bool {
        std::env::var("PROXIMA_VALIDATION").as_deref() == Ok("1")
    }

    pub(crate) fn wanted(self) -> bool {
        match std::env::var("PROXIMA_VALIDATION").ok().as_deref() {
            Some("0") => return false,
            Some("1") => return self != Validation::Disabled,
            _ => {}
        }
        match self {
            Validation::Auto => cfg!(debug_assertions),
            Validation::Enabled => true,
            Validation::Disabled => false,
        }
    }
}

/// Error and warning counts of the validation layer, plus the last messages.
#[derive(Debug, Default)]
pub struct ValidationCounters {
    enabled: std::sync::atomic::AtomicBool,
    sync_validation: std::sync::atomic::AtomicBool,
    errors: AtomicU64,
    warnings: AtomicU64,
    messages: Mutex<Vec<String>>,
}

impl ValidationCounters {
    /// Whether the validation layer is loaded.
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }
    /// Whether synchronization validation is on.
    pub fn sync_validation(&self) -> bool {
        self.sync_validation.load(Ordering::Relaxed)
    }
    /// Errors reported so far.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
    /// Warnings reported so far.
    pub fn warnings(&self) -> u64 {
        self.warnings.load(Ordering::Relaxed)
    }
    /// The last (up to 64) error and warning messages, oldest first.
    pub fn messages(&self) -> Vec<String> {
        self.messages.lock().map(|m| m.clone()).unwrap_or_default()
    }

    fn record(&self, severity: vk::DebugUtilsMessageSeverityFlagsEXT, text: String) {
        if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
            self.errors.fetch_add(1, Ordering::Relaxed);
            log::error!("[vulkan] {text}");
        } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
            self.warnings.fetch_add(1, Ordering::Relaxed);
            log::warn!("[vulkan] {text}");
        } else {
            log::debug!("[vulkan] {text}");
            return;
        }
        if let Ok(mut m) = self.messages.lock() {
            if m.len() == KEPT_MESSAGES {
                m.remove(0);
            }
            m.push(text);
        }
    }
}

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user.is_null() {
        return vk::FALSE;
    }
    // SAFETY: `user` is the `Arc<ValidationCounters>` pointer registered in
    // `Instance::new`; the Arc is kept alive in `Instance` until after the
    // messenger and the instance are destroyed.
    let counters = unsafe { &*(user as *const ValidationCounters) };
    // SAFETY: the layer passes a valid callback-data struct for the duration of the call.
    let data = unsafe { &*data };
    let text = if data.p_message.is_null() {
        String::from("(no message)")
    } else {
        // SAFETY: `p_message` is a NUL-terminated string valid during the call.
        unsafe { CStr::from_ptr(data.p_message) }.to_string_lossy().into_owned()
    };
    counters.record(severity, text);
    vk::FALSE
}

/// The loaded Vulkan library, the instance and, when on, the messenger.
pub(crate) struct Instance {
    /// Keeps the loader library loaded while any Vulkan object lives.
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub entry: ash::Entry,
    pub raw: ash::Instance,
    debug: Option<(ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    pub counters: Arc<ValidationCounters>,
}

impl Instance {
    /// `extra_extensions`: more instance extensions to enable (the surface
    /// ones of the `window` feature); a missing one is an error.
    pub fn new(app_name: &CStr, validation: Validation, extra_extensions: &[&CStr]) -> Result<Self> {
        let entry = load_entry()?;
        let selection = select_layers_and_extensions(&entry, validation, extra_extensions)?;
        let counters = Arc::new(ValidationCounters::default());
        counters.enabled.store(selection.validate, Ordering::Relaxed);
        counters.sync_validation.store(selection.sync_validation, Ordering::Relaxed);
        let (raw, debug) = create_instance(&entry, app_name, &selection, &counters)?;
        Ok(Self { entry, raw, debug, counters })
    }
}

/// Loads the Vulkan loader (the one [`LOADER_VAR`] names, else the system's)
/// and checks that it offers Vulkan 1.3.
fn load_entry() -> Result<ash::Entry> {
    let entry = match std::env::var_os(LOADER_VAR).filter(|p| !p.is_empty()) {
        // SAFETY: loading the Vulkan loader the user named; we keep
        // `entry` alive for as long as any object created through it.
        Some(path) => unsafe { ash::Entry::load_from(&path) }
            .map_err(|e| RhiError::LoaderNotFound { reason: format!("{LOADER_VAR}={}: {e}", path.to_string_lossy()) })?,
        // SAFETY: loading the system Vulkan loader; we keep `entry` alive
        // for as long as any object created through it.
        None => unsafe { ash::Entry::load() }.map_err(|e| RhiError::LoaderNotFound { reason: e.to_string() })?,
    };

    // SAFETY: plain queries on a valid entry.
    let version =
        unsafe { entry.try_enumerate_instance_version() }.map_err(vk_err("vkEnumerateInstanceVersion"))?.unwrap_or(vk::API_VERSION_1_0);
    if version < vk::API_VERSION_1_3 {
        return Err(RhiError::Unsupported(format!(
            "the Vulkan loader offers {}.{}; Proxima needs 1.3",
            vk::api_version_major(version),
            vk::api_version_minor(version)
        )));
    }
    Ok(entry)
}

/// The layers and instance extensions to enable, and whether validation and
/// synchronization validation are on.
struct InstanceSelection {
    validate: bool,
    sync_validation: bool,
    layer_names: Vec<*const std::ffi::c_char>,
    extension_names: Vec<*const std::ffi::c_char>,
}

/// Chooses the layers and instance extensions: validation (and its
/// synchronization checks) where wanted and installed, and every one of
/// `extra_extensions` (a missing one is an error).
fn select_layers_and_extensions(entry: &ash::Entry, validation: Validation, extra_extensions: &[&CStr]) -> Result<InstanceSelection> {
    // SAFETY: plain query on a valid entry.
    let layers = unsafe { entry.enumerate_instance_layer_properties() }.map_err(vk_err("vkEnumerateInstanceLayerProperties"))?;
    let layer_present = layers.iter().any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER));
    let wants_validation = validation.wanted();
    if wants_validation && !layer_present {
        // Only a demand (`PROXIMA_VALIDATION=1`) that cannot be met is a
        // warning: `Enabled` and a debug build's `Auto` mean "where
        // installed", so a sample run on a machine without the layer is
        // as quiet as one with it (the stats file says validation is off).
        let message = "validation requested but VK_LAYER_KHRONOS_validation is not installed (package `vulkan-validationlayers`)";
        if Validation::demanded() {
            log::warn!("{message}");
        } else {
            log::info!("{message}; running without it");
        }
    }
    let validate = wants_validation && layer_present;
    let sync_validation = validate
        && std::env::var("PROXIMA_SYNC_VALIDATION").as_deref() != Ok("0")
        // SAFETY: plain query on a valid entry with a valid layer name.
        && unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
            .map(|exts| {
                exts.iter().any(|e| {
                    e.extension_name_as_c_str() == Ok(ext::validation_features::NAME)
                })
            })
            .unwrap_or(false);

    let mut layer_names = Vec::new();
    let mut extension_names = Vec::new();
    if validate {
        layer_names.push(VALIDATION_LAYER.as_ptr());
        extension_names.push(ext::debug_utils::NAME.as_ptr());
    }
    if sync_validation {
        extension_names.push(ext::validation_features::NAME.as_ptr());
    }
    if !extra_extensions.is_empty() {
        // SAFETY: plain query on a valid entry.
        let available =
            unsafe { entry.enumerate_instance_extension_properties(None) }.map_err(vk_err("vkEnumerateInstanceExtensionProperties"))?;
        for &wanted in extra_extensions {
            if !available.iter().any(|e| e.extension_name_as_c_str() == Ok(wanted)) {
                return Err(RhiError::Unsupported(format!(
                    "the Vulkan loader does not offer the instance extension {}",
                    wanted.to_string_lossy()
                )));
            }
            if !extension_names.contains(&wanted.as_ptr()) {
                extension_names.push(wanted.as_ptr());
            }
        }
    }
    Ok(InstanceSelection { validate, sync_validation, layer_names, extension_names })
}

/// Creates the instance with the selected layers and extensions and, when
/// validating, the messenger that reports into `counters`.
fn create_instance(
    entry: &ash::Entry,
    app_name: &CStr,
    selection: &InstanceSelection,
    counters: &Arc<ValidationCounters>,
) -> Result<(ash::Instance, Option<(ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>)> {
    let InstanceSelection { validate, sync_validation, layer_names, extension_names } = selection;
    let (validate, sync_validation) = (*validate, *sync_validation);
    let app_info = vk::ApplicationInfo::default().application_name(app_name).engine_name(c"Proxima").api_version(vk::API_VERSION_1_3);
    let mut messenger_info = vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING)
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(debug_callback))
        .user_data(Arc::as_ptr(counters) as *mut c_void);
    let enables = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
    let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enables);
    let mut create_info = vk::InstanceCreateInfo::default()
        .application_info(&app_info)
        .enabled_layer_names(layer_names)
        .enabled_extension_names(extension_names);
    if validate {
        create_info = create_info.push_next(&mut messenger_info);
    }
    if sync_validation {
        create_info = create_info.push_next(&mut features);
    }
    // SAFETY: every pointer in `create_info` refers to locals or to the names in
    // `selection` (static, or the caller's `extra_extensions`), which outlive the call.
    let raw = unsafe { entry.create_instance(&create_info, None) }.map_err(|e| match e {
        // The loader's answer when it finds no driver (ICD) to load.
        vk::Result::ERROR_INCOMPATIBLE_DRIVER => RhiError::DriverNotFound { detail: driver_search_detail() },
        e => vk_err("vkCreateInstance")(e),
    })?;

    let debug = if validate {
        let loader = ext::debug_utils::Instance::new(entry, &raw);
        // SAFETY: `messenger_info`'s user data is the counters' Arc, kept alive in
        // the `Instance` the caller builds from the result.
        match unsafe { loader.create_debug_utils_messenger(&messenger_info, None) } {
            Ok(m) => Some((loader, m)),
            Err(e) => {
                // SAFETY: nothing else was created from `raw` yet.
                unsafe { raw.destroy_instance(None) };
                return Err(vk_err("vkCreateDebugUtilsMessengerEXT")(e));
            }
        }
    } else {
        None
    };
    Ok((raw, debug))
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some((loader, messenger)) = self.debug.take() {
            // SAFETY: the messenger was created from this instance and is destroyed once.
            unsafe { loader.destroy_debug_utils_messenger(messenger, None) };
        }
        // SAFETY: every child object (the device included) is destroyed before
        // `Instance` is dropped: `DeviceShared` drops its fields in that order.
        unsafe { self.raw.destroy_instance(None) };
    }
}
