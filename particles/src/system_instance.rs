//! A running particle system: the state a `ParticleSystemComponent` owns.
//!
//! UE's `UParticleSystemComponent` keeps one `FParticleEmitterInstance` per
//! emitter of its template and ticks them on the game thread. Here that is a
//! [`ParticleSystemInstance`]: the shared asset (`Arc`, never mutated), one
//! [`EmitterInstance`] per emitter, the seed, and the component's world
//! transform, which places spawned particles. A world-space emitter (the
//! default) leaves a trail when the component moves; a local-space one
//! ([`crate::RequiredModule::use_local_space`]) simulates in the
//! component's frame, so its live particles move with the transform.
//!
//! Completion: an emitter with a loop count finishes when its loops are
//! done and its last particle has died; the system completes when every
//! emitter has, and the tick on which that happens raises a completion
//! event ([`ParticleSystemInstance::take_completion_event`], UE's
//! `OnSystemFinished`), once per activation.
//!
//! Emitters are independent, so a tick runs them on the rayon pool when
//! there is enough work to pay for it, and splits a large emitter's update
//! in halves. Every emitter owns its random stream and the update is pure
//! per particle, so serial and parallel ticks give bit-identical particles;
//! [`TickMode`] forces either for tests and benchmarks.
//!
//! Changing the asset ([`ParticleSystemInstance::set_system`]) validates
//! first and, on error, keeps the previous asset and its particles intact.

use std::sync::Arc;

use glam::Affine3A;
use rayon::prelude::*;

use crate::asset::ParticleSystem;
use crate::bounds::Aabb;
use crate::dynamic_data::{EmitterDynamicData, ParticleSystemDynamicData};
use crate::emitter::EmitterInstance;
use crate::error::ParticleError;

/// Live particles (all emitters) from which [`TickMode::Auto`] goes parallel.
pub const PARALLEL_THRESHOLD: usize = 16 * 1024;

/// Whether a tick may use the rayon pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TickMode {
    /// Parallel from [`PARALLEL_THRESHOLD`] live particles, serial below.
    #[default]
    Auto,
    /// Always on the calling thread.
    Serial,
    /// Always through rayon (emitters in parallel, large updates split).
    Parallel,
}

/// A particle system being simulated; see the module docs.
#[derive(Clone, Debug)]
pub struct ParticleSystemInstance {
    system: Arc<ParticleSystem>,
    emitters: Vec<EmitterInstance>,
    seed: u64,
    transform: Affine3A,
    active: bool,
    fixed_bounds: Option<Aabb>,
    tick_mode: TickMode,
    /// The run-time spawn-rate scale every emitter has.
    rate_scale: f32,
    /// Whether the system was complete after the last tick.
    complete: bool,
    /// A completion not yet taken by [`Self::take_completion_event`].
    completion_event: bool,
}

impl ParticleSystemInstance {
    /// An active instance of `system` with random streams from `seed`.
    /// Fails (naming the field) if the asset does not validate.
    pub fn new(system: Arc<ParticleSystem>, seed: u64) -> Result<Self, ParticleError> {
        system.validate()?;
        let emitters = Self::instantiate(&system, seed);
        Ok(ParticleSystemInstance {
            system,
            emitters,
            seed,
            transform: Affine3A::IDENTITY,
            active: true,
            fixed_bounds: None,
            tick_mode: TickMode::Auto,
            rate_scale: 1.0,
            complete: false,
            completion_event: false,
        })
    }

    fn instantiate(system: &ParticleSystem, seed: u64) -> Vec<EmitterInstance> {
        system.emitters.iter().enumerate().map(|(i, e)| EmitterInstance::from_validated(e, seed, i as u64)).collect()
    }

    /// The asset being simulated.
    pub fn system(&self) -> &Arc<ParticleSystem> {
        &self.system
    }

    /// Replaces the asset: validates it first; on success restarts with new
    /// emitter instances (live particles of the old asset are dropped, and
    /// the active state is kept), on error changes nothing.
    pub fn set_system(&mut self, system: Arc<ParticleSystem>) -> Result<(), ParticleError> {
        system.validate()?;
        let mut emitters = Self::instantiate(&system, self.seed);
        for e in &mut emitters {
            e.set_spawning(self.active);
            e.set_local_to_world(self.transform);
            e.set_spawn_rate_scale(self.rate_scale)?;
        }
        self.emitters = emitters;
        self.system = system;
        (self.complete, self.completion_event) = (false, false);
        Ok(())
    }

    /// The seed random streams derive from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The emitter instances, in asset order.
    pub fn emitters(&self) -> &[EmitterInstance] {
        &self.emitters
    }

    /// Local-to-world transform applied to spawn positions and velocities
    /// (and, for local-space emitters, to their live particles).
    pub fn transform(&self) -> &Affine3A {
        &self.transform
    }

    /// Sets the world transform; rejects one the workspace's transform rule
    /// refuses (`renderer::check_affine`: not finite, a zero scale, too
    /// large to invert), keeping the old.
    /// Local-space emitters' particles move with it at once (the next
    /// snapshot shows them there).
    pub fn set_transform(&mut self, transform: Affine3A) -> Result<(), ParticleError> {
        match renderer::check_affine(&transform) {
            Err(renderer::TransformProblem::NonFinite) => return Err(ParticleError::NonFiniteTransform),
            Err(renderer::TransformProblem::Degenerate) => return Err(ParticleError::DegenerateTransform),
            Ok(()) => {}
        }
        self.transform = transform;
        for e in &mut self.emitters {
            e.set_local_to_world(transform);
        }
        Ok(())
    }

    /// The run-time spawn-rate scale (1 unless set).
    pub fn spawn_rate_scale(&self) -> f32 {
        self.rate_scale
    }

    /// Multiplies every emitter's spawn rate (not its bursts) by `scale`
    /// from the next tick on (see [`EmitterInstance::set_spawn_rate_scale`]).
    /// A negative, NaN or infinite `scale` is rejected
    /// ([`ParticleError::Invalid`] naming `spawn_rate_scale`) and nothing
    /// changes.
    pub fn set_spawn_rate_scale(&mut self, scale: f32) -> Result<(), ParticleError> {
        crate::emitter::check_rate_scale(scale)?;
        for e in &mut self.emitters {
            e.set_spawn_rate_scale(scale)?;
        }
        self.rate_scale = scale;
        Ok(())
    }

    /// How ticks use threads.
    pub fn tick_mode(&self) -> TickMode {
        self.tick_mode
    }

    /// Forces serial or parallel ticks (results are identical either way).
    pub fn set_tick_mode(&mut self, mode: TickMode) {
        self.tick_mode = mode;
    }

    /// Whether emitters spawn.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Starts spawning again. An inactive system restarts its emitters'
    /// clocks (bursts fire again); an active one is left alone.
    pub fn activate(&mut self) {
        if !self.active {
            self.active = true;
            for e in &mut self.emitters {
                e.restart();
            }
            (self.complete, self.completion_event) = (false, false);
        }
    }

    /// Stops spawning; live particles simulate until they die.
    pub fn deactivate(&mut self) {
        self.active = false;
        for e in &mut self.emitters {
            e.set_spawning(false);
        }
    }

    /// Nothing alive and nothing more to spawn.
    pub fn is_complete(&self) -> bool {
        self.emitters.iter().all(EmitterInstance::is_finished)
    }

    /// Whether the system has completed since the event was last taken
    /// (or since it was created, activated or given a new asset): true
    /// once, on the first call after the tick on which every emitter
    /// finished, then false until it completes again (UE's
    /// `OnSystemFinished`). A system that never ticked raises none.
    pub fn take_completion_event(&mut self) -> bool {
        std::mem::take(&mut self.completion_event)
    }

    /// Live particles across all emitters.
    pub fn live_particles(&self) -> usize {
        self.emitters.iter().map(EmitterInstance::live_particles).sum()
    }

    /// Uses `bounds` instead of computing them from the particles (`None`
    /// goes back to computing). Rejects a box with non-finite corners or
    /// `min > max` (the renderer would cull by it), keeping the old bounds.
    pub fn set_fixed_bounds(&mut self, bounds: Option<Aabb>) -> Result<(), ParticleError> {
        if let Some(b) = bounds {
            if !(b.min.is_finite() && b.max.is_finite() && b.min.cmple(b.max).all()) {
                return Err(ParticleError::InvalidBounds);
            }
        }
        self.fixed_bounds = bounds;
        Ok(())
    }

    /// World bounds of the live sprites, or the fixed bounds if set; `None`
    /// when nothing is alive and no fixed bounds are set.
    pub fn bounds(&self) -> Option<Aabb> {
        if self.fixed_bounds.is_some() {
            return self.fixed_bounds;
        }
        self.emitters.iter().filter_map(EmitterInstance::bounds).reduce(Aabb::union)
    }

    /// Advances every emitter by `dt` seconds. A negative, NaN or infinite
    /// `dt` is ignored.
    pub fn tick(&mut self, dt: f32) {
        if !(dt.is_finite() && dt >= 0.0) {
            return;
        }
        let parallel = match self.tick_mode {
            TickMode::Serial => false,
            TickMode::Parallel => true,
            TickMode::Auto => self.live_particles() >= PARALLEL_THRESHOLD,
        };
        let transform = self.transform;
        if parallel {
            self.emitters.par_iter_mut().for_each(|e| e.tick_with(dt, &transform, true));
        } else {
            for e in &mut self.emitters {
                e.tick_with(dt, &transform, false);
            }
        }
        let complete = self.is_complete();
        if complete && !self.complete {
            self.completion_event = true;
        }
        self.complete = complete;
    }

    /// A snapshot of everything the render thread needs this frame.
    pub fn build_dynamic_data(&self) -> ParticleSystemDynamicData {
        ParticleSystemDynamicData { emitters: self.emitters.iter().map(EmitterDynamicData::from_emitter).collect(), bounds: self.bounds() }
    }

    /// [`Self::build_dynamic_data`] into `out`, reusing its allocations (for
    /// a component that keeps a pool of snapshots).
    pub fn build_dynamic_data_into(&self, out: &mut ParticleSystemDynamicData) {
        out.emitters.truncate(self.emitters.len());
        for (i, e) in self.emitters.iter().enumerate() {
            match out.emitters.get_mut(i) {
                Some(d) => d.update_from(e),
                None => out.emitters.push(EmitterDynamicData::from_emitter(e)),
            }
        }
        out.bounds = self.bounds();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_and_snapshot_cross_threads() {
        fn send_static<T: Send + Sync + 'static>() {}
        send_static::<ParticleSystemInstance>();
        send_static::<ParticleSystemDynamicData>();
    }

    #[test]
    fn a_non_finite_or_degenerate_transform_is_rejected_and_the_old_kept() {
        let mut s = ParticleSystemInstance::new(Arc::new(ParticleSystem::default()), 0).unwrap();
        let t = Affine3A::from_translation(glam::Vec3::X);
        s.set_transform(t).unwrap();
        assert!(matches!(s.set_transform(Affine3A::from_translation(glam::Vec3::NAN)), Err(ParticleError::NonFiniteTransform)));
        // The workspace's transform rule: a zero scale, or one too large to invert.
        for scale in [0.0, 1e30] {
            let bad = Affine3A::from_scale(glam::Vec3::splat(scale));
            assert!(matches!(s.set_transform(bad), Err(ParticleError::DegenerateTransform)), "scale {scale}");
        }
        assert_eq!(*s.transform(), t);
        assert!(s.is_complete());
        assert_eq!(s.bounds(), None);
    }
}
