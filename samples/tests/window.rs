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

/// `--present mailbox` and `--present immediate` present too (or fall back
/// to fifo, saying so), and `--present` is reflected nowhere else: the run
/// ends like the fifo one.
#[test]
fn many_cubes_presents_in_every_present_mode_under_xvfb() {
    if std::env::var("PROXIMA_TEST_WINDOW").as_deref() != Ok("1") || cfg!(not(feature = "window")) {
        eprintln!("skipped: set PROXIMA_TEST_WINDOW=1 (and install xvfb) to run the window test");
        return;
    }
    for mode in ["mailbox", "immediate"] {
        let out = Command::new("xvfb-run")
            .args(["-a", "-s", "-screen 0 1024x768x24"])
            .arg(env!("CARGO_BIN_EXE_many-cubes"))
            .args(["--window", "--frames", "5", "--width", "320", "--height", "200", "--count", "50", "--present", mode])
            .output()
            .expect("xvfb-run (apt-get install xvfb)");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "--present {mode}: exit {:?}\n{stdout}\n{stderr}", out.status);
        assert!(stdout.contains("window closed after 5 frame(s)"), "--present {mode}:\n{stdout}\n{stderr}");
        assert!(stdout.contains("validation on (0 errors, 0 warnings)"), "--present {mode}:\n{stdout}\n{stderr}");
    }
}

/// WASD flies the camera: holding W under Xvfb (sent with xdotool) moves it
/// into the cube field, so fewer cubes are visible than without input.
#[test]
fn w_flies_the_camera_forward_under_xvfb() {
    if std::env::var("PROXIMA_TEST_WINDOW").as_deref() != Ok("1") || cfg!(not(feature = "window")) {
        eprintln!("skipped: set PROXIMA_TEST_WINDOW=1 (with xvfb and xdotool installed) to run the window input test");
        return;
    }
    let display = format!(":{}", 90 + std::process::id() % 9);
    // Killed and reaped however the test ends.
    struct Xvfb(std::process::Child);
    impl Drop for Xvfb {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _xvfb =
        Xvfb(Command::new("Xvfb").args([display.as_str(), "-screen", "0", "800x600x24"]).spawn().expect("Xvfb (apt-get install xvfb)"));
    std::thread::sleep(std::time::Duration::from_millis(800));
    let dir = std::env::temp_dir().join(format!("proxima-fly-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |name: &str, hold_w: bool| {
        let stats = dir.join(name);
        let mut child = Command::new(env!("CARGO_BIN_EXE_many-cubes"))
            .env("DISPLAY", &display)
            .env("PROXIMA_VALIDATION", "0")
            .args(["--window", "--frames", "200", "--width", "320", "--height", "240", "--count", "400"])
            .arg("--stats")
            .arg(&stats)
            .spawn()
            .unwrap();
        if hold_w {
            std::thread::sleep(std::time::Duration::from_millis(1500));
            let xdo = |args: &[&str]| {
                Command::new("xdotool").env("DISPLAY", &display).args(args).status().expect("xdotool (apt-get install xdotool)")
            };
            let id = Command::new("xdotool").env("DISPLAY", &display).args(["search", "--name", "Proxima"]).output().unwrap();
            let id = String::from_utf8_lossy(&id.stdout).lines().next().unwrap_or("").to_string();
            xdo(&["windowfocus", "--sync", &id]);
            xdo(&["keydown", "w"]);
            std::thread::sleep(std::time::Duration::from_millis(2500));
            xdo(&["keyup", "w"]);
        }
        assert!(child.wait().unwrap().success());
        SampleStats::read(&stats).unwrap().visible_primitives
    };
    let still = run("still.json", false);
    let flown = run("flown.json", true);
    assert!(flown < still, "holding W should fly into the field: {flown} visible vs {still}");
}

/// `hello` (the RHI alone, no engine) presents to a window too.
#[test]
fn hello_presents_to_a_window_under_xvfb() {
    if std::env::var("PROXIMA_TEST_WINDOW").as_deref() != Ok("1") || cfg!(not(feature = "window")) {
        eprintln!("skipped: set PROXIMA_TEST_WINDOW=1 (and install xvfb) to run the window test");
        return;
    }
    let dir = std::env::temp_dir().join(format!("proxima-hello-window-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stats = dir.join("hello.json");
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 800x600x24"])
        .arg(env!("CARGO_BIN_EXE_hello"))
        .args(["--window", "--frames", "5", "--width", "320", "--height", "200"])
        .arg("--stats")
        .arg(&stats)
        .output()
        .expect("xvfb-run (apt-get install xvfb)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("window closed after 5 frame(s)"), "{stdout}");
    let s = SampleStats::read(&stats).unwrap();
    assert_eq!((s.frames, s.validation.errors, s.validation.warnings), (5, 0, 0));
}
