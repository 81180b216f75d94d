//! Builders shared by the integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use particles::*;

pub const DT: f32 = 1.0 / 60.0;

pub fn required(max_particles: u32) -> RequiredModule {
    RequiredModule::new("M_Test", BlendMode::Translucent, ScreenAlignment::FacingCamera, SortMode::DistanceToView, max_particles)
}

pub fn emitter(max_particles: u32, modules: Vec<Module>) -> EmitterAsset {
    EmitterAsset { name: "test".into(), required: required(max_particles), modules }
}

pub fn system(emitters: Vec<EmitterAsset>) -> Arc<ParticleSystem> {
    Arc::new(ParticleSystem { emitters })
}

pub fn instance(emitters: Vec<EmitterAsset>, seed: u64) -> ParticleSystemInstance {
    ParticleSystemInstance::new(system(emitters), seed).expect("valid test system")
}

pub fn spawn(rate: f32, bursts: &[(f32, u32)]) -> Module {
    Module::Spawn(SpawnModule::new(rate, bursts.iter().map(|&(time, count)| Burst::new(time, count)).collect()))
}

pub fn lifetime(seconds: f32) -> Module {
    Module::Lifetime(Distribution::Constant(seconds))
}

/// A busy emitter using every random module, for determinism tests.
pub fn busy_emitter(max_particles: u32, rate: f32) -> EmitterAsset {
    emitter(
        max_particles,
        vec![
            spawn(rate, &[(0.25, 40)]),
            Module::Lifetime(Distribution::Uniform { min: 0.5, max: 1.5 }),
            Module::InitialLocation(LocationShape::Sphere { center: glam::Vec3::ZERO, radius: 10.0, surface_only: false }),
            Module::InitialVelocity(VelocityShape::Cone {
                direction: glam::Vec3::Z,
                angle: 0.5,
                speed: Distribution::Uniform { min: 100.0, max: 200.0 },
            }),
            Module::InitialSize(Distribution::Uniform { min: glam::Vec2::splat(1.0), max: glam::Vec2::splat(3.0) }),
            Module::InitialColor(Distribution::Uniform { min: glam::Vec4::splat(0.2), max: glam::Vec4::ONE }),
            Module::InitialRotation(Distribution::Uniform { min: 0.0, max: std::f32::consts::TAU }),
            Module::RotationRate(Distribution::Uniform { min: -1.0, max: 1.0 }),
            Module::Acceleration(glam::Vec3::new(0.0, 0.0, -980.0)),
            Module::Drag { coefficient: 0.5 },
            Module::ColorOverLife(Distribution::Curve(vec![
                CurveKey { time: 0.0, value: glam::Vec4::ONE },
                CurveKey { time: 1.0, value: glam::Vec4::new(1.0, 0.5, 0.0, 0.0) },
            ])),
            Module::SizeOverLife(Distribution::Curve(vec![
                CurveKey { time: 0.0, value: glam::Vec2::ONE },
                CurveKey { time: 1.0, value: glam::Vec2::splat(2.0) },
            ])),
            Module::GroundPlaneCollision { height: -50.0, response: CollisionResponse::Bounce { restitution: 0.5 } },
        ],
    )
}
