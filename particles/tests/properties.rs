//! Invariants under random input.
//!
//! * Random frame times, spawn rates up to the cap and lifetimes down to
//!   the minimum, with and without an emitter delay (once or every loop),
//!   local space under a scaled transform, a sprite sheet (its index from
//!   a curve or drawn at random), spawn scale curves and a random burst
//!   count: no panics, every emitter's capacity
//!   holds and is reached
//!   exactly where the numbers demand it (and some cases must reach it),
//!   every live particle's relative time stays in [0, 1), and serial equals
//!   parallel.
//! * Random, mostly invalid calls of every mutating method of
//!   `ParticleSystemComponent` (and of the instance it lends out): nothing
//!   panics, each rejection is a typed error, and a rejected call leaves the
//!   component as it was (compared through its full `Debug` text).
//! * Random edits of an asset's JSON, loaded from text and from a file: no
//!   panics, the same verdict both ways, typed errors.

mod common;

use common::*;
use particles::*;
use proptest::prelude::*;

fn dt_strategy() -> impl Strategy<Value = f32> {
    prop_oneof![
        8 => test_support::f32_in(0.0, 0.1),
        1 => test_support::f32_in(0.1, 3.0),
        1 => Just(0.0f32),
        1 => prop_oneof![Just(-1.0f32), Just(f32::NAN), Just(f32::INFINITY), Just(1e-7f32)],
    ]
}

/// Spawn rates from gentle to the cap.
fn rate_strategy() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => test_support::f32_in(0.0, 5000.0),
        1 => test_support::f32_in(1e4, MAX_SPAWN_RATE),
        2 => Just(MAX_SPAWN_RATE),
    ]
}

/// Lifetimes from the shortest allowed to seconds.
fn lifetime_strategy() -> impl Strategy<Value = f32> {
    prop_oneof![
        2 => Just(MIN_LIFETIME),
        2 => MIN_LIFETIME..0.01f32,
        1 => test_support::f32_in(0.01, 2.0),
    ]
}

/// One case of random frame times: a busy emitter (bursts, random
/// lifetimes, limited loops), a short-lived one (one constant lifetime) and
/// an immortal one (no lifetime), each with its own capacity.
#[derive(Clone, Debug)]
struct FrameCase {
    dts: Vec<f32>,
    max: [u32; 3],
    rate: [f32; 3],
    life: f32,
    seed: u64,
}

fn frame_case() -> impl Strategy<Value = FrameCase> {
    let max = prop_oneof![3 => 1u32..400, 1 => 400u32..3000];
    (
        proptest::collection::vec(dt_strategy(), 1..40),
        [max.clone(), max.clone(), max],
        [rate_strategy(), rate_strategy(), rate_strategy()],
        lifetime_strategy(),
        any::<u64>(),
    )
        .prop_map(|(dts, max, rate, life, seed)| FrameCase { dts, max, rate, life, seed })
}

/// Checks one case; returns how many emitters it saw filled to exactly
/// their capacity where the numbers say they must be.
fn check_frame_case(c: &FrameCase) -> Result<usize, TestCaseError> {
    let mut busy = busy_emitter(c.max[0], c.rate[0]);
    busy.required.emitter_duration = 0.3;
    busy.required.emitter_loops = (c.seed % 3) as u32;
    // The Cascade timing, space and sheet settings, by bits of the seed.
    let bit = |k: u32| c.seed >> (8 + k) & 1 == 1;
    busy.required.emitter_delay = if bit(0) { 0.25 } else { 0.0 };
    busy.required.delay_first_loop_only = !bit(6);
    busy.required.use_local_space = bit(1);
    if bit(2) {
        busy.required.sub_uv_interpolation = if bit(3) { SubUvInterpolation::Linear } else { SubUvInterpolation::LinearBlend };
        (busy.required.sub_images_horizontal, busy.required.sub_images_vertical) = (4, 2);
        busy.modules.push(Module::SubImageIndex(if bit(7) {
            busy.required.random_image_changes = 2;
            Distribution::Uniform { min: 1.0, max: 9.0 }
        } else {
            Distribution::Curve(vec![CurveKey { time: 0.0, value: 0.0 }, CurveKey { time: 1.0, value: 9.0 }])
        }));
    }
    if let Module::Spawn(spawn) = &mut busy.modules[0] {
        if bit(4) {
            // Up to the cap: the scale's largest value is 1.
            spawn.rate_scale = Some(Distribution::Curve(vec![CurveKey { time: 0.0, value: 1.0 }, CurveKey { time: 1.0, value: 0.0 }]));
            spawn.burst_scale = Some(Distribution::Constant(0.5));
        }
        if bit(8) {
            spawn.bursts[0].count_low = Some(0);
        }
    }
    let short = emitter(c.max[1], vec![spawn(c.rate[1], &[]), lifetime(c.life)]);
    let immortal = emitter(c.max[2], vec![spawn(c.rate[2], &[])]);
    let mut s = instance(vec![busy, short, immortal], c.seed);
    if bit(5) {
        // Rotated, moved and (non-uniformly) scaled.
        let scale = glam::Vec3::new(2.0, 0.5, 1.0);
        s.set_transform(glam::Affine3A::from_scale_rotation_translation(
            scale,
            glam::Quat::from_rotation_z(1.0),
            glam::Vec3::new(30.0, -20.0, 5.0),
        ))
        .unwrap();
    }
    let mut elapsed = 0.0f64;
    let mut filled = 0;
    for &dt in &c.dts {
        s.tick(dt);
        let valid = dt.is_finite() && dt >= 0.0;
        if valid {
            elapsed += f64::from(dt);
        }
        for (e, &max) in s.emitters().iter().zip(&c.max) {
            prop_assert!(e.live_particles() <= max as usize, "{} > capacity {}", e.live_particles(), max);
            for &t in e.particles().relative_times() {
                prop_assert!((0.0..1.0).contains(&t), "relative time {}", t);
            }
            for p in e.particles().locations() {
                prop_assert!(p.is_finite());
            }
        }
        // Short-lived: the particles due in the last min(lifetime, dt)
        // seconds of this tick survive it. When they are more than the
        // capacity (with a particle's margin for rounding), it is full.
        let due = f64::from(c.rate[1]) * f64::from(c.life.min(dt));
        if valid && due >= f64::from(c.max[1]) + 2.0 {
            prop_assert_eq!(s.emitters()[1].live_particles(), c.max[1] as usize, "short-lived emitter not full: {} due", due);
            filled += 1;
        }
        // Immortal: everything spawned stays; once more than the capacity
        // was due, it is full.
        if f64::from(c.rate[2]) * elapsed >= f64::from(c.max[2]) + 2.0 {
            prop_assert_eq!(s.emitters()[2].live_particles(), c.max[2] as usize, "immortal emitter not full after {} s", elapsed);
            filled += 1;
        }
    }
    let data = s.build_dynamic_data();
    let mut out = Vec::new();
    for d in &data.emitters {
        build_sprite_vertices(d, glam::Vec3::ZERO, &mut out);
        prop_assert_eq!(out.len(), d.len());
    }
    Ok(filled)
}

/// Random frame times, rates up to `MAX_SPAWN_RATE`, lifetimes down to
/// `MIN_LIFETIME`: no panics, every emitter within its capacity, relative
/// times in [0, 1), finite positions; emitters whose numbers demand it are
/// exactly full. Run by hand (not `proptest!`) so that it can also check
/// that the cases reached capacity at all: a strategy that never filled an
/// emitter would test nothing about capacity.
#[test]
fn random_frame_times_keep_invariants() {
    use proptest::test_runner::{Config, TestRunner};
    use std::cell::Cell;
    let filled = Cell::new(0usize);
    let cases = Cell::new(0usize);
    let mut runner = TestRunner::new(Config { cases: test_support::property_cases(48), ..Config::default() });
    runner
        .run(&frame_case(), |c| {
            cases.set(cases.get() + 1);
            filled.set(filled.get() + check_frame_case(&c)?);
            Ok(())
        })
        .unwrap();
    assert!(cases.get() >= 48);
    assert!(filled.get() >= 10, "only {} ticks checked an emitter at capacity in {} cases", filled.get(), cases.get());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: test_support::property_cases(48), ..ProptestConfig::default() })]

    #[test]
    fn serial_equals_parallel_for_random_frames(
        dts in proptest::collection::vec(test_support::f32_in(0.0, 0.2), 1..20),
        seed in any::<u64>(),
    ) {
        // The second draws random sub-images: their seeds move with the
        // particles too.
        let mut random = busy_emitter(500, 300.0);
        (random.required.sub_uv_interpolation, random.required.sub_images_horizontal) = (SubUvInterpolation::Linear, 4);
        random.modules.push(Module::SubImageIndex(Distribution::Uniform { min: 0.0, max: 4.0 }));
        let emitters = vec![busy_emitter(3000, 4000.0), random];
        let mut a = instance(emitters.clone(), seed);
        let mut b = instance(emitters, seed);
        a.set_tick_mode(TickMode::Serial);
        b.set_tick_mode(TickMode::Parallel);
        for dt in dts {
            a.tick(dt);
            b.tick(dt);
        }
        for (x, y) in a.emitters().iter().zip(b.emitters()) {
            prop_assert!(x.particles().bitwise_eq(y.particles()));
        }
    }
}

/// A small asset using every module kind, for the mutation strategies.
const BASE_ASSET: &str = r#"{ "emitters": [ {
  "name": "e",
  "required": { "material": "M", "blend_mode": "translucent", "screen_alignment": "velocity_aligned",
                "sort_mode": "distance_to_view", "max_particles": 200, "emitter_duration": 0.5, "emitter_loops": 2,
                "emitter_delay": 0.1, "delay_first_loop_only": false },
  "modules": [
    { "spawn": { "rate": 300.0, "bursts": [ { "time": 0.1, "count": 20 }, { "time": 0.2, "count": 9, "count_low": 3 } ] } },
    { "lifetime": { "uniform": { "min": 0.2, "max": 0.8 } } },
    { "initial_location": { "sphere": { "center": [0.0, 0.0, 5.0], "radius": 2.0, "surface_only": false } } },
    { "initial_velocity": { "cone": { "direction": [0.0, 0.0, 1.0], "angle": 0.3, "speed": { "constant": 50.0 } } } },
    { "initial_size": { "uniform": { "min": [1.0, 1.0], "max": [2.0, 3.0] } } },
    { "initial_color": { "constant": [1.0, 0.5, 0.25, 1.0] } },
    { "initial_rotation": { "uniform": { "min": 0.0, "max": 3.0 } } },
    { "rotation_rate": { "constant": 1.5 } },
    { "acceleration": [0.0, 0.0, -98.0] },
    { "drag": { "coefficient": 0.5 } },
    { "color_over_life": { "curve": [ { "time": 0.0, "value": [1.0, 1.0, 1.0, 0.0] }, { "time": 1.0, "value": [0.5, 0.5, 0.5, 1.0] } ] } },
    { "size_over_life": { "constant": [1.0, 2.0] } },
    { "kill_volume": { "min": [-100.0, -100.0, -100.0], "max": [100.0, 100.0, 100.0], "kill_inside": false } },
    { "ground_plane_collision": { "height": 0.0, "response": { "bounce": { "restitution": 0.5 } } } }
  ] } ] }"#;

/// Values a mutation puts where a number was: out of range, wrong type,
/// overflowing, or plainly valid.
const REPLACEMENTS: &[&str] =
    &["-1", "0", "1e39", "-0.5", "NaN", "\"x\"", "null", "true", "[]", "{}", "4294967296", "16777217", "0.5", "3", "1.5"];

/// The base asset with a few edits: numbers replaced, bytes cut out, junk
/// put in. Mostly invalid, sometimes still valid.
fn mutated_asset() -> impl Strategy<Value = String> {
    let edit = (0usize..4, any::<prop::sample::Index>(), 0usize..REPLACEMENTS.len(), 1usize..40);
    proptest::collection::vec(edit, 1..4).prop_map(|edits| {
        let mut text = BASE_ASSET.to_string();
        for (kind, at, pick, len) in edits {
            let bytes = text.as_bytes();
            match kind {
                // Replace the number at or after a random place.
                0 | 1 => {
                    let from = at.index(bytes.len());
                    if let Some(start) = (from..bytes.len()).find(|&i| bytes[i].is_ascii_digit() || bytes[i] == b'-') {
                        let end = (start..bytes.len())
                            .find(|&i| !(bytes[i].is_ascii_digit() || b"-.e".contains(&bytes[i])))
                            .unwrap_or(bytes.len());
                        text.replace_range(start..end, REPLACEMENTS[pick]);
                    }
                }
                // Cut a range out (on character boundaries: the text is ASCII).
                2 => {
                    let start = at.index(bytes.len());
                    text.replace_range(start..(start + len).min(bytes.len()), "");
                }
                // Put junk in.
                _ => text.insert_str(at.index(bytes.len() + 1), &"{]\",:x9".repeat(len % 3 + 1)),
            }
        }
        text
    })
}

/// Everything a component holds, as text. Debug prints floats exactly (and
/// NaN as NaN), so equal strings are equal states.
fn state(c: &ParticleSystemComponent) -> String {
    format!("{c:?}")
}

fn finite_or_not() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => test_support::f32_in(-100.0, 100.0),
        1 => prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY), Just(f32::MAX)],
    ]
}

/// One call of the component's mutating API, with random (often invalid)
/// arguments.
#[derive(Clone, Debug)]
enum Call {
    Tick(f32),
    SetSystem(String),
    SpawnTransform([f32; 16]),
    InstanceTransform([f32; 12]),
    FixedBounds(Option<([f32; 3], [f32; 3])>),
    Materials(bool),
    TickMode(u8),
    Activate,
    Deactivate,
    RateScale(f32),
    TakeCompletion,
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        3 => dt_strategy().prop_map(Call::Tick),
        3 => mutated_asset().prop_map(Call::SetSystem),
        1 => proptest::array::uniform16(finite_or_not()).prop_map(Call::SpawnTransform),
        1 => proptest::array::uniform12(finite_or_not()).prop_map(Call::InstanceTransform),
        1 => proptest::option::of((proptest::array::uniform3(finite_or_not()), proptest::array::uniform3(finite_or_not())))
            .prop_map(Call::FixedBounds),
        1 => any::<bool>().prop_map(Call::Materials),
        1 => (0u8..3).prop_map(Call::TickMode),
        1 => Just(Call::Activate),
        1 => Just(Call::Deactivate),
        1 => finite_or_not().prop_map(Call::RateScale),
        1 => Just(Call::TakeCompletion),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: test_support::property_cases(64), ..ProptestConfig::default() })]

    /// Random, mostly invalid calls of every mutating method of the
    /// component (and of its instance): nothing panics, every rejection is a
    /// typed error, and a rejected call leaves the component exactly as it
    /// was.
    #[test]
    fn component_api_rejects_bad_input_and_changes_nothing(
        calls in proptest::collection::vec(call(), 1..24),
        seed in any::<u64>(),
    ) {
        use engine_core::Component;
        let system = std::sync::Arc::new(ParticleSystem::from_json_str(BASE_ASSET).unwrap());
        let mut c = ParticleSystemComponent::new(system, seed, ParticleMaterials::new()).unwrap();
        for call in calls {
            let before = state(&c);
            let result: Result<(), ParticleError> = match call {
                Call::Tick(dt) => {
                    c.tick(dt);
                    if !(dt.is_finite() && dt >= 0.0) {
                        // An ignored frame time is not an error; it changes nothing.
                        prop_assert!(state(&c) == before, "ignored frame time changed the component");
                    }
                    Ok(())
                }
                // Parsed without validation, so that `set_system` itself
                // sees the invalid assets (`from_json_str` would reject them).
                Call::SetSystem(text) => match serde_json::from_str::<ParticleSystem>(&text) {
                    Ok(s) => c.set_system(std::sync::Arc::new(s)),
                    Err(_) => Ok(()),
                },
                Call::SpawnTransform(m) => c.set_spawn_transform(glam::Mat4::from_cols_array(&m)),
                Call::InstanceTransform(m) => c
                    .instance_mut()
                    .set_transform(glam::Affine3A::from_cols_array(&m)),
                Call::FixedBounds(b) => c.instance_mut().set_fixed_bounds(b.map(|(min, max)| Aabb {
                    min: min.into(),
                    max: max.into(),
                })),
                Call::Materials(fallback) => {
                    let m = ParticleMaterials::new();
                    c.set_materials(if fallback { m.with_fallback(Default::default()) } else { m });
                    Ok(())
                }
                Call::TickMode(k) => {
                    c.instance_mut().set_tick_mode([TickMode::Auto, TickMode::Serial, TickMode::Parallel][k as usize]);
                    Ok(())
                }
                Call::Activate => {
                    c.activate();
                    Ok(())
                }
                Call::Deactivate => {
                    c.deactivate();
                    Ok(())
                }
                Call::RateScale(k) => c.set_spawn_rate_scale(k),
                Call::TakeCompletion => {
                    // Taken once: a second take right after reports none.
                    c.take_completion_event();
                    prop_assert!(!c.take_completion_event());
                    Ok(())
                }
            };
            if let Err(e) = result {
                prop_assert!(!e.to_string().is_empty());
                prop_assert!(state(&c) == before, "rejected call changed the component: {}", e);
            }
            for e in c.instance().emitters() {
                prop_assert!(e.live_particles() <= e.required().max_particles as usize);
            }
        }
    }

    /// Loading a mutated asset from text or from a file: never a panic;
    /// both give the same verdict; a rejected text is a parse or validation
    /// error (which name the field), a missing file an I/O error.
    #[test]
    fn asset_loading_never_panics_and_rejects_with_typed_errors(
        text in mutated_asset(),
        junk in proptest::collection::vec(any::<u8>(), 0..64),
        case in any::<u64>(),
    ) {
        let parsed = ParticleSystem::from_json_str(&text);
        let dir = std::env::temp_dir().join(format!("particles-prop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{case}.json"));
        std::fs::write(&path, &text).unwrap();
        let loaded = ParticleSystem::load(&path);
        prop_assert_eq!(parsed.is_ok(), loaded.is_ok());
        if let (Ok(a), Ok(b)) = (&parsed, &loaded) {
            prop_assert_eq!(a, b);
            prop_assert!(a.validate().is_ok());
        }
        if let Err(e) = &parsed {
            // Text errors are parse or validation errors, which name a field.
            prop_assert!(
                matches!(e, ParticleError::Parse { .. } | ParticleError::Invalid { .. }),
                "{:?}", e
            );
            prop_assert!(!e.to_string().is_empty());
        }
        // Not UTF-8, or not JSON at all.
        std::fs::write(&path, &junk).unwrap();
        prop_assert!(ParticleSystem::load(&path).is_err());
        let _ = std::fs::remove_file(&path);
        let missing = ParticleSystem::load(dir.join("missing.json"));
        prop_assert!(matches!(missing, Err(ParticleError::Io { .. })), "{:?}", missing.err());
    }
}
