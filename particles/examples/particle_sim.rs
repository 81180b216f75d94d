//! Loads a particle system from JSON, simulates two seconds at 60 Hz and
//! prints what a component would send to the renderer.
//!
//! `cargo run -p proxima-particles --example particle_sim`

use std::sync::Arc;

use glam::{Affine3A, Vec3};
use particles::{build_sprite_vertices, ParticleSystem, ParticleSystemInstance};

const SPARKS: &str = r#"{
  "emitters": [{
    "name": "sparks",
    "required": {
      "material": "M_Spark",
      "blend_mode": "additive",
      "screen_alignment": "velocity_aligned",
      "sort_mode": "distance_to_view",
      "max_particles": 2000
    },
    "modules": [
      { "spawn": { "rate": 400.0, "bursts": [{ "time": 0.0, "count": 200 }] } },
      { "lifetime": { "uniform": { "min": 0.8, "max": 1.4 } } },
      { "initial_location": { "sphere": { "center": [0, 0, 0], "radius": 5.0 } } },
      { "initial_velocity": { "cone": { "direction": [0, 0, 1], "angle": 0.6,
                                        "speed": { "uniform": { "min": 300.0, "max": 500.0 } } } } },
      { "initial_size": { "constant": [2.0, 2.0] } },
      { "acceleration": [0, 0, -980] },
      { "color_over_life": { "curve": [
        { "time": 0.0, "value": [1.0, 0.9, 0.5, 1.0] },
        { "time": 1.0, "value": [1.0, 0.2, 0.0, 0.0] } ] } },
      { "ground_plane_collision": { "height": 0.0, "response": { "bounce": { "restitution": 0.4 } } } }
    ]
  }]
}"#;

fn main() -> Result<(), particles::ParticleError> {
    // The crates' `log` lines (device chosen, validation messages) on stderr; `RUST_LOG` filters them.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let system = Arc::new(ParticleSystem::from_json_str(SPARKS)?);
    let mut instance = ParticleSystemInstance::new(system, 2024)?;
    instance.set_transform(Affine3A::from_translation(Vec3::new(0.0, 0.0, 100.0)))?;

    let dt = 1.0 / 60.0;
    for frame in 1..=120 {
        instance.tick(dt);
        if frame % 30 == 0 {
            println!("t = {:.2} s: {} live particles", frame as f32 * dt, instance.live_particles());
        }
    }
    match instance.bounds() {
        Some(b) => println!("bounds: min {:.1} max {:.1}", b.min, b.max),
        None => println!("bounds: empty"),
    }

    let data = instance.build_dynamic_data();
    let mut vertices = Vec::new();
    for emitter in &data.emitters {
        build_sprite_vertices(emitter, Vec3::new(0.0, -500.0, 200.0), &mut vertices);
        println!(
            "emitter '{}' ({:?}, {:?}): {} sprite vertices, {} bytes",
            emitter.material,
            emitter.blend_mode,
            emitter.sort_mode,
            vertices.len(),
            std::mem::size_of_val(vertices.as_slice())
        );
    }
    Ok(())
}
