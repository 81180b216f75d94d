//! glTF import with files made in code (test_support::gltf_writer): every
//! supported attribute and material field reaches the renderer's data,
//! transforms and hierarchy, cameras and lights, strips and fans, quantized
//! attributes, the three file forms (bad and hostile files: `gltf_bad_files.rs`).

#![cfg(feature = "gltf")]

use engine_core::gltf::{self, AlphaMode, GltfError, GltfImport, GltfLightKind, GltfLimits, GltfProjection, ImportProgress};
use engine_core::*;
use glam::{Mat4, Vec2, Vec3, Vec4};
use renderer::parameters::ParameterSlot;
use renderer::{BlendMode, MaterialId, TextureMips};
use rhi_vulkan::{AddressMode, Filter};
use serde_json::json;
use test_support::gltf_writer::*;

mod common;
use common::*;

#[test]
fn every_vertex_attribute_round_trips_into_the_mesh() {
    let mut w = GltfWriter::new();
    let p = w.positions(&QUAD);
    let n = w.floats(&[0.0, 0.0, 1.0].repeat(4), "VEC3");
    let t = w.floats(&[0.0, 1.0, 0.0, -1.0].repeat(4), "VEC4");
    let uv0 = w.floats(&[0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0], "VEC2");
    let uv1 = w.ints(&[0, 255, 51, 102, 255, 0, 128, 128], UNSIGNED_BYTE, "VEC2", true);
    let uv2 = w.ints(&[0, 65535, 0, 0, 65535, 0, 0, 0], UNSIGNED_SHORT, "VEC2", true);
    let uv3 = w.floats(&[0.25; 8], "VEC2");
    let c_u8 = w.ints(&[255, 0, 0, 128, 0, 255, 0, 255, 0, 0, 255, 0, 10, 20, 30, 40], UNSIGNED_BYTE, "VEC4", true);
    let i16 = w.indices(&[0, 1, 2, 2, 1, 3], UNSIGNED_SHORT);
    let tri = w.positions(&QUAD[..3]);
    let c_f3 = w.floats(&[0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0, -1.0, 0.25], "VEC3");
    let c_u16 = w.ints(&[65535, 0, 0, 65535, 0, 32768, 0, 0, 0, 0, 65535, 0], UNSIGNED_SHORT, "VEC4", true);
    let i8 = w.indices(&[0, 1, 2], UNSIGNED_BYTE);
    let i32 = w.indices(&[2, 1, 0], UNSIGNED_INT);
    w.push("materials", json!({ "name": "red" }));
    let m0 = w.push(
        "meshes",
        json!({ "name": "all", "primitives": [
            { "attributes": { "POSITION": p, "NORMAL": n, "TANGENT": t, "TEXCOORD_0": uv0, "TEXCOORD_1": uv1, "TEXCOORD_2": uv2, "TEXCOORD_3": uv3, "COLOR_0": c_u8 }, "indices": i16, "material": 0 },
            { "attributes": { "POSITION": tri, "NORMAL": n, "COLOR_0": c_f3 }, "indices": i8 },
        ] }),
    );
    // NORMAL has 4 elements, POSITION 3 above: the second primitive is refused below; use a 3-normal accessor.
    let n3 = w.floats(&[0.0, 0.0, 1.0].repeat(3), "VEC3");
    w.json["meshes"][m0]["primitives"][1]["attributes"]["NORMAL"] = json!(n3);
    let m1 =
        w.push("meshes", json!({ "primitives": [{ "attributes": { "POSITION": tri, "NORMAL": n3, "COLOR_0": c_u16 }, "indices": i32 }] }));
    let m2 = w.push("meshes", json!({ "primitives": [{ "attributes": { "POSITION": tri, "NORMAL": n3 } }] }));
    for m in [m0, m1, m2] {
        w.push("nodes", json!({ "mesh": m }));
    }
    w.push("scenes", json!({ "nodes": [0, 1, 2] }));
    let import = import(&w);

    let mesh = import.meshes[m0].as_ref().unwrap();
    assert_eq!(mesh.name, "all");
    assert_eq!(mesh.slot_materials, [Some(0), None]);
    assert_eq!(mesh.mesh.material_slots, ["red", "default"]);
    let l = lod(&import, m0);
    assert_eq!(l.sections.len(), 2);
    assert_eq!((l.sections[1].first_index, l.sections[1].index_count, l.sections[1].material_slot), (6, 3, 1));
    assert_eq!(l.indices, [0, 1, 2, 2, 1, 3, 4, 5, 6], "the second primitive's indices follow its vertices");
    let v = &l.vertices[1];
    assert_eq!(v.position, [1.0, 0.0, 0.0]);
    assert_eq!(v.normal, [0.0, 0.0, 1.0]);
    assert_eq!(v.tangent_x, [0.0, 1.0, 0.0, -1.0], "tangent and handedness from the file");
    assert_eq!(v.uvs[0], [1.0, 1.0]);
    assert_eq!(v.uvs[1], [0.2, 0.4], "normalized u8");
    assert_eq!(v.uvs[2], [0.0, 0.0]);
    assert_eq!(l.vertices[0].uvs[2], [0.0, 1.0], "normalized u16");
    assert_eq!(v.uvs[3], [0.25, 0.25]);
    assert_eq!(v.color, [0, 255, 0, 255]);
    assert_eq!(l.vertices[3].color, [10, 20, 30, 40]);
    assert_eq!(l.vertices[4].color, [128, 255, 0, 255], "float RGB, alpha 1");
    assert_eq!(l.vertices[6].color, [255, 0, 64, 255], "floats clamped to [0, 1]");
    assert_eq!(l.vertices[4].tangent_x, [0.0, 0.0, 0.0, 1.0], "no tangents and no normal map: none");

    let l1 = lod(&import, m1);
    assert_eq!(l1.indices, [2, 1, 0], "u32 indices");
    assert_eq!(l1.vertices[0].color, [255, 0, 0, 255]);
    assert_eq!(l1.vertices[1].color, [0, 128, 0, 0], "normalized u16 colours");
    assert_eq!(lod(&import, m2).indices, [0, 1, 2], "non-indexed");
    assert_eq!(import.triangle_count(), 2 + 1 + 1 + 1);
}

#[test]
fn missing_normals_are_flat_per_triangle() {
    let mut w = GltfWriter::new();
    // A tent: two triangles meeting at an edge along Y, facing +X+Z and -X+Z.
    let p = w.positions(&[[0.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]);
    let i = w.indices(&[0, 2, 1, 0, 1, 3], UNSIGNED_SHORT);
    let m = w.push("meshes", json!({ "primitives": [{ "attributes": { "POSITION": p }, "indices": i }] }));
    one_node(&mut w, m);
    let import = import(&w);
    let l = lod(&import, 0);
    assert_eq!(l.vertices.len(), 6, "unwelded");
    let s = std::f32::consts::FRAC_1_SQRT_2;
    for (k, v) in l.vertices.iter().enumerate() {
        let expect = if k < 3 { Vec3::new(s, 0.0, s) } else { Vec3::new(-s, 0.0, s) };
        assert!(Vec3::from(v.normal).distance(expect) < 1e-5, "{k}: {:?}", v.normal);
    }
}

/// The value of parameter `name` in material `id`'s GPU block.
fn block_value(world: &mut World, id: MaterialId, name: &'static str) -> Vec4 {
    world
        .render_thread()
        .unwrap()
        .with_context(move |ctx| {
            let parent = ctx.scene.materials.get(id).unwrap().clone();
            let layout = parent.layout().unwrap();
            let block = ctx.scene.materials.block(id.slot());
            match layout.find(name).unwrap() {
                ParameterSlot::Vector(v) => Vec4::from(block[v as usize]),
                ParameterSlot::Scalar(v, lane) => Vec4::splat(block[v as usize][lane as usize]),
                ParameterSlot::Texture(_) => panic!("{name} is a texture"),
            }
        })
        .unwrap()
}

#[test]
fn every_material_field_round_trips_into_the_renderer() {
    let import = import(&material_file());
    // Textures: each image once per colour space, decoded, mips generated.
    assert_eq!(import.textures.len(), 2);
    let (t0, t1) = (&import.textures[0], &import.textures[1]);
    assert_eq!((t0.image, t0.srgb, t1.image, t1.srgb), (0, true, 1, false));
    assert_eq!(t0.texture.format, renderer::TextureFormat::Rgba8Srgb);
    assert_eq!(t1.texture.format, renderer::TextureFormat::Rgba8Unorm);
    assert_eq!(&t0.texture.data[12..16], [255, 255, 255, 128]);
    assert_eq!(t0.texture.mips, TextureMips::Generate);

    let m = &import.materials[0];
    assert_eq!(m.name, "everything");
    assert_eq!(m.base_color_factor, Vec4::new(0.5, 0.25, 1.0, 0.75));
    let base = m.base_color_texture.as_ref().unwrap();
    assert_eq!((base.texture, base.uv_set), (0, 1));
    assert_eq!((base.transform.offset, base.transform.scale, base.transform.rotation), (Vec2::new(0.5, 0.25), Vec2::new(2.0, 3.0), 0.5));
    assert_eq!(
        (base.sampler.filter, base.sampler.mipmap_filter, base.sampler.address_u, base.sampler.address_v),
        (Filter::Nearest, Filter::Nearest, AddressMode::ClampToEdge, AddressMode::MirrorRepeat)
    );
    let mr = m.metallic_roughness_texture.as_ref().unwrap();
    assert_eq!((mr.texture, mr.sampler.filter, mr.sampler.address_u), (1, Filter::Linear, AddressMode::Repeat), "glTF's default sampler");
    assert_eq!((m.metallic_factor, m.roughness_factor), (0.3, 0.6));
    assert_eq!((m.normal_scale, m.normal_texture.as_ref().unwrap().transform.offset), (0.7, Vec2::new(0.1, 0.2)));
    assert_eq!((m.occlusion_strength, m.occlusion_texture.as_ref().unwrap().texture), (0.4, 1));
    assert_eq!((m.emissive_factor, m.emissive_strength, m.emissive_texture.as_ref().unwrap().texture), (Vec3::new(1.0, 0.5, 0.25), 5.0, 0));
    assert_eq!((m.alpha_mode, m.alpha_cutoff, m.double_sided), (AlphaMode::Mask, 0.3, true));
    assert_eq!(import.materials[1].alpha_mode, AlphaMode::Blend);
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    // The normal-mapped primitive got MikkTSpace tangents along +U (+X).
    let l = lod(&import, 0);
    let tangent = l.vertices[l.indices[0] as usize].tangent_x;
    assert!((tangent[0] - 1.0).abs() < 1e-4 && tangent[3] == 1.0, "{tangent:?}");

    // Spawned: the renderer holds what the file says.
    let mut world = world();
    let spawned = import.spawn(&mut world).unwrap();
    assert_eq!(spawned.textures.len(), 2);
    assert_eq!(spawned.parents.len(), 2, "masked two-sided and translucent one-sided");
    let id = spawned.materials[0];
    let parent = world.render_thread().unwrap().with_context(move |ctx| ctx.scene.materials.get(id).unwrap().clone()).unwrap();
    assert_eq!((parent.blend_mode, parent.two_sided), (BlendMode::Masked, true));
    let sampler = &parent.parameters.iter().find(|p| p.name == "base_color_texture").unwrap().sampler;
    assert_eq!((sampler.filter, sampler.address_v), (Filter::Nearest, AddressMode::MirrorRepeat));
    let expect: [(&'static str, Vec4); 13] = [
        ("base_color", Vec4::new(0.5, 0.25, 1.0, 0.75)),
        ("metallic", Vec4::splat(0.3)),
        ("roughness", Vec4::splat(0.6)),
        ("emissive", Vec4::new(1.0, 0.5, 0.25, 0.0)),
        ("emissive_strength", Vec4::splat(5.0)),
        ("normal_scale", Vec4::splat(0.7)),
        ("occlusion_strength", Vec4::splat(0.4)),
        ("alpha_cutoff", Vec4::splat(0.3)),
        ("alpha_mode", Vec4::splat(1.0)),
        ("base_color_uv_set", Vec4::splat(1.0)),
        ("base_color_uv", Vec4::new(0.5, 0.25, 2.0, 3.0)),
        ("base_color_uv_rotation", Vec4::splat(0.5)),
        ("normal_uv", Vec4::new(0.1, 0.2, 1.0, 1.0)),
    ];
    for (name, value) in expect {
        assert_eq!(block_value(&mut world, id, name), value, "{name}");
    }
    let glass = spawned.materials[1];
    let parent = world.render_thread().unwrap().with_context(move |ctx| ctx.scene.materials.get(glass).unwrap().clone()).unwrap();
    assert_eq!((parent.blend_mode, parent.two_sided), (BlendMode::Translucent, false));
    assert_eq!(block_value(&mut world, glass, "alpha_mode"), Vec4::splat(2.0));
    // The component's slots carry the instances.
    let node = spawned.nodes[0].unwrap();
    assert_eq!(world.settings(node).unwrap().materials, [spawned.materials[0], spawned.materials[1]]);
    world.send_all_end_of_frame_updates().unwrap();
    test_support::assert_clean(world.render_thread().unwrap());
}

#[test]
fn a_child_of_a_rotated_scaled_parent_lands_where_the_file_says() {
    let mut w = quad_file();
    let s = std::f32::consts::FRAC_1_SQRT_2;
    // Node 0 (from quad_file) becomes the child of a new parent.
    w.json["nodes"][0]["translation"] = json!([1.0, 0.0, 0.0]);
    w.push("nodes", json!({ "translation": [0.0, 1.0, 0.0], "rotation": [0.0, s, 0.0, s], "scale": [2.0, 2.0, 2.0], "children": [0] }));
    let matrix: Vec<f32> = Mat4::from_translation(Vec3::new(0.0, 0.0, 3.0)).to_cols_array().to_vec();
    w.push("nodes", json!({ "matrix": matrix, "mesh": 0 }));
    w.json["scenes"][0]["nodes"] = json!([1, 2]);
    let import = import(&w);
    assert_eq!(import.nodes[0].parent, Some(1));
    assert_eq!(import.nodes[1].transform.scale, Vec3::splat(2.0));
    assert!(import.nodes[2].transform.translation.distance(Vec3::new(0.0, 0.0, 3.0)) < 1e-6, "matrix decomposed");
    let mut world = world();
    let spawned = import.spawn(&mut world).unwrap();
    let child = world.world_transform(spawned.nodes[0].unwrap()).unwrap();
    // glTF: the parent maps the child's origin (1,0,0) to R_y(90°)·2·(1,0,0) + (0,1,0) = (0,1,-2),
    // and its vertex (0,1,0) to (0,3,-2); Proxima (glTF +Z → +X, +X → +Y, +Y → +Z): (-2,0,1), (-2,0,3).
    assert!(child.transform_point3(Vec3::ZERO).distance(Vec3::new(-2.0, 0.0, 1.0)) < 1e-5, "{child:?}");
    assert!(child.transform_point3(Vec3::Y).distance(Vec3::new(-2.0, 0.0, 3.0)) < 1e-5);
    let m = world.world_transform(spawned.nodes[2].unwrap()).unwrap();
    assert!(m.transform_point3(Vec3::ZERO).distance(Vec3::new(3.0, 0.0, 0.0)) < 1e-5);
    // glTF up (+Y) is Proxima up (+Z).
    assert!(gltf::gltf_to_proxima().mul_vec3(Vec3::Y).distance(Vec3::Z) < 1e-6);
    assert_eq!(world.num_actors(), 1);
    assert_eq!(world.actor_name(spawned.actor.unwrap()).unwrap(), "glTF scene 0");
    assert_eq!(world.num_components(), 4, "the root and three nodes");
    world.send_all_end_of_frame_updates().unwrap();
    test_support::assert_clean(world.render_thread().unwrap());
}

#[test]
fn cameras_and_punctual_lights_are_imported_and_spawned() {
    let mut w = quad_file();
    w.push("cameras", json!({ "type": "perspective", "perspective": { "yfov": 0.8, "znear": 0.1, "zfar": 100.0, "aspectRatio": 1.5 } }));
    w.push("cameras", json!({ "type": "orthographic", "orthographic": { "xmag": 4.0, "ymag": 3.0, "znear": 0.5, "zfar": 50.0 } }));
    w.set(
        "extensions",
        json!({ "KHR_lights_punctual": { "lights": [
            { "type": "directional", "color": [1.0, 0.9, 0.8], "intensity": 3.0 },
            { "type": "point", "intensity": 20.0, "range": 10.0 },
            { "type": "spot", "spot": { "outerConeAngle": 0.5 } },
        ] } }),
    );
    w.set("extensionsUsed", json!(["KHR_lights_punctual"]));
    w.push("nodes", json!({ "camera": 0, "translation": [0.0, 0.0, 5.0] }));
    w.push("nodes", json!({ "camera": 1 }));
    w.push("nodes", json!({ "extensions": { "KHR_lights_punctual": { "light": 0 } } }));
    w.push("nodes", json!({ "extensions": { "KHR_lights_punctual": { "light": 1 } }, "translation": [0.0, 2.0, 0.0] }));
    w.push("nodes", json!({ "extensions": { "KHR_lights_punctual": { "light": 2 } } }));
    w.json["scenes"][0]["nodes"] = json!([0, 1, 2, 3, 4, 5]);
    let import = import(&w);
    assert_eq!(
        import.cameras[0].projection,
        GltfProjection::Perspective { yfov: 0.8, aspect_ratio: Some(1.5), znear: 0.1, zfar: Some(100.0) }
    );
    assert_eq!(import.cameras[1].projection, GltfProjection::Orthographic { xmag: 4.0, ymag: 3.0, znear: 0.5, zfar: 50.0 });
    let sun = import.lights[0].as_ref().unwrap();
    assert_eq!((sun.kind, sun.color, sun.intensity), (GltfLightKind::Directional, Vec3::new(1.0, 0.9, 0.8), 3.0));
    assert_eq!(import.lights[1].as_ref().unwrap().range, Some(10.0));
    let spot = import.lights[2].as_ref().unwrap();
    assert_eq!((spot.kind, spot.range), (GltfLightKind::Spot { inner_cone: 0.0, outer_cone: 0.5 }, None));
    assert!(import.skipped.is_empty(), "nothing skipped: {:?}", import.skipped);
    assert_eq!(import.nodes[3].light, Some(0));

    let mut world = world();
    let spawned = import.spawn(&mut world).unwrap();
    assert_eq!((spawned.cameras.len(), spawned.lights.len()), (2, 3));
    let cam = world.world_transform(spawned.cameras[0]).unwrap();
    // At glTF (0,0,5) looking along glTF -Z with +Y up: Proxima (5,0,0) looking along -X, +Z up.
    assert!(cam.transform_point3(Vec3::ZERO).distance(Vec3::new(5.0, 0.0, 0.0)) < 1e-5);
    assert!(cam.x_axis.truncate().distance(Vec3::NEG_X) < 1e-5 && cam.z_axis.truncate().distance(Vec3::Z) < 1e-5, "{cam:?}");
    let c = world.component::<CameraComponent>(spawned.cameras[0]).unwrap().0;
    assert_eq!((c.fov_y, c.near, c.far), (0.8, 0.1, 100.0));
    assert_eq!(world.component::<CameraComponent>(spawned.cameras[1]).unwrap().0.ortho_width, Some(8.0));
    assert_eq!(world.collect_views(64, 48).len(), 2);
    let d = world.component::<DirectionalLightComponent>(spawned.lights[0]).unwrap();
    assert_eq!((d.color, d.intensity), (Vec3::new(1.0, 0.9, 0.8), 3.0));
    assert!(world.world_transform(spawned.lights[0]).unwrap().x_axis.truncate().distance(Vec3::NEG_X) < 1e-5, "shines along glTF -Z");
    let p = world.component::<PointLightComponent>(spawned.lights[1]).unwrap();
    assert_eq!((p.intensity, p.radius), (20.0, 10.0));
    assert!(world.world_transform(spawned.lights[1]).unwrap().transform_point3(Vec3::ZERO).distance(Vec3::new(0.0, 0.0, 2.0)) < 1e-5);
    // The spot light: the file's cone, no range (one from its intensity:
    // where 1 cd falls to 0.01 lux, 10 m), shining along glTF -Z.
    let s = world.component::<SpotLightComponent>(spawned.lights[2]).unwrap();
    assert_eq!((s.inner_cone, s.outer_cone, s.intensity), (0.0, 0.5, 1.0));
    assert!((s.radius - 10.0).abs() < 1e-4, "{}", s.radius);
    assert!(world.world_transform(spawned.lights[2]).unwrap().x_axis.truncate().distance(Vec3::NEG_X) < 1e-5, "shines along glTF -Z");
    world.send_all_end_of_frame_updates().unwrap();
    test_support::assert_clean(world.render_thread().unwrap());
}

#[test]
fn a_spot_light_with_its_cone_out_of_order_is_invalid() {
    for spot in [json!({ "innerConeAngle": 0.6, "outerConeAngle": 0.5 }), json!({ "outerConeAngle": 2.0 })] {
        let mut w = quad_file();
        w.set("extensions", json!({ "KHR_lights_punctual": { "lights": [{ "type": "spot", "spot": spot }] } }));
        w.set("extensionsUsed", json!(["KHR_lights_punctual"]));
        match import_err(&w.to_gltf()) {
            GltfError::Invalid { path, problem } => {
                assert_eq!(path, "/extensions/KHR_lights_punctual/lights/0");
                assert!(problem.contains("cone"), "{problem}");
            }
            other => panic!("{spot}: {other:?}"),
        }
    }
}

#[test]
fn strips_and_fans_become_lists_and_points_and_lines_are_skipped() {
    let mut w = GltfWriter::new();
    let strip = w.positions(&QUAD);
    let fan = w.positions(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 0.5, 0.0]]);
    let m = w.push(
        "meshes",
        json!({ "primitives": [
            { "attributes": { "POSITION": strip }, "mode": 5 },
            { "attributes": { "POSITION": fan }, "mode": 6 },
            { "attributes": { "POSITION": fan }, "mode": 1 },
            { "attributes": { "POSITION": fan }, "mode": 0 },
        ] }),
    );
    one_node(&mut w, m);
    let import = import(&w);
    let l = lod(&import, 0);
    assert_eq!(l.sections.len(), 2);
    // No normals: unwelded, so the corners come in the converted order; check their positions.
    let corners: Vec<[f32; 3]> = l.indices.iter().map(|&i| l.vertices[i as usize].position).collect();
    let q = |i: usize| QUAD[i];
    assert_eq!(corners[..6], [q(0), q(1), q(2), q(1), q(3), q(2)], "strip: 0 1 2, 1 3 2");
    assert_eq!(corners[6..9], [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]], "fan: 1 2 0");
    assert_eq!(l.indices.len(), 6 + 9);
    // Every triangle of the strip and fan faces +Z (winding kept).
    for n in l.vertices.iter().map(|v| v.normal) {
        assert_eq!(n, [0.0, 0.0, 1.0]);
    }
    assert_eq!(import.skipped.len(), 2, "{:?}", import.skipped);
    assert!(import.skipped[0].starts_with("/meshes/0/primitives/2: Lines"));
}

#[test]
fn quantized_and_sparse_attributes_are_read() {
    let mut w = GltfWriter::new();
    let p = w.ints(&[0, 0, 0, 100, 0, 0, 0, 100, 0], SHORT, "VEC3", false);
    w.set_min_max(p, &[[0.0; 3], [100.0, 100.0, 0.0]]);
    let n = w.ints(&[0, 0, 127, 0, 0, 127, 0, -128, 0], BYTE, "VEC3", true);
    let uv = w.ints(&[0, 0, 65535, 0, 0, 32768], UNSIGNED_SHORT, "VEC2", true);
    let uv1 = w.ints(&[1, 2, 3, 4, 5, 6], UNSIGNED_BYTE, "VEC2", false);
    // Sparse: the third vertex's position replaced by (7, 8, 9).
    let idx_view = w.view(&2u16.to_le_bytes(), None);
    let val_view = w.view(&[7.0f32, 8.0, 9.0].iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<_>>(), None);
    let base = w.floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    w.set_min_max(base, &[[0.0; 3], [7.0, 8.0, 9.0]]);
    w.json["accessors"][base]["sparse"] =
        json!({ "count": 1, "indices": { "bufferView": idx_view, "componentType": UNSIGNED_SHORT }, "values": { "bufferView": val_view } });
    let m = w.push(
        "meshes",
        json!({ "primitives": [
            { "attributes": { "POSITION": p, "NORMAL": n, "TEXCOORD_0": uv, "TEXCOORD_1": uv1 } },
            { "attributes": { "POSITION": base } },
        ] }),
    );
    one_node(&mut w, m);
    w.set("extensionsUsed", json!(["KHR_mesh_quantization"]));
    w.set("extensionsRequired", json!(["KHR_mesh_quantization"]));
    let import = import(&w);
    let l = lod(&import, 0);
    assert_eq!(l.vertices[1].position, [100.0, 0.0, 0.0], "SHORT positions as they are");
    assert_eq!(l.vertices[0].normal, [0.0, 0.0, 1.0], "normalized BYTE");
    assert_eq!(l.vertices[2].normal, [0.0, -1.0, 0.0], "-128 clamps to -1");
    assert_eq!(l.vertices[1].uvs[0], [1.0, 0.0]);
    assert!((l.vertices[2].uvs[0][1] - 32768.0 / 65535.0).abs() < 1e-7);
    assert_eq!(l.vertices[2].uvs[1], [5.0, 6.0], "UNSIGNED_BYTE, not normalized");
    assert_eq!(l.vertices[3 + 2].position, [7.0, 8.0, 9.0], "sparse substitution");
    assert_eq!(l.vertices[3 + 1].position, [1.0, 0.0, 0.0]);
}

#[test]
fn gltf_with_external_files_glb_and_data_uris_import_the_same() {
    let mut w = material_file();
    let dir = test_support::test_output_dir().join("gltf-external");
    std::fs::create_dir_all(&dir).unwrap();
    // Move image 1 out to a file whose name needs percent-decoding.
    let png = encode_png(2, 2, &[128, 128, 255, 255].repeat(4));
    std::fs::write(dir.join("normal map.png"), &png).unwrap();
    w.json["images"][1] = json!({ "uri": "normal%20map.png" });
    let (gltf_json, bin) = w.to_gltf_external("scene data.bin");
    std::fs::write(dir.join("scene.gltf"), &gltf_json).unwrap();
    std::fs::write(dir.join("scene data.bin"), &bin).unwrap();
    std::fs::write(dir.join("scene.glb"), w.to_glb()).unwrap();
    let progress = ImportProgress::default();
    let a = gltf::import_with(&dir.join("scene.gltf"), &GltfLimits::default(), &progress).unwrap();
    assert!(progress.bytes_read.load(std::sync::atomic::Ordering::Relaxed) as usize >= gltf_json.len() + bin.len() + png.len());
    assert_eq!(progress.images_decoded.load(std::sync::atomic::Ordering::Relaxed), 2);
    assert_eq!(progress.meshes_built.load(std::sync::atomic::Ordering::Relaxed), 1);
    let b = gltf::import(dir.join("scene.glb")).unwrap();
    let c = gltf::import_slice(&w.to_gltf(), Some(&dir)).unwrap();
    for other in [&b, &c] {
        assert_eq!(lod(&a, 0), lod(other, 0));
        assert_eq!(a.materials, other.materials);
        assert_eq!(a.textures.len(), other.textures.len());
        for (x, y) in a.textures.iter().zip(&other.textures) {
            assert_eq!(x.texture, y.texture);
        }
    }
    // The external buffer without a base directory: a typed error.
    assert!(matches!(gltf::import_slice(&gltf_json, None), Err(GltfError::Buffer { path, .. }) if path == "/buffers/0"));
}

#[test]
fn a_spawned_scene_can_be_destroyed_and_leaves_nothing() {
    let mut world = world();
    let before = counts(&mut world);
    let import = gltf::import_slice(&material_file().to_gltf(), None).unwrap();
    let spawned = import.spawn(&mut world).unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    assert_ne!(counts(&mut world), before);
    spawned.destroy(&mut world).unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    // The renderer's three built-in textures were made with the first texture.
    assert_eq!(counts(&mut world), (before.0, before.1, before.2, 3));
    test_support::assert_clean(world.render_thread().unwrap());
}

#[test]
fn imports_and_errors_can_cross_threads() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<GltfImport>();
    send_sync::<GltfError>();
    send_sync::<ImportProgress>();
}

#[test]
fn application_specific_attributes_are_ignored_and_reported_skipped() {
    // glTF 2.0 §3.7.2.1: application-specific semantics begin with `_`.
    let mut w = quad_file();
    let bary = w.floats(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0], "VEC3");
    let temp = w.floats(&[20.0, 21.0, 22.0, 23.0], "SCALAR");
    w.json["meshes"][0]["primitives"][0]["attributes"]["_BARYCENTRIC"] = json!(bary);
    w.json["meshes"][0]["primitives"][0]["attributes"]["_TEMPERATURE"] = json!(temp);
    let import = import(&w);
    assert_eq!(lod(&import, 0).indices, [0, 1, 2, 2, 1, 3], "the primitive is drawn");
    for name in ["_BARYCENTRIC", "_TEMPERATURE"] {
        let path = format!("/meshes/0/primitives/0/attributes/{name}");
        assert!(import.skipped.iter().any(|s| s.starts_with(&path)), "{name}: {:?}", import.skipped);
    }
    // A name that is neither glTF's nor application-specific is invalid.
    let mut bad = quad_file();
    bad.json["meshes"][0]["primitives"][0]["attributes"]["BARYCENTRIC"] = json!(bary);
    let e = import_err(&bad.to_gltf());
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path.starts_with("/meshes/0/primitives/0/attributes")), "{e}");
    // An application-specific attribute's accessor index is still checked.
    let mut bad = quad_file();
    bad.json["meshes"][0]["primitives"][0]["attributes"]["_BARYCENTRIC"] = json!(99);
    let e = import_err(&bad.to_gltf());
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path.starts_with("/meshes/0/primitives/0/attributes")), "{e}");
}

#[test]
fn an_image_that_does_not_decode_is_skipped_and_its_slots_use_their_factors() {
    // Image 1 (metallic-roughness, normal, occlusion) is corrupt; image 0
    // (base colour, emissive) is in a format the importer does not read.
    for (image, bytes, kept_slots) in [
        (1, b"not a png at all".to_vec(), ["base_color", "emissive"]),
        (0, b"BM\x3a\0\0\0\0\0\0\0\x36\0\0\0".to_vec(), ["metallic_roughness", "occlusion"]),
    ] {
        let mut w = material_file();
        w.json["images"][image] = json!({ "uri": format!("data:image/png;base64,{}", base64(&bytes)) });
        let import = import(&w);
        let line = format!("/images/{image}: does not decode");
        assert_eq!(import.skipped.iter().filter(|s| s.starts_with(&line)).count(), 1, "one line per image: {:?}", import.skipped);
        assert_eq!(import.textures.len(), 1, "the other image's texture");
        assert_eq!(import.textures[0].image, 1 - image);
        let m = &import.materials[0];
        let slots = [
            ("base_color", &m.base_color_texture),
            ("metallic_roughness", &m.metallic_roughness_texture),
            ("normal", &m.normal_texture),
            ("occlusion", &m.occlusion_texture),
            ("emissive", &m.emissive_texture),
        ];
        for (name, t) in slots {
            let kept = kept_slots.contains(&name) || (name == "normal" && image == 0);
            assert_eq!(t.is_some(), kept, "{name} with image {image} skipped");
            if let Some(t) = t {
                assert_eq!(t.texture, 0, "{name}: renumbered to the one texture left");
            }
        }
        // The factors are still the file's.
        assert_eq!((m.base_color_factor, m.metallic_factor, m.normal_scale), (Vec4::new(0.5, 0.25, 1.0, 0.75), 0.3, 0.7));
        // Spawned: a skipped slot is the parent's default texture, the factor alone.
        let mut world = world();
        let spawned = import.spawn(&mut world).unwrap();
        assert_eq!(spawned.textures.len(), 1);
        let set: Vec<String> = m
            .instance(spawned.parents[0], &spawned.textures)
            .overrides
            .into_iter()
            .filter(|(_, v)| matches!(v, renderer::ParameterValue::Texture(_)))
            .map(|(name, _)| name)
            .collect();
        let mut expect: Vec<String> = slots.iter().filter(|(_, t)| t.is_some()).map(|(n, _)| format!("{n}_texture")).collect();
        expect.sort();
        let mut set_sorted = set.clone();
        set_sorted.sort();
        assert_eq!(set_sorted, expect, "only the kept slots bind a texture");
        assert_eq!(block_value(&mut world, spawned.materials[0], "base_color"), Vec4::new(0.5, 0.25, 1.0, 0.75));
        world.send_all_end_of_frame_updates().unwrap();
        test_support::assert_clean(world.render_thread().unwrap());
    }
}

#[test]
fn khr_materials_unlit_is_the_unlit_shading_model() {
    let mut w = quad_file();
    w.push("materials", json!({ "name": "flat", "pbrMetallicRoughness": { "baseColorFactor": [0.2, 0.4, 0.6, 1.0] }, "extensions": { "KHR_materials_unlit": {} } }));
    w.push("materials", json!({ "name": "lit" }));
    w.json["meshes"][0]["primitives"][0]["material"] = json!(0);
    let n = w.json["meshes"][0]["primitives"][0].clone();
    let mut lit = n.clone();
    lit["material"] = json!(1);
    w.json["meshes"][0]["primitives"] = json!([n, lit]);
    w.set("extensionsUsed", json!(["KHR_materials_unlit"]));
    w.set("extensionsRequired", json!(["KHR_materials_unlit"]));
    let import = import(&w);
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    assert!(import.materials[0].unlit && !import.materials[1].unlit);
    let mut world = world();
    let spawned = import.spawn(&mut world).unwrap();
    assert_eq!(spawned.parents.len(), 2, "the shading model is a parent's property");
    let models = spawned.materials.clone();
    let models = world
        .render_thread()
        .unwrap()
        .with_context(move |ctx| models.iter().map(|&id| ctx.scene.materials.resolve(id).shading_model).collect::<Vec<_>>())
        .unwrap();
    assert_eq!(models, [renderer::ShadingModel::Unlit, renderer::ShadingModel::DefaultLit]);
    assert_eq!(block_value(&mut world, spawned.materials[0], "base_color"), Vec4::new(0.2, 0.4, 0.6, 1.0));
    world.send_all_end_of_frame_updates().unwrap();
    test_support::assert_clean(world.render_thread().unwrap());
}

#[test]
fn non_mipmapped_minification_filters_read_level_0_alone() {
    // glTF's NEAREST (9728) and LINEAR (9729) minification filters use no
    // mip levels; the *_MIPMAP_* ones (9984..9987) and no filter do.
    for (min_filter, mipmaps) in [(Some(9728), false), (Some(9729), false), (Some(9984), true), (Some(9987), true), (None, true)] {
        let mut w = quad_file();
        let img = w.image_png(1, 1, &[255, 255, 255, 255]);
        let sampler = match min_filter {
            Some(f) => json!({ "minFilter": f }),
            None => json!({}),
        };
        let t = w.texture(img, sampler);
        w.push("materials", json!({ "pbrMetallicRoughness": { "baseColorTexture": { "index": t } } }));
        w.set("meshes", json!([{ "primitives": [{ "attributes": { "POSITION": 0, "NORMAL": 1 }, "indices": 2, "material": 0 }] }]));
        let import = import(&w);
        let base = import.materials[0].base_color_texture.as_ref().expect("the texture");
        assert_eq!(base.sampler.mipmaps, mipmaps, "minFilter {min_filter:?}");
    }
}

#[test]
fn images_sharing_one_source_are_read_and_decoded_once() {
    // Issue 40: images were read and decoded once each, so 256 images
    // naming one buffer view (or one file) were decoded 256 times.
    let mut w = quad_file();
    let a = w.image_png(2, 2, &[255, 0, 0, 255].repeat(4));
    let view = w.json["images"][a]["bufferView"].clone();
    let png_b = encode_png(2, 2, &[0, 255, 0, 255].repeat(4));
    let png_c = encode_png(2, 2, &[0, 0, 255, 255].repeat(4));
    let data_c = format!("data:image/png;base64,{}", base64(&png_c));
    // Images 0-1: one buffer view; 2-4: one file, spelled three ways; 5-6: one data URI.
    let others = [
        json!({ "bufferView": view, "mimeType": "image/png" }),
        json!({ "uri": "b.png" }),
        json!({ "uri": "./b.png" }),
        json!({ "uri": "%62.png" }),
        json!({ "uri": data_c }),
        json!({ "uri": data_c }),
    ];
    for image in others {
        w.push("images", image);
    }
    for image in 0..7 {
        let t = w.texture(image, json!({}));
        w.push("materials", json!({ "pbrMetallicRoughness": { "baseColorTexture": { "index": t } } }));
    }
    // Image 1 also as a normal map: the source's linear variant, decoded once more.
    w.push("materials", json!({ "normalTexture": { "index": 1 } }));
    let dir = test_support::test_output_dir().join("gltf-shared-sources");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("b.png"), &png_b).unwrap();
    let (gltf_json, bin) = w.to_gltf_external("shared.bin");
    std::fs::write(dir.join("shared.gltf"), &gltf_json).unwrap();
    std::fs::write(dir.join("shared.bin"), &bin).unwrap();
    let progress = ImportProgress::default();
    let import = gltf::import_with(&dir.join("shared.gltf"), &GltfLimits::default(), &progress).unwrap();
    assert!(import.skipped.is_empty(), "{:?}", import.skipped);
    let base = |m: usize| import.materials[m].base_color_texture.as_ref().unwrap().texture;
    let (view_t, file_t, data_t) = (base(0), base(2), base(5));
    assert_eq!([base(1), base(3), base(4), base(6)], [view_t, file_t, file_t, data_t]);
    let normal_t = import.materials[7].normal_texture.as_ref().unwrap().texture;
    assert_eq!(import.textures.len(), 4, "one per source and colour space");
    let mut distinct = vec![view_t, file_t, data_t, normal_t];
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4);
    assert_eq!((import.textures[view_t].srgb, import.textures[normal_t].srgb), (true, false));
    assert_eq!(&import.textures[file_t].texture.data[..4], [0, 255, 0, 255]);
    assert_eq!(&import.textures[data_t].texture.data[..4], [0, 0, 255, 255]);
    assert_eq!(progress.images_decoded.load(std::sync::atomic::Ordering::Relaxed), 4);
    let read = progress.bytes_read.load(std::sync::atomic::Ordering::Relaxed) as usize;
    assert_eq!(read, gltf_json.len() + bin.len() + png_b.len() + png_c.len(), "each source read once");
}
