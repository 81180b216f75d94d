//! glTF files that are bad or hostile, made in code: each bad file is its
//! typed error naming its JSON path with the World unchanged, mutated files
//! never panic, edited imports are refused at spawn, URIs read only regular
//! files inside the model's folder, and limits are charged before what they
//! bound is built or decoded (issue 40). The bomb files' memory and the
//! linear hierarchy checks are in `gltf_limits.rs`.

#![cfg(feature = "gltf")]

use engine_core::gltf::{self, GltfError, GltfImport, GltfLimits, ImportProgress};
use engine_core::*;
use serde_json::json;
use test_support::gltf_writer::*;

mod common;
use common::*;

#[test]
fn each_bad_file_is_its_typed_error_naming_the_path_and_the_world_is_unchanged() {
    let mut world = world();
    let before = counts(&mut world);
    let good = quad_file();
    let edit = |f: &dyn Fn(&mut GltfWriter)| {
        let mut w = good.clone();
        f(&mut w);
        w.to_gltf()
    };

    let e = import_err(b"{ \"asset\": { \"version\": \"2.0\" }, ");
    assert!(matches!(e, GltfError::MalformedJson(_)), "{e}");
    let glb = good.to_glb();
    let e = import_err(&glb[..glb.len() - 10]);
    assert!(matches!(e, GltfError::MalformedGlb(_)), "truncated .glb: {e}");
    // A header whose declared length is shorter than the header itself
    // (found by the gltf_import fuzz target: the gltf crate's unchecked
    // subtraction panicked in debug builds).
    for length in [0u32, 11] {
        let mut short = glb.clone();
        short[8..12].copy_from_slice(&length.to_le_bytes());
        let e = import_err(&short);
        assert!(matches!(&e, GltfError::MalformedGlb(m) if m.contains("12-byte header")), "declared length {length}: {e}");
    }
    let e = import_err(&edit(&|w| w.json["accessors"][0]["count"] = json!(400)));
    assert!(matches!(&e, GltfError::Accessor { path, .. } if path == "/meshes/0/primitives/0/attributes/POSITION"), "{e}");
    let e = import_err(&edit(&|w| w.json["accessors"][1]["byteOffset"] = json!(40)));
    assert!(matches!(&e, GltfError::Accessor { path, .. } if path == "/meshes/0/primitives/0/attributes/NORMAL"), "{e}");
    let e = import_err(&edit(&|w| {
        let i = w.indices(&[0, 1, 9], UNSIGNED_SHORT);
        w.json["meshes"][0]["primitives"][0]["indices"] = json!(i);
    }));
    assert!(
        matches!(&e, GltfError::IndexOutOfRange { path, index: 9, vertex_count: 4 } if path == "/meshes/0/primitives/0/indices"),
        "{e}"
    );
    let e = import_err(&edit(&|w| {
        let i = w.indices(&[0, 1, 2, 3], UNSIGNED_SHORT);
        w.json["meshes"][0]["primitives"][0]["indices"] = json!(i);
    }));
    assert!(matches!(&e, GltfError::IndexCount { path, count: 4 } if path == "/meshes/0/primitives/0/indices"), "{e}");
    let e = import_err(&edit(&|w| {
        let p = w.positions(&[[0.0; 3], [f32::NAN, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0; 3]]);
        w.json["accessors"][p]["min"] = json!([0.0, 0.0, 0.0]);
        w.json["accessors"][p]["max"] = json!([1.0, 1.0, 1.0]);
        w.json["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(p);
    }));
    assert!(matches!(&e, GltfError::NonFinitePosition { path, vertex: 1 } if path == "/meshes/0/primitives/0/attributes/POSITION"), "{e}");
    let e = import_err(&edit(&|w| w.json["nodes"][0]["mesh"] = json!(7)));
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path == "/nodes/0/mesh"), "{e}");
    let e = import_err(&edit(&|w| w.set("extensionsRequired", json!(["KHR_texture_transform", "KHR_draco_mesh_compression"]))));
    assert!(
        matches!(&e, GltfError::UnsupportedExtension { path, extension } if path == "/extensionsRequired/1" && extension == "KHR_draco_mesh_compression"),
        "{e}"
    );
    // A buffer shorter than its byteLength, and a .glb whose buffer has no BIN chunk.
    let mut short = good.clone();
    short.bin.truncate(8);
    let mut j: serde_json::Value = serde_json::from_slice(&short.to_gltf()).unwrap();
    j["buffers"][0]["byteLength"] = json!(good.bin.len());
    let e = import_err(&serde_json::to_vec(&j).unwrap());
    assert!(matches!(&e, GltfError::Buffer { path, .. } if path == "/buffers/0"), "{e}");
    let mut no_bin = good.to_glb();
    let json_len = u32::from_le_bytes(no_bin[12..16].try_into().unwrap()) as usize;
    no_bin.truncate(20 + json_len);
    let total = no_bin.len() as u32;
    no_bin[8..12].copy_from_slice(&total.to_le_bytes());
    let e = import_err(&no_bin);
    assert!(matches!(&e, GltfError::Buffer { path, .. } if path == "/buffers/0"), "{e}");
    // Missing and undecodable images.
    let with_image = |image: serde_json::Value| {
        let mut w = material_file();
        w.json["images"][1] = image;
        w.to_gltf()
    };
    let dir = test_support::test_output_dir().join("gltf-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let e = gltf::import_slice(&with_image(json!({ "uri": "absent.png" })), Some(&dir)).unwrap_err();
    assert!(matches!(&e, GltfError::Io { path, .. } if path == "/images/1"), "{e}");
    // (An image that does not decode is skipped, not an error: see
    // an_image_that_does_not_decode_is_skipped_and_its_slots_use_their_factors.)
    let e = import_err(&with_image(json!({ "uri": "data:image/png;base64,@@@" })));
    assert!(matches!(&e, GltfError::MissingImage { path, .. } if path == "/images/1"), "{e}");
    // Limits.
    let limited = |limits: GltfLimits, bytes: &[u8]| gltf::import_slice_with(bytes, None, &limits, &ImportProgress::default()).unwrap_err();
    let e = limited(GltfLimits { max_vertices: 3, ..Default::default() }, &good.to_gltf());
    assert!(
        matches!(&e, GltfError::LimitExceeded { path, what: "vertices", .. } if path == "/meshes/0/primitives/0/attributes/POSITION"),
        "{e}"
    );
    let e = limited(GltfLimits { max_texture_dimension: 1, ..Default::default() }, &material_file().to_gltf());
    assert!(
        matches!(&e, GltfError::LimitExceeded { path, what: "texture dimension", value: 2, .. } if path.starts_with("/images/")),
        "{e}"
    );
    let e = limited(GltfLimits { max_file_bytes: 100, ..Default::default() }, &good.to_gltf());
    assert!(matches!(&e, GltfError::LimitExceeded { what: "file bytes", .. }), "{e}");
    let e = limited(GltfLimits { max_indices: 5, ..Default::default() }, &good.to_gltf());
    assert!(matches!(&e, GltfError::LimitExceeded { .. }), "{e}");
    // Errors name the path in their message too.
    assert!(GltfError::IndexCount { path: "/meshes/3/primitives/0/indices".into(), count: 4 }
        .to_string()
        .starts_with("/meshes/3/primitives/0/indices: "));

    // Spawn-time refusals add nothing: an unknown scene, and a hierarchy
    // whose world transform overflows (checked before anything is created).
    let import = gltf::import_slice(&material_file().to_gltf(), None).unwrap();
    assert!(matches!(import.spawn_scene(&mut world, Some(5)), Err(GltfError::UnknownScene(5))));
    let huge = edit(&|w| {
        // Each node's own transform is usable (scale 1e12: determinant
        // 1e36); their product's determinant overflows.
        w.json["nodes"][0]["scale"] = json!([1e12, 1e12, 1e12]);
        w.push("nodes", json!({ "scale": [1e12, 1e12, 1e12], "children": [0] }));
        w.json["scenes"][0]["nodes"] = json!([1]);
    });
    let import = gltf::import_slice(&huge, None).unwrap();
    let e = import.spawn(&mut world).unwrap_err();
    assert!(matches!(&e, GltfError::Spawn { path, .. } if path.starts_with("/nodes/")), "{e}");
    assert_eq!(counts(&mut world), before, "nothing was added to the World or the render thread");
    let mut no_render = World::new(None);
    assert!(matches!(import.spawn(&mut no_render), Err(GltfError::NoRenderThread)));
    assert_eq!(no_render.num_actors(), 0);
    test_support::assert_clean(world.render_thread().unwrap());
}

#[test]
fn mutated_files_are_errors_or_imports_never_panics() {
    // A CI-sized stand-in for the fuzz target: random byte edits of a
    // .gltf and a .glb carrying every feature above.
    let mut rng = test_support::Rng::new(std::env::var("GLTF_MUTATION_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(17));
    let files = [material_file().to_gltf(), material_file().to_glb(), quad_file().to_glb()];
    let cases = test_support::property_cases(300) as usize;
    let mut imported = 0;
    for case in 0..cases {
        let mut bytes = files[case % files.len()].clone();
        for _ in 0..1 + rng.below(2) {
            let at = rng.below(bytes.len());
            match rng.below(10) {
                0 => bytes.truncate(at.max(1)),
                1..=4 => bytes[at] = rng.next_u32() as u8,
                _ => bytes[at] ^= 1 << rng.below(8),
            }
        }
        let result = std::panic::catch_unwind(|| gltf::import_slice(&bytes, None).map(|i| i.triangle_count()));
        match result {
            Ok(Ok(_)) => imported += 1,
            Ok(Err(_)) => {}
            Err(_) => panic!("case {case} panicked"),
        }
    }
    // The edits reach past the parser: some files still import (edits in
    // data, names, padding), so the mesh and image code is exercised too.
    println!("{imported} of {cases} mutated files imported");
    assert!(imported > cases / 20, "{imported} of {cases}");
}

#[test]
fn a_position_accessor_index_out_of_bounds_is_an_error_not_a_panic() {
    // gltf-json's own validation indexes it unchecked (found by the mutation test).
    let mut w = quad_file();
    w.json["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(99);
    let e = import_err(&w.to_gltf());
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path == "/meshes/0/primitives/0/attributes/POSITION"), "{e}");
}

#[test]
fn an_import_whose_indices_were_edited_is_invalid_at_spawn_not_a_panic() {
    let mut w = material_file();
    w.push("nodes", json!({ "children": [0] }));
    w.json["scenes"][0]["nodes"] = json!([1]);
    let good = import(&w);
    good.check_indices().unwrap();
    type Edit = fn(&mut GltfImport);
    let edits: [(&str, Edit); 9] = [
        ("/nodes/1/children/0", |i| i.nodes[1].children[0] = 99),
        ("/nodes/0/mesh", |i| i.nodes[0].mesh = Some(50)),
        ("/scenes/0/nodes/0", |i| i.scenes[0].nodes[0] = 77),
        ("/scene", |i| i.default_scene = Some(4)),
        ("/nodes/0 (parent)", |i| i.nodes[0].parent = Some(1000)),
        ("/meshes/0 (material slot 0)", |i| i.meshes[0].as_mut().unwrap().slot_materials[0] = Some(12)),
        ("/materials/0 (texture)", |i| i.materials[0].base_color_texture.as_mut().unwrap().texture = 9),
        // Node 1 made a child of node 0, whose parent it is: a cycle.
        ("/nodes/0", |i| {
            i.nodes[0].children.push(1);
            i.nodes[1].parent = Some(0);
        }),
        // More material slots than a component takes: refused before the
        // textures and materials are created (issue 40: `World::set_material`
        // refused the slot only after them).
        ("/meshes/0", |i| i.meshes[0].as_mut().unwrap().slot_materials = vec![None; MAX_MATERIAL_SLOT + 2]),
    ];
    let mut world = world();
    for (path, edit) in edits {
        let mut bad = good.clone();
        edit(&mut bad);
        let before = counts(&mut world);
        match bad.spawn(&mut world) {
            Err(GltfError::Invalid { path: p, .. }) => assert_eq!(p, path),
            other => panic!("{path}: {other:?}"),
        }
        assert_eq!((world.num_actors(), world.num_components()), (0, 0), "{path}: nothing spawned");
        assert_eq!(counts(&mut world), before, "{path}: no texture or material created");
    }
    good.spawn(&mut world).unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    test_support::assert_clean(world.render_thread().unwrap());
}

#[test]
fn uris_read_only_regular_files_inside_the_models_folder_unless_allowed() {
    // Issue 40's probe: `/dev/zero` as a buffer URI was read without end
    // (2 GiB in seconds), and any path was joined onto the model's folder.
    let w = material_file();
    let root = test_support::test_output_dir().join("gltf-containment");
    let dir = root.join("model");
    std::fs::create_dir_all(&dir).unwrap();
    let (gltf_json, bin) = w.to_gltf_external("data.bin");
    std::fs::write(root.join("data.bin"), &bin).unwrap();
    let with_uri = |uri: &str| {
        let mut doc: serde_json::Value = serde_json::from_slice(&gltf_json).unwrap();
        doc["buffers"][0]["uri"] = json!(uri);
        let path = dir.join("scene.gltf");
        std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        path
    };
    let allowed = GltfLimits { allow_files_outside_model_folder: true, ..GltfLimits::default() };
    let import = |path: &std::path::Path, limits: &GltfLimits| gltf::import_with(path, limits, &ImportProgress::default());
    // Outside the folder: refused by default, read when allowed.
    let up = with_uri("../data.bin");
    assert!(matches!(import(&up, &GltfLimits::default()), Err(GltfError::Io { ref path, .. }) if path == "/buffers/0"));
    assert!(import(&up, &allowed).is_ok());
    // A device is never read, allowed or not (and never blocks).
    if std::path::Path::new("/dev/zero").exists() {
        let zero = with_uri("/dev/zero");
        for limits in [GltfLimits::default(), allowed] {
            let e = import(&zero, &limits);
            assert!(matches!(e, Err(GltfError::Io { ref path, .. }) if path == "/buffers/0"), "{e:?}");
        }
    }
    // Inside the folder it imports as before.
    std::fs::write(dir.join("data.bin"), &bin).unwrap();
    assert!(import(&with_uri("data.bin"), &GltfLimits::default()).is_ok());
}

#[test]
fn decoded_texture_bytes_are_limited_before_anything_decodes() {
    // Two 2x2 images, each decoded once (16 bytes of RGBA8): 32 bytes.
    let file = material_file().to_gltf();
    let with = |max: u64| {
        let progress = ImportProgress::default();
        let limits = GltfLimits { max_decoded_texture_bytes: max, ..GltfLimits::default() };
        (gltf::import_slice_with(&file, None, &limits, &progress), progress.images_decoded.load(std::sync::atomic::Ordering::Relaxed))
    };
    assert!(matches!(with(32), (Ok(_), 2)));
    let (e, decoded) = with(31);
    assert!(
        matches!(&e, Err(GltfError::LimitExceeded { path, what: "decoded texture bytes", value: 32, limit: 31 }) if path == "/images/1"),
        "{e:?}"
    );
    assert_eq!(decoded, 0, "nothing decoded");
}

#[test]
fn expansions_are_charged_before_they_are_built() {
    // Issue 40: strips, fans, flat normals and generated tangents were
    // charged against the limits after they were built. A quad as a strip
    // of 4 indices is 6 list indices; without normals 6 vertices (flat);
    // with a normal map and no tangents 6 corners before they weld.
    let strip = |w: &mut GltfWriter| {
        let i = w.indices(&[0, 1, 2, 3], UNSIGNED_SHORT);
        w.json["meshes"][0]["primitives"][0]["indices"] = json!(i);
        w.json["meshes"][0]["primitives"][0]["mode"] = json!(5);
    };
    let no_normals = |w: &mut GltfWriter| {
        w.json["meshes"][0]["primitives"][0]["attributes"].as_object_mut().unwrap().remove("NORMAL");
    };
    let normal_map = |w: &mut GltfWriter| {
        let img = w.image_png(1, 1, &[128, 128, 255, 255]);
        let t = w.texture(img, json!({}));
        w.push("materials", json!({ "normalTexture": { "index": t } }));
        w.json["meshes"][0]["primitives"][0]["material"] = json!(0);
    };
    type Edit = fn(&mut GltfWriter);
    let cases: [(Edit, GltfLimits, &str, &str); 3] = [
        (strip, GltfLimits { max_indices: 5, ..Default::default() }, "indices", "/meshes/0/primitives/0/indices"),
        (no_normals, GltfLimits { max_vertices: 5, ..Default::default() }, "vertices", "/meshes/0/primitives/0/attributes/POSITION"),
        (normal_map, GltfLimits { max_vertices: 5, ..Default::default() }, "vertices", "/meshes/0/primitives/0/attributes/POSITION"),
    ];
    for (edit, limits, what, at) in cases {
        let mut w = quad_file();
        edit(&mut w);
        let bytes = w.to_gltf();
        let progress = ImportProgress::default();
        let e = gltf::import_slice_with(&bytes, None, &limits, &progress).unwrap_err();
        assert!(matches!(&e, GltfError::LimitExceeded { path, what: w, value: 6, .. } if path == at && w == &what), "{e}");
        assert_eq!(progress.meshes_built.load(std::sync::atomic::Ordering::Relaxed), 0, "{what}: refused before any mesh was built");
        // One more of the limit and it imports.
        let limits = GltfLimits { max_indices: limits.max_indices.max(6), max_vertices: limits.max_vertices.max(6), ..limits };
        gltf::import_slice_with(&bytes, None, &limits, &ImportProgress::default()).unwrap();
    }
}
