//! The CI-sized fuzz run: every fuzz target body over its checked-in seed
//! corpus (`corpus/<target>/`) and a few thousand deterministic mutations
//! of it, on stable, in the normal test suite (`cargo xtask test`).
//!
//! Why here as well as in `cargo xtask fuzz`: a coverage-guided run needs
//! nightly and minutes; this needs neither, so every test run replays what
//! past fuzzing found (a crash input is added to the corpus once fixed)
//! and shakes the seeds a little around it. Mutations come from a fixed
//! seed, so a failure here fails the same way on every machine; the input
//! that failed is written to `$CARGO_TARGET_TMPDIR/fuzz-ci/` to be added to
//! the corpus after the fix.
//!
//! The procmesh seeds are binary call sequences in the format decoded by
//! `proxima_fuzzing::Bytes` (a quad created, updated, hidden, given a
//! material and cleared; two sections with sRGB and linear colors; convex
//! collision with async cooking; NaN, out-of-range and overflowing input).
//! The particle seeds are copies of the samples' real assets and the
//! particles crate's fountain (for cargo-fuzz), small valid and broken
//! files, and, here, those real assets read from where they live now.
//! The glTF seeds are small files made here with test-support's glTF writer
//! ([`gltf_seeds`]; `gltf_corpus_is_what_the_writer_makes` keeps the
//! checked-in bytes equal to them): a textured `.glb`, a `.gltf` with every
//! material texture and a generated-tangent normal map, strips, fans and a
//! hierarchy with a camera and lights, quantized attributes with a sparse
//! accessor, and three broken files (one a `.glb` whose header declares
//! less than the header, which the first long cargo-fuzz run found).

use serde_json::json;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use test_support::gltf_writer::*;
use test_support::Rng;

/// Mutations per target: a few thousand, a few seconds each in a debug build.
const MUTATIONS: usize = 3000;

/// Tokens worth splicing into text inputs (JSON structure and the numbers
/// that break validation).
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"null",
    b"-1",
    b"0",
    b"1e999",
    b"-1e999",
    b"4294967296",
    b"NaN",
    b"\"emitters\"",
    b"\"modules\"",
    b"1.5",
    b"\"bufferView\"",
    b"\"indices\"",
    b"\"mode\"",
    b"65536",
];

/// One to four random edits of `input`: bit flips, byte sets, truncation,
/// insertion of random bytes or a token, a duplicated or deleted run, or a
/// splice with `other`.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(8) {
            0 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] = rng.next_u64() as u8;
            }
            2 => out.truncate(at),
            3 => {
                let bytes: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next_u64() as u8).collect();
                out.splice(at..at, bytes);
            }
            4 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                out.splice(at..at, token.iter().copied());
            }
            5 if at < out.len() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                let run = out[at..end].to_vec();
                out.splice(at..at, run);
            }
            6 if at < out.len() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                out.drain(at..end);
            }
            _ => {
                let from = rng.below(other.len() + 1);
                out.truncate(at);
                out.extend_from_slice(&other[from..]);
            }
        }
    }
    out
}

/// Every file in `dir`, sorted by path.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let data = std::fs::read(&p).unwrap();
            (p, data)
        })
        .collect();
    files.sort();
    files
}

/// The checked-in seeds of `target`; for the particle assets also the
/// samples' and the particles crate's assets as they are now (the corpus
/// holds copies for cargo-fuzz, which may fall behind).
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds = files(&root.join("corpus").join(target));
    assert!(seeds.len() >= 3, "the {target} corpus needs a few seeds, found {}", seeds.len());
    if target == "particle_asset" {
        for dir in ["../samples/assets/particles", "../particles/assets"] {
            seeds.extend(files(&root.join(dir)));
        }
    }
    seeds
}

/// Runs `body` on `input`; on a panic, saves the input and fails naming it.
fn run_one(target: &str, body: fn(&[u8]), what: &str, input: &[u8]) {
    if catch_unwind(AssertUnwindSafe(|| body(input))).is_err() {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-ci").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("crash-{}", what.replace(['/', ' '], "_")));
        std::fs::write(&path, input).unwrap();
        panic!("{target}: {what} panicked (input saved to {}; fix, then add it to fuzzing/corpus/{target}/)", path.display());
    }
}

/// Every seed, then `MUTATIONS` mutants of seeds chosen at random.
fn run_target(target: &str, body: fn(&[u8])) {
    let seeds = corpus(target);
    for (path, data) in &seeds {
        run_one(target, body, &format!("seed {}", path.file_name().unwrap().to_string_lossy()), data);
    }
    let mut rng = Rng::new(0x5e_ed0f_f022);
    for n in 0..MUTATIONS {
        let (path, seed) = &seeds[rng.below(seeds.len())];
        let other = &seeds[rng.below(seeds.len())].1;
        let input = mutate(&mut rng, seed, other);
        run_one(target, body, &format!("mutation {n} of {}", path.file_name().unwrap().to_string_lossy()), &input);
    }
}

fn body(name: &str) -> fn(&[u8]) {
    proxima_fuzzing::TARGETS.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("no target {name}")).1
}

#[test]
fn procmesh_section_corpus_and_mutations() {
    run_target("procmesh_section", body("procmesh_section"));
}

#[test]
fn gltf_import_corpus_and_mutations() {
    run_target("gltf_import", body("gltf_import"));
}

#[test]
fn particle_asset_corpus_and_mutations() {
    run_target("particle_asset", body("particle_asset"));
}

/// The checked-in particle corpus holds assets that load and files that
/// do not (so mutations start from both sides of validation).
#[test]
fn particle_corpus_covers_valid_and_invalid_files() {
    let seeds = files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/particle_asset"));
    let loads = |data: &[u8]| std::str::from_utf8(data).ok().is_some_and(|t| particles::ParticleSystem::from_json_str(t).is_ok());
    assert!(seeds.iter().filter(|(_, d)| loads(d)).count() >= 3);
    assert!(seeds.iter().filter(|(_, d)| !loads(d)).count() >= 3);
}

/// The mutator is the CI run's only source of variety: it must change
/// inputs, and the same way every time.
#[test]
fn mutations_vary_and_repeat() {
    let seed = b"{\"emitters\": []}";
    let run = || {
        let mut rng = Rng::new(1);
        (0..64).map(|_| mutate(&mut rng, seed, b"other")).collect::<Vec<_>>()
    };
    let a = run();
    assert_eq!(a, run());
    assert!(a.iter().filter(|m| m.as_slice() != seed).count() > 48);
}

/// A 2x2 RGBA image, tinted `k`.
fn tiny_png(w: &mut GltfWriter, k: u8) -> usize {
    w.image_png(2, 2, &[k, 0, 0, 255, 0, k, 0, 255, 0, 0, k, 255, k, k, k, 128])
}

/// A quad with normals and UVs and a material with a base colour texture.
fn textured_quad() -> GltfWriter {
    let mut w = GltfWriter::new();
    let p = w.positions(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]);
    let n = w.floats(&[0.0, 0.0, 1.0].repeat(4), "VEC3");
    let uv = w.floats(&[0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0], "VEC2");
    let i = w.indices(&[0, 1, 2, 2, 1, 3], UNSIGNED_SHORT);
    let img = tiny_png(&mut w, 200);
    let t = w.texture(img, json!({ "magFilter": 9729, "minFilter": 9987, "wrapS": 33648, "wrapT": 33071 }));
    w.push(
        "materials",
        json!({ "name": "tex", "pbrMetallicRoughness": { "baseColorTexture": { "index": t }, "baseColorFactor": [1.0, 0.5, 0.5, 1.0] } }),
    );
    let m = w.push("meshes", json!({ "name": "quad", "primitives": [{ "attributes": { "POSITION": p, "NORMAL": n, "TEXCOORD_0": uv }, "indices": i, "material": 0 }] }));
    let node = w.push("nodes", json!({ "name": "quad", "mesh": m, "translation": [1.0, 2.0, 3.0], "rotation": [0.0, 0.0, 0.38268343, 0.9238795], "scale": [2.0, 2.0, 2.0] }));
    w.push("scenes", json!({ "name": "main", "nodes": [node] }));
    w.set("scene", json!(0));
    w
}

/// Every material texture slot (normal map without tangents: MikkTSpace),
/// `KHR_texture_transform`, emissive strength, MASK, double-sided, u8
/// indices, vertex colours, two UV sets.
fn full_material() -> GltfWriter {
    let mut w = GltfWriter::new();
    let p = w.positions(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.5]]);
    let uv0 = w.floats(&[0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0], "VEC2");
    let uv1 = w.ints(&[0, 255, 255, 255, 0, 0, 255, 0], UNSIGNED_BYTE, "VEC2", true);
    let c = w.ints(&[255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255], UNSIGNED_BYTE, "VEC4", true);
    let i = w.indices(&[0, 1, 2, 2, 1, 3], UNSIGNED_BYTE);
    let tex: Vec<usize> = (0..3)
        .map(|k| {
            let img = tiny_png(&mut w, 60 * k as u8 + 20);
            w.texture(img, json!({ "wrapS": 10497, "wrapT": 10497 }))
        })
        .collect();
    w.push(
        "materials",
        json!({
            "name": "full",
            "pbrMetallicRoughness": {
                "baseColorTexture": { "index": tex[0], "extensions": { "KHR_texture_transform": { "offset": [0.5, 0.0], "scale": [2.0, 2.0], "rotation": 0.5 } } },
                "metallicRoughnessTexture": { "index": tex[1], "texCoord": 1 },
                "metallicFactor": 0.3, "roughnessFactor": 0.7
            },
            "normalTexture": { "index": tex[2], "scale": 0.5 },
            "occlusionTexture": { "index": tex[1], "strength": 0.8, "texCoord": 1 },
            "emissiveTexture": { "index": tex[0] },
            "emissiveFactor": [1.0, 0.5, 0.0],
            "extensions": { "KHR_materials_emissive_strength": { "emissiveStrength": 4.0 } },
            "alphaMode": "MASK", "alphaCutoff": 0.25, "doubleSided": true
        }),
    );
    w.set("extensionsUsed", json!(["KHR_texture_transform", "KHR_materials_emissive_strength"]));
    let m = w.push("meshes", json!({ "primitives": [{ "attributes": { "POSITION": p, "TEXCOORD_0": uv0, "TEXCOORD_1": uv1, "COLOR_0": c }, "indices": i, "material": 0 }] }));
    let node = w.push("nodes", json!({ "mesh": m }));
    w.push("scenes", json!({ "nodes": [node] }));
    w
}

/// A strip and a fan (non-indexed and indexed), a points primitive to
/// skip, a rotated and scaled parent with a matrix child, a camera and
/// directional, point and spot lights.
fn strips_fans_hierarchy() -> GltfWriter {
    let mut w = GltfWriter::new();
    let p = w.positions(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 2.0, 0.0]]);
    let i = w.indices(&[0, 1, 2, 3, 4], UNSIGNED_INT);
    let m = w.push(
        "meshes",
        json!({ "primitives": [
            { "attributes": { "POSITION": p }, "mode": 5 },
            { "attributes": { "POSITION": p }, "indices": i, "mode": 6 },
            { "attributes": { "POSITION": p }, "mode": 0 },
        ] }),
    );
    w.push("cameras", json!({ "type": "perspective", "perspective": { "yfov": 0.8, "znear": 0.1, "zfar": 100.0, "aspectRatio": 1.5 } }));
    w.set("extensionsUsed", json!(["KHR_lights_punctual"]));
    w.set(
        "extensions",
        json!({ "KHR_lights_punctual": { "lights": [
            { "type": "directional", "color": [1.0, 0.9, 0.8], "intensity": 3.0 },
            { "type": "point", "intensity": 20.0, "range": 5.0 },
            { "type": "spot", "spot": { "innerConeAngle": 0.1, "outerConeAngle": 0.5 } },
        ] } }),
    );
    let child = w.push(
        "nodes",
        json!({ "name": "child", "mesh": m, "matrix": [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0] }),
    );
    let cam = w.push("nodes", json!({ "name": "camera", "camera": 0, "translation": [0.0, 0.0, 5.0] }));
    let sun = w.push("nodes", json!({ "extensions": { "KHR_lights_punctual": { "light": 0 } } }));
    let lamp = w.push("nodes", json!({ "extensions": { "KHR_lights_punctual": { "light": 1 } }, "translation": [0.0, 3.0, 0.0] }));
    let spot = w.push("nodes", json!({ "extensions": { "KHR_lights_punctual": { "light": 2 } } }));
    let parent = w.push(
        "nodes",
        json!({ "name": "parent", "children": [child, cam], "rotation": [0.0, 0.70710677, 0.0, 0.70710677], "scale": [2.0, 1.0, 1.0] }),
    );
    w.push("scenes", json!({ "nodes": [parent, sun, lamp, spot] }));
    w
}

/// `KHR_mesh_quantization`: normalized i16 positions, i8 normals, u16 UVs,
/// and a sparse accessor moving one vertex.
fn quantized() -> GltfWriter {
    let mut w = GltfWriter::new();
    let p = w.ints(&[0, 0, 0, 32767, 0, 0, 0, 32767, 0, 32767, 32767, 0], SHORT, "VEC3", true);
    w.json["accessors"][p]["min"] = json!([0.0, 0.0, 0.0]);
    w.json["accessors"][p]["max"] = json!([1.0, 1.0, 0.0]);
    let n = w.ints(&[0, 0, 127, 0, 0, 127, 0, 0, 127, 0, 0, 127], BYTE, "VEC3", true);
    let uv = w.ints(&[0, 65535, 65535, 65535, 0, 0, 65535, 0], UNSIGNED_SHORT, "VEC2", true);
    let i = w.indices(&[0, 1, 2, 2, 1, 3], UNSIGNED_SHORT);
    let sparse_i = w.view(&[3u8, 0, 0, 0], None);
    let sparse_v = w.view(&[0u8, 64, 0, 64, 0, 0, 0, 0], None);
    w.json["accessors"][p]["sparse"] =
        json!({ "count": 1, "indices": { "bufferView": sparse_i, "componentType": UNSIGNED_SHORT }, "values": { "bufferView": sparse_v } });
    w.set("extensionsUsed", json!(["KHR_mesh_quantization"]));
    w.set("extensionsRequired", json!(["KHR_mesh_quantization"]));
    let m = w.push("meshes", json!({ "primitives": [{ "attributes": { "POSITION": p, "NORMAL": n, "TEXCOORD_0": uv }, "indices": i }] }));
    let node = w.push("nodes", json!({ "mesh": m }));
    w.push("scenes", json!({ "nodes": [node] }));
    w
}

/// The glTF seed corpus: file name and bytes.
fn gltf_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let mut out_of_range = textured_quad();
    let bad = out_of_range.indices(&[0, 1, 9], UNSIGNED_SHORT);
    out_of_range.json["meshes"][0]["primitives"][0]["indices"] = json!(bad);
    let glb = textured_quad().to_glb();
    // The header declares a length shorter than the header (what the first
    // long cargo-fuzz run found: the gltf crate subtracted it unchecked).
    let mut short_header = glb.clone();
    short_header[8..12].copy_from_slice(&0u32.to_le_bytes());
    vec![
        ("textured_quad.glb", glb.clone()),
        ("full_material.gltf", full_material().to_gltf()),
        ("strips_fans_hierarchy.gltf", strips_fans_hierarchy().to_gltf()),
        ("quantized.glb", quantized().to_glb()),
        ("index_out_of_range.gltf", out_of_range.to_gltf()),
        ("truncated.glb", glb[..glb.len() - 40].to_vec()),
        ("header_length_below_header.glb", short_header),
    ]
}

/// The checked-in glTF seeds are exactly what [`gltf_seeds`] makes (the
/// project made every byte); with `PROXIMA_WRITE_GLTF_CORPUS=1` this writes
/// them instead.
#[test]
fn gltf_corpus_is_what_the_writer_makes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/gltf_import");
    let write = std::env::var("PROXIMA_WRITE_GLTF_CORPUS").as_deref() == Ok("1");
    for (name, bytes) in gltf_seeds() {
        let path = dir.join(name);
        if write {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        } else {
            let on_disk =
                std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (PROXIMA_WRITE_GLTF_CORPUS=1 writes the seeds)", path.display()));
            assert!(
                on_disk == bytes,
                "{} differs from what the writer makes (PROXIMA_WRITE_GLTF_CORPUS=1 rewrites the seeds)",
                path.display()
            );
        }
    }
}

/// The valid glTF seeds import and the broken ones fail (so mutations start
/// from both sides), and the valid ones reach what they were made for.
#[test]
fn gltf_seeds_import_or_fail_as_made() {
    use engine_core::gltf::{import_slice, GltfError};
    for (name, bytes) in gltf_seeds() {
        let result = import_slice(&bytes, None);
        match name {
            "index_out_of_range.gltf" => assert!(matches!(result, Err(GltfError::IndexOutOfRange { .. })), "{name}: {result:?}"),
            "truncated.glb" | "header_length_below_header.glb" => {
                assert!(matches!(result, Err(GltfError::MalformedGlb(_))), "{name}: {result:?}")
            }
            _ => {
                let import = result.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(import.triangle_count() >= 2, "{name}: {} triangles", import.triangle_count());
            }
        }
    }
    let full = import_slice(&full_material().to_gltf(), None).unwrap();
    assert!(full.materials[0].normal_texture.is_some() && full.materials[0].emissive_texture.is_some());
    let tree = import_slice(&strips_fans_hierarchy().to_gltf(), None).unwrap();
    assert_eq!((tree.cameras.len(), tree.lights.iter().flatten().count()), (1, 3), "the spot light is imported too");
    assert!(!tree.skipped.is_empty(), "the points primitive is skipped");
}
