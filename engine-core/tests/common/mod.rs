//! Helpers of engine-core's glTF tests: small files made in code and
//! their import.
#![allow(dead_code)]

use engine_core::gltf::{self, GltfError, GltfImport};
use engine_core::*;
use renderer::RenderThreadMode;
use serde_json::json;
use test_support::gltf_writer::*;

pub const QUAD: [[f32; 3]; 4] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]];

pub fn world() -> World {
    World::new(Some(test_support::render_thread(RenderThreadMode::Inline)))
}

pub fn import(w: &GltfWriter) -> GltfImport {
    gltf::import_slice(&w.to_gltf(), None).unwrap()
}

pub fn import_err(bytes: &[u8]) -> GltfError {
    gltf::import_slice(bytes, None).unwrap_err()
}

/// A writer with one node drawing `mesh` in one scene.
pub fn one_node(w: &mut GltfWriter, mesh: usize) {
    let n = w.push("nodes", json!({ "mesh": mesh }));
    w.push("scenes", json!({ "nodes": [n] }));
    w.set("scene", json!(0));
}

/// A file with one indexed quad (POSITION, NORMAL, u16 indices).
pub fn quad_file() -> GltfWriter {
    let mut w = GltfWriter::new();
    let p = w.positions(&QUAD);
    let n = w.floats(&[0.0, 0.0, 1.0].repeat(4), "VEC3");
    let i = w.indices(&[0, 1, 2, 2, 1, 3], UNSIGNED_SHORT);
    let m = w.push("meshes", json!({ "primitives": [{ "attributes": { "POSITION": p, "NORMAL": n }, "indices": i }] }));
    one_node(&mut w, m);
    w
}

pub fn lod(import: &GltfImport, mesh: usize) -> &renderer::StaticMeshLod {
    &import.meshes[mesh].as_ref().expect("a mesh").mesh.render_data().lods()[0]
}

/// Two 2x2 images: 0 (colour) used by base colour and emissive, 1 (data)
/// by metallic-roughness, normal and occlusion.
pub fn material_file() -> GltfWriter {
    let mut w = GltfWriter::new();
    let p = w.positions(&QUAD);
    let n = w.floats(&[0.0, 0.0, 1.0].repeat(4), "VEC3");
    let uv0 = w.floats(&[0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0], "VEC2");
    let i = w.indices(&[0, 1, 2, 2, 1, 3], UNSIGNED_SHORT);
    let img0 = w.image_png(2, 2, &[255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 128]);
    let img1 = w.image_png(2, 2, &[128, 128, 255, 255].repeat(4));
    w.texture(img0, json!({ "magFilter": 9728, "minFilter": 9984, "wrapS": 33071, "wrapT": 33648 }));
    w.texture(img1, json!({}));
    w.push(
        "materials",
        json!({
            "name": "everything",
            "pbrMetallicRoughness": {
                "baseColorFactor": [0.5, 0.25, 1.0, 0.75],
                "baseColorTexture": { "index": 0, "texCoord": 1, "extensions": { "KHR_texture_transform": { "offset": [0.5, 0.25], "scale": [2.0, 3.0], "rotation": 0.5 } } },
                "metallicFactor": 0.3, "roughnessFactor": 0.6,
                "metallicRoughnessTexture": { "index": 1 }
            },
            "normalTexture": { "index": 1, "scale": 0.7, "extensions": { "KHR_texture_transform": { "offset": [0.1, 0.2] } } },
            "occlusionTexture": { "index": 1, "strength": 0.4 },
            "emissiveFactor": [1.0, 0.5, 0.25],
            "emissiveTexture": { "index": 0 },
            "extensions": { "KHR_materials_emissive_strength": { "emissiveStrength": 5.0 } },
            "alphaMode": "MASK", "alphaCutoff": 0.3, "doubleSided": true
        }),
    );
    w.push("materials", json!({ "name": "glass", "alphaMode": "BLEND" }));
    w.set("extensionsUsed", json!(["KHR_texture_transform", "KHR_materials_emissive_strength"]));
    let m = w.push(
        "meshes",
        json!({ "primitives": [
            { "attributes": { "POSITION": p, "NORMAL": n, "TEXCOORD_0": uv0 }, "indices": i, "material": 0 },
            { "attributes": { "POSITION": p, "NORMAL": n }, "indices": i, "material": 1 },
        ] }),
    );
    one_node(&mut w, m);
    w
}

/// World and render-thread counts that a failed spawn must leave alone.
pub fn counts(world: &mut World) -> (usize, usize, usize, usize) {
    let (materials, textures) =
        world.render_thread().unwrap().with_context(|ctx| (ctx.scene.materials.live(), ctx.scene.textures.live())).unwrap();
    (world.num_actors(), world.num_components(), materials, textures)
}

/// A KTX2 file of `width` x `height`: `levels` (level 0 first) of `format`
/// (`None`: VK_FORMAT_UNDEFINED with a UASTC data format descriptor, as
/// Basis Universal writes it), each zstd-supercompressed when `zstd`.
pub fn ktx2_file(width: u32, height: u32, format: Option<ktx2::Format>, levels: &[Vec<u8>], zstd: bool) -> Vec<u8> {
    let block = match format {
        Some(f) => ktx2::dfd::Block::Basic(ktx2::dfd::Basic::from_format(f).unwrap().0).to_vec(),
        // UASTC's descriptor, as the Basis encoder writes it: colour model
        // UASTC (166), BT.709 primaries, sRGB transfer, 4x4 blocks of 16
        // bytes, one sample (128 bits, channel RGBA).
        None => [0, 2 | 40 << 16, 166 | 1 << 8 | 2 << 16, 0x0303, 16, 0, 127 << 16 | 3 << 24, 0, 0, u32::MAX]
            .iter()
            .flat_map(|w: &u32| w.to_le_bytes())
            .collect(),
    };
    let data: Vec<Vec<u8>> = levels
        .iter()
        .map(|l| if zstd { ruzstd::encoding::compress_to_vec(&l[..], ruzstd::encoding::CompressionLevel::Fastest) } else { l.clone() })
        .collect();
    let dfd_offset = 80 + 24 * levels.len();
    let dfd_length = 4 + block.len();
    let header = ktx2::Header {
        format,
        type_size: 1,
        pixel_width: width,
        pixel_height: height,
        pixel_depth: 0,
        layer_count: 0,
        face_count: 1,
        level_count: levels.len() as u32,
        supercompression_scheme: zstd.then_some(ktx2::SupercompressionScheme::Zstandard),
        index: ktx2::Index {
            dfd_byte_offset: dfd_offset as u32,
            dfd_byte_length: dfd_length as u32,
            kvd_byte_offset: 0,
            kvd_byte_length: 0,
            sgd_byte_offset: 0,
            sgd_byte_length: 0,
        },
    };
    let mut out = header.as_bytes().to_vec();
    let mut offset = (dfd_offset + dfd_length).next_multiple_of(16);
    for (l, d) in levels.iter().zip(&data) {
        let index = ktx2::LevelIndex { byte_offset: offset as u64, byte_length: d.len() as u64, uncompressed_byte_length: l.len() as u64 };
        out.extend_from_slice(&index.as_bytes());
        offset = (offset + d.len()).next_multiple_of(16);
    }
    out.extend_from_slice(&(dfd_length as u32).to_le_bytes());
    out.extend_from_slice(&block);
    for d in &data {
        out.resize(out.len().next_multiple_of(16), 0);
        out.extend_from_slice(d);
    }
    out
}
