//! Dynamic data snapshots and sprite vertices as the render thread sees them.

mod common;

use common::*;
use glam::{Vec2, Vec3, Vec4};
use particles::*;

#[test]
fn sprites_sort_back_to_front_from_the_view_origin() {
    let mut e = busy_emitter(5000, 2000.0);
    e.required.sort_mode = SortMode::DistanceToView;
    let mut s = instance(vec![e], 21);
    for _ in 0..60 {
        s.tick(DT);
    }
    let data = s.build_dynamic_data();
    let d = &data.emitters[0];
    assert!(d.len() > 1000);
    let view = Vec3::new(300.0, -200.0, 50.0);
    let mut out = Vec::new();
    build_sprite_vertices(d, view, &mut out);
    assert_eq!(out.len(), d.len());
    let dist: Vec<f32> = out.iter().map(|v| Vec3::from(v.position).distance_squared(view)).collect();
    assert!(dist.windows(2).all(|w| w[0] >= w[1]), "farthest first");
    // A permutation: every particle appears once.
    let mut a: Vec<[u32; 3]> = out.iter().map(|v| v.position.map(f32::to_bits)).collect();
    let mut b: Vec<[u32; 3]> = d.positions.iter().map(|p| p.to_array().map(f32::to_bits)).collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
}

#[test]
fn small_hand_made_sort() {
    let positions = vec![Vec3::new(1.0, 0.0, 0.0), Vec3::new(5.0, 0.0, 0.0), Vec3::new(-3.0, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0)];
    let n = positions.len();
    let d = EmitterDynamicData::with_current_values(
        "M",
        BlendMode::Translucent,
        ScreenAlignment::FacingCamera,
        SortMode::DistanceToView,
        positions.clone(),
        positions,
        vec![Vec2::ONE; n],
        vec![0.0; n],
        vec![Vec4::ONE; n],
        vec![0.1, 0.2, 0.3, 0.4],
    );
    let mut out = Vec::new();
    build_sprite_vertices(&d, Vec3::ZERO, &mut out);
    let xs: Vec<f32> = out.iter().map(|v| v.position[0]).collect();
    assert_eq!(xs, vec![5.0, -3.0, 2.0, 1.0]);
    build_sprite_vertices(&d, Vec3::new(4.0, 0.0, 0.0), &mut out);
    let xs: Vec<f32> = out.iter().map(|v| v.position[0]).collect();
    assert_eq!(xs, vec![-3.0, 1.0, 2.0, 5.0]);
}

#[test]
fn dynamic_data_is_an_owned_copy_with_render_settings() {
    let mut s = instance(vec![busy_emitter(1000, 500.0)], 22);
    for _ in 0..30 {
        s.tick(DT);
    }
    let data = s.build_dynamic_data();
    let e = &s.emitters()[0];
    let d = &data.emitters[0];
    assert_eq!(d.material, "M_Test");
    assert_eq!(d.blend_mode, BlendMode::Translucent);
    assert_eq!(d.sort_mode, SortMode::DistanceToView);
    assert_eq!(d.positions, e.particles().locations());
    assert_eq!(d.old_positions, e.particles().old_locations());
    assert_eq!(d.sizes(), e.current_sizes());
    assert_eq!(d.colors(), e.current_colors());
    assert_eq!(d.relative_times, e.particles().relative_times());
    assert_eq!(data.live_particles(), s.live_particles());
    assert_eq!(data.bounds, s.bounds());

    // Sent to another thread while the game thread ticks on.
    let sent = d.len();
    let handle = std::thread::spawn(move || {
        let mut out = Vec::new();
        build_sprite_vertices(&data.emitters[0], Vec3::ZERO, &mut out);
        out.len()
    });
    s.tick(DT);
    assert_eq!(handle.join().unwrap(), sent);

    // Refreshing a kept snapshot matches a fresh one.
    let mut kept = ParticleSystemDynamicData::default();
    s.build_dynamic_data_into(&mut kept);
    s.tick(DT);
    s.build_dynamic_data_into(&mut kept);
    assert_eq!(kept, s.build_dynamic_data());
}

/// Sprite vertices carry each particle's current size and colour, as the
/// game side computes them, whichever way the emitter evaluates them: per
/// particle (drawn spawn values and curves), baked (a constant spawn colour
/// folded into its curve; a constant size and no curve) or off (drawn
/// sizes, no curve).
#[test]
fn vertices_carry_the_current_size_and_colour_in_every_over_life_mode() {
    let curve = |a: Vec4, b: Vec4| Distribution::Curve(vec![CurveKey { time: 0.0, value: a }, CurveKey { time: 1.0, value: b }]);
    let per_particle = busy_emitter(3000, 1500.0);
    let mut baked = busy_emitter(3000, 1500.0);
    baked.modules.retain(|m| !matches!(m, Module::InitialColor(_) | Module::InitialSize(_) | Module::SizeOverLife(_)));
    baked.modules.extend([
        Module::InitialColor(Distribution::Constant(Vec4::new(0.5, 0.25, 1.0, 1.0))),
        Module::InitialSize(Distribution::Constant(Vec2::new(3.0, 1.5))),
    ]);
    baked.modules.retain(|m| !matches!(m, Module::ColorOverLife(_)));
    baked.modules.push(Module::ColorOverLife(curve(Vec4::ONE, Vec4::new(0.2, 0.4, 0.6, 0.0))));
    let mut off = busy_emitter(3000, 1500.0);
    off.modules.retain(|m| !matches!(m, Module::ColorOverLife(_) | Module::SizeOverLife(_)));
    for (name, mut asset) in [("per particle", per_particle), ("baked", baked), ("off", off)] {
        // Storage order, to compare vertex i with particle i.
        asset.required.sort_mode = SortMode::None;
        let mut s = instance(vec![asset], 5);
        for _ in 0..40 {
            s.tick(DT);
        }
        let data = s.build_dynamic_data();
        let (d, e) = (&data.emitters[0], &s.emitters()[0]);
        assert!(d.len() > 500, "{name}: {}", d.len());
        let (sizes, colors) = (e.current_sizes(), e.current_colors());
        let mut out = Vec::new();
        build_sprite_vertices(d, Vec3::ZERO, &mut out);
        for (i, v) in out.iter().enumerate() {
            assert_eq!(Vec2::from(v.size), sizes[i], "{name}: size of {i}");
            assert_eq!(Vec4::from(v.color), colors[i], "{name}: colour of {i}");
        }
        let p = e.particles();
        match name {
            "baked" => {
                // Uniform spawn values are not copied into the snapshot.
                assert!(d.base_sizes.is_empty() && d.base_colors.is_empty());
                assert!(sizes.iter().all(|s| *s == Vec2::new(3.0, 1.5)));
                let t = p.relative_times()[0];
                let want = Vec4::new(0.5, 0.25, 1.0, 1.0) * Vec4::ONE.lerp(Vec4::new(0.2, 0.4, 0.6, 0.0), t);
                assert!((colors[0] - want).abs().max_element() < 1e-3, "{} vs {want}", colors[0]);
            }
            "off" => {
                assert_eq!(sizes, p.base_sizes());
                assert_eq!(colors, p.base_colors());
            }
            _ => assert_eq!(d.base_sizes.len(), d.len()),
        }
    }
}
