//! The public glTF models in `../shared/gltf-samples/` (never copied into
//! the repository): each imports, spawns and renders a frame on the real
//! device with zero validation messages, with what it carries checked.
//! A test prints a skip line when the folder is absent.

#![cfg(feature = "gltf")]

use engine_core::gltf::{self, AlphaMode, GltfImport};
use engine_core::*;
use glam::Vec3;
use renderer::{Bounds, RenderThreadMode};
use std::path::PathBuf;
use test_support::device_desc;

const W: u32 = 320;
const H: u32 = 240;

fn sample(rel: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/gltf-samples").join(rel);
    if path.exists() {
        Some(path)
    } else {
        println!("skipped: {} is absent", path.display());
        None
    }
}

/// Spawns `import` with a camera framing it from +X (its front after the
/// axis conversion) and a sun, renders one frame, checks validation;
/// returns the image, the spawn and the world bounds.
fn render(import: &GltfImport) -> (rhi_vulkan::Image, gltf::SpawnedScene, Bounds, Engine) {
    let mut engine = Engine::new(&EngineDesc { width: W, height: H, mode: RenderThreadMode::Inline, device: device_desc() }).unwrap();
    engine.render_thread().set_cvar(renderer::cvars::SHADOW_MAP_SIZE, "256").unwrap();
    let spawned = import.spawn(&mut engine.world).unwrap();
    let w = &mut engine.world;
    let mut bounds: Option<Bounds> = None;
    for (n, id) in spawned.nodes.iter().enumerate() {
        let (Some(id), Some(m)) = (id, import.nodes[n].mesh) else { continue };
        let Some(mesh) = &import.meshes[m] else { continue };
        let b = mesh.mesh.bounds().transformed(&w.world_transform(*id).unwrap());
        bounds = Some(bounds.map_or(b, |a| a.union(&b)));
    }
    let b = bounds.expect("a mesh");
    let size = b.extent.length().max(1e-3);
    let eye = b.origin + Vec3::new(2.2, 0.8, 0.6) * size;
    let mut cam = CameraComponent::default();
    cam.0.near = size * 0.01;
    cam.0.far = size * 20.0;
    w.spawn_actor("camera", Box::new(cam), Transform::new(eye, look_rotation(eye, b.origin), Vec3::ONE)).unwrap();
    let sun = Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, Vec3::new(-0.5, -0.3, -1.0)), Vec3::ONE);
    w.spawn_actor("sun", Box::new(DirectionalLightComponent { intensity: 3.0, ..Default::default() }), sun).unwrap();
    engine.tick(0.016, true).unwrap();
    engine.flush().unwrap();
    let img = engine.read_back().unwrap().expect("an image");
    test_support::assert_clean(engine.render_thread());
    (img, spawned, b, engine)
}

/// Pixels that differ from the background (the corner's colour).
fn covered(img: &rhi_vulkan::Image) -> usize {
    let bg = img.pixel(0, 0);
    (0..img.height).flat_map(|y| (0..img.width).map(move |x| (x, y))).filter(|&(x, y)| img.pixel(x, y) != bg).count()
}

#[test]
fn flight_helmet_imports_with_its_textures_and_renders_upright_and_lit() {
    let Some(path) = sample("FlightHelmet/FlightHelmet.gltf") else { return };
    let import = gltf::import(&path).unwrap();
    assert_eq!(import.materials.len(), 6);
    assert_eq!(import.nodes.len(), 6);
    assert_eq!(import.meshes.iter().flatten().count(), 6);
    // 15 images, each used once in its own colour space.
    assert_eq!(import.textures.len(), 15);
    assert_eq!(import.textures.iter().filter(|t| t.srgb).count(), 5, "the base colours are sRGB");
    for m in &import.materials {
        assert!(
            m.base_color_texture.is_some()
                && m.normal_texture.is_some()
                && m.occlusion_texture.is_some()
                && m.metallic_roughness_texture.is_some(),
            "{}",
            m.name
        );
    }
    assert_eq!(import.materials.iter().filter(|m| m.alpha_mode == AlphaMode::Blend).count(), 1, "the lenses blend");
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    let (img, spawned, bounds, mut engine) = render(&import);
    assert_eq!(spawned.textures.len(), 15);
    assert_eq!(spawned.materials.len(), 6);
    assert!(spawned.parents.len() >= 2 && spawned.parents.len() <= 6, "{} parents", spawned.parents.len());
    assert_eq!(spawned.nodes.iter().flatten().count(), 6);
    // Upright: the helmet is taller (Z) than it is deep.
    let ext = bounds.extent;
    assert!(ext.z > ext.x * 0.8, "Z-up after the axis conversion: {ext:?}");
    let path = test_support::save_test_output(&img, "gltf-flight-helmet");
    println!("wrote {}", path.display());
    assert!(covered(&img) > (W * H / 10) as usize, "the helmet covers the frame: {}", covered(&img));
    let stats = engine.stats().unwrap().unwrap();
    assert!(stats.textures_live >= 15 + 3, "{}", stats.textures_live);
}

#[test]
fn fox_glb_imports_its_skin_and_animations_and_runs() {
    let Some(path) = sample("Fox/Fox.glb") else { return };
    let import = gltf::import(&path).unwrap();
    assert_eq!(import.textures.len(), 1);
    assert!(import.materials[0].base_color_texture.is_some());
    assert!(import.skipped.is_empty(), "the skin and animations are imported: {:?}", import.skipped);
    assert_eq!((import.skins.len(), import.animations.len()), (1, 3));
    assert_eq!(import.skins[0].joints.len(), 24);
    let names: Vec<&str> = import.animations.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["Survey", "Walk", "Run"]);
    assert_eq!(import.nodes.len(), 26);
    // No normals in the file: flat ones, unwelded.
    let mesh = import.meshes[0].as_ref().unwrap();
    let lod = &mesh.mesh.render_data().lods()[0];
    assert_eq!(lod.vertices.len(), lod.indices.len());
    assert_eq!(mesh.influences.as_ref().map(Vec::len), Some(lod.vertices.len()), "one set of influences per vertex");
    let (img, spawned, _, mut engine) = render(&import);
    test_support::save_test_output(&img, "gltf-fox");
    assert_eq!(spawned.nodes.iter().flatten().count(), 26);
    assert_eq!(spawned.skeletal_meshes.len(), 1);
    assert!(covered(&img) > 100, "the fox is drawn: {}", covered(&img));
    // Running: frames 0.25 s apart differ; the bounds hold every skinned vertex.
    let fox = spawned.skeletal_meshes[0];
    engine.world.with_component_mut::<SkeletalMeshComponent, _>(fox, |c| c.play(2, true)).unwrap().unwrap();
    let mut frames = Vec::new();
    for _ in 0..3 {
        engine.tick(0.25, true).unwrap();
        engine.flush().unwrap();
        frames.push(engine.read_back().unwrap().expect("an image"));
        let c = engine.world.component::<SkeletalMeshComponent>(fox).unwrap();
        let bounds = c.local_bounds();
        let (m, inf) = (c.mesh(), &c.mesh().render_data().influences()[0]);
        for (v, i) in m.render_data().mesh().lods()[0].vertices.iter().zip(inf) {
            let skin = (0..4).fold(glam::Mat4::ZERO, |acc, k| acc + c.joint_matrices()[i.joints[k] as usize] * i.weights[k]);
            let p = skin.transform_point3(Vec3::from(v.position));
            assert!((p - bounds.origin).abs().cmple(bounds.extent + 1e-3).all(), "a skinned vertex {p} outside the bounds {bounds:?}");
        }
    }
    test_support::save_test_output(&frames[2], "gltf-fox-running");
    assert_ne!(frames[0].rgba8, frames[1].rgba8, "the fox moves");
    assert_ne!(frames[1].rgba8, frames[2].rgba8, "the fox moves");
    let stats = engine.stats().unwrap().unwrap();
    assert_eq!(stats.cached_commands_built, 0, "a new pose rebuilds no command");
    test_support::assert_clean(engine.render_thread());
}

#[test]
fn craft_speeder_imports_its_factor_materials_and_external_buffer() {
    let Some(path) = sample("craft_speederD/craft_speederD.gltf") else { return };
    let import = gltf::import(&path).unwrap();
    assert_eq!(import.materials.len(), 4);
    assert!(import.textures.is_empty());
    let mesh = import.meshes[0].as_ref().unwrap();
    assert_eq!(mesh.slot_materials.len(), 4, "one section per primitive");
    // It lists KHR_materials_unlit in extensionsUsed, but no material uses it.
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    assert!(import.materials.iter().all(|m| !m.unlit));
    let (img, spawned, _, _engine) = render(&import);
    assert_eq!(spawned.parents.len(), 1, "every material opaque, one-sided, no textures");
    assert!(covered(&img) > 100);
}

#[test]
fn alien_glb_imports_its_hierarchy_and_renders() {
    let Some(path) = sample("alien/alien.glb") else { return };
    let import = gltf::import(&path).unwrap();
    assert_eq!(import.materials.len(), 5);
    assert_eq!(import.nodes.len(), 8);
    assert_eq!(import.scenes[0].nodes, [7]);
    assert!(!import.nodes[7].children.is_empty());
    let sections: usize = import.meshes.iter().flatten().map(|m| m.slot_materials.len()).sum();
    assert_eq!(sections, 18);
    let (img, spawned, _, _engine) = render(&import);
    assert_eq!(spawned.nodes.iter().flatten().count(), 8);
    assert!(covered(&img) > 100);
}
