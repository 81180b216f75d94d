//! Runs the `showcase` sample headless and checks that its PNG and stats
//! show every feature at work: procedural sections, culled instances,
//! particles, shadows and translucency, textures, with a clean validation
//! layer.

mod common;

use std::process::Command;

#[test]
fn showcase_renders_every_feature_with_clean_stats() {
    let (_, s) = common::run_sample(env!("CARGO_BIN_EXE_showcase"), "3", &["--frames", "3", "--width", "333", "--height", "197"]);
    assert_eq!(s.sample, "showcase");
    assert_eq!((s.frames, s.width, s.height), (3, 333, 197));
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    // Procedural terrain and water (dynamic path: one command per visible
    // section per view) plus the particle emitters are built every frame.
    assert!(s.mesh_draw_commands_built.dynamic >= 5, "procedural sections drawn: {:?}", s.mesh_draw_commands_built);
    assert!(s.instances.total > 0, "{:?}", s.instances);
    assert!(s.instances.visible > 0, "some instances survive culling: {:?}", s.instances);
    assert!(s.instances.visible < s.instances.total, "some instances are culled: {:?}", s.instances);
    assert!(s.particles > 0, "particles drawn");
    assert!(s.passes["shadow"].draws > 0, "shadow draws");
    assert!(s.passes["translucency"].draws > 0, "translucency draws (water and particles)");
    assert!(s.passes["translucency"].instances > s.particles, "every live particle and the water are drawn translucent");
    assert!(s.passes["base"].draws > 0 && s.passes["depth"].draws > 0);
    assert_eq!(s.proxies_created, 0, "the moving camera and the water update create no proxy");
    assert!(s.timings_ms.frame > 0.0);
    // Grass, rock, sand, bark, leaves, bricks and their normal map, and the built-ins.
    assert_eq!(s.textures.unwrap().live, 3 + 7, "{:?}", s.textures);
    assert_eq!(s.pipelines.unwrap().created, 0, "every pipeline was made in the first frames: {:?}", s.pipelines);
    assert_eq!(s.image.as_ref().unwrap().aa, "taa", "the showcase anti-aliases temporally by default");
}

/// TAA (the showcase's default) along its moving camera, with its
/// particles and moving crowd, gives the same image serial and parallel
/// and with one or two frames in flight (a fixed time step: `--fixed-dt`).
#[test]
fn showcase_with_taa_is_the_same_serial_and_parallel_and_with_one_or_two_frames_in_flight() {
    let run = |tag: &str, extra: &[&str]| {
        let mut args = vec!["--frames", "5", "--width", "200", "--height", "112", "--fixed-dt", "0.05", "--aa", "taa"];
        args.extend_from_slice(extra);
        let (png, stats) = common::run_sample(env!("CARGO_BIN_EXE_showcase"), tag, &args);
        assert_eq!((stats.validation.errors, stats.validation.warnings), (0, 0));
        test_support::load_png(&png)
    };
    let reference = run("taa-parallel", &[]);
    test_support::assert_images_equal(&reference, &run("taa-serial", &["--serial"]), "showcase TAA: --serial vs parallel");
    let one = run("taa-one-in-flight", &["--cvar", "r.FramesInFlight=1"]);
    test_support::assert_images_equal(&reference, &one, "showcase TAA: 2 vs 1 frames in flight");
}

/// The paths a discrete GPU takes (`PROXIMA_EMULATE_DISCRETE_GPU=1`: a
/// device-local budget, GPU-only memory reached only through staging) give
/// the same image byte for byte, with the same bytes staged, and the stats
/// file says which run emulated.
#[test]
fn showcase_is_the_same_under_discrete_gpu_emulation() {
    let run = |tag: &str, emulate: &str| {
        let args = ["--frames", "3", "--width", "200", "--height", "112", "--fixed-dt", "0.05"];
        let (png, stats) = common::run_sample_env(env!("CARGO_BIN_EXE_showcase"), tag, &args, &[("PROXIMA_EMULATE_DISCRETE_GPU", emulate)]);
        (test_support::load_png(&png), stats)
    };
    let (plain, plain_stats) = run("integrated", "0");
    let (emulated, emulated_stats) = run("discrete", "1");
    assert!(!plain_stats.emulated_discrete_gpu && emulated_stats.emulated_discrete_gpu);
    assert!(emulated_stats.staging_upload_bytes > 0, "meshes and textures are staged");
    assert_eq!(plain_stats.staging_upload_bytes, emulated_stats.staging_upload_bytes, "the same uploads either way");
    // Frames in flight (r.FramesInFlight), and no host write ever waited for one of them.
    assert_eq!((plain_stats.host_write_waits, emulated_stats.host_write_waits), (0, 0));
    test_support::assert_images_equal(&plain, &emulated, "showcase: integrated vs emulated discrete GPU");
}

/// The load run: a million instances and a million particles, two frames
/// at a small size (about 10 s in the dev profile on two cores).
#[test]
fn showcase_renders_a_million_instances_and_a_million_particles() {
    let args = ["--frames", "2", "--width", "160", "--height", "90", "--instances", "1000000", "--particles", "1000000"];
    let (_, s) = common::run_sample(env!("CARGO_BIN_EXE_showcase"), "load", &args);
    assert_eq!((s.frames, s.width, s.height), (2, 160, 90));
    assert_eq!((s.validation.errors, s.validation.warnings), (0, 0));
    assert!(s.instances.total >= 1_000_000, "{:?}", s.instances);
    assert!(s.instances.total < 1_010_000, "the pebbles make up the rest, no more: {:?}", s.instances);
    assert!(s.particles >= 1_000_000, "the geyser's burst is alive: {}", s.particles);
    // Particles are drawn one instance each (with the water) in the translucency pass.
    assert!(s.passes["translucency"].instances >= 1_000_000, "{:?}", s.passes["translucency"]);
    assert!(s.passes["base"].draws > 0 && s.passes["shadow"].draws > 0);
}

#[test]
fn showcase_rejects_bad_options_with_code_2() {
    for args in [
        &["--frames", "0"][..],
        &["--width", "x"],
        &["--no-such-option"],
        &["--instances", "0"],
        &["--particles", "-5"],
        &["--particles", "99999999"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_showcase")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// Occlusion culling (issue 18) along the camera's path: with
/// `r.AllowOcclusionQueries` on, every primitive visible with it off is
/// either drawn or counted occluded, off counts nothing, and the images
/// are the same byte for byte (culling is conservative: what it removes
/// would have failed the depth test everywhere). The forest's GPU cull
/// and the CPU paths keep instances in index order, so the showcase is
/// deterministic and a byte comparison tests occlusion, not noise.
#[test]
fn occlusion_along_the_camera_path_draws_or_counts_every_visible_primitive_and_changes_no_pixel() {
    // Points of the path where a building hides something at this size.
    let mut occluded = 0;
    for t in ["40", "60", "80"] {
        let run = |on: &str| {
            let cvar = format!("r.AllowOcclusionQueries={on}");
            let args = ["--serial", "--frames", "2", "--width", "200", "--height", "112", "--camera-time", t, "--cvar", &cvar];
            common::run_sample(env!("CARGO_BIN_EXE_showcase"), &format!("occlusion-{t}-{on}"), &args)
        };
        let ((on_png, on), (off_png, off)) = (run("1"), run("0"));
        assert_eq!((off.occluded_primitives, off.occluded_instances), (0, 0), "off culls nothing");
        assert_eq!(on.visible_primitives + on.occluded_primitives, off.visible_primitives, "at {t} s");
        assert!(on.visible_primitives > 0, "at {t} s the valley is in view");
        let (a, b) = (test_support::load_png(&on_png), test_support::load_png(&off_png));
        let differing = a.rgba8.chunks_exact(4).zip(b.rgba8.chunks_exact(4)).filter(|(p, q)| p != q).count();
        assert_eq!(differing, 0, "at {t} s: {differing} pixels differ with occlusion on vs off");
        occluded += on.occluded_primitives + on.occluded_instances;
    }
    assert!(occluded > 0, "something along the path is occluded: the comparison tests culling");
}
