//! Where the `materials` sample puts things, shared with its test (which
//! looks at the pixels of particular objects): a studio of a checkered
//! floor and a back wall; a grid of spheres sweeping metallic (columns)
//! and roughness (rows); a brick-textured and a normal-mapped sphere; a
//! standing panel of alpha-tested leaves whose shadow falls on the wall; a
//! row of translucent spheres; and a band of [`TILES`] floor tiles, each
//! with its own material instance. Z is up; the camera looks along +Y.

use glam::Vec3;

/// The camera.
pub const EYE: Vec3 = Vec3::new(0.6, -14.5, 5.0);
pub const TARGET: Vec3 = Vec3::new(0.6, 0.0, 1.45);
pub const FOV_Y: f32 = 0.6;
pub const NEAR: f32 = 0.1;
pub const FAR: f32 = 200.0;

/// The direction the sun's light travels: from the front left, low enough
/// to rake across the normal-mapped sphere and throw the panel's shadow
/// onto the wall.
pub const SUN_DIRECTION: Vec3 = Vec3::new(0.7, 0.6, -0.4);

/// The back wall's plane (y = `WALL_Y`, facing -Y).
pub const WALL_Y: f32 = 3.0;

/// The metallic × roughness grid: columns sweep metallic 0 → 1 (left to
/// right), rows roughness 0.05 → 1 (top to bottom).
pub const GRID_COLUMNS: u32 = 6;
pub const GRID_ROWS: u32 = 5;
pub const GRID_RADIUS: f32 = 0.38;
const GRID_SPACING: f32 = 0.9;
const GRID_LEFT: f32 = -6.0;
const GRID_BOTTOM: f32 = 0.7;

pub fn grid_metallic(column: u32) -> f32 {
    column as f32 / (GRID_COLUMNS - 1) as f32
}

pub fn grid_roughness(row: u32) -> f32 {
    0.05 + 0.95 * row as f32 / (GRID_ROWS - 1) as f32
}

/// The centre of the grid's sphere at `column`, `row` (row 0 at the top).
pub fn grid_sphere(column: u32, row: u32) -> Vec3 {
    Vec3::new(GRID_LEFT + column as f32 * GRID_SPACING, 0.0, GRID_BOTTOM + (GRID_ROWS - 1 - row) as f32 * GRID_SPACING)
}

/// The textured (brick albedo) and normal-mapped spheres.
pub const FEATURE_RADIUS: f32 = 0.8;
pub const TEXTURED_SPHERE: Vec3 = Vec3::new(0.1, 0.0, 1.5);
pub const NORMAL_MAPPED_SPHERE: Vec3 = Vec3::new(2.1, 0.0, 1.5);

/// The masked panel: a square of leaves held upright between two posts, facing the camera.
pub const PANEL_CENTRE: Vec3 = Vec3::new(4.2, 1.2, 2.3);
pub const PANEL_SIZE: f32 = 2.4;

/// The translucent spheres: a row in front of the grid, opacity rising left to right.
pub const TRANSLUCENT_COUNT: u32 = 5;
pub const TRANSLUCENT_RADIUS: f32 = 0.42;

pub fn translucent_sphere(i: u32) -> Vec3 {
    Vec3::new(GRID_LEFT + 0.3 + i as f32 * 1.1, -1.9, TRANSLUCENT_RADIUS)
}

pub fn translucent_opacity(i: u32) -> f32 {
    0.2 + 0.6 * i as f32 / (TRANSLUCENT_COUNT - 1) as f32
}

/// The band of floor tiles, one material instance each, whose tint changes every frame.
pub const TILES: u32 = 1000;
pub const TILE_COLUMNS: u32 = 100;
pub const TILE_SIZE: f32 = 0.09;
const TILE_PITCH: f32 = 0.1;

/// The centre of tile `i`'s top face region (tiles are `TILE_SIZE` square, 0.04 tall).
pub fn tile(i: u32) -> Vec3 {
    let (c, r) = ((i % TILE_COLUMNS) as f32, (i / TILE_COLUMNS) as f32);
    Vec3::new((c - (TILE_COLUMNS - 1) as f32 / 2.0) * TILE_PITCH + 0.6, -3.0 - r * TILE_PITCH, 0.02)
}

/// Tile `i`'s tint at `t` seconds: a rainbow wave running along the band.
pub fn tile_tint(i: u32, t: f32) -> [f32; 3] {
    let (c, r) = ((i % TILE_COLUMNS) as f32, (i / TILE_COLUMNS) as f32);
    let h = (c / TILE_COLUMNS as f32 + 0.03 * r - 0.25 * t).rem_euclid(1.0);
    hue(h)
}

/// A saturated colour of hue `h` in [0, 1).
fn hue(h: f32) -> [f32; 3] {
    let k = |n: f32| {
        let k = (n + h * 6.0) % 6.0;
        1.0 - k.min(4.0 - k).clamp(0.0, 1.0)
    };
    [k(5.0), k(3.0), k(1.0)].map(|c| 0.08 + 0.85 * c)
}

/// Where the point `p` lands in a `width`×`height` image (pixels from the
/// top left), as the renderer projects it.
pub fn project(p: Vec3, width: u32, height: u32) -> (f32, f32) {
    let view = glam::camera::rh::view::look_at_mat4(EYE, TARGET, Vec3::Z);
    let proj = glam::camera::rh::proj::directx::perspective(FOV_Y, width as f32 / height as f32, NEAR, FAR);
    let ndc = (proj * view).project_point3(p);
    ((ndc.x * 0.5 + 0.5) * width as f32, (0.5 - ndc.y * 0.5) * height as f32)
}

/// Where the sun's ray through `p` meets the back wall.
pub fn shadow_on_wall(p: Vec3) -> Vec3 {
    p + SUN_DIRECTION * ((WALL_Y - p.y) / SUN_DIRECTION.y)
}
