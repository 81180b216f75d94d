//! Sections through the public API: defaults, validation, update, clear,
//! visibility, materials, bounds and change sets.

use glam::{Vec2, Vec3};
use procmesh::{
    Aabb, ChangeSet, LinearColor, MaterialRef, ProcMeshData, ProcMeshError, ProcMeshTangent, ProcMeshVertex, SectionData, SectionDirty,
    VertexAttributes, MAX_SECTION_INDEX, WHITE,
};

/// A unit quad in the XY plane, two triangles.
const QUAD: [Vec3; 4] = [Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0), Vec3::new(1.0, 1.0, 0.0), Vec3::new(0.0, 1.0, 0.0)];
const QUAD_TRIS: [u32; 6] = [0, 1, 2, 0, 2, 3];

fn quad_mesh() -> ProcMeshData {
    let mut mesh = ProcMeshData::new();
    mesh.create_mesh_section(0, SectionData::new(&QUAD, &QUAD_TRIS), false).unwrap();
    mesh
}

#[test]
fn positions_and_triangles_only_take_ue_defaults() {
    let mesh = quad_mesh();
    let section = mesh.section(0).unwrap();
    assert_eq!(section.vertex_count(), 4);
    assert_eq!(section.triangle_count(), 2);
    assert_eq!(section.triangles(), QUAD_TRIS);
    for (vertex, &position) in section.vertices().zip(&QUAD) {
        assert_eq!(vertex.position, position);
        assert_eq!(vertex.normal, Vec3::Z);
        assert_eq!(vertex.tangent, ProcMeshTangent::new(Vec3::X, false));
        assert_eq!(vertex.color, WHITE);
        assert_eq!(vertex.color, [255, 255, 255, 255]);
        for channel in 0..4 {
            assert_eq!(vertex.uv(channel), Some(Vec2::ZERO));
        }
        assert_eq!(vertex.binormal(), Vec3::Y);
    }
    assert!(section.visible());
    assert!(!section.enable_collision());
    assert_eq!(section.local_box(), Aabb::new(Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)));
}

#[test]
fn given_attributes_are_stored() {
    let normals = [Vec3::NEG_Z; 4];
    let tangents = [ProcMeshTangent::new(Vec3::Y, true); 4];
    let colors = [[1, 2, 3, 4]; 4];
    let uv = [Vec2::new(0.25, 0.5); 4];
    let mut mesh = ProcMeshData::new();
    let data = SectionData::new(&QUAD, &QUAD_TRIS).normals(&normals).tangents(&tangents).colors(&colors).uv(2, &uv);
    mesh.create_mesh_section(3, data, false).unwrap();
    let v = mesh.section(3).unwrap().vertex(2).unwrap();
    assert_eq!(
        v,
        ProcMeshVertex {
            position: QUAD[2],
            normal: Vec3::NEG_Z,
            tangent: ProcMeshTangent::new(Vec3::Y, true),
            color: [1, 2, 3, 4],
            uv2: Vec2::new(0.25, 0.5),
            ..ProcMeshVertex::DEFAULT
        }
    );
    // normal × tangent = -Z × Y = +X, flipped.
    assert_eq!(v.binormal(), Vec3::NEG_X);
    // Slots 0..3 exist but are empty, as in UE.
    assert_eq!(mesh.num_sections(), 4);
    assert!(mesh.section(0).is_none());
    assert_eq!(mesh.sections().map(|(i, _)| i).collect::<Vec<_>>(), vec![3]);
}

#[test]
fn linear_colors_are_srgb_encoded() {
    let colors = [
        LinearColor::new(0.5, 0.5, 0.5, 0.5),
        LinearColor::new(0.214, 0.0031308, 0.001, 1.0),
        LinearColor::new(-1.0, 2.0, 1.0, 0.0),
        LinearColor::WHITE,
    ];
    let mut mesh = ProcMeshData::new();
    mesh.create_mesh_section(0, SectionData::new(&QUAD, &QUAD_TRIS).linear_colors(&colors), false).unwrap();
    let stored: Vec<_> = mesh.section(0).unwrap().colors().to_vec();
    assert_eq!(stored, vec![[188, 188, 188, 127], [127, 10, 3, 255], [0, 255, 255, 0], [255, 255, 255, 255]]);

    let update = [LinearColor::BLACK; 4];
    let changes = mesh.update_mesh_section(0, SectionData::default().linear_colors(&update)).unwrap();
    assert_eq!(changes.dynamic_data, vec![SectionDirty { section: 0, attributes: VertexAttributes::COLOR }]);
    assert!(mesh.section(0).unwrap().vertices().all(|v| v.color == [0, 0, 0, 255]));
}

/// Each malformed create is rejected with its own error and changes nothing.
#[test]
fn malformed_creates_are_rejected_and_change_nothing() {
    let short_normals = [Vec3::Z; 3];
    let long_uvs = [Vec2::ZERO; 5];
    let short_colors = [WHITE; 1];
    let nan_normals = [Vec3::Z, Vec3::Z, Vec3::new(f32::NAN, 0.0, 1.0), Vec3::Z];
    let inf_uvs = [Vec2::ZERO, Vec2::new(0.0, f32::INFINITY), Vec2::ZERO, Vec2::ZERO];
    let nan_colors = [LinearColor::new(f32::NAN, 0.0, 0.0, 1.0); 4];
    let mut nan_positions = QUAD;
    nan_positions[1].z = f32::NAN;
    let bad_index = [0, 1, 2, 0, 2, 4];

    let cases: Vec<(SectionData<'_>, ProcMeshError)> = vec![
        (
            SectionData::new(&QUAD, &QUAD_TRIS).normals(&short_normals),
            ProcMeshError::AttributeLength { attribute: "normals", expected: 4, got: 3 },
        ),
        (SectionData::new(&QUAD, &QUAD_TRIS).uv(3, &long_uvs), ProcMeshError::AttributeLength { attribute: "uv3", expected: 4, got: 5 }),
        (
            SectionData::new(&QUAD, &QUAD_TRIS).colors(&short_colors),
            ProcMeshError::AttributeLength { attribute: "colors", expected: 4, got: 1 },
        ),
        (SectionData::new(&QUAD, &QUAD_TRIS[..5]), ProcMeshError::TrianglesNotMultipleOf3 { len: 5 }),
        (SectionData::new(&QUAD, &bad_index), ProcMeshError::IndexOutOfRange { triangle: 1, index: 4, vertex_count: 4 }),
        (SectionData::new(&nan_positions, &QUAD_TRIS), ProcMeshError::NonFinitePosition { vertex: 1 }),
        (SectionData::new(&QUAD, &QUAD_TRIS).normals(&nan_normals), ProcMeshError::NonFiniteAttribute { attribute: "normals", vertex: 2 }),
        (SectionData::new(&QUAD, &QUAD_TRIS).uv0(&inf_uvs), ProcMeshError::NonFiniteAttribute { attribute: "uv0", vertex: 1 }),
        (
            SectionData::new(&QUAD, &QUAD_TRIS).linear_colors(&nan_colors),
            ProcMeshError::NonFiniteAttribute { attribute: "colors", vertex: 0 },
        ),
        (SectionData::new(&[], &[0, 0, 0]), ProcMeshError::IndexOutOfRange { triangle: 0, index: 0, vertex_count: 0 }),
    ];

    for (data, expected) in cases {
        // Replacing the existing section 0 and creating a new section 1.
        for index in [0, 1] {
            let mut mesh = quad_mesh();
            let before = mesh.section(0).cloned();
            let result = mesh.create_mesh_section(index, data, true);
            assert_eq!(result, Err(expected.clone()), "section {index}");
            assert_eq!(mesh.section(0).cloned(), before, "section 0 changed");
            assert_eq!(mesh, quad_mesh(), "mesh changed for {expected}");
            assert_eq!(mesh.num_sections(), 1);
            #[cfg(feature = "collision")]
            assert!(mesh.cooked_collision().is_none());
        }
    }

    let mut mesh = quad_mesh();
    assert_eq!(
        mesh.create_mesh_section(MAX_SECTION_INDEX + 1, SectionData::new(&QUAD, &QUAD_TRIS), false),
        Err(ProcMeshError::SectionIndexTooLarge { index: MAX_SECTION_INDEX + 1, max: MAX_SECTION_INDEX })
    );
    assert_eq!(mesh, quad_mesh());
}

#[test]
fn update_with_a_different_vertex_count_names_both_counts() {
    let mut mesh = quad_mesh();
    let three = [Vec3::ONE; 3];
    let error = mesh.update_mesh_section(0, SectionData::positions(&three)).unwrap_err();
    assert_eq!(error, ProcMeshError::VertexCountMismatch { section: 0, previous: 4, new: 3 });
    let message = error.to_string();
    assert!(
        message.contains("Trying to update a procedural mesh component section with a different number of vertices [Previous: 4, New: 3]"),
        "{message}"
    );
    assert_eq!(mesh, quad_mesh());
}

#[test]
fn malformed_updates_are_rejected_and_change_nothing() {
    let short = [Vec3::Z; 2];
    let nan = [Vec3::new(0.0, f32::NAN, 0.0); 4];
    let new_positions = [Vec3::splat(5.0); 4];
    let cases: Vec<(usize, SectionData<'_>, ProcMeshError)> = vec![
        (
            0,
            SectionData::positions(&new_positions).normals(&short),
            ProcMeshError::AttributeLength { attribute: "normals", expected: 4, got: 2 },
        ),
        (0, SectionData::positions(&nan), ProcMeshError::NonFinitePosition { vertex: 0 }),
        (0, SectionData::default().normals(&nan), ProcMeshError::NonFiniteAttribute { attribute: "normals", vertex: 0 }),
        (0, SectionData::new(&new_positions, &QUAD_TRIS), ProcMeshError::TrianglesInUpdate { section: 0 }),
        (1, SectionData::positions(&new_positions), ProcMeshError::UnknownSection { index: 1 }),
    ];
    for (index, data, expected) in cases {
        let mut mesh = quad_mesh();
        assert_eq!(mesh.update_mesh_section(index, data), Err(expected));
        assert_eq!(mesh, quad_mesh());
    }
}

#[test]
fn update_with_the_same_count_sends_dynamic_data_and_bounds_without_proxy_rebuild() {
    let mut mesh = quad_mesh();
    let raised: Vec<Vec3> = QUAD.iter().map(|p| *p + Vec3::new(0.0, 0.0, 2.0)).collect();
    let normals = [Vec3::X; 4];
    let changes = mesh.update_mesh_section(0, SectionData::positions(&raised).normals(&normals)).unwrap();
    assert!(!changes.render_state, "an update must not recreate the proxy");
    assert!(changes.transform, "bounds moved");
    assert_eq!(changes.dynamic_data, vec![SectionDirty { section: 0, attributes: VertexAttributes::POSITION | VertexAttributes::NORMAL }]);
    assert!(!changes.collision_cooked && changes.collision_requested.is_none());
    let section = mesh.section(0).unwrap();
    assert_eq!(section.local_box(), Aabb::new(Vec3::new(0.0, 0.0, 2.0), Vec3::new(1.0, 1.0, 2.0)));
    assert_eq!(mesh.local_bounds(), section.local_box());
    assert!(section.vertices().all(|v| v.normal == Vec3::X && v.color == WHITE));
    assert_eq!(section.triangles(), QUAD_TRIS);

    // What the render thread receives: only the streams that changed.
    let update = mesh.section_update(0, changes.dynamic_data[0].attributes).unwrap();
    assert_eq!(update.positions.as_deref(), Some(&raised[..]));
    assert_eq!(update.normals.as_deref(), Some(&normals[..]));
    assert!(update.colors.is_none() && update.tangents.is_none());
    assert!(update.uvs.iter().all(Option::is_none));
    assert_eq!(update.local_box, section.local_box());

    // Same positions again: vertex data is sent, bounds did not move.
    let changes = mesh.update_mesh_section(0, SectionData::positions(&raised)).unwrap();
    assert!(!changes.transform && !changes.render_state);
    assert_eq!(changes.dynamic_data.len(), 1);

    // Nothing given: nothing to do.
    assert!(mesh.update_mesh_section(0, SectionData::default()).unwrap().is_empty());
}

#[test]
fn visibility_is_sent_to_the_existing_proxy() {
    let mut mesh = quad_mesh();
    assert!(mesh.is_mesh_section_visible(0));
    let changes = mesh.set_mesh_section_visible(0, false).unwrap();
    assert_eq!(changes, ChangeSet { visibility: vec![0], ..ChangeSet::NONE });
    assert!(!mesh.is_mesh_section_visible(0));
    assert!(mesh.set_mesh_section_visible(0, false).unwrap().is_empty());
    assert!(!mesh.is_mesh_section_visible(7));
    assert_eq!(mesh.set_mesh_section_visible(7, true), Err(ProcMeshError::UnknownSection { index: 7 }));
}

#[test]
fn clear_keeps_slots_and_bounds_follow() {
    let mut mesh = quad_mesh();
    let far: Vec<Vec3> = QUAD.iter().map(|p| *p + Vec3::splat(10.0)).collect();
    let changes = mesh.create_mesh_section(2, SectionData::new(&far, &QUAD_TRIS), false).unwrap();
    assert!(changes.render_state && changes.transform);
    assert_eq!(mesh.num_sections(), 3);
    assert_eq!(mesh.local_bounds(), Aabb::new(Vec3::ZERO, Vec3::new(11.0, 11.0, 10.0)));

    let changes = mesh.clear_mesh_section(2).unwrap();
    assert!(changes.render_state && changes.transform);
    assert_eq!(mesh.num_sections(), 3, "clearing keeps the slot");
    assert!(mesh.section(2).is_none());
    assert_eq!(mesh.local_bounds(), Aabb::new(Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)));
    assert_eq!(mesh.clear_mesh_section(2), Err(ProcMeshError::UnknownSection { index: 2 }));

    mesh.set_material(0, Some(MaterialRef(9))).unwrap();
    let changes = mesh.clear_all_mesh_sections().unwrap();
    assert!(changes.render_state);
    assert_eq!(mesh.num_sections(), 0);
    assert_eq!(mesh.local_bounds(), Aabb::ZERO, "empty mesh: zero box at origin");
    assert_eq!(mesh.material(0), Some(MaterialRef(9)), "materials survive");
    assert!(mesh.clear_all_mesh_sections().unwrap().is_empty());
}

#[test]
fn materials_recreate_the_proxy_only_when_changed() {
    let mut mesh = quad_mesh();
    assert_eq!(mesh.material(0), None);
    assert_eq!(mesh.set_material(0, Some(MaterialRef(1))).unwrap(), ChangeSet { render_state: true, ..ChangeSet::NONE });
    assert!(mesh.set_material(0, Some(MaterialRef(1))).unwrap().is_empty());
    mesh.set_material(5, Some(MaterialRef(2))).unwrap();
    assert_eq!(mesh.material(5), Some(MaterialRef(2)));
    mesh.set_material(5, None).unwrap();
    mesh.set_material(0, None).unwrap();
    assert_eq!(mesh, quad_mesh(), "unset materials leave no trace");
}

#[test]
fn an_empty_section_has_no_box() {
    let mut mesh = ProcMeshData::new();
    mesh.create_mesh_section(0, SectionData::default(), false).unwrap();
    assert!(mesh.section(0).unwrap().local_box().is_empty());
    assert_eq!(mesh.local_bounds(), Aabb::ZERO);
}

#[test]
fn large_sections_report_errors_past_the_first_block() {
    let n = 10_000;
    let mut positions: Vec<Vec3> = (0..n).map(|i| Vec3::new(i as f32, 0.0, 0.0)).collect();
    let triangles: Vec<u32> = (0..n as u32 - 2).flat_map(|i| [i, i + 1, i + 2]).collect();
    let mut mesh = ProcMeshData::new();
    mesh.create_mesh_section(0, SectionData::new(&positions, &triangles), false).unwrap();
    assert_eq!(mesh.local_bounds().max.x, (n - 1) as f32);
    assert_eq!(mesh.section(0).unwrap().vertex(n - 1).unwrap().position, positions[n - 1]);
    assert!(mesh.section(0).unwrap().vertex(n).is_none());
    positions[9_000].x = f32::INFINITY;
    let before = mesh.section(0).cloned();
    assert_eq!(mesh.update_mesh_section(0, SectionData::positions(&positions)), Err(ProcMeshError::NonFinitePosition { vertex: 9_000 }));
    assert_eq!(mesh.section(0).cloned(), before);
    let mut bad = triangles.clone();
    bad[3 * 7_000 + 2] = n as u32;
    assert_eq!(
        mesh.create_mesh_section(1, SectionData::new(&positions[..n], &bad), false),
        Err(ProcMeshError::IndexOutOfRange { triangle: 7_000, index: n as u32, vertex_count: n })
    );
}
