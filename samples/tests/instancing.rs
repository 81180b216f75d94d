//! Runs the `instancing` sample headless: two ISM components draw twice per
//! pass with clean validation; a small forest is partly culled on the GPU,
//! and as hierarchical components (HISM) keeps the same instances.

mod common;

use samples::SampleStats;
use std::path::PathBuf;
use std::process::Command;

fn run(tag: &str, args: &[&str]) -> (PathBuf, SampleStats) {
    common::run_sample(env!("CARGO_BIN_EXE_instancing"), tag, args)
}

#[test]
fn two_components_of_a_thousand_rocks_draw_twice_per_pass() {
    let (_, s) = run("two", &["--mesh-a", "1000", "--mesh-b", "1000", "--frames", "3", "--width", "333", "--height", "197"]);
    assert_eq!((s.width, s.height), (333, 197));
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    assert_eq!(s.primitives, 2, "two ISM components and nothing else");
    assert_eq!(s.passes["base"].draws, 2, "one draw per component");
    assert_eq!(s.passes["depth"].draws, 2);
    assert!(s.passes["shadow"].draws >= 2 && s.passes["shadow"].draws % 2 == 0, "{:?}", s.passes["shadow"]);
    assert_eq!(s.instances.total, 2000);
    assert_eq!(s.instances.visible, 2000, "every rock is in view");
}

#[test]
fn a_small_forest_is_partly_culled() {
    let (_, s) = run("forest", &["--instances", "20000", "--frames", "3", "--width", "320", "--height", "180"]);
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    assert_eq!(s.instances.total, 20000);
    assert!(s.instances.visible > 0 && s.instances.visible < s.instances.total, "{:?}", s.instances);
}

#[test]
fn the_forest_culls_the_same_instances_on_the_gpu_the_cpu_and_as_hism() {
    let args = ["--instances", "20000", "--frames", "3", "--width", "320", "--height", "180"];
    let (_, gpu) = run("forest-gpu", &args);
    let (_, hism) = run("forest-hism", &[&args[..], &["--hism"]].concat());
    assert_eq!(hism.instances.total, 20000);
    assert_eq!(hism.instances.visible, gpu.instances.visible, "cluster-tree culling keeps exactly the GPU cull's instances");
    assert_eq!(hism.passes["base"].draws, gpu.passes["base"].draws, "one draw per section and LOD either way");
    // GPU-culled draws are indirect (their counts are the GPU's); HISM's are direct and counted.
    assert!(
        gpu.passes["base"].indirect_draws > 0 && gpu.passes["base"].indirect_draws < gpu.passes["base"].draws,
        "{:?}",
        gpu.passes["base"]
    );
    assert_eq!(hism.passes["base"].indirect_draws, 0);
    assert!(hism.passes["base"].instances >= hism.instances.visible, "{:?} vs {:?}", hism.passes["base"], hism.instances);
    // The instancing crate's console variables can be set from the command line.
    let (_, cpu) = run("forest-cpu", &[&args[..], &["--cvar", &format!("{}=0", instancing::CVAR_GPU_CULLING)]].concat());
    assert_eq!(cpu.instances.visible, gpu.instances.visible, "per-instance CPU culling keeps the same instances");
    let (_, ue) = run("forest-ue", &[&args[..], &["--cvar", &format!("{}=1", instancing::CVAR_UE_MODE)]].concat());
    assert_eq!(ue.instances.visible, ue.instances.total, "UE's plain ISM culls no instance");
}

#[test]
fn instancing_rejects_bad_options_with_code_2() {
    for args in [&["--instances", "0"][..], &["--mesh-a", "x"], &["--instances", "10", "--mesh-a", "10"], &["--mesh-a", "10", "--hism"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_instancing")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
