//! Runs the `many-foxes` sample headless (Bevy's many_foxes, with the
//! shared Fox model; skipped when it is absent): every fox is a skinned
//! mesh whose new pose rebuilds no command, validation is clean, and a run
//! at a fixed time step gives the same image serial and parallel and with
//! one or two frames in flight.

mod common;

use std::path::PathBuf;

const BIN: &str = env!("CARGO_BIN_EXE_many-foxes");

fn fox() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/gltf-samples/Fox/Fox.glb");
    if path.exists() {
        Some(path)
    } else {
        println!("skipped: {} is absent", path.display());
        None
    }
}

#[test]
fn a_hundred_running_foxes_are_the_same_serial_and_parallel_and_with_one_or_two_frames_in_flight() {
    if fox().is_none() {
        return;
    }
    let run = |tag: &str, extra: &[&str]| {
        let mut args = vec!["--count", "100", "--frames", "3", "--width", "240", "--height", "135", "--fixed-dt", "0.05"];
        args.extend_from_slice(extra);
        common::run_sample(BIN, tag, &args)
    };
    let (png, s) = run("foxes-parallel", &[]);
    assert_eq!((s.validation.errors, s.validation.warnings), (0, 0));
    let skinned = s.skinned.as_ref().expect("skinned");
    assert_eq!(skinned.meshes, 100);
    assert_eq!(skinned.joints, 100 * 25, "the Fox's 24 joints and the node above them");
    assert_eq!(s.mesh_draw_commands_built.cached, 0, "running foxes rebuild no command: {:?}", s.mesh_draw_commands_built);
    // The foxes share the Fox's joint pages (85 slots, then 340): their
    // commands merge into a draw per page, beside the ground's.
    let base = &s.passes["base"];
    assert!(s.passes["shadow"].draws > 0 && base.mesh_draw_commands >= 100, "{base:?}");
    assert!(base.draws <= 3, "100 foxes merged into a draw per joint page: {base:?}");
    let reference = test_support::load_png(&png);
    let (serial, _) = run("foxes-serial", &["--serial"]);
    test_support::assert_images_equal(&reference, &test_support::load_png(&serial), "many-foxes: --serial vs parallel");
    let (one, _) = run("foxes-one-in-flight", &["--cvar", "r.FramesInFlight=1"]);
    test_support::assert_images_equal(&reference, &test_support::load_png(&one), "many-foxes: 2 vs 1 frames in flight");
    let (synced, _) = run("foxes-sync", &["--sync"]);
    assert_ne!(reference.rgba8, test_support::load_png(&synced).rgba8, "--sync starts every fox at once: another picture");
}

#[test]
fn a_missing_fox_file_is_exit_1_naming_it() {
    let out = std::process::Command::new(BIN).args(["--headless", "--frames", "1", "--fox", "/nonexistent/Fox.glb"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/Fox.glb"), "{}", String::from_utf8_lossy(&out.stderr));
}
