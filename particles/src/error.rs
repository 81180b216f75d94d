//! The crate's one error type.
//!
//! Every error a caller can cause by handing over bad data names *where* the
//! data is bad, as a field path that mirrors the JSON
//! (`emitters[1].modules[2].lifetime.uniform.min`). Artists edit these files
//! by hand; "invalid type: string, expected f32 at line 40" is not enough to
//! find the typo in a system of twenty emitters.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong in this crate.
#[derive(Debug, Error)]
pub enum ParticleError {
    /// The JSON text is not a valid particle system: a syntax error, a
    /// missing or unknown field, or a value of the wrong type. `path` is the
    /// field the parser was reading; `message` is serde_json's own message
    /// (which names missing and unknown fields) with its line and column.
    #[error("{path}: {message}")]
    Parse {
        /// Field path, for example `emitters[0].required.max_particles`.
        path: String,
        /// The parser's message.
        message: String,
        /// 1-based line of the error in the text (0 when unknown).
        line: usize,
        /// 1-based column of the error in the text (0 when unknown).
        column: usize,
    },

    /// A well-formed asset holds a value outside what the simulation accepts
    /// (a lifetime ≤ 0, zero max particles, curve keys out of order, ...).
    #[error("{path}: {message}")]
    Invalid {
        /// Field path, for example `emitters[1].modules[2].lifetime.uniform.min`.
        path: String,
        /// What is wrong with the value.
        message: String,
    },

    /// Reading or writing an asset file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },

    /// The asset text or file is larger than [`crate::MAX_ASSET_BYTES`];
    /// nothing past the cap was read or parsed.
    #[error("asset is too large: {bytes} bytes or more, at most {max} accepted")]
    TooLarge {
        /// The size found (for a file that kept going: the cap plus one).
        bytes: u64,
        /// The cap.
        max: u64,
    },

    /// Serialising an asset failed (only possible for non-finite numbers,
    /// which validation rejects).
    #[error("serialising particle system: {0}")]
    Serialize(#[source] serde_json::Error),

    /// A world transform with NaN or infinite entries.
    #[error("transform: must be finite")]
    NonFiniteTransform,

    /// A world transform the workspace's rule refuses
    /// (`renderer::check_affine`): a zero (or nearly zero) scale, or
    /// one so large that its inverse overflows.
    #[error("transform: degenerate (flat, or too large to invert)")]
    DegenerateTransform,

    /// Fixed bounds with NaN or infinite corners, or `min > max`.
    #[error("fixed bounds: must be finite with min ≤ max")]
    InvalidBounds,
}

impl ParticleError {
    /// Shorthand for [`ParticleError::Invalid`].
    pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        ParticleError::Invalid { path: path.into(), message: message.into() }
    }

    /// The field path this error names, if it names one.
    pub fn field_path(&self) -> Option<&str> {
        match self {
            ParticleError::Parse { path, .. } | ParticleError::Invalid { path, .. } => Some(path),
            _ => None,
        }
    }
}
