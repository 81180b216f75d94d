//! Window mode under Xvfb: `many-cubes --window --frames 5` opens a window,
//! presents five frames and exits cleanly with zero validation messages.
//!
//! Needs `xvfb-run` (Debian package `xvfb`), so it runs only when
//! `PROXIMA_TEST_WINDOW=1`; otherwise it prints why it skips and passes.

use samples::SampleStats;
use std::process::Command;

#[test]
fn many_cubes_presents_to_a_window_under_xvfb() {
    if std::env::var("PROXIMA_TEST_WINDOW").as_deref() != Ok("1") {
        eprintln!("skipped: set PROXIMA_TEST_WINDOW=1 (and install xvfb) to run the window test");
        return;
    }
    if cfg!(not(feature = "window")) {
        eprintln!("skipped: the samples' `window` feature is off");
        return;
    }
    let dir = std::env::temp_dir().join(format!("proxima-window-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stats = dir.join("window.json");
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24"])
        .arg(env!("CARGO_BIN_EXE_many-cubes"))
        .args(["--window", "--frames", "5", "--width", "400", "--height", "300", "--count", "100"])
        .arg("--stats")
        .arg(&stats)
        .output()
        .expect("xvfb-run (apt-get install xvfb)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}", out.status);
    assert!(stdout.contains("window closed after 5 frame(s)"), "it did not run in a window:\n{stdout}\n{stderr}");
    let s = SampleStats::read(&stats).unwrap();
    assert_eq!(s.frames, 5);
    assert!(s.validation.enabled, "the validation layer should be on");
    assert_eq!(s.validation.errors, 0, "{stderr}");
    assert_eq!(s.validation.warnings, 0, "{stderr}");
}
