//! Runs the `procmesh` sample headless and checks its PNG and stats.

mod common;

use samples::SampleStats;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The terrain's sections (4 tiles, water, monolith); all visible in the
/// first second.
const VISIBLE_SECTIONS: u64 = 6;

fn run(dir: &Path, name: &str, extra: &[&str]) -> (PathBuf, SampleStats) {
    let _ = dir;
    let args: Vec<&str> = ["--frames", "3", "--width", "333", "--height", "197"].into_iter().chain(extra.iter().copied()).collect();
    let (png, s) = common::run_sample(env!("CARGO_BIN_EXE_procmesh"), name, &args);
    assert_eq!((s.sample.as_str(), s.frames, s.width, s.height), ("procmesh", 3, 333, 197));
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    (png, s)
}

#[test]
fn procmesh_draws_its_sections_updates_in_place_and_draws_wireframe() {
    let dir = std::env::temp_dir().join(format!("proxima-procmesh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let (_, s) = run(&dir, "pm", &[]);
    assert_eq!(s.primitives, 2, "the procedural mesh and the raycast marker");
    assert_eq!(s.visible_primitives, 2);
    assert!(s.passes["base"].mesh_draw_commands > VISIBLE_SECTIONS, "every visible section and the marker: {:?}", s.passes["base"]);
    assert!(s.passes["base"].draws > VISIBLE_SECTIONS);
    assert!(s.passes["shadow"].draws > 0, "the sun casts shadows");
    assert!(s.mesh_draw_commands_built.dynamic >= VISIBLE_SECTIONS, "procedural sections draw through the dynamic path");
    assert_eq!(s.proxies_created, 0, "water waves and marker moves are updates in place");
    assert!(s.triangles > 0);
    assert!(!s.passes.contains_key("wireframe"), "no wireframe pass without --wireframe");

    let (_, w) = run(&dir, "pm-wire", &["--wireframe"]);
    let wire = w.passes.get("wireframe").expect("a wireframe pass in the stats");
    assert!(wire.draws > 0, "{wire:?}");
    assert_eq!(w.proxies_created, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn procmesh_rejects_bad_options_with_code_2() {
    for args in [&["--resolution", "0"][..], &["--resolution", "x"], &["--frames", "0"], &["--show", "everything"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_procmesh")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// `--show bounds,collision` (UE's show flags) draws the primitives' boxes
/// and spheres and the terrain's collision as lines over the same scene.
#[test]
fn procmesh_shows_bounds_and_collision() {
    let dir = std::env::temp_dir().join(format!("proxima-procmesh-show-{}", std::process::id()));
    let (plain, _) = run(&dir, "pm-plain", &["--fixed-dt", "0.05"]);
    let (shown, s) = run(&dir, "pm-show", &["--fixed-dt", "0.05", "--show", "bounds,collision"]);
    assert_eq!(s.visible_primitives, 2, "the same scene");
    let (plain, shown) = (test_support::load_png(&plain), test_support::load_png(&shown));
    let count = |image: &rhi_vulkan::Image, is: &dyn Fn([u8; 4]) -> bool| {
        (0..image.height).flat_map(|y| (0..image.width).map(move |x| (x, y))).filter(|&(x, y)| is(image.pixel(x, y))).count()
    };
    // Collision lines are green, bounds boxes yellow, spheres blue-green.
    let green = |p: [u8; 4]| p[1] > 150 && p[0] < 100 && p[2] < 140;
    let yellow = |p: [u8; 4]| p[0] > 150 && p[1] > 130 && p[2] < 60;
    let (g0, g1) = (count(&plain, &green), count(&shown, &green));
    let (y0, y1) = (count(&plain, &yellow), count(&shown, &yellow));
    assert!(g1 > g0 + 200, "collision lines: {g0} -> {g1} green pixels");
    assert!(y1 > y0 + 50, "bounds boxes: {y0} -> {y1} yellow pixels");
}
