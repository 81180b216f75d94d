//! Runs the `many-cubes` sample headless and checks its PNG and stats.

mod common;

use std::process::Command;

#[test]
fn many_cubes_renders_merged_draws_and_clean_stats() {
    let (_, s) = common::run_sample(env!("CARGO_BIN_EXE_many-cubes"), "400", &["--frames", "3", "--width", "333", "--height", "197", "--count", "400", "--materials", "3", "--moving", "10"]);
    assert_eq!(s.primitives, 401, "400 cubes and the ground");
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    assert_eq!(s.passes["base"].draws, 4, "one merged draw per material, plus the ground");
    assert_eq!(s.passes["base"].instances, s.visible_primitives);
    assert!(s.passes["shadow"].draws > 0);
    assert_eq!(s.proxies_created, 0, "moving cubes recreates no proxy");
    assert_eq!(s.mesh_draw_commands_built.cached, 0, "moving cubes builds no command");
}

#[test]
fn many_cubes_rejects_bad_options_with_code_2() {
    for args in [&["--count", "0"][..], &["--moving", "150"], &["--materials", "x"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_many-cubes")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
