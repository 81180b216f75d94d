//! The layering check `cargo xtask lint` runs: no import cycle among a
//! crate's top-level modules.
//!
//! A crate whose modules form a cycle cannot be read bottom-up, and every
//! feature added to one module of the cycle can reach every other. The
//! check reads each `.rs` file under the crate's `src/`, takes every path
//! that leaves its top-level module — `crate::name…` (in `use` lines, in
//! groups `crate::{a::X, b}`, inline in code, `$crate::` in macros) and
//! `super::` chains that climb to the crate root — and reports each strongly
//! connected group of modules with the file and line of every edge in it.
//! Comments, string literals and unit tests (from a file's first
//! `#[cfg(test)]` on) are not the module's own dependencies and are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose top-level modules must form no cycle.
pub(crate) const ACYCLIC_CRATES: &[&str] = &["renderer", "engine-core", "particles", "procmesh", "xtask"];

/// Where one module first uses another: file and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Use {
    pub file: PathBuf,
    pub line: usize,
}

/// The module graph of one crate: for each top-level module, the modules it
/// uses and where it first does.
#[derive(Debug, Default)]
pub(crate) struct ModuleGraph {
    pub edges: BTreeMap<String, BTreeMap<String, Use>>,
}

/// One cycle: its modules (sorted) and the edges between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cycle {
    pub modules: Vec<String>,
    pub edges: Vec<(String, String, Use)>,
}

impl std::fmt::Display for Cycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "import cycle among {}:", self.modules.join(", "))?;
        for (from, to, at) in &self.edges {
            writeln!(f, "  {from} -> {to}  ({}:{})", at.file.display(), at.line)?;
        }
        Ok(())
    }
}

/// Reads the module graph of the crate whose sources are in `src`.
pub(crate) fn module_graph(src: &Path) -> Result<ModuleGraph, String> {
    if !src.join("lib.rs").is_file() && !src.join("main.rs").is_file() {
        return Err(format!("{} holds no lib.rs or main.rs", src.display()));
    }
    let mut files = Vec::new();
    collect_rs(src, &mut files)?;
    files.sort();
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(src, f).map(|(m, _)| m)).collect();
    let mut graph = ModuleGraph::default();
    for file in &files {
        let Some((module, depth)) = top_module(src, file) else { continue };
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        for (target, line) in crate_paths(&code_of(&text), depth) {
            if target != module && modules.contains(&target) {
                let at = Use { file: file.strip_prefix(src).unwrap_or(file).to_path_buf(), line };
                graph.edges.entry(module.clone()).or_default().entry(target).or_insert(at);
            }
        }
    }
    Ok(graph)
}

pub(crate) fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            collect_rs(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The top-level module `file` belongs to, and the depth of the module the
/// file is (1 for `a.rs` and `a/mod.rs`, 2 for `a/b.rs`); `None` for the
/// crate root.
fn top_module(src: &Path, file: &Path) -> Option<(String, usize)> {
    let rel = file.strip_prefix(src).ok()?;
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let first = parts.first()?.trim_end_matches(".rs").to_string();
    if parts.len() == 1 && (first == "lib" || first == "main") {
        return None;
    }
    let depth = if parts.last().is_some_and(|l| l == "mod.rs") { parts.len() - 1 } else { parts.len() };
    Some((first, depth))
}

/// `text` up to its first `#[cfg(test)]`, with comments and the contents of
/// string and character literals blanked (newlines kept, so lines count).
pub(crate) fn code_of(text: &str) -> String {
    let text = text.find("#[cfg(test)]").map_or(text, |cut| &text[..cut]);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !chars.get(i.wrapping_sub(1)).is_some_and(|p| is_ident(*p)) {
            // A raw string r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() && !(chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#'))) {
                out.push(blank(chars[j]));
                j += 1;
            }
            i = j + 1 + hashes;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if let Some(&ch) = chars.get(i) {
                    out.push(blank(ch));
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal (not a lifetime).
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first segment of every path in `code` that starts at the crate root
/// (`crate::…`, or `super::` chains of at least `depth` links in a module
/// at `depth`), with its 1-based line; a group `{a::X, b}` gives each.
fn crate_paths(code: &str, depth: usize) -> Vec<(String, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\n' {
            line += 1;
            i += 1;
            continue;
        }
        let boundary = i == 0 || !is_ident(chars[i - 1]);
        if boundary && starts_with(&chars, i, "crate::") {
            i += "crate::".len();
            segments(&chars, &mut i, line, &mut found);
            continue;
        }
        if boundary && starts_with(&chars, i, "super::") {
            let mut links = 0;
            while starts_with(&chars, i, "super::") {
                links += 1;
                i += "super::".len();
            }
            if links >= depth {
                segments(&chars, &mut i, line, &mut found);
            }
            continue;
        }
        i += 1;
    }
    found
}

fn starts_with(chars: &[char], at: usize, s: &str) -> bool {
    s.chars().enumerate().all(|(k, c)| chars.get(at + k) == Some(&c))
}

/// The first segment at `*i` (an identifier, or each member of a `{…}`
/// group), pushed with `line`; `*i` ends past what was read.
fn segments(chars: &[char], i: &mut usize, line: usize, out: &mut Vec<(String, usize)>) {
    skip_space(chars, i);
    if chars.get(*i) == Some(&'{') {
        *i += 1;
        let mut nesting = 0;
        let mut at_item_start = true;
        while let Some(&c) = chars.get(*i) {
            match c {
                '{' => nesting += 1,
                '}' if nesting == 0 => {
                    *i += 1;
                    return;
                }
                '}' => nesting -= 1,
                ',' if nesting == 0 => at_item_start = true,
                c if at_item_start && is_ident(c) => {
                    let name = ident(chars, i);
                    if name != "self" {
                        out.push((name, line));
                    }
                    at_item_start = false;
                    continue;
                }
                _ => {}
            }
            *i += 1;
        }
    } else {
        let name = ident(chars, i);
        if !name.is_empty() {
            out.push((name, line));
        }
    }
}

fn skip_space(chars: &[char], i: &mut usize) {
    while chars.get(*i).is_some_and(|c| c.is_whitespace()) {
        *i += 1;
    }
}

fn ident(chars: &[char], i: &mut usize) -> String {
    let start = *i;
    while chars.get(*i).is_some_and(|c| is_ident(*c)) {
        *i += 1;
    }
    chars[start..*i].iter().collect()
}

/// The graph's cycles (strongly connected groups of two or more modules),
/// in a stable order.
pub(crate) fn cycles(graph: &ModuleGraph) -> Vec<Cycle> {
    let nodes: BTreeSet<&String> = graph.edges.keys().chain(graph.edges.values().flat_map(|t| t.keys())).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of: BTreeMap<&String, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let successors: Vec<Vec<usize>> =
        nodes.iter().map(|n| graph.edges.get(*n).map_or_else(Vec::new, |t| t.keys().map(|m| index_of[m]).collect())).collect();
    let groups = strongly_connected(&successors);
    let mut cycles: Vec<Cycle> = groups
        .into_iter()
        .filter(|g| g.len() > 1)
        .map(|g| {
            let mut modules: Vec<String> = g.iter().map(|&i| nodes[i].clone()).collect();
            modules.sort();
            let members: BTreeSet<&String> = modules.iter().collect();
            let edges = modules
                .iter()
                .flat_map(|from| {
                    graph
                        .edges
                        .get(from)
                        .into_iter()
                        .flatten()
                        .filter(|(to, _)| members.contains(to))
                        .map(move |(to, at)| (from.clone(), to.clone(), at.clone()))
                })
                .collect();
            Cycle { modules, edges }
        })
        .collect();
    cycles.sort_by(|a, b| a.modules.cmp(&b.modules));
    cycles
}

/// Tarjan's strongly connected components, iteratively (no recursion limit).
fn strongly_connected(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = successors.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut groups, mut counter) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut next)) = work.last_mut() {
            if *next == 0 && index[v] == usize::MAX {
                index[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = successors[v].get(*next) {
                *next += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut group = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    group.push(w);
                    if w == v {
                        break;
                    }
                }
                groups.push(group);
            }
        }
    }
    groups
}

/// The check `lint` runs: each crate of [`ACYCLIC_CRATES`] under `root`.
/// Prints every cycle; returns whether there was none.
pub(crate) fn check(root: &Path) -> Result<bool, String> {
    let mut clean = true;
    for krate in ACYCLIC_CRATES {
        let graph = module_graph(&root.join(krate).join("src"))?;
        for cycle in cycles(&graph) {
            clean = false;
            eprint!("lint: {krate}: {cycle}");
        }
    }
    Ok(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name).join("src")
    }

    #[test]
    fn a_cycle_in_the_fixture_is_found_with_where_each_edge_is() {
        let graph = module_graph(&fixture("module-cycle")).unwrap();
        let found = cycles(&graph);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].modules, ["alpha", "beta"]);
        let edges: Vec<(&str, &str, String)> =
            found[0].edges.iter().map(|(a, b, at)| (a.as_str(), b.as_str(), format!("{}:{}", at.file.display(), at.line))).collect();
        assert_eq!(edges, [("alpha", "beta", "alpha.rs:3".to_string()), ("beta", "alpha", "beta/inner.rs:4".to_string())]);
        // gamma uses alpha (through a group) and nothing uses gamma outside
        // comments, strings and tests: it is in the graph but in no cycle.
        assert!(graph.edges["gamma"].contains_key("alpha") && graph.edges["gamma"].contains_key("beta"));
        assert!(graph.edges.values().all(|t| !t.contains_key("gamma")), "{:?}", graph.edges);
    }

    #[test]
    fn the_lint_fails_on_the_fixture_and_passes_on_the_tree() {
        assert!(!cycles(&module_graph(&fixture("module-cycle")).unwrap()).is_empty());
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        assert_eq!(check(root), Ok(true), "a crate's modules form a cycle (see the lines above)");
    }

    #[test]
    fn a_missing_crate_is_an_error_not_a_pass() {
        assert!(module_graph(&fixture("no-such-crate")).is_err());
    }

    #[test]
    fn comments_strings_and_literals_are_not_code() {
        let code = code_of("let a = \"crate::x\"; // crate::y\nlet c = '\"'; /* crate::z */ let r = r#\"crate::w\"#; crate::v::f();\n#[cfg(test)]\nuse crate::t;");
        assert_eq!(crate_paths(&code, 1), [("v".to_string(), 2)]);
        assert_eq!(crate_paths("use super::super::{a::B, c, self};", 2), [("a".to_string(), 1), ("c".to_string(), 1)]);
        assert!(crate_paths("use super::a;", 2).is_empty(), "one link up from depth 2 stays in the module");
    }
}
