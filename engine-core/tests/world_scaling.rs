//! The World's costs grow with what an operation touches, not with the
//! square of the world: destroying actors one by one while the dirty list
//! is long (every component just spawned), with cameras among them, and
//! teleporting.
//!
//! Each check times the same work at n and 10n and asserts the ratio is at
//! most 30: a linear cost gives about 10, a cost that grows with the square
//! gives about 100 (the bound leaves room for a loaded machine; `cargo
//! xtask bench` reports the ratio against its goal of 12). Timings are the
//! median of three runs. No render thread: the work measured is the
//! World's own.

use engine_core::*;
use glam::Vec3;
use std::time::Instant;

/// Median of three runs of `f` (ms).
fn median_ms(mut f: impl FnMut() -> f64) -> f64 {
    let mut t = [f(), f(), f()];
    t.sort_by(f64::total_cmp);
    t[1]
}

/// A world of `n` actors, each a static mesh (every 100th with a camera
/// attached), all still in the dirty list; the actors' and roots' ids.
fn world_of(n: usize) -> (World, Vec<(ActorId, ComponentId)>) {
    let mut world = World::new(None);
    let mesh = StaticMesh::cube();
    let actors = (0..n)
        .map(|i| {
            let at = Transform::from_translation(Vec3::new(i as f32, 0.0, 0.0));
            let (actor, root) = world.spawn_actor("a", Box::new(StaticMeshComponent::new(mesh.clone())), at).unwrap();
            if i % 100 == 0 {
                world.add_component(actor, Box::new(CameraComponent::default()), None, Transform::IDENTITY).unwrap();
            }
            (actor, root)
        })
        .collect();
    (world, actors)
}

/// Destroys every actor of a fresh world of `n`, one by one (ms).
fn destroy_all(n: usize) -> f64 {
    let (mut world, actors) = world_of(n);
    let start = Instant::now();
    for (a, _) in actors {
        world.destroy_actor(a).unwrap();
    }
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let stats = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!(stats.proxies_created, 0, "nothing of the destroyed actors is sent");
    ms
}

#[test]
fn destroying_actors_one_by_one_costs_what_they_hold() {
    let (small, large) = (median_ms(|| destroy_all(4_000)), median_ms(|| destroy_all(40_000)));
    let ratio = large / small;
    println!("destroy 4k actors {small:.2} ms, 40k {large:.2} ms: {ratio:.1}x");
    assert!(ratio <= 30.0, "10x the actors cost {ratio:.1}x the time (a cost that grows with the square)");
}

/// Teleports `n` components, each 10 times in a frame (ms).
fn teleport_all(n: usize) -> f64 {
    let (mut world, actors) = world_of(n);
    world.send_all_end_of_frame_updates().unwrap();
    let roots: Vec<ComponentId> = actors.iter().map(|&(_, root)| root).collect();
    let start = Instant::now();
    for round in 0..10 {
        for (i, &c) in roots.iter().enumerate() {
            world.teleport(c, Transform::from_translation(Vec3::new(i as f32, round as f32, 0.0))).unwrap();
        }
    }
    world.send_all_end_of_frame_updates().unwrap();
    start.elapsed().as_secs_f64() * 1e3
}

#[test]
fn teleporting_costs_what_moves() {
    let (small, large) = (median_ms(|| teleport_all(500)), median_ms(|| teleport_all(5_000)));
    let ratio = large / small;
    println!("teleport 500 components x10 {small:.2} ms, 5k {large:.2} ms: {ratio:.1}x");
    assert!(ratio <= 30.0, "10x the teleports cost {ratio:.1}x the time (a cost that grows with the square)");
}
