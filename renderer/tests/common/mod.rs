//! Shared helpers of the renderer's GPU tests: scenes of cubes and frame
//! rendering. The device, the validation check and image comparison come
//! from the workspace's test harness (`test-support`).
#![allow(dead_code)]

use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::{Image, Rect};
use std::sync::Arc;
// Each test file uses a part of these.
#[allow(unused_imports)]
pub use test_support::{assert_clean, assert_images_equal, diff_pixels, render_thread, validation};

pub const W: u32 = 192;
pub const H: u32 = 128;

pub fn cube_mesh() -> Arc<StaticMeshRenderData> {
    StaticMeshRenderData::new(vec![shapes::cube(1.0)]).unwrap()
}

/// A camera above the XY plane looking down at the origin.
pub fn top_view(height: f32) -> SceneView {
    SceneView::perspective(Vec3::new(0.0, -0.01, height), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap()
}

pub fn family(views: Vec<SceneView>) -> ViewFamily {
    ViewFamily::new(W, H, views)
}

pub fn sun(rt: &mut RenderThread, shadows: bool) -> LightId {
    rt.add_light(Light::Directional(DirectionalLight {
        direction: Vec3::new(0.3, 0.2, -1.0),
        color: Vec3::ONE,
        intensity: 2.5,
        cast_shadows: shadows,
        ..Default::default()
    }))
    .unwrap()
}

/// `count` cubes on a grid in the XY plane, cycling through `materials`.
pub fn cube_grid(rt: &mut RenderThread, count: usize, materials: &[MaterialId], spacing: f32) -> Vec<PrimitiveId> {
    let mesh = cube_mesh();
    let side = (count as f32).sqrt().ceil() as usize;
    let prims = (0..count)
        .map(|i| {
            let (x, y) = ((i % side) as f32, (i / side) as f32);
            let offset = (side as f32 - 1.0) * spacing / 2.0;
            let m = Mat4::from_scale_rotation_translation(
                Vec3::splat(spacing * 0.6),
                glam::Quat::IDENTITY,
                Vec3::new(x * spacing - offset, y * spacing - offset, 0.0),
            );
            let material = materials[i % materials.len()];
            (Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![material])) as Box<dyn PrimitiveSceneProxy>, m)
        })
        .collect();
    rt.add_primitives(prims).unwrap()
}

/// Renders one frame, waits, returns its stats and image.
pub fn frame(rt: &mut RenderThread, family: &ViewFamily) -> (FrameStats, Image) {
    rt.render_frame(FrameRequest { family: family.clone(), read_back: true, execute: true }).unwrap();
    let image = rt.read_back().unwrap().expect("image");
    (rt.last_stats().unwrap().expect("stats"), image)
}

pub fn colors(n: usize) -> Vec<Material> {
    (0..n)
        .map(|i| {
            let hue = i as f32 / n as f32;
            Material::colored(Vec4::new(0.2 + 0.8 * hue, 0.9 - 0.7 * hue, 0.3, 1.0))
        })
        .collect()
}

pub fn luminance(p: [u8; 4]) -> u32 {
    p[0] as u32 + p[1] as u32 + p[2] as u32
}

/// A render thread on a device with `slots` frame slots and
/// `r.FramesInFlight` = `frames_in_flight` (validation on, asserted).
pub fn render_thread_in_flight(mode: RenderThreadMode, slots: u32, frames_in_flight: u32) -> RenderThread {
    let desc = rhi_vulkan::DeviceDesc { frames_in_flight: slots, ..test_support::device_desc() };
    let mut rt = RenderThread::new(&desc, mode).expect("a Vulkan device");
    test_support::assert_validation_enabled(&mut rt);
    rt.set_cvar(cvars::SHADOW_MAP_SIZE, "256").unwrap();
    rt.set_cvar(cvars::FRAMES_IN_FLIGHT, &frames_in_flight.to_string()).unwrap();
    rt
}

// Lighting and tone-mapping tests.

/// A camera straight above the origin, orthographic, `width` scene units wide.
pub fn ortho_down(width: f32) -> SceneView {
    SceneView::orthographic(
        Vec3::new(0.0, 0.0, 10.0),
        Vec3::ZERO,
        Vec3::Y,
        width,
        width * H as f32 / W as f32,
        0.1,
        50.0,
        Rect::from_size(W, H),
    )
    .unwrap()
}

pub fn plane_at(rt: &mut RenderThread, material: MaterialId, size: f32, transform: Mat4) -> PrimitiveId {
    let plane = StaticMeshRenderData::new(vec![shapes::plane(size)]).unwrap();
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(plane, vec![material])), transform).unwrap()
}

pub fn material(base_color: Vec4, metallic: f32, roughness: f32, specular: f32, emissive: Vec3) -> Material {
    Material { params: MaterialParams { base_color, metallic, roughness, specular, emissive, ..Default::default() }, ..Material::default() }
}

pub fn sun_from(rt: &mut RenderThread, direction: Vec3, intensity: f32) -> LightId {
    rt.add_light(Light::Directional(DirectionalLight { direction, color: Vec3::ONE, intensity, cast_shadows: false, ..Default::default() }))
        .unwrap()
}

/// An sRGB byte as linear light.
pub fn linear(c: u8) -> f32 {
    let c = c as f32 / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

pub fn rgb_linear(p: [u8; 4]) -> Vec3 {
    Vec3::new(linear(p[0]), linear(p[1]), linear(p[2]))
}

pub fn centre(img: &Image) -> [u8; 4] {
    img.pixel(W / 2, H / 2)
}

/// A static mesh proxy with one behaviour changed, for tests of the scene's
/// questions to proxies: drawn only in views `draw_in` accepts (asked per
/// view, as UE's owner-no-see), and whether it may be occluded.
pub struct CustomizedProxy {
    pub inner: StaticMeshSceneProxy,
    pub draw_in: Option<fn(&SceneView) -> bool>,
    pub can_be_occluded: bool,
}

impl CustomizedProxy {
    /// `inner` unchanged until a field is set.
    pub fn new(inner: StaticMeshSceneProxy) -> Self {
        Self { inner, draw_in: None, can_be_occluded: true }
    }
}

impl PrimitiveSceneProxy for CustomizedProxy {
    fn local_bounds(&self) -> Bounds {
        self.inner.local_bounds()
    }
    fn view_relevance(&self, view: &SceneView) -> ViewRelevance {
        let r = self.inner.view_relevance(view);
        ViewRelevance { draw: r.draw && self.draw_in.is_none_or(|f| f(view)), ..r }
    }
    fn view_dependent_relevance(&self) -> bool {
        self.draw_in.is_some()
    }
    fn can_be_occluded(&self) -> bool {
        self.can_be_occluded
    }
    fn occluder(&self, lod: u8) -> Option<OccluderMesh<'_>> {
        self.inner.occluder(lod)
    }
    fn draw_static_elements(&self, out: &mut Vec<MeshBatch>) {
        self.inner.draw_static_elements(out)
    }
    fn create_render_resources(&mut self, device: &rhi_vulkan::Device) -> rhi_vulkan::Result<()> {
        self.inner.create_render_resources(device)
    }
    fn release_render_resources(&mut self, device: &rhi_vulkan::Device) {
        self.inner.release_render_resources(device)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

// Lights and shadows tests.

/// A render thread that shades only the scene's lights, linearly: no
/// ambient, no tone-mapping curve, `exposure`, and the console variables
/// `more`.
pub fn lights_only(exposure: f32, more: &[(&str, &str)]) -> RenderThread {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let exposure = exposure.to_string();
    for (name, value) in
        [(cvars::TONEMAPPER, "0"), (cvars::SKY_LIGHT_INTENSITY, "0"), (cvars::EXPOSURE, exposure.as_str())].iter().chain(more)
    {
        rt.set_cvar(name, value).unwrap();
    }
    rt
}

/// A Lambert plane (specular 0: no Fresnel, no highlight) of base colour
/// `albedo` and edge `size` at the origin, facing +Z.
pub fn lambert_plane(rt: &mut RenderThread, albedo: f32, size: f32) -> PrimitiveId {
    let m = rt.create_material(material(Vec4::new(albedo, albedo, albedo, 1.0), 0.0, 1.0, 0.0, Vec3::ZERO)).unwrap();
    plane_at(rt, m, size, Mat4::IDENTITY)
}

/// The last of three frames of `family` (frames in flight settled), with
/// the validation layer's silence asserted.
pub fn settled_frame(rt: &mut RenderThread, family: &ViewFamily) -> (FrameStats, Image) {
    frame(rt, family);
    frame(rt, family);
    let last = frame(rt, family);
    assert_clean(rt);
    last
}
