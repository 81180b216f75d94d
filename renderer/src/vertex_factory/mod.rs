//! Vertex factories: the plug-in point for new kinds of geometry (UE's
//! FVertexFactoryType). A factory declares its vertex streams and provides
//! the WGSL `VertexFactoryInput` struct and `vf_fetch` function that the pass
//! shaders call, so a feature crate adds geometry without touching a pass.
//!
//! Factories are `'static` singletons (`&'static dyn VertexFactoryType`),
//! named in pipeline keys by [`VertexFactoryType::name`].
//!
//! # What a factory's WGSL defines
//!
//! * `struct VertexFactoryInput` and
//!   `fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex` (see
//!   `shaders/scene.inc.wgsl`), setting `FactoryVertex.instance_id` (0 for
//!   factories without instances); the passes carry it to
//!   `MaterialInput.instance_id`. `vf_fetch` starts from `factory_vertex`
//!   (or `mesh_factory_vertex`, which places a mesh vertex in the world),
//!   both in `scene.inc.wgsl`, so what a factory does not set has one default.
//! * `fn vf_custom_data(in: MaterialInput, index: u32) -> f32`: custom float
//!   `index` of the primitive or instance, 0 past the ones it has. Materials
//!   call it through `custom_data(in, index)`. The local factory returns the
//!   primitive's custom vec4 (`index` < 4), the sprite factory its custom
//!   vec4 (both through `custom_vec4_data`), the instanced factory any of the
//!   instance's floats.
//!
//! # The factory's shader bindings
//!
//! A factory may declare resources in bind group
//! [`VERTEX_FACTORY_BIND_GROUP`] (3; groups 0–2 are the view, the shadow
//! map and the material's). The proxy makes a persistent bind group for them
//! (`Device::create_bind_group_with_layout`, every binding visible to the
//! vertex and fragment stages, as reflection derives a pipeline's layout)
//! and hands it in [`crate::MeshBatch::vertex_factory_bindings`]; the draw
//! command carries it and submit binds it when it changes (UE: the vertex
//! factory's part of FMeshDrawShaderBindings).

mod local;

pub use local::{
    put_position_and_basis, stream_offsets, LocalPositionOnlyVertexFactory, LocalVertex, LocalVertexFactory,
    LOCAL_POSITION_ONLY_VERTEX_FACTORY, LOCAL_VERTEX_FACTORY,
};

use rhi_vulkan::VertexBufferLayout;

/// Most streams a factory may declare (the primitive-id stream comes on top).
pub const MAX_VERTEX_STREAMS: usize = 4;

/// The bind group a factory's own resources live in (see the module docs).
pub const VERTEX_FACTORY_BIND_GROUP: u32 = 3;

/// How a kind of geometry reaches the vertex shader (UE's
/// FVertexFactoryType): its WGSL, vertex streams and where it finds the
/// primitive id.
pub trait VertexFactoryType: Send + Sync + 'static {
    /// Unique name, e.g. `"local"`.
    fn name(&self) -> &'static str;
    /// WGSL declaring `struct VertexFactoryInput`,
    /// `fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex` and
    /// `fn vf_custom_data(in: MaterialInput, index: u32) -> f32` (module docs).
    fn wgsl(&self) -> &'static str;
    /// The vertex streams, in binding order (at most [`MAX_VERTEX_STREAMS`]).
    fn streams(&self) -> Vec<VertexBufferLayout>;
    /// `Some(location)` when the factory reads the primitive id from the
    /// renderer's per-instance id stream (draws of this factory can merge);
    /// `None` when it reads it from the draw's push constants.
    fn primitive_id_location(&self) -> Option<u32>;

    /// The factory's position-only variant (UE's position-only vertex
    /// stream), if it has one: the same geometry read from this factory's
    /// stream 0 alone (its only stream, plus the id stream), which passes
    /// that want nothing but depth ([`crate::mesh_pass::passes::PassDesc::position_only`])
    /// use for opaque batches — they bind one stream and fetch 12 bytes a
    /// vertex instead of every attribute. It must place vertices exactly as
    /// this factory does. Default: none (the full factory is used).
    fn position_only(&self) -> Option<&'static dyn VertexFactoryType> {
        None
    }

    /// Whether the factory's `FactoryVertex.fade` is a **dithered** fade
    /// (UE's dithered LOD / distance fade): opaque and masked pixels are
    /// drawn only where [`dither_threshold`] is below the fade, in every
    /// pass (depth-only passes get a fragment stage for it), instead of the
    /// fade multiplying opacity (a negative fade is a copy in a dithered
    /// LOD transition, [`dithered_lod_fade`]). Default `false`: such factories keep their
    /// depth-only pipelines without a fragment stage.
    fn dithered_fade(&self) -> bool {
        false
    }
}

/// The 4×4 ordered (Bayer) dither threshold of pixel `(x, y)`:
/// `(index + 0.5) / 16`, each of the 16 indices once per 4×4 block. A
/// factory with [`VertexFactoryType::dithered_fade`] draws a pixel when its
/// fade is above the threshold (WGSL `dithered_fade_keeps` in
/// `shaders/scene.inc.wgsl`, the same function): fade 1 covers every pixel,
/// fade 0 none, and the covered pixels only grow with the fade.
pub fn dither_threshold(x: u32, y: u32) -> f32 {
    let (x, y) = (x & 3, y & 3);
    let a = x ^ y;
    let index = ((a & 1) << 3) | ((y & 1) << 2) | (a & 2) | (y >> 1);
    (index as f32 + 0.5) / 16.0
}

/// Whether a dithered factory draws pixel `(x, y)` of an instance whose
/// fade is `fade` (WGSL `dithered_fade_keeps`, the same function): a fade
/// of 0 or more keeps the pixels whose [`dither_threshold`] is below it; a
/// negative one is a copy in a dithered LOD transition
/// ([`dithered_lod_fade`]).
pub fn dithered_fade_keeps(fade: f32, x: u32, y: u32) -> bool {
    let t = dither_threshold(x, y);
    if fade >= 0.0 {
        return fade > t;
    }
    let c = dithered_lod_code(fade);
    let index = (t * 16.0) as u32;
    let (hi, split, finer) = (c % 17, (c / 17) % 17, (c / 289) % 2 == 1);
    index < hi && ((index < split) != finer)
}

/// The fade of one of an instance's two copies in a dithered LOD
/// transition (UE's dithered LOD transition; WGSL `dithered_lod_fade` in
/// `shaders/scene.inc.wgsl`, the same encoding): the coarser copy
/// (`finer == false`) keeps the pixels whose [`dither_threshold`] is below
/// `coarse_share`, the finer copy the rest, each only where the distance
/// fade `fade` keeps the pixel — so every pixel `fade` keeps is drawn by
/// exactly one copy. `primary` marks the copy at the plainly selected LOD,
/// the one translucent materials draw ([`fade_opacity`]). Negative, so
/// [`dithered_fade_keeps`] tells it from a plain fade.
pub fn dithered_lod_fade(fade: f32, coarse_share: f32, finer: bool, primary: bool) -> f32 {
    let f = fade.clamp(0.0, 1.0);
    let hi = (f * 16.0 - 0.5).ceil().clamp(0.0, 16.0);
    let split = (coarse_share * 16.0 - 0.5).ceil().clamp(0.0, 16.0);
    let code = hi + 17.0 * split + if finer { 289.0 } else { 0.0 } + if primary { 578.0 } else { 0.0 };
    -(1.0 + code + 0.5 * f)
}

fn dithered_lod_code(fade: f32) -> u32 {
    (-fade - 1.0 + 0.25).floor().max(0.0) as u32
}

/// What multiplies a translucent material's opacity (WGSL `fade_opacity`):
/// a plain fade itself; for a copy in a dithered LOD transition its
/// distance fade if it is the primary copy, else 0.
pub fn fade_opacity(fade: f32) -> f32 {
    if fade >= 0.0 {
        return fade;
    }
    let c = dithered_lod_code(fade);
    if c >= 578 {
        ((-fade - 1.0 - c as f32) * 2.0).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

impl std::fmt::Debug for dyn VertexFactoryType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VertexFactoryType({})", self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lod_transition_copies_cover_exactly_the_pixels_the_fade_keeps() {
        let fades = [0.0, 0.03125, 0.2, 0.5, 0.77, 0.96875, 1.0];
        let shares = [0.0, 0.03125, 0.1, 0.5, 0.51, 0.9, 1.0];
        for &fade in &fades {
            for &c in &shares {
                let mut coarse_pixels = 0;
                for (x, y) in (0..16).map(|i| (i % 4, i / 4)) {
                    let both = [true, false].map(|finer| dithered_fade_keeps(dithered_lod_fade(fade, c, finer, !finer), x, y));
                    let kept = dithered_fade_keeps(fade, x, y);
                    assert_eq!(both[0] as u32 + both[1] as u32, kept as u32, "fade {fade} share {c} pixel ({x}, {y})");
                    coarse_pixels += u32::from(both[1]);
                    // Without a distance fade, the coarser copy keeps the share.
                    if fade == 1.0 {
                        assert_eq!(both[1], dither_threshold(x, y) < c);
                    }
                }
                if fade == 1.0 {
                    assert_eq!(coarse_pixels, (c * 16.0 - 0.5).ceil().clamp(0.0, 16.0) as u32);
                }
            }
        }
        // Translucent: only the primary copy, with its distance fade.
        assert!((fade_opacity(dithered_lod_fade(0.3, 0.5, true, true)) - 0.3).abs() < 1e-3);
        assert_eq!(fade_opacity(dithered_lod_fade(0.3, 0.5, false, false)), 0.0);
        assert_eq!(fade_opacity(0.25), 0.25);
        assert!((fade_opacity(dithered_lod_fade(1.0, 0.0, false, true)) - 1.0).abs() < 1e-3);
    }

    #[test]
    fn the_dither_thresholds_are_each_of_16_levels_once_per_block_and_repeat() {
        let mut seen: Vec<u32> = (0..16).map(|i| (dither_threshold(i % 4, i / 4) * 16.0 - 0.5) as u32).collect();
        assert_eq!(dither_threshold(0, 0), 0.5 / 16.0);
        assert_eq!(dither_threshold(5, 6), dither_threshold(1, 2));
        seen.sort_unstable();
        assert_eq!(seen, (0..16).collect::<Vec<_>>());
        // Neighbours differ a lot (an ordered dither, not a ramp).
        assert!((dither_threshold(0, 0) - dither_threshold(1, 0)).abs() >= 0.25);
    }
}
