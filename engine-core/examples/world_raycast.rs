//! A world without a renderer: spawn static meshes, attach, move, and ray
//! cast against their collision — the game side on its own.
//!
//! `cargo run -p proxima-engine-core --example world_raycast`

use engine_core::*;
use glam::Vec3;

fn main() -> Result<()> {
    // The crates' `log` lines (device chosen, validation messages) on stderr; `RUST_LOG` filters them.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let mut world = World::new(None);
    let (actor, base) = world.spawn_actor(
        "tower",
        Box::new(StaticMeshComponent::new(StaticMesh::cylinder(24))),
        Transform::from_translation_scale(Vec3::new(10.0, 0.0, 0.0), Vec3::new(2.0, 2.0, 4.0)),
    )?;
    let roof = world.add_component(
        actor,
        Box::new(StaticMeshComponent::new(StaticMesh::cone(24))),
        Some(base),
        Transform::from_translation(Vec3::new(0.0, 0.0, 0.75)),
    )?;
    let stats = world.send_all_end_of_frame_updates()?;
    println!("end of frame: {} components visited, {} collision bodies", stats.visited, stats.bodies_updated);
    let hit = world.raycast(Vec3::new(0.0, 0.0, 0.0), Vec3::X, 100.0, CollisionComplexity::Complex)?.expect("the tower is in front");
    println!("hit {:?} at {:?}, normal {:?}", hit.component, hit.position, hit.normal);
    // Moving the tower moves its attached roof.
    world.set_relative_transform(base, Transform::from_translation_scale(Vec3::new(20.0, 0.0, 0.0), Vec3::new(2.0, 2.0, 4.0)))?;
    world.send_all_end_of_frame_updates()?;
    println!("roof now at {:?}", world.world_transform(roof)?.w_axis.truncate());
    // A NaN transform is refused; the tower stays where it was.
    let refused = world.set_relative_transform(base, Transform::from_translation(Vec3::NAN));
    println!("NaN transform: {}", refused.unwrap_err());
    Ok(())
}
