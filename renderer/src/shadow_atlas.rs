//! Point and spot light shadows in one cached shadow atlas (UE's shadow
//! map atlas with cached shadow maps, Godot's shadow atlas).
//!
//! One depth texture (`r.Shadow.AtlasSize`², default 4096²) holds a tile
//! per shadowed spot light and six per shadowed point light (one per cube
//! face). Each frame the shadow-casting point and spot lights a main view
//! sees ask for a tile size from their size on screen (a power of two,
//! [`MIN_TILE`]..=[`MAX_TILE`]), the largest halved until all fit; tiles
//! come from a buddy allocator over the atlas. The policy is stable: a light keeps its tiles while the size it
//! asks for stays within half to twice theirs, lights are served in order
//! of screen size (then id), a light that no longer asks gives its tiles
//! back, and a light that finds no room at any size is not shadowed this
//! frame (counted). A stationary or static light (`crate::Mobility`)
//! keeps the size it got while it stays in view (unless the atlas runs
//! short), so moving the camera never re-renders its shadow. At 4096² the
//! atlas holds 64 point lights at 256² per face, or 170 at the smallest
//! tiles.
//!
//! **Cached**: a tile's depth is kept from frame to frame and rendered
//! again only when its light moved or changed shape, when it got a new
//! tile, or when a shadow caster that changed this frame (added, removed,
//! moved, given new dynamic data: `Scene::shadow_changes`) or one that
//! draws dynamically touches the light's sphere; `r.Shadow.Cache=0` renders
//! every tile every frame. A proxy that reports its geometry changes
//! (`PrimitiveSceneProxy::reports_geometry_changes`: procedural meshes by
//! section, instanced meshes by instance) invalidates only the parts that
//! changed, and only those a shadow pass draws (not a translucent water
//! section); its dynamic path is not taken to change every frame. A kept tile costs nothing: no view, no culling, no
//! draw. A rendered tile is a typed shadow view (`ShadowAtlasTile`) with
//! its own culling, its shadow-depth draws built from the casters' cached
//! commands like any view's.

use crate::scene::{Light, LightId, Mobility, SceneLights};
pub use crate::settings::AtlasSettings;
use crate::view::{SceneView, ViewKind};
use glam::{Vec3, Vec4};
use rhi_vulkan::Rect;
use std::collections::HashMap;

/// The smallest tile, in texels.
pub const MIN_TILE: u32 = 128;
/// The largest tile, in texels.
pub const MAX_TILE: u32 = 1024;

/// The cube faces of a point light: the direction each looks along and its up.
const CUBE_FACES: [(Vec3, Vec3); 6] =
    [(Vec3::X, Vec3::Z), (Vec3::NEG_X, Vec3::Z), (Vec3::Y, Vec3::Z), (Vec3::NEG_Y, Vec3::Z), (Vec3::Z, Vec3::Y), (Vec3::NEG_Z, Vec3::Y)];

/// A buddy allocator of square tiles over a square atlas.
#[derive(Clone, Debug)]
struct TileAllocator {
    size: u32,
    /// Per level (0: the whole atlas, each next half the side), the free
    /// squares' corners.
    free: Vec<Vec<(u32, u32)>>,
}

impl TileAllocator {
    fn new(size: u32) -> Self {
        let levels = (size / MIN_TILE).max(1).ilog2() as usize + 1;
        let mut free = vec![Vec::new(); levels];
        free[0].push((0, 0));
        Self { size, free }
    }

    fn level(&self, tile: u32) -> Option<usize> {
        let l = (self.size / tile).max(1).ilog2() as usize;
        (l < self.free.len() && self.size >> l == tile).then_some(l)
    }

    /// A free square of side `tile`, split from a larger one if needed.
    fn alloc(&mut self, tile: u32) -> Option<(u32, u32)> {
        let level = self.level(tile)?;
        let from = (0..=level).rev().find(|&l| !self.free[l].is_empty())?;
        let mut at = self.free[from].pop()?;
        for l in from..level {
            // Keep the first quarter, free the other three.
            let half = self.size >> (l + 1);
            let (x, y) = at;
            self.free[l + 1].extend([(x + half, y + half), (x, y + half), (x + half, y)]);
            at = (x, y);
        }
        Some(at)
    }

    /// Gives a square back, merging it with its free buddies.
    fn release(&mut self, (mut x, mut y): (u32, u32), tile: u32) {
        let Some(mut level) = self.level(tile) else { return };
        while level > 0 {
            let side = self.size >> level;
            let parent = (x / (2 * side) * 2 * side, y / (2 * side) * 2 * side);
            let quarters = [(0, 0), (side, 0), (0, side), (side, side)].map(|(dx, dy)| (parent.0 + dx, parent.1 + dy));
            let others: Vec<(u32, u32)> = quarters.into_iter().filter(|&q| q != (x, y)).collect();
            if !others.iter().all(|q| self.free[level].contains(q)) {
                break;
            }
            self.free[level].retain(|q| !others.contains(q));
            (x, y) = parent;
            level -= 1;
        }
        self.free[level].push((x, y));
    }
}

/// What a light's shadow depends on besides the casters: placement and shape.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ShadowKey {
    position: Vec3,
    direction: Vec3,
    radius: f32,
    outer_cone: f32,
    /// The light's bounding sphere (a spot light's around its cone): what
    /// must be in view, and what a changed caster must touch.
    bounds: Vec4,
}

impl ShadowKey {
    fn of(light: &Light) -> Option<Self> {
        let bounds = light.bounding_sphere()?;
        match light {
            Light::Point(p) => Some(Self { position: p.position, direction: Vec3::ZERO, radius: p.radius, outer_cone: 0.0, bounds }),
            Light::Spot(s) => {
                Some(Self { position: s.position, direction: s.direction.normalize(), radius: s.radius, outer_cone: s.outer_cone, bounds })
            }
            Light::Directional(_) => None,
        }
    }

    fn faces(&self) -> usize {
        if self.direction == Vec3::ZERO {
            6
        } else {
            1
        }
    }
}

/// A shadowed light's tiles.
#[derive(Clone, Debug)]
struct Assignment {
    tile: u32,
    corners: Vec<(u32, u32)>,
    key: ShadowKey,
    /// The tiles hold this key's shadow as of the last rendered frame.
    valid: bool,
}

/// One tile's view and what the shader needs to sample it.
#[derive(Clone, Debug)]
pub struct AtlasTile {
    /// The light it belongs to.
    pub light: LightId,
    /// Its shadow view (kind `ShadowAtlasTile`, viewport its square).
    pub view: SceneView,
    /// World size of a texel at distance 1 from the light.
    pub texel_at_unit: f32,
    /// Rendered this frame (else kept from an earlier one).
    pub render: bool,
}

/// The atlas's frame: every allocated tile (in light order, a point
/// light's six faces in the order +X, -X, +Y, -Y, +Z, -Z) and each shadowed light's
/// first tile.
#[derive(Clone, Debug, Default)]
pub struct AtlasFrame {
    /// Every allocated tile.
    pub tiles: Vec<AtlasTile>,
    /// Each shadowed light's first tile in `tiles`.
    pub first_tile: HashMap<LightId, u32>,
    /// Shadow-casting lights in view that found no room.
    pub unshadowed: u64,
}

impl AtlasFrame {
    /// Tiles rendered this frame.
    pub fn rendered(&self) -> usize {
        self.tiles.iter().filter(|t| t.render).count()
    }
}

/// The atlas's state from frame to frame (module docs).
#[derive(Debug)]
pub struct ShadowAtlas {
    allocator: TileAllocator,
    assigned: HashMap<LightId, Assignment>,
}

impl Default for ShadowAtlas {
    fn default() -> Self {
        Self { allocator: TileAllocator::new(4096), assigned: HashMap::new() }
    }
}

impl ShadowAtlas {
    /// The atlas's side in texels.
    pub fn size(&self) -> u32 {
        self.allocator.size
    }

    /// Tiles allocated.
    pub fn tiles(&self) -> usize {
        self.assigned.values().map(|a| a.corners.len()).sum()
    }

    /// Gives every tile back (no light is shadowed this frame).
    pub fn release_all(&mut self) {
        if !self.assigned.is_empty() {
            self.allocator = TileAllocator::new(self.allocator.size);
            self.assigned.clear();
        }
    }

    /// Forgets every tile's contents (the atlas texture was made anew).
    pub fn invalidate(&mut self) {
        for a in self.assigned.values_mut() {
            a.valid = false;
        }
    }

    /// Plans the frame: tiles for the shadow-casting point and spot lights
    /// `view` sees, which of them to render (`changes`: the spheres of the
    /// casters that changed or draw dynamically). Marks the rendered tiles
    /// valid: the caller renders them this frame.
    pub fn plan(&mut self, lights: &SceneLights, view: &SceneView, changes: &[Vec4], settings: AtlasSettings) -> AtlasFrame {
        if settings.size != self.allocator.size {
            self.allocator = TileAllocator::new(settings.size);
            self.assigned.clear();
        }
        let wanted = self.wanted(lights, view);
        // Lights no longer shadowed, or asking for a size out of hysteresis, give their tiles back.
        let wanted_size: HashMap<LightId, u32> = wanted.iter().map(|w| (w.0, w.2)).collect();
        let mut gone: Vec<LightId> = self
            .assigned
            .iter()
            .filter(|(id, a)| wanted_size.get(id).is_none_or(|&t| t > a.tile * 2 || t * 2 < a.tile))
            .map(|(id, _)| *id)
            .collect();
        gone.sort_unstable();
        for id in gone {
            let a = self.assigned.remove(&id).expect("assigned");
            for c in a.corners {
                self.allocator.release(c, a.tile);
            }
        }
        let mut frame = AtlasFrame::default();
        for (id, key, tile) in wanted {
            if !self.assigned.contains_key(&id) && !self.assign(id, key, tile) {
                frame.unshadowed += 1;
                continue;
            }
            let a = self.assigned.get_mut(&id).expect("assigned");
            let touched = changes.iter().any(|c| c.truncate().distance_squared(key.bounds.truncate()) <= (c.w + key.bounds.w).powi(2));
            let render = !settings.cache || !a.valid || a.key != key || touched;
            a.key = key;
            a.valid = true;
            frame.first_tile.insert(id, frame.tiles.len() as u32);
            let (tile, corners) = (a.tile, a.corners.clone());
            for (face, corner) in corners.into_iter().enumerate() {
                let rect = Rect::new(corner.0 as i32, corner.1 as i32, tile, tile);
                let (view, texel_at_unit) = tile_view(&key, face, rect, frame.tiles.len() as u16);
                frame.tiles.push(AtlasTile { light: id, view, texel_at_unit, render });
            }
        }
        frame
    }

    /// The shadow-casting point and spot lights `view` sees with their
    /// keys and tile sizes, by screen size (largest first), then id.
    fn wanted(&self, lights: &SceneLights, view: &SceneView) -> Vec<(LightId, ShadowKey, u32)> {
        let frustum = view.frustum();
        let height = view.viewport.height as f32;
        let mut wanted: Vec<(LightId, ShadowKey, u32, f32)> = lights
            .shadowed_local()
            .filter_map(|(id, light)| {
                let key = ShadowKey::of(light)?;
                if frustum.sphere_outside(key.bounds.truncate(), key.bounds.w) {
                    return None;
                }
                let screen = view.screen_size(key.position, key.radius).min(4.0);
                // A light that does not move keeps the size it has, so the
                // camera never re-renders its shadow.
                let kept = self.assigned.get(&id).filter(|a| light.mobility() != Mobility::Movable && a.key == key).map(|a| a.tile);
                let on_screen = ((screen * height).max(1.0) as u32).next_power_of_two();
                let tile = kept.unwrap_or(on_screen).clamp(MIN_TILE, MAX_TILE.min(self.allocator.size));
                Some((id, key, tile, screen))
            })
            .collect();
        wanted.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)));
        // Within the atlas (less a share for the buddy allocator's
        // fragmentation): the largest tiles halve first, until all fit or
        // all are at the smallest size.
        let budget = (self.allocator.size as u64).pow(2) * 7 / 8;
        let area = |w: &[(LightId, ShadowKey, u32, f32)]| w.iter().map(|(_, k, t, _)| u64::from(*t).pow(2) * k.faces() as u64).sum::<u64>();
        while area(&wanted) > budget {
            let largest = wanted.iter().map(|w| w.2).max().unwrap_or(MIN_TILE);
            if largest <= MIN_TILE {
                break;
            }
            for w in wanted.iter_mut().filter(|w| w.2 == largest) {
                w.2 /= 2;
            }
        }
        wanted.into_iter().map(|(id, key, tile, _)| (id, key, tile)).collect()
    }

    /// Gives light `id` its tiles at `tile` or the largest smaller size
    /// that fits; false when none does.
    fn assign(&mut self, id: LightId, key: ShadowKey, mut tile: u32) -> bool {
        loop {
            let mut corners = Vec::with_capacity(key.faces());
            for _ in 0..key.faces() {
                match self.allocator.alloc(tile) {
                    Some(c) => corners.push(c),
                    None => break,
                }
            }
            if corners.len() == key.faces() {
                self.assigned.insert(id, Assignment { tile, corners, key, valid: false });
                return true;
            }
            for c in corners {
                self.allocator.release(c, tile);
            }
            if tile <= MIN_TILE {
                return false;
            }
            tile /= 2;
        }
    }
}

/// The shadow view of face `face` of a light (a spot light has one), drawn
/// into `rect`; and the world size of one of its texels at distance 1.
fn tile_view(key: &ShadowKey, face: usize, rect: Rect, index: u16) -> (SceneView, f32) {
    let (direction, up, fov) = if key.faces() == 6 {
        // A little over 90 degrees: the filter's taps at a face's edge stay
        // inside its tile.
        let (d, up) = CUBE_FACES[face];
        (d, up, 2.0 * (1.0 + 3.0 / rect.width as f32).atan())
    } else {
        let up = if key.direction.z.abs() > 0.99 { Vec3::Y } else { Vec3::Z };
        (key.direction, up, (2.0 * key.outer_cone + 0.1).min(3.0))
    };
    let near = (key.radius * 0.002).max(0.01);
    let view = SceneView::perspective(key.position, key.position + direction, up, fov, near, key.radius.max(near * 2.0), rect)
        .expect("a shadow view of a valid light");
    let texel_at_unit = 2.0 * (fov / 2.0).tan() / rect.width as f32;
    (SceneView { kind: ViewKind::ShadowAtlasTile { tile: index }, ..view }, texel_at_unit)
}

/// `p` in the view's NDC (x, y), when in front of it (tests).
#[cfg(test)]
fn projects(view: &SceneView, p: Vec3) -> Option<glam::Vec2> {
    let clip = view.view_proj();
    let c = clip * p.extend(1.0);
    (c.w > 0.0).then(|| (c.truncate() / c.w).truncate())
}

#[cfg(test)]
mod tests;
