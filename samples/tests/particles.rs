//! Runs the `particles` sample headless and checks its PNG and stats.

use samples::SampleStats;
use std::process::Command;

#[test]
fn particles_draws_prewarmed_translucent_and_additive_sprites_with_clean_stats() {
    let dir = std::env::temp_dir().join(format!("proxima-particles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (png, stats) = (dir.join("p.png"), dir.join("p.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_particles"))
        .args(["--headless", "--frames", "3", "--width", "333", "--height", "197", "--particles", "3000"])
        .arg("--out")
        .arg(&png)
        .arg("--stats")
        .arg(&stats)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let reader = decoder.read_info().unwrap();
    assert_eq!((reader.info().width, reader.info().height), (333, 197));
    let s = SampleStats::read(&stats).unwrap();
    assert_eq!(s.sample, "particles");
    assert_eq!((s.frames, s.width, s.height), (3, 333, 197));
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    assert!(s.particles > 0, "pre-warmed systems show particles from the first frames");
    assert!(s.particles <= 3000, "--particles caps the total: {}", s.particles);
    assert!(s.particles >= 1000, "pre-warmed systems are well filled: {}", s.particles);
    let t = s.passes["translucency"];
    // 8 systems, 10 emitters: one draw per emitter with live particles.
    assert!(t.draws >= 2, "smoke and sparks at least: {t:?}");
    assert!(t.draws <= 10, "{t:?}");
    // Every emitter is translucent or additive and every system is in view.
    assert_eq!(t.instances, s.particles, "one instance per live particle, all in the translucency pass");
    assert!(s.passes["base"].draws > 0, "ground and pedestals");
    assert!(s.passes["shadow"].draws > 0);
    assert!(s.passes["shadow"].instances < s.passes["base"].instances + 1, "particles cast no shadows");
}

#[test]
fn particles_rejects_bad_options_with_code_2() {
    for args in [&["--particles", "0"][..], &["--particles", "x"], &["--width", "0"], &["--frames", "0"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_particles")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
