//! Runs the `particles` sample headless and checks its PNG and stats.

mod common;

use std::process::Command;

#[test]
fn particles_draws_prewarmed_translucent_and_additive_sprites_with_clean_stats() {
    let (png, s) = common::run_sample(
        env!("CARGO_BIN_EXE_particles"),
        "3000",
        &["--frames", "3", "--width", "333", "--height", "197", "--particles", "3000"],
    );
    assert_eq!(s.sample, "particles");
    assert_eq!((s.frames, s.width, s.height), (3, 333, 197));
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    assert!(s.particles > 0, "pre-warmed systems show particles from the first frames");
    assert!(s.particles <= 3000, "--particles caps the total: {}", s.particles);
    assert!(s.particles >= 1000, "pre-warmed systems are well filled: {}", s.particles);
    assert_eq!(s.element_failures, 0, "every emitter drawn");
    let json = std::fs::read_to_string(png.with_extension("json")).unwrap();
    assert!(json.contains("\"element_failures\": 0"), "the stats file writes the count, 0 included");
    let t = s.passes["translucency"];
    // 9 systems, 11 emitters: one draw per emitter with live particles.
    assert!(t.draws >= 2, "smoke and sparks at least: {t:?}");
    assert!(t.draws <= 11, "{t:?}");
    // Every emitter is translucent or additive and every system is in view.
    assert_eq!(t.instances, s.particles, "one instance per live particle, all in the translucency pass");
    assert!(s.passes["base"].draws > 0, "ground and pedestals");
    assert!(s.passes["shadow"].draws > 0);
    // Particles cast no shadows: each shadow cascade draws at most the base pass's casters.
    let cascades = s.shadow.expect("the renderer's shadow figures").cascades;
    assert!(cascades >= 1);
    assert!(s.passes["shadow"].instances <= s.passes["base"].instances * cascades, "particles cast no shadows");
}

#[test]
fn particles_rejects_bad_options_with_code_2() {
    for args in [&["--particles", "0"][..], &["--particles", "x"], &["--width", "0"], &["--frames", "0"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_particles")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
