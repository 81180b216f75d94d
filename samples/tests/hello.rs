//! Runs the `hello` sample as a user would and checks its PNG and stats.

use samples::SampleStats;
use std::process::Command;

fn out_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("proxima-samples-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn png_size(path: &std::path::Path) -> (u32, u32, Vec<u8>) {
    let image = test_support::load_png(path);
    (image.width, image.height, image.rgba8)
}

#[test]
fn hello_renders_an_odd_sized_png_and_clean_stats() {
    let dir = out_dir("odd");
    let (png, stats) = (dir.join("hello.png"), dir.join("stats.json"));
    let status = Command::new(env!("CARGO_BIN_EXE_hello"))
        .args(["--headless", "--frames", "3", "--width", "333", "--height", "197", "--cols", "8", "--rows", "4"])
        .arg("--out")
        .arg(&png)
        .arg("--stats")
        .arg(&stats)
        .status()
        .unwrap();
    assert!(status.success());
    let (w, h, pixels) = png_size(&png);
    assert_eq!((w, h), (333, 197));
    // Top-left cell is bluish (u, v small), bottom-right yellowish.
    let px = |x: u32, y: u32| {
        let i = ((y * w + x) * 4) as usize;
        [pixels[i], pixels[i + 1], pixels[i + 2]]
    };
    let tl = px(333 / 16, 197 / 8);
    let br = px(333 * 15 / 16, 197 * 7 / 8);
    assert!(tl[2] > 200 && tl[0] < 40, "top-left {tl:?}");
    assert!(br[0] > 200 && br[2] < 40, "bottom-right {br:?}");
    let s = SampleStats::read(&stats).unwrap();
    assert_eq!((s.sample.as_str(), s.frames, s.width, s.height), ("hello", 3, 333, 197));
    test_support::assert_reported_clean(s.validation.enabled, s.validation.errors, s.validation.warnings, "hello");
    assert_eq!(s.passes["base"].instances, 32);
    assert_eq!(s.passes["base"].draws, 2, "one draw per recording thread");
    assert!(!s.device.is_empty());
}

#[test]
fn serial_and_parallel_recording_write_identical_images() {
    let dir = out_dir("serial");
    let run = |name: &str, serial: bool| {
        let path = dir.join(name);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hello"));
        cmd.args(["--headless", "--frames", "1", "--width", "160", "--height", "90"]).arg("--out").arg(&path);
        if serial {
            cmd.arg("--serial");
        }
        assert!(cmd.status().unwrap().success());
        let (width, height, rgba8) = png_size(&path);
        rhi_vulkan::Image { width, height, rgba8 }
    };
    test_support::assert_images_equal(&run("serial.png", true), &run("parallel.png", false), "hello serial vs parallel");
}

#[test]
fn bad_options_exit_with_code_2_and_a_message() {
    for args in [&["--width", "0"][..], &["--frames", "abc"], &["--cvar", "novalue"], &["--bogus"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_hello")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let msg = String::from_utf8_lossy(&out.stderr);
        assert!(msg.contains("error"), "{args:?}: {msg}");
    }
}
