//! Runs the `many-cubes` sample headless and checks its PNG and stats.

mod common;

use std::process::Command;

#[test]
fn many_cubes_renders_merged_draws_and_clean_stats() {
    let (_, s) = common::run_sample(
        env!("CARGO_BIN_EXE_many-cubes"),
        "400",
        &["--frames", "3", "--width", "333", "--height", "197", "--count", "400", "--materials", "3", "--moving", "10"],
    );
    assert_eq!(s.primitives, 401, "400 cubes and the ground");
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    assert_eq!(s.passes["base"].draws, 4, "one merged draw per material, plus the ground");
    assert_eq!(s.passes["base"].instances, s.visible_primitives);
    assert!(s.passes["shadow"].draws > 0);
    assert_eq!(s.proxies_created, 0, "moving cubes recreates no proxy");
    assert_eq!(s.mesh_draw_commands_built.cached, 0, "moving cubes builds no command");
    let materials = s.materials.unwrap();
    assert_eq!(materials.live, 5, "3 cube materials, the ground's and the default");
    assert_eq!(materials.bytes_uploaded, 0, "no parameter changed in the last frame");
    assert_eq!(s.pipelines.unwrap().created, 0, "every pipeline was made in the first frame");
    assert_eq!(s.textures.unwrap().live, 3, "the built-in textures only");
    // Where the memory goes (Linux): engine, then the scene built, then the peak.
    if cfg!(target_os = "linux") {
        let m = s.memory.expect("memory figures on Linux");
        assert!(0.0 < m.after_engine_mib && m.after_engine_mib <= m.scene_built_mib && m.scene_built_mib <= m.peak_mib, "{m:?}");
    }
}

#[test]
fn many_cubes_rejects_bad_options_with_code_2() {
    for args in [&["--count", "0"][..], &["--moving", "150"], &["--materials", "x"], &["--present", "vsync"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_many-cubes")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// The peer-scale scene (Bevy's many_cubes): cubes on a sphere around the
/// camera, one material, no shadows, an inside-out box shading every pixel.
#[test]
fn many_cubes_sphere_layout_shades_every_pixel_and_casts_no_shadow() {
    let (png, s) = common::run_sample(
        env!("CARGO_BIN_EXE_many-cubes"),
        "sphere",
        &["--layout", "sphere", "--frames", "4", "--width", "160", "--height", "90", "--count", "3000"],
    );
    assert_eq!(s.primitives, 3001, "3,000 cubes and the box");
    assert_eq!(s.passes["shadow"].draws, 0, "the sun casts no shadow");
    assert!(
        s.visible_primitives > 30 && s.visible_primitives < 1000,
        "a 45° view of the sphere sees a part of it: {}",
        s.visible_primitives
    );
    assert_eq!(s.passes["base"].instances, s.visible_primitives);
    assert!(s.passes["base"].draws <= 2, "one merged draw for the cubes, one for the mirrored box: {}", s.passes["base"].draws);
    assert!(s.mean_timings_ms.render_cpu > 0.0, "mean timings are filled");
    let rgba = test_support::load_png(&png).rgba8;
    let step = rgba.len() / (160 * 90);
    // The clear colour is (39, 39, 44) in the PNG; the lit white box is far brighter.
    let dark = rgba.chunks(step).filter(|p| p[..3].iter().all(|&c| c < 60)).count();
    assert_eq!(dark, 0, "the inside-out box leaves no pixel unshaded");
    let wall = &rgba[..3];
    assert!(rgba.chunks(step).any(|p| &p[..3] != wall), "cubes show against the box");
}

/// The stats file carries frame-time percentiles over the frames after
/// warm-up, ordered and bounded by the slowest frame.
#[test]
fn many_cubes_reports_frame_time_percentiles() {
    let (_, s) = common::run_sample(
        env!("CARGO_BIN_EXE_many-cubes"),
        "percentiles",
        &["--frames", "10", "--width", "96", "--height", "64", "--count", "50"],
    );
    for (what, p) in [("frame_time_ms", s.frame_time_ms), ("render_cpu_time_ms", s.render_cpu_time_ms)] {
        assert!(p.p50 > 0.0, "{what}: {p:?}");
        assert!(p.p50 <= p.p95 && p.p95 <= p.p99 && p.p99 <= p.max, "{what}: {p:?}");
    }
    // 10 frames, 2 of warm-up: the percentiles and the mean come from the
    // same 8 frames, so the mean lies between the median's floor and the max.
    assert!(s.mean_timings_ms.frame <= s.frame_time_ms.max, "{:?} vs {:?}", s.mean_timings_ms, s.frame_time_ms);
    assert!(s.timings_ms.frame <= s.frame_time_ms.max, "the last frame is among those counted");
}

/// The stats file says how busy each group of threads was per frame (from
/// the scheduler, on Linux): the render thread and lavapipe's threads (the
/// GPU's work) both ran, and no group ran longer than the frames took.
#[test]
fn many_cubes_reports_cpu_time_per_thread_group() {
    let (_, s) = common::run_sample(
        env!("CARGO_BIN_EXE_many-cubes"),
        "threads",
        &["--frames", "10", "--width", "96", "--height", "64", "--count", "2000"],
    );
    let t = match s.thread_cpu_ms {
        Some(t) => t,
        None if cfg!(target_os = "linux") => panic!("Linux has per-thread scheduler figures"),
        None => {
            println!("skipped: no per-thread scheduler figures on this system");
            return;
        }
    };
    assert!(t.render.cpu > 0.0, "the render thread ran: {t:?}");
    if s.device.contains("llvmpipe") {
        assert!(t.driver.cpu > 0.0, "lavapipe ran the frames' GPU work on its threads: {t:?}");
    }
    assert!(t.game.cpu > 0.0, "the game thread ran: {t:?}");
    // A group's threads run at most on every core for the whole frame.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    for (what, g) in [("game", t.game), ("render", t.render), ("workers", t.workers), ("driver", t.driver)] {
        assert!(g.cpu >= 0.0 && g.waiting >= 0.0, "{what}: {g:?}");
        assert!(g.cpu <= s.mean_timings_ms.frame * cores * 1.05, "{what} ran {g:?} ms in frames of {} ms", s.mean_timings_ms.frame);
    }
}

/// The reproduction end to end: 160,000 cubes over the ground with
/// `--serial` and in parallel (8 worker threads, whatever the machine has)
/// write the same image. Ranking state buckets by handle number made the
/// parallel image one of two at random (cube sides and ground tie in depth
/// far away); `renderer/tests/draw_order.rs` checks the contract
/// deterministically.
#[test]
fn many_cubes_serial_and_parallel_write_identical_images_at_160k_cubes() {
    let dir = std::env::temp_dir().join(format!("proxima-samples-{}-order", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |serial: bool| {
        let path = dir.join(if serial { "serial.png" } else { "parallel.png" });
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_many-cubes"));
        cmd.args(["--headless", "--count", "160000", "--frames", "1", "--width", "320", "--height", "180"]).arg("--out").arg(&path);
        if serial {
            cmd.arg("--serial");
        } else {
            cmd.env("RAYON_NUM_THREADS", "8");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        test_support::load_png(&path)
    };
    test_support::assert_images_equal(&run(true), &run(false), "many-cubes --count 160000: --serial vs parallel");
}

/// The same cubes spawned in scattered order (`--scattered`) give the same
/// picture: the renderer gives the batch its slots in space order, the
/// same slots as the rows get, and culls it chunk by chunk as well. With
/// `r.Scene.SpaceOrderAdds=0` the slots keep the scattered order, so
/// culling skips no chunk, for the same cubes seen (the draw distance cuts
/// through the grid).
#[test]
fn many_cubes_in_scattered_order_write_the_same_image() {
    let dir = std::env::temp_dir().join(format!("proxima-samples-{}-scattered", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |name: &str, extra: &[&str]| {
        let path = dir.join(format!("{name}.png"));
        let stats = dir.join(format!("{name}.json"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_many-cubes"));
        cmd.args(["--headless", "--count", "40000", "--frames", "1", "--width", "320", "--height", "180", "--draw-distance", "300"])
            .args(extra)
            .arg("--out")
            .arg(&path)
            .arg("--stats")
            .arg(&stats);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (test_support::load_png(&path), samples::SampleStats::read(&stats).unwrap())
    };
    let (rows, rows_stats) = run("rows", &[]);
    let (scattered, scattered_stats) = run("scattered", &["--scattered"]);
    let visible = rows_stats.visible_primitives;
    assert!(visible > 100 && visible < 40_000, "the draw distance cuts through the grid: {visible} visible");
    assert_eq!(scattered_stats.visible_primitives, visible);
    assert_eq!(scattered_stats.primitives_tested, rows_stats.primitives_tested, "the same slots");
    test_support::assert_images_equal(&rows, &scattered, "many-cubes --count 40000 --draw-distance 300: rows vs --scattered");
    let (_, queue) = run("scattered-queue-order", &["--scattered", "--cvar", "r.Scene.SpaceOrderAdds=0"]);
    assert_eq!(queue.visible_primitives, visible);
    assert_eq!(queue.primitives_tested, queue.primitives, "no chunk skipped");
}

/// `--trace FILE` writes a Chrome trace (a JSON array of trace events)
/// with a span per frame stage of every frame, worker tasks and the game
/// frames; the stats file has each stage's CPU time, summing to the
/// render-CPU figure with `submit` and `retire` left out.
#[test]
fn many_cubes_writes_a_chrome_trace_and_stage_timings() {
    let dir = std::env::temp_dir().join(format!("proxima-samples-{}-trace", std::process::id()));
    let trace = dir.join("nested").join("many-cubes.trace.json");
    let trace_arg = trace.to_str().unwrap();
    let (_, s) = common::run_sample(
        env!("CARGO_BIN_EXE_many-cubes"),
        "trace",
        &["--frames", "3", "--width", "96", "--height", "64", "--count", "300", "--trace", trace_arg],
    );
    let events: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).expect("the trace is a JSON array");
    let complete: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    let count = |name: &str| complete.iter().filter(|e| e["name"] == name).count();
    for stage in [
        "update_scene",
        "init_views",
        "occlusion",
        "collect_dynamic",
        "pass_setup",
        "upload",
        "gpu_prepare",
        "record",
        "post_process",
        "submit",
        "retire",
    ] {
        assert_eq!(count(stage), 3, "{stage}: one span per frame");
    }
    assert_eq!(count("game_frame"), 3);
    // Nothing translucent in view: relevance sets up depth, base and shadow only.
    assert!(count("pass_setup_task") >= 3 * 3, "depth, base and shadow tasks per frame");
    for e in &complete {
        assert!(e["ts"].as_f64().unwrap() >= 0.0 && e["dur"].as_f64().unwrap() >= 0.0, "{e}");
        assert!(e["tid"].as_u64().is_some() && e["pid"].as_u64().is_some(), "{e}");
    }
    assert!(events.iter().any(|e| e["ph"] == "M" && e["name"] == "thread_name"), "threads are named");

    let t = &s.timings_ms.stages;
    let cpu = t.update_scene
        + t.init_views
        + t.occlusion
        + t.collect_dynamic
        + t.pass_setup
        + t.upload
        + t.gpu_prepare
        + t.record
        + t.post_process;
    assert!(t.init_views > 0.0 && t.record > 0.0 && t.retire > 0.0, "{t:?}");
    assert!((cpu - s.timings_ms.render_cpu).abs() < 1e-6, "stages {cpu} vs render_cpu {}", s.timings_ms.render_cpu);
    let m = &s.mean_timings_ms.stages;
    assert!(m.init_views > 0.0 && m.record > 0.0, "mean stage timings are filled: {m:?}");
    // The stats file of `common::run_sample`.
    let raw =
        std::fs::read_to_string(std::env::temp_dir().join(format!("proxima-samples-{}", std::process::id())).join("many-cubes-trace.json"))
            .unwrap();
    assert!(raw.contains("\"stages\": {\n      \"update_scene\""), "stages in stage order under timings_ms");
}
