//! Helpers of the GPU tests: a camera, hand-placed particles, and frame
//! rendering. The render thread, the validation check and image comparison
//! come from the workspace's test harness (`test-support`).
#![allow(dead_code)]

use glam::{Mat4, Vec2, Vec3, Vec4};
use particles::*;
use renderer::{FrameRequest, FrameStats, PrimitiveId, RenderThread, SceneView, ViewFamily};
use rhi_vulkan::{Image, Rect};
// Each test file uses a part of these.
#[allow(unused_imports)]
pub use renderer::RenderThreadMode;
#[allow(unused_imports)]
pub use test_support::{assert_clean, assert_images_equal, diff_pixels, render_thread};

pub const W: u32 = 160;
pub const H: u32 = 120;

/// A camera on -Y looking at the origin: world +X is screen right, +Z up;
/// one world unit is about 14 pixels at the origin.
pub fn front_view() -> SceneView {
    SceneView::perspective(Vec3::new(0.0, -10.0, 0.0), Vec3::ZERO, Vec3::Z, 0.8, 0.1, 100.0, Rect::from_size(W, H)).unwrap()
}

/// The pixel where world point `p` lands in [`front_view`].
pub fn project(p: Vec3) -> (u32, u32) {
    let clip = front_view().view_proj() * p.extend(1.0);
    let ndc = clip.truncate() / clip.w;
    let x = (ndc.x * 0.5 + 0.5) * W as f32;
    let y = (ndc.y * 0.5 + 0.5) * H as f32;
    (x as u32, y as u32)
}

pub fn family() -> ViewFamily {
    ViewFamily::new(W, H, vec![front_view()])
}

/// Renders one frame of `family`, waits, returns its stats and image.
pub fn frame_of(rt: &mut RenderThread, family: &ViewFamily) -> (FrameStats, Image) {
    rt.render_frame(FrameRequest { family: family.clone(), read_back: true, execute: true }).unwrap();
    let image = rt.read_back().unwrap().expect("image");
    (rt.last_stats().unwrap().expect("stats"), image)
}

pub fn frame(rt: &mut RenderThread) -> (FrameStats, Image) {
    frame_of(rt, &family())
}

/// One hand-placed particle.
#[derive(Clone, Copy, Debug)]
pub struct P {
    pub pos: Vec3,
    pub old: Vec3,
    pub size: Vec2,
    pub rotation: f32,
    pub color: Vec4,
}

impl P {
    pub fn at(pos: Vec3, size: f32, color: Vec4) -> Self {
        P { pos, old: pos, size: Vec2::splat(size), rotation: 0.0, color }
    }
}

pub fn emitter_data(material: &str, blend: BlendMode, alignment: ScreenAlignment, sort: SortMode, ps: &[P]) -> EmitterDynamicData {
    EmitterDynamicData::with_current_values(
        material,
        blend,
        alignment,
        sort,
        ps.iter().map(|p| p.pos).collect(),
        ps.iter().map(|p| p.old).collect(),
        ps.iter().map(|p| p.size).collect(),
        ps.iter().map(|p| p.rotation).collect(),
        ps.iter().map(|p| p.color).collect(),
        ps.iter().map(|_| 0.5).collect(),
    )
}

/// A snapshot of `emitters` with the bounds of their sprites.
pub fn snapshot(emitters: Vec<EmitterDynamicData>) -> ParticleSystemDynamicData {
    let bounds = emitters.iter().filter_map(|e| particles::bounds::of_sprites(&e.positions, &e.sizes())).reduce(Aabb::union);
    ParticleSystemDynamicData { emitters, bounds }
}

/// Adds a proxy drawing `data` with white sprite materials of each
/// emitter's blend mode.
pub fn add_snapshot(rt: &mut RenderThread, data: ParticleSystemDynamicData) -> PrimitiveId {
    let mut materials = ParticleMaterials::new();
    for e in &data.emitters {
        if !materials.contains(&e.material) {
            let id = rt.create_material(sprite_material(e.blend_mode, Vec4::ONE, 0.0)).unwrap();
            materials.insert(&e.material, id);
        }
    }
    rt.add_primitive(Box::new(ParticleSystemSceneProxy::new(materials, data, Vec3::ZERO)), Mat4::IDENTITY).unwrap()
}

pub fn luminance(p: [u8; 4]) -> u32 {
    p[0] as u32 + p[1] as u32 + p[2] as u32
}

/// Pixels clearly brighter than the clear colour (about 40 per channel in sRGB).
pub fn lit_pixels(img: &Image) -> usize {
    img.rgba8.chunks(4).filter(|p| luminance([p[0], p[1], p[2], p[3]]) > 200).count()
}
