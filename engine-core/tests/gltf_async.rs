//! `gltf::load_async`: the import runs on a background thread while an
//! Engine keeps ticking and rendering frames; progress reaches 100%; two
//! loads at once both complete and spawn; a bad file's error arrives
//! through `poll` and nothing is added to the World.

#![cfg(feature = "gltf")]

use engine_core::gltf::{self, GltfError, GltfLimits, GltfLoad};
use engine_core::*;
use glam::Vec3;
use renderer::RenderThreadMode;
use serde_json::json;
use std::path::{Path, PathBuf};
use test_support::device_desc;
use test_support::gltf_writer::*;

fn engine() -> Engine {
    let mut engine = Engine::new(&EngineDesc { width: 64, height: 48, mode: RenderThreadMode::Inline, device: device_desc() }).unwrap();
    engine.render_thread().set_cvar(renderer::cvars::SHADOW_MAP_SIZE, "256").unwrap();
    let eye = Vec3::new(-4.0, 0.5, 1.0);
    engine
        .world
        .spawn_actor("camera", Box::new(CameraComponent::default()), Transform::new(eye, look_rotation(eye, Vec3::ZERO), Vec3::ONE))
        .unwrap();
    engine
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("proxima-gltf-async-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn counts(world: &mut World) -> (usize, usize, usize, usize) {
    let (materials, textures) =
        world.render_thread().unwrap().with_context(|ctx| (ctx.scene.materials.live(), ctx.scene.textures.live())).unwrap();
    (world.num_actors(), world.num_components(), materials, textures)
}

/// Ticks and renders frames until `load` has a result; returns it with the
/// fractions seen before each poll and the frames rendered meanwhile.
fn tick_until_done(engine: &mut Engine, load: &mut GltfLoad) -> (Result<gltf::GltfImport, GltfError>, Vec<f32>, u64) {
    let first = engine.frames_rendered();
    let mut fractions = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        fractions.push(load.fraction());
        if let Some(result) = load.poll() {
            engine.flush().unwrap();
            return (result, fractions, engine.frames_rendered() - first);
        }
        assert!(std::time::Instant::now() < deadline, "the load did not finish");
        engine.tick(0.016, false).unwrap();
    }
}

#[cfg(unix)]
#[test]
fn progress_reaches_100_percent_while_frames_render() {
    let w = textured_quads(4, 3);
    let glb = w.to_glb();
    // The file is a FIFO: the loader blocks reading it until the test
    // writes the bytes, so frames provably render while the load runs.
    let dir = temp_dir("fifo");
    let fifo = dir.join("model.glb");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut engine = engine();
    let mut load = gltf::load_async(&fifo, &GltfLimits::default());
    assert_eq!(load.path(), fifo);
    let first = engine.frames_rendered();
    for _ in 0..5 {
        engine.tick(0.016, false).unwrap();
        assert!(load.poll().is_none(), "nothing was written yet");
        assert!(load.fraction() < 1.0 && !load.is_finished());
        assert_eq!(load.bytes_read(), 0);
    }
    engine.flush().unwrap();
    assert_eq!(engine.frames_rendered() - first, 5, "frames render while the load waits");
    let writer = {
        let (fifo, glb) = (fifo.clone(), glb.clone());
        std::thread::spawn(move || std::fs::write(fifo, glb).unwrap())
    };
    let (result, fractions, _) = tick_until_done(&mut engine, &mut load);
    writer.join().unwrap();
    let import = result.unwrap();
    assert!(fractions.windows(2).all(|f| f[0] <= f[1]), "never decreasing: {fractions:?}");
    assert!(fractions.iter().all(|f| (0.0..=1.0).contains(f)), "{fractions:?}");
    assert_eq!(load.fraction(), 1.0, "100% once done");
    assert!(load.poll().is_none(), "the result is handed out once");
    assert_eq!(load.bytes_read(), glb.len() as u64);
    assert_eq!(load.images_decoded(), 3);
    assert_eq!(load.meshes_built(), 4);
    assert_eq!((import.meshes.len(), import.textures.len(), import.triangle_count()), (4, 3, 8));
    let spawned = import.spawn(&mut engine.world).unwrap();
    assert_eq!(spawned.nodes.iter().flatten().count(), 4);
    engine.tick(0.016, true).unwrap();
    test_support::assert_clean(engine.render_thread());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn two_loads_at_once_both_complete_and_spawn() {
    let dir = temp_dir("two");
    let a = write(&dir, "a.glb", &textured_quads(3, 2).to_glb());
    let b = write(&dir, "b.gltf", &textured_quads(5, 1).to_gltf());
    let mut engine = engine();
    let before = engine.world.num_actors();
    let mut loads = [gltf::load_async(&a, &GltfLimits::default()), gltf::load_async(&b, &GltfLimits::default())];
    let mut results = [None, None];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while results.iter().any(Option::is_none) {
        assert!(std::time::Instant::now() < deadline, "the loads did not finish");
        engine.tick(0.016, false).unwrap();
        for (load, result) in loads.iter_mut().zip(&mut results) {
            if let Some(r) = load.poll() {
                assert!(result.replace(r.unwrap()).is_none());
            }
        }
    }
    let [ia, ib] = results.map(Option::unwrap);
    assert_eq!((ia.meshes.len(), ia.textures.len()), (3, 2));
    assert_eq!((ib.meshes.len(), ib.textures.len()), (5, 1));
    assert!(loads.iter().all(|l| l.fraction() == 1.0));
    let sa = ia.spawn(&mut engine.world).unwrap();
    let sb = ib.spawn(&mut engine.world).unwrap();
    assert_eq!(engine.world.num_actors(), before + 2);
    assert_eq!(sa.nodes.iter().flatten().count() + sb.nodes.iter().flatten().count(), 8);
    engine.tick(0.016, true).unwrap();
    test_support::assert_clean(engine.render_thread());
    // `wait` gives the same result as polling.
    let again = gltf::load_async(&a, &GltfLimits::default()).wait().unwrap();
    assert_eq!(again.triangle_count(), ia.triangle_count());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_bad_files_error_arrives_through_poll_and_the_world_is_unchanged() {
    let dir = temp_dir("bad");
    let glb = textured_quads(2, 1).to_glb();
    let truncated = write(&dir, "truncated.glb", &glb[..glb.len() - 10]);
    let mut bad_index = textured_quads(1, 0);
    bad_index.json["nodes"][0]["mesh"] = json!(7);
    let bad_index = write(&dir, "bad_index.gltf", &bad_index.to_gltf());
    let mut engine = engine();
    // After a first frame: the renderer's built-in textures exist.
    engine.tick(0.016, true).unwrap();
    let before = counts(&mut engine.world);

    let mut load = gltf::load_async(&truncated, &GltfLimits::default());
    let (result, _, _) = tick_until_done(&mut engine, &mut load);
    assert!(matches!(result, Err(GltfError::MalformedGlb(_))), "{:?}", result.err());
    assert_eq!(load.fraction(), 1.0, "an error ends the load too");

    let mut load = gltf::load_async(&bad_index, &GltfLimits::default());
    let (result, _, _) = tick_until_done(&mut engine, &mut load);
    let e = result.unwrap_err();
    assert_eq!(e.path(), Some("/nodes/0/mesh"), "{e}");

    let mut load = gltf::load_async(dir.join("absent.glb"), &GltfLimits::default());
    let (result, _, _) = tick_until_done(&mut engine, &mut load);
    assert!(matches!(result, Err(GltfError::Io { .. })), "{:?}", result.err());

    // Limits reach the loading thread.
    let limits = GltfLimits { max_texture_dimension: 16, ..GltfLimits::default() };
    let ok = write(&dir, "ok.glb", &glb);
    let e = gltf::load_async(&ok, &limits).wait().unwrap_err();
    assert!(matches!(&e, GltfError::LimitExceeded { path, .. } if path == "/images/0"), "{e}");

    engine.tick(0.016, true).unwrap();
    assert_eq!(counts(&mut engine.world), before, "nothing was added");
    test_support::assert_clean(engine.render_thread());
    let _ = std::fs::remove_dir_all(dir);
}
