//! The rest of Cascade (issue 18), each against an analytic expectation:
//! sub-UV image indices, local-space emitters, emitter delay, loop counts
//! and completion, spawn and burst scales over emitter time, the run-time
//! rate scale, every sort mode's order, square sprites, and the new asset
//! fields' validation.

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
    let mut spawn_module = SpawnModule::new(100.0, vec![Burst { time: 0.5, count: 10 }]);
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

fn invalid(edit: impl Fn(&mut EmitterAsset)) -> String {
    let mut e = emitter(10, vec![spawn(1.0, &[(0.5, 2)]), lifetime(1.0)]);
    edit(&mut e);
    let err = ParticleSystemInstance::new(system(vec![e]), 0).unwrap_err();
    err.field_path().unwrap_or_default().to_owned()
}

#[test]
fn new_fields_are_validated_with_named_errors() {
    assert_eq!(invalid(|e| e.required.emitter_delay = -1.0), "emitters[0].required.emitter_delay");
    assert_eq!(invalid(|e| e.required.emitter_delay = f32::NAN), "emitters[0].required.emitter_delay");
    assert_eq!(invalid(|e| e.required.sub_images_horizontal = 0), "emitters[0].required.sub_images_horizontal");
    assert_eq!(invalid(|e| e.required.sub_images_vertical = MAX_SUB_IMAGES + 1), "emitters[0].required.sub_images_vertical");
    // A sub-image index needs a sprite sheet, and takes no random range.
    assert_eq!(invalid(|e| e.modules.push(Module::SubImageIndex(Distribution::Constant(1.0)))), "emitters[0].modules[2].sub_image_index");
    let random = |e: &mut EmitterAsset| {
        e.required.sub_uv_interpolation = SubUvInterpolation::Linear;
        e.modules.push(Module::SubImageIndex(Distribution::Uniform { min: 0.0, max: 2.0 }));
    };
    assert_eq!(invalid(random), "emitters[0].modules[2].sub_image_index.uniform");
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
}
