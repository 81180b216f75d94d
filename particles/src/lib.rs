//! # particles
//!
//! Cascade-style CPU sprite particles, both halves. The game-thread half:
//! particle system assets, emitter instances and their simulation, and the
//! per-frame snapshot ("dynamic data"). The render-thread half: a
//! [`renderer::PrimitiveSceneProxy`] that draws each emitter as one
//! instanced draw of the sprite vertex factory, sorted back to front per
//! view. [`ParticleSystemComponent`] joins the two in an engine-core
//! `World`, the one way a system reaches the renderer.
//!
//! ```text
//! ParticleSystem (asset, JSON)      Arc-shared, validated, never mutated
//!   └─ EmitterAsset × n             required settings + module stack
//! ParticleSystemComponent           engine-core component: instance + materials
//! ParticleSystemInstance            what a ParticleSystemComponent owns
//!   └─ EmitterInstance × n          particles (SoA), clock, random stream
//!        tick(dt): update → spawn (sub-frame) → collide → kill
//! build_dynamic_data()  ──► ParticleSystemDynamicData   (owned, Send;
//!                           spawn sizes/colours + over-life tables)
//! ─────────────────────── game thread ▲ │ render thread ───────────────────
//! ParticleSystemComponent: World end of frame ▼
//! ParticleSystemSceneProxy          keeps the latest snapshot
//!   get_dynamic_mesh_elements       per visible view × emitter:
//!     build_sprite_vertices (sort,  → collector.upload → MeshBatch
//!       colour and size over life,
//!       sprite-sheet image)
//!     SPRITE_VERTEX_FACTORY         unit quad × one instance per particle,
//!                                   expanded facing the view plane, the
//!                                   camera position or along the velocity
//!                                   in the vertex shader; sub-UVs there
//! ```
//!
//! Rendering in short (see [`ParticleSystemSceneProxy`] for details):
//!
//! * The material resolved from the emitter's material name
//!   ([`ParticleMaterials`]) decides the passes: translucent and additive
//!   sprites draw only in the translucency pass, opaque and masked ones in
//!   the depth prepass and base pass. Particles cast no shadows.
//! * [`sprite_material`] makes an unlit, two-sided sprite material (colour
//!   from the particle, optionally a soft disc); [`ParticleMaterials::for_system`]
//!   creates one per material name with the emitter's blend mode.
//! * [`sprite_sheet_material`] samples a sprite sheet for sub-UV emitters
//!   ([`SubUv`]: a grid of images, one shown per particle by an index over
//!   its life or drawn at random per particle, or two cross-faded), the
//!   sprite vertex factory supplying the images' UVs.
//! * Particles are simulated in world space, or in the system's local
//!   space for emitters that ask ([`RequiredModule::use_local_space`]:
//!   their live particles move with the system, and their sprites scale
//!   with it, [`EmitterInstance::sprite_size_scale`]); snapshots carry both
//!   in world space, the sprite vertex factory ignores the primitive's
//!   transform, and the bounds the component reports are the particles'
//!   world box in its own frame.
//!
//! The Cascade pieces beyond the basic modules: emitter timing (a delay
//! before the first loop or before every loop,
//! [`RequiredModule::delay_first_loop_only`]; a loop duration and count;
//! and the system completing when its emitters finish, reported once by
//! [`ParticleSystemComponent::take_completion_event`]); spawn rates and
//! burst counts scaled by curves over emitter time
//! ([`SpawnModule::rate_scale`], [`SpawnModule::burst_scale`]) and at run
//! time ([`ParticleSystemComponent::set_spawn_rate_scale`]); random burst
//! counts ([`Burst::count_low`]); random sub-images, kept for a particle's
//! life or changed a set number of times ([`Module::SubImageIndex`] with a
//! uniform range, [`RequiredModule::random_image_changes`]); every Cascade
//! sort mode ([`SortMode`]) and screen alignment ([`ScreenAlignment`]).
//!
//! In an engine-core `World`, [`ParticleSystemComponent`] does all of this:
//! its proxy is created when it registers, it ticks its instance every
//! frame, the world's end-of-frame update sends the snapshot and the bounds,
//! and it recreates its proxy when its asset or materials change (an invalid
//! asset is rejected and the previous one kept). Keep its spawn transform
//! equal to its world transform
//! ([`ParticleSystemComponent::set_spawn_transform`]).
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use particles::{ParticleMaterials, ParticleSystem, ParticleSystemComponent};
//! # fn demo(
//! #     mut rt: renderer::RenderThread,
//! #     system: Arc<ParticleSystem>,
//! #     seed: u64,
//! #     transform: engine_core::Transform,
//! # ) -> Result<(), Box<dyn std::error::Error>> {
//! let materials = ParticleMaterials::for_system(&mut rt, &system)?;
//! let mut world = engine_core::World::new(Some(rt));
//! let component = ParticleSystemComponent::new(system, seed, materials)?
//!     .with_spawn_transform(transform.to_mat4())?;
//! world.spawn_actor("fountain", Box::new(component), transform)?;
//! // every frame: world.tick(dt); world.send_all_end_of_frame_updates()?; render
//! # Ok(())
//! # }
//! ```
//!
//! ```
//! use std::sync::Arc;
//! use particles::{ParticleSystem, ParticleSystemInstance};
//!
//! let json = r#"{"emitters": [{
//!     "name": "puff",
//!     "required": {"material": "M_Puff", "blend_mode": "translucent",
//!                  "screen_alignment": "facing_camera", "sort_mode": "distance_to_view",
//!                  "max_particles": 100},
//!     "modules": [{"spawn": {"rate": 60.0}}, {"lifetime": {"constant": 0.5}}]
//! }]}"#;
//! let system = Arc::new(ParticleSystem::from_json_str(json)?);
//! let mut instance = ParticleSystemInstance::new(system, 7)?;
//! for _ in 0..60 {
//!     instance.tick(1.0 / 60.0);
//! }
//! assert_eq!(instance.live_particles(), 30); // rate × lifetime
//! let snapshot = instance.build_dynamic_data(); // send to the render thread
//! assert_eq!(snapshot.emitters[0].len(), 30);
//! # Ok::<(), particles::ParticleError>(())
//! ```
//!
//! ## What it promises
//!
//! * **Determinism.** The same asset, seed and sequence of `dt` give the same
//!   particles bit for bit, whether a tick runs serially or on the rayon
//!   pool; different seeds give different particles.
//! * **Colour and size are derived, not stored.** A particle's current
//!   colour and size are its spawn value times the over-life curve at its
//!   age, evaluated where read: by the render thread as it writes sprite
//!   vertices, and by [`EmitterInstance::current_colors`] /
//!   [`EmitterInstance::current_sizes`] on the game side. The tick moves
//!   fewer bytes for it ([`OverLife`] says why). The sprite-sheet
//!   image is derived from the age the same way ([`SubUv`]; a random one
//!   from the age and a seed drawn at spawn), so sub-UV costs the tick
//!   nothing.
//! * **Exact motion.** Constant acceleration and linear drag are integrated
//!   in closed form, and particles spawned mid-frame are advanced by exactly
//!   the rest of the frame, so paths do not depend on frame rate.
//! * **Capacity.** An emitter never holds more than its `max_particles`; live
//!   particles always have relative time in `[0, 1)`. A tick's spawning
//!   work is bounded by the emitter's free room, whatever its rate, bursts,
//!   lifetimes or `dt` (assets are capped: [`MAX_SPAWN_RATE`] with the
//!   rate scales, [`MAX_BURSTS`], [`MAX_PARTICLES_LIMIT`] per burst with its
//!   scale, [`MIN_LIFETIME`], [`MAX_EMITTER_DELAY`], [`MAX_SUB_IMAGES`],
//!   [`MAX_RANDOM_IMAGE_CHANGES`], [`MAX_ASSET_BYTES`]).
//! * **Named errors.** A malformed or invalid asset is rejected with an
//!   error naming the field (`emitters[1].modules[2].lifetime.uniform.min`),
//!   and a rejected call changes nothing.
//! * **One draw per emitter and view.** An emitter with live particles is
//!   one instanced draw (instances = its live particles, never merged with
//!   another emitter's); translucent emitters sorted by distance are sorted
//!   from each view's own eye. Nothing is drawn for an empty emitter.
//! * **No `unsafe`**, no mutable global state (the vertex factory and the
//!   sprite material shader are immutable singletons), no allocation in the
//!   update loop.
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
//! * Rendering: give each emitter's material name a renderer material whose
//!   blend mode matches the emitter's (a missing name draws with the
//!   fallback, by default the renderer's opaque default material); drive
//!   the system as a [`ParticleSystemComponent`] in a `World`, whose
//!   end-of-frame update sends each tick's snapshot and the bounds the scene
//!   culls and sorts by, and removes the proxy when the component goes.

mod asset;
pub mod bounds;
mod component;
mod distribution;
mod dynamic_data;
mod emitter;
mod error;
mod feature;
mod json_path;
mod kernel;
mod materials;
mod over_life;
mod particle;
mod proxy;
mod shapes;
mod snapshot_pool;
mod sort;
mod sprite_vertex_factory;
mod step;
mod sub_uv;
mod system_instance;
mod update;
mod validate;

pub use asset::{
    BlendMode, Burst, CollisionResponse, EmitterAsset, LocationShape, Module, ParticleSystem, RequiredModule, ScreenAlignment, SortMode,
    SpawnModule, SubUvInterpolation, VelocityShape, MAX_ASSET_BYTES, MAX_BURSTS, MAX_EMITTER_DELAY, MAX_PARTICLES_LIMIT,
    MAX_RANDOM_IMAGE_CHANGES, MAX_SPAWN_RATE, MAX_SUB_IMAGES, MIN_LIFETIME,
};
pub use bounds::Aabb;
pub use component::ParticleSystemComponent;
pub use distribution::{CurveKey, CurveLut, Distribution, DistributionValue, LUT_SIZE};
pub use dynamic_data::{
    build_sprite_vertices, build_sprite_vertices_with, EmitterDynamicData, ParticleSpriteVertex, ParticleSystemDynamicData, SpriteScratch,
    SpriteView,
};
pub use emitter::{EmitterInstance, MAX_BURST_LOOPS};
pub use error::ParticleError;
pub use feature::{ParticlesFeature, FEATURE};
pub use materials::{
    renderer_blend_mode, sprite_material, sprite_material_shader, sprite_sheet_material, sprite_sheet_material_shader, ParticleMaterials,
    SPRITE_MATERIAL_WGSL, SPRITE_SHEET_MATERIAL_WGSL,
};
pub use over_life::OverLife;
pub use particle::{Particle, ParticleStore};
pub use proxy::{ParticleSystemSceneProxy, DEFAULT_BOUNDS_HALF_EXTENT, EMITTER_UPLOAD_FAILURE, LIVE_PARTICLES_COUNTER};
/// The workspace's one RNG (PCG32), which the simulation draws from.
pub use renderer::Rng;
pub use snapshot_pool::{SnapshotPool, SnapshotReturner};
pub use sort::order_descending;
pub use sprite_vertex_factory::{SpriteVertexFactory, QUAD_CORNERS, QUAD_INDICES, SPRITE_VERTEX_FACTORY, SPRITE_VF_WGSL};
pub use sub_uv::{RandomSubImage, SubUv};
pub use system_instance::{ParticleSystemInstance, TickMode, PARALLEL_THRESHOLD};
