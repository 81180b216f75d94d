//! Running a sample as a user would, for the samples' tests.
#![allow(dead_code)]

use samples::SampleStats;
use std::path::PathBuf;
use std::process::Command;

/// Runs `bin --headless ARGS --out .. --stats ..` in a temporary folder and
/// checks what every sample promises: exit 0, a PNG of the frame's size, a
/// stats file that parses, the validation layer active and zero errors and
/// warnings.
pub fn run_sample(bin: &str, tag: &str, args: &[&str]) -> (PathBuf, SampleStats) {
    run_sample_env(bin, tag, args, &[])
}

/// [`run_sample`] with `env` set for the sample.
pub fn run_sample_env(bin: &str, tag: &str, args: &[&str], env: &[(&str, &str)]) -> (PathBuf, SampleStats) {
    let dir = std::env::temp_dir().join(format!("proxima-samples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = std::path::Path::new(bin).file_name().unwrap().to_string_lossy().into_owned();
    let (png, stats) = (dir.join(format!("{name}-{tag}.png")), dir.join(format!("{name}-{tag}.json")));
    let out = Command::new(bin)
        .arg("--headless")
        .args(args)
        .arg("--out")
        .arg(&png)
        .arg("--stats")
        .arg(&stats)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "{name} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let s = SampleStats::read(&stats).unwrap();
    let image = test_support::load_png(&png);
    assert_eq!((image.width, image.height), (s.width, s.height), "PNG size");
    let context = format!("{name} {args:?} (stderr: {})", String::from_utf8_lossy(&out.stderr));
    test_support::assert_reported_clean(s.validation.enabled, s.validation.errors, s.validation.warnings, &context);
    // Every engine sample reports the renderer's pipelines, materials and
    // textures; `hello` draws without the renderer and reports none.
    if name.starts_with("hello") {
        assert_eq!((s.pipelines, s.materials, s.textures), (None, None, None), "{name}");
    } else {
        let (pipelines, materials, textures) =
            (s.pipelines.expect("pipelines"), s.materials.expect("materials"), s.textures.expect("textures"));
        assert!(pipelines.live > 0 && materials.live > 0, "{name}: {pipelines:?} {materials:?}");
        assert!(textures.live >= 3, "{name}: the three built-in textures at least: {textures:?}");
    }
    (png, s)
}
