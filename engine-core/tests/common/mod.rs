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
