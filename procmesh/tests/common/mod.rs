//! Helpers of procmesh's GPU tests: a top-down camera, frames and pixel
//! checks. The render thread, the validation check and image comparison
//! come from the workspace's test harness (`test-support`).
#![allow(dead_code)]

use glam::{Vec2, Vec3, Vec4};
use procmesh::{ProcMeshData, SectionData};
use renderer::*;
use rhi_vulkan::{Image, Rect};
// Each test file uses a part of these.
#[allow(unused_imports)]
pub use test_support::{assert_clean, assert_images_equal, diff_pixels, render_thread};

pub const W: u32 = 160;
pub const H: u32 = 120;

/// A camera above the XY plane looking down at the origin (+X right, +Y up
/// on screen).
pub fn top_view() -> SceneView {
    SceneView::perspective(Vec3::new(0.0, -0.01, 8.0), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 100.0, Rect::from_size(W, H)).unwrap()
}

pub fn family() -> ViewFamily {
    ViewFamily::new(W, H, vec![top_view()])
}

/// The pixel a world point lands on in [`top_view`].
pub fn pixel_of(p: Vec3) -> (u32, u32) {
    let c = top_view().view_proj() * p.extend(1.0);
    let ndc = c.truncate() / c.w;
    (((ndc.x * 0.5 + 0.5) * W as f32) as u32, ((ndc.y * 0.5 + 0.5) * H as f32) as u32)
}

pub fn pixel_at(image: &Image, p: Vec3) -> [u8; 4] {
    let (x, y) = pixel_of(p);
    image.pixel(x, y)
}

/// The clear color, as read back (a corner nothing covers).
pub fn background(image: &Image) -> [u8; 4] {
    image.pixel(0, 0)
}

/// A shadow-casting sun, with one shadow cascade: the tests count each
/// pass's commands, and every cascade is a shadow view of its own.
pub fn sun(rt: &mut RenderThread) {
    rt.set_cvar(renderer::cvars::SHADOW_CSM_MAX_CASCADES, "1").unwrap();
    rt.add_light(Light::Directional(DirectionalLight {
        direction: Vec3::new(0.3, 0.2, -1.0),
        color: Vec3::ONE,
        intensity: 2.5,
        cast_shadows: true,
        ..Default::default()
    }))
    .unwrap();
}

pub fn red_and_blue(rt: &mut RenderThread) -> (MaterialId, MaterialId) {
    let red = rt.create_material(Material::colored(Vec4::new(0.9, 0.1, 0.1, 1.0))).unwrap();
    let blue = rt.create_material(Material::colored(Vec4::new(0.1, 0.1, 0.9, 1.0))).unwrap();
    (red, blue)
}

/// An `n` x `n` vertex grid over `min..max` in the XY plane, facing +Z
/// (counter-clockwise seen from above).
pub struct Grid {
    pub positions: Vec<Vec3>,
    pub triangles: Vec<u32>,
    pub uvs: Vec<Vec2>,
}

pub fn grid(min: Vec2, max: Vec2, n: u32) -> Grid {
    let mut positions = Vec::new();
    let mut uvs = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let t = Vec2::new(i as f32, j as f32) / (n - 1) as f32;
            positions.push((min + (max - min) * t).extend(0.0));
            uvs.push(t);
        }
    }
    let mut triangles = Vec::new();
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let a = j * n + i;
            triangles.extend_from_slice(&[a, a + 1, a + n + 1, a, a + n + 1, a + n]);
        }
    }
    Grid { positions, triangles, uvs }
}

/// Section 0 on the left (x -3..-0.5), section 1 on the right (x 0.5..3),
/// with materials `left` and `right`.
pub fn two_sections(left: MaterialId, right: MaterialId) -> ProcMeshData {
    let mut mesh = ProcMeshData::new();
    for (index, x0, material) in [(0, -3.0, left), (1, 0.5, right)] {
        let g = grid(Vec2::new(x0, -1.5), Vec2::new(x0 + 2.5, 1.5), 5);
        mesh.create_mesh_section(index, SectionData::new(&g.positions, &g.triangles).uv0(&g.uvs), false).unwrap();
        mesh.set_material(index, Some(material.into())).unwrap();
    }
    mesh
}

pub const LEFT: Vec3 = Vec3::new(-1.75, 0.0, 0.0);
pub const RIGHT: Vec3 = Vec3::new(1.75, 0.0, 0.0);

/// Renders one frame, waits, returns its stats and image.
pub fn frame(rt: &mut RenderThread) -> (FrameStats, Image) {
    rt.render_frame(FrameRequest { family: family(), read_back: true, execute: true }).unwrap();
    let image = rt.read_back().unwrap().expect("image");
    (rt.last_stats().unwrap().expect("stats"), image)
}

pub fn is_reddish(p: [u8; 4]) -> bool {
    let [r, _, b, _] = p.map(u32::from);
    r > b + 60
}

pub fn is_bluish(p: [u8; 4]) -> bool {
    let [r, _, b, _] = p.map(u32::from);
    b > r + 60
}
