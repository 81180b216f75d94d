//! Cascaded shadow maps for the shadowed directional light (UE's
//! CSM, Bevy's `CascadeShadowConfig`).
//!
//! The first main view's depth range up to `r.Shadow.CSM.MaxDistance` is
//! split into up to four cascades (`r.Shadow.CSM.MaxCascades`): the first
//! ends at `r.Shadow.CSM.FirstCascadeDistance`, the others follow the
//! practical split scheme (Zhang et al.'s PSSM: a blend of logarithmic and
//! uniform splits, [`SPLIT_LAMBDA`]). Each cascade is a typed shadow view
//! ([`ViewKind::ShadowCascade`]) with its own culling, drawn into its tile
//! of the shadow map: one tile with one cascade, a 2×2 grid of
//! `r.Shadow.MapSize` tiles with more.
//!
//! **Stable** (no shimmer as the camera moves or turns): a cascade's
//! projection covers the bounding sphere of its slice of the view frustum,
//! computed in view space, so its diameter does not change as the camera
//! turns; and its light-space origin is snapped to whole shadow texels,
//! so a moving camera moves the projection by whole texels only.
//!
//! **Blended**: over the last [`CascadeSettings::transition`] of a
//! cascade's depth range the shader mixes its shadow with the next
//! cascade's, so a border shows no seam.
//!
//! The light-space depth range reaches back to every shadow caster in the
//! scene (casters outside the sphere still shadow it), and forward to the
//! sphere's far side.

use crate::math::Bounds;
use crate::settings::ShadowSettings;
use crate::view::{SceneView, ViewKind};
use glam::{Mat4, Vec3};
use rhi_vulkan::Rect;

/// The practical split scheme's weight of the logarithmic split (1) against
/// the uniform one (0).
pub const SPLIT_LAMBDA: f32 = 0.85;

/// Cascade settings (from [`ShadowSettings`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CascadeSettings {
    /// Cascades, 1..=4.
    pub count: u32,
    /// The first cascade's far depth (with more than one).
    pub first_distance: f32,
    /// The last cascade's far depth: no shadow past it.
    pub max_distance: f32,
    /// The share (0..=0.5) of each cascade's depth range over which it
    /// blends into the next.
    pub transition: f32,
    /// A cascade tile's width and height in texels.
    pub tile_size: u32,
}

/// One cascade: its shadow view and what the shader needs to sample it.
#[derive(Clone, Debug)]
pub struct Cascade {
    /// The cascade's view (kind `ShadowCascade`, viewport its tile).
    pub view: SceneView,
    /// The main view's depth where this cascade ends.
    pub far_depth: f32,
    /// The main view's depth from which it blends into the next cascade.
    pub blend_start: f32,
    /// The world size of one of its texels.
    pub texel_world: f32,
    /// Its light-space depth range (world units): the bias is relative to it.
    pub depth_range: f32,
}

impl CascadeSettings {
    /// The cascade settings of `shadow`.
    pub fn of(shadow: &ShadowSettings) -> Self {
        Self {
            count: shadow.cascades,
            first_distance: shadow.first_cascade_distance,
            max_distance: shadow.max_distance,
            transition: shadow.cascade_transition,
            tile_size: shadow.map_size,
        }
    }

    /// The shadow map's width and height: one tile, or a 2×2 grid of them.
    pub fn atlas_size(&self) -> u32 {
        if self.count > 1 {
            self.tile_size * 2
        } else {
            self.tile_size
        }
    }

    /// Cascade `i`'s tile in the shadow map.
    pub fn tile(&self, i: u32) -> Rect {
        let t = self.tile_size;
        Rect::new(((i % 2) * t) as i32, ((i / 2) * t) as i32, t, t)
    }

    /// The split depths: `count + 1` values from `near` to the max distance.
    pub fn splits(&self, near: f32, far: f32) -> Vec<f32> {
        let max = self.max_distance.min(far).max(near * 1.01);
        let n = self.count.max(1);
        if n == 1 {
            return vec![near, max];
        }
        let first = self.first_distance.clamp(near * 1.001, max);
        let mut s = vec![near, first];
        for k in 2..=n {
            let t = (k - 1) as f32 / (n - 1) as f32;
            let log = first * (max / first).powf(t);
            let uniform = first + (max - first) * t;
            s.push(SPLIT_LAMBDA * log + (1.0 - SPLIT_LAMBDA) * uniform);
        }
        s
    }
}

/// The rotation-only view of a light travelling along `direction`.
fn light_rotation(direction: Vec3) -> Option<Mat4> {
    let d = direction.normalize_or_zero();
    if d == Vec3::ZERO {
        return None;
    }
    let up = if d.z.abs() > 0.99 { Vec3::Y } else { Vec3::Z };
    Some(glam::camera::rh::view::look_to_mat4(Vec3::ZERO, d, up))
}

/// The view-space corners of the view's cross-section at depth `z` (their
/// z the view's -z, as view space has it).
fn slice_corners(view: &SceneView, z: f32) -> [Vec3; 4] {
    let inv = view.projection.inverse();
    [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)].map(|(x, y)| SceneView::point_at_depth(&inv, x, y, z))
}

/// The cascades of the shadowed directional light travelling along
/// `direction`, fitted to `view`, reaching back to `casters`. Empty when
/// the direction is degenerate.
pub fn cascades(view: &SceneView, direction: Vec3, settings: &CascadeSettings, casters: &Bounds) -> Vec<Cascade> {
    let Some(rotation) = light_rotation(direction) else { return Vec::new() };
    let (near, far) = view.depth_range();
    let splits = settings.splits(near.max(1e-4), far);
    let to_world = view.view_matrix.inverse();
    let d = direction.normalize();
    // The casters' extent along the light (light-space z is -distance along it).
    let caster_reach = {
        let (c, r) = (casters.origin, casters.extent.length());
        (d.dot(c) - r, d.dot(c) + r)
    };
    (0..settings.count.max(1))
        .map(|i| {
            let (z0, z1) = (splits[i as usize], splits[i as usize + 1]);
            // The slice's bounding sphere in view space: its center on the
            // corners' average, its radius rounded up to a 1/16 unit so
            // float noise does not change the projection's size.
            let corners: Vec<Vec3> = slice_corners(view, z0).into_iter().chain(slice_corners(view, z1)).collect();
            let center_v = corners.iter().copied().sum::<Vec3>() / corners.len() as f32;
            let radius = (corners.iter().map(|c| c.distance(center_v)).fold(0.0, f32::max) * 16.0).ceil() / 16.0;
            let center = to_world.transform_point3(center_v);
            cascade(i, settings, rotation, d, center, radius.max(1e-3), caster_reach, (z0, z1))
        })
        .collect()
}

#[allow(clippy::too_many_arguments)] // one cascade's inputs, computed by `cascades`
fn cascade(
    i: u32,
    settings: &CascadeSettings,
    rotation: Mat4,
    d: Vec3,
    center: Vec3,
    radius: f32,
    (caster_near, _): (f32, f32),
    (z0, z1): (f32, f32),
) -> Cascade {
    let texel_world = 2.0 * radius / settings.tile_size as f32;
    // The sphere's center in light space, snapped to whole texels.
    let c = rotation.transform_point3(center);
    let snap = |v: f32| (v / texel_world).floor() * texel_world;
    let (cx, cy) = (snap(c.x), snap(c.y));
    // Light-space z = -(distance along the light); the range runs from
    // the nearest caster (towards the light) to the sphere's far side.
    let near_along = caster_near.min(d.dot(center) - radius) - 1.0;
    let far_along = d.dot(center) + radius;
    let projection =
        glam::camera::rh::proj::directx::orthographic(cx - radius, cx + radius, cy - radius, cy + radius, near_along, far_along);
    // Vulkan's y-down clip space, as `SceneView`'s constructors give it.
    let mut projection = projection;
    projection.y_axis.y = -projection.y_axis.y;
    projection.w_axis.y = -projection.w_axis.y;
    let view = SceneView {
        view_matrix: rotation,
        projection,
        origin: center - d * radius,
        viewport: settings.tile(i),
        wireframe: false,
        max_draw_distance: 0.0,
        perspective: false,
        kind: ViewKind::ShadowCascade { cascade: i as u8 },
        state: None,
        camera_cut: false,
        show_bounds: false,
    };
    let blend_start = z1 - (z1 - z0) * settings.transition.clamp(0.0, 0.5);
    Cascade { view, far_depth: z1, blend_start, texel_world, depth_range: far_along - near_along }
}

/// Whether `p` is inside the cascade's projection (tests).
#[cfg(test)]
fn covers(c: &Cascade, p: Vec3) -> bool {
    let clip = c.view.view_proj() * p.extend(1.0);
    let ndc = clip.truncate() / clip.w;
    ndc.x.abs() <= 1.0 && ndc.y.abs() <= 1.0 && (0.0..=1.0).contains(&ndc.z)
}

#[cfg(test)]
mod tests;
