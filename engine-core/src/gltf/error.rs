//! The import's error: what is wrong and where, as a JSON pointer into the
//! file (`/meshes/3/primitives/0/attributes/NORMAL`; empty: the file itself).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum GltfError {
    /// The file (or a file it names) cannot be read.
    #[error("{path}: cannot read {file}: {error}")]
    Io { path: String, file: PathBuf, error: std::io::Error },
    /// Not JSON, or JSON that is not a glTF document.
    #[error("malformed glTF JSON: {0}")]
    MalformedJson(String),
    /// A `.glb` whose header or chunks are inconsistent (e.g. truncated).
    #[error("malformed .glb: {0}")]
    MalformedGlb(String),
    /// A value the glTF schema forbids (an index out of bounds, a missing
    /// required property, an invalid enum value, a node with two parents…).
    #[error("{path}: {problem}")]
    Invalid { path: String, problem: String },
    /// `extensionsRequired` names an extension the importer does not support.
    #[error("{path}: the file requires the unsupported extension {extension}")]
    UnsupportedExtension { path: String, extension: String },
    /// A buffer that is missing, unreadable or shorter than its `byteLength`.
    #[error("{path}: buffer: {problem}")]
    Buffer { path: String, problem: String },
    /// An accessor or buffer view reaching past its buffer or view, or of a
    /// type its use does not allow.
    #[error("{path}: accessor: {problem}")]
    Accessor { path: String, problem: String },
    /// An index past the primitive's vertex count.
    #[error("{path}: index {index} is past the vertex count {vertex_count}")]
    IndexOutOfRange { path: String, index: u32, vertex_count: usize },
    /// A triangle list whose index (or vertex) count is not a multiple of 3.
    #[error("{path}: {count} is not a multiple of 3 (a triangle list)")]
    IndexCount { path: String, count: usize },
    /// A NaN or infinite position.
    #[error("{path}: vertex {vertex} has a non-finite position")]
    NonFinitePosition { path: String, vertex: usize },
    /// An image that is missing or unreadable.
    #[error("{path}: image: {problem}")]
    MissingImage { path: String, problem: String },
    /// An image that does not decode (or is not in a format the importer
    /// reads) where an extension the file requires needs it (otherwise it
    /// is skipped).
    #[error("{path}: image does not decode: {problem}")]
    UndecodableImage { path: String, problem: String },
    /// A size past [`super::GltfLimits`].
    #[error("{path}: {what} {value} is past the limit {limit}")]
    LimitExceeded { path: String, what: &'static str, value: u64, limit: u64 },
    /// A mesh the engine refuses (see [`crate::StaticMesh::new`]).
    #[error("{path}: {problem}")]
    Mesh { path: String, problem: String },
    /// Spawning: the world has no render thread to create textures and materials with.
    #[error("the world has no render thread")]
    NoRenderThread,
    /// Spawning: a scene index the file does not have.
    #[error("/scenes/{0}: no such scene")]
    UnknownScene(usize),
    /// Spawning: the renderer or the world refused something (nothing was added).
    #[error("{path}: {error}")]
    Spawn { path: String, error: crate::EngineError },
}

impl GltfError {
    /// The JSON pointer of what is wrong (empty: the whole file), where there is one.
    pub fn path(&self) -> Option<&str> {
        match self {
            GltfError::Io { path, .. }
            | GltfError::Invalid { path, .. }
            | GltfError::UnsupportedExtension { path, .. }
            | GltfError::Buffer { path, .. }
            | GltfError::Accessor { path, .. }
            | GltfError::IndexOutOfRange { path, .. }
            | GltfError::IndexCount { path, .. }
            | GltfError::NonFinitePosition { path, .. }
            | GltfError::MissingImage { path, .. }
            | GltfError::UndecodableImage { path, .. }
            | GltfError::LimitExceeded { path, .. }
            | GltfError::Mesh { path, .. }
            | GltfError::Spawn { path, .. } => Some(path),
            GltfError::MalformedJson(_) | GltfError::MalformedGlb(_) | GltfError::NoRenderThread | GltfError::UnknownScene(_) => None,
        }
    }

    /// [`GltfError::LimitExceeded`] naming `path` when `value` of `what` is past `limit`.
    pub(crate) fn check_limit(path: &str, what: &'static str, value: u64, limit: u64) -> Result<(), GltfError> {
        if value > limit {
            return Err(GltfError::LimitExceeded { path: path.into(), what, value, limit });
        }
        Ok(())
    }
}

/// gltf-json's validation path (`meshes[3].primitives[0].attributes["NORMAL"]`,
/// maybe with ` = "value"`) as a JSON pointer (`/meshes/3/primitives/0/attributes/NORMAL`).
pub(crate) fn json_pointer(path: &str) -> String {
    let path = path.split(" = ").next().unwrap_or(path);
    let mut out = String::new();
    let mut chars = path.chars().peekable();
    let mut segment = String::new();
    let flush = |segment: &mut String, out: &mut String| {
        if !segment.is_empty() {
            out.push('/');
            out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
            segment.clear();
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '.' => flush(&mut segment, &mut out),
            '[' => {
                flush(&mut segment, &mut out);
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    if c != '"' {
                        segment.push(c);
                    }
                }
                flush(&mut segment, &mut out);
            }
            _ => segment.push(c),
        }
    }
    flush(&mut segment, &mut out);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn validation_paths_become_json_pointers() {
        assert_eq!(super::json_pointer("meshes[3].primitives[0].attributes[\"NORMAL\"]"), "/meshes/3/primitives/0/attributes/NORMAL");
        assert_eq!(super::json_pointer("extensionsRequired[0] = \"KHR_x\""), "/extensionsRequired/0");
        assert_eq!(super::json_pointer("nodes[1].mesh"), "/nodes/1/mesh");
        assert_eq!(super::json_pointer(""), "");
    }
}
