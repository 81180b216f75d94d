//! Collision data, cooking and ray casts, through the public API only.

use std::sync::Arc;
use std::time::{Duration, Instant};

use engine_core::collision::{
    BodyId, BodySetup, CollisionComplexity, CollisionDataProvider, CollisionError, CollisionScene, ConvexElement, CookEvent,
    CookedCollision, InlineExecutor, ManualExecutor, RayHit, TriMeshCollisionData,
};
use glam::{Affine3A, Quat, Vec2, Vec3};
use proptest::prelude::*;

const EPS: f32 = 1e-4;

fn assert_vec_near(actual: Vec3, expected: Vec3) {
    assert!((actual - expected).abs().max_element() < EPS, "expected {expected}, got {actual}");
}

/// Triangles of an axis-aligned box, two per face, wound outward.
///
/// Face `f` (in order +X, -X, +Y, -Y, +Z, -Z) owns triangles `2f` and `2f + 1`
/// and, with `material_per_face`, material index `f`. On the face of axis
/// `a`, with `u` the axis `a + 1` and `v` the axis `a + 2` (mod 3), triangle
/// `2f` covers the half where the normalised `v <= u`.
fn box_mesh(center: Vec3, half: Vec3, material_per_face: bool) -> TriMeshCollisionData {
    let mut data = TriMeshCollisionData::new();
    for face in 0..6u16 {
        let axis = usize::from(face / 2);
        let sign = if face % 2 == 0 { 1.0 } else { -1.0 };
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        let corner = |cu: f32, cv: f32| {
            let mut p = Vec3::ZERO;
            p[axis] = sign;
            p[u] = cu;
            p[v] = cv;
            center + p * half
        };
        let quad = [corner(-1.0, -1.0), corner(1.0, -1.0), corner(1.0, 1.0), corner(-1.0, 1.0)];
        let mut normal = Vec3::ZERO;
        normal[axis] = sign;
        let outward = (quad[1] - quad[0]).cross(quad[2] - quad[0]).dot(normal) > 0.0;
        let tris = if outward { [[0, 1, 2], [0, 2, 3]] } else { [[0, 2, 1], [0, 3, 2]] };
        data.push_section(&quad, &tris, if material_per_face { face } else { 0 }).expect("valid section");
    }
    data
}

/// A component-like provider: a unit cube around the origin.
struct UnitCube;

impl CollisionDataProvider for UnitCube {
    fn contains_tri_mesh_data(&self) -> bool {
        true
    }

    fn tri_mesh_data(&self, _want_uvs: bool) -> Option<TriMeshCollisionData> {
        Some(box_mesh(Vec3::ZERO, Vec3::splat(0.5), true))
    }
}

/// A provider with no triangles (e.g. a component with collision off).
struct NoTriangles;

impl CollisionDataProvider for NoTriangles {
    fn contains_tri_mesh_data(&self) -> bool {
        false
    }

    fn tri_mesh_data(&self, _want_uvs: bool) -> Option<TriMeshCollisionData> {
        None
    }
}

fn cooked_unit_cube() -> Arc<CookedCollision> {
    let mut setup = BodySetup::with_executor(Arc::new(InlineExecutor));
    setup.use_complex_as_simple = true;
    setup.cook(&UnitCube).expect("cube cooks")
}

fn scene_with(bodies: &[(u64, Arc<CookedCollision>, Affine3A)]) -> CollisionScene {
    let mut scene = CollisionScene::new();
    for (id, collision, transform) in bodies {
        scene.add_body(BodyId(*id), Arc::clone(collision), *transform).expect("body added");
    }
    scene
}

/// A simple trace (the default kind of UE's line traces).
fn cast(scene: &CollisionScene, origin: Vec3, dir: Vec3) -> Option<RayHit> {
    cast_with(scene, origin, dir, CollisionComplexity::Simple)
}

fn cast_with(scene: &CollisionScene, origin: Vec3, dir: Vec3, complexity: CollisionComplexity) -> Option<RayHit> {
    scene.raycast(origin, dir, f32::INFINITY, complexity).expect("valid ray")
}

#[test]
fn ray_down_onto_unit_cube_hits_top_face() {
    let cube = cooked_unit_cube();
    assert_eq!(cube.triangle_count(), 12);
    let scene = scene_with(&[(7, cube, Affine3A::IDENTITY)]);

    let hit = cast(&scene, Vec3::new(0.1, 5.0, 0.2), Vec3::NEG_Y).expect("hits the cube");
    assert_eq!(hit.body, BodyId(7));
    assert_vec_near(hit.position, Vec3::new(0.1, 0.5, 0.2));
    assert_vec_near(hit.normal, Vec3::Y);
    assert!((hit.distance - 4.5).abs() < EPS);
    // +Y is face 2; at (u, v) = (z, x) = (0.7, 0.6) normalised, v < u.
    assert_eq!(hit.triangle_index, Some(4));
    assert_eq!(hit.material_index, Some(2));

    // The other half of the same face.
    let hit = cast(&scene, Vec3::new(0.3, 5.0, -0.2), Vec3::NEG_Y).unwrap();
    assert_eq!(hit.triangle_index, Some(5));
    assert_eq!(hit.material_index, Some(2));

    // From the side, with a direction that is not unit length.
    let hit = cast(&scene, Vec3::new(-3.0, 0.1, 0.1), Vec3::new(10.0, 0.0, 0.0)).unwrap();
    assert_vec_near(hit.position, Vec3::new(-0.5, 0.1, 0.1));
    assert_vec_near(hit.normal, Vec3::NEG_X);
    assert!((hit.distance - 2.5).abs() < EPS);
    assert_eq!(hit.material_index, Some(1));
}

#[test]
fn ray_from_inside_tri_mesh_hits_the_inside_with_normal_against_the_ray() {
    let scene = scene_with(&[(1, cooked_unit_cube(), Affine3A::IDENTITY)]);
    let hit = cast(&scene, Vec3::ZERO, Vec3::Y).unwrap();
    assert_vec_near(hit.position, Vec3::new(0.0, 0.5, 0.0));
    assert_vec_near(hit.normal, Vec3::NEG_Y);
    assert_eq!(hit.material_index, Some(2));
}

#[test]
fn misses_return_none() {
    let scene = scene_with(&[(1, cooked_unit_cube(), Affine3A::IDENTITY)]);
    // Beside the cube.
    assert_eq!(cast(&scene, Vec3::new(0.6, 5.0, 0.0), Vec3::NEG_Y), None);
    // Pointing away.
    assert_eq!(cast(&scene, Vec3::new(0.0, 5.0, 0.0), Vec3::Y), None);
    // Too short; and exactly long enough.
    assert_eq!(scene.raycast(Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y, 4.4, CollisionComplexity::Simple).unwrap(), None);
    let hit = scene.raycast(Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y, 4.5, CollisionComplexity::Simple).unwrap();
    assert!(hit.is_some_and(|h| (h.distance - 4.5).abs() < EPS));
    // An empty scene.
    assert_eq!(cast(&CollisionScene::new(), Vec3::ZERO, Vec3::X), None);
}

#[test]
fn bad_rays_are_rejected() {
    let scene = scene_with(&[(1, cooked_unit_cube(), Affine3A::IDENTITY)]);
    assert!(matches!(
        scene.raycast(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::X, 1.0, CollisionComplexity::Simple),
        Err(CollisionError::NonFiniteRay { .. })
    ));
    assert!(matches!(
        scene.raycast(Vec3::ZERO, Vec3::new(0.0, f32::INFINITY, 0.0), 1.0, CollisionComplexity::Simple),
        Err(CollisionError::NonFiniteRay { .. })
    ));
    assert_eq!(scene.raycast(Vec3::ZERO, Vec3::ZERO, 1.0, CollisionComplexity::Simple), Err(CollisionError::ZeroRayDirection));
    assert_eq!(scene.raycast(Vec3::ZERO, Vec3::X, -1.0, CollisionComplexity::Simple), Err(CollisionError::InvalidMaxDistance(-1.0)));
    assert!(matches!(
        scene.raycast(Vec3::ZERO, Vec3::X, f32::NAN, CollisionComplexity::Simple),
        Err(CollisionError::InvalidMaxDistance(d)) if d.is_nan()
    ));
}

#[test]
fn nearest_of_two_bodies_wins() {
    let cube = cooked_unit_cube();
    let low = Affine3A::IDENTITY;
    let high = Affine3A::from_translation(Vec3::new(0.0, 3.0, 0.0));
    for order in [[(1, low), (2, high)], [(2, high), (1, low)]] {
        let mut scene = scene_with(&order.map(|(id, t)| (id, Arc::clone(&cube), t)));
        let hit = cast(&scene, Vec3::new(0.0, 10.0, 0.0), Vec3::NEG_Y).unwrap();
        assert_eq!(hit.body, BodyId(2));
        assert_vec_near(hit.position, Vec3::new(0.0, 3.5, 0.0));
        // From below the low one wins.
        let hit = cast(&scene, Vec3::new(0.0, -10.0, 0.0), Vec3::Y).unwrap();
        assert_eq!(hit.body, BodyId(1));
        assert_vec_near(hit.normal, Vec3::NEG_Y);

        scene.remove_body(BodyId(2)).unwrap();
        let hit = cast(&scene, Vec3::new(0.0, 10.0, 0.0), Vec3::NEG_Y).unwrap();
        assert_eq!(hit.body, BodyId(1));
        assert_vec_near(hit.position, Vec3::new(0.0, 0.5, 0.0));
    }
}

#[test]
fn translated_rotated_scaled_body_is_hit_where_it_is() {
    // Scale (2, 4, 1), then 90 degrees about +Y ((x, y, z) -> (z, y, -x)),
    // then move to (10, 1, -3): a box with half extents (0.5, 2, 1).
    let transform = Affine3A::from_scale_rotation_translation(
        Vec3::new(2.0, 4.0, 1.0),
        Quat::from_rotation_y(std::f32::consts::FRAC_PI_2),
        Vec3::new(10.0, 1.0, -3.0),
    );
    let mut scene = scene_with(&[(3, cooked_unit_cube(), transform)]);
    let bounds = scene.body_bounds(BodyId(3)).unwrap();
    assert!(bounds.min.abs_diff_eq(Vec3::new(9.5, -1.0, -4.0), 1e-3), "{bounds:?}");
    assert!(bounds.max.abs_diff_eq(Vec3::new(10.5, 3.0, -2.0), 1e-3), "{bounds:?}");

    let hit = cast(&scene, Vec3::new(10.2, 10.0, -3.2), Vec3::NEG_Y).unwrap();
    assert_vec_near(hit.position, Vec3::new(10.2, 3.0, -3.2));
    assert_vec_near(hit.normal, Vec3::Y);
    assert!((hit.distance - 7.0).abs() < EPS);
    // Local point (0.1, 0.5, 0.2): the same triangle as the untransformed test.
    assert_eq!(hit.triangle_index, Some(4));
    assert_eq!(hit.material_index, Some(2));

    // World +X is the local +Z face (face 4).
    let hit = cast(&scene, Vec3::new(20.0, 1.5, -3.2), Vec3::NEG_X).unwrap();
    assert_vec_near(hit.position, Vec3::new(10.5, 1.5, -3.2));
    assert_vec_near(hit.normal, Vec3::X);
    assert_eq!(hit.material_index, Some(4));

    // Where the unscaled cube would be, there is nothing now.
    assert_eq!(cast(&scene, Vec3::new(0.0, 10.0, 0.0), Vec3::NEG_Y), None);

    // Moving the body moves the hit.
    scene.set_transform(BodyId(3), Affine3A::from_translation(Vec3::new(0.0, 2.0, 0.0))).unwrap();
    let hit = cast(&scene, Vec3::new(0.0, 10.0, 0.0), Vec3::NEG_Y).unwrap();
    assert_vec_near(hit.position, Vec3::new(0.0, 2.5, 0.0));
}

#[test]
fn sheared_body_normal_stays_perpendicular_to_the_surface() {
    // Rotate 45 degrees about Z, then stretch along world X: the cube becomes
    // a parallelepiped whose faces are not at 45 degrees any more, so a
    // normal transformed like a position would be wrong.
    let transform = Affine3A::from_scale(Vec3::new(3.0, 1.0, 1.0)) * Affine3A::from_rotation_z(std::f32::consts::FRAC_PI_4);
    let scene = scene_with(&[(1, cooked_unit_cube(), transform)]);
    let hit = cast(&scene, Vec3::new(0.3, 10.0, 0.1), Vec3::NEG_Y).unwrap();
    let m = transform.matrix3;
    // The hit is on local +X or +Y; both edges of that face must be
    // perpendicular to the normal.
    let local = transform.inverse().transform_point3(hit.position);
    let axis = if (local.x - 0.5).abs() < EPS { 0 } else { 1 };
    assert!((local[axis] - 0.5).abs() < EPS, "local hit {local}");
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    for edge_axis in [u, v] {
        let mut edge = Vec3::ZERO;
        edge[edge_axis] = 1.0;
        let world_edge = Vec3::from(m * glam::Vec3A::from(edge)).normalize();
        assert!(hit.normal.dot(world_edge).abs() < EPS, "normal {} edge {world_edge}", hit.normal);
    }
    assert!(hit.normal.dot(Vec3::NEG_Y) < 0.0);
    assert!((hit.normal.length() - 1.0).abs() < EPS);
}

#[test]
fn simple_queries_hit_convex_elements_unless_complex_is_used_as_simple() {
    let mut setup = BodySetup::new();
    setup.add_convex_element(ConvexElement::cuboid(Vec3::splat(-1.0), Vec3::splat(1.0))).unwrap();
    let origin = Vec3::new(0.2, 5.0, 0.1);

    let convex = setup.cook(&UnitCube).unwrap();
    assert_eq!(convex.convex_count(), 1);
    assert!(convex.has_tri_mesh());
    let mut scene = scene_with(&[(1, Arc::clone(&convex), Affine3A::IDENTITY)]);
    let hit = cast(&scene, origin, Vec3::NEG_Y).unwrap();
    assert_vec_near(hit.position, Vec3::new(0.2, 1.0, 0.1));
    assert_vec_near(hit.normal, Vec3::Y);
    assert_eq!((hit.triangle_index, hit.material_index), (None, None));

    // Complex queries on the same cook hit the triangles.
    let hit = cast_with(&scene, origin, Vec3::NEG_Y, CollisionComplexity::Complex).unwrap();
    assert_vec_near(hit.position, Vec3::new(0.2, 0.5, 0.1));
    assert_eq!(hit.material_index, Some(2));

    setup.use_complex_as_simple = true;
    let complex = setup.cook(&UnitCube).unwrap();
    scene.set_collision(BodyId(1), complex).unwrap();
    let hit = cast(&scene, origin, Vec3::NEG_Y).unwrap();
    assert_vec_near(hit.position, Vec3::new(0.2, 0.5, 0.1));
    assert!(hit.triangle_index.is_some());
    assert_eq!(hit.material_index, Some(2));

    // Without triangles, complex queries fall back to the convex elements.
    setup.use_complex_as_simple = false;
    let only_convex = setup.cook(&NoTriangles).unwrap();
    assert!(!only_convex.has_tri_mesh());
    scene.set_collision(BodyId(1), only_convex).unwrap();
    let hit = cast_with(&scene, origin, Vec3::NEG_Y, CollisionComplexity::Complex).unwrap();
    assert_vec_near(hit.position, Vec3::new(0.2, 1.0, 0.1));
}

#[test]
fn convex_hull_drops_interior_points_and_rejects_flat_or_bad_elements() {
    let mut setup = BodySetup::new();
    let mut points = ConvexElement::cuboid(Vec3::ZERO, Vec3::ONE).points;
    points.push(Vec3::splat(0.5));
    setup.set_convex_elements(vec![ConvexElement::new(points)]).unwrap();
    let cooked = setup.cook(&NoTriangles).unwrap();
    assert_eq!(cooked.convex_hull_points(0).unwrap().len(), 8);

    assert!(matches!(
        setup.add_convex_element(ConvexElement::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])),
        Err(CollisionError::DegenerateConvex { element: 1, .. })
    ));
    assert!(matches!(
        setup.add_convex_element(ConvexElement::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::NAN])),
        Err(CollisionError::NonFiniteConvexPoint { element: 1, point: 3, .. })
    ));
    assert_eq!(setup.convex_elements().len(), 1, "rejected elements are not added");

    // Coplanar points pass the cheap checks and fail when hulled; the
    // previous cook stays.
    let flat = ConvexElement::new(vec![Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::new(1.0, 0.0, 1.0)]);
    setup.add_convex_element(flat).unwrap();
    assert!(matches!(setup.cook(&NoTriangles), Err(CollisionError::DegenerateConvex { element: 1, .. })));
    assert!(Arc::ptr_eq(setup.cooked().unwrap(), &cooked));
}

#[test]
fn invalid_provider_data_is_rejected_and_previous_cook_stays() {
    let mut setup = BodySetup::new();
    let good = setup.cook(&UnitCube).unwrap();

    let mut bad_index = box_mesh(Vec3::ZERO, Vec3::ONE, false);
    bad_index.indices[5] = [0, 1, 99];
    assert_eq!(setup.cook(&bad_index).unwrap_err(), CollisionError::IndexOutOfRange { triangle: 5, index: 99, vertex_count: 24 });
    assert!(Arc::ptr_eq(setup.cooked().unwrap(), &good));

    let mut bad_materials = box_mesh(Vec3::ZERO, Vec3::ONE, false);
    bad_materials.material_indices.pop();
    assert_eq!(setup.cook(&bad_materials).unwrap_err(), CollisionError::MaterialCountMismatch { material_count: 11, triangle_count: 12 });

    let mut nan = box_mesh(Vec3::ZERO, Vec3::ONE, false);
    nan.vertices[3].z = f32::NAN;
    assert!(matches!(setup.cook(&nan), Err(CollisionError::NonFiniteVertex { vertex: 3, .. })));

    // Async requests with bad data are refused before anything is queued.
    assert!(setup.cook_async(&nan).is_err());
    assert_eq!(setup.cooker().in_flight(), 0);
    assert!(setup.apply_finished().is_none());
    assert!(Arc::ptr_eq(setup.cooked().unwrap(), &good));
}

fn cube_of_half(half: f32) -> TriMeshCollisionData {
    box_mesh(Vec3::ZERO, Vec3::splat(half), true)
}

fn top_of(collision: &Arc<CookedCollision>) -> f32 {
    let scene = scene_with(&[(1, Arc::clone(collision), Affine3A::IDENTITY)]);
    scene.raycast(Vec3::new(0.0, 100.0, 0.0), Vec3::NEG_Y, f32::INFINITY, CollisionComplexity::Simple).unwrap().unwrap().position.y
}

#[test]
fn superseded_async_cook_finishing_last_is_never_applied() {
    let executor = Arc::new(ManualExecutor::new());
    let mut setup = BodySetup::with_executor(executor.clone());
    setup.use_complex_as_simple = true;

    let old = setup.cook_async(&cube_of_half(1.0)).unwrap();
    let new = setup.cook_async(&cube_of_half(2.0)).unwrap();
    assert!(new > old);
    assert_eq!(executor.pending(), vec![old, new]);

    // The newer cook finishes first and is applied.
    executor.take(new).unwrap().run();
    match setup.apply_finished() {
        Some(CookEvent::Finished { generation, collision }) => {
            assert_eq!(generation, new);
            assert!((top_of(&collision) - 2.0).abs() < EPS);
        }
        other => panic!("expected the new cook, got {other:?}"),
    }
    let applied = Arc::clone(setup.cooked().unwrap());

    // The older one runs afterwards: it sees it is aborted and never lands.
    let job = executor.take(old).unwrap();
    assert!(job.is_aborted());
    job.run();
    assert!(setup.apply_finished().is_none());
    assert!(Arc::ptr_eq(setup.cooked().unwrap(), &applied));
    let stats = setup.cooker().stats();
    assert_eq!((stats.requested, stats.completed, stats.aborted), (2, 1, 1));
    assert_eq!(setup.cooker().in_flight(), 0);
}

#[test]
fn cook_superseded_while_cooking_is_dropped_after_cooking() {
    let executor = Arc::new(ManualExecutor::new());
    let mut setup = BodySetup::with_executor(executor.clone());
    setup.use_complex_as_simple = true;

    let old = setup.cook_async(&cube_of_half(1.0)).unwrap();
    // The worker starts the old cook while it is still the newest...
    let cooking = executor.take(old).unwrap().cook();
    // ...a newer request arrives before it delivers...
    let new = setup.cook_async(&cube_of_half(3.0)).unwrap();
    // ...and the old result comes back first: it must not be applied.
    cooking.deliver();
    assert!(setup.apply_finished().is_none());
    assert!(setup.cooked().is_none());

    executor.run_all();
    match setup.apply_finished() {
        Some(CookEvent::Finished { generation, .. }) => assert_eq!(generation, new),
        other => panic!("expected the new cook, got {other:?}"),
    }
    assert!((top_of(setup.cooked().unwrap()) - 3.0).abs() < EPS);
}

#[test]
fn sync_cook_aborts_pending_async_cooks() {
    let executor = Arc::new(ManualExecutor::new());
    let mut setup = BodySetup::with_executor(executor.clone());
    setup.use_complex_as_simple = true;
    setup.cook_async(&cube_of_half(1.0)).unwrap();
    let sync = setup.cook(&cube_of_half(4.0)).unwrap();
    executor.run_all();
    assert!(setup.apply_finished().is_none());
    assert!(Arc::ptr_eq(setup.cooked().unwrap(), &sync));
}

#[test]
fn async_cook_failing_on_the_worker_keeps_previous_collision() {
    let executor = Arc::new(ManualExecutor::new());
    let mut setup = BodySetup::with_executor(executor.clone());
    let good = setup.cook(&UnitCube).unwrap();
    // Coplanar: passes the up-front checks, fails in the hull builder.
    setup.add_convex_element(ConvexElement::new(vec![Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::new(1.0, 0.0, 1.0)])).unwrap();
    let generation = setup.cook_async(&UnitCube).unwrap();
    executor.run_all();
    match setup.apply_finished() {
        Some(CookEvent::Failed { generation: g, error }) => {
            assert_eq!(g, generation);
            assert!(matches!(error, CollisionError::DegenerateConvex { element: 0, .. }));
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    assert!(Arc::ptr_eq(setup.cooked().unwrap(), &good));
}

#[test]
fn async_cooks_on_the_thread_pool_end_with_the_newest() {
    let mut setup = BodySetup::new();
    setup.use_complex_as_simple = true;
    let mut last = 0;
    for i in 1..=8 {
        last = setup.cook_async(&cube_of_half(i as f32)).unwrap();
    }
    // Wait (bounded) for every job to report back; whatever order they ran
    // in, only the last request may be applied.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut applied = Vec::new();
    while setup.cooker().in_flight() > 0 {
        assert!(Instant::now() < deadline, "cooks did not finish");
        if let Some(event) = setup.apply_finished() {
            applied.push(event);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    applied.extend(setup.apply_finished());
    assert_eq!(applied.len(), 1, "{applied:?}");
    assert!(matches!(applied[0], CookEvent::Finished { generation, .. } if generation == last));
    assert!((top_of(setup.cooked().unwrap()) - 8.0).abs() < EPS);
    let stats = setup.cooker().stats();
    assert_eq!(stats.completed + stats.aborted + stats.discarded, 8);
}

#[test]
fn material_indices_of_sections_come_through() {
    // Three quads side by side along X, facing +Y: sections 0, 1, 2, with
    // materials 10, 11, 12.
    let mut data = TriMeshCollisionData::new();
    for section in 0..3u16 {
        let x = f32::from(section) * 2.0;
        let quad = [Vec3::new(x, 0.0, 0.0), Vec3::new(x, 0.0, 1.0), Vec3::new(x + 1.0, 0.0, 1.0), Vec3::new(x + 1.0, 0.0, 0.0)];
        data.push_section(&quad, &[[0, 1, 2], [0, 2, 3]], 10 + section).expect("valid section");
    }
    let mut setup = BodySetup::new();
    setup.use_complex_as_simple = true;
    let cooked = setup.cook(&data).unwrap();
    assert_eq!(cooked.material_index(5), Some(12));
    let scene = scene_with(&[(1, cooked, Affine3A::IDENTITY)]);
    for section in 0..3u32 {
        let x = section as f32 * 2.0;
        // Near the +X, -Z corner: the second triangle of the section.
        let hit = cast(&scene, Vec3::new(x + 0.9, 1.0, 0.1), Vec3::NEG_Y).unwrap();
        assert_eq!(hit.material_index, Some(10 + section as u16));
        assert_eq!(hit.triangle_index, Some(section * 2 + 1));
        // Near the -X, +Z corner: the first.
        let hit = cast(&scene, Vec3::new(x + 0.1, 1.0, 0.9), Vec3::NEG_Y).unwrap();
        assert_eq!(hit.triangle_index, Some(section * 2));
        assert_vec_near(hit.normal, Vec3::Y);
    }
    // The gaps between sections.
    assert_eq!(cast(&scene, Vec3::new(1.5, 1.0, 0.5), Vec3::NEG_Y), None);
}

#[test]
fn hits_report_uvs_when_kept() {
    let mut data = TriMeshCollisionData::new();
    data.push_section(&[Vec3::ZERO, Vec3::new(0.0, 0.0, 1.0), Vec3::new(1.0, 0.0, 1.0), Vec3::X], &[[0, 1, 2], [0, 2, 3]], 0)
        .expect("valid section");
    data.uvs.push(vec![Vec2::new(0.0, 0.0), Vec2::new(0.0, 1.0), Vec2::new(1.0, 1.0), Vec2::new(1.0, 0.0)]);
    data.flip_normals = true;

    let mut setup = BodySetup::new();
    setup.use_complex_as_simple = true;
    setup.support_uv_from_hit_results = true;
    let cooked = setup.cook(&data).unwrap();
    assert_eq!(cooked.uv_channel_count(), 1);
    let transform = Affine3A::from_scale_rotation_translation(Vec3::splat(2.0), Quat::IDENTITY, Vec3::Y);
    let scene = scene_with(&[(1, cooked, transform)]);
    let hit = cast(&scene, Vec3::new(0.5, 5.0, 1.5), Vec3::NEG_Y).unwrap();
    // Flipped winding still reports a normal facing the ray.
    assert_vec_near(hit.normal, Vec3::Y);
    let uv = scene.hit_uv(&hit, 0).unwrap();
    assert!(uv.abs_diff_eq(Vec2::new(0.25, 0.75), EPS), "{uv}");
    assert_eq!(scene.hit_uv(&hit, 1), None);

    // Without the flag, no UVs are kept.
    setup.support_uv_from_hit_results = false;
    assert_eq!(setup.cook(&data).unwrap().uv_channel_count(), 0);
}

#[test]
fn scene_rejects_bad_bodies_and_keeps_state() {
    let cube = cooked_unit_cube();
    let mut scene = scene_with(&[(1, Arc::clone(&cube), Affine3A::IDENTITY)]);
    assert_eq!(scene.add_body(BodyId(1), Arc::clone(&cube), Affine3A::IDENTITY), Err(CollisionError::DuplicateBody(BodyId(1))));
    assert_eq!(
        scene.add_body(BodyId(2), Arc::clone(&cube), Affine3A::from_scale(Vec3::new(1.0, 0.0, 1.0))),
        Err(CollisionError::InvalidTransform(BodyId(2)))
    );
    assert_eq!(
        scene.set_transform(BodyId(1), Affine3A::from_translation(Vec3::new(f32::NAN, 0.0, 0.0))),
        Err(CollisionError::InvalidTransform(BodyId(1)))
    );
    assert_eq!(scene.remove_body(BodyId(9)), Err(CollisionError::UnknownBody(BodyId(9))));
    assert_eq!(scene.set_collision(BodyId(9), cube), Err(CollisionError::UnknownBody(BodyId(9))));
    assert_eq!(scene.len(), 1);
    let hit = cast(&scene, Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y).unwrap();
    assert_vec_near(hit.position, Vec3::new(0.0, 0.5, 0.0));

    // A body with no shapes is kept but never hit.
    scene.add_body(BodyId(3), Arc::new(CookedCollision::empty()), Affine3A::IDENTITY).unwrap();
    assert!(scene.contains(BodyId(3)));
    assert_eq!(scene.body_bounds(BodyId(3)), None);
    scene.remove_body(BodyId(1)).unwrap();
    assert_eq!(cast(&scene, Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y), None);
    scene.remove_body(BodyId(3)).unwrap();
    assert!(scene.is_empty());
}

fn arb_vec3(range: f32) -> impl Strategy<Value = Vec3> {
    (-range..range, -range..range, -range..range).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn arb_transform() -> impl Strategy<Value = Affine3A> {
    (
        arb_vec3(1.0),
        test_support::f32_in(-3.0, 3.0),
        (test_support::f32_in(0.2, 4.0), test_support::f32_in(0.2, 4.0), test_support::f32_in(0.2, 4.0)),
        arb_vec3(5.0),
    )
        .prop_map(|(axis, angle, (sx, sy, sz), translation)| {
            let rotation = Quat::from_axis_angle(axis.try_normalize().unwrap_or(Vec3::Y), angle);
            Affine3A::from_scale_rotation_translation(Vec3::new(sx, sy, sz), rotation, translation)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(test_support::property_cases(256)))]

    /// Random rays at a randomly placed, rotated and stretched cube: never a
    /// panic, and every hit lies on the cube's surface, at the distance it
    /// reports, with a unit normal facing the ray.
    #[test]
    fn random_rays_hit_on_the_surface(
        transform in arb_transform(),
        origin in arb_vec3(12.0),
        target in arb_vec3(1.0),
        aim_at_cube in any::<bool>(),
        random_dir in arb_vec3(1.0),
        max_distance in prop_oneof![Just(f32::INFINITY), test_support::f32_in(0.0, 30.0)],
    ) {
        let scene = scene_with(&[(1, cooked_unit_cube(), transform)]);
        let dir = if aim_at_cube {
            transform.transform_point3(target * 0.5) - origin
        } else {
            random_dir
        };
        match scene.raycast(origin, dir, max_distance, CollisionComplexity::Simple) {
            Err(e) => prop_assert!(dir.length() == 0.0 || !dir.is_finite(), "{e}"),
            Ok(None) => {}
            Ok(Some(hit)) => {
                let unit = dir.normalize();
                prop_assert!(hit.distance >= 0.0 && hit.distance <= max_distance);
                prop_assert!((hit.position - (origin + unit * hit.distance)).length() < 1e-3);
                let local = transform.inverse().transform_point3(hit.position);
                let scale = transform.matrix3.to_cols_array().iter().fold(0.0f32, |m, v| m.max(v.abs()));
                let tolerance = 1e-3 * (1.0 + hit.distance + scale);
                prop_assert!(
                    (local.abs().max_element() - 0.5).abs() < tolerance,
                    "local hit {} not on the unit cube", local
                );
                prop_assert!((hit.normal.length() - 1.0).abs() < 1e-3);
                prop_assert!(hit.normal.dot(unit) <= 1e-4);
                prop_assert!(hit.triangle_index.is_some_and(|t| t < 12));
                prop_assert_eq!(hit.material_index.map(u32::from), hit.triangle_index.map(|t| t / 2));
            }
        }
    }

    /// The broad-phase never changes the answer: after random adds, moves
    /// and removes, a scene of many bodies reports the same nearest hit as
    /// casting against each body alone.
    #[test]
    fn broad_phase_matches_brute_force(
        bodies in proptest::collection::vec((arb_transform(), any::<bool>()), 1..40),
        moves in proptest::collection::vec((0usize..40, arb_transform()), 0..20),
        removes in proptest::collection::vec(0usize..40, 0..10),
        maintain in any::<[bool; 3]>(),
        rays in proptest::collection::vec((arb_vec3(10.0), arb_vec3(1.0)), 1..20),
    ) {
        let cube = cooked_unit_cube();
        let mut convex_setup = BodySetup::new();
        convex_setup.add_convex_element(ConvexElement::cuboid(Vec3::splat(-0.5), Vec3::splat(0.5))).unwrap();
        let convex = convex_setup.cook(&NoTriangles).unwrap();

        let mut scene = CollisionScene::new();
        let mut alive: Vec<Option<(Arc<CookedCollision>, Affine3A)>> = Vec::new();
        for (i, (transform, is_convex)) in bodies.iter().enumerate() {
            let collision = if *is_convex { Arc::clone(&convex) } else { Arc::clone(&cube) };
            scene.add_body(BodyId(i as u64), Arc::clone(&collision), *transform).unwrap();
            alive.push(Some((collision, *transform)));
        }
        if maintain[0] {
            scene.maintain();
        }
        for (i, transform) in &moves {
            if let Some(Some(body)) = alive.get_mut(*i) {
                scene.set_transform(BodyId(*i as u64), *transform).unwrap();
                body.1 = *transform;
            }
        }
        if maintain[1] {
            scene.maintain();
        }
        for i in &removes {
            if let Some(slot) = alive.get_mut(*i) {
                if slot.take().is_some() {
                    scene.remove_body(BodyId(*i as u64)).unwrap();
                }
            }
        }
        if maintain[2] {
            scene.maintain();
        }
        for (origin, dir) in rays {
            let Ok(hit) = scene.raycast(origin, dir, f32::INFINITY, CollisionComplexity::Simple) else {
                prop_assert!(dir.length() == 0.0);
                continue;
            };
            let brute = alive
                .iter()
                .enumerate()
                .filter_map(|(i, body)| {
                    let (collision, transform) = body.as_ref()?;
                    let single = scene_with(&[(i as u64, Arc::clone(collision), *transform)]);
                    single.raycast(origin, dir, f32::INFINITY, CollisionComplexity::Simple).unwrap()
                })
                .min_by(|a, b| a.distance.total_cmp(&b.distance));
            match (hit, brute) {
                (None, None) => {}
                (Some(h), Some(b)) => prop_assert!((h.distance - b.distance).abs() < 1e-4, "{h:?} vs {b:?}"),
                (h, b) => prop_assert!(false, "scene {h:?} vs brute force {b:?}"),
            }
        }
    }
}
