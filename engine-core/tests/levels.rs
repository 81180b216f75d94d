//! Levels: a group of actors loaded and unloaded as one unit, on the real
//! device with validation on. A level spawned from items, adopted from
//! actors in the world, or loaded from a glTF file in the background while
//! frames render; unloading takes every actor (and a glTF level's
//! textures and materials) with it; a bad item or a bad file adds nothing.

use engine_core::*;
use glam::Vec3;
use renderer::RenderThreadMode;
use test_support::render_thread;

fn world() -> World {
    World::new(Some(render_thread(RenderThreadMode::Inline)))
}

/// (actors, scene primitives, live materials, live textures).
fn counts(world: &mut World) -> (usize, usize, usize, usize) {
    world.send_all_end_of_frame_updates().unwrap();
    let (primitives, materials, textures) = world
        .render_thread()
        .unwrap()
        .with_context(|ctx| {
            ctx.renderer.update_scene(&ctx.device, &mut ctx.scene).unwrap();
            (ctx.scene.num_primitives(), ctx.scene.materials.live(), ctx.scene.textures.live())
        })
        .unwrap();
    (world.num_actors(), primitives, materials, textures)
}

fn cubes(n: usize) -> Vec<(Box<dyn Component>, Transform)> {
    (0..n)
        .map(|i| {
            (Box::new(StaticMeshComponent::new(StaticMesh::cube())) as Box<dyn Component>, Transform::from_translation(Vec3::X * i as f32))
        })
        .collect()
}

#[test]
fn a_level_comes_and_goes_as_one_unit() {
    let mut w = world();
    let mut levels = Levels::new();
    let (_, outside) = w.spawn_actor("outside", Box::new(StaticMeshComponent::new(StaticMesh::cube())), Transform::IDENTITY).unwrap();
    let forest = levels.spawn(&mut w, "forest", cubes(5)).unwrap();
    let town = levels.spawn(&mut w, "town", cubes(3)).unwrap();
    assert_eq!((levels.len(), levels.name(forest), levels.actors(town).map(<[_]>::len)), (2, Some("forest"), Some(3)));
    let c = counts(&mut w);
    assert_eq!((c.0, c.1), (9, 9), "9 actors, 9 primitives");
    let first = levels.actors(forest).unwrap()[0];
    assert_eq!(levels.level_of(first), Some(forest));
    levels.unload(&mut w, forest).unwrap();
    assert_eq!(counts(&mut w).1, 4, "the forest's five primitives went, the town's and the outside one stay");
    assert_eq!(w.num_actors(), 4);
    assert!(matches!(levels.unload(&mut w, forest), Err(LevelError::UnknownLevel(id)) if id == forest));
    assert_eq!(levels.level_of(first), None);
    // A bad item adds nothing, not even the good ones before it.
    let mut bad = cubes(3);
    bad[2].1 = Transform::from_translation(Vec3::NAN);
    assert!(matches!(levels.spawn(&mut w, "bad", bad), Err(LevelError::Engine(_))));
    assert_eq!((levels.len(), w.num_actors()), (1, 4));
    // Actors already in the world become a level; one can be in one level only.
    let outside_actor = w.actor_of(outside).unwrap();
    let yard = levels.adopt(&w, "yard", vec![outside_actor]).unwrap();
    assert!(matches!(levels.adopt(&w, "again", vec![outside_actor]), Err(LevelError::ActorNotFree(a)) if a == outside_actor));
    levels.unload(&mut w, yard).unwrap();
    levels.unload(&mut w, town).unwrap();
    let c = counts(&mut w);
    assert_eq!((c.0, c.1), (0, 0));
    test_support::assert_clean(w.render_thread().unwrap());
}

#[cfg(feature = "gltf")]
mod gltf_levels {
    use super::*;
    use engine_core::gltf::GltfLimits;
    use test_support::gltf_writer::*;

    /// Polls until every load has landed (the world keeps its frames).
    fn poll_all(levels: &mut Levels, w: &mut World) -> Vec<LevelEvent> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        let mut events = Vec::new();
        while levels.loads_in_flight() > 0 {
            assert!(std::time::Instant::now() < deadline, "the loads did not finish");
            events.extend(levels.poll(w));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        events
    }

    #[test]
    fn a_gltf_file_loads_in_the_background_as_a_level_and_unloads_with_its_assets() {
        let dir = std::env::temp_dir().join(format!("proxima-levels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (good, broken) = (dir.join("good.glb"), dir.join("broken.glb"));
        std::fs::write(&good, textured_quads(4, 1).to_glb()).unwrap();
        std::fs::write(&broken, &textured_quads(2, 1).to_glb()[..100]).unwrap();
        let mut w = world();
        let mut levels = Levels::new();
        let before = counts(&mut w);
        levels.load_gltf("good", &good, &GltfLimits::default());
        levels.load_gltf("broken", &broken, &GltfLimits::default());
        let mut events = poll_all(&mut levels, &mut w);
        // Events come as the loads land, which may be in either order.
        events.sort_by_key(|e| matches!(e, LevelEvent::Failed { .. }));
        let [LevelEvent::Loaded { level, name }, LevelEvent::Failed { name: failed, error }] = events.as_slice() else {
            panic!("{events:?}")
        };
        assert_eq!((name.as_str(), failed.as_str()), ("good", "broken"));
        assert!(matches!(error, LevelError::Gltf(_)), "{error}");
        let loaded = counts(&mut w);
        assert_eq!((loaded.0, loaded.1), (before.0 + 1, before.1 + 4), "one actor, four quads; nothing of the broken file");
        assert!(loaded.2 > before.2 && loaded.3 > before.3, "its materials and texture: {before:?} -> {loaded:?}");
        levels.unload(&mut w, *level).unwrap();
        assert_eq!(counts(&mut w), before, "the level's actor, materials and texture all went");
        test_support::assert_clean(w.render_thread().unwrap());
    }
}
