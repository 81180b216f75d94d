//! Which transforms the store accepts, and in which space.
//!
//! Instances are stored relative to their component. A transform must be
//! finite and invertible: a NaN poisons bounds and culling for every
//! instance it is unioned with, and a zero scale leaves no sphere radius to
//! cull with and no inverse for world/component conversion. Both are typed
//! errors here, checked before anything changes.

use glam::Affine3A;
use renderer::TransformProblem;

use crate::error::{InstancingError, Result};

/// The space a transform argument is given in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TransformSpace {
    /// Relative to the component (what the store keeps).
    Component,
    /// World space; the component's current component→world transform
    /// converts it.
    World(Affine3A),
}

/// The workspace's one rule for a usable transform ([`renderer::check_affine`]:
/// finite, not flat, a finite inverse), as instancing's typed errors.
pub fn validate_transform(t: &Affine3A) -> Result<()> {
    renderer::check_affine(t).map_err(|p| match p {
        TransformProblem::NonFinite => InstancingError::NonFiniteTransform,
        TransformProblem::Degenerate => InstancingError::DegenerateTransform,
    })
}

pub(crate) fn to_component(t: &Affine3A, space: &TransformSpace) -> Result<Affine3A> {
    match space {
        TransformSpace::Component => {
            validate_transform(t)?;
            Ok(*t)
        }
        TransformSpace::World(c2w) => {
            validate_transform(c2w)?;
            validate_transform(t)?;
            let local = c2w.inverse() * *t;
            validate_transform(&local)?;
            Ok(local)
        }
    }
}
