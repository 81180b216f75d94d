//! The samples install a logger: the engine crates' `log` lines reach stderr,
//! filtered by `RUST_LOG`, and a run without it stays quiet (warnings only).

use std::process::Command;

/// rhi-vulkan's `info` line when it has made its device.
const DEVICE_LINE: &str = "Vulkan device:";

/// Runs `bin` headless for one small frame with `RUST_LOG` set to `rust_log`
/// (unset for `None`); returns its stderr.
fn stderr_of(bin: &str, rust_log: Option<&str>) -> String {
    stderr_with(bin, rust_log, &[])
}

/// [`stderr_of`] with `env` set too.
fn stderr_with(bin: &str, rust_log: Option<&str>, env: &[(&str, &str)]) -> String {
    let dir = std::env::temp_dir().join(format!("proxima-logging-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = std::path::Path::new(bin).file_name().unwrap().to_string_lossy().into_owned();
    let mut cmd = Command::new(bin);
    cmd.args(["--headless", "--frames", "1", "--width", "64", "--height", "64", "--out"]).arg(dir.join(format!("{name}.png")));
    cmd.env_remove("RUST_LOG");
    if let Some(filter) = rust_log {
        cmd.env("RUST_LOG", filter);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{name} (RUST_LOG={rust_log:?}): {stderr}");
    stderr
}

/// `hello` (rhi-vulkan alone) and an engine sample (through `runner::engine`).
#[test]
fn rust_log_reaches_the_crates_log_lines_and_the_default_is_quiet() {
    for bin in [env!("CARGO_BIN_EXE_hello"), env!("CARGO_BIN_EXE_procmesh")] {
        let info = stderr_of(bin, Some("info"));
        assert!(info.contains(DEVICE_LINE), "{bin} with RUST_LOG=info does not log the device:\n{info}");
        let quiet = stderr_of(bin, None);
        assert!(!quiet.contains(DEVICE_LINE), "{bin} without RUST_LOG logs below warn:\n{quiet}");
        let filtered = stderr_of(bin, Some("rhi_vulkan=warn,info"));
        assert!(!filtered.contains(DEVICE_LINE), "{bin}: RUST_LOG's per-crate filter is ignored:\n{filtered}");
    }
}

/// A default run on a machine without the validation layer prints no
/// warning (a sample wants the layer only where it is installed: the stats
/// file says validation is off); `PROXIMA_VALIDATION=1`, a demand for it,
/// still warns. The layer is hidden by pointing the loader's layer search
/// at an empty folder.
#[test]
fn a_missing_validation_layer_warns_only_when_demanded() {
    let empty = std::env::temp_dir().join(format!("proxima-no-layers-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let no_layers = [("VK_LAYER_PATH", empty.to_str().unwrap()), ("VK_ADD_LAYER_PATH", ""), ("PROXIMA_VALIDATION", "")];
    for bin in [env!("CARGO_BIN_EXE_hello"), env!("CARGO_BIN_EXE_procmesh")] {
        let quiet = stderr_with(bin, None, &no_layers);
        assert!(!quiet.contains("WARN"), "{bin} without the layer warns:\n{quiet}");
        let demanded = [no_layers[0], no_layers[1], ("PROXIMA_VALIDATION", "1")];
        let warned = stderr_with(bin, None, &demanded);
        assert!(warned.contains("WARN") && warned.contains("not installed"), "{bin} with PROXIMA_VALIDATION=1 and no layer:\n{warned}");
    }
}
