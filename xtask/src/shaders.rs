//! `cargo xtask shaders`: every `.wgsl` file in the repository is parsed and
//! validated by naga and compiled to SPIR-V 1.3; when `spirv-val` is installed
//! the SPIR-V is validated for Vulkan 1.3 too. Errors name file and line.
//!
//! Files ending in `.inc.wgsl` are fragments meant to be concatenated (vertex
//! factories, material functions); they are skipped here and validated as
//! part of the shaders that include them, by the tests that build those.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                collect(&path, out);
            }
        } else if name.ends_with(".wgsl") && !name.ends_with(".inc.wgsl") {
            out.push(path);
        }
    }
}

pub fn check_all() -> Result<ExitCode, String> {
    let root = crate::workspace_root();
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let spirv_val = Command::new("spirv-val").arg("--version").output().is_ok();
    let mut failed = 0;
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        match check(file, &rel, spirv_val) {
            Ok(()) => println!("  ok  {rel}"),
            Err(e) => {
                failed += 1;
                eprintln!("FAIL  {e}");
            }
        }
    }
    println!(
        "shaders: {} checked, {failed} failed{}",
        files.len(),
        if spirv_val { " (naga + spirv-val)" } else { " (naga; spirv-val not installed)" }
    );
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn check(path: &Path, rel: &str, spirv_val: bool) -> Result<(), String> {
    let source = std::fs::read_to_string(path).map_err(|e| format!("{rel}: {e}"))?;
    let module = naga::front::wgsl::parse_str(&source).map_err(|e| e.emit_to_string_with_path(&source, rel))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::IMMEDIATES)
        .validate(&module)
        .map_err(|e| e.emit_to_string_with_path(&source, rel))?;
    let options = naga::back::spv::Options { lang_version: (1, 3), flags: naga::back::spv::WriterFlags::empty(), ..Default::default() };
    let words = naga::back::spv::write_vec(&module, &info, &options, None).map_err(|e| format!("{rel}: SPIR-V: {e}"))?;
    if spirv_val {
        let tmp = std::env::temp_dir().join(format!("proxima-{}-{}.spv", std::process::id(), rel.replace(['/', '\\'], "_")));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(&tmp, bytes).map_err(|e| e.to_string())?;
        let out = Command::new("spirv-val").args(["--target-env", "vulkan1.3"]).arg(&tmp).output().map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&tmp);
        if !out.status.success() {
            return Err(format!("{rel}: spirv-val: {}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    Ok(())
}
