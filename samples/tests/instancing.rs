//! Runs the `instancing` sample headless: two ISM components draw twice per
//! pass with clean validation; a small forest is partly culled on the GPU.

use samples::SampleStats;
use std::path::PathBuf;
use std::process::Command;

fn run(tag: &str, args: &[&str]) -> (PathBuf, SampleStats) {
    let dir = std::env::temp_dir().join(format!("proxima-instancing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (png, stats) = (dir.join(format!("{tag}.png")), dir.join(format!("{tag}.json")));
    let out = Command::new(env!("CARGO_BIN_EXE_instancing"))
        .arg("--headless")
        .args(args)
        .arg("--out")
        .arg(&png)
        .arg("--stats")
        .arg(&stats)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (png, SampleStats::read(&stats).unwrap())
}

#[test]
fn two_components_of_a_thousand_rocks_draw_twice_per_pass() {
    let (png, s) = run("two", &["--mesh-a", "1000", "--mesh-b", "1000", "--frames", "3", "--width", "333", "--height", "197"]);
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let reader = decoder.read_info().unwrap();
    assert_eq!((reader.info().width, reader.info().height), (333, 197));
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    assert_eq!(s.primitives, 2, "two ISM components and nothing else");
    assert_eq!(s.passes["base"].draws, 2, "one draw per component");
    assert_eq!(s.passes["depth"].draws, 2);
    assert!(s.passes["shadow"].draws >= 2 && s.passes["shadow"].draws % 2 == 0, "{:?}", s.passes["shadow"]);
    assert_eq!(s.instances.total, 2000);
    assert_eq!(s.instances.visible, 2000, "every rock is in view");
}

#[test]
fn a_small_forest_is_partly_culled() {
    let (_, s) = run("forest", &["--instances", "20000", "--frames", "3", "--width", "320", "--height", "180"]);
    assert_eq!(s.validation.errors, 0);
    assert_eq!(s.validation.warnings, 0);
    assert_eq!(s.instances.total, 20000);
    assert!(s.instances.visible > 0 && s.instances.visible < s.instances.total, "{:?}", s.instances);
}

#[test]
fn instancing_rejects_bad_options_with_code_2() {
    for args in [&["--instances", "0"][..], &["--mesh-a", "x"], &["--instances", "10", "--mesh-a", "10"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_instancing")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
