//! The stats file's GPU time comes from GPU timestamps: `timings_ms.gpu` is
//! the frame's and `timings_ms.gpu_passes` each pass's that drew.

mod common;

use samples::{SampleStats, Timings};

/// Every pass that drew, and only those, has GPU time > 0; together they
/// fit in the frame's.
fn check(s: &SampleStats, t: &Timings, what: &str) {
    let drew: Vec<&str> = s.passes.iter().filter(|(_, p)| p.draws > 0).map(|(n, _)| n.as_str()).collect();
    let timed: Vec<&str> = t.gpu_passes.keys().map(String::as_str).collect();
    assert_eq!(timed, drew, "{what}: a GPU time for each pass that drew: {t:?}");
    for (pass, &ms) in &t.gpu_passes {
        assert!(ms > 0.0, "{what}: {pass} took {ms} ms on the GPU");
    }
    let sum: f64 = t.gpu_passes.values().sum();
    assert!(t.gpu > 0.0 && sum <= t.gpu + 1e-3, "{what}: passes {sum} ms within the frame's GPU {} ms", t.gpu);
}

#[test]
fn the_stats_file_has_each_passs_gpu_time_within_the_frames() {
    let (_, s) = common::run_sample(env!("CARGO_BIN_EXE_showcase"), "gpu-timings", &["--frames", "3", "--width", "160", "--height", "90"]);
    for pass in ["depth", "shadow", "base", "translucency"] {
        assert!(s.passes[pass].draws > 0, "the showcase draws {pass}");
    }
    check(&s, &s.timings_ms, "last frame");
    // The means over the frames after warm-up carry them too.
    check(&s, &s.mean_timings_ms, "mean");
    // `hello` times its one pass itself.
    let (_, s) = common::run_sample(env!("CARGO_BIN_EXE_hello"), "gpu-timings", &["--frames", "2", "--width", "96", "--height", "64"]);
    check(&s, &s.timings_ms, "hello");
}
