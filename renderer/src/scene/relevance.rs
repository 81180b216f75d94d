//! View relevance (UE's FPrimitiveViewRelevance and ComputeRelevance): how
//! a primitive takes part in a view — drawn, casting a shadow, through the
//! cached or the dynamic path, with opaque, masked or translucent materials
//! — and so which passes it enters.
//!
//! UE asks every visible primitive's proxy for its relevance in every view
//! every frame. Proxima gives the same answer for less: what a proxy's
//! relevance depends on is known, so the scene keeps each primitive's
//! relevance as flags and refreshes them when an input changes —
//!
//! - the proxy's own answer (draw, shadow, static, dynamic) when it is
//!   added and after each dynamic-data update it takes
//!   ([`PrimitiveSceneProxy::update_dynamic_data`]: a particle system
//!   whose emitters changed blend mode);
//! - the material fields from the materials the primitive draws with: its
//!   cached batches' materials whenever its commands are cached (so a
//!   material switched to translucent moves the primitive from the opaque
//!   passes to translucency the next frame), and each frame the materials
//!   of the batches a dynamic primitive emits that frame;
//! - a proxy whose relevance depends on the view itself
//!   ([`PrimitiveSceneProxy::view_dependent_relevance`]: drawn in some
//!   views only) is asked again per main view every frame, during culling.
//!
//! Each view ORs the relevance of what it sees; a pass whose
//! [`PassDesc::relevant`](crate::mesh_pass::passes::PassDesc::relevant) rejects that
//! (and that got no dynamic commands) is not set up for the view at all —
//! UE's `bHasTranslucentViewMeshElements` and friends.
//!
//! [`PrimitiveSceneProxy::update_dynamic_data`]: super::PrimitiveSceneProxy::update_dynamic_data
//! [`PrimitiveSceneProxy::view_dependent_relevance`]: super::PrimitiveSceneProxy::view_dependent_relevance

use super::proxy::ViewRelevance;
use super::scene::flags;
use crate::material::BlendMode;

/// The flags that hold a primitive's relevance.
pub(crate) const RELEVANCE_FLAGS: u32 =
    flags::DRAW | flags::SHADOW | flags::STATIC | flags::DYNAMIC | flags::OPAQUE | flags::MASKED | flags::TRANSLUCENT;

/// The material part of [`RELEVANCE_FLAGS`].
pub(crate) const MATERIAL_FLAGS: u32 = flags::OPAQUE | flags::MASKED | flags::TRANSLUCENT;

/// The scene flags of a proxy's relevance.
pub(crate) fn relevance_flags(r: &ViewRelevance) -> u32 {
    [
        (r.draw, flags::DRAW),
        (r.shadow, flags::SHADOW),
        (r.static_relevance, flags::STATIC),
        (r.dynamic_relevance, flags::DYNAMIC),
        (r.opaque, flags::OPAQUE),
        (r.masked, flags::MASKED),
        (r.translucent, flags::TRANSLUCENT),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .fold(0, |f, (_, bit)| f | bit)
}

/// The relevance flag of a material's blend mode.
pub(crate) fn blend_flags(blend: BlendMode) -> u32 {
    match blend {
        BlendMode::Opaque => flags::OPAQUE,
        BlendMode::Masked => flags::MASKED,
        BlendMode::Translucent | BlendMode::Additive => flags::TRANSLUCENT,
    }
}

impl ViewRelevance {
    /// The relevance the scene flags `f` hold.
    pub(crate) fn from_flags(f: u32) -> Self {
        ViewRelevance {
            draw: f & flags::DRAW != 0,
            shadow: f & flags::SHADOW != 0,
            static_relevance: f & flags::STATIC != 0,
            dynamic_relevance: f & flags::DYNAMIC != 0,
            opaque: f & flags::OPAQUE != 0,
            masked: f & flags::MASKED != 0,
            translucent: f & flags::TRANSLUCENT != 0,
            disables_depth_test: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relevance_round_trips_through_the_flags() {
        for bits in 0u32..128 {
            let r = ViewRelevance {
                draw: bits & 1 != 0,
                shadow: bits & 2 != 0,
                static_relevance: bits & 4 != 0,
                dynamic_relevance: bits & 8 != 0,
                opaque: bits & 16 != 0,
                masked: bits & 32 != 0,
                translucent: bits & 64 != 0,
                disables_depth_test: false,
            };
            let f = relevance_flags(&r);
            assert_eq!(f & !RELEVANCE_FLAGS, 0);
            assert_eq!(ViewRelevance::from_flags(f), r);
        }
        assert_eq!(blend_flags(BlendMode::Additive), flags::TRANSLUCENT);
        assert_eq!(MATERIAL_FLAGS & RELEVANCE_FLAGS, MATERIAL_FLAGS);
    }
}
