//! The sample list: `[[package.metadata.samples]]` in `samples/Cargo.toml`,
//! one entry (name, line) per binary of the samples crate, in the order
//! `cargo xtask run` lists them. It is the only list: xtask reads it with
//! `cargo metadata` (xtask depends on no engine crate, the samples crate
//! included) and refuses one that does not name exactly the crate's binaries.

use std::collections::BTreeSet;
use std::process::Command;

use crate::{cargo_bin, workspace_root, Result};

/// One sample: its binary's name and what it shows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub(crate) struct Sample {
    pub name: String,
    pub about: String,
}

/// The samples crate's list, read from the workspace's `cargo metadata`.
pub(crate) fn samples() -> Result<Vec<Sample>> {
    let out = Command::new(cargo_bin())
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(workspace_root())
        .output()
        .map_err(|e| format!("running cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let metadata = serde_json::from_slice(&out.stdout).map_err(|e| format!("reading cargo metadata's output: {e}"))?;
    from_metadata(&metadata)
}

/// The list in `metadata` (`cargo metadata`'s JSON): the samples package's
/// `metadata.samples`, checked against its binary targets.
fn from_metadata(metadata: &serde_json::Value) -> Result<Vec<Sample>> {
    let package = metadata["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"] == "samples"))
        .ok_or("cargo metadata lists no `samples` package")?;
    let list = package["metadata"]["samples"].clone();
    if list.is_null() {
        return Err("samples/Cargo.toml has no [[package.metadata.samples]] list".into());
    }
    let samples: Vec<Sample> =
        serde_json::from_value(list).map_err(|e| format!("samples/Cargo.toml's [[package.metadata.samples]]: {e}"))?;
    let bins: BTreeSet<&str> = package["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bin")))
        .filter_map(|t| t["name"].as_str())
        .collect();
    let mut listed = BTreeSet::new();
    for s in &samples {
        if !listed.insert(s.name.as_str()) {
            return Err(format!("samples/Cargo.toml lists the sample {:?} twice", s.name));
        }
        if s.about.trim().is_empty() {
            return Err(format!("samples/Cargo.toml: the sample {:?} has no `about` line", s.name));
        }
    }
    if let Some(missing) = bins.difference(&listed).next() {
        return Err(format!("the samples binary {missing:?} is not in samples/Cargo.toml's [[package.metadata.samples]]"));
    }
    if let Some(extra) = listed.difference(&bins).next() {
        return Err(format!("samples/Cargo.toml lists the sample {extra:?}, but the samples crate has no such binary"));
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn metadata(list: serde_json::Value, bins: &[&str]) -> serde_json::Value {
        let mut targets: Vec<_> = bins.iter().map(|b| json!({ "name": b, "kind": ["bin"] })).collect();
        targets.push(json!({ "name": "samples", "kind": ["lib"] }));
        json!({ "packages": [
            { "name": "xtask", "metadata": null, "targets": [{ "name": "xtask", "kind": ["bin"] }] },
            { "name": "samples", "metadata": { "samples": list }, "targets": targets },
        ] })
    }

    #[test]
    fn the_workspace_list_names_every_sample_binary_in_order() {
        let names: Vec<String> = samples().unwrap().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            ["hello", "many-cubes", "many-foxes", "lights", "procmesh", "instancing", "particles", "materials", "gltf", "showcase", "soak"]
        );
    }

    #[test]
    fn the_list_keeps_its_order_and_lines() {
        let list = json!([{ "name": "b", "about": "second" }, { "name": "a", "about": "first" }]);
        let samples = from_metadata(&metadata(list, &["a", "b"])).unwrap();
        assert_eq!(samples, [Sample { name: "b".into(), about: "second".into() }, Sample { name: "a".into(), about: "first".into() }]);
    }

    #[test]
    fn a_list_that_disagrees_with_the_binaries_is_an_error() {
        let one = |name: &str| json!({ "name": name, "about": "x" });
        for (list, bins, what) in [
            (json!([one("a")]), &["a", "b"][..], "\"b\" is not in"),
            (json!([one("a"), one("b")]), &["a"], "no such binary"),
            (json!([one("a"), one("a")]), &["a"], "twice"),
            (json!([{ "name": "a", "about": " " }]), &["a"], "no `about`"),
            (json!([{ "name": "a" }]), &["a"], "about"),
            (json!(null), &["a"], "no [[package.metadata.samples]]"),
        ] {
            let err = from_metadata(&metadata(list.clone(), bins)).expect_err(&list.to_string());
            assert!(err.contains(what), "{list}: {err}");
        }
        assert!(from_metadata(&json!({ "packages": [] })).unwrap_err().contains("no `samples` package"));
    }
}
