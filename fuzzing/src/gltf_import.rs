//! The `gltf_import` target: bytes handed to the glTF importer as a whole
//! `.gltf` or `.glb` file (`engine_core::gltf::import_slice_with`, no base
//! directory: a file naming an external buffer or image is refused).
//!
//! What it holds the importer to:
//! - no panic, whatever the bytes (not JSON, a truncated `.glb`, accessors
//!   past their buffers, broken images, indices past the vertex count…);
//! - a rejection says what is wrong: a non-empty message, and a JSON
//!   pointer (`/meshes/0/…`, or empty for the whole file) where the error
//!   kind has one;
//! - an import is well-formed: every index of every LOD is below its
//!   vertex count, sections are whole triangles inside the index list and
//!   name a material slot the mesh has, positions are finite, every
//!   reference (node → mesh, camera, light, parent, child; material →
//!   texture; scene → node) is in range, and no texture is larger than the
//!   limit.
//!
//! The limits are small (a few thousand vertices, 16 MiB of accessor data,
//! 256-texel images and 4 MiB of them decoded) so a mutated size or count
//! field costs the fuzzer milliseconds, not a gigabyte; the checks that
//! enforce them are part of what is fuzzed.

use engine_core::gltf::{self, GltfError, GltfImport, GltfLimits, ImportProgress};

/// The limits every input is imported under.
pub const LIMITS: GltfLimits = GltfLimits {
    max_file_bytes: 1 << 20,
    max_vertices: 1 << 16,
    max_indices: 1 << 18,
    max_accessor_bytes: 1 << 24,
    max_texture_dimension: 256,
    max_decoded_texture_bytes: 1 << 22,
    allow_files_outside_model_folder: false,
};

/// The fuzz target body: see the module doc.
pub fn gltf_import(data: &[u8]) {
    match gltf::import_slice_with(data, None, &LIMITS, &ImportProgress::default()) {
        Ok(import) => check_import(&import),
        Err(e) => check_error(&e),
    }
}

fn check_error(e: &GltfError) {
    let message = e.to_string();
    assert!(!message.trim().is_empty(), "{e:?} has no message");
    if let Some(path) = e.path() {
        assert!(path.is_empty() || path.starts_with('/'), "{e:?}: the path {path:?} is not a JSON pointer");
    }
    assert!(
        !matches!(e, GltfError::NoRenderThread | GltfError::UnknownScene(_) | GltfError::Spawn { .. }),
        "importing bytes failed with a spawn error: {e:?}"
    );
}

fn check_import(import: &GltfImport) {
    let mut vertices = 0u64;
    let mut indices = 0u64;
    for (m, mesh) in import.meshes.iter().enumerate() {
        let Some(mesh) = mesh else { continue };
        assert_eq!(mesh.slot_materials.len(), mesh.mesh.material_slots.len(), "mesh {m}: a glTF material per slot");
        for material in mesh.slot_materials.iter().flatten() {
            assert!(*material < import.materials.len(), "mesh {m}: material {material} of {}", import.materials.len());
        }
        for (l, lod) in mesh.mesh.render_data().lods().iter().enumerate() {
            let n = lod.vertices.len();
            vertices += n as u64;
            indices += lod.indices.len() as u64;
            assert!(lod.indices.len().is_multiple_of(3), "mesh {m} LOD {l}: {} indices", lod.indices.len());
            if let Some(i) = lod.indices.iter().find(|&&i| i as usize >= n) {
                panic!("mesh {m} LOD {l}: index {i} past the vertex count {n}");
            }
            if let Some(v) = lod.vertices.iter().position(|v| !v.position.iter().all(|c| c.is_finite())) {
                panic!("mesh {m} LOD {l}: vertex {v} has a non-finite position {:?}", lod.vertices[v].position);
            }
            for (s, section) in lod.sections.iter().enumerate() {
                let end = section.first_index as u64 + section.index_count as u64;
                assert!(end <= lod.indices.len() as u64, "mesh {m} LOD {l} section {s} ends at {end} of {} indices", lod.indices.len());
                assert!(
                    section.first_index % 3 == 0 && section.index_count % 3 == 0,
                    "mesh {m} LOD {l} section {s} is not whole triangles"
                );
                assert!(
                    (section.material_slot as usize) < mesh.slot_materials.len(),
                    "mesh {m} LOD {l} section {s}: slot {} of {}",
                    section.material_slot,
                    mesh.slot_materials.len()
                );
            }
        }
    }
    assert!(vertices <= LIMITS.max_vertices, "{vertices} vertices past the limit");
    assert!(indices <= LIMITS.max_indices, "{indices} indices past the limit");

    let mut texels = 0u64;
    for (t, texture) in import.textures.iter().enumerate() {
        let max = texture.texture.width.max(texture.texture.height);
        assert!(max <= LIMITS.max_texture_dimension, "texture {t} is {max} texels wide");
        texels += u64::from(texture.texture.width) * u64::from(texture.texture.height);
    }
    assert!(texels * 4 <= LIMITS.max_decoded_texture_bytes, "{texels} texels decoded past the limit");
    for (i, material) in import.materials.iter().enumerate() {
        let refs = [
            &material.base_color_texture,
            &material.metallic_roughness_texture,
            &material.normal_texture,
            &material.occlusion_texture,
            &material.emissive_texture,
        ];
        for r in refs.into_iter().flatten() {
            assert!(r.texture < import.textures.len(), "material {i}: texture {} of {}", r.texture, import.textures.len());
            assert!(r.uv_set <= 3, "material {i}: UV set {}", r.uv_set);
        }
    }

    let nodes = import.nodes.len();
    for (i, node) in import.nodes.iter().enumerate() {
        assert!(node.mesh.is_none_or(|m| m < import.meshes.len()), "node {i}: mesh {:?}", node.mesh);
        assert!(node.camera.is_none_or(|c| c < import.cameras.len()), "node {i}: camera {:?}", node.camera);
        assert!(node.light.is_none_or(|l| l < import.lights.len()), "node {i}: light {:?}", node.light);
        if let Some(p) = node.parent {
            assert!(p < nodes && import.nodes[p].children.contains(&i), "node {i}: parent {p} does not list it");
        }
        for &c in &node.children {
            assert!(c < nodes && import.nodes[c].parent == Some(i), "node {i}: child {c} names another parent");
        }
    }
    for (s, scene) in import.scenes.iter().enumerate() {
        assert!(scene.nodes.iter().all(|&n| n < nodes), "scene {s}: a node past {nodes}");
    }
    assert!(
        import.default_scene.is_none_or(|s| s < import.scenes.len()),
        "default scene {:?} of {}",
        import.default_scene,
        import.scenes.len()
    );
}
