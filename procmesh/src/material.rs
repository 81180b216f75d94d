//! The material a section is drawn with.
//!
//! The renderer's material handle does not exist yet, so a section's
//! material is a [`MaterialRef`] placeholder: a plain number the game side
//! can store, compare and hand over. When the renderer lands this becomes
//! its material id; the per-section table in
//! [`ProcMeshData`](crate::ProcMeshData) and the rule that changing a
//! material recreates the proxy (as UE's `SetMaterial` marks the render
//! state dirty) stay as they are.

/// Placeholder for the renderer's material id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MaterialRef(pub u32);
