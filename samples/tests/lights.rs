//! Runs the `lights` sample headless (validation on) and checks its stats:
//! the many_lights scene's lights and light grid, and the shadowed field's
//! cached atlas (tiles rendered on the first frame only, then only a
//! moving light's).

mod common;

use std::process::Command;

#[test]
fn lights_shades_thousands_of_clustered_lights_with_clean_stats() {
    let (_, s) = common::run_sample(
        env!("CARGO_BIN_EXE_lights"),
        "5000",
        &["--count", "5000", "--moving", "10", "--frames", "3", "--width", "320", "--height", "180"],
    );
    let lights = s.lights.expect("lights");
    assert_eq!((lights.point, lights.spot, lights.directional, lights.shadowed), (5000, 0, 0, 0));
    assert!(lights.visible > 100 && lights.visible < 5000, "the view sees part of the sphere: {lights:?}");
    let clusters = s.clusters.expect("clusters");
    assert_eq!(clusters.count, 20 * 12 * 32, "16 px tiles over 320x180, 32 slices");
    assert!(clusters.max_lights >= 1 && clusters.mean_lights > 0.0, "{clusters:?}");
    assert_eq!((s.mesh_draw_commands_built.cached, s.mesh_draw_commands_built.dynamic), (0, 0), "moving lights rebuild no command");
    assert!(s.timings_ms.stages.light_grid > 0.0);
}

#[test]
fn the_shadowed_field_renders_its_atlas_tiles_once_and_a_moving_lights_tiles_every_frame() {
    let args = ["--count", "0", "--shadowed", "6", "--frames", "3", "--width", "320", "--height", "180"];
    let (_, still) = common::run_sample(env!("CARGO_BIN_EXE_lights"), "shadowed", &args);
    let shadow = still.shadow.expect("shadow");
    // 3 point lights (6 tiles each) and 3 spot lights (1 each), all kept after the first frame.
    assert_eq!((shadow.atlas_tiles, shadow.tiles_rendered, shadow.tiles_cached, shadow.draws), (21, 0, 21, 0), "{shadow:?}");
    assert_eq!(still.lights.expect("lights").shadowed, 6);
    let moving: Vec<&str> = args.iter().copied().chain(["--moving-shadowed", "1"]).collect();
    let (_, one) = common::run_sample(env!("CARGO_BIN_EXE_lights"), "shadowed-moving", &moving);
    let shadow = one.shadow.expect("shadow");
    assert_eq!((shadow.atlas_tiles, shadow.tiles_rendered), (21, 6), "the moving point light's six faces only: {shadow:?}");
    assert!(shadow.draws > 0);
}

#[test]
fn lights_rejects_bad_options_with_code_2() {
    for args in [&["--count", "-1"][..], &["--moving", "101"], &["--shadowed", "x"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_lights")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
