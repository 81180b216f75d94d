//! Instanced static meshes with frames in flight (`r.FramesInFlight`): the
//! GPU cull's visible counts arrive with the frame they belong to, and
//! instances or whole components removed while their frames are still on
//! the GPU are clean under synchronization validation.

mod common;

use std::sync::Arc;

use engine_core::{ComponentId, StaticMesh, Transform, World};
use glam::{Affine3A, Vec3, Vec4};
use instancing::*;
use renderer::*;
use rhi_vulkan::Rect;

const W: u32 = 160;
const H: u32 = 120;

use common::render_thread_in_flight;

fn mesh() -> Arc<StaticMesh> {
    StaticMesh::cube()
}

/// Spawns a component of `n` instances of `mesh` on a grid, drawn with
/// `material`, and sends the end-of-frame update that creates its proxy.
fn spawn_grid(world: &mut World, mesh: &Arc<StaticMesh>, n: u32, material: MaterialId) -> ComponentId {
    let mut c = InstancedStaticMeshComponent::new(mesh.clone()).unwrap();
    let side = (n as f32).sqrt().ceil() as u32;
    let transforms: Vec<Affine3A> =
        (0..n).map(|i| Affine3A::from_translation(Vec3::new((i % side) as f32 * 3.0 - 150.0, (i / side) as f32 * 3.0, 0.0))).collect();
    c.add_instances(&transforms, TransformSpace::Component).unwrap();
    let (_, id) = world.spawn_actor("ism", Box::new(c), Transform::IDENTITY).unwrap();
    world.set_material(id, 0, material).unwrap();
    assert_eq!(world.send_all_end_of_frame_updates().unwrap().proxies_created, 1);
    id
}

fn rt(world: &mut World) -> &mut RenderThread {
    world.render_thread().expect("a world with a render thread")
}

/// The statistics handle of the component's proxy.
fn stats_of(world: &mut World, id: ComponentId) -> IsmStats {
    let pid = world.primitive_id(id).unwrap().expect("a proxy");
    rt(world)
        .with_context(move |ctx| {
            ctx.scene.proxy(pid).expect("proxy").as_any().downcast_ref::<InstancedStaticMeshSceneProxy>().expect("an ISM proxy").stats()
        })
        .unwrap()
}

/// A camera that turns every frame, so every frame sees a different number of instances.
fn view_at(i: u64) -> SceneView {
    let target = Vec3::new(-60.0 + 25.0 * i as f32, 120.0, 0.0);
    SceneView::perspective(Vec3::new(0.0, -20.0, 15.0), target, Vec3::Z, 1.0, 0.1, 1000.0, Rect::from_size(W, H)).unwrap()
}

fn cpu_visible(store: &InstanceStore, mesh: &StaticMesh, i: u64) -> u64 {
    let culled = cull_instances(
        store,
        &InstanceCuller::new(
            &instanced_mesh_for(mesh.render_data()).unwrap(),
            &Affine3A::IDENTITY,
            &cull_view_for(&view_at(i)).unwrap(),
            CullDistances::NONE,
        )
        .unwrap(),
    );
    culled.visible_count() as u64
}

#[test]
fn gpu_visible_counts_are_delivered_with_their_frame() {
    let mesh = mesh();
    for fif in [1, 3] {
        let mut world = World::new(Some(render_thread_in_flight(fif)));
        let white = rt(&mut world).create_material(Material::colored(Vec4::ONE)).unwrap();
        let id = spawn_grid(&mut world, &mesh, 10_000, white);
        let store = world.component::<InstancedStaticMeshComponent>(id).unwrap().store();
        let expected: Vec<u64> = (0..6).map(|i| cpu_visible(store, &mesh, i)).collect();
        // The proxy's statistics handle, once its add has been applied (at
        // the start of the first frame).
        let mut stats: Option<IsmStats> = None;
        assert!(expected.windows(2).all(|w| w[0] != w[1]), "each frame sees a different count: {expected:?}");
        for i in 0..6u64 {
            let rt = rt(&mut world);
            rt.render_frame(FrameRequest { family: ViewFamily::new(W, H, vec![view_at(i)]), read_back: false, execute: true }).unwrap();
            rt.flush().unwrap();
            let s = stats.get_or_insert_with(|| stats_of(&mut world, id)).snapshot();
            if fif == 1 {
                assert_eq!(s.gpu_frame, Some(i), "1 in flight: the count is the frame's own at its end");
            }
            if let Some(f) = s.gpu_frame {
                assert!(f <= i && f + u64::from(fif) > i, "{fif} in flight: frame {f}'s count after frame {i}");
                assert_eq!(s.path, CullPath::Gpu);
                assert_eq!(s.visible(), expected[f as usize], "{fif} in flight: the count named frame {f} is frame {f}'s");
            }
        }
        let rt = rt(&mut world);
        rt.finish_frames().unwrap();
        let s = stats.expect("frames rendered").snapshot();
        assert_eq!((s.gpu_frame, s.visible()), (Some(5), expected[5]), "{fif} in flight: the last frame's count once it is done");
        common::assert_clean(rt);
    }
}

#[test]
fn removing_instances_and_components_while_their_frames_are_on_the_gpu_is_clean() {
    let mesh = mesh();
    let mut world = World::new(Some(render_thread_in_flight(3)));
    let white = rt(&mut world).create_material(Material::colored(Vec4::ONE)).unwrap();
    let render = |world: &mut World, i: u64| {
        rt(world).render_frame(FrameRequest { family: ViewFamily::new(W, H, vec![view_at(i)]), read_back: false, execute: true }).unwrap();
    };
    for cpu_culled in [false, true] {
        rt(&mut world).set_cvar(CVAR_GPU_CULLING, if cpu_culled { "0" } else { "1" }).unwrap();
        let id = spawn_grid(&mut world, &mesh, 4_000, white);
        for i in 0..4u64 {
            render(&mut world, i);
            // Instances go (and the instance buffer changes) while that frame may be on the GPU.
            world
                .with_component_mut(id, |c: &mut InstancedStaticMeshComponent| {
                    let ids: Vec<InstanceId> = c.store().ids()[..500].to_vec();
                    c.remove_instances_by_id(&ids)
                })
                .unwrap()
                .unwrap();
            let eof = world.send_all_end_of_frame_updates().unwrap();
            assert_eq!((eof.proxies_created, eof.dynamic_data_sent), (0, 1));
        }
        render(&mut world, 4);
        // The whole component goes with its frame still in flight.
        let actor = world.actor_of(id).unwrap();
        world.destroy_actor(actor).unwrap();
        render(&mut world, 5);
    }
    assert_eq!(rt(&mut world).finish_frames().unwrap().len(), 12);
    common::assert_clean(rt(&mut world));
}
