//! # particles
//!
//! Cascade-style CPU sprite particles, the game-thread half: particle
//! system assets, emitter instances and their simulation, and the per-frame
//! snapshot ("dynamic data") the render thread turns into sprite instances.
//!
//! ```text
//! ParticleSystem (asset, JSON)      Arc-shared, validated, never mutated
//!   └─ EmitterAsset × n             required settings + module stack
//! ParticleSystemInstance            what a ParticleSystemComponent owns
//!   └─ EmitterInstance × n          particles (SoA), clock, random stream
//!        tick(dt): update → spawn (sub-frame) → collide → kill
//! build_dynamic_data()  ──► ParticleSystemDynamicData   (owned, Send)
//! build_sprite_vertices ──► [ParticleSpriteVertex]      (render thread)
//! ```
//!
//! ## What it promises
//!
//! * **Determinism.** The same asset, seed and sequence of `dt` give the same
//!   particles bit for bit, whether a tick runs serially or on the rayon
//!   pool; different seeds give different particles.
//! * **Exact motion.** Constant acceleration and linear drag are integrated
//!   in closed form, and particles spawned mid-frame are advanced by exactly
//!   the rest of the frame, so paths do not depend on frame rate.
//! * **Capacity.** An emitter never holds more than its `max_particles`; live
//!   particles always have relative time in `[0, 1)`.
//! * **Named errors.** A malformed or invalid asset is rejected with an
//!   error naming the field (`emitters[1].modules[2].lifetime.uniform.min`),
//!   and a rejected call changes nothing.
//! * **No `unsafe`**, no global state, no allocation in the update loop.
//!
//! ## What the caller upholds
//!
//! * Particle memory is the game thread's: tick and read an instance from
//!   one thread at a time (the types are `Send`, and `&mut` enforces it);
//!   hand the render thread only dynamic data.
//! * Call [`ParticleSystemInstance::tick`] with the frame's `dt` in seconds;
//!   negative or non-finite values are ignored. Very long `dt` are handled
//!   but compress spawning (capacity applies within the tick).
//! * Units are world units (UE's centimetres), seconds and radians.

mod asset;
mod bounds;
mod distribution;
mod dynamic_data;
mod emitter;
mod error;
mod json_path;
mod particle;
mod rng;
mod sort;
mod system_instance;
mod update;
mod validate;

pub use asset::{
    BlendMode, Burst, CollisionResponse, EmitterAsset, LocationShape, Module, ParticleSystem,
    RequiredModule, ScreenAlignment, SortMode, SpawnModule, VelocityShape, MAX_PARTICLES_LIMIT,
};
pub use bounds::Aabb;
pub use distribution::{CurveKey, CurveLut, Distribution, DistributionValue, LUT_SIZE};
pub use dynamic_data::{
    build_sprite_vertices, build_sprite_vertices_with, EmitterDynamicData, ParticleSpriteVertex,
    ParticleSystemDynamicData, SpriteScratch,
};
pub use emitter::{EmitterInstance, MAX_BURST_LOOPS};
pub use error::ParticleError;
pub use particle::{Particle, ParticleStore};
pub use rng::Rng;
pub use sort::order_descending;
pub use system_instance::{ParticleSystemInstance, TickMode, PARALLEL_THRESHOLD};
