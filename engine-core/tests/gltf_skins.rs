//! glTF skins and animations with files made in code: a quad skinned to
//! two joints imports its influences, skin and clip, spawns a skeletal mesh
//! component that plays it; each bad file (a skin whose joints are not
//! nodes, a sampler whose input does not increase, output counts that do
//! not match, an accessor of the wrong type, joints without weights) is
//! its typed error naming the JSON path, with nothing added.

#![cfg(feature = "gltf")]

use engine_core::gltf::{self, GltfError};
use engine_core::*;
use glam::{Mat4, Vec3};
use serde_json::json;
use test_support::gltf_writer::*;

mod common;
use common::*;

/// A quad (nodes: 0 the mesh, 1 the root joint, 2 its child joint) whose
/// left vertices follow joint 1 and right ones joint 2; animation 0 moves
/// joint 2 up by 1 over 1 s (linear).
fn skinned_quad() -> GltfWriter {
    let mut w = GltfWriter::new();
    let p = w.positions(&QUAD);
    let n = w.floats(&[0.0, 0.0, 1.0].repeat(4), "VEC3");
    let i = w.indices(&[0, 1, 2, 2, 1, 3], UNSIGNED_SHORT);
    let joints = w.ints(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], UNSIGNED_BYTE, "VEC4", false);
    let weights = w.floats(&[1.0, 0.0, 0.0, 0.0].repeat(4), "VEC4");
    let attributes = json!({ "POSITION": p, "NORMAL": n, "JOINTS_0": joints, "WEIGHTS_0": weights });
    let m = w.push("meshes", json!({ "primitives": [{ "attributes": attributes, "indices": i }] }));
    let ibm =
        w.floats(&[Mat4::IDENTITY.to_cols_array(), Mat4::from_translation(Vec3::new(-1.0, 0.0, 0.0)).to_cols_array()].concat(), "MAT4");
    w.push("skins", json!({ "joints": [1, 2], "inverseBindMatrices": ibm }));
    w.push("nodes", json!({ "mesh": m, "skin": 0 }));
    w.push("nodes", json!({ "children": [2] }));
    w.push("nodes", json!({ "translation": [1.0, 0.0, 0.0] }));
    let times = w.floats(&[0.0, 1.0], "SCALAR");
    let values = w.floats(&[1.0, 0.0, 0.0, 1.0, 1.0, 0.0], "VEC3");
    w.push(
        "animations",
        json!({ "name": "lift", "samplers": [{ "input": times, "output": values, "interpolation": "LINEAR" }],
                "channels": [{ "sampler": 0, "target": { "node": 2, "path": "translation" } }] }),
    );
    w.push("scenes", json!({ "nodes": [0, 1] }));
    w.set("scene", json!(0));
    w
}

#[test]
fn a_skinned_quad_imports_its_skin_and_clip_and_spawns_a_playing_skeletal_mesh() {
    let import = import(&skinned_quad());
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    assert_eq!((import.skins.len(), import.animations.len()), (1, 1));
    assert_eq!(import.skins[0].joints, [1, 2]);
    let influences = import.meshes[0].as_ref().unwrap().influences.as_ref().unwrap();
    assert_eq!(influences.iter().map(|i| i.joints[0]).collect::<Vec<_>>(), [0, 1, 0, 1]);
    let mut world = world();
    let spawned = import.spawn(&mut world).unwrap();
    assert_eq!(spawned.skeletal_meshes.len(), 1);
    let fox = spawned.skeletal_meshes[0];
    world.with_component_mut::<SkeletalMeshComponent, _>(fox, |c| c.play(0, false)).unwrap().unwrap();
    // Half-way: joint 2 is lifted by 0.5 (linear), joint 1 unmoved; the
    // skinning matrices carry the bind pose to there.
    world.with_component_mut::<SkeletalMeshComponent, _>(fox, |c| c.advance(0.5)).unwrap();
    let c = world.component::<SkeletalMeshComponent>(fox).unwrap();
    let m = c.joint_matrices();
    assert!(m[0].abs_diff_eq(Mat4::IDENTITY, 1e-6), "{:?}", m[0]);
    assert!(m[1].abs_diff_eq(Mat4::from_translation(Vec3::new(0.0, 0.5, 0.0)), 1e-6), "{:?}", m[1]);
    world.send_all_end_of_frame_updates().unwrap();
    test_support::assert_clean(world.render_thread().unwrap());
}

#[test]
fn each_bad_skin_or_animation_is_its_typed_error_naming_the_path_and_nothing_is_added() {
    let mut world = world();
    let good = skinned_quad();
    let edit = |f: &dyn Fn(&mut GltfWriter)| {
        let mut w = good.clone();
        f(&mut w);
        gltf::import_slice(&w.to_gltf(), None)
    };
    // Joints that are not nodes.
    let e = edit(&|w| w.json["skins"][0]["joints"] = json!([1, 9])).unwrap_err();
    assert!(matches!(&e, GltfError::Invalid { .. } | GltfError::MalformedJson(_)), "{e}");
    assert!(e.to_string().contains("skins") || e.to_string().contains("joints"), "{e}");
    // A sampler whose input does not increase.
    let e = edit(&|w| {
        let t = w.floats(&[0.0, 0.0], "SCALAR");
        w.json["animations"][0]["samplers"][0]["input"] = json!(t);
    })
    .unwrap_err();
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path == "/animations/0/samplers/0"), "{e}");
    // Output counts that do not match (linear: one value per key).
    let e = edit(&|w| {
        let v = w.floats(&[1.0, 0.0, 0.0], "VEC3");
        w.json["animations"][0]["samplers"][0]["output"] = json!(v);
    })
    .unwrap_err();
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path == "/animations/0/samplers/0"), "{e}");
    // An accessor of the wrong type: a translation read from VEC2s.
    let e = edit(&|w| {
        let v = w.floats(&[1.0, 0.0, 1.0, 1.0], "VEC2");
        w.json["animations"][0]["samplers"][0]["output"] = json!(v);
    })
    .unwrap_err();
    assert!(matches!(&e, GltfError::Accessor { path, .. } if path == "/animations/0/samplers/0/output"), "{e}");
    // Joints without weights.
    let e = edit(&|w| {
        w.json["meshes"][0]["primitives"][0]["attributes"].as_object_mut().unwrap().remove("WEIGHTS_0");
    })
    .unwrap_err();
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path == "/meshes/0/primitives/0/attributes/WEIGHTS_0"), "{e}");
    // A non-invertible inverse bind matrix.
    let e = edit(&|w| {
        let ibm = w.floats(&[Mat4::IDENTITY.to_cols_array(), Mat4::ZERO.to_cols_array()].concat(), "MAT4");
        w.json["skins"][0]["inverseBindMatrices"] = json!(ibm);
    })
    .unwrap_err();
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path == "/skins/0/inverseBindMatrices"), "{e}");
    // A vertex naming a joint past the skin's: spawning refuses it, adding nothing.
    let mut bad = good.clone();
    let joints = bad.ints(&[0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], UNSIGNED_BYTE, "VEC4", false);
    bad.json["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"] = json!(joints);
    let import = gltf::import_slice(&bad.to_gltf(), None).unwrap();
    let before = world.num_actors();
    let e = import.spawn(&mut world).unwrap_err();
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path == "/meshes/0"), "{e}");
    assert_eq!(world.num_actors(), before, "nothing added");
    test_support::assert_clean(world.render_thread().unwrap());
}

/// Eight influences: `JOINTS_1`/`WEIGHTS_1` carry influences five to
/// eight (here half of each vertex's weight, on the other joint), and the
/// spawned mesh is skinned with all eight; a second set's joints without
/// its weights is an error naming `WEIGHTS_1`.
#[test]
fn a_second_set_of_joints_and_weights_gives_eight_influences() {
    let mut w = skinned_quad();
    let joints = w.ints(&[1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0], UNSIGNED_BYTE, "VEC4", false);
    let halves = w.floats(&[0.5, 0.0, 0.0, 0.0].repeat(4), "VEC4");
    let first_half = w.floats(&[0.5, 0.0, 0.0, 0.0].repeat(4), "VEC4");
    let attributes = &mut w.json["meshes"][0]["primitives"][0]["attributes"];
    attributes["WEIGHTS_0"] = json!(first_half);
    attributes["JOINTS_1"] = json!(joints);
    attributes["WEIGHTS_1"] = json!(halves);
    let import = import(&w);
    let influences = import.meshes[0].as_ref().unwrap().influences.as_ref().unwrap();
    assert_eq!(influences.iter().map(|i| (i.joints[0], i.joints[4])).collect::<Vec<_>>(), [(0, 1), (1, 0), (0, 1), (1, 0)]);
    assert!(influences.iter().all(|i| i.weights[0] == 0.5 && i.weights[4] == 0.5));
    let mut world = world();
    let spawned = import.spawn(&mut world).unwrap();
    let id = spawned.skeletal_meshes[0];
    let per_vertex = world.component::<SkeletalMeshComponent>(id).unwrap().mesh().render_data().influences_per_vertex();
    assert_eq!(per_vertex, 8);
    world.send_all_end_of_frame_updates().unwrap();
    test_support::assert_clean(world.render_thread().unwrap());

    w.json["meshes"][0]["primitives"][0]["attributes"].as_object_mut().unwrap().remove("WEIGHTS_1");
    let e = gltf::import_slice(&w.to_gltf(), None).unwrap_err();
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path == "/meshes/0/primitives/0/attributes/WEIGHTS_1"), "{e}");
}

/// A quad with one morph target lifting its right edge, default weight
/// 0.5, and an animation weighing it from 0 to 1 over a second.
fn morphed_quad() -> GltfWriter {
    let mut w = GltfWriter::new();
    let p = w.positions(&QUAD);
    let n = w.floats(&[0.0, 0.0, 1.0].repeat(4), "VEC3");
    let i = w.indices(&[0, 1, 2, 2, 1, 3], UNSIGNED_SHORT);
    let lift = w.floats(&[0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], "VEC3");
    let prim = json!({ "attributes": { "POSITION": p, "NORMAL": n }, "indices": i, "targets": [{ "POSITION": lift }] });
    let m = w.push("meshes", json!({ "primitives": [prim], "weights": [0.5] }));
    w.push("nodes", json!({ "mesh": m }));
    let times = w.floats(&[0.0, 1.0], "SCALAR");
    let values = w.floats(&[0.0, 1.0], "SCALAR");
    w.push(
        "animations",
        json!({ "name": "lift", "samplers": [{ "input": times, "output": values }],
                "channels": [{ "sampler": 0, "target": { "node": 0, "path": "weights" } }] }),
    );
    w.push("scenes", json!({ "nodes": [0] }));
    w.set("scene", json!(0));
    w
}

#[test]
fn a_morphed_quad_imports_its_target_and_weights_and_its_clip_weighs_it() {
    let import = import(&morphed_quad());
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    assert_eq!(import.morph_target_primitives, 1);
    let mesh = import.meshes[0].as_ref().unwrap();
    assert_eq!((mesh.morph_targets.len(), mesh.default_weights.as_slice()), (1, &[0.5][..]));
    assert_eq!(mesh.morph_targets[0].position_deltas.iter().filter(|d| d[2] == 1.0).count(), 2);
    let mut world = world();
    let spawned = import.spawn(&mut world).unwrap();
    assert_eq!(spawned.skeletal_meshes.len(), 1, "a morphed mesh is drawn as a skeletal mesh of one joint");
    let id = spawned.skeletal_meshes[0];
    let weights = |world: &World| world.component::<SkeletalMeshComponent>(id).unwrap().morph_weights().to_vec();
    assert_eq!(weights(&world), [0.5], "the mesh's default weight");
    world.with_component_mut::<SkeletalMeshComponent, _>(id, |c| c.set_morph_weights(&[0.25])).unwrap().unwrap();
    assert_eq!(weights(&world), [0.25]);
    let e = world.with_component_mut::<SkeletalMeshComponent, _>(id, |c| c.set_morph_weights(&[0.1, 0.2])).unwrap();
    assert!(matches!(e, Err(EngineError::InvalidMesh(_))), "{e:?}");
    assert_eq!(weights(&world), [0.25], "a refused set changes nothing");
    // The clip weighs the target: linear, 0.75 at three quarters.
    world.with_component_mut::<SkeletalMeshComponent, _>(id, |c| c.play(0, false)).unwrap().unwrap();
    world.with_component_mut::<SkeletalMeshComponent, _>(id, |c| c.advance(0.75)).unwrap();
    assert!((weights(&world)[0] - 0.75).abs() < 1e-6, "{:?}", weights(&world));
    // Its bounds hold the lifted edge.
    let bounds = world.component::<SkeletalMeshComponent>(id).unwrap().local_bounds();
    assert!(bounds.origin.z + bounds.extent.z >= 0.75 - 1e-4, "{bounds:?}");
    world.send_all_end_of_frame_updates().unwrap();
    test_support::assert_clean(world.render_thread().unwrap());
}
