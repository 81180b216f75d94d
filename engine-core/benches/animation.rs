//! Skeletal animation on the game thread (issue 39), with the shared Fox
//! (`../shared/gltf-samples/Fox/Fox.glb`; the bench prints a skip line and
//! writes nothing when it is absent):
//!
//! - many-foxes' evaluation: 1,000 `SkeletalMeshComponent`s of the Fox
//!   running, each from its own time; one `World::tick` (advance, sample
//!   the clip, model-space joints, skinning matrices, bounds) per frame —
//!   µs per fox on one thread, and the speed-up on two threads (a rayon
//!   pool of 2 vs of 1, paired; goal ≥ 1.6);
//! - glTF import of the Fox with its animations vs the same file without
//!   them (paired; goal ≤ 1.5).
//!
//! Writes `target/bench/engine-core-animation.json` for `cargo xtask bench`.

use engine_core::gltf;
use engine_core::*;
use std::path::PathBuf;
use std::time::Instant;
use test_support::bench::{paired, quick, write_rows, Arm, Row};

const FOXES: usize = 1000;

fn fox_path() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/gltf-samples/Fox/Fox.glb");
    path.exists().then_some(path)
}

/// A World (no renderer) of `FOXES` running foxes.
fn foxes(import: &gltf::GltfImport) -> World {
    let (mesh, clips) = import.skeletal_mesh(0, 0).unwrap();
    let run = clips.iter().position(|c| c.name() == "Run").unwrap_or(0);
    let mut world = World::new(None);
    let items: Vec<(Box<dyn Component>, Transform)> = (0..FOXES)
        .map(|i| {
            let mut c = SkeletalMeshComponent::new(mesh.clone());
            for clip in &clips {
                c.add_clip(clip.clone()).unwrap();
            }
            c.play(run, true).unwrap();
            let duration = clips[run].duration();
            c.player_mut().unwrap().seek((i as f32 * 0.618_034).fract() * duration).unwrap();
            (Box::new(c) as Box<dyn Component>, Transform::from_translation(glam::Vec3::new(i as f32 * 2.0, 0.0, 0.0)))
        })
        .collect();
    world.spawn_actors(items).unwrap();
    world
}

/// Milliseconds of `ticks` ticks of `world` on a rayon pool of `threads`.
fn time_ticks(world: &mut World, pool: &rayon::ThreadPool, ticks: usize) -> f64 {
    let start = Instant::now();
    pool.install(|| {
        for _ in 0..ticks {
            world.tick(1.0 / 60.0);
        }
    });
    start.elapsed().as_secs_f64() * 1e3 / ticks as f64
}

/// The Fox's GLB with its `animations` removed from the JSON chunk.
fn without_animations(glb: &[u8]) -> Vec<u8> {
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let mut json: serde_json::Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    json.as_object_mut().unwrap().remove("animations");
    let mut text = serde_json::to_vec(&json).unwrap();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let rest = &glb[20 + json_len..];
    let mut out = Vec::with_capacity(glb.len());
    out.extend_from_slice(&glb[0..8]);
    out.extend_from_slice(&((12 + 8 + text.len() + rest.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(&glb[16..20]);
    out.extend_from_slice(&text);
    out.extend_from_slice(rest);
    out
}

fn main() {
    let Some(path) = fox_path() else {
        println!("skipped: the Fox (../shared/gltf-samples/Fox/Fox.glb) is absent");
        return;
    };
    let glb = std::fs::read(&path).unwrap();
    let import = gltf::import_slice(&glb, None).unwrap();
    let mut world = foxes(&import);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let ticks = if quick() { 10 } else { 30 };
    // Warm-up: poses, globals and matrices reach their sizes.
    time_ticks(&mut world, &two, ticks);
    let speedup = paired(if quick() { 5 } else { 11 }, |arm| match arm {
        Arm::Measured => time_ticks(&mut world, &one, ticks),
        Arm::Baseline => time_ticks(&mut world, &two, ticks),
    });
    let per_fox_us = speedup.measured.median * 1e3 / FOXES as f64;
    println!(
        "animation: {FOXES} foxes, {:.3} ms per tick on 1 thread ({per_fox_us:.2} us per fox), {:.3} ms on 2: {:.2}x (range {:.2}-{:.2})",
        speedup.measured.median, speedup.baseline.median, speedup.ratio.median, speedup.ratio.min, speedup.ratio.max
    );
    let bare = without_animations(&glb);
    assert!(gltf::import_slice(&bare, None).unwrap().animations.is_empty());
    let import_ratio = paired(if quick() { 5 } else { 11 }, |arm| {
        let bytes = if arm == Arm::Measured { &glb } else { &bare };
        let start = Instant::now();
        let i = gltf::import_slice(bytes, None).unwrap();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        std::hint::black_box(i);
        ms
    });
    println!("animation: Fox import with animations vs without {:.2}x", import_ratio.ratio.median);
    let rows = [
        Row::new("engine-core: animation evaluation per fox (many-foxes 1,000, one thread)", per_fox_us, "us", None),
        Row::spread("engine-core: animation evaluation of 1,000 foxes, 2 threads vs 1 (speed-up)", speedup.ratio, "x", Some(">= 1.6")),
        Row::spread("engine-core: glTF import of the Fox with its animations vs without", import_ratio.ratio, "x", Some("<= 1.5")),
    ];
    let path = write_rows("engine-core-animation", &rows).unwrap();
    println!("wrote {}", path.display());
}
