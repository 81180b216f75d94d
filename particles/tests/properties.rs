//! Invariants under random frame times: no panics, capacity holds, every
//! live particle's relative time stays in [0, 1), and serial equals parallel.

mod common;

use common::*;
use particles::*;
use proptest::prelude::*;

fn dt_strategy() -> impl Strategy<Value = f32> {
    prop_oneof![
        8 => 0.0f32..0.1,
        1 => 0.1f32..3.0,
        1 => Just(0.0f32),
        1 => prop_oneof![Just(-1.0f32), Just(f32::NAN), Just(f32::INFINITY), Just(1e-7f32)],
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_frame_times_keep_invariants(
        dts in proptest::collection::vec(dt_strategy(), 1..60),
        max in 1u32..400,
        rate in 0.0f32..5000.0,
        seed in any::<u64>(),
    ) {
        let mut e = busy_emitter(max, rate);
        e.required.emitter_duration = 0.3;
        e.required.emitter_loops = (seed % 3) as u32;
        let mut s = instance(vec![e, busy_emitter(50, 100.0)], seed);
        for dt in dts {
            s.tick(dt);
            let emitter = &s.emitters()[0];
            prop_assert!(emitter.live_particles() <= max as usize);
            for em in s.emitters() {
                for &t in em.particles().relative_times() {
                    prop_assert!((0.0..1.0).contains(&t), "relative time {}", t);
                }
                for p in em.particles().locations() {
                    prop_assert!(p.is_finite());
                }
            }
        }
        let data = s.build_dynamic_data();
        let mut out = Vec::new();
        for d in &data.emitters {
            build_sprite_vertices(d, glam::Vec3::ZERO, &mut out);
            prop_assert_eq!(out.len(), d.len());
        }
    }

    #[test]
    fn serial_equals_parallel_for_random_frames(
        dts in proptest::collection::vec(0.0f32..0.2, 1..20),
        seed in any::<u64>(),
    ) {
        let emitters = vec![busy_emitter(3000, 4000.0), busy_emitter(500, 300.0)];
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
