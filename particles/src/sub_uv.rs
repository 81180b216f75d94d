//! Sub-UV animation: which image of a sprite sheet a particle shows.
//!
//! Cascade's SubUV module and the required module's sub-image settings: a
//! texture holds `horizontal × vertical` images in a grid, numbered row by
//! row from the top-left, and each particle shows one of them (or two
//! cross-faded) by a *sub-image index*:
//!
//! ```text
//! index i(t) = sub_image_index(t)    the module's constant or curve, at the
//!                                    particle's relative time t
//!            = t × images            without the module: every image in
//!                                    turn, each for an equal share of life
//! shown:  linear        image ⌊i⌋                 (i clamped to [0, images - 1])
//!         linear_blend  image ⌊i⌋ and ⌊i⌋ + 1, weight i - ⌊i⌋ on the second
//! ```
//!
//! Like colour and size over life ([`crate::OverLife`]) the index is a
//! function of the relative time the particle already stores, so the tick
//! does nothing for it: the sprite conversion evaluates it into
//! [`crate::ParticleSpriteVertex::sub_image_index`] (a curve baked into a
//! [`CurveLut`], one table read), and the sprite vertex factory turns the
//! index into the two images' UVs (UV0 and UV1, the blend weight in the
//! material's custom data; see `shaders/sprite_vf.inc.wgsl`). With
//! `sub_uv_interpolation: none` (the default) the index is 0 and the UVs
//! cover the whole texture.
//!
//! A `uniform` `sub_image_index` is UE's random sub-UV: each particle draws
//! its own index from the range. What a particle stores is not the index
//! but a 32-bit seed, drawn from the emitter's random stream at spawn
//! ([`crate::ParticleStore::sub_image_seeds`]); the index is a hash of the
//! seed and the part of life the particle is in ([`RandomSubImage`]):
//!
//! ```text
//! part k = min(⌊t × (changes + 1)⌋, changes)       changes: the required
//!                                                  module's random_image_changes
//! r      = top 24 bits of mix64(seed · 2³² + k) / 2²⁴   in [0, 1)
//! index  = min + r × (max - min)                   then shown as above
//! ```
//!
//! So the image is the same every frame (the same seed and part give the
//! same hash), changes only where a new part begins, and costs the tick
//! nothing either. The same asset and seed draw the same images.

use std::sync::Arc;

use crate::asset::{RequiredModule, SubUvInterpolation, MAX_SUB_IMAGES};
use crate::distribution::{CurveLut, Distribution};

/// A sub-image index drawn per particle (a `uniform` `sub_image_index`);
/// see the module docs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomSubImage {
    /// The range's low end, ≥ 0.
    pub min: f32,
    /// The range's high end, ≥ `min`.
    pub max: f32,
    /// New draws over a particle's life
    /// ([`RequiredModule::random_image_changes`]).
    pub changes: u32,
}

impl RandomSubImage {
    /// The index (before clamping to the sheet) of the particle whose seed
    /// is `seed`, at relative time `t`: in `[min, max]`.
    #[inline]
    pub fn index(&self, seed: u32, t: f32) -> f32 {
        // `as u32` saturates: a negative or NaN time is part 0.
        let part = ((t * (self.changes as f32 + 1.0)) as u32).min(self.changes);
        let bits = renderer::mix64((u64::from(seed) << 32) | u64::from(part)) >> 40;
        let r = bits as f32 * (1.0 / (1u32 << 24) as f32);
        (self.min + r * (self.max - self.min)).min(self.max)
    }
}

/// An emitter's sub-UV settings in the form the sprite conversion reads;
/// see the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct SubUv {
    /// How the index becomes images.
    pub interpolation: SubUvInterpolation,
    /// Columns of the sheet, in `1..=MAX_SUB_IMAGES` ([`Self::grid`]).
    pub horizontal: u32,
    /// Rows of the sheet, in `1..=MAX_SUB_IMAGES` ([`Self::grid`]).
    pub vertical: u32,
    /// The `sub_image_index` module baked over relative time; `None` runs
    /// the index over every image across a particle's life (unless
    /// [`Self::random`] gives it).
    pub index: Option<Arc<CurveLut<f32>>>,
    /// A `uniform` `sub_image_index` module: each particle's index drawn
    /// from its seed (then [`Self::index`] is `None`).
    pub random: Option<RandomSubImage>,
}

impl SubUv {
    /// No sub-UV: the whole texture, index 0.
    pub const OFF: SubUv = SubUv { interpolation: SubUvInterpolation::None, horizontal: 1, vertical: 1, index: None, random: None };

    /// The settings of a validated emitter: its required module and its
    /// `sub_image_index` module, if any.
    pub fn compile(required: &RequiredModule, index: Option<&Distribution<f32>>) -> Self {
        if required.sub_uv_interpolation == SubUvInterpolation::None {
            return SubUv::OFF;
        }
        let random = match index {
            Some(Distribution::Uniform { min, max }) => {
                Some(RandomSubImage { min: *min, max: *max, changes: required.random_image_changes })
            }
            _ => None,
        };
        SubUv {
            interpolation: required.sub_uv_interpolation,
            horizontal: required.sub_images_horizontal,
            vertical: required.sub_images_vertical,
            index: index.filter(|_| random.is_none()).map(|d| Arc::new(CurveLut::bake(d))),
            random,
        }
    }

    /// Whether particles draw their own index (and so need a seed each).
    pub fn is_random(&self) -> bool {
        self.is_on() && self.random.is_some()
    }

    /// Whether particles show a part of the texture (interpolation is not
    /// `none`).
    pub fn is_on(&self) -> bool {
        self.interpolation != SubUvInterpolation::None
    }

    /// Columns and rows as drawn: each clamped to `1..=MAX_SUB_IMAGES`
    /// (what validation admits; a hand-built `SubUv` outside it draws as
    /// the nearest valid sheet).
    pub fn grid(&self) -> (u32, u32) {
        (self.horizontal.clamp(1, MAX_SUB_IMAGES), self.vertical.clamp(1, MAX_SUB_IMAGES))
    }

    /// Images in the sheet ([`Self::grid`]'s columns × rows).
    pub fn images(&self) -> u32 {
        let (h, v) = self.grid();
        h * v
    }

    /// The sprite vertex's sub-image index at relative time `t` (in
    /// `[0, 1]`): 0 when off, a whole image number for `linear`, and for
    /// `linear_blend` the index with its fraction (the second image's
    /// weight). Always in `[0, images - 1]`. A random index is that of a
    /// particle with seed 0 ([`Self::vertex_index_of`]).
    pub fn vertex_index(&self, t: f32) -> f32 {
        self.vertex_index_of(t, 0)
    }

    /// [`Self::vertex_index`] of the particle whose sub-image seed is
    /// `seed` ([`crate::ParticleStore::sub_image_seeds`]; only a random
    /// index reads it).
    pub fn vertex_index_of(&self, t: f32, seed: u32) -> f32 {
        struct At(f32, u32);
        impl WithIndex for At {
            type Out = f32;
            fn run(self, index: impl Fn(f32, u32) -> f32) -> f32 {
                index(self.0, self.1)
            }
        }
        self.with_index(At(t, seed))
    }

    /// Runs `w` with [`Self::vertex_index`] as a closure specialised to
    /// this emitter's settings, so that a loop over particles inside `w`
    /// has no branch on them (the sprite conversion's).
    #[inline]
    pub(crate) fn with_index<W: WithIndex>(&self, w: W) -> W::Out {
        let (images, last) = (self.images() as f32, (self.images() - 1) as f32);
        // `max` first: a NaN index (never from validated input) becomes 0.
        // Relative times are ≥ 0, so `t × images` needs no `max`.
        use SubUvInterpolation::{Linear, LinearBlend, None as Off};
        match (self.interpolation, self.index.as_deref(), self.random) {
            (Off, _, _) => w.run(|_, _| 0.0),
            (Linear, _, Some(r)) => w.run(move |t, seed| r.index(seed, t).max(0.0).min(last) as u32 as f32),
            (LinearBlend, _, Some(r)) => w.run(move |t, seed| r.index(seed, t).max(0.0).min(last)),
            (Linear, None, None) => w.run(|t, _| (t * images).min(last) as u32 as f32),
            (LinearBlend, None, None) => w.run(|t, _| (t * images).min(last)),
            (Linear, Some(lut), None) => w.run(|t, _| lut.sample_unit(t).max(0.0).min(last) as u32 as f32),
            (LinearBlend, Some(lut), None) => w.run(|t, _| lut.sample_unit(t).max(0.0).min(last)),
        }
    }

    /// The grid as the sprite vertex factory decodes it from
    /// [`crate::ParticleSpriteVertex::alignment`]: `4 × (horizontal - 1) +
    /// 256 × (vertical - 1)`, added to the alignment code (below 4). 0 when
    /// off, so a vertex without sub-UV carries the alignment code alone.
    pub(crate) fn grid_code(&self) -> f32 {
        if !self.is_on() {
            return 0.0;
        }
        let (h, v) = self.grid();
        (4 * (h - 1) + 256 * (v - 1)) as f32
    }
}

/// Work that wants the sub-image index as a closure (see [`SubUv::with_index`]).
pub(crate) trait WithIndex {
    /// What the work returns.
    type Out;
    /// Does the work with `index`, the sub-image index of a relative time
    /// and a particle's sub-image seed (read only by a random index).
    fn run(self, index: impl Fn(f32, u32) -> f32) -> Self::Out;
}

impl Default for SubUv {
    fn default() -> Self {
        SubUv::OFF
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asset::{BlendMode, ScreenAlignment, SortMode};
    use crate::distribution::CurveKey;

    fn required(interpolation: SubUvInterpolation, h: u32, v: u32) -> RequiredModule {
        let mut r = RequiredModule::new("M", BlendMode::Translucent, ScreenAlignment::FacingCamera, SortMode::None, 10);
        (r.sub_uv_interpolation, r.sub_images_horizontal, r.sub_images_vertical) = (interpolation, h, v);
        r
    }

    #[test]
    fn index_over_life_steps_through_every_image() {
        let s = SubUv::compile(&required(SubUvInterpolation::Linear, 4, 2), None);
        assert_eq!(s.images(), 8);
        // Image k from t = k/8 to (k+1)/8; the last one held to the end.
        for (t, want) in [(0.0, 0.0), (0.1, 0.0), (0.125, 1.0), (0.3, 2.0), (0.6, 4.0), (0.99, 7.0), (1.0, 7.0)] {
            assert_eq!(s.vertex_index(t), want, "t {t}");
        }
        let blend = SubUv::compile(&required(SubUvInterpolation::LinearBlend, 4, 2), None);
        assert_eq!(blend.vertex_index(0.3), 0.3 * 8.0);
        assert_eq!(blend.vertex_index(1.0), 7.0);
        assert_eq!(blend.grid_code(), (4 * 3 + 256) as f32);
    }

    #[test]
    fn a_curve_gives_the_index_and_off_is_zero() {
        let curve = Distribution::Curve(vec![CurveKey { time: 0.0, value: 0.0 }, CurveKey { time: 1.0, value: 3.0 }]);
        let s = SubUv::compile(&required(SubUvInterpolation::LinearBlend, 2, 2), Some(&curve));
        assert!((s.vertex_index(0.5) - 1.5).abs() < 1e-5);
        let constant = SubUv::compile(&required(SubUvInterpolation::Linear, 2, 2), Some(&Distribution::Constant(9.0)));
        assert_eq!(constant.vertex_index(0.5), 3.0, "clamped to the last image");
        // A hand-built sheet outside the valid grid draws as the nearest one.
        let zero = SubUv { horizontal: 0, vertical: 1000, ..constant.clone() };
        assert_eq!((zero.grid(), zero.vertex_index(0.9)), ((1, MAX_SUB_IMAGES), 9.0));
        let off = SubUv::compile(&required(SubUvInterpolation::None, 4, 4), Some(&curve));
        assert_eq!(off, SubUv::OFF);
        assert_eq!((off.vertex_index(0.7), off.grid_code()), (0.0, 0.0));
    }

    #[test]
    fn a_random_index_is_a_stable_hash_of_the_seed_and_the_part_of_life() {
        let uniform = Distribution::Uniform { min: 0.0, max: 8.0 };
        let mut req = required(SubUvInterpolation::Linear, 4, 2);
        let s = SubUv::compile(&req, Some(&uniform));
        assert_eq!((s.index.is_none(), s.random, s.is_random()), (true, Some(RandomSubImage { min: 0.0, max: 8.0, changes: 0 }), true));
        let mut seen = [false; 8];
        for seed in 0..200u32 {
            let image = s.vertex_index_of(0.0, seed);
            assert_eq!(image, image.floor());
            // One image for the whole life without changes.
            for t in [0.1, 0.5, 0.99, 1.0] {
                assert_eq!(s.vertex_index_of(t, seed), image, "seed {seed}, t {t}");
            }
            seen[image as usize] = true;
        }
        assert!(seen.iter().all(|s| *s), "{seen:?}");
        // Two changes: three parts, each its own draw (the first the same
        // as without changes).
        req.random_image_changes = 2;
        let changing = SubUv::compile(&req, Some(&uniform));
        let r = changing.random.unwrap();
        let parts: Vec<Vec<f32>> = (0..50u32).map(|seed| [0.0, 0.4, 0.7].iter().map(|&t| r.index(seed, t)).collect()).collect();
        assert!(parts.iter().all(|p| p.iter().all(|i| (0.0..=8.0).contains(i))));
        assert!(parts.iter().filter(|p| p[0] != p[1] || p[1] != p[2]).count() > 40);
        assert_eq!((r.index(9, 0.0), r.index(9, 0.33), r.index(9, 1.0)), (r.index(9, 0.3), r.index(9, 0.0), r.index(9, 0.9)));
        assert_eq!(r.index(9, 0.2), s.random.unwrap().index(9, 0.9));
        // A constant or a curve is not random.
        assert!(!SubUv::compile(&req, Some(&Distribution::Constant(2.0))).is_random());
    }
}
