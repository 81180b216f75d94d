//! Simulation behaviour with real numbers: spawn counts, bursts, lifetimes,
//! exact motion, capacity, determinism, threading, activation, transforms,
//! bounds and collisions.

mod common;

use common::*;
use glam::{Affine3A, Quat, Vec2, Vec3, Vec4};
use particles::*;

fn run(instance: &mut ParticleSystemInstance, seconds: f32, dt: f32) {
    let ticks = (seconds / dt).round() as usize;
    for _ in 0..ticks {
        instance.tick(dt);
    }
}

fn point_velocity(position: Vec3, velocity: Vec3) -> Vec<Module> {
    vec![
        Module::InitialLocation(LocationShape::Point { position }),
        Module::InitialVelocity(VelocityShape::Box { min: velocity, max: velocity }),
    ]
}

#[test]
fn spawn_rate_100_per_second_for_one_second_gives_100_particles() {
    let mut s = instance(vec![emitter(1000, vec![spawn(100.0, &[]), lifetime(2.0)])], 1);
    run(&mut s, 1.0, DT);
    let live = s.live_particles();
    assert!((99..=101).contains(&live), "live {live}");
    // Spawn times are spread through each frame: the ages are 1/100 s apart.
    let e = &s.emitters()[0];
    let mut ages: Vec<f32> = e.particles().relative_times().iter().map(|t| t * 2.0).collect();
    ages.sort_by(f32::total_cmp);
    for w in ages.windows(2) {
        assert!((w[1] - w[0] - 0.01).abs() < 1e-4, "gap {}", w[1] - w[0]);
    }
}

#[test]
fn burst_of_37_at_half_a_second_spawns_exactly_37() {
    let mut s = instance(vec![emitter(1000, vec![spawn(0.0, &[(0.5, 37)]), lifetime(10.0)])], 2);
    run(&mut s, 0.45, DT);
    assert_eq!(s.live_particles(), 0);
    run(&mut s, 0.5, DT);
    assert_eq!(s.live_particles(), 37);
    // The next loop (duration 1 s) bursts again.
    run(&mut s, 0.6, DT);
    assert_eq!(s.live_particles(), 74);
    // Born at t = 0.5 and 1.5; now t = 1.55: ages 1.05 and 0.05 (± a tick of rounding).
    let mut ages: Vec<f32> = s.emitters()[0].particles().relative_times().iter().map(|t| t * 10.0).collect();
    ages.sort_by(f32::total_cmp);
    assert!((ages[0] - 0.05).abs() < 0.02 && (ages[73] - 1.05).abs() < 0.02, "{} {}", ages[0], ages[73]);

    // Large steps over the burst time spawn it once too.
    let mut s = instance(vec![emitter(1000, vec![spawn(0.0, &[(0.5, 37)]), lifetime(10.0)])], 2);
    s.tick(0.3);
    s.tick(0.3);
    assert_eq!(s.live_particles(), 37);
}

#[test]
fn particles_die_at_their_lifetime() {
    let mut once = emitter(100, vec![spawn(0.0, &[(0.0, 10)]), lifetime(1.0)]);
    once.required.emitter_loops = 1;
    let mut s = instance(vec![once], 3);
    run(&mut s, 0.99, 0.01);
    assert_eq!(s.live_particles(), 10);
    run(&mut s, 0.02, 0.01);
    assert_eq!(s.live_particles(), 0);

    // A steady stream: after spawning stops, everything is gone one lifetime later.
    let mut s = instance(vec![emitter(1000, vec![spawn(200.0, &[]), lifetime(0.5)])], 3);
    run(&mut s, 1.0, DT);
    let live = s.live_particles();
    assert!((99..=101).contains(&live), "steady state is rate × lifetime, got {live}");
    s.deactivate();
    run(&mut s, 0.5 + 2.0 * DT, DT);
    assert_eq!(s.live_particles(), 0);
    assert!(s.is_complete());
}

#[test]
fn gravity_follows_the_constant_acceleration_formula() {
    let (p0, v0, g) = (Vec3::new(1.0, 2.0, 3.0), Vec3::new(10.0, -5.0, 300.0), Vec3::new(0.0, 0.0, -980.0));
    let mut modules = vec![spawn(0.0, &[(0.0, 1)]), lifetime(10.0), Module::Acceleration(g)];
    modules.extend(point_velocity(p0, v0));
    let mut s = instance(vec![emitter(10, modules)], 4);
    run(&mut s, 1.5, DT);
    let e = &s.emitters()[0];
    let t = e.time() as f32;
    let expected = p0 + v0 * t + 0.5 * g * t * t;
    let got = e.particles().locations()[0];
    assert!((got - expected).abs().max_element() < 5e-3, "{got} vs {expected}");
    assert!((e.particles().velocities()[0] - (v0 + g * t)).abs().max_element() < 5e-3);
    assert_eq!(e.particles().base_velocities()[0], v0, "base velocity keeps the spawn velocity");
}

#[test]
fn sub_frame_spawns_follow_the_formula_at_their_own_age() {
    let (v0, g) = (Vec3::new(10.0, 0.0, 300.0), Vec3::new(0.0, 0.0, -980.0));
    let mut modules = vec![spawn(37.0, &[]), lifetime(2.0), Module::Acceleration(g)];
    modules.extend(point_velocity(Vec3::ZERO, v0));
    let mut s = instance(vec![emitter(100, modules)], 5);
    run(&mut s, 1.0, DT);
    let p = s.emitters()[0].particles();
    assert_eq!(p.len(), 37);
    let mut ages = Vec::new();
    for i in 0..p.len() {
        let age = p.relative_times()[i] * 2.0;
        let expected = v0 * age + 0.5 * g * age * age;
        assert!((p.locations()[i] - expected).abs().max_element() < 0.02, "age {age}: {} vs {expected}", p.locations()[i]);
        ages.push(age);
    }
    // Born at k / 37 s for k = 1..=37.
    ages.sort_by(f32::total_cmp);
    for (k, age) in ages.iter().enumerate() {
        let expected = k as f32 / 37.0;
        assert!((age - expected).abs() < 1e-4, "age {age} vs {expected}");
    }
}

#[test]
fn drag_rotation_and_over_life_modules_give_expected_values() {
    let mut modules = vec![
        spawn(0.0, &[(0.0, 1)]),
        lifetime(1.0),
        Module::Drag { coefficient: 2.0 },
        Module::InitialSize(Distribution::Constant(Vec2::new(2.0, 4.0))),
        Module::InitialColor(Distribution::Constant(Vec4::new(1.0, 0.5, 0.25, 1.0))),
        Module::InitialRotation(Distribution::Constant(0.5)),
        Module::RotationRate(Distribution::Constant(2.0)),
        Module::ColorOverLife(Distribution::Curve(vec![
            CurveKey { time: 0.0, value: Vec4::ONE },
            CurveKey { time: 1.0, value: Vec4::new(1.0, 1.0, 1.0, 0.0) },
        ])),
        Module::SizeOverLife(Distribution::Curve(vec![
            CurveKey { time: 0.0, value: Vec2::ONE },
            CurveKey { time: 1.0, value: Vec2::splat(3.0) },
        ])),
    ];
    modules.extend(point_velocity(Vec3::ZERO, Vec3::new(100.0, 0.0, 0.0)));
    let mut s = instance(vec![emitter(10, modules)], 6);
    run(&mut s, 0.5, DT);
    let p = s.emitters()[0].particles().get(0);
    let (size, color) = s.emitters()[0].current_size_and_color(0).unwrap();
    let t = s.emitters()[0].time() as f32;
    assert!((p.relative_time - t).abs() < 1e-5);
    assert!((p.velocity.x - 100.0 * (-2.0 * t).exp()).abs() < 1e-3);
    assert!((p.location.x - 50.0 * (1.0 - (-2.0 * t).exp())).abs() < 1e-3);
    assert!((p.rotation - (0.5 + 2.0 * t)).abs() < 1e-4);
    assert!((color - Vec4::new(1.0, 0.5, 0.25, 1.0 - t)).abs().max_element() < 1e-3, "{}", color);
    assert!((size - Vec2::new(2.0, 4.0) * (1.0 + 2.0 * t)).abs().max_element() < 1e-3, "{}", size);
    assert!(p.old_location.x < p.location.x);
}

#[test]
fn max_particles_cap_is_respected() {
    let mut s = instance(vec![emitter(500, vec![spawn(10_000.0, &[(0.0, 300)]), lifetime(10.0)])], 7);
    for _ in 0..60 {
        s.tick(DT);
        assert!(s.live_particles() <= 500);
    }
    assert_eq!(s.live_particles(), 500);
    // One enormous step neither panics nor overflows the cap.
    s.tick(1000.0);
    assert!(s.live_particles() <= 500);
}

/// Runs `ticks` in a thread; fails (rather than hangs) when they take
/// longer than `limit`. Returns the instance.
fn ticks_within(mut s: ParticleSystemInstance, dts: Vec<f32>, limit: std::time::Duration) -> ParticleSystemInstance {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for dt in dts {
            s.tick(dt);
        }
        let _ = tx.send(s);
    });
    match rx.recv_timeout(limit) {
        Ok(s) => s,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("ticks took longer than {limit:?}: spawn work is not bounded by capacity")
        }
        Err(e) => panic!("the ticking thread panicked: {e}"),
    }
}

/// A full emitter at the highest rate, ticked with a huge `dt`: the spawn
/// count (rate × dt ≈ 1e20) passes u64::MAX. It used to overflow computing
/// which spawns to keep (a panic in debug, ~2^64 iterations in release).
#[test]
fn a_full_emitter_with_a_huge_frame_time_spawns_nothing_and_does_not_overflow() {
    let s = instance(vec![emitter(1, vec![spawn(MAX_SPAWN_RATE, &[])])], 3);
    let s = ticks_within(s, vec![DT, 1e13, 1e13, f32::MAX], std::time::Duration::from_secs(30));
    // No lifetime module: the first particle lives on, and fills it.
    assert_eq!(s.live_particles(), 1);
    let p = s.emitters()[0].particles();
    assert!(p.relative_times().iter().all(|t| (0.0..1.0).contains(t)));
}

/// A burst far larger than the emitter, of particles that die within the
/// tick they are born in, repeated by many loops per tick: each tick used
/// to draw every one of them (16 M × loops per tick). Now a tick attempts
/// at most `max_particles` spawns, so this finishes in a moment.
#[test]
fn huge_bursts_of_short_lived_particles_take_work_bounded_by_capacity() {
    let mut e = emitter(4, vec![spawn(0.0, &[(0.0, MAX_PARTICLES_LIMIT), (0.0005, MAX_PARTICLES_LIMIT)]), lifetime(MIN_LIFETIME)]);
    e.required.emitter_duration = 0.001;
    let s = instance(vec![e.clone(), e], 5);
    let s = ticks_within(s, vec![DT; 120], std::time::Duration::from_secs(30));
    for e in s.emitters() {
        assert!(e.live_particles() <= 4);
    }

    // At capacity with long-lived particles: nothing more spawns, however
    // large the rate and bursts.
    let mut s = instance(vec![emitter(1000, vec![spawn(MAX_SPAWN_RATE, &[(0.0, MAX_PARTICLES_LIMIT)])])], 9);
    s.tick(DT);
    assert_eq!(s.live_particles(), 1000, "one tick fills it");
    let s = ticks_within(s, vec![0.0, 5.0, 1000.0], std::time::Duration::from_secs(30));
    assert_eq!(s.live_particles(), 1000);
}

#[test]
fn same_seed_is_bit_identical_and_different_seeds_differ() {
    let build = |seed| {
        let mut s = instance(vec![busy_emitter(5000, 1500.0), busy_emitter(5000, 700.0)], seed);
        run(&mut s, 2.0, DT);
        s
    };
    let (a, b, c) = (build(42), build(42), build(43));
    assert!(a.live_particles() > 1000);
    for i in 0..2 {
        assert!(a.emitters()[i].particles().bitwise_eq(b.emitters()[i].particles()));
        assert!(!a.emitters()[i].particles().bitwise_eq(c.emitters()[i].particles()));
    }
    assert_eq!(a.build_dynamic_data(), b.build_dynamic_data());
}

#[test]
fn serial_and_parallel_ticks_are_identical() {
    // Big enough that the parallel tick splits an emitter's update.
    let emitters = vec![busy_emitter(200_000, 150_000.0), busy_emitter(20_000, 5_000.0), busy_emitter(100, 500.0)];
    let mut serial = instance(emitters.clone(), 9);
    let mut parallel = instance(emitters, 9);
    serial.set_tick_mode(TickMode::Serial);
    parallel.set_tick_mode(TickMode::Parallel);
    for _ in 0..24 {
        serial.tick(1.0 / 30.0);
        parallel.tick(1.0 / 30.0);
    }
    assert!(serial.emitters()[0].live_particles() > 2 * 32 * 1024, "{}", serial.emitters()[0].live_particles());
    for (a, b) in serial.emitters().iter().zip(parallel.emitters()) {
        assert!(a.particles().bitwise_eq(b.particles()));
    }
}

#[test]
fn deactivate_stops_spawning_and_activate_restarts_bursts() {
    let mut s = instance(vec![emitter(1000, vec![spawn(100.0, &[(0.0, 10)]), lifetime(0.5)])], 10);
    run(&mut s, 0.25, DT);
    assert!(s.live_particles() > 10);
    s.deactivate();
    assert!(!s.is_active());
    run(&mut s, 0.6, DT);
    assert_eq!(s.live_particles(), 0);
    assert!(s.is_complete());
    s.activate();
    s.tick(DT);
    // The burst at t = 0 fires again, plus the rate's first particle or two.
    assert!((10..=12).contains(&s.live_particles()), "{}", s.live_particles());
}

#[test]
fn emitter_loops_end_spawning() {
    let mut e = emitter(1000, vec![spawn(100.0, &[(0.1, 5)]), lifetime(100.0)]);
    e.required.emitter_duration = 0.5;
    e.required.emitter_loops = 2;
    let mut s = instance(vec![e], 11);
    run(&mut s, 3.0, DT);
    let live = s.live_particles();
    assert!((109..=111).contains(&live), "1 s of rate plus two bursts, got {live}");
    assert!(!s.is_complete(), "particles still alive");
}

#[test]
fn world_transform_places_spawns_and_turns_velocities() {
    let mut modules = vec![spawn(0.0, &[(0.0, 1)]), lifetime(10.0)];
    modules.extend(point_velocity(Vec3::X, Vec3::new(2.0, 0.0, 0.0)));
    let mut s = instance(vec![emitter(10, modules)], 12);
    let t = Affine3A::from_rotation_translation(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2), Vec3::new(100.0, 0.0, 0.0));
    s.set_transform(t).unwrap();
    // A zero step covers no time, so the burst at t = 0 waits for a real one.
    s.tick(0.0);
    assert_eq!(s.live_particles(), 0);
    s.tick(0.5);
    let p = s.emitters()[0].particles().get(0);
    assert!((p.old_location - Vec3::new(100.0, 1.0, 0.0)).length() < 1e-5, "{}", p.old_location);
    assert!((p.location - Vec3::new(100.0, 2.0, 0.0)).length() < 1e-5, "{}", p.location);
    assert!((p.velocity - Vec3::new(0.0, 2.0, 0.0)).length() < 1e-5, "{}", p.velocity);
}

#[test]
fn bounds_cover_the_sprites_and_fixed_bounds_override() {
    let mut modules = vec![spawn(0.0, &[(0.0, 1)]), lifetime(10.0), Module::InitialSize(Distribution::Constant(Vec2::new(6.0, 8.0)))];
    modules.extend(point_velocity(Vec3::new(10.0, 20.0, 30.0), Vec3::ZERO));
    let mut s = instance(vec![emitter(10, modules)], 13);
    assert_eq!(s.bounds(), None);
    s.tick(DT);
    // The position padded by the half-diagonal of a 6 × 8 sprite (5), and
    // never less.
    let b = s.bounds().unwrap();
    let (min, max) = (Vec3::new(5.0, 15.0, 25.0), Vec3::new(15.0, 25.0, 35.0));
    assert!(b.min.cmple(min).all() && b.max.cmpge(max).all(), "{b:?}");
    assert!((b.min - min).abs().max_element() < 1e-3, "{b:?}");
    assert!((b.max - max).abs().max_element() < 1e-3, "{b:?}");
    let fixed = Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0));
    s.set_fixed_bounds(Some(fixed)).unwrap();
    assert_eq!(s.bounds(), Some(fixed));
    let inverted = Aabb { min: Vec3::ONE, max: Vec3::ZERO };
    let nan = Aabb { min: Vec3::ZERO, max: Vec3::new(f32::NAN, 1.0, 1.0) };
    for bad in [inverted, nan] {
        let e = s.set_fixed_bounds(Some(bad)).unwrap_err();
        assert!(matches!(e, ParticleError::InvalidBounds), "{e}");
        assert_eq!(s.bounds(), Some(fixed));
    }
    assert_eq!(s.build_dynamic_data().bounds, Some(fixed));
}

#[test]
fn bounds_hold_every_sprite_with_random_sizes_and_a_size_curve() {
    // Sizes drawn per particle, then scaled by a curve that grows and
    // shrinks: the padded box must still hold each sprite's full extent.
    let mut asset = busy_emitter(5000, 2000.0);
    asset.modules.retain(|m| !matches!(m, Module::SizeOverLife(_)));
    asset.modules.push(Module::SizeOverLife(Distribution::Curve(vec![
        CurveKey { time: 0.0, value: Vec2::new(0.5, 1.0) },
        CurveKey { time: 0.4, value: Vec2::new(3.0, 2.0) },
        CurveKey { time: 1.0, value: Vec2::new(0.1, 0.1) },
    ])));
    let mut s = instance(vec![asset], 31);
    run(&mut s, 1.0, DT);
    let e = &s.emitters()[0];
    assert!(e.live_particles() > 1000, "{}", e.live_particles());
    let b = s.bounds().unwrap();
    let sizes = e.current_sizes();
    for (p, size) in e.particles().locations().iter().zip(&sizes) {
        let r = Vec3::splat(size.length() * 0.5);
        assert!(b.contains(*p - r) && b.contains(*p + r), "{p} {size} {b:?}");
    }
    // And the snapshot sends the same box.
    assert_eq!(s.build_dynamic_data().bounds, Some(b));
}

#[test]
fn bounds_hold_a_sprite_read_at_a_flat_top_of_the_size_curve() {
    // A size curve flat at 1 and then falling steeply: its table, read just
    // below a sample, extrapolates back from the next sample and returns a
    // size slightly above 1. Padding by the keys' largest value missed it;
    // the bounds must hold the sprite at every age around a sample.
    let fall = Module::SizeOverLife(Distribution::Curve(vec![
        CurveKey { time: 0.0, value: Vec2::ONE },
        CurveKey { time: 0.5, value: Vec2::ONE },
        CurveKey { time: 0.505, value: Vec2::ZERO },
        CurveKey { time: 1.0, value: Vec2::ZERO },
    ]));
    let samples = (LUT_SIZE - 1) as f32;
    for k in 55..70 {
        let mut s = instance(vec![emitter(10, vec![spawn(0.0, &[(0.0, 1)]), lifetime(1.0), fall.clone()])], 1);
        // Born at the start of the tick: its age is the whole step.
        s.tick((k as f32 - 0.0005) / samples);
        let e = &s.emitters()[0];
        assert_eq!(e.live_particles(), 1);
        let r = Vec3::splat(e.current_sizes()[0].length() * 0.5);
        let p = e.particles().locations()[0];
        let b = s.bounds().unwrap();
        assert!(b.contains(p - r) && b.contains(p + r), "age step {k}: {r} outside {b:?}");
    }
}

#[test]
fn kill_volume_and_ground_plane() {
    // Particles fly along +x at 100 units/s; the volume kills from x = 50.
    let mut modules = vec![
        spawn(100.0, &[]),
        lifetime(10.0),
        Module::KillVolume { min: Vec3::new(50.0, -10.0, -10.0), max: Vec3::new(1000.0, 10.0, 10.0), kill_inside: true },
    ];
    modules.extend(point_velocity(Vec3::ZERO, Vec3::new(100.0, 0.0, 0.0)));
    let mut s = instance(vec![emitter(1000, modules)], 14);
    run(&mut s, 2.0, DT);
    let p = s.emitters()[0].particles();
    assert!(p.locations().iter().all(|l| l.x < 50.0));
    assert!((49..=51).contains(&p.len()), "half a second of particles, got {}", p.len());

    // Falling particles bounce off z = 0 and never sink below it; with
    // the kill response they die instead.
    for response in [CollisionResponse::Bounce { restitution: 0.5 }, CollisionResponse::Kill] {
        let mut modules = vec![
            spawn(200.0, &[]),
            lifetime(3.0),
            Module::Acceleration(Vec3::new(0.0, 0.0, -980.0)),
            Module::GroundPlaneCollision { height: 0.0, response },
        ];
        modules.extend(point_velocity(Vec3::new(0.0, 0.0, 100.0), Vec3::new(0.0, 0.0, 50.0)));
        let mut s = instance(vec![emitter(2000, modules)], 15);
        for _ in 0..120 {
            s.tick(DT);
            assert!(s.emitters()[0].particles().locations().iter().all(|l| l.z >= 0.0));
        }
        let live = s.live_particles();
        match response {
            CollisionResponse::Kill => assert!(live < 150, "fallen particles die, {live} left"),
            CollisionResponse::Bounce { .. } => {
                assert!((399..=401).contains(&live), "none die, {live} left")
            }
        }
    }
}
