//! The function-length check `cargo xtask lint` runs: no function of a
//! library crate's sources is longer than [`LIMIT`] lines (from its `fn`
//! line to its closing brace). A function past it does several things; its
//! parts get names. Unit tests (from a file's first `#[cfg(test)]` on),
//! comments and string literals are not counted.

use std::path::Path;

/// The most lines a library function may span.
pub(crate) const LIMIT: usize = 100;

/// The library crates whose `src/` is held to the limit.
pub(crate) const LIBRARY_CRATES: &[&str] =
    &["rhi-vulkan", "renderer", "engine-core", "procmesh", "instancing", "particles", "test-support"];

/// Each function in `code` (comments and strings blanked) longer than
/// `limit` lines: its name, first line (1-based) and length.
pub(crate) fn long_functions(code: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        let mut depth = 0i64;
        let mut started = false;
        for (j, l) in lines.iter().enumerate().skip(i) {
            if !started && l.contains(';') && !l.contains('{') {
                break; // a declaration without a body
            }
            for c in l.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        started = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if started && depth <= 0 {
                let length = j - i + 1;
                if length > limit {
                    found.push((name.to_string(), i + 1, length));
                }
                break;
            }
        }
    }
    found
}

/// The function a line begins, if it does: `[pub[(…)]] [const] [async]
/// [unsafe] [extern "…"] fn name`.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if let Some(r) = rest.strip_prefix("pub") {
        rest = r.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    for qualifier in ["const ", "async ", "unsafe "] {
        rest = rest.strip_prefix(qualifier).map_or(rest, str::trim_start);
    }
    if let Some(r) = rest.strip_prefix("extern ") {
        rest = r.trim_start().trim_start_matches("\"C\"").trim_start_matches("  ").trim_start();
    }
    let name = rest.strip_prefix("fn ")?.trim_start();
    let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(name.len());
    (end > 0).then(|| &name[..end])
}

/// Prints every function over the limit in the library crates under
/// `root`; returns whether there was none.
pub(crate) fn check(root: &Path) -> Result<bool, String> {
    let mut clean = true;
    for krate in LIBRARY_CRATES {
        let src = root.join(krate).join("src");
        let mut files = Vec::new();
        crate::layering::collect_rs(&src, &mut files)?;
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            for (name, line, length) in long_functions(&crate::layering::code_of(&text), LIMIT) {
                clean = false;
                let rel = file.strip_prefix(root).unwrap_or(&file);
                eprintln!("lint: {}:{line}: fn {name} is {length} lines (at most {LIMIT}); give its parts names", rel.display());
            }
        }
    }
    Ok(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_function_is_found_and_declarations_and_strings_are_not() {
        let body: String = (0..5).map(|i| format!("    let x{i} = \"{{\";\n")).collect();
        let code = crate::layering::code_of(&format!(
            "trait T {{\n    fn declared(&self);\n}}\npub(crate) fn long() {{\n{body}}}\nfn short() {{}}\n#[cfg(test)]\nfn in_tests() {{\n{body}{body}}}\n"
        ));
        assert_eq!(long_functions(&code, 6), [("long".to_string(), 4, 7)]);
        assert!(long_functions(&code, 7).is_empty());
        assert_eq!(fn_name("    pub const unsafe fn f<T>()"), Some("f"));
        assert_eq!(fn_name("let fn_x = 1;"), None);
    }

    #[test]
    fn the_library_crates_hold_the_limit() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        assert_eq!(check(root), Ok(true), "a library function is over the limit (see the lines above)");
    }
}
