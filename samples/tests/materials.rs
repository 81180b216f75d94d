//! Runs the `materials` sample headless and checks its stats (1,000
//! instances animated by parameter writes alone) and a few facts of its
//! picture, found where `samples::materials_scene` puts things.

mod common;

use glam::Vec3;
use samples::materials_scene as layout;
use std::process::Command;

const W: u32 = 480;
const H: u32 = 270;

struct Picture {
    rgba: Vec<u8>,
}

impl Picture {
    fn at(&self, x: i32, y: i32) -> [f32; 3] {
        let (x, y) = (x.clamp(0, W as i32 - 1) as usize, y.clamp(0, H as i32 - 1) as usize);
        let i = (y * W as usize + x) * 4;
        [self.rgba[i] as f32, self.rgba[i + 1] as f32, self.rgba[i + 2] as f32]
    }

    /// The mean colour of the 3×3 pixels around where `p` lands.
    fn around(&self, p: Vec3) -> [f32; 3] {
        let (cx, cy) = layout::project(p, W, H);
        let mut sum = [0.0; 3];
        for dy in -1..=1 {
            for dx in -1..=1 {
                let c = self.at(cx as i32 + dx, cy as i32 + dy);
                (0..3).for_each(|k| sum[k] += c[k] / 9.0);
            }
        }
        sum
    }

    /// The pixels inside the screen rectangle spanned by the world points `corners`.
    fn region(&self, corners: &[Vec3]) -> Vec<[f32; 3]> {
        let pts: Vec<(f32, f32)> = corners.iter().map(|&p| layout::project(p, W, H)).collect();
        let (x0, x1) = (pts.iter().map(|p| p.0).fold(f32::MAX, f32::min), pts.iter().map(|p| p.0).fold(f32::MIN, f32::max));
        let (y0, y1) = (pts.iter().map(|p| p.1).fold(f32::MAX, f32::min), pts.iter().map(|p| p.1).fold(f32::MIN, f32::max));
        let mut out = Vec::new();
        for y in y0.ceil() as i32..y1.floor() as i32 {
            for x in x0.ceil() as i32..x1.floor() as i32 {
                out.push(self.at(x, y));
            }
        }
        out
    }
}

fn luminance(c: [f32; 3]) -> f32 {
    0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
}

fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    (0..3).map(|k| (a[k] - b[k]).abs()).sum()
}

#[test]
fn materials_animates_1000_instances_by_parameter_writes_alone() {
    let (png, s) = common::run_sample(env!("CARGO_BIN_EXE_materials"), "4", &["--frames", "4", "--width", "480", "--height", "270"]);
    assert_eq!((s.sample.as_str(), s.frames, s.width, s.height), ("materials", 4, W, H));
    assert_eq!((s.validation.errors, s.validation.warnings), (0, 0));
    let (materials, pipelines, textures) = (s.materials.unwrap(), s.pipelines.unwrap(), s.textures.unwrap());
    assert!(materials.live >= 1000, "{materials:?}");
    assert_eq!(materials.bytes_uploaded, 1000 * 256, "the 1,000 tiles' blocks, and nothing else, are written in the last frame");
    assert_eq!(pipelines.created, 0, "the tint changes and the instances make no pipeline after the first frame: {pipelines:?}");
    assert_eq!(s.mesh_draw_commands_built, samples::MeshDrawCommandsBuilt { cached: 0, dynamic: 0 }, "parameter writes rebuild no command");
    assert_eq!(textures.live, 3 + 4, "the built-ins, bricks, checker, bumps and leaves: {textures:?}");
    assert!(s.passes["translucency"].draws >= layout::TRANSLUCENT_COUNT as u64, "{:?}", s.passes["translucency"]);
    assert!(s.passes["shadow"].draws > 0);

    let picture = Picture { rgba: test_support::load_png(&png).rgba8 };
    // A metal and a dielectric of the same colour and roughness differ.
    let (dielectric, metal) = (picture.around(layout::grid_sphere(0, 1)), picture.around(layout::grid_sphere(layout::GRID_COLUMNS - 1, 1)));
    assert!(distance(dielectric, metal) > 40.0, "dielectric {dielectric:?} vs metal {metal:?}");
    // The grid's spheres stand out from the wall behind.
    let wall = picture.around(Vec3::new(-3.0, layout::WALL_Y, 5.2));
    assert!(distance(dielectric, wall) > 40.0, "sphere {dielectric:?} vs wall {wall:?}");

    // The masked panel: leaves (green) and, through the holes, the wall (a
    // light grey).
    let half = layout::PANEL_SIZE / 2.0 - 0.15;
    let panel: Vec<Vec3> =
        [(-1.0, -1.0), (1.0, 1.0)].iter().map(|&(sx, sz)| layout::PANEL_CENTRE + Vec3::new(sx * half, 0.0, sz * half)).collect();
    let pixels = picture.region(&panel);
    assert!(pixels.len() > 500, "the panel covers {} pixels", pixels.len());
    let green = pixels.iter().filter(|c| c[1] > c[0] + 12.0 && c[1] > c[2] + 12.0).count() as f32 / pixels.len() as f32;
    let grey = pixels
        .iter()
        .filter(|&&c| (c[0] - c[1]).abs() < 10.0 && (c[1] - c[2]).abs() < 10.0 && luminance(c) > 0.6 * luminance(wall))
        .count() as f32
        / pixels.len() as f32;
    assert!(green > 0.15, "leaves cover {green} of the panel");
    assert!(grey > 0.15, "the wall shows through {grey} of the panel");

    // Its shadow on the wall, where the panel does not hide it: shadowed
    // texels and lit ones where light came through the holes, and the wall
    // beside it evenly lit.
    let shadow: Vec<Vec3> = [(0.45, -0.6), (1.0, 0.6)]
        .iter()
        .map(|&(sx, sz)| layout::shadow_on_wall(layout::PANEL_CENTRE + Vec3::new(sx * half, 0.0, sz * half)))
        .collect();
    let lit = luminance(picture.around(Vec3::new(7.0, layout::WALL_Y, 4.0)));
    let pixels = picture.region(&shadow);
    assert!(pixels.len() > 100, "the shadow covers {} pixels", pixels.len());
    let dark = pixels.iter().filter(|&&c| luminance(c) < 0.8 * lit).count() as f32 / pixels.len() as f32;
    let through = pixels.iter().filter(|&&c| luminance(c) > 0.93 * lit).count() as f32 / pixels.len() as f32;
    assert!(dark > 0.15, "the leaves shadow {dark} of the wall behind them (lit wall: {lit})");
    assert!(through > 0.1, "light comes through the holes onto {through} of it (lit wall: {lit})");
}

#[test]
fn materials_rejects_bad_options_with_code_2() {
    for args in [&["--frames", "0"][..], &["--no-such-option"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_materials")).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// `--serial` writes the same image as the parallel default, 1,000
/// materials and the translucent row included.
#[test]
fn materials_serial_and_parallel_write_identical_images() {
    let dir = std::env::temp_dir().join(format!("proxima-samples-{}-materials-order", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |serial: bool| {
        let path = dir.join(if serial { "serial.png" } else { "parallel.png" });
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_materials"));
        cmd.args(["--headless", "--frames", "2", "--width", "320", "--height", "180"]).arg("--out").arg(&path);
        if serial {
            cmd.arg("--serial");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        test_support::load_png(&path)
    };
    test_support::assert_images_equal(&run(true), &run(false), "materials: --serial vs parallel");
}

/// A Radiance `.hdr` of `width` x `height` flat RGBE texels, the top half
/// bright blue sky, the bottom half dark ground.
fn hdr_panorama(width: u32, height: u32) -> Vec<u8> {
    let mut f = format!("#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y {height} +X {width}\n").into_bytes();
    for y in 0..height {
        let texel: [u8; 4] = if y < height / 2 { [80, 120, 250, 128] } else { [60, 50, 40, 126] };
        for _ in 0..width {
            f.extend(texel);
        }
    }
    f
}

/// The spheres reflect the environment they are given: the sample's
/// default (the analytic sky), a `.hdr` panorama (`--environment FILE`),
/// or the hemisphere; a file that does not decode is an error naming the
/// option, exit code 1.
#[test]
fn materials_takes_its_environment_from_the_option() {
    let bin = env!("CARGO_BIN_EXE_materials");
    let size = ["--width", "160", "--height", "90", "--frames", "1"];
    let (_, sky) = common::run_sample(bin, "environment-default", &size);
    assert_eq!(sky.image.as_ref().unwrap().environment, "sky");
    let dir = std::env::temp_dir().join(format!("proxima-samples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("panorama.hdr");
    std::fs::write(&file, hdr_panorama(64, 32)).unwrap();
    let file_arg = file.to_string_lossy().into_owned();
    let args: Vec<&str> = size.iter().copied().chain(["--environment", file_arg.as_str()]).collect();
    let (_, image) = common::run_sample(bin, "environment-file", &args);
    assert_eq!(image.image.as_ref().unwrap().environment, "image");
    let args: Vec<&str> = size.iter().copied().chain(["--environment", "hemisphere"]).collect();
    let (_, hemisphere) = common::run_sample(bin, "environment-hemisphere", &args);
    assert_eq!(hemisphere.image.as_ref().unwrap().environment, "hemisphere");
    // Truncated: the texels are missing.
    let bad = dir.join("truncated.hdr");
    let mut bytes = hdr_panorama(64, 32);
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&bad, bytes).unwrap();
    let out = Command::new(bin).args(["--headless", "--frames", "1", "--environment"]).arg(&bad).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--environment") && stderr.contains("hdr"), "{stderr}");
}
