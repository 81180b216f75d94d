//! Runs the `many-cubes` sample headless and checks its PNG and stats.

use samples::SampleStats;
use std::process::Command;

#[test]
fn many_cubes_renders_merged_draws_and_clean_stats() {
    let dir = std::env::temp_dir().join(format!("proxima-many-cubes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (png, stats) = (dir.join("mc.png"), dir.join("mc.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_many-cubes"))
        .args(["--headless", "--frames", "3", "--width", "333", "--height", "197", "--count", "400", "--materials", "3", "--moving", "10"])
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
    assert_eq!(s.primitives, 401, "400 cubes and the ground");
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    assert_eq!(s.passes["base"].draws, 4, "one merged draw per material, plus the ground");
    assert_eq!(s.passes["base"].instances, s.visible_primitives);
    assert!(s.passes["shadow"].draws > 0);
    assert_eq!(s.proxies_created, 0, "moving cubes recreates no proxy");
    assert_eq!(s.mesh_draw_commands_built.cached, 0, "moving cubes builds no command");
}

#[test]
fn many_cubes_rejects_bad_options_with_code_2() {
    for args in [&["--count", "0"][..], &["--moving", "150"], &["--materials", "x"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_many-cubes")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
