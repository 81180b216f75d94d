//! Mobility (UE's EComponentMobility): what may change about a light, or
//! a primitive, once it is in the scene — a promise the renderer keeps
//! and builds on.
//!
//! For lights (the scene refuses what a light's mobility forbids with
//! [`crate::RendererError::InvalidLight`]; engine-core's world refuses
//! moving such a light component):
//! - **Movable**: anything may change. Its shadow-atlas tile follows its
//!   size on screen; moving it re-renders its shadow.
//! - **Stationary**: never moves; its colour, intensity, range and cone may
//!   change. Its atlas tile keeps its size while it stays in view, so the
//!   camera never re-renders its shadow: a caster that changes does, or a
//!   new range or cone.
//! - **Static**: never changes at all once added. Its shadow is rendered
//!   again only when a shadow caster in its reach changes.
//!
//! Changing a light's mobility is always allowed (make it movable, then
//! move it). engine-core keeps a mobility for every component; primitives'
//! is recorded, not enforced yet.

/// UE's EComponentMobility (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mobility {
    /// Never changes once in the scene.
    #[default]
    Static,
    /// Never moves; a light's colour, intensity and shape may change.
    Stationary,
    /// May change and move at any time.
    Movable,
}
