//! The rest of Cascade (issue 18), each against an analytic expectation:
//! sub-UV image indices (over life, from a curve, and drawn at random per
//! particle), local-space emitters (and their sprites following the
//! system's scale), emitter delay (once or before every loop), loop counts
//! and completion, spawn and burst scales over emitter time, random burst
//! counts, the run-time rate scale, every sort mode's order, square
//! sprites, and the new asset fields' validation.

mod common;

use common::*;
use engine_core::Component;
use glam::{Affine3A, Vec2, Vec3, Vec4};
use particles::*;

fn run(instance: &mut ParticleSystemInstance, seconds: f32) {
    for _ in 0..(seconds / DT).round() as usize {
        instance.tick(DT);
    }
}

fn line(a: f32, b: f32) -> Distribution<f32> {
    Distribution::Curve(vec![CurveKey { time: 0.0, value: a }, CurveKey { time: 1.0, value: b }])
}

fn sheet(mut e: EmitterAsset, interpolation: SubUvInterpolation, h: u32, v: u32) -> EmitterAsset {
    e.required.sub_uv_interpolation = interpolation;
    (e.required.sub_images_horizontal, e.required.sub_images_vertical) = (h, v);
    e.required.sort_mode = SortMode::None;
    e
}

/// The vertices of the instance's first emitter, in storage order.
fn vertices(s: &ParticleSystemInstance) -> Vec<ParticleSpriteVertex> {
    let mut out = Vec::new();
    build_sprite_vertices(&s.build_dynamic_data().emitters[0], Vec3::ZERO, &mut out);
    out
}

#[test]
fn sub_image_index_over_life_is_relative_time_times_the_image_count() {
    // A 4 × 2 sheet, index over life: image ⌊8t⌋ (linear), 8t (blend).
    for interpolation in [SubUvInterpolation::Linear, SubUvInterpolation::LinearBlend] {
        let e = sheet(emitter(1000, vec![spawn(50.0, &[]), lifetime(2.0)]), interpolation, 4, 2);
        let mut s = instance(vec![e], 3);
        run(&mut s, 1.5);
        let v = vertices(&s);
        assert!(v.len() > 50);
        for v in &v {
            let i = v.relative_time * 8.0;
            let want = if interpolation == SubUvInterpolation::Linear { i.floor() } else { i };
            assert_eq!(v.sub_image_index, want, "t {}", v.relative_time);
            // Columns - 1 = 3, rows - 1 = 1, facing the camera (code 0).
            assert_eq!(v.alignment, (4 * 3 + 256) as f32);
        }
    }
}

#[test]
fn sub_image_index_follows_its_module_and_is_zero_without_sub_uv() {
    // A curve from image 0 to image 3 over life, on a 2 × 2 sheet: 3t.
    let modules = vec![spawn(50.0, &[]), lifetime(2.0), Module::SubImageIndex(line(0.0, 3.0))];
    let mut s = instance(vec![sheet(emitter(1000, modules), SubUvInterpolation::LinearBlend, 2, 2)], 4);
    run(&mut s, 1.0);
    for v in vertices(&s) {
        assert!((v.sub_image_index - 3.0 * v.relative_time).abs() < 1e-4, "{v:?}");
    }
    // A constant past the last image is clamped to it.
    let modules = vec![spawn(50.0, &[]), lifetime(2.0), Module::SubImageIndex(Distribution::Constant(10.0))];
    let mut s = instance(vec![sheet(emitter(1000, modules), SubUvInterpolation::Linear, 2, 2)], 4);
    run(&mut s, 0.5);
    assert!(vertices(&s).iter().all(|v| v.sub_image_index == 3.0));
    // Without sub-UV (the default) the vertex is what it always was.
    let mut s = instance(vec![emitter(1000, vec![spawn(50.0, &[]), lifetime(2.0)])], 4);
    run(&mut s, 0.5);
    assert!(vertices(&s).iter().all(|v| v.sub_image_index == 0.0 && v.alignment == 0.0));
}

#[test]
fn local_space_particles_move_with_the_system_and_world_space_ones_stay() {
    let still = vec![spawn(0.0, &[(0.0, 10)]), lifetime(5.0)];
    let mut local = emitter(100, still.clone());
    local.required.use_local_space = true;
    let world = emitter(100, still);
    let mut s = instance(vec![local, world], 5);
    let at = Vec3::new(100.0, 0.0, 0.0);
    s.set_transform(Affine3A::from_translation(at)).unwrap();
    run(&mut s, 0.5);
    let before = s.build_dynamic_data();
    assert!(before.emitters.iter().all(|e| e.len() == 10 && e.positions.iter().all(|p| *p == at)));
    // The system moves and turns: the local emitter's particles go with it.
    let moved = Affine3A::from_rotation_translation(glam::Quat::from_rotation_z(0.5), Vec3::new(-40.0, 70.0, 5.0));
    s.set_transform(moved).unwrap();
    let after = s.build_dynamic_data();
    assert!(after.emitters[0].positions.iter().all(|p| p.distance(moved.translation.into()) < 1e-4), "{:?}", after.emitters[0].positions);
    assert!(after.emitters[1].positions.iter().all(|p| *p == at), "world space stays put");
    // The bounds follow, and ticking keeps them there.
    run(&mut s, 0.1);
    let b = s.emitters()[0].bounds().unwrap();
    assert!(b.contains(moved.translation.into()) && !b.contains(at));
    // A local particle's velocity turns with the system too.
    let modules = vec![spawn(0.0, &[(0.0, 1)]), lifetime(5.0), Module::InitialVelocity(VelocityShape::Box { min: Vec3::X, max: Vec3::X })];
    let mut e = emitter(10, modules);
    e.required.use_local_space = true;
    let mut s = instance(vec![e], 6);
    run(&mut s, 1.0);
    s.set_transform(Affine3A::from_rotation_z(std::f32::consts::FRAC_PI_2)).unwrap();
    let p = s.build_dynamic_data().emitters[0].positions[0];
    assert!((p - Vec3::new(0.0, 1.0, 0.0)).length() < 1e-3, "{p}");
}

#[test]
fn an_emitter_with_a_one_second_delay_spawns_nothing_before_one_second() {
    let mut e = emitter(1000, vec![spawn(100.0, &[(0.0, 7)]), lifetime(10.0)]);
    e.required.emitter_delay = 1.0;
    let mut s = instance(vec![e], 7);
    // 59 ticks: 0.983 s.
    for _ in 0..59 {
        s.tick(DT);
    }
    assert_eq!(s.live_particles(), 0);
    // 30 more, to 1.483 s: the burst at loop time 0, then 48.3 of the rate.
    for _ in 0..30 {
        s.tick(DT);
    }
    let live = s.live_particles();
    assert!((7 + 47..=7 + 49).contains(&live), "live {live}");
    // The oldest were born at 1 s exactly (the burst): 0.483 s old.
    let oldest = s.emitters()[0].particles().relative_times().iter().fold(0.0f32, |m, t| m.max(*t)) * 10.0;
    assert!((oldest - 89.0 / 60.0 + 1.0).abs() < 1e-4, "{oldest}");
    // One tick spanning the delay spawns only the part after it.
    let mut e = emitter(1000, vec![spawn(100.0, &[]), lifetime(10.0)]);
    e.required.emitter_delay = 1.0;
    let mut s = instance(vec![e], 7);
    s.tick(1.25);
    assert_eq!(s.live_particles(), 25);
}

#[test]
fn a_two_loop_emitter_completes_and_the_component_reports_it_once() {
    let mut e = emitter(1000, vec![spawn(20.0, &[(0.0, 5)]), lifetime(0.5)]);
    e.required.emitter_loops = 2;
    e.required.emitter_duration = 1.0;
    let mut c = ParticleSystemComponent::new(system(vec![e]), 8, ParticleMaterials::new()).unwrap();
    let mut total_ticks = 0;
    while !c.take_completion_event() {
        c.tick(DT);
        total_ticks += 1;
        assert!(total_ticks < 1000, "never completed");
        if total_ticks < 120 {
            assert!(!c.instance().is_complete());
        }
    }
    // Spawning ends at 2 s; the last particle dies half a second later.
    let t = total_ticks as f32 * DT;
    assert!((2.4..=2.55).contains(&t), "completed at {t}");
    assert!(c.instance().is_complete() && c.instance().live_particles() == 0);
    c.tick(DT);
    assert!(!c.take_completion_event(), "once");
    // Reactivating restarts the loops and the event.
    c.deactivate();
    c.activate();
    c.tick(DT);
    assert!(c.instance().live_particles() > 0 && !c.take_completion_event());
}

#[test]
fn rate_and_burst_scales_follow_their_curves_over_emitter_time() {
    // Rate 100 scaled by t over each 1 s loop: ∫₀¹ 100 t dt = 50 per loop.
    let mut spawn_module = SpawnModule::new(100.0, vec![Burst::new(0.5, 10)]);
    spawn_module.rate_scale = Some(line(0.0, 1.0));
    // Bursts scaled by 3 - 2t: at t = 0.5, 10 × 2 = 20.
    spawn_module.burst_scale = Some(line(3.0, 1.0));
    let mut s = instance(vec![emitter(1000, vec![Module::Spawn(spawn_module), lifetime(10.0)])], 9);
    run(&mut s, 1.0);
    let live = s.live_particles();
    assert!((20 + 49..=20 + 51).contains(&live), "live {live}");
    // The rate in the first half of the loop is a quarter of it.
    let mut spawn_module = SpawnModule::new(100.0, vec![]);
    spawn_module.rate_scale = Some(line(0.0, 1.0));
    let mut s = instance(vec![emitter(1000, vec![Module::Spawn(spawn_module), lifetime(10.0)])], 9);
    run(&mut s, 0.5);
    assert!((12..=13).contains(&s.live_particles()), "{}", s.live_particles());
}

#[test]
fn the_run_time_rate_scale_multiplies_the_rate_and_rejects_bad_values() {
    let mut c =
        ParticleSystemComponent::new(system(vec![emitter(10_000, vec![spawn(100.0, &[]), lifetime(10.0)])]), 10, ParticleMaterials::new())
            .unwrap();
    c.set_spawn_rate_scale(2.5).unwrap();
    for _ in 0..60 {
        c.tick(DT);
    }
    assert!((249..=251).contains(&c.instance().live_particles()), "{}", c.instance().live_particles());
    for bad in [-1.0, f32::NAN, f32::INFINITY] {
        let e = c.set_spawn_rate_scale(bad).unwrap_err();
        assert_eq!(e.field_path(), Some("spawn_rate_scale"));
        assert_eq!(c.instance().spawn_rate_scale(), 2.5, "kept");
    }
    c.set_spawn_rate_scale(0.0).unwrap();
    let live = c.instance().live_particles();
    c.tick(DT);
    assert_eq!(c.instance().live_particles(), live, "scale 0 spawns nothing");
}

/// Five particles whose storage order, positions and ages make every sort
/// mode's order different.
fn sort_case(mode: SortMode) -> Vec<usize> {
    let positions = vec![
        Vec3::new(0.0, 10.0, 0.0),
        Vec3::new(8.0, 0.0, 0.0),
        Vec3::new(-3.0, 4.0, 0.0),
        Vec3::new(1.0, -12.0, 0.0),
        Vec3::new(0.0, 5.0, 9.0),
    ];
    let ages = vec![0.5, 0.1, 0.9, 0.3, 0.7];
    let n = positions.len();
    let d = EmitterDynamicData::with_current_values(
        "M",
        BlendMode::Translucent,
        ScreenAlignment::FacingCamera,
        mode,
        positions.clone(),
        positions.clone(),
        vec![Vec2::ONE; n],
        vec![0.0; n],
        vec![Vec4::ONE; n],
        ages,
    );
    // Eye at the origin, looking along +y.
    let mut out = Vec::new();
    build_sprite_vertices(&d, SpriteView::new(Vec3::ZERO, Vec3::Y), &mut out);
    out.iter().map(|v| positions.iter().position(|p| p.to_array() == v.position).unwrap()).collect()
}

#[test]
fn every_sort_mode_gives_its_order() {
    assert_eq!(sort_case(SortMode::None), [0, 1, 2, 3, 4]);
    // Depth along +y: 10, 0, 4, -12, 5.
    assert_eq!(sort_case(SortMode::ViewDepth), [0, 4, 2, 1, 3]);
    // Squared distances: 100, 64, 25, 145, 106.
    assert_eq!(sort_case(SortMode::DistanceToView), [3, 4, 0, 1, 2]);
    // Ages 0.5, 0.1, 0.9, 0.3, 0.7.
    assert_eq!(sort_case(SortMode::Age), [2, 4, 0, 3, 1]);
    assert_eq!(sort_case(SortMode::AgeNewestFirst), [1, 3, 0, 4, 2]);
}

#[test]
fn square_sprites_use_the_width_and_alignments_have_their_codes() {
    let modules = vec![spawn(0.0, &[(0.0, 3)]), lifetime(5.0), Module::InitialSize(Distribution::Constant(Vec2::new(4.0, 9.0)))];
    for (alignment, code, size) in [
        (ScreenAlignment::FacingCamera, 0.0, [4.0, 9.0]),
        (ScreenAlignment::Square, 0.0, [4.0, 4.0]),
        (ScreenAlignment::VelocityAligned, 1.0, [4.0, 9.0]),
        (ScreenAlignment::FacingCameraPosition, 2.0, [4.0, 9.0]),
    ] {
        let mut e = emitter(10, modules.clone());
        e.required.screen_alignment = alignment;
        let mut s = instance(vec![e], 11);
        s.tick(DT);
        for v in vertices(&s) {
            assert_eq!((v.alignment, v.size), (code, size), "{alignment:?}");
        }
    }
}

/// The field path of the error `edit` makes, or "" when the edited
/// emitter is valid.
fn invalid(edit: impl Fn(&mut EmitterAsset)) -> String {
    let mut e = emitter(10, vec![spawn(1.0, &[(0.5, 2)]), lifetime(1.0)]);
    edit(&mut e);
    match ParticleSystemInstance::new(system(vec![e]), 0) {
        Ok(_) => String::new(),
        Err(err) => err.field_path().unwrap_or("(no path)").to_owned(),
    }
}

#[test]
fn new_fields_are_validated_with_named_errors() {
    assert_eq!(invalid(|e| e.required.emitter_delay = -1.0), "emitters[0].required.emitter_delay");
    assert_eq!(invalid(|e| e.required.emitter_delay = f32::NAN), "emitters[0].required.emitter_delay");
    assert_eq!(invalid(|e| e.required.sub_images_horizontal = 0), "emitters[0].required.sub_images_horizontal");
    assert_eq!(invalid(|e| e.required.sub_images_vertical = MAX_SUB_IMAGES + 1), "emitters[0].required.sub_images_vertical");
    // A sub-image index needs a sprite sheet; a random range needs min ≤ max.
    assert_eq!(invalid(|e| e.modules.push(Module::SubImageIndex(Distribution::Constant(1.0)))), "emitters[0].modules[2].sub_image_index");
    let random = |e: &mut EmitterAsset| {
        e.required.sub_uv_interpolation = SubUvInterpolation::Linear;
        e.modules.push(Module::SubImageIndex(Distribution::Uniform { min: 3.0, max: 2.0 }));
    };
    assert_eq!(invalid(random), "emitters[0].modules[2].sub_image_index.uniform.max");
    // Random image changes: capped, and only with a random index to change.
    let changes = |n: u32, index: Distribution<f32>| {
        move |e: &mut EmitterAsset| {
            e.required.sub_uv_interpolation = SubUvInterpolation::Linear;
            e.required.random_image_changes = n;
            e.modules.push(Module::SubImageIndex(index.clone()));
        }
    };
    let uniform = Distribution::Uniform { min: 0.0, max: 2.0 };
    assert_eq!(invalid(changes(MAX_RANDOM_IMAGE_CHANGES + 1, uniform.clone())), "emitters[0].required.random_image_changes");
    assert_eq!(invalid(changes(1, Distribution::Constant(1.0))), "emitters[0].required.random_image_changes");
    assert_eq!(invalid(changes(MAX_RANDOM_IMAGE_CHANGES, uniform)), "", "valid");
    // A random burst's low count is at most its count.
    let low = |low: u32| {
        move |e: &mut EmitterAsset| {
            if let Module::Spawn(s) = &mut e.modules[0] {
                s.bursts[0] = Burst::random(0.5, low, 4);
            }
        }
    };
    assert_eq!(invalid(low(5)), "emitters[0].modules[0].spawn.bursts[0].count_low");
    assert_eq!(invalid(low(4)), "", "valid");
    assert_eq!(invalid(low(0)), "", "valid");
    let negative = |e: &mut EmitterAsset| {
        e.required.sub_uv_interpolation = SubUvInterpolation::Linear;
        e.modules.push(Module::SubImageIndex(Distribution::Constant(-1.0)));
    };
    assert_eq!(invalid(negative), "emitters[0].modules[2].sub_image_index.constant");
    // Scales: no negative values, and rates and counts stay capped.
    let scale = |rate_scale: Option<Distribution<f32>>, burst_scale: Option<Distribution<f32>>| {
        move |e: &mut EmitterAsset| {
            if let Module::Spawn(s) = &mut e.modules[0] {
                (s.rate_scale, s.burst_scale) = (rate_scale.clone(), burst_scale.clone());
            }
        }
    };
    assert_eq!(invalid(scale(Some(line(1.0, -1.0)), None)), "emitters[0].modules[0].spawn.rate_scale.curve[1].value");
    assert_eq!(invalid(scale(Some(Distribution::Uniform { min: 0.0, max: 1.0 }), None)), "emitters[0].modules[0].spawn.rate_scale.uniform");
    assert_eq!(invalid(scale(Some(Distribution::Constant(1e8)), None)), "emitters[0].modules[0].spawn.rate_scale");
    assert_eq!(invalid(scale(None, Some(Distribution::Constant(f32::NAN)))), "emitters[0].modules[0].spawn.burst_scale.constant");
    assert_eq!(invalid(scale(None, Some(line(1.0, 1e8)))), "emitters[0].modules[0].spawn.burst_scale");
}

#[test]
fn the_file_format_reads_the_new_fields_and_their_defaults() {
    let json = r#"{"emitters": [{
        "name": "flipbook",
        "required": {"material": "M", "blend_mode": "translucent", "screen_alignment": "facing_camera_position",
                     "sort_mode": "age_newest_first", "max_particles": 100, "emitter_loops": 2,
                     "emitter_delay": 0.5, "use_local_space": true, "sub_images_horizontal": 4,
                     "sub_images_vertical": 4, "sub_uv_interpolation": "linear_blend"},
        "modules": [{"spawn": {"rate": 10.0, "rate_scale": {"curve": [{"time": 0.0, "value": 1.0}, {"time": 1.0, "value": 2.0}]},
                               "burst_scale": {"constant": 2.0}, "bursts": [{"time": 0.0, "count": 3}]}},
                    {"lifetime": {"constant": 1.0}},
                    {"sub_image_index": {"curve": [{"time": 0.0, "value": 0.0}, {"time": 1.0, "value": 15.0}]}}]
    }]}"#;
    let s = ParticleSystem::from_json_str(json).unwrap();
    let r = &s.emitters[0].required;
    assert_eq!((r.emitter_delay, r.use_local_space, r.sub_images()), (0.5, true, 16));
    assert_eq!((r.screen_alignment, r.sort_mode), (ScreenAlignment::FacingCameraPosition, SortMode::AgeNewestFirst));
    assert_eq!(ParticleSystem::from_json_str(&s.to_json_string().unwrap()).unwrap(), s, "round trip");
    // The aliases read as the existing variants.
    let aliased = json.replace("facing_camera_position", "rectangle").replace("age_newest_first", "age_oldest_first");
    let r = ParticleSystem::from_json_str(&aliased).unwrap().emitters[0].required.clone();
    assert_eq!((r.screen_alignment, r.sort_mode), (ScreenAlignment::FacingCamera, SortMode::Age));
    // Unknown interpolation names the field.
    let e = ParticleSystem::from_json_str(&json.replace("\"linear_blend\"", "\"cubic\"")).unwrap_err();
    assert_eq!(e.field_path(), Some("emitters[0].required.sub_uv_interpolation"));
    // Defaults reproduce the old behaviour.
    let r = RequiredModule::new("M", BlendMode::Additive, ScreenAlignment::FacingCamera, SortMode::None, 5);
    assert_eq!((r.emitter_delay, r.use_local_space, r.sub_uv_interpolation, r.sub_images()), (0.0, false, SubUvInterpolation::None, 1));
    assert_eq!((r.delay_first_loop_only, r.random_image_changes), (true, 0));
    let parsed = ParticleSystem::from_json_str(json).unwrap();
    let r = &parsed.emitters[0].required;
    assert_eq!((r.delay_first_loop_only, r.random_image_changes), (true, 0), "absent fields read as the defaults");
    let Module::Spawn(spawn) = &parsed.emitters[0].modules[0] else { panic!() };
    assert_eq!(spawn.bursts[0], Burst::new(0.0, 3));
    assert!(!s.to_json_string().unwrap().contains("count_low"), "an unused count_low is not written");
    // The gaps' fields: a delay before every loop, random image changes
    // with a random index, and a random burst count.
    let gaps = json
        .replace("\"emitter_delay\": 0.5,", "\"emitter_delay\": 0.5, \"delay_first_loop_only\": false, \"random_image_changes\": 3,")
        .replace("{\"time\": 0.0, \"count\": 3}", "{\"time\": 0.0, \"count\": 3, \"count_low\": 1}")
        .replace(
            "{\"sub_image_index\": {\"curve\": [{\"time\": 0.0, \"value\": 0.0}, {\"time\": 1.0, \"value\": 15.0}]}}",
            "{\"sub_image_index\": {\"uniform\": {\"min\": 0.0, \"max\": 16.0}}}",
        );
    let g = ParticleSystem::from_json_str(&gaps).unwrap();
    let r = &g.emitters[0].required;
    assert_eq!((r.delay_first_loop_only, r.random_image_changes), (false, 3));
    let Module::Spawn(spawn) = &g.emitters[0].modules[0] else { panic!() };
    assert_eq!(spawn.bursts[0], Burst::random(0.0, 1, 3));
    assert_eq!(g.emitters[0].modules[2], Module::SubImageIndex(Distribution::Uniform { min: 0.0, max: 16.0 }));
    assert_eq!(ParticleSystem::from_json_str(&g.to_json_string().unwrap()).unwrap(), g, "round trip");
    let e = ParticleSystem::from_json_str(&gaps.replace("\"count_low\": 1", "\"count_low\": -1")).unwrap_err();
    assert_eq!(e.field_path(), Some("emitters[0].modules[0].spawn.bursts[0].count_low"));
}

/// An emitter on a 4 × 2 sheet (`interpolation`) whose particles draw their
/// index from `uniform { min, max }`, spawning 2000 a second for 2 s lives.
fn random_sheet(interpolation: SubUvInterpolation, min: f32, max: f32, changes: u32) -> EmitterAsset {
    let modules = vec![spawn(2000.0, &[]), lifetime(2.0), Module::SubImageIndex(Distribution::Uniform { min, max })];
    let mut e = sheet(emitter(100_000, modules), interpolation, 4, 2);
    e.required.random_image_changes = changes;
    e
}

#[test]
fn random_sub_images_are_drawn_per_particle_stay_put_and_cover_the_sheet() {
    // uniform [0, 8) on 8 images, linear: image ⌊i⌋, each with chance 1/8.
    let mut s = instance(vec![random_sheet(SubUvInterpolation::Linear, 0.0, 8.0, 0)], 21);
    run(&mut s, 0.5);
    let first = vertices(&s);
    assert!(first.len() > 900, "{}", first.len());
    let mut counts = [0usize; 8];
    for v in &first {
        assert_eq!(v.sub_image_index, v.sub_image_index.floor(), "a whole image");
        counts[v.sub_image_index as usize] += 1;
    }
    // Binomial(n, 1/8): mean n/8, standard deviation about sqrt(n)/3; 5σ.
    let (n, sigma) = (first.len() as f32, (first.len() as f32).sqrt() / 3.0);
    for (image, &c) in counts.iter().enumerate() {
        assert!((c as f32 - n / 8.0).abs() < 5.0 * sigma, "image {image}: {c} of {n} ({counts:?})");
    }
    // Nobody dies within 2 s and spawns append, so particle i stays vertex
    // i: its image is the same half a second (30 ticks) later.
    let seeds = s.emitters()[0].particles().sub_image_seeds().to_vec();
    run(&mut s, 0.5);
    let later = vertices(&s);
    assert!(later.len() > first.len());
    assert_eq!(&s.emitters()[0].particles().sub_image_seeds()[..seeds.len()], &seeds[..], "the same particles, in order");
    for (a, b) in first.iter().zip(&later) {
        assert_eq!(a.sub_image_index, b.sub_image_index, "same image at t {} and {}", a.relative_time, b.relative_time);
    }
    // The same seed draws the same images; another seed others.
    let again = instance(vec![random_sheet(SubUvInterpolation::Linear, 0.0, 8.0, 0)], 21);
    let other = instance(vec![random_sheet(SubUvInterpolation::Linear, 0.0, 8.0, 0)], 22);
    let images = |mut s: ParticleSystemInstance| {
        run(&mut s, 0.5);
        vertices(&s).iter().map(|v| v.sub_image_index).collect::<Vec<_>>()
    };
    let drawn: Vec<f32> = first.iter().map(|v| v.sub_image_index).collect();
    assert_eq!(images(again), drawn);
    assert_ne!(images(other), drawn);
}

#[test]
fn a_random_sub_image_range_limits_the_images_and_blends_within_it() {
    // [2, 4) with linear: images 2 and 3 only, both seen.
    let mut s = instance(vec![random_sheet(SubUvInterpolation::Linear, 2.0, 4.0, 0)], 23);
    run(&mut s, 0.25);
    let v = vertices(&s);
    assert!(v.iter().all(|v| v.sub_image_index == 2.0 || v.sub_image_index == 3.0));
    assert!(v.iter().any(|v| v.sub_image_index == 2.0) && v.iter().any(|v| v.sub_image_index == 3.0));
    // linear_blend keeps the fraction (the cross-fade weight), in [1, 6].
    let mut s = instance(vec![random_sheet(SubUvInterpolation::LinearBlend, 1.0, 6.0, 0)], 23);
    run(&mut s, 0.25);
    let v = vertices(&s);
    assert!(v.iter().all(|v| (1.0..=6.0).contains(&v.sub_image_index)));
    assert!(v.iter().any(|v| v.sub_image_index.fract() != 0.0));
    // A range past the sheet is clamped to its last image.
    let mut s = instance(vec![random_sheet(SubUvInterpolation::Linear, 20.0, 30.0, 0)], 23);
    run(&mut s, 0.1);
    assert!(vertices(&s).iter().all(|v| v.sub_image_index == 7.0));
    // Emitters without a random index store no seeds (their random
    // streams are what they were).
    let mut s = instance(vec![busy_emitter(1000, 500.0)], 23);
    run(&mut s, 0.2);
    assert!(s.emitters()[0].particles().sub_image_seeds().iter().all(|&seed| seed == 0));
    assert!(s.build_dynamic_data().emitters[0].sub_image_seeds.is_empty());
}

#[test]
fn random_image_changes_pick_a_new_image_in_each_part_of_life() {
    // Three changes: four parts of life, [0, ¼), [¼, ½), [½, ¾), [¾, 1).
    let mut s = instance(vec![random_sheet(SubUvInterpolation::Linear, 0.0, 8.0, 3)], 24);
    run(&mut s, 0.1);
    let data = s.build_dynamic_data();
    let d = &data.emitters[0];
    assert_eq!(d.sub_image_seeds.len(), d.len());
    let mut changed = 0;
    for i in 0..d.len() {
        let seed = d.sub_image_seed(i);
        let part = |k: f32| d.sub_uv.vertex_index_of(k / 4.0 + 0.01, seed);
        // Constant within a part.
        for k in 0..4 {
            let at = k as f32 / 4.0;
            let image = d.sub_uv.vertex_index_of(at, seed);
            assert_eq!(image, d.sub_uv.vertex_index_of(at + 0.2499, seed), "particle {i}, part {k}");
        }
        changed += usize::from((1..4).any(|k| part(k as f32) != part(0.0)));
    }
    // A particle keeps its first image through all four parts with chance
    // (1/8)³: almost every particle changes.
    assert!(changed as f32 > 0.95 * d.len() as f32, "{changed} of {}", d.len());
    // The vertices are those functions at each particle's age.
    let mut out = Vec::new();
    build_sprite_vertices(d, Vec3::ZERO, &mut out);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(v.sub_image_index, d.sub_uv.vertex_index_of(v.relative_time, d.sub_image_seed(i)));
    }
}

/// The live count of `s` after each of `ticks` ticks.
fn live_counts(s: &mut ParticleSystemInstance, ticks: usize) -> Vec<usize> {
    (0..ticks)
        .map(|_| {
            s.tick(DT);
            s.live_particles()
        })
        .collect()
}

#[test]
fn a_delay_before_every_loop_leaves_a_gap_before_each_loop() {
    // Two 1 s loops, each after a 1 s delay: spawning in [1, 2) and [3, 4),
    // 60 a second plus a 5-particle burst at each loop's start.
    let two_loops = |first_only: bool, life: f32| {
        let mut e = emitter(1000, vec![spawn(60.0, &[(0.0, 5)]), lifetime(life)]);
        (e.required.emitter_delay, e.required.emitter_duration, e.required.emitter_loops) = (1.0, 1.0, 2);
        e.required.delay_first_loop_only = first_only;
        instance(vec![e], 25)
    };
    let mut s = two_loops(false, 10.0);
    let live = live_counts(&mut s, 6 * 60);
    // After tick k the time is (k + 1) / 60 s.
    let at = |t: f32| live[(t * 60.0).round() as usize - 1];
    let near = |got: usize, want: usize| got.abs_diff(want) <= 1;
    assert_eq!(at(0.5), 0);
    assert_eq!(at(59.0 / 60.0), 0, "nothing before 1 s");
    assert!(near(at(1.5), 5 + 30), "{}", at(1.5));
    assert!(near(at(2.1), 65) && at(2.1) == at(2.5) && at(2.5) == at(59.0 / 20.0), "nothing in [2, 3): {} {}", at(2.1), at(2.95));
    assert!(near(at(3.5), 65 + 5 + 30), "{}", at(3.5));
    assert!(near(at(4.1), 130), "two loops: 2 × (5 + 60), not {}", at(4.1));
    assert_eq!(at(6.0), at(4.1), "and then no more");
    // With the delay only before the first loop (the default) the loops
    // run back to back from 1 s: [1, 3).
    let mut s = two_loops(true, 10.0);
    let live = live_counts(&mut s, 4 * 60);
    assert!(near(live[(2.5 * 60.0) as usize - 1], 5 + 60 + 5 + 30));
    assert!(near(live[4 * 60 - 1], 130));
    // Completion waits for the last loop (empty during the gap is not
    // finished), then for its particles to die: at 4 s + 0.25 s.
    let mut s = two_loops(false, 0.25);
    let mut finished_at = None;
    for tick in 1..=6 * 60 {
        s.tick(DT);
        let t = tick as f32 / 60.0;
        if (2.3..2.95).contains(&t) {
            assert!(s.live_particles() == 0 && !s.is_complete(), "t {t}");
        }
        if finished_at.is_none() && s.is_complete() {
            finished_at = Some(t);
        }
    }
    let done = finished_at.expect("completes");
    assert!((4.25..=4.3).contains(&done), "completed at {done}");
}

#[test]
fn one_tick_across_a_loop_delay_spawns_only_the_loop_at_its_times() {
    let mut e = emitter(1000, vec![spawn(100.0, &[]), lifetime(100.0)]);
    (e.required.emitter_delay, e.required.emitter_duration, e.required.emitter_loops) = (1.0, 1.0, 2);
    e.required.delay_first_loop_only = false;
    let mut s = instance(vec![e], 26);
    // [0, 2.5): loop 0 spawns in [1, 2), 100 particles aged 0.5 to 1.5 s.
    s.tick(2.5);
    assert_eq!(s.live_particles(), 100);
    let ages: Vec<f32> = s.emitters()[0].particles().relative_times().iter().map(|t| t * 100.0).collect();
    let (young, old) = ages.iter().fold((f32::MAX, 0.0f32), |(a, b), t| (a.min(*t), b.max(*t)));
    // The first is due 1/100 s into the loop, the last at its end.
    assert!((old - 1.49).abs() < 1e-4 && (young - 0.5).abs() < 1e-4, "ages {young} to {old}");
    // [2.5, 3.5): half of loop 1; then everything left of it.
    s.tick(1.0);
    assert_eq!(s.live_particles(), 150);
    s.tick(10.0);
    assert_eq!(s.live_particles(), 200);
}

#[test]
fn random_burst_counts_stay_in_range_reach_both_ends_and_repeat_per_seed() {
    // A burst of 2 to 6 at the start of every 1 s loop; particles live
    // forever, so each loop's count is the growth over that loop.
    let counts = |seed: u64| {
        let modules = vec![Module::Spawn(SpawnModule::new(0.0, vec![Burst::random(0.0, 2, 6)]))];
        let mut s = instance(vec![emitter(100_000, modules)], seed);
        let mut last = 0;
        (0..300)
            .map(|_| {
                s.tick(1.0);
                let n = s.live_particles() - last;
                last = s.live_particles();
                n
            })
            .collect::<Vec<_>>()
    };
    let a = counts(27);
    assert!(a.iter().all(|n| (2..=6).contains(n)), "{a:?}");
    for n in 2..=6 {
        // Each count has chance 1/5: 60 expected of 300.
        let times = a.iter().filter(|&&c| c == n).count();
        assert!((30..=90).contains(&times), "count {n} came {times} times");
    }
    assert_eq!(counts(27), a, "same seed, same counts");
    assert_ne!(counts(28), a);
    // A burst scale multiplies the drawn count: 2..=6 × 2.
    let mut spawn_module = SpawnModule::new(0.0, vec![Burst::random(0.0, 2, 6)]);
    spawn_module.burst_scale = Some(Distribution::Constant(2.0));
    let mut s = instance(vec![emitter(100_000, vec![Module::Spawn(spawn_module)])], 27);
    s.tick(0.5);
    assert_eq!(s.live_particles(), 2 * a[0]);
}

#[test]
fn local_space_sprites_follow_the_system_scale_and_world_space_ones_do_not() {
    let modules = vec![spawn(0.0, &[(0.0, 3)]), lifetime(5.0), Module::InitialSize(Distribution::Constant(Vec2::new(4.0, 6.0)))];
    let sizes = |local: bool, alignment: ScreenAlignment, scale: Vec3| {
        let mut e = emitter(10, modules.clone());
        (e.required.use_local_space, e.required.screen_alignment) = (local, alignment);
        let mut s = instance(vec![e], 29);
        let transform = Affine3A::from_scale_rotation_translation(scale, glam::Quat::from_rotation_z(0.7), Vec3::new(5.0, 0.0, 0.0));
        s.set_transform(transform).unwrap();
        s.tick(DT);
        let v = vertices(&s);
        assert_eq!(v.len(), 3);
        assert!(v.iter().all(|x| x.size == v[0].size));
        (Vec2::from(v[0].size), s.emitters()[0].bounds().unwrap())
    };
    let facing = ScreenAlignment::FacingCamera;
    // Local space under a uniform 2× scale: twice the size.
    assert_eq!(sizes(true, facing, Vec3::ONE).0, Vec2::new(4.0, 6.0));
    let (doubled, bounds) = sizes(true, facing, Vec3::splat(2.0));
    assert!((doubled - Vec2::new(8.0, 12.0)).abs().max_element() < 1e-5, "{doubled}");
    // The bounds pad by the scaled sprite's half-diagonal.
    let half_diagonal = 0.5 * doubled.length();
    assert!(bounds.max.x - 5.0 >= half_diagonal - 1e-4, "{bounds:?}");
    // World space: the transform moves the spawn point, never the size.
    assert_eq!(sizes(false, facing, Vec3::splat(2.0)).0, Vec2::new(4.0, 6.0));
    // Non-uniform: width by the X scale, height by the Y scale; a square
    // sprite takes its scaled width.
    let stretched = sizes(true, facing, Vec3::new(2.0, 3.0, 5.0)).0;
    assert!((stretched - Vec2::new(8.0, 18.0)).abs().max_element() < 1e-5, "{stretched}");
    let square = sizes(true, ScreenAlignment::Square, Vec3::new(2.0, 3.0, 5.0)).0;
    assert!((square - Vec2::splat(8.0)).abs().max_element() < 1e-5, "{square}");
}
