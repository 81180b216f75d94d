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
//! The copy is a few `memcpy`s of the structure-of-arrays storage. Current
//! sizes and colours are not stored by the tick; the snapshot carries the
//! spawn values (only those that differ between particles) and the
//! emitter's over-life evaluation ([`OverLife`], tables shared by `Arc`),
//! and the render thread evaluates them per particle as it turns each
//! particle into one instance of the sprite vertex factory with
//! [`build_sprite_vertices`], sorting first when the emitter asks for it.
//! The sprite-sheet image ([`SubUv`]) is derived from the age the same way.
//!
//! Positions in a snapshot are always in world space: a local-space
//! emitter's are carried there by the system transform as they are copied
//! (a transform instead of a `memcpy` for its two position arrays), so the
//! render thread, sorting and bounds need not know about local space. Its
//! sprite sizes follow the transform's scale: the snapshot carries the
//! factor ([`EmitterDynamicData::size_scale`], from
//! [`EmitterInstance::sprite_size_scale`]) and the sprite conversion
//! multiplies each current size by it (before a square sprite takes its
//! width as its height).

use glam::{Affine3A, Vec2, Vec3, Vec4};

use crate::asset::{BlendMode, ScreenAlignment, SortMode};
use crate::bounds::Aabb;
use crate::emitter::EmitterInstance;
use crate::over_life::OverLife;
use crate::sort::order_descending;
use crate::sub_uv::{SubUv, WithIndex};

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
    /// Spawn sizes (width, height); empty when `size_over_life` does not
    /// read them ([`OverLife::reads_base`]). [`Self::size`] gives the
    /// current size.
    pub base_sizes: Vec<Vec2>,
    /// Current size from spawn size and relative time.
    pub size_over_life: OverLife<Vec2>,
    /// Rotations in radians.
    pub rotations: Vec<f32>,
    /// Spawn colours (linear RGBA); empty when `color_over_life` does not
    /// read them. [`Self::color`] gives the current colour.
    pub base_colors: Vec<Vec4>,
    /// Current colour from spawn colour and relative time.
    pub color_over_life: OverLife<Vec4>,
    /// Relative times in `[0, 1)`.
    pub relative_times: Vec<f32>,
    /// Which sprite-sheet image each particle shows, from its relative
    /// time ([`SubUv::OFF`]: the whole texture).
    pub sub_uv: SubUv,
    /// Each particle's random sub-image seed when `sub_uv` draws its index
    /// at random ([`SubUv::is_random`]); otherwise empty (every seed 0).
    pub sub_image_seeds: Vec<u32>,
    /// Multiplies every current size (width, height): the system
    /// transform's scale for a local-space emitter, else 1 × 1
    /// ([`EmitterInstance::sprite_size_scale`]).
    pub size_scale: Vec2,
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
            base_sizes: Vec::new(),
            size_over_life: OverLife::Off,
            rotations: Vec::new(),
            base_colors: Vec::new(),
            color_over_life: OverLife::Off,
            relative_times: Vec::new(),
            sub_uv: SubUv::OFF,
            sub_image_seeds: Vec::new(),
            size_scale: Vec2::ONE,
        };
        data.copy_particles(emitter);
        data
    }

    /// A snapshot whose particles' current sizes and colours are given
    /// outright (no over-life curves): for tests, tools and effects that
    /// build particles themselves.
    #[allow(clippy::too_many_arguments)]
    pub fn with_current_values(
        material: &str,
        blend_mode: BlendMode,
        screen_alignment: ScreenAlignment,
        sort_mode: SortMode,
        positions: Vec<Vec3>,
        old_positions: Vec<Vec3>,
        sizes: Vec<Vec2>,
        rotations: Vec<f32>,
        colors: Vec<Vec4>,
        relative_times: Vec<f32>,
    ) -> Self {
        EmitterDynamicData {
            material: material.into(),
            blend_mode,
            screen_alignment,
            sort_mode,
            positions,
            old_positions,
            base_sizes: sizes,
            size_over_life: OverLife::Off,
            rotations,
            base_colors: colors,
            color_over_life: OverLife::Off,
            relative_times,
            sub_uv: SubUv::OFF,
            sub_image_seeds: Vec::new(),
            size_scale: Vec2::ONE,
        }
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
        fn recycle<T>(dst: &mut Vec<T>, len: usize) {
            // A recycled snapshot keeps its arrays' capacity; after a burst
            // has died down, give most of it back rather than holding the
            // peak for the component's lifetime.
            if dst.capacity() > 4 * len.max(4096) {
                *dst = Vec::with_capacity(len);
            }
            dst.clear();
        }
        fn copy<T: Copy>(dst: &mut Vec<T>, src: &[T]) {
            recycle(dst, src.len());
            dst.extend_from_slice(src);
        }
        fn to_world(dst: &mut Vec<Vec3>, src: &[Vec3], t: &Affine3A) {
            recycle(dst, src.len());
            dst.extend(src.iter().map(|p| t.transform_point3(*p)));
        }
        fn copy_if<T: Copy>(reads: bool, dst: &mut Vec<T>, src: &[T]) {
            if reads {
                copy(dst, src);
            } else {
                *dst = Vec::new();
            }
        }
        let p = emitter.particles();
        let (sizes, colors) = emitter.over_life();
        if emitter.uses_local_space() {
            to_world(&mut self.positions, p.locations(), emitter.local_to_world());
            to_world(&mut self.old_positions, p.old_locations(), emitter.local_to_world());
        } else {
            copy(&mut self.positions, p.locations());
            copy(&mut self.old_positions, p.old_locations());
        }
        copy_if(sizes.reads_base(), &mut self.base_sizes, p.base_sizes());
        copy(&mut self.rotations, p.rotations());
        copy_if(colors.reads_base(), &mut self.base_colors, p.base_colors());
        copy(&mut self.relative_times, p.relative_times());
        self.size_over_life.clone_from(sizes);
        self.color_over_life.clone_from(colors);
        self.sub_uv.clone_from(emitter.sub_uv());
        copy_if(self.sub_uv.is_random(), &mut self.sub_image_seeds, p.sub_image_seeds());
        self.size_scale = emitter.sprite_size_scale();
    }

    /// Particle `i`'s current size as drawn (times [`Self::size_scale`]).
    /// Panics if `i >= len()`.
    pub fn size(&self, i: usize) -> Vec2 {
        let base = self.base_sizes.get(i).copied().unwrap_or(Vec2::ONE);
        self.size_over_life.at(base, self.relative_times[i]) * self.size_scale
    }

    /// Particle `i`'s sub-image seed (0 when the index is not random).
    pub fn sub_image_seed(&self, i: usize) -> u32 {
        self.sub_image_seeds.get(i).copied().unwrap_or(0)
    }

    /// Particle `i`'s current colour. Panics if `i >= len()`.
    pub fn color(&self, i: usize) -> Vec4 {
        let base = self.base_colors.get(i).copied().unwrap_or(Vec4::ONE);
        self.color_over_life.at(base, self.relative_times[i])
    }

    /// Every particle's current size.
    pub fn sizes(&self) -> Vec<Vec2> {
        (0..self.len()).map(|i| self.size(i)).collect()
    }

    /// Every particle's current colour.
    pub fn colors(&self) -> Vec<Vec4> {
        (0..self.len()).map(|i| self.color(i)).collect()
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
    /// Sprite-sheet image ([`SubUv::vertex_index_of`]): 0 without sub-UV, a
    /// whole image number for `linear`, image plus blend weight for
    /// `linear_blend`.
    pub sub_image_index: f32,
    /// The emitter's [`ScreenAlignment`] and sprite-sheet grid for the
    /// vertex factory, one exact integer: the alignment code (0 facing the
    /// view plane, also for square sprites, whose size is made square here;
    /// 1 velocity aligned; 2 facing the camera position) plus `4 ×
    /// (columns - 1) + 256 × (rows - 1)` of the sheet when sub-UV is on.
    /// Without sub-UV it is the code alone. (One float keeps the vertex at
    /// 64 bytes.)
    pub alignment: f32,
}

const _: () = assert!(std::mem::size_of::<ParticleSpriteVertex>() == 64);

/// Where sprites are sorted from: the view's eye and the direction it
/// looks in (for [`SortMode::ViewDepth`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpriteView {
    /// The eye, for [`SortMode::DistanceToView`].
    pub origin: Vec3,
    /// The unit view direction, for [`SortMode::ViewDepth`]; zero when
    /// unknown (then every depth is 0 and view-depth sorting keeps storage
    /// order).
    pub forward: Vec3,
}

impl SpriteView {
    /// A view at `origin` looking along `forward` (normalised here; a zero
    /// vector stays zero).
    pub fn new(origin: Vec3, forward: Vec3) -> Self {
        SpriteView { origin, forward: forward.normalize_or_zero() }
    }

    /// The sorting view of a renderer view: its eye and its direction.
    pub fn of(view: &renderer::SceneView) -> Self {
        // Right-handed look-at: the camera looks down its -Z.
        Self::new(view.origin, -view.view_matrix.inverse().z_axis.truncate())
    }
}

impl From<Vec3> for SpriteView {
    /// A view known only by its eye (no direction: see [`SpriteView::forward`]).
    fn from(origin: Vec3) -> Self {
        SpriteView { origin, forward: Vec3::ZERO }
    }
}

/// Reusable working memory for [`build_sprite_vertices_with`].
#[derive(Debug, Default)]
pub struct SpriteScratch {
    keys: Vec<f32>,
    staging: Vec<ParticleSpriteVertex>,
    order: Vec<u32>,
    radix: Vec<u64>,
}

/// Writes one vertex per particle of `data` into `out` (cleared first), in
/// the emitter's [`SortMode`] as seen from `view`: storage order for
/// [`SortMode::None`]; back to front by projected depth along the view
/// direction for [`SortMode::ViewDepth`] or by distance from the eye for
/// [`SortMode::DistanceToView`]; oldest or newest (relative time) first for
/// [`SortMode::Age`] and [`SortMode::AgeNewestFirst`]. Ties keep storage
/// order. A bare `Vec3` is a view known by its eye alone ([`SpriteView`]).
pub fn build_sprite_vertices(data: &EmitterDynamicData, view: impl Into<SpriteView>, out: &mut Vec<ParticleSpriteVertex>) {
    build_sprite_vertices_with(data, view, out, &mut SpriteScratch::default());
}

/// [`build_sprite_vertices`] reusing `scratch` between calls (the render
/// thread keeps one per emitter proxy, so sorting allocates nothing).
pub fn build_sprite_vertices_with(
    data: &EmitterDynamicData,
    view: impl Into<SpriteView>,
    out: &mut Vec<ParticleSpriteVertex>,
    scratch: &mut SpriteScratch,
) {
    let view = view.into();
    out.clear();
    let n = data.len();
    out.reserve(n);
    let keys = &mut scratch.keys;
    let key_source: &[f32] = match data.sort_mode {
        SortMode::None => return write_vertices(data, out),
        SortMode::ViewDepth => {
            keys.clear();
            keys.extend(data.positions.iter().map(|p| (*p - view.origin).dot(view.forward)));
            keys
        }
        SortMode::DistanceToView => {
            keys.clear();
            keys.extend(data.positions.iter().map(|p| p.distance_squared(view.origin)));
            keys
        }
        SortMode::Age => &data.relative_times,
        SortMode::AgeNewestFirst => {
            keys.clear();
            keys.extend(data.relative_times.iter().map(|t| -t));
            keys
        }
    };
    order_descending(key_source, &mut scratch.order, &mut scratch.radix);
    // Build in storage order (sequential reads of six arrays), then
    // permute whole 64-byte vertices: one random cache line per sprite
    // instead of one per array.
    scratch.staging.clear();
    write_vertices(data, &mut scratch.staging);
    let staging = &scratch.staging;
    out.extend(scratch.order.iter().map(|&i| staging[i as usize]));
}

/// The vertex factory's alignment code for `a` (see
/// [`ParticleSpriteVertex::alignment`]).
fn alignment_code(a: ScreenAlignment) -> f32 {
    match a {
        ScreenAlignment::FacingCamera | ScreenAlignment::Square => 0.0,
        ScreenAlignment::VelocityAligned => 1.0,
        ScreenAlignment::FacingCameraPosition => 2.0,
    }
}

/// Appends one vertex per particle of `data`, in storage order, evaluating
/// each particle's current size, colour and sprite-sheet image as it goes
/// (the 64-byte vertex writes set the pace, not the evaluation).
fn write_vertices(data: &EmitterDynamicData, out: &mut Vec<ParticleSpriteVertex>) {
    /// The loop, given the emitter's sub-image index as a closure.
    struct Writer<'a, const SQUARE: bool>(&'a EmitterDynamicData, &'a mut Vec<ParticleSpriteVertex>);
    impl<const SQUARE: bool> WithIndex for Writer<'_, SQUARE> {
        type Out = ();
        fn run(self, index: impl Fn(f32, u32) -> f32) {
            write_vertices_as::<SQUARE>(self.0, self.1, index);
        }
    }
    if data.screen_alignment == ScreenAlignment::Square {
        data.sub_uv.with_index(Writer::<true>(data, out));
    } else {
        data.sub_uv.with_index(Writer::<false>(data, out));
    }
}

/// [`write_vertices`] for an emitter with or without square sprites, with
/// `sub_image` its particles' sub-image index (monomorphised over both: an
/// emitter without them pays nothing for them).
#[inline(always)]
fn write_vertices_as<const SQUARE: bool>(
    data: &EmitterDynamicData,
    out: &mut Vec<ParticleSpriteVertex>,
    sub_image: impl Fn(f32, u32) -> f32,
) {
    let (size_base, color_base) = (data.size_over_life.reads_base(), data.color_over_life.reads_base());
    let alignment = alignment_code(data.screen_alignment) + data.sub_uv.grid_code();
    // A hand-built snapshot may lack the seeds: then every seed is 0.
    let seeded = data.sub_image_seeds.len() == data.len();
    let vertex = |i: usize| {
        let t = data.relative_times[i];
        let size = if size_base { data.base_sizes[i] } else { Vec2::ONE };
        let color = if color_base { data.base_colors[i] } else { Vec4::ONE };
        let seed = if seeded { data.sub_image_seeds[i] } else { 0 };
        let mut size = data.size_over_life.at(size, t) * data.size_scale;
        if SQUARE {
            size.y = size.x;
        }
        ParticleSpriteVertex {
            position: data.positions[i].to_array(),
            old_position: data.old_positions[i].to_array(),
            size: size.to_array(),
            rotation: data.rotations[i],
            color: data.color_over_life.at(color, t).to_array(),
            relative_time: t,
            sub_image_index: sub_image(t, seed),
            alignment,
        }
    };
    out.extend((0..data.len()).map(vertex));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(sort_mode: SortMode, positions: &[Vec3], times: &[f32]) -> EmitterDynamicData {
        let n = positions.len();
        EmitterDynamicData::with_current_values(
            "M",
            BlendMode::Translucent,
            ScreenAlignment::FacingCamera,
            sort_mode,
            positions.to_vec(),
            positions.to_vec(),
            vec![Vec2::ONE; n],
            vec![0.0; n],
            vec![Vec4::ONE; n],
            times.to_vec(),
        )
    }

    #[test]
    fn vertex_is_pod_and_carries_every_field() {
        let mut d = data(SortMode::None, &[Vec3::new(1.0, 2.0, 3.0)], &[0.25]);
        d.base_sizes[0] = Vec2::new(4.0, 5.0);
        d.rotations[0] = 0.5;
        d.base_colors[0] = Vec4::new(0.1, 0.2, 0.3, 0.4);
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
        build_sprite_vertices(&data(SortMode::Age, &p, &[0.2, 0.9, 0.5]), Vec3::ZERO, &mut out);
        let t: Vec<f32> = out.iter().map(|v| v.relative_time).collect();
        assert_eq!(t, vec![0.9, 0.5, 0.2]);
        build_sprite_vertices(&data(SortMode::None, &p, &[0.2, 0.9, 0.5]), Vec3::ZERO, &mut out);
        let t: Vec<f32> = out.iter().map(|v| v.relative_time).collect();
        assert_eq!(t, vec![0.2, 0.9, 0.5]);
    }
}
