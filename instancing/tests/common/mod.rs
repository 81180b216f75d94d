//! Helpers shared by the integration tests (the GPU ones on top of the
//! workspace's test harness, `test-support`).
#![allow(dead_code)]

use engine_core::World;
use glam::{Affine3A, Quat, Vec3};
use instancing::*;
use renderer::{RenderThread, RenderThreadMode};
// Each test file uses a part of these.
#[allow(unused_imports)]
pub use test_support::{assert_clean, assert_images_equal, Rng};

/// A unit cube mesh (half-extent 1) with three LODs at screen sizes 1, 0.3, 0.1.
pub fn cube_mesh() -> InstancedMesh {
    InstancedMesh::simple(Bounds::new(Vec3::ZERO, Vec3::ONE, 3f32.sqrt()), 512, 1536, &[1.0, 0.3, 0.1]).unwrap()
}

/// A render thread of the test's own (the harness's: real device,
/// validation on and asserted on) with the instancing cvars registered.
pub fn render_thread() -> RenderThread {
    let mut rt = test_support::render_thread(RenderThreadMode::Threaded);
    rt.add_feature(&instancing::FEATURE).unwrap();
    rt
}

/// A threaded render thread of the test's own on a device with 3 frame
/// slots, `frames_in_flight` of them used (`r.FramesInFlight`), validation
/// on and asserted on, small shadow maps, the instancing cvars registered.
pub fn render_thread_in_flight(frames_in_flight: u32) -> RenderThread {
    let desc = rhi_vulkan::DeviceDesc { frames_in_flight: 3, ..test_support::device_desc() };
    let mut rt = RenderThread::new(&desc, RenderThreadMode::Threaded).expect("a Vulkan device");
    test_support::assert_validation_enabled(&mut rt);
    rt.add_feature(&instancing::FEATURE).unwrap();
    rt.set_cvar(renderer::cvars::SHADOW_MAP_SIZE, "256").unwrap();
    rt.set_cvar(renderer::cvars::FRAMES_IN_FLIGHT, &frames_in_flight.to_string()).unwrap();
    rt
}

/// A world on [`render_thread`].
pub fn world() -> World {
    World::new(Some(render_thread()))
}

/// A directional light from above (tilted), shadowed or not.
pub fn sun(world: &mut World, cast_shadows: bool) {
    world
        .render_thread()
        .expect("a world with a render thread")
        .add_light(renderer::Light::Directional(renderer::DirectionalLight {
            direction: Vec3::new(0.3, 0.2, -1.0),
            color: Vec3::ONE,
            intensity: 2.0,
            cast_shadows,
            ..Default::default()
        }))
        .unwrap();
}

/// The harness's check on the world's render thread: the layer active, no
/// validation error or warning so far.
#[track_caller]
pub fn assert_world_clean(w: &mut World) {
    test_support::assert_clean(w.render_thread().expect("a world with a render thread"));
}

/// `n` randomly placed, rotated and scaled instances in a `size`-wide square
/// on the XZ plane (Y up).
pub fn scattered(n: usize, size: f32, seed: u64) -> Vec<Affine3A> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(rng.range_f32(0.5, 2.0)),
                Quat::from_rotation_y(rng.range_f32(0.0, std::f32::consts::TAU)),
                Vec3::new(rng.range_f32(-size, size) * 0.5, rng.range_f32(0.0, 4.0), rng.range_f32(-size, size) * 0.5),
            )
        })
        .collect()
}

pub fn store_with(transforms: &[Affine3A]) -> InstanceStore {
    let mut s = InstanceStore::new(*cube_mesh().bounds());
    s.add_instances(transforms).unwrap();
    s.take_dirty_ranges();
    s
}

/// The visible set as sorted (index, lod, fade bits) triples, for comparing
/// outputs that differ only in order.
pub fn visible_set(out: &CullOutput) -> Vec<(u32, usize, u32)> {
    let mut v: Vec<(u32, usize, u32)> = out
        .lods
        .iter()
        .enumerate()
        .flat_map(|(lod, b)| b.instances.iter().zip(&b.fades).map(move |(&i, &f)| (i, lod, f.to_bits())))
        .collect();
    v.sort_unstable();
    v
}

pub fn translate(x: f32, y: f32, z: f32) -> Affine3A {
    Affine3A::from_translation(Vec3::new(x, y, z))
}

/// A proxy drawing every instance of `store` (bounds tightened first) with
/// `material`, no cull distances, at the origin.
pub fn store_proxy(
    mesh: &std::sync::Arc<renderer::StaticMeshRenderData>,
    store: &mut InstanceStore,
    material: renderer::MaterialId,
) -> InstancedStaticMeshSceneProxy {
    let bounds = store.tighten_bounds();
    let mut gpu = Vec::new();
    store.write_gpu_data(0..store.instance_count(), &mut gpu).unwrap();
    let instances = gpu.iter().map(|g| InstanceStreamData::new(g, &[])).collect();
    InstancedStaticMeshSceneProxy::new(
        mesh.clone(),
        vec![material],
        instances,
        Bounds::from_box(bounds.min, bounds.max),
        Affine3A::IDENTITY,
        CullDistances::NONE,
    )
    .unwrap()
}
