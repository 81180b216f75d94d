//! Conformance with the Khronos glTF Validator: every model it calls valid
//! (no errors; warnings, infos and hints allowed) imports. The reports come
//! from `cargo xtask validate-gltf` (`cargo xtask ci` runs it) in
//! `target/gltf-validator/<stem>.json`; the model is the report's `uri`, or
//! `../shared/gltf-samples/<stem>/<stem>.gltf|.glb`. CPU only: import needs
//! no device. Prints a skip line without reports or shared models.

#![cfg(feature = "gltf")]

use engine_core::gltf;
use std::path::{Path, PathBuf};

fn shared_models_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/gltf-samples")
}

/// The model a report is about: its `uri` when that file exists, else the
/// shared model of the report's stem.
fn model_of(report_path: &Path, report: &serde_json::Value) -> Option<PathBuf> {
    if let Some(uri) = report["uri"].as_str().map(PathBuf::from).filter(|p| p.is_file()) {
        return Some(uri);
    }
    let stem = report_path.file_stem()?.to_str()?;
    ["gltf", "glb"].iter().map(|ext| shared_models_dir().join(stem).join(format!("{stem}.{ext}"))).find(|p| p.is_file())
}

#[test]
fn every_model_the_gltf_validator_calls_valid_imports() {
    let shared = shared_models_dir();
    if !shared.is_dir() {
        println!("skipped: {} is absent (no shared glTF models)", shared.display());
        return;
    }
    let dir = test_support::target_dir().join("gltf-validator");
    let mut reports: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect())
        .unwrap_or_default();
    reports.sort();
    if reports.is_empty() {
        println!("skipped: no glTF validator reports in {} (run `cargo xtask validate-gltf --install`)", dir.display());
        return;
    }
    let mut failures = Vec::new();
    let mut imported = 0;
    for report_path in &reports {
        let text = std::fs::read_to_string(report_path).unwrap_or_else(|e| panic!("reading {}: {e}", report_path.display()));
        let report: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", report_path.display()));
        let errors = report["issues"]["numErrors"].as_u64().unwrap_or_else(|| panic!("{}: no issues.numErrors", report_path.display()));
        let Some(model) = model_of(report_path, &report) else {
            println!("skipped: {}: its model is absent", report_path.display());
            continue;
        };
        if errors > 0 {
            println!("skipped: {}: the validator reports {errors} errors (not a valid file)", model.display());
            continue;
        }
        match gltf::import(&model) {
            Ok(import) => {
                imported += 1;
                println!(
                    "{}: valid ({} warnings) and imported; skipped by the importer: {:?}",
                    model.display(),
                    report["issues"]["numWarnings"],
                    import.skipped
                );
            }
            Err(e) => failures.push(format!("{}: the validator calls it valid, the import refused it: {e}", model.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    println!("{imported} valid models imported");
}
