//! Dynamic data: the per-frame snapshot the render thread draws from.
//!
//! UE's `FParticleDynamicData`. Particle memory belongs to the game thread
//! and is rewritten every tick, so the render thread never reads it; at the
//! end of each frame the component copies what drawing needs into owned
//! arrays (`Send + 'static`) and sends them with its proxy's update:
//!
//! ```text
//! game thread    | tick N | build_dynamic_data ──┐ | tick N+1 | build ──┐
//! render thread  |        render frame N-1       └─► render frame N      └─►
//! ```
//!
//! The copy is a few `memcpy`s of the structure-of-arrays storage. The
//! render thread then turns each particle into one instance of the sprite
//! vertex factory with [`build_sprite_vertices`], sorting first when the
//! emitter asks for it.

use glam::{Vec2, Vec3, Vec4};

use crate::asset::{BlendMode, ScreenAlignment, SortMode};
use crate::bounds::Aabb;
use crate::emitter::EmitterInstance;
use crate::sort::order_descending;

/// One emitter's live particles and render settings, owned.
#[derive(Clone, Debug, PartialEq)]
pub struct EmitterDynamicData {
    /// Material name, resolved by the renderer.
    pub material: String,
    /// Blending.
    pub blend_mode: BlendMode,
    /// Sprite orientation.
    pub screen_alignment: ScreenAlignment,
    /// Draw order.
    pub sort_mode: SortMode,
    /// World positions.
    pub positions: Vec<Vec3>,
    /// Positions at the previous tick (velocity alignment, motion blur).
    pub old_positions: Vec<Vec3>,
    /// Sprite sizes (width, height).
    pub sizes: Vec<Vec2>,
    /// Rotations in radians.
    pub rotations: Vec<f32>,
    /// Linear RGBA colours.
    pub colors: Vec<Vec4>,
    /// Relative times in `[0, 1)`.
    pub relative_times: Vec<f32>,
}

impl EmitterDynamicData {
    /// A snapshot of `emitter`.
    pub fn from_emitter(emitter: &EmitterInstance) -> Self {
        let req = emitter.required();
        let mut data = EmitterDynamicData {
            material: req.material.clone(),
            blend_mode: req.blend_mode,
            screen_alignment: req.screen_alignment,
            sort_mode: req.sort_mode,
            positions: Vec::new(),
            old_positions: Vec::new(),
            sizes: Vec::new(),
            rotations: Vec::new(),
            colors: Vec::new(),
            relative_times: Vec::new(),
        };
        data.copy_particles(emitter);
        data
    }

    /// Refreshes this snapshot from `emitter`, reusing the allocations.
    pub fn update_from(&mut self, emitter: &EmitterInstance) {
        let req = emitter.required();
        if self.material != req.material {
            self.material.clone_from(&req.material);
        }
        self.blend_mode = req.blend_mode;
        self.screen_alignment = req.screen_alignment;
        self.sort_mode = req.sort_mode;
        self.copy_particles(emitter);
    }

    fn copy_particles(&mut self, emitter: &EmitterInstance) {
        fn copy<T: Copy>(dst: &mut Vec<T>, src: &[T]) {
            dst.clear();
            dst.extend_from_slice(src);
        }
        let p = emitter.particles();
        copy(&mut self.positions, p.locations());
        copy(&mut self.old_positions, p.old_locations());
        copy(&mut self.sizes, p.sizes());
        copy(&mut self.rotations, p.rotations());
        copy(&mut self.colors, p.colors());
        copy(&mut self.relative_times, p.relative_times());
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// No particles.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

/// A whole system's snapshot, one entry per emitter in asset order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParticleSystemDynamicData {
    /// Per-emitter snapshots.
    pub emitters: Vec<EmitterDynamicData>,
    /// World bounds of the live sprites (or the fixed bounds), for culling.
    pub bounds: Option<Aabb>,
}

impl ParticleSystemDynamicData {
    /// Total particles across emitters.
    pub fn live_particles(&self) -> usize {
        self.emitters.iter().map(EmitterDynamicData::len).sum()
    }
}

/// One sprite instance for the particle sprite vertex factory (stream 1).
/// 64 bytes, all `f32`, so it can be uploaded as is.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ParticleSpriteVertex {
    /// World position of the sprite centre.
    pub position: [f32; 3],
    /// Position at the previous tick.
    pub old_position: [f32; 3],
    /// Width and height.
    pub size: [f32; 2],
    /// Rotation in radians.
    pub rotation: f32,
    /// Linear RGBA.
    pub color: [f32; 4],
    /// Relative time in `[0, 1)`.
    pub relative_time: f32,
    /// Flipbook frame (no sub-UV module yet: always 0).
    pub sub_image_index: f32,
    /// The emitter's [`ScreenAlignment`] for the vertex factory: 0 facing
    /// the camera, 1 velocity aligned (also keeps the size 64 bytes).
    pub alignment: f32,
}

const _: () = assert!(std::mem::size_of::<ParticleSpriteVertex>() == 64);

/// Reusable working memory for [`build_sprite_vertices_with`].
#[derive(Debug, Default)]
pub struct SpriteScratch {
    keys: Vec<f32>,
    staging: Vec<ParticleSpriteVertex>,
    order: Vec<u32>,
    radix: Vec<u64>,
}

/// Writes one vertex per particle of `data` into `out` (cleared first):
/// farthest from `view_origin` first for [`SortMode::DistanceToView`],
/// oldest (largest relative time) first for [`SortMode::Age`], storage
/// order for [`SortMode::None`]. Ties keep storage order.
pub fn build_sprite_vertices(
    data: &EmitterDynamicData,
    view_origin: Vec3,
    out: &mut Vec<ParticleSpriteVertex>,
) {
    build_sprite_vertices_with(data, view_origin, out, &mut SpriteScratch::default());
}

/// [`build_sprite_vertices`] reusing `scratch` between calls (the render
/// thread keeps one per emitter proxy, so sorting allocates nothing).
pub fn build_sprite_vertices_with(
    data: &EmitterDynamicData,
    view_origin: Vec3,
    out: &mut Vec<ParticleSpriteVertex>,
    scratch: &mut SpriteScratch,
) {
    out.clear();
    let n = data.len();
    out.reserve(n);
    let alignment = match data.screen_alignment {
        ScreenAlignment::FacingCamera => 0.0,
        ScreenAlignment::VelocityAligned => 1.0,
    };
    let vertex = |i: usize| ParticleSpriteVertex {
        position: data.positions[i].to_array(),
        old_position: data.old_positions[i].to_array(),
        size: data.sizes[i].to_array(),
        rotation: data.rotations[i],
        color: data.colors[i].to_array(),
        relative_time: data.relative_times[i],
        sub_image_index: 0.0,
        alignment,
    };
    match data.sort_mode {
        SortMode::None => out.extend((0..n).map(vertex)),
        SortMode::DistanceToView | SortMode::Age => {
            if data.sort_mode == SortMode::DistanceToView {
                scratch.keys.clear();
                scratch.keys.extend(
                    data.positions
                        .iter()
                        .map(|p| p.distance_squared(view_origin)),
                );
                order_descending(&scratch.keys, &mut scratch.order, &mut scratch.radix);
            } else {
                order_descending(&data.relative_times, &mut scratch.order, &mut scratch.radix);
            }
            // Build in storage order (sequential reads of six arrays), then
            // permute whole 64-byte vertices: one random cache line per
            // sprite instead of one per array.
            scratch.staging.clear();
            scratch.staging.extend((0..n).map(vertex));
            let staging = &scratch.staging;
            out.extend(scratch.order.iter().map(|&i| staging[i as usize]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(sort_mode: SortMode, positions: &[Vec3], times: &[f32]) -> EmitterDynamicData {
        let n = positions.len();
        EmitterDynamicData {
            material: "M".into(),
            blend_mode: BlendMode::Translucent,
            screen_alignment: ScreenAlignment::FacingCamera,
            sort_mode,
            positions: positions.to_vec(),
            old_positions: positions.to_vec(),
            sizes: vec![Vec2::ONE; n],
            rotations: vec![0.0; n],
            colors: vec![Vec4::ONE; n],
            relative_times: times.to_vec(),
        }
    }

    #[test]
    fn vertex_is_pod_and_carries_every_field() {
        let mut d = data(SortMode::None, &[Vec3::new(1.0, 2.0, 3.0)], &[0.25]);
        d.sizes[0] = Vec2::new(4.0, 5.0);
        d.rotations[0] = 0.5;
        d.colors[0] = Vec4::new(0.1, 0.2, 0.3, 0.4);
        let mut out = Vec::new();
        build_sprite_vertices(&d, Vec3::ZERO, &mut out);
        let v = out[0];
        assert_eq!(v.position, [1.0, 2.0, 3.0]);
        assert_eq!(v.size, [4.0, 5.0]);
        assert_eq!(v.rotation, 0.5);
        assert_eq!(v.color, [0.1, 0.2, 0.3, 0.4]);
        assert_eq!(v.relative_time, 0.25);
        assert_eq!(v.alignment, 0.0);
        d.screen_alignment = ScreenAlignment::VelocityAligned;
        build_sprite_vertices(&d, Vec3::ZERO, &mut out);
        assert_eq!(out[0].alignment, 1.0);
        assert_eq!(bytemuck::cast_slice::<_, u8>(&out).len(), 64);
    }

    #[test]
    fn age_sort_puts_oldest_first_and_none_keeps_order() {
        let p = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let mut out = Vec::new();
        build_sprite_vertices(
            &data(SortMode::Age, &p, &[0.2, 0.9, 0.5]),
            Vec3::ZERO,
            &mut out,
        );
        let t: Vec<f32> = out.iter().map(|v| v.relative_time).collect();
        assert_eq!(t, vec![0.9, 0.5, 0.2]);
        build_sprite_vertices(
            &data(SortMode::None, &p, &[0.2, 0.9, 0.5]),
            Vec3::ZERO,
            &mut out,
        );
        let t: Vec<f32> = out.iter().map(|v| v.relative_time).collect();
        assert_eq!(t, vec![0.2, 0.9, 0.5]);
    }
}
