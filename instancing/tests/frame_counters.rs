//! The visible-instance counter (`VISIBLE_INSTANCES_COUNTER`) an instanced
//! proxy reports into the frame's stats: on the GPU path it is the GPU
//! cull's count, read back when the frame retires and delivered in the
//! stats of the frame it describes (frames in flight or not); on the CPU
//! path it is counted while the frame is collected. Proxies' counts are summed.

mod common;

use std::sync::Arc;

use glam::{Affine3A, Mat4, Vec3, Vec4};
use instancing::*;
use renderer::*;
use rhi_vulkan::Rect;

const W: u32 = 160;
const H: u32 = 120;

use common::render_thread_in_flight;

fn mesh() -> Arc<StaticMeshRenderData> {
    StaticMeshRenderData::new(vec![shapes::cube(1.0)]).unwrap()
}

/// `n` cubes in a grid on the ground, `offset` along X.
fn store_of(mesh: &StaticMeshRenderData, n: u32, offset: f32) -> InstanceStore {
    let b = mesh.bounds();
    let mut s = InstanceStore::new(b);
    let side = (n as f32).sqrt().ceil() as u32;
    let transforms: Vec<Affine3A> = (0..n)
        .map(|i| Affine3A::from_translation(Vec3::new((i % side) as f32 * 3.0 - 150.0 + offset, (i / side) as f32 * 3.0, 0.0)))
        .collect();
    s.add_instances(&transforms).unwrap();
    s
}

/// Adds a proxy drawing `store`'s instances; returns its statistics handle.
fn add_proxy(rt: &mut RenderThread, mesh: &Arc<StaticMeshRenderData>, store: &mut InstanceStore, material: MaterialId) -> IsmStats {
    let proxy = common::store_proxy(mesh, store, material);
    let stats = proxy.stats();
    rt.add_primitive(Box::new(proxy), Mat4::IDENTITY).unwrap();
    stats
}

/// A camera that turns every frame, so every frame sees a different number of instances.
fn view_at(i: u64) -> SceneView {
    let target = Vec3::new(-60.0 + 25.0 * i as f32, 120.0, 0.0);
    SceneView::perspective(Vec3::new(0.0, -20.0, 15.0), target, Vec3::Z, 1.0, 0.1, 1000.0, Rect::from_size(W, H)).unwrap()
}

fn cpu_visible(store: &InstanceStore, mesh: &StaticMeshRenderData, i: u64) -> u64 {
    let view = cull_view_for(&view_at(i)).unwrap();
    let culled = cull_instances(
        store,
        &InstanceCuller::new(&instanced_mesh_for(mesh).unwrap(), &Affine3A::IDENTITY, &view, CullDistances::NONE).unwrap(),
    );
    culled.visible_count() as u64
}

#[test]
fn each_frames_stats_carry_the_gpu_culls_visible_count_of_that_frame() {
    let mesh = mesh();
    for (fif, gpu_culling) in [(1, true), (3, true), (3, false)] {
        let mut rt = render_thread_in_flight(fif);
        rt.set_cvar(CVAR_GPU_CULLING, if gpu_culling { "1" } else { "0" }).unwrap();
        let white = rt.create_material(Material::colored(Vec4::ONE)).unwrap();
        let mut stores = [store_of(&mesh, 10_000, 0.0), store_of(&mesh, 2_500, 40.0)];
        let handles: Vec<IsmStats> = stores.iter_mut().map(|s| add_proxy(&mut rt, &mesh, s, white)).collect();
        let expected: Vec<u64> = (0..6).map(|i| stores.iter().map(|s| cpu_visible(s, &mesh, i)).sum()).collect();
        assert!(expected.windows(2).all(|w| w[0] != w[1]), "each frame sees a different count: {expected:?}");
        for i in 0..6u64 {
            rt.render_frame(FrameRequest { family: ViewFamily::new(W, H, vec![view_at(i)]), read_back: false, execute: true }).unwrap();
        }
        let retired = rt.finish_frames().unwrap();
        let counts: Vec<(u64, u64)> = retired.iter().map(|f| (f.stats.frame, f.stats.counter(VISIBLE_INSTANCES_COUNTER))).collect();
        assert_eq!(
            counts,
            expected.iter().enumerate().map(|(i, &n)| (i as u64, n)).collect::<Vec<_>>(),
            "fif {fif}, GPU culling {gpu_culling}: every frame's stats carry both proxies' visible instances of that frame"
        );
        // The last frame's figure is the one the proxies' own statistics hold.
        let own: u64 = handles.iter().map(|h| h.snapshot().visible()).sum();
        assert_eq!(rt.last_stats().unwrap().map(|s| (s.frame, s.counter(VISIBLE_INSTANCES_COUNTER))), Some((5, own)));
        if gpu_culling {
            assert!(handles.iter().all(|h| h.snapshot().gpu_frame == Some(5) && h.snapshot().path == CullPath::Gpu));
        }
        common::assert_clean(&mut rt);
    }
}
