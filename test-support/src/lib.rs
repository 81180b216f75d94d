//! The shared harness of Proxima's GPU tests (a dev-dependency only).
//!
//! Every crate's GPU tests used to carry their own copy of "make a device
//! with validation on" and "assert the layer said nothing"; some copies let
//! a test pass when the layer was missing. This crate has the one copy:
//!
//! * [`device`]: one [`Device`] per test binary, for tests that only create,
//!   use and destroy their own objects. Tests that open frames (one frame is
//!   open at a time per device), count the device's objects or shut it down
//!   make their own with [`new_device`].
//! * [`render_thread`] (feature `renderer`, on by default): a render thread
//!   of its own on the real device, validation on.
//! * [`assert_clean`]: first asserts the Khronos validation layer is active
//!   (a test fails, never passes, without it; `PROXIMA_VALIDATION=0` does
//!   not excuse it), then zero errors and zero warnings, printing the
//!   messages. [`assert_validation_enabled`] is the first half alone;
//!   [`assert_reported_clean`] is the same check on another process's report.
//! * [`assert_images_equal`]: same size, byte for byte; on failure the
//!   number of differing pixels, the first few, and both images as PNGs
//!   under `target/test-output/`. [`diff_pixels`] counts the pixels that
//!   differ, for tests that expect a change.
//! * [`save_png`], [`load_png`]: images to and from PNG files.
//! * [`image_metrics`]: what two renderers of one scene should agree on —
//!   the silhouette, the impulse-noise (speckle) share, the mean colour of
//!   each cell of a grid over the silhouette — for comparing Proxima's
//!   image of a model with a reference renderer's.
//! * [`wgsl_layout`]: layout tests for the structs Rust and WGSL share
//!   ([`assert_wgsl_layout!`]: naga's offsets against `offset_of!`).
//! * [`Rng`]: the workspace's one seeded, deterministic RNG (`renderer::Rng`,
//!   with the `renderer` feature).
//! * [`property_cases`]: how many cases a property test runs.
//! * [`bench`](mod@bench): what the benches share: [`bench::paired`] measurements
//!   (ratios as the median of per-pair ratios, with their range) and the
//!   rows they write to `target/bench/<crate>.json`.
//!
//! rhi-vulkan's own integration tests use this crate with
//! `default-features = false` (no renderer).

#![expect(
    missing_docs,
    reason = "not yet documented: the benchmark helpers' fields and the glTF writer of this test-only crate have no item docs"
)]

use rhi_vulkan::{Device, DeviceDesc, Image, Validation, ValidationCounters};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

pub mod bench;
pub mod gltf_writer;
pub mod image_metrics;
mod quad_grid;
#[cfg(feature = "renderer")]
mod render;
pub mod wgsl_layout;

pub use quad_grid::{QuadGrid, QUAD_GRID_WGSL};
#[cfg(feature = "renderer")]
pub use render::{material_churn, render_thread};
#[cfg(feature = "renderer")]
pub use renderer::Rng;

/// How many cases a property test runs: `default`, or `PROPTEST_CASES`
/// (proptest's own variable) when set, to hunt for rare failures, e.g.
/// `PROPTEST_CASES=5000 cargo test -p proxima-engine-core --test properties`.
/// Cases are random (a new seed each run), so CI keeps finding new inputs;
/// run many before landing a change to a property test's subject.
pub fn property_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(default)
}

/// A uniform `f32` in `lo..hi` for property tests, drawn from integers.
/// proptest's own `f32` range sampler trips a debug assertion
/// (`self.low - result < initial.step`, float_samplers.rs) on some seeds —
/// a known proptest bug seen with ranges such as `0.1f32..10.0` — which
/// failed CI at random; every property test's float range goes through
/// here instead. 2^24 evenly spaced values, never `hi`.
pub fn f32_in(lo: f32, hi: f32) -> impl proptest::strategy::Strategy<Value = f32> + Clone {
    use proptest::strategy::Strategy;
    const STEPS: u32 = 1 << 24;
    assert!(lo < hi && lo.is_finite() && hi.is_finite(), "f32_in({lo}, {hi})");
    (0..STEPS).prop_map(move |i| (lo + (hi - lo) * (i as f32 / STEPS as f32)).clamp(lo, hi.next_down()))
}

/// The device description of every test device: validation on.
pub fn device_desc() -> DeviceDesc {
    DeviceDesc { validation: Validation::Enabled, ..Default::default() }
}

/// This test binary's shared device (created on first use, never dropped),
/// validation on and asserted on. For tests that only need a device: ones
/// that open frames, compare [`Device::counts`] or shut the device down
/// need their own ([`new_device`]), since the binary's tests run in parallel.
pub fn device() -> &'static Device {
    static DEVICE: OnceLock<Device> = OnceLock::new();
    // A closure, not `new_device` itself, so a failure points here rather
    // than into the standard library.
    #[allow(clippy::redundant_closure)]
    DEVICE.get_or_init(|| new_device())
}

/// A device of the test's own, validation on and asserted on.
#[track_caller]
pub fn new_device() -> Device {
    let device = Device::new(&device_desc()).expect("a Vulkan 1.3 device (run `cargo xtask test` to install lavapipe)");
    assert_validation_enabled(&device);
    device
}

/// Something whose validation counters a test can check: a device, the
/// counters themselves (they outlive the device), or a render thread.
pub trait Validated {
    fn validation_counters(self) -> Arc<ValidationCounters>;
}

impl Validated for &Device {
    fn validation_counters(self) -> Arc<ValidationCounters> {
        self.validation()
    }
}

impl Validated for &Arc<ValidationCounters> {
    fn validation_counters(self) -> Arc<ValidationCounters> {
        self.clone()
    }
}

/// The validation counters of `source` (kept after its device is gone).
pub fn validation(source: impl Validated) -> Arc<ValidationCounters> {
    source.validation_counters()
}

/// Fails the test unless the Khronos validation layer is active on
/// `source`'s device. There is no way around it: a GPU test without the
/// layer proves nothing about what the layer would have said.
#[track_caller]
pub fn assert_validation_enabled(source: impl Validated) {
    let v = source.validation_counters();
    assert!(
        v.enabled(),
        "the Khronos validation layer is not active, and GPU tests need it: install it \
         (`cargo xtask test` does) and do not set PROXIMA_VALIDATION=0 (now {:?})",
        std::env::var("PROXIMA_VALIDATION").ok()
    );
}

/// Asserts the validation layer is active, then that it reported no error
/// and no warning so far; the failure lists the messages it kept.
#[track_caller]
pub fn assert_clean(source: impl Validated) {
    let v = source.validation_counters();
    assert_validation_enabled(&v);
    let (errors, warnings) = (v.errors(), v.warnings());
    if errors != 0 || warnings != 0 {
        let messages = v.messages();
        let list: Vec<String> = messages.iter().enumerate().map(|(i, m)| format!("  {}. {m}", i + 1)).collect();
        panic!(
            "the validation layer reported {errors} error(s) and {warnings} warning(s); the last {} message(s):\n{}",
            messages.len(),
            list.join("\n")
        );
    }
}

/// [`assert_clean`] for a report another process wrote (a sample's stats):
/// the layer was active, then no error and no warning. `context` names the
/// run (and may carry its stderr, where the layer's messages went).
#[track_caller]
pub fn assert_reported_clean(enabled: bool, errors: u64, warnings: u64, context: &str) {
    assert!(
        enabled,
        "{context}: the Khronos validation layer was not active, and GPU tests need it: install it \
         (`cargo xtask test` does) and do not set PROXIMA_VALIDATION=0"
    );
    assert!(errors == 0 && warnings == 0, "{context}: the validation layer reported {errors} error(s) and {warnings} warning(s)");
}

/// How many differing pixels [`assert_images_equal`] lists.
const LISTED_PIXELS: usize = 8;

/// Asserts `a` and `b` are the same size and byte-for-byte equal. On
/// failure it writes both under `target/test-output/` (named after `what`)
/// and reports the number of differing pixels and the first few.
#[track_caller]
pub fn assert_images_equal(a: &Image, b: &Image, what: &str) {
    for (name, img) in [("a", a), ("b", b)] {
        let expected = img.width as usize * img.height as usize * 4;
        assert_eq!(img.rgba8.len(), expected, "{what}: image {name} is {}x{} but holds {} bytes", img.width, img.height, img.rgba8.len());
    }
    if (a.width, a.height) != (b.width, b.height) {
        let (pa, pb) = save_pair(a, b, what);
        panic!(
            "{what}: sizes differ, {}x{} vs {}x{} (written to {} and {})",
            a.width,
            a.height,
            b.width,
            b.height,
            pa.display(),
            pb.display()
        );
    }
    let differing = differing_pixels(a, b);
    if differing.is_empty() {
        return;
    }
    let listed: Vec<String> = differing
        .iter()
        .take(LISTED_PIXELS)
        .map(|&i| {
            let (x, y) = ((i % a.width as usize) as u32, (i / a.width as usize) as u32);
            format!("  ({x}, {y}): {:?} vs {:?}", a.pixel(x, y), b.pixel(x, y))
        })
        .collect();
    let (pa, pb) = save_pair(a, b, what);
    panic!(
        "{what}: {} of {} pixels differ; the first {}:\n{}\nimages written to {} and {}",
        differing.len(),
        a.width as usize * a.height as usize,
        listed.len(),
        listed.join("\n"),
        pa.display(),
        pb.display()
    );
}

/// The indices (`y * width + x`) of the pixels that differ between two
/// images of the same size.
fn differing_pixels(a: &Image, b: &Image) -> Vec<usize> {
    a.rgba8.chunks_exact(4).zip(b.rgba8.chunks_exact(4)).enumerate().filter(|(_, (x, y))| x != y).map(|(i, _)| i).collect()
}

/// How many pixels differ between two images of the same size (for tests
/// that expect a change; [`assert_images_equal`] for ones that expect none).
#[track_caller]
pub fn diff_pixels(a: &Image, b: &Image) -> usize {
    assert_eq!((a.width, a.height), (b.width, b.height), "diff_pixels of images of different sizes");
    differing_pixels(a, b).len()
}

fn save_pair(a: &Image, b: &Image, what: &str) -> (PathBuf, PathBuf) {
    (save_test_output(a, &format!("{what}-a")), save_test_output(b, &format!("{what}-b")))
}

/// The workspace's `target/` (`CARGO_TARGET_DIR` when set).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").join("target"),
    }
}

/// `target/test-output/` (under `CARGO_TARGET_DIR` when set), created.
pub fn test_output_dir() -> PathBuf {
    let dir = target_dir().join("test-output");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    dir
}

/// Writes `img` as `target/test-output/<name>.png` (characters other than
/// letters, digits, `-` and `_` in `name` become `_`) and returns the path.
pub fn save_test_output(img: &Image, name: &str) -> PathBuf {
    let file: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    let path = test_output_dir().join(format!("{file}.png"));
    save_png(img, &path);
    path
}

/// Reads an RGBA PNG (as [`save_png`] and the samples write them).
pub fn load_png(path: &Path) -> Image {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
    let mut reader =
        png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut rgba8 = vec![0; reader.output_buffer_size().expect("a frame size that fits")];
    let info = reader.next_frame(&mut rgba8).unwrap_or_else(|e| panic!("decoding {}: {e}", path.display()));
    assert_eq!(info.color_type, png::ColorType::Rgba, "{}: RGBA", path.display());
    rgba8.truncate(info.buffer_size());
    Image { width: info.width, height: info.height, rgba8 }
}

/// Writes `img` as an RGBA PNG at `path`.
pub fn save_png(img: &Image, path: &Path) {
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("creating {}: {e}", path.display()));
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), img.width, img.height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().and_then(|mut w| w.write_image_data(&img.rgba8)).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(w: u32, h: u32, fill: u8) -> Image {
        Image { width: w, height: h, rgba8: vec![fill; (w * h * 4) as usize] }
    }

    #[test]
    fn equal_images_pass() {
        assert_images_equal(&image(3, 2, 7), &image(3, 2, 7), "equal");
    }

    #[test]
    fn one_differing_pixel_fails_and_names_it() {
        let a = image(4, 3, 0);
        let mut b = a.clone();
        b.rgba8[(2 * 4 + 1) * 4] = 9; // pixel (1, 2)
        let e = std::panic::catch_unwind(|| assert_images_equal(&a, &b, "test-support self-test")).unwrap_err();
        let m = e.downcast_ref::<String>().unwrap();
        assert!(m.contains("1 of 12 pixels differ") && m.contains("(1, 2): [0, 0, 0, 0] vs [9, 0, 0, 0]"), "{m}");
        assert!(test_output_dir().join("test-support_self-test-a.png").exists());
        assert!(test_output_dir().join("test-support_self-test-b.png").exists());
    }

    #[test]
    fn different_sizes_fail() {
        let e = std::panic::catch_unwind(|| assert_images_equal(&image(2, 2, 0), &image(2, 1, 0), "sizes")).unwrap_err();
        assert!(e.downcast_ref::<String>().unwrap().contains("2x2 vs 2x1"));
    }

    #[test]
    fn a_report_without_the_layer_or_with_messages_fails() {
        assert_reported_clean(true, 0, 0, "clean");
        for (enabled, errors, warnings) in [(false, 0, 0), (true, 1, 0), (true, 0, 1)] {
            let r = std::panic::catch_unwind(|| assert_reported_clean(enabled, errors, warnings, "run"));
            assert!(r.is_err(), "{enabled} {errors} {warnings}");
        }
    }

    #[test]
    fn counters_without_the_layer_fail_assert_clean() {
        // Fresh counters have never seen the layer: `enabled` is false.
        let v = Arc::new(ValidationCounters::default());
        let e = std::panic::catch_unwind(|| assert_clean(&v)).unwrap_err();
        assert!(e.downcast_ref::<String>().unwrap().contains("validation layer is not active"));
    }
}
