//! Instanced static meshes with frames in flight (`r.FramesInFlight`): the
//! GPU cull's visible counts arrive with the frame they belong to, and
//! instances or whole components removed while their frames are still on
//! the GPU are clean under synchronization validation.

mod common;

use std::sync::Arc;

use glam::{Affine3A, Vec3, Vec4};
use instancing::*;
use renderer::*;
use rhi_vulkan::Rect;

const W: u32 = 160;
const H: u32 = 120;

fn render_thread_in_flight(frames_in_flight: u32) -> RenderThread {
    let desc = rhi_vulkan::DeviceDesc { frames_in_flight: 3, ..test_support::device_desc() };
    let mut rt = RenderThread::new(&desc, RenderThreadMode::Threaded).expect("a Vulkan device");
    test_support::assert_validation_enabled(&mut rt);
    register_cvars(&mut rt).unwrap();
    rt.set_cvar("r.Shadow.MapSize", "256").unwrap();
    rt.set_cvar("r.FramesInFlight", &frames_in_flight.to_string()).unwrap();
    rt
}

fn mesh() -> Arc<StaticMeshRenderData> {
    StaticMeshRenderData::new(vec![shapes::cube(1.0)]).unwrap()
}

fn store_of(mesh: &StaticMeshRenderData, n: u32) -> InstanceStore {
    let b = mesh.bounds();
    let mut s = InstanceStore::new(b);
    let side = (n as f32).sqrt().ceil() as u32;
    let transforms: Vec<Affine3A> =
        (0..n).map(|i| Affine3A::from_translation(Vec3::new((i % side) as f32 * 3.0 - 150.0, (i / side) as f32 * 3.0, 0.0))).collect();
    s.add_instances(&transforms).unwrap();
    s
}

/// A camera that turns every frame, so every frame sees a different number of instances.
fn view_at(i: u64) -> SceneView {
    let target = Vec3::new(-60.0 + 25.0 * i as f32, 120.0, 0.0);
    SceneView::perspective(Vec3::new(0.0, -20.0, 15.0), target, Vec3::Z, 1.0, 0.1, 1000.0, Rect::from_size(W, H)).unwrap()
}

fn cpu_visible(store: &InstanceStore, mesh: &StaticMeshRenderData, i: u64) -> u64 {
    let culled = cull_instances(
        store,
        &instanced_mesh_for(mesh).unwrap(),
        &Affine3A::IDENTITY,
        &cull_view_for(&view_at(i)).unwrap(),
        CullDistances::NONE,
    )
    .unwrap();
    culled.visible_count() as u64
}

#[test]
fn gpu_visible_counts_are_delivered_with_their_frame() {
    let mesh = mesh();
    for fif in [1, 3] {
        let mut rt = render_thread_in_flight(fif);
        let white = rt.create_material(Material::colored(Vec4::ONE)).unwrap();
        let mut store = store_of(&mesh, 10_000);
        let state = IsmRenderState::add(&mut rt, &mut store, mesh.clone(), vec![white], Affine3A::IDENTITY, CullDistances::NONE).unwrap();
        let expected: Vec<u64> = (0..6).map(|i| cpu_visible(&store, &mesh, i)).collect();
        assert!(expected.windows(2).all(|w| w[0] != w[1]), "each frame sees a different count: {expected:?}");
        for i in 0..6u64 {
            rt.render_frame(FrameRequest { family: ViewFamily::new(W, H, vec![view_at(i)]), read_back: false, execute: true }).unwrap();
            rt.flush().unwrap();
            let s = state.stats().snapshot();
            if fif == 1 {
                assert_eq!(s.gpu_frame, Some(i), "1 in flight: the count is the frame's own at its end");
            }
            if let Some(f) = s.gpu_frame {
                assert!(f <= i && f + u64::from(fif) > i, "{fif} in flight: frame {f}'s count after frame {i}");
                assert_eq!(s.path, CullPath::Gpu);
                assert_eq!(s.visible(), expected[f as usize], "{fif} in flight: the count named frame {f} is frame {f}'s");
            }
        }
        rt.finish_frames().unwrap();
        let s = state.stats().snapshot();
        assert_eq!((s.gpu_frame, s.visible()), (Some(5), expected[5]), "{fif} in flight: the last frame's count once it is done");
        common::assert_clean(&mut rt);
    }
}

#[test]
fn removing_instances_and_components_while_their_frames_are_on_the_gpu_is_clean() {
    let mesh = mesh();
    let mut rt = render_thread_in_flight(3);
    let white = rt.create_material(Material::colored(Vec4::ONE)).unwrap();
    for cpu_culled in [false, true] {
        rt.set_cvar(CVAR_GPU_CULLING, if cpu_culled { "0" } else { "1" }).unwrap();
        let mut store = store_of(&mesh, 4_000);
        let mut state =
            IsmRenderState::add(&mut rt, &mut store, mesh.clone(), vec![white], Affine3A::IDENTITY, CullDistances::NONE).unwrap();
        for i in 0..4u64 {
            rt.render_frame(FrameRequest { family: ViewFamily::new(W, H, vec![view_at(i)]), read_back: false, execute: true }).unwrap();
            // Instances go (and the instance buffer changes) while that frame may be on the GPU.
            let ids: Vec<InstanceId> = store.ids()[..500].to_vec();
            store.remove_instances_by_id(&ids).unwrap();
            state.flush(&mut rt, &mut store).unwrap();
        }
        rt.render_frame(FrameRequest { family: ViewFamily::new(W, H, vec![view_at(4)]), read_back: false, execute: true }).unwrap();
        // The whole component goes with its frame still in flight.
        state.remove(&mut rt).unwrap();
        rt.render_frame(FrameRequest { family: ViewFamily::new(W, H, vec![view_at(5)]), read_back: false, execute: true }).unwrap();
    }
    assert_eq!(rt.finish_frames().unwrap().len(), 12);
    common::assert_clean(&mut rt);
}
