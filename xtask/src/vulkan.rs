//! Makes sure the Vulkan loader, a driver and the Khronos validation layer
//! are installed, installing Debian's packages with apt-get when they are not.

use std::path::Path;
use std::process::Command;

const PACKAGES: &[&str] = &["libvulkan1", "mesa-vulkan-drivers", "vulkan-validationlayers", "spirv-tools"];

fn loader_present() -> bool {
    ["/usr/lib/x86_64-linux-gnu/libvulkan.so.1", "/usr/lib/aarch64-linux-gnu/libvulkan.so.1", "/usr/lib/libvulkan.so.1", "/usr/lib64/libvulkan.so.1"]
        .iter()
        .any(|p| Path::new(p).exists())
        || Command::new("ldconfig")
            .arg("-p")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("libvulkan.so.1"))
            .unwrap_or(false)
}

fn has_json(dirs: &[&str], pred: impl Fn(&str) -> bool) -> bool {
    dirs.iter().any(|d| {
        std::fs::read_dir(d)
            .map(|entries| entries.flatten().any(|e| pred(&e.file_name().to_string_lossy())))
            .unwrap_or(false)
    })
}

fn driver_present() -> bool {
    has_json(&["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"], |n| n.ends_with(".json"))
}

fn layer_present() -> bool {
    has_json(&["/usr/share/vulkan/explicit_layer.d", "/etc/vulkan/explicit_layer.d"], |n| {
        n.contains("khronos_validation")
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Installs what is missing, or explains what to install.
pub fn ensure_installed() -> Result<(), String> {
    let missing = !loader_present() || !driver_present() || !layer_present();
    if !missing {
        return Ok(());
    }
    let list = PACKAGES.join(" ");
    let can_apt = Path::new("/usr/bin/apt-get").exists() && is_root();
    if !can_apt {
        return Err(format!(
            "the Vulkan loader, a driver or the validation layer is missing; install them with:\n  sudo apt-get install {list}"
        ));
    }
    eprintln!("xtask: installing the Vulkan loader, lavapipe and the validation layer ({list})");
    let update = Command::new("apt-get").args(["update", "-qq"]).status().map_err(|e| e.to_string())?;
    if !update.success() {
        return Err("apt-get update failed".into());
    }
    let status = Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(PACKAGES)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() || !loader_present() || !driver_present() || !layer_present() {
        return Err(format!("installing {list} failed"));
    }
    Ok(())
}
