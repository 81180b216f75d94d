//! The settings check `cargo xtask lint` runs: the renderer reads its
//! console variables in one place, the frame's settings snapshot
//! (`renderer/src/settings.rs`, `FrameSettings::from_cvars`), so no
//! stage depends on a variable its signature does not show and every value
//! is clamped once. A read is a path to a variable's name constant,
//! `cvars::NAME`, in code (comments, strings and unit tests do not count).

use std::path::{Path, PathBuf};

/// The renderer's sources, and the files that may read a console variable
/// there: where they are declared and the snapshot.
const CRATE_SRC: &str = "renderer/src";
const ALLOWED: &[&str] = &["cvars.rs", "settings.rs"];

/// Each `cvars::NAME` in `code` (comments and strings already blanked), with its line.
pub(crate) fn reads(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("cvars::") {
            let boundary = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
            let after = &rest[at + "cvars::".len()..];
            let name: String = after.chars().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_').collect();
            if boundary && name.len() > 1 {
                found.push((n + 1, name));
            }
            rest = after;
        }
    }
    found
}

/// Prints every read outside the snapshot under `root`; returns whether there was none.
pub(crate) fn check(root: &Path) -> Result<bool, String> {
    let src = root.join(CRATE_SRC);
    let mut files = Vec::new();
    crate::layering::collect_rs(&src, &mut files)?;
    files.sort();
    let mut clean = true;
    for file in files {
        let rel: PathBuf = file.strip_prefix(&src).unwrap_or(&file).to_path_buf();
        if ALLOWED.iter().any(|a| Path::new(a) == rel) {
            continue;
        }
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        for (line, name) in reads(&crate::layering::code_of(&text)) {
            clean = false;
            eprintln!(
                "lint: {CRATE_SRC}/{}:{line}: reads cvars::{name}; read it in FrameSettings::from_cvars (settings.rs) and take the setting",
                rel.display()
            );
        }
    }
    Ok(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cvar_read_is_found_and_names_and_docs_are_not() {
        let code = crate::layering::code_of(
            "use crate::cvars::{self, ConsoleVariables};\n// cvars::WIREFRAME in a comment\nlet a = cvars.bool(cvars::SHADOW_ENABLE);\nlet s = \"cvars::X\";\nmy_cvars::FOO;\n#[cfg(test)]\nc.set(cvars::EXPOSURE, \"1\");",
        );
        assert_eq!(reads(&code), [(3, "SHADOW_ENABLE".to_string())]);
    }

    #[test]
    fn the_renderer_reads_cvars_only_in_its_settings_snapshot() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        assert_eq!(check(root), Ok(true), "a stage reads a console variable (see the lines above)");
    }
}
