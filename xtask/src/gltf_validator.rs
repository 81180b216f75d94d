//! `cargo xtask validate-gltf [--install] [FILES...]`: the Khronos glTF
//! Validator (npm `gltf-validator`, [`VALIDATOR_VERSION`]) over glTF models —
//! FILES, or every `.gltf` / `.glb` under `../shared/gltf-samples/`.
//!
//! Each model's JSON report (the validator's own, `uri` the model's absolute
//! path) goes to `target/gltf-validator/<stem>.json`, and one line per model
//! says its errors and warnings. `engine-core/tests/gltf_validator.rs` reads
//! the reports: a model the validator calls valid (no errors) must import.
//!
//! The script `xtask/gltf-validator/validate.js` calls `validateBytes`, with
//! an `externalResourceFunction` reading a `.gltf`'s `.bin` and images beside
//! it. The validator is installed into `target/reference-tools/` with the
//! reference renderer's helpers ([`crate::reference::npm_install_tools`]),
//! only with `--install` (and always in `cargo xtask ci`).
//!
//! A model with validator errors is not a failure of this command; the
//! validator failing to run (not installed, node failing, no report) is.

use crate::reference;
use crate::Result;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

pub use crate::reference::{VALIDATOR_PACKAGE, VALIDATOR_VERSION};

/// The Node script that runs the validator on one model.
fn script() -> PathBuf {
    crate::workspace_root().join("xtask").join("gltf-validator").join("validate.js")
}

/// `target/gltf-validator/`: one report per model.
pub fn reports_dir() -> PathBuf {
    reference::target_dir().join("gltf-validator")
}

fn module_dir() -> PathBuf {
    reference::tools_dir().join("node_modules").join(VALIDATOR_PACKAGE)
}

/// Installs node/npm (apt-get, when missing) and the pinned validator.
pub fn install() -> Result<()> {
    reference::apt_install_with_npm(Vec::new(), "the glTF validator")?;
    reference::npm_install_tools()?;
    check_installed()
}

fn check_installed() -> Result<()> {
    match reference::installed_npm_version(VALIDATOR_PACKAGE) {
        Some(v) if v == VALIDATOR_VERSION => {}
        found => {
            return Err(format!(
                "{VALIDATOR_PACKAGE} {VALIDATOR_VERSION} is not installed in {} (found {}); run `cargo xtask validate-gltf --install`",
                reference::tools_dir().display(),
                found.as_deref().unwrap_or("none")
            ))
        }
    }
    if reference::which(&["node", "nodejs"]).is_none() {
        return Err("node is not on PATH; run `cargo xtask validate-gltf --install` (Debian `nodejs`)".into());
    }
    Ok(())
}

/// Every `.gltf` / `.glb` under `dir`, recursively, sorted.
pub fn models_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                stack.push(path);
            } else if reference::is_model(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// What one report says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub errors: u64,
    pub warnings: u64,
    pub infos: u64,
    pub hints: u64,
}

impl Summary {
    /// The counts in a report's `issues`.
    pub fn from_report(report: &Value) -> std::result::Result<Summary, String> {
        let issues = &report["issues"];
        let n = |k: &str| issues[k].as_u64().ok_or_else(|| format!("the report has no issues.{k}"));
        Ok(Summary { errors: n("numErrors")?, warnings: n("numWarnings")?, infos: n("numInfos")?, hints: n("numHints")? })
    }
}

/// `cargo xtask validate-gltf`: see the module docs.
pub fn validate_gltf(files: &[PathBuf], install_tools: bool) -> Result<ExitCode> {
    if install_tools {
        install()?;
    }
    check_installed()?;
    let models = if files.is_empty() {
        let shared = reference::shared_models_dir();
        let models = models_under(&shared);
        if models.is_empty() {
            eprintln!("xtask: validate-gltf: no .gltf or .glb under {}; nothing validated", shared.display());
        }
        models
    } else {
        files.to_vec()
    };
    let out = reports_dir();
    std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    for model in &models {
        let (model, s) = validate_one(model, &out)?;
        println!("gltf-validator: {}: {} errors, {} warnings, {} infos, {} hints", model.display(), s.errors, s.warnings, s.infos, s.hints);
    }
    Ok(ExitCode::SUCCESS)
}

/// Validates `model`, writes `out/<stem>.json`, returns its canonical path
/// and its counts.
fn validate_one(model: &Path, out: &Path) -> Result<(PathBuf, Summary)> {
    if !model.is_file() || !reference::is_model(model) {
        return Err(format!("{}: not a .gltf or .glb file", model.display()));
    }
    let model = model.canonicalize().map_err(|e| format!("{}: {e}", model.display()))?;
    let output = Command::new("node")
        .arg(script())
        .arg(module_dir())
        .arg(&model)
        .output()
        .map_err(|e| format!("running node for the glTF validator: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the glTF validator failed to run on {} ({}): {}",
            model.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let report: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("the glTF validator's output for {} is not JSON: {e}", model.display()))?;
    let summary = Summary::from_report(&report).map_err(|e| format!("{}: {e}", model.display()))?;
    let path = out.join(format!("{}.json", reference::model_stem(&model)));
    std::fs::write(&path, &output.stdout).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok((model, summary))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_report_summary_reads_the_issue_counts() {
        let report = json!({"issues": {"numErrors": 1, "numWarnings": 2, "numInfos": 3, "numHints": 4, "messages": []}});
        assert_eq!(Summary::from_report(&report), Ok(Summary { errors: 1, warnings: 2, infos: 3, hints: 4 }));
        assert!(Summary::from_report(&json!({})).is_err());
    }

    #[test]
    fn the_pinned_validator_is_in_the_npm_tools() {
        assert!(reference::NPM_TOOLS.contains(&(VALIDATOR_PACKAGE, VALIDATOR_VERSION)));
    }
}
