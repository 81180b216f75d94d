//! The `particle_asset` target: bytes handed to the particle asset loader
//! as a file's text.
//!
//! What it holds the loader to:
//! - no panic, whatever the bytes (not UTF-8, not JSON, JSON of the wrong
//!   shape, values out of range);
//! - a rejection is a parse or validation error that names the field (a
//!   path such as `emitters[0].modules[1].lifetime`, empty only for the
//!   document itself), with a message;
//! - a loaded system validates, saves, and reloads equal (the save is
//!   exactly what an artist's tools would write back);
//! - a loaded system of modest size simulates a few frames without a
//!   panic and without a non-finite particle (validation is what the
//!   simulation relies on).

use std::sync::Arc;

use particles::{ParticleError, ParticleSystem, ParticleSystemInstance};

/// Above this many particles in all, a loaded system is not simulated
/// (validation allows millions; the fuzzer's time is better spent elsewhere).
const SIMULATE_MAX_PARTICLES: u64 = 4096;

/// The fuzz target body: see the module doc.
pub fn particle_asset(data: &[u8]) {
    // `ParticleSystem::load` reads the file as UTF-8 and fails with an I/O
    // error otherwise; the lossy text still exercises the parser.
    let text = String::from_utf8_lossy(data);
    let system = match ParticleSystem::from_json_str(&text) {
        Ok(system) => system,
        Err(e) => {
            match &e {
                ParticleError::Parse { message, .. } | ParticleError::Invalid { message, .. } => {
                    assert!(!message.is_empty(), "{e:?} has no message");
                }
                other => panic!("loading text failed with {other:?}, not a parse or validation error"),
            }
            let path = e.field_path().expect("parse and validation errors name a field");
            if let ParticleError::Invalid { .. } = e {
                assert!(path.starts_with("emitters["), "validation error {e} names no emitter field");
            }
            return;
        }
    };
    if let Err(e) = system.validate() {
        panic!("a loaded system does not validate: {e}");
    }
    let saved = system.to_json_string().unwrap_or_else(|e| panic!("a loaded system cannot be saved: {e}"));
    let reloaded = ParticleSystem::from_json_str(&saved).unwrap_or_else(|e| panic!("a saved system does not reload: {e}\n{saved}"));
    assert_eq!(reloaded, system, "a saved system reloads different:\n{saved}");

    let total: u64 = system.emitters.iter().map(|e| u64::from(e.required.max_particles)).sum();
    if total > SIMULATE_MAX_PARTICLES {
        return;
    }
    let mut instance =
        ParticleSystemInstance::new(Arc::new(system), 7).unwrap_or_else(|e| panic!("a loaded system does not instantiate: {e}"));
    for _ in 0..4 {
        instance.tick(1.0 / 30.0);
    }
    assert!(instance.live_particles() as u64 <= total, "more particles than the emitters hold");
    if let Some(b) = instance.bounds() {
        assert!(b.min.is_finite() && b.max.is_finite(), "non-finite particle bounds {b:?}");
    }
}
