//! Collision through the public API: provider data, cooking, ray casts
//! against the cooked result, convex meshes and asynchronous cooking.

use std::sync::Arc;

use engine_core::collision::{
    BodyId, CollisionComplexity, CollisionDataProvider, CollisionScene, CookEvent, InlineExecutor, ManualExecutor,
};
use glam::{Affine3A, Vec2, Vec3};
use procmesh::{ProcMeshData, ProcMeshError, SectionData};

/// A unit quad in the XY plane at height `z`, offset along X by `x`,
/// facing +Z.
fn quad(x: f32, z: f32) -> [Vec3; 4] {
    [Vec3::new(x, 0.0, z), Vec3::new(x + 1.0, 0.0, z), Vec3::new(x + 1.0, 1.0, z), Vec3::new(x, 1.0, z)]
}
const QUAD_TRIS: [u32; 6] = [0, 1, 2, 0, 2, 3];

/// Two collision sections side by side along X: section 0 over [0, 1],
/// section 1 over [2, 3], and a section 2 without collision over [4, 5].
fn two_collision_sections(mesh: &mut ProcMeshData) {
    for (section, collide) in [(0, true), (1, true), (2, false)] {
        let positions = quad(2.0 * section as f32, 0.0);
        let changes = mesh.create_mesh_section(section, SectionData::new(&positions, &QUAD_TRIS), collide).unwrap();
        assert!(changes.render_state);
    }
}

/// A scene holding the mesh's body, and the complexity its traces use.
struct Traced(CollisionScene, CollisionComplexity);

fn scene_with(mesh: &ProcMeshData, complexity: CollisionComplexity) -> Traced {
    let mut scene = CollisionScene::new();
    scene.add_body(BodyId(1), Arc::clone(mesh.cooked_collision().expect("cooked")), Affine3A::IDENTITY).unwrap();
    Traced(scene, complexity)
}

/// A ray straight down onto the plane at (x, 0.5).
fn cast_down(Traced(scene, complexity): &Traced, x: f32) -> Option<engine_core::collision::RayHit> {
    scene.raycast(Vec3::new(x, 0.5, 10.0), Vec3::NEG_Z, 100.0, *complexity).unwrap()
}

#[test]
fn provider_rebases_indices_and_tags_sections() {
    let mut mesh = ProcMeshData::new();
    two_collision_sections(&mut mesh);
    assert!(mesh.contains_tri_mesh_data());
    let data = mesh.tri_mesh_data(false).unwrap();
    assert_eq!(data.vertices.len(), 8, "section 2 has no collision");
    assert_eq!(&data.vertices[..4], &quad(0.0, 0.0));
    assert_eq!(&data.vertices[4..], &quad(2.0, 0.0));
    assert_eq!(data.indices, vec![[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]]);
    assert_eq!(data.material_indices, vec![0, 0, 1, 1]);
    assert!(data.uvs.is_empty());
    assert_eq!(data.validate(), Ok(()));

    let uvs = [Vec2::new(0.5, 0.25); 4];
    let positions = quad(8.0, 0.0);
    mesh.create_mesh_section(4, SectionData::new(&positions, &QUAD_TRIS).uv0(&uvs), true).unwrap();
    let data = mesh.tri_mesh_data(true).unwrap();
    assert_eq!(data.uvs.len(), 1);
    assert_eq!(data.uvs[0].len(), 12);
    assert_eq!(&data.uvs[0][8..], &uvs);
    assert_eq!(&data.uvs[0][..8], &[Vec2::ZERO; 8]);
    assert_eq!(data.material_indices, vec![0, 0, 1, 1, 4, 4]);
}

#[test]
fn a_mesh_without_collision_sections_provides_nothing() {
    let mut mesh = ProcMeshData::new();
    let positions = quad(0.0, 0.0);
    mesh.create_mesh_section(0, SectionData::new(&positions, &QUAD_TRIS), false).unwrap();
    assert!(!mesh.contains_tri_mesh_data());
    assert!(mesh.tri_mesh_data(true).is_none());
    assert!(mesh.cooked_collision().is_none(), "nothing to cook");
}

#[test]
fn raycast_hits_the_right_section() {
    let mut mesh = ProcMeshData::new();
    two_collision_sections(&mut mesh);
    let scene = scene_with(&mesh, CollisionComplexity::Complex);

    let hit = cast_down(&scene, 0.5).expect("section 0");
    assert_eq!(hit.material_index, Some(0));
    assert!((hit.distance - 10.0).abs() < 1e-4);
    let hit = cast_down(&scene, 2.5).expect("section 1");
    assert_eq!(hit.material_index, Some(1));
    assert!(cast_down(&scene, 4.5).is_none(), "section 2 has no collision");
}

#[test]
fn updating_positions_recooks_collision_and_other_attributes_do_not() {
    let mut mesh = ProcMeshData::new();
    two_collision_sections(&mut mesh);
    let first = Arc::clone(mesh.cooked_collision().unwrap());

    let normals = [Vec3::X; 4];
    let changes = mesh.update_mesh_section(1, SectionData::default().normals(&normals)).unwrap();
    assert!(!changes.collision_cooked);
    assert!(Arc::ptr_eq(mesh.cooked_collision().unwrap(), &first));

    let raised = quad(2.0, 3.0);
    let changes = mesh.update_mesh_section(1, SectionData::positions(&raised)).unwrap();
    assert!(changes.collision_cooked && !changes.render_state);
    let scene = scene_with(&mesh, CollisionComplexity::Complex);
    let hit = cast_down(&scene, 2.5).unwrap();
    assert_eq!(hit.material_index, Some(1));
    assert!((hit.distance - 7.0).abs() < 1e-4, "hit the raised quad: {hit:?}");
    assert_eq!(mesh.body_setup().refit_count(), 1, "the cooked mesh was refitted in place, not cooked again");

    // A section without collision never re-cooks.
    let moved = quad(4.0, 1.0);
    let changes = mesh.update_mesh_section(2, SectionData::positions(&moved)).unwrap();
    assert!(!changes.collision_cooked);
}

#[test]
fn clearing_a_collision_section_removes_it_from_collision() {
    let mut mesh = ProcMeshData::new();
    two_collision_sections(&mut mesh);
    let changes = mesh.clear_mesh_section(0).unwrap();
    assert!(changes.collision_cooked);
    let scene = scene_with(&mesh, CollisionComplexity::Complex);
    assert!(cast_down(&scene, 0.5).is_none());
    assert_eq!(cast_down(&scene, 2.5).unwrap().material_index, Some(1));

    let changes = mesh.clear_all_mesh_sections().unwrap();
    assert!(changes.collision_cooked);
    let scene = scene_with(&mesh, CollisionComplexity::Complex);
    assert!(cast_down(&scene, 2.5).is_none());
}

#[test]
fn convex_meshes_and_complex_as_simple_choose_what_the_ray_hits() {
    let mut mesh = ProcMeshData::new();
    two_collision_sections(&mut mesh);
    // A box over section 0, from z = 1 to z = 2.
    let cube: Vec<Vec3> = (0..8).map(|c| Vec3::new((c & 1) as f32, ((c >> 1) & 1) as f32, 1.0 + ((c >> 2) & 1) as f32)).collect();
    let changes = mesh.add_collision_convex_mesh(&cube).unwrap();
    assert!(changes.collision_cooked && !changes.render_state);
    assert_eq!(mesh.collision_convex_meshes().len(), 1);

    // Simple queries hit the convex box (top at z = 2), complex ones the
    // section's triangles (z = 0).
    let simple = scene_with(&mesh, CollisionComplexity::Simple);
    let hit = cast_down(&simple, 0.5).unwrap();
    assert!((hit.distance - 8.0).abs() < 1e-4, "{hit:?}");
    assert_eq!(hit.material_index, None, "a convex element, not a triangle");
    assert!(cast_down(&simple, 2.5).is_none(), "no convex over section 1");
    let complex = scene_with(&mesh, CollisionComplexity::Complex);
    assert_eq!(cast_down(&complex, 0.5).unwrap().material_index, Some(0));

    // Complex as simple: simple queries now hit the triangles.
    let changes = mesh.set_use_complex_as_simple_collision(true).unwrap();
    assert!(changes.collision_cooked);
    assert!(mesh.use_complex_as_simple_collision());
    let simple = scene_with(&mesh, CollisionComplexity::Simple);
    let hit = cast_down(&simple, 0.5).unwrap();
    assert!((hit.distance - 10.0).abs() < 1e-4, "{hit:?}");
    assert_eq!(hit.material_index, Some(0));
    assert_eq!(cast_down(&simple, 2.5).unwrap().material_index, Some(1));
    assert!(mesh.set_use_complex_as_simple_collision(true).unwrap().is_empty());

    // Back, then the convex meshes cleared: simple queries hit nothing.
    mesh.set_use_complex_as_simple_collision(false).unwrap();
    mesh.clear_collision_convex_meshes().unwrap();
    assert!(mesh.collision_convex_meshes().is_empty());
    let simple = scene_with(&mesh, CollisionComplexity::Simple);
    assert!(cast_down(&simple, 0.5).is_none());
}

#[test]
fn bad_convex_meshes_are_rejected_and_change_nothing() {
    let mut mesh = ProcMeshData::new();
    two_collision_sections(&mut mesh);
    let cube: Vec<Vec3> = (0..8).map(|c| Vec3::new((c & 1) as f32, ((c >> 1) & 1) as f32, ((c >> 2) & 1) as f32)).collect();
    mesh.add_collision_convex_mesh(&cube).unwrap();
    let cooked = Arc::clone(mesh.cooked_collision().unwrap());

    let flat = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(1.0, 1.0, 0.0)];
    let nan = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.0, f32::NAN, 1.0)];
    for points in [&flat[..], &nan[..], &flat[..3]] {
        let result = mesh.add_collision_convex_mesh(points);
        assert!(matches!(result, Err(ProcMeshError::InvalidConvexMesh { element: 1, .. })), "{result:?}");
        assert_eq!(mesh.collision_convex_meshes().len(), 1);
        assert!(Arc::ptr_eq(mesh.cooked_collision().unwrap(), &cooked));
    }
    let result = mesh.set_collision_convex_meshes(&[cube.clone(), flat.to_vec()]);
    assert!(matches!(result, Err(ProcMeshError::InvalidConvexMesh { element: 1, .. })));
    assert_eq!(mesh.collision_convex_meshes().len(), 1);

    let changes = mesh.set_collision_convex_meshes(&[cube.clone(), cube.clone()]).unwrap();
    assert!(changes.collision_cooked);
    assert_eq!(mesh.cooked_collision().unwrap().convex_count(), 2);
}

/// With async cooking, a cook superseded by a newer one never lands, even
/// if it finishes last.
#[test]
fn superseded_async_cook_never_lands() {
    let executor = Arc::new(ManualExecutor::new());
    let mut mesh = ProcMeshData::with_cook_executor(executor.clone());
    mesh.set_use_async_cooking(true);
    assert!(mesh.use_async_cooking());

    let low = quad(0.0, 0.0);
    let changes = mesh.create_mesh_section(0, SectionData::new(&low, &QUAD_TRIS), true).unwrap();
    let old = changes.collision_requested.expect("async request");
    assert!(!changes.collision_cooked);
    assert!(mesh.cooked_collision().is_none(), "nothing lands before poll");

    let high = quad(0.0, 5.0);
    let changes = mesh.update_mesh_section(0, SectionData::positions(&high)).unwrap();
    let new = changes.collision_requested.expect("async request");
    assert!(new > old);
    assert_eq!(executor.pending(), vec![old, new]);

    // The newer cook finishes first and lands.
    executor.take(new).unwrap().run();
    match mesh.poll_collision() {
        Some(CookEvent::Finished { generation, .. }) => assert_eq!(generation, new),
        other => panic!("expected the newer cook, got {other:?}"),
    }
    let landed = Arc::clone(mesh.cooked_collision().unwrap());

    // The older one finishes afterwards: it is dropped, nothing changes.
    executor.take(old).unwrap().run();
    assert!(mesh.poll_collision().is_none());
    assert!(Arc::ptr_eq(mesh.cooked_collision().unwrap(), &landed));
    assert_eq!(mesh.body_setup().cooker().in_flight(), 0);

    let scene = scene_with(&mesh, CollisionComplexity::Complex);
    let hit = cast_down(&scene, 0.5).unwrap();
    assert!((hit.distance - 5.0).abs() < 1e-4, "the newer data: {hit:?}");
}

#[test]
fn inline_async_cook_lands_at_the_next_poll() {
    let mut mesh = ProcMeshData::with_cook_executor(Arc::new(InlineExecutor));
    mesh.set_use_async_cooking(true);
    two_collision_sections(&mut mesh);
    assert!(mesh.cooked_collision().is_none());
    assert!(matches!(mesh.poll_collision(), Some(CookEvent::Finished { .. })));
    let scene = scene_with(&mesh, CollisionComplexity::Complex);
    assert_eq!(cast_down(&scene, 2.5).unwrap().material_index, Some(1));
}

#[test]
fn hit_uvs_come_from_uv0_when_supported() {
    let mut mesh = ProcMeshData::new();
    let positions = quad(0.0, 0.0);
    let uvs = [Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0), Vec2::new(1.0, 1.0), Vec2::new(0.0, 1.0)];
    mesh.create_mesh_section(0, SectionData::new(&positions, &QUAD_TRIS).uv0(&uvs), true).unwrap();
    assert_eq!(mesh.cooked_collision().unwrap().uv_channel_count(), 0);
    let changes = mesh.set_support_uv_from_hit_results(true).unwrap();
    assert!(changes.collision_cooked);
    let Traced(scene, _) = scene_with(&mesh, CollisionComplexity::Complex);
    let hit = scene.raycast(Vec3::new(0.25, 0.75, 1.0), Vec3::NEG_Z, 10.0, CollisionComplexity::Complex).unwrap().unwrap();
    let uv = scene.hit_uv(&hit, 0).unwrap();
    assert!((uv - Vec2::new(0.25, 0.75)).length() < 1e-4, "{uv}");

    // Updating UV0 re-cooks when UVs are kept.
    let flipped: Vec<Vec2> = uvs.iter().map(|uv| Vec2::new(1.0 - uv.x, uv.y)).collect();
    let changes = mesh.update_mesh_section(0, SectionData::default().uv0(&flipped)).unwrap();
    assert!(changes.collision_cooked);
    let Traced(scene, _) = scene_with(&mesh, CollisionComplexity::Complex);
    let uv = scene.hit_uv(&hit, 0).unwrap();
    assert!((uv - Vec2::new(0.75, 0.75)).length() < 1e-4, "{uv}");
}

/// A vertex update refits the cooked triangle mesh in place (UE's
/// `UpdateTriMeshVertices`) and collides exactly as a mesh cooked from
/// scratch with the same vertices: a grid of rays gives the same hits.
#[test]
fn a_refitted_collision_mesh_collides_as_one_cooked_from_scratch() {
    const N: usize = 24;
    let grid = |t: f32| -> Vec<Vec3> {
        (0..N * N)
            .map(|i| Vec3::new((i % N) as f32, (i / N) as f32, ((i % N) as f32 * 0.7 + t).sin() * 2.0 + (i / N) as f32 * 0.1))
            .collect()
    };
    let triangles: Vec<u32> = (0..N - 1)
        .flat_map(|y| (0..N - 1).map(move |x| (x, y)))
        .flat_map(|(x, y)| {
            let i = (y * N + x) as u32;
            let n = N as u32;
            [i, i + 1, i + n + 1, i, i + n + 1, i + n]
        })
        .collect();
    let mut refitted = ProcMeshData::new();
    refitted.create_mesh_section(0, SectionData::new(&grid(0.0), &triangles), true).unwrap();
    let waved = grid(1.3);
    refitted.update_mesh_section(0, SectionData::positions(&waved)).unwrap();
    assert_eq!(refitted.body_setup().refit_count(), 1);
    let mut fresh = ProcMeshData::new();
    fresh.create_mesh_section(0, SectionData::new(&waved, &triangles), true).unwrap();
    let (a, b) = (scene_with(&refitted, CollisionComplexity::Complex), scene_with(&fresh, CollisionComplexity::Complex));
    let mut hits = 0;
    for i in 0..200 {
        let x = (i % 20) as f32 * 1.15 + 0.05;
        let y = (i / 20) as f32 * 2.3 + 0.05;
        let cast = |Traced(scene, complexity): &Traced| {
            scene.raycast(Vec3::new(x, y, 10.0), Vec3::NEG_Z, 100.0, *complexity).unwrap().map(|h| (h.distance, h.material_index))
        };
        let (ha, hb) = (cast(&a), cast(&b));
        assert_eq!(ha, hb, "ray {i}");
        hits += usize::from(ha.is_some());
    }
    assert!(hits > 0, "the rays hit the mesh");
}
