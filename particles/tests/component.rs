//! `ParticleSystemComponent` in an engine-core `World` on the real device,
//! validation on: ticking, end-of-frame updates and rendering.

mod gpu;

use std::sync::Arc;

use engine_core::{Transform, World};
use glam::Vec3;
use gpu::*;
use particles::*;
use renderer::{FrameRequest, MeshPass, SceneView, ViewFamily};
use rhi_vulkan::Rect;

const FOUNTAIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/fountain.json");

fn fountain_family() -> ViewFamily {
    let view =
        SceneView::perspective(Vec3::new(0.0, -900.0, 260.0), Vec3::new(0.0, 0.0, 170.0), Vec3::Z, 0.9, 1.0, 5000.0, Rect::from_size(W, H))
            .unwrap();
    ViewFamily::new(W, H, vec![view])
}

#[test]
fn fountain_component_ticks_sends_and_draws_in_translucency_only() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let system = Arc::new(ParticleSystem::load(FOUNTAIN).unwrap());
    let materials = ParticleMaterials::for_system(&mut rt, &system).unwrap();
    let mut world = World::new(Some(rt));

    // Off the origin, so that the bounds really go through the component frame.
    let at = Vec3::new(80.0, 0.0, 0.0);
    let transform = Transform::from_translation(at);
    let component = ParticleSystemComponent::new(system.clone(), 7, materials).unwrap().with_spawn_transform(transform.to_mat4()).unwrap();
    let (_, id) = world.spawn_actor("fountain", Box::new(component), transform).unwrap();

    let family = fountain_family();
    let dt = 1.0 / 60.0;
    let mut last = None;
    for frame in 0..60 {
        world.tick(dt);
        let eof = world.send_all_end_of_frame_updates().unwrap();
        if frame == 0 {
            assert_eq!(eof.proxies_created, 1);
        } else {
            assert_eq!(eof.proxies_created, 0, "frame {frame}");
            assert_eq!((eof.dynamic_data_sent, eof.transforms_sent), (1, 1));
        }
        let rt = world.render_thread().unwrap();
        rt.render_frame(FrameRequest { family: family.clone(), read_back: frame == 59, execute: true }).unwrap();
        rt.flush().unwrap();
        let stats = rt.last_stats().unwrap().expect("stats");
        if frame > 0 {
            assert_eq!(stats.proxies_created, 0, "frame {frame}");
            // The proxy handed the snapshot it replaced back, and the next
            // frame's snapshot will be built in its arrays.
            let c = world.component::<ParticleSystemComponent>(id).unwrap();
            assert_eq!(c.snapshot_pool().waiting(), 1, "frame {frame}");
        }
        last = Some(stats);
    }
    let stats = last.unwrap();
    let live = world.component::<ParticleSystemComponent>(id).unwrap().instance().live_particles();
    assert!(live > 100, "{live} live particles");
    let t = stats.pass(MeshPass::Translucency);
    // Water (translucent) and mist (additive): one draw per emitter.
    assert!(t.draws >= 1);
    assert_eq!(t.instances, live as u64);
    assert_eq!(stats.counter(LIVE_PARTICLES_COUNTER), live as u64, "the proxy counts the particles it drew into the frame's stats");
    assert_eq!(stats.element_failures, 0, "every emitter's sprites were uploaded");
    assert_eq!(stats.pass(MeshPass::DepthPrepass).mesh_draw_commands, 0);
    assert_eq!(stats.pass(MeshPass::ShadowDepth).mesh_draw_commands, 0);
    let img = world.render_thread().unwrap().read_back().unwrap().expect("image");
    assert!(lit_pixels(&img) > 20, "{} lit pixels", lit_pixels(&img));

    // Particles spawned at the component: the water column is above it.
    let b = world.component::<ParticleSystemComponent>(id).unwrap().instance().bounds().unwrap();
    assert!(b.min.x < at.x && b.max.x > at.x, "{b:?}");

    assert_clean(world.render_thread().unwrap());
}

#[test]
fn invalid_system_is_rejected_and_the_component_keeps_drawing_the_previous() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let system = Arc::new(ParticleSystem::load(FOUNTAIN).unwrap());
    let materials = ParticleMaterials::for_system(&mut rt, &system).unwrap();
    let mut world = World::new(Some(rt));
    let component = ParticleSystemComponent::new(system.clone(), 3, materials).unwrap();
    let (_, id) = world.spawn_actor("fountain", Box::new(component), Transform::default()).unwrap();
    let family = fountain_family();
    for _ in 0..10 {
        world.tick(1.0 / 60.0);
        world.send_all_end_of_frame_updates().unwrap();
    }
    frame_of(world.render_thread().unwrap(), &family);

    let mut bad = (*system).clone();
    bad.emitters[1].required.max_particles = 0;
    let err = world.with_component_mut::<ParticleSystemComponent, _>(id, |c| c.set_system(Arc::new(bad))).unwrap().unwrap_err();
    assert!(err.to_string().contains("max_particles"), "{err}");
    let c = world.component::<ParticleSystemComponent>(id).unwrap();
    assert!(Arc::ptr_eq(c.system(), &system));
    let live = c.instance().live_particles();
    assert!(live > 0);
    // Nothing to recreate: no proxy is created for the rejected asset.
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 0);

    let rt = world.render_thread().unwrap();
    let (stats, _) = frame_of(rt, &family);
    let t = stats.pass(MeshPass::Translucency);
    assert_eq!(t.instances, live as u64);
    assert_eq!(stats.proxies_created, 0);

    // A valid replacement recreates the proxy once.
    world.with_component_mut::<ParticleSystemComponent, _>(id, |c| c.set_system(Arc::new((*system).clone()))).unwrap().unwrap();
    world.tick(1.0 / 60.0);
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.proxies_removed), (1, 1));
    let rt = world.render_thread().unwrap();
    frame_of(rt, &family);
    assert_clean(rt);
}
