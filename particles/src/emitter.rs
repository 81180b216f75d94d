//! Emitter instances: one emitter's simulation state and its tick.
//!
//! An [`EmitterInstance`] is UE's `FParticleEmitterInstance`: the emitter's
//! modules compiled into a flat form ([`CompiledEmitter`]: sums of the
//! additive modules, over-life curves baked into lookup tables), its
//! particles, its clock and its random stream. A tick does, in order:
//!
//! ```text
//! tick(dt), frame window [t0, t0 + dt)
//!   1. update   existing particles by dt, killing those whose relative
//!               time reaches 1       (update.rs, kernel.rs: the hot loop)
//!   2. spawn    within the parts of the window past the emitter's delay
//!               (or delays) and before its last loop ends: bursts whose
//!               loop time falls in them (counts, drawn if random, × the
//!               burst scale at that loop time), then the
//!               rate's particles (rate × its scale at the window's middle
//!               × the run-time rate scale); each is created at its exact
//!               sub-frame time τ
//!               (shapes.rs samples where and how fast) and advanced by the
//!               remaining dt - τ, so a steady stream has no frame-rate
//!               banding; one that would die within dt - τ is not stored
//!   3. collide  ground plane and kill volumes (only if the emitter has them)
//!   4. kill     those step 3 marked (swap-remove)
//! ```
//!
//! Colour and size over life are not part of the tick: they are functions
//! of a particle's spawn value and age, evaluated when read
//! ([`crate::OverLife`]; [`EmitterInstance::current_colors`]).
//!
//! Space: a world-space emitter spawns at the system transform and its
//! particles stay where they are when the system moves; a local-space one
//! spawns and simulates in the system's frame, and its snapshot is carried
//! to the world by the transform of the latest tick (or
//! `ParticleSystemInstance::set_transform`), its sprite sizes scaled by
//! that transform's scale ([`EmitterInstance::sprite_size_scale`]).
//!
//! Timing: the emitter's delay comes once, before the first loop, or
//! before every loop (`delay_first_loop_only: false`); spawning runs on a
//! *loop clock*, emitter time with the delays left out, on which loop `k`
//! is `[k·duration, (k + 1)·duration)`. A random burst draws its count
//! from the emitter's stream when it fires.
//!
//! Determinism: randomness is drawn only while spawning, in a fixed order
//! from the emitter's own PCG stream, and the update is pure per particle.
//! The same seed therefore reproduces every particle bit for bit, however
//! many threads run the update or the system's emitters.
//!
//! Capacity: a spawn beyond `max_particles` is dropped (bursts are served
//! before the rate, and of a frame's rate spawns the latest are kept, since
//! the earliest are the likeliest to die within the frame). A tick attempts
//! at most as many spawns as the emitter had free room when spawning began,
//! counting those that die within the tick they were born in, so its work
//! is bounded by `max_particles` whatever the rate, burst counts, lifetimes
//! or `dt`, and a full emitter spawns nothing. A tick spanning more than
//! [`MAX_BURST_LOOPS`] loops replays only the last ones' bursts.

use glam::{Affine3A, Vec2, Vec3, Vec4};

use crate::asset::{Burst, CollisionResponse, EmitterAsset, LocationShape, Module, RequiredModule, MAX_SPAWN_RATE};
use crate::bounds::Aabb;
use crate::distribution::{CurveLut, Distribution};
use crate::error::ParticleError;
use crate::kernel::advance_spawned;
use crate::over_life::OverLife;
use crate::particle::{Particle, ParticleStore};
use crate::shapes::{sample_location, VelocitySampler};
use crate::sub_uv::SubUv;
use crate::update::{update_and_kill, Step, UpdateParams, Varying};
use renderer::Rng;

/// A tick replays the bursts of at most this many emitter loops.
pub const MAX_BURST_LOOPS: u64 = 1024;

/// An emitter's modules in the form the tick reads.
#[derive(Clone, Debug)]
pub(crate) struct CompiledEmitter {
    name: String,
    required: RequiredModule,
    /// Each spawn module's rate and its scale over loop time.
    rates: Vec<(f64, Option<Distribution<f32>>)>,
    /// Bursts sorted by time, each with the index of its module's burst
    /// scale in `burst_scales`.
    bursts: Vec<(Burst, Option<usize>)>,
    burst_scales: Vec<Distribution<f32>>,
    lifetime: Option<Distribution<f32>>,
    location: Option<LocationShape>,
    velocity: Option<VelocitySampler>,
    size: Option<Distribution<Vec2>>,
    color: Option<Distribution<Vec4>>,
    rotation: Option<Distribution<f32>>,
    rotation_rate: Option<Distribution<f32>>,
    acceleration: Vec3,
    drag: f32,
    /// Current colour and size from spawn value and age (over-life tables,
    /// with a uniform initial value baked in when there is one).
    colors: OverLife<Vec4>,
    sizes: OverLife<Vec2>,
    /// Which sprite-sheet image a particle shows, from its age.
    sub_uv: SubUv,
    /// Half the diagonal of the largest sprite this emitter can make: what
    /// its bounds pad positions by.
    max_half_diagonal: f32,
    kill_volumes: Vec<(Aabb, bool)>,
    ground: Option<(f32, CollisionResponse)>,
    varying: Varying,
}

impl CompiledEmitter {
    /// Compiles a validated emitter.
    fn new(asset: &EmitterAsset) -> Self {
        let mut c = CompiledEmitter {
            name: asset.name.clone(),
            required: asset.required.clone(),
            rates: Vec::new(),
            bursts: Vec::new(),
            burst_scales: Vec::new(),
            lifetime: None,
            location: None,
            velocity: None,
            size: None,
            color: None,
            rotation: None,
            rotation_rate: None,
            acceleration: Vec3::ZERO,
            drag: 0.0,
            colors: OverLife::Off,
            sizes: OverLife::Off,
            sub_uv: SubUv::OFF,
            max_half_diagonal: 0.0,
            kill_volumes: Vec::new(),
            ground: None,
            varying: Varying::ALL,
        };
        let (mut color_over_life, mut size_over_life, mut sub_image_index) = (None, None, None);
        for module in &asset.modules {
            match module {
                Module::Spawn(s) => {
                    c.rates.push((f64::from(s.rate), s.rate_scale.clone()));
                    let scale = s.burst_scale.as_ref().map(|d| {
                        c.burst_scales.push(d.clone());
                        c.burst_scales.len() - 1
                    });
                    c.bursts.extend(s.bursts.iter().map(|b| (*b, scale)));
                }
                Module::Lifetime(d) => c.lifetime = Some(d.clone()),
                Module::InitialLocation(s) => c.location = Some(s.clone()),
                Module::InitialVelocity(s) => c.velocity = Some(VelocitySampler::new(s)),
                Module::InitialSize(d) => c.size = Some(d.clone()),
                Module::InitialColor(d) => c.color = Some(d.clone()),
                Module::InitialRotation(d) => c.rotation = Some(d.clone()),
                Module::RotationRate(d) => c.rotation_rate = Some(d.clone()),
                Module::Acceleration(a) => c.acceleration += *a,
                Module::Drag { coefficient } => c.drag += coefficient,
                Module::ColorOverLife(d) => color_over_life = Some(d),
                Module::SizeOverLife(d) => size_over_life = Some(d),
                Module::SubImageIndex(d) => sub_image_index = Some(d),
                Module::KillVolume { min, max, kill_inside } => c.kill_volumes.push((Aabb::from_corners(*min, *max), *kill_inside)),
                Module::GroundPlaneCollision { height, response } => c.ground = Some((*height, *response)),
            }
        }
        c.colors = OverLife::compile(color_over_life, c.color.as_ref(), Vec4::ONE);
        c.sizes = OverLife::compile(size_over_life, c.size.as_ref(), Vec2::ONE);
        c.sub_uv = SubUv::compile(&c.required, sub_image_index);
        let spawn = c.size.as_ref().map_or(Vec2::ONE, largest);
        // What a read of the baked table can return, which can exceed the
        // curve's keys slightly (see `CurveLut::largest_abs`).
        let curve = size_over_life.map_or(Vec2::ONE, |d| CurveLut::bake(d).largest_abs());
        // The margin covers a uniform draw or a lerp rounding past an end
        // by an ulp.
        c.max_half_diagonal = 0.5 * (spawn * curve).length() * (1.0 + 1e-5);
        c.varying = c.varying_fields();
        // Stable sort: equal times keep their authored order.
        c.bursts.sort_by(|a, b| a.0.time.total_cmp(&b.0.time));
        c
    }

    /// Which fields can differ between this emitter's particles: those an
    /// initial module draws at random, and those the update changes by age.
    fn varying_fields(&self) -> Varying {
        fn drawn<T>(d: &Option<Distribution<T>>) -> bool {
            !matches!(d, None | Some(Distribution::Constant(_)))
        }
        let base_size = drawn(&self.size);
        let base_color = drawn(&self.color);
        let rotation_rate = drawn(&self.rotation_rate);
        Varying {
            rotation: drawn(&self.rotation) || self.rotation_rate.is_some(),
            rotation_rate,
            base_size,
            base_color,
            one_over_max_lifetime: drawn(&self.lifetime),
            sub_image_seed: self.sub_uv.is_random(),
        }
    }

    fn update_params(&self, dt: f32) -> UpdateParams {
        UpdateParams {
            step: Step::new(dt, self.drag),
            acceleration: self.acceleration,
            rotates: self.rotation_rate.is_some(),
            varying: self.varying,
        }
    }

    /// The spawn rate (all spawn modules, with their scales) at normalised
    /// loop time `loop_t`. Without scales, the rates' plain sum.
    fn rate_at(&self, loop_t: f32) -> f64 {
        self.rates.iter().map(|(rate, scale)| scale.as_ref().map_or(*rate, |d| rate * f64::from(d.evaluate(loop_t)))).sum()
    }

    /// Burst `b`'s particle count in this loop: its count (drawn from
    /// `rng` in `count_low..=count` for a random burst) times its module's
    /// burst scale at the burst's time, rounded.
    fn burst_count(&self, b: usize, rng: &mut Rng) -> usize {
        let (burst, scale) = &self.bursts[b];
        let count = match burst.count_low {
            // Validation keeps low ≤ count ≤ MAX_PARTICLES_LIMIT.
            Some(low) => low + rng.below((burst.count - low) as usize + 1) as u32,
            None => burst.count,
        };
        match scale {
            None => count as usize,
            Some(k) => {
                let s = self.burst_scales[*k].evaluate(burst.time / self.required.emitter_duration);
                (f64::from(count) * f64::from(s)).round() as usize
            }
        }
    }

    /// End of the spawning window on the loop clock (loop seconds, delays
    /// left out; infinite when looping forever).
    fn active_end(&self) -> f64 {
        match self.required.emitter_loops {
            0 => f64::INFINITY,
            n => f64::from(self.required.emitter_duration) * f64::from(n),
        }
    }

    /// Whether a delay comes before every loop (not only the first).
    fn delays_every_loop(&self) -> bool {
        !self.required.delay_first_loop_only && self.required.emitter_delay > 0.0
    }

    /// When spawning ends in emitter time (infinite when looping forever):
    /// after the delay and the loops, or after every loop's delay and
    /// itself.
    fn spawn_end(&self) -> f64 {
        let (delay, duration) = (f64::from(self.required.emitter_delay), f64::from(self.required.emitter_duration));
        match self.required.emitter_loops {
            0 => f64::INFINITY,
            n if self.delays_every_loop() => f64::from(n) * (delay + duration),
            n => delay + f64::from(n) * duration,
        }
    }
}

/// Rejects a run-time spawn-rate scale that is negative, NaN or infinite.
pub(crate) fn check_rate_scale(scale: f32) -> Result<(), ParticleError> {
    if scale.is_finite() && scale >= 0.0 {
        Ok(())
    } else {
        Err(ParticleError::invalid("spawn_rate_scale", "must be finite and ≥ 0"))
    }
}

/// The largest magnitude per component a spawn distribution can produce (a
/// curve evaluated at spawn lies between its keys, a uniform draw between
/// its ends).
fn largest(d: &Distribution<Vec2>) -> Vec2 {
    match d {
        Distribution::Constant(v) => v.abs(),
        Distribution::Uniform { min, max } => min.abs().max(max.abs()),
        Distribution::Curve(keys) => keys.iter().fold(Vec2::ZERO, |m, k| m.max(k.value.abs())),
    }
}

/// One emitter's live simulation; see the module docs.
#[derive(Clone, Debug)]
pub struct EmitterInstance {
    compiled: CompiledEmitter,
    particles: ParticleStore,
    rng: Rng,
    /// Seconds since the emitter (re)started.
    time: f64,
    /// Fractional particle carried between ticks by the spawn rate.
    spawn_fraction: f64,
    spawning: bool,
    /// Multiplies the spawn rate (see [`Self::set_spawn_rate_scale`]).
    rate_scale: f32,
    /// The system's local-to-world at the last tick (or set since): where
    /// a local-space emitter's particles are in the world.
    local_to_world: Affine3A,
}

impl EmitterInstance {
    /// An instance of `asset`, drawing randomness from `seed` on stream
    /// `stream` (the emitter's index in its system). Validates the asset.
    pub fn new(asset: &EmitterAsset, seed: u64, stream: u64) -> Result<Self, ParticleError> {
        asset.validate("emitter")?;
        Ok(Self::from_validated(asset, seed, stream))
    }

    pub(crate) fn from_validated(asset: &EmitterAsset, seed: u64, stream: u64) -> Self {
        EmitterInstance {
            compiled: CompiledEmitter::new(asset),
            particles: ParticleStore::default(),
            rng: Rng::with_stream(seed, stream),
            time: 0.0,
            spawn_fraction: 0.0,
            spawning: true,
            rate_scale: 1.0,
            local_to_world: Affine3A::IDENTITY,
        }
    }

    /// The emitter's name.
    pub fn name(&self) -> &str {
        &self.compiled.name
    }

    /// The emitter's required module (material, blending, sorting, capacity).
    pub fn required(&self) -> &RequiredModule {
        &self.compiled.required
    }

    /// The live particles, in the emitter's simulation space: world space,
    /// or the system's local space for an emitter with
    /// [`RequiredModule::use_local_space`] (then [`Self::local_to_world`]
    /// places them).
    pub fn particles(&self) -> &ParticleStore {
        &self.particles
    }

    /// Number of live particles.
    pub fn live_particles(&self) -> usize {
        self.particles.len()
    }

    /// Seconds since the emitter (re)started, the delay included.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Whether particles live in the system's local space
    /// ([`RequiredModule::use_local_space`]).
    pub fn uses_local_space(&self) -> bool {
        self.compiled.required.use_local_space
    }

    /// The system transform this emitter was last ticked with (or given by
    /// [`crate::ParticleSystemInstance::set_transform`] since): where a
    /// local-space emitter's particles are drawn.
    pub fn local_to_world(&self) -> &Affine3A {
        &self.local_to_world
    }

    /// Sets the system transform without ticking (see [`Self::local_to_world`]).
    pub(crate) fn set_local_to_world(&mut self, transform: Affine3A) {
        self.local_to_world = transform;
    }

    /// The factor the spawn rate is multiplied by (1 unless set).
    pub fn spawn_rate_scale(&self) -> f32 {
        self.rate_scale
    }

    /// Multiplies the spawn rate (not the bursts) by `scale` from the next
    /// tick on, as a component's run-time rate scale does; the scaled rate
    /// is capped at [`MAX_SPAWN_RATE`]. A negative, NaN or infinite `scale`
    /// is rejected ([`ParticleError::Invalid`] naming `spawn_rate_scale`)
    /// and the previous one kept.
    pub fn set_spawn_rate_scale(&mut self, scale: f32) -> Result<(), ParticleError> {
        check_rate_scale(scale)?;
        self.rate_scale = scale;
        Ok(())
    }

    /// How the sprite conversion picks each particle's sprite-sheet image.
    pub fn sub_uv(&self) -> &SubUv {
        &self.compiled.sub_uv
    }

    /// Whether the emitter is allowed to spawn (see [`Self::set_spawning`]).
    pub fn is_spawning(&self) -> bool {
        self.spawning
    }

    /// Stops or resumes spawning; live particles keep simulating.
    pub fn set_spawning(&mut self, spawning: bool) {
        self.spawning = spawning;
    }

    /// Restarts the clock (bursts fire again, loops count from zero) and
    /// resumes spawning. Live particles are kept.
    pub fn restart(&mut self) {
        self.time = 0.0;
        self.spawn_fraction = 0.0;
        self.spawning = true;
    }

    /// No live particles and no more will spawn (deactivated, or all loops
    /// done after the delay, or after each loop's delay).
    pub fn is_finished(&self) -> bool {
        let c = &self.compiled;
        let done = if c.delays_every_loop() {
            self.time >= c.spawn_end()
        } else {
            // The loop clock's test, as the spawning makes it.
            self.time - f64::from(c.required.emitter_delay) >= c.active_end()
        };
        self.particles.is_empty() && (!self.spawning || done)
    }

    /// A world box holding every live sprite under any rotation, `None`
    /// when there are none: the positions' box padded by the largest
    /// half-diagonal this emitter's sprites can have (see [`crate::Aabb`]'s
    /// module docs). A local-space emitter's box is its local box carried
    /// to the world by [`Self::local_to_world`] (the box of its corners),
    /// then padded.
    pub fn bounds(&self) -> Option<Aabb> {
        let pad = self.compiled.max_half_diagonal;
        if !self.uses_local_space() {
            return crate::bounds::of_points_padded(self.particles.locations(), pad);
        }
        let world = crate::bounds::of_points_padded(self.particles.locations(), 0.0)?.transformed(&self.local_to_world);
        // Sprites scaled by (sx, sy) have at most max(sx, sy) times the
        // half-diagonal.
        let pad = pad * self.sprite_size_scale().max_element();
        Some(Aabb::new(world.min - Vec3::splat(pad), world.max + Vec3::splat(pad)))
    }

    /// What this emitter's sprite sizes are multiplied by in the world:
    /// 1 × 1 in world space; for a local-space emitter the scale of
    /// [`Self::local_to_world`], per axis: the width by its X axis's
    /// length, the height by its Y axis's (so a uniform scale `s` gives `s
    /// × s`; a non-uniform one stretches the sprite like the system's X and
    /// Y; the Z scale is not used). The snapshot applies it
    /// ([`crate::EmitterDynamicData::size_scale`]).
    pub fn sprite_size_scale(&self) -> Vec2 {
        if !self.uses_local_space() {
            return Vec2::ONE;
        }
        let m = &self.local_to_world.matrix3;
        Vec2::new(m.x_axis.length(), m.y_axis.length())
    }

    /// Current sprite sizes: each particle's spawn size times the size over
    /// life at its age (UE's `Size`; Unity's `GetCurrentSize`). Not stored
    /// but computed by this call ([`crate::OverLife`] explains why).
    pub fn current_sizes(&self) -> Vec<Vec2> {
        let p = &self.particles;
        self.compiled.sizes.eval_all(p.base_sizes(), p.relative_times())
    }

    /// Current colours: each particle's spawn colour times the colour over
    /// life at its age (UE's `Color`; Unity's `GetCurrentColor`). Not stored
    /// but computed by this call.
    pub fn current_colors(&self) -> Vec<Vec4> {
        let p = &self.particles;
        self.compiled.colors.eval_all(p.base_colors(), p.relative_times())
    }

    /// How current sizes and colours follow from spawn values and age.
    pub fn over_life(&self) -> (&OverLife<Vec2>, &OverLife<Vec4>) {
        (&self.compiled.sizes, &self.compiled.colors)
    }

    /// Particle `i`'s current size and colour, `None` past the live count.
    pub fn current_size_and_color(&self, i: usize) -> Option<(Vec2, Vec4)> {
        let p = &self.particles;
        let t = *p.relative_times().get(i)?;
        Some((self.compiled.sizes.at(p.base_sizes()[i], t), self.compiled.colors.at(p.base_colors()[i], t)))
    }

    /// Advances the emitter by `dt` seconds with spawn positions transformed
    /// by `transform` (the system's local-to-world). A negative, NaN or
    /// infinite `dt` is ignored.
    pub fn tick(&mut self, dt: f32, transform: &Affine3A) {
        self.tick_with(dt, transform, false);
    }

    /// [`Self::tick`], with `parallel` splitting a large update across the
    /// rayon pool (bit-identical results).
    pub fn tick_with(&mut self, dt: f32, transform: &Affine3A, parallel: bool) {
        if !(dt.is_finite() && dt >= 0.0) {
            return;
        }
        let t0 = self.time;
        self.local_to_world = *transform;
        // Local-space particles spawn in the system's frame.
        let spawn_transform = if self.uses_local_space() { Affine3A::IDENTITY } else { *transform };

        // 1. Update and kill by age: last tick's positions become `old_location`.
        self.particles.swap_location_buffers();
        let params = self.compiled.update_params(dt);
        update_and_kill(&mut self.particles, &params, parallel);

        // 2. Spawn, each particle advanced from its sub-frame birth time, at
        // most as many as there is free room (see `spawn_budget`), within
        // the parts of the tick past the delay (on the loop clock).
        if self.spawning {
            let mut budget = self.spawn_budget();
            if self.compiled.delays_every_loop() {
                self.spawn_delayed_loops(t0, dt, &spawn_transform, &mut budget);
            } else if let Some((start, window)) = self.spawn_window(t0, dt) {
                let end = self.compiled.active_end();
                self.spawn_bursts(start, window, 0.0, end, &spawn_transform, &mut budget);
                self.spawn_rate(start, window, 0.0, end, &spawn_transform, &mut budget);
            }
        }
        self.time = t0 + f64::from(dt);

        // 3. Collide: marks particles to kill by setting relative time to 1.
        // 4. Kill those.
        let collides = self.compiled.ground.is_some() || !self.compiled.kill_volumes.is_empty();
        if collides && self.collide() > 0 {
            self.particles.kill_expired();
        }
    }

    /// The spawning part of the tick `[t0, t0 + dt)` on the loop clock
    /// (emitter time less the delay, which comes once): its start and
    /// length, `None` when the tick ends within the delay. Without a delay
    /// it is the tick itself, bit for bit.
    fn spawn_window(&self, t0: f64, dt: f32) -> Option<(f64, f32)> {
        let delay = f64::from(self.compiled.required.emitter_delay);
        let start = t0 - delay;
        if start >= 0.0 {
            return Some((start, dt));
        }
        let end = start + f64::from(dt);
        (end > 0.0).then_some((0.0, end as f32))
    }

    /// How many spawns a tick may attempt: the free room after the update.
    /// Every attempt draws a particle and uses one, whether the particle is
    /// stored or dies within the tick it was born in, so one tick does at
    /// most `max_particles` spawns' work however large the rate, the burst
    /// counts or `dt`, and an emitter at capacity spawns nothing.
    fn spawn_budget(&self) -> usize {
        (self.compiled.required.max_particles as usize).saturating_sub(self.particles.len())
    }

    /// Spawns for the tick `[t0, t0 + dt)` of an emitter whose delay comes
    /// before every loop: loop `k` spawns during emitter time `[k·c + delay,
    /// (k + 1)·c)` (`c` = delay + duration), which is loop-clock time
    /// `[k·duration, (k + 1)·duration)`. Each loop's part of the tick is
    /// spawned as its own window on the loop clock, its particles advanced
    /// also by the rest of the tick after it. Of a tick spanning more than
    /// [`MAX_BURST_LOOPS`] loops only the last ones spawn.
    fn spawn_delayed_loops(&mut self, t0: f64, dt: f32, transform: &Affine3A, budget: &mut usize) {
        let (delay, duration) = (f64::from(self.compiled.required.emitter_delay), f64::from(self.compiled.required.emitter_duration));
        let cycle = delay + duration;
        let active_end = self.compiled.active_end();
        let t1 = t0 + f64::from(dt);
        // The last loop the tick reaches into, and the first.
        let reach = t1.min(self.compiled.spawn_end());
        if reach <= t0 {
            return;
        }
        let last = ((reach / cycle).ceil() as u64).saturating_sub(1);
        let first = ((t0 / cycle).floor() as u64).max(last.saturating_sub(MAX_BURST_LOOPS - 1));
        for k in first..=last {
            let active = k as f64 * cycle + delay;
            let (from, to) = (t0.max(active), t1.min(active + duration));
            if from >= to {
                continue;
            }
            let start = k as f64 * duration + (from - active);
            // This loop's window ends with the loop on the loop clock, so
            // the next loop's time-0 bursts are not also this one's.
            let end = ((k + 1) as f64 * duration).min(active_end);
            let after = (t1 - to) as f32;
            self.spawn_bursts(start, (to - from) as f32, after, end, transform, budget);
            self.spawn_rate(start, (to - from) as f32, after, end, transform, budget);
        }
    }

    /// Spawns the bursts due in the loop-clock window `[t0, t0 + dt)`
    /// before `end`, each particle advanced to the end of the window and
    /// then by `after` (the rest of the tick).
    fn spawn_bursts(&mut self, t0: f64, dt: f32, after: f32, end: f64, transform: &Affine3A, budget: &mut usize) {
        if self.compiled.bursts.is_empty() || *budget == 0 {
            return;
        }
        let duration = f64::from(self.compiled.required.emitter_duration);
        let t1 = t0 + f64::from(dt);
        if t0 >= end {
            return;
        }
        let last_loop = (t1.min(end) / duration).floor() as u64;
        let first_loop = ((t0 / duration).floor() as u64).max(last_loop.saturating_sub(MAX_BURST_LOOPS - 1));
        for lp in first_loop..=last_loop {
            for b in 0..self.compiled.bursts.len() {
                let burst = self.compiled.bursts[b].0;
                let at = lp as f64 * duration + f64::from(burst.time);
                if at < t0 || at >= t1 || at >= end {
                    continue;
                }
                let remaining = (t1 - at) as f32 + after;
                let loop_t = burst.time / self.compiled.required.emitter_duration;
                let attempts = self.compiled.burst_count(b, &mut self.rng).min(*budget);
                *budget -= attempts;
                for _ in 0..attempts {
                    if !self.spawn_one(remaining, loop_t, transform) {
                        *budget = 0;
                        return; // Full.
                    }
                }
                if *budget == 0 {
                    return;
                }
            }
        }
    }

    /// Spawns the rate's particles due in the loop-clock window `[t0, t0 +
    /// dt)` before `end`, advanced as [`Self::spawn_bursts`]'s are.
    fn spawn_rate(&mut self, t0: f64, dt: f32, after: f32, end: f64, transform: &Affine3A, budget: &mut usize) {
        let dt64 = f64::from(dt);
        let span = (t0 + dt64).min(end) - t0;
        if span <= 0.0 {
            return;
        }
        let duration = f64::from(self.compiled.required.emitter_duration);
        // The rate's scales at the middle of the spawning span.
        let mid = ((t0 + span / 2.0) % duration / duration) as f32;
        let mut rate = self.compiled.rate_at(mid);
        if self.rate_scale != 1.0 {
            rate = (rate * f64::from(self.rate_scale)).min(f64::from(MAX_SPAWN_RATE));
        }
        if rate <= 0.0 {
            return;
        }
        let carried = self.spawn_fraction;
        let total = carried + rate * span;
        // The epsilon keeps 100/s × 60 ticks of 1/60 s from losing its
        // hundredth particle to rounding. `count` stays a float: with a huge
        // `dt` it can pass u64::MAX (validation caps the rate, not `dt`).
        let count = (total + 1e-9).floor();
        self.spawn_fraction = (total - count).clamp(0.0, 1.0);
        // Of the `count` due, only the latest `attempts` are drawn (the
        // earliest are the likeliest to die within the frame); the rest are
        // dropped without any work.
        let attempts = if count < *budget as f64 { count as usize } else { *budget };
        *budget -= attempts;
        // Loop phase at t0; a spawn's phase is this plus its τ, wrapped
        // (one remainder per tick rather than one per particle).
        let phase0 = t0 % duration;
        for back in (0..attempts).rev() {
            // Particle k is due when carried + rate·τ reaches k.
            let k = count - back as f64;
            let tau = ((k - carried) / rate).clamp(0.0, dt64);
            let mut phase = phase0 + tau;
            if phase >= duration {
                phase %= duration;
            }
            let loop_t = (phase / duration) as f32;
            if !self.spawn_one((dt64 - tau) as f32 + after, loop_t, transform) {
                *budget = 0;
                return; // Full.
            }
        }
    }

    /// Spawns one particle born `remaining` seconds before the end of the
    /// tick, with initial curves sampled at normalised loop time `loop_t`.
    /// Returns false when the emitter is full.
    fn spawn_one(&mut self, remaining: f32, loop_t: f32, transform: &Affine3A) -> bool {
        if self.particles.len() >= self.compiled.required.max_particles as usize {
            return false;
        }
        let c = &self.compiled;
        let rng = &mut self.rng;
        let inv_lifetime = c.lifetime.as_ref().map_or(0.0, |d| 1.0 / d.sample(loop_t, rng));
        let local = c.location.as_ref().map_or(Vec3::ZERO, |s| sample_location(s, rng));
        let velocity = c.velocity.as_ref().map_or(Vec3::ZERO, |s| s.sample(loop_t, rng));
        let size = c.size.as_ref().map_or(Vec2::ONE, |d| d.sample(loop_t, rng));
        let color = c.color.as_ref().map_or(Vec4::ONE, |d| d.sample(loop_t, rng));
        let rotation = c.rotation.as_ref().map_or(0.0, |d| d.sample(loop_t, rng));
        let rotation_rate = c.rotation_rate.as_ref().map_or(0.0, |d| d.sample(loop_t, rng));
        // Drawn last, and only when used: other emitters' streams are
        // what they were before random sub-images existed.
        let sub_image_seed = if c.sub_uv.is_random() { rng.next_u32() } else { 0 };
        let location = transform.transform_point3(local);
        let velocity = transform.transform_vector3(velocity);
        let mut particle = Particle {
            old_location: location,
            location,
            base_velocity: velocity,
            velocity,
            rotation,
            rotation_rate,
            base_size: size,
            base_color: color,
            relative_time: 0.0,
            one_over_max_lifetime: inv_lifetime,
            sub_image_seed,
        };
        // One that dies within the tick it was born in is never stored.
        if advance_spawned(&mut particle, &c.update_params(remaining)) {
            self.particles.push(particle);
        }
        true
    }

    /// Applies the ground plane and kill volumes; returns how many particles
    /// it marked for killing.
    fn collide(&mut self) -> usize {
        let c = &self.compiled;
        let p = &mut self.particles;
        let mut marked = 0;
        for i in 0..p.location.len() {
            if p.relative_time[i] >= 1.0 {
                continue;
            }
            let mut kill = false;
            if let Some((height, response)) = c.ground {
                let loc = &mut p.location[i];
                if loc.z < height {
                    match response {
                        CollisionResponse::Kill => kill = true,
                        CollisionResponse::Bounce { restitution } => {
                            loc.z = height + (height - loc.z) * restitution;
                            let v = &mut p.velocity[i];
                            if v.z < 0.0 {
                                v.z = -v.z * restitution;
                            }
                        }
                    }
                }
            }
            let loc = p.location[i];
            kill |= c.kill_volumes.iter().any(|(b, inside)| b.contains(loc) == *inside);
            if kill {
                p.relative_time[i] = 1.0;
                marked += 1;
            }
        }
        marked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asset::{BlendMode, ScreenAlignment, SortMode, SpawnModule};

    fn emitter(modules: Vec<Module>, max: u32, loops: u32) -> EmitterAsset {
        let mut required = RequiredModule::new("M", BlendMode::Translucent, ScreenAlignment::FacingCamera, SortMode::None, max);
        required.emitter_loops = loops;
        EmitterAsset { name: "t".into(), required, modules }
    }

    #[test]
    fn bursts_repeat_per_loop_and_stop_after_the_last() {
        let asset = emitter(vec![Module::Spawn(SpawnModule::new(0.0, vec![Burst::new(0.0, 5)]))], 1000, 3);
        let mut e = EmitterInstance::new(&asset, 1, 0).unwrap();
        for _ in 0..(5 * 60) {
            e.tick(1.0 / 60.0, &Affine3A::IDENTITY);
        }
        // No lifetime module: particles never die of age.
        assert_eq!(e.live_particles(), 15);
        assert!(!e.is_finished());
    }

    /// Runs emitters that die and respawn for a few seconds and checks what
    /// the compaction relies on: a field `varying_fields` calls uniform holds
    /// one value in every particle. Also checks the current colour and size
    /// accessors against the curves evaluated directly (that fields move
    /// together is `update.rs`'s `check_kill_moving`).
    #[test]
    fn uniform_fields_stay_uniform_and_particles_stay_whole() {
        use crate::asset::SpawnModule;
        use crate::distribution::CurveKey;
        fn line<T: crate::DistributionValue>(a: T, b: T) -> Distribution<T> {
            Distribution::Curve(vec![CurveKey { time: 0.0, value: a }, CurveKey { time: 1.0, value: b }])
        }
        let color_curve = line(Vec4::new(1.0, 0.5, 0.25, 1.0), Vec4::new(0.0, 1.0, 0.5, 0.0));
        let size_curve = line(Vec2::new(1.0, 2.0), Vec2::new(3.0, 0.5));
        let rate = Module::Spawn(SpawnModule::new(3000.0, vec![]));
        let (color, size) = (Some(&color_curve), Some(&size_curve));
        let cases = vec![
            (
                vec![
                    Module::Lifetime(Distribution::Uniform { min: 0.2, max: 0.6 }),
                    Module::InitialSize(Distribution::Uniform { min: Vec2::ONE, max: Vec2::splat(3.0) }),
                    Module::InitialColor(Distribution::Constant(Vec4::new(0.5, 1.0, 1.0, 1.0))),
                    Module::ColorOverLife(color_curve.clone()),
                    Module::SizeOverLife(size_curve.clone()),
                ],
                color,
                size,
            ),
            (
                vec![
                    Module::Lifetime(Distribution::Constant(0.3)),
                    Module::InitialColor(Distribution::Uniform { min: Vec4::ZERO, max: Vec4::ONE }),
                    Module::InitialRotation(Distribution::Constant(0.5)),
                    Module::RotationRate(Distribution::Uniform { min: -1.0, max: 1.0 }),
                    Module::ColorOverLife(color_curve.clone()),
                ],
                color,
                None,
            ),
            (
                vec![
                    Module::Lifetime(line(0.2, 0.6)),
                    Module::InitialSize(Distribution::Constant(Vec2::splat(2.0))),
                    Module::InitialRotation(Distribution::Uniform { min: 0.0, max: 1.0 }),
                    Module::SizeOverLife(size_curve.clone()),
                ],
                None,
                size,
            ),
        ];
        for (mut modules, color_over_life, size_over_life) in cases {
            modules.push(rate.clone());
            let mut e = EmitterInstance::new(&emitter(modules, 100_000, 0), 11, 0).unwrap();
            for _ in 0..120 {
                e.tick(1.0 / 60.0, &Affine3A::IDENTITY);
            }
            let (p, v) = (&e.particles, e.compiled.varying);
            assert!(p.len() > 500, "{}", p.len());
            fn same<T: PartialEq>(a: &[T]) -> bool {
                a.iter().all(|x| *x == a[0])
            }
            assert!(v.rotation || same(&p.rotation));
            assert!(v.rotation_rate || same(&p.rotation_rate));
            assert!(v.base_size || same(&p.base_size));
            assert!(v.base_color || same(&p.base_color));
            assert!(v.one_over_max_lifetime || same(&p.one_over_max_lifetime));
            let (sizes, colors) = (e.current_sizes(), e.current_colors());
            assert_eq!((sizes.len(), colors.len()), (p.len(), p.len()));
            for i in 0..p.len() {
                let q = p.get(i);
                let t = q.relative_time;
                let color = color_over_life.map_or(q.base_color, |c| q.base_color * c.evaluate(t));
                let size = size_over_life.map_or(q.base_size, |c| q.base_size * c.evaluate(t));
                assert!((colors[i] - color).abs().max_element() < 1e-4, "{q:?}");
                assert!((sizes[i] - size).abs().max_element() < 1e-4, "{q:?}");
                assert_eq!(e.current_size_and_color(i), Some((sizes[i], colors[i])));
            }
            assert_eq!(e.current_size_and_color(p.len()), None);
        }
    }

    #[test]
    fn ignored_dt_changes_nothing() {
        let asset = emitter(vec![Module::Spawn(SpawnModule::new(100.0, vec![]))], 100, 0);
        let mut e = EmitterInstance::new(&asset, 1, 0).unwrap();
        e.tick(0.1, &Affine3A::IDENTITY);
        let before = e.particles().clone();
        for dt in [f32::NAN, -1.0, f32::INFINITY] {
            e.tick(dt, &Affine3A::IDENTITY);
        }
        assert!(e.particles().bitwise_eq(&before));
    }
}
