//! `ProceduralMeshComponent` in an engine-core `World` on the real device
//! (validation on, zero errors and warnings).

mod common;

use common::*;
#[cfg(feature = "collision")]
use engine_core::CollisionComplexity;
use engine_core::{Transform, World};
use glam::{Vec2, Vec3};
use procmesh::{ProceduralMeshComponent, SectionData};
use renderer::RenderThreadMode;

fn shifted(g: &Grid, by: Vec3) -> Vec<Vec3> {
    g.positions.iter().map(|p| *p + by).collect()
}

#[test]
fn update_in_place_creates_no_proxy_and_create_does() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt);
    let (red, blue) = red_and_blue(&mut rt);
    let mut world = World::new(Some(rt));
    let component = ProceduralMeshComponent::from_mesh(two_sections(red, blue));
    let (_, id) = world.spawn_actor("pmc", Box::new(component), Transform::IDENTITY).unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 1);
    let (_, before) = frame(world.render_thread().unwrap());
    assert!(is_bluish(pixel_at(&before, RIGHT)), "right section drawn blue");

    // Same vertex count: in place, no proxy.
    let g = grid(Vec2::new(0.5, -1.5), Vec2::new(3.0, 1.5), 5);
    let moved = shifted(&g, Vec3::new(0.0, 1.0, 0.0));
    world
        .with_component_mut::<ProceduralMeshComponent, _>(id, |c| c.update_mesh_section(1, SectionData::positions(&moved)))
        .unwrap()
        .unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 0);
    assert_eq!(eof.dynamic_data_sent, 1);
    assert_eq!(eof.transforms_sent, 1, "the bounds moved");
    let (stats, after) = frame(world.render_thread().unwrap());
    assert_eq!(stats.proxies_created, 0);
    assert!(diff_pixels(&before, &after) > 0, "the image changed");
    assert!(is_bluish(pixel_at(&after, RIGHT + Vec3::new(0.0, 1.5, 0.0))));

    // A new section: one new proxy.
    let g2 = grid(Vec2::new(-1.0, 2.0), Vec2::new(1.0, 3.0), 3);
    world
        .with_component_mut::<ProceduralMeshComponent, _>(id, |c| {
            c.create_mesh_section(2, SectionData::new(&g2.positions, &g2.triangles), false)
        })
        .unwrap()
        .unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 1);
    let (stats, _) = frame(world.render_thread().unwrap());
    assert_eq!(stats.proxies_created, 1);

    // An update queued in a frame whose proxy is recreated anyway (the
    // world's material for slot 1 overrides the section's) is dropped,
    // never sent later.
    world
        .with_component_mut::<ProceduralMeshComponent, _>(id, |c| c.update_mesh_section(1, SectionData::positions(&g.positions)))
        .unwrap()
        .unwrap();
    world.set_material(id, 1, red).unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent), (1, 0));
    let (_, image) = frame(world.render_thread().unwrap());
    assert!(is_reddish(pixel_at(&image, RIGHT)), "override material, update applied");
    assert!(is_reddish(pixel_at(&image, LEFT)), "an unset slot keeps the section's material");
    world.with_component_mut::<ProceduralMeshComponent, _>(id, |c| c.set_mesh_section_visible(0, false)).unwrap().unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent), (0, 1));
    let (_, image) = frame(world.render_thread().unwrap());
    assert_eq!(pixel_at(&image, LEFT), background(&image), "section 0 hidden");
    assert_clean(world.render_thread().unwrap());
}

#[cfg(feature = "collision")]
#[test]
fn world_raycast_hits_section_collision() {
    let mut component = ProceduralMeshComponent::new();
    for (index, x0) in [(0, -3.0), (1, 0.5)] {
        let g = grid(Vec2::new(x0, -1.5), Vec2::new(x0 + 2.5, 1.5), 5);
        component.create_mesh_section(index, SectionData::new(&g.positions, &g.triangles), true).unwrap();
    }
    let mut world = World::new(None);
    let (_, id) = world.spawn_actor("pmc", Box::new(component), Transform::IDENTITY).unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    for (at, section) in [(LEFT, 0u16), (RIGHT, 1)] {
        let hit = world.raycast(at + Vec3::Z * 5.0, -Vec3::Z, 100.0, CollisionComplexity::Complex).unwrap().expect("a hit");
        assert_eq!(hit.component, id);
        assert_eq!(hit.material_index, Some(section));
        assert!((hit.distance - 5.0).abs() < 1e-3);
    }
}

/// UE's trace-complex flag: a simple trace hits the convex hull (a box
/// standing 1 unit above the section), a complex one the section's
/// triangles; `use_complex_as_simple` makes simple traces hit the
/// triangles too. A triangle hit reports the face's material: the
/// section's own, or the world's override for that slot.
#[cfg(feature = "collision")]
#[test]
fn world_traces_choose_simple_or_complex_and_report_the_face_material() {
    use renderer::MaterialId;
    let mut component = ProceduralMeshComponent::new();
    let g = grid(Vec2::new(-1.0, -1.0), Vec2::new(1.0, 1.0), 3);
    component.create_mesh_section(0, SectionData::new(&g.positions, &g.triangles), true).unwrap();
    component.set_material(0, Some(procmesh::MaterialRef(7))).unwrap();
    let hull: Vec<Vec3> =
        [-1.0f32, 1.0].iter().flat_map(|&x| [-1.0f32, 1.0].map(|y| [Vec3::new(x, y, 0.0), Vec3::new(x, y, 1.0)])).flatten().collect();
    component.add_collision_convex_mesh(&hull).unwrap();
    let mut world = World::new(None);
    let (_, id) = world.spawn_actor("pmc", Box::new(component), Transform::IDENTITY).unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    let trace = |world: &World, complexity| world.raycast(Vec3::Z * 5.0, -Vec3::Z, 100.0, complexity).unwrap().expect("a hit");

    let simple = trace(&world, CollisionComplexity::Simple);
    assert!((simple.distance - 4.0).abs() < 1e-3, "the hull's top: {simple:?}");
    assert_eq!((simple.triangle_index, simple.material_index, simple.material), (None, None, None), "a convex hit has no face");
    let complex = trace(&world, CollisionComplexity::Complex);
    assert!((complex.distance - 5.0).abs() < 1e-3, "the section: {complex:?}");
    assert!(complex.triangle_index.is_some());
    assert_eq!((complex.material_index, complex.material), (Some(0), Some(MaterialId(7))));

    // Complex as simple: simple traces hit the triangles too.
    world.with_component_mut(id, |c: &mut ProceduralMeshComponent| c.set_use_complex_as_simple_collision(true)).unwrap().unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    let simple = trace(&world, CollisionComplexity::Simple);
    assert!((simple.distance - 5.0).abs() < 1e-3, "{simple:?}");
    assert_eq!(simple.material, Some(MaterialId(7)));

    // The world's slot override wins over the section's material.
    world.set_material(id, 0, MaterialId(9)).unwrap();
    assert_eq!(trace(&world, CollisionComplexity::Complex).material, Some(MaterialId(9)));
}

#[cfg(feature = "collision")]
#[test]
fn async_cook_lands_through_tick() {
    let mut component = ProceduralMeshComponent::new();
    component.set_use_async_cooking(true);
    let g = grid(Vec2::new(-1.0, -1.0), Vec2::new(1.0, 1.0), 3);
    component.create_mesh_section(0, SectionData::new(&g.positions, &g.triangles), true).unwrap();
    let mut world = World::new(None);
    let (_, id) = world.spawn_actor("pmc", Box::new(component), Transform::IDENTITY).unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    let ray = || world.raycast(Vec3::Z * 5.0, -Vec3::Z, 100.0, CollisionComplexity::Complex).unwrap();
    assert!(ray().is_none(), "nothing cooked before the tick applies it");
    // The cook runs on the executor; the component applies it in its tick
    // once it lands.
    let mut landed = false;
    for _ in 0..500 {
        world.tick(1.0 / 60.0);
        let eof = world.send_all_end_of_frame_updates().unwrap();
        if eof.bodies_updated > 0 {
            assert_eq!(eof.bodies_updated, 1);
            landed = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert!(landed, "the cook landed");
    let hit = world.raycast(Vec3::Z * 5.0, -Vec3::Z, 100.0, CollisionComplexity::Complex).unwrap().expect("a hit");
    assert_eq!((hit.component, hit.material_index), (id, Some(0)));
}

#[test]
fn mirrored_transform_keeps_sections_drawn() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt);
    let (red, blue) = red_and_blue(&mut rt);
    let mut world = World::new(Some(rt));
    let component = ProceduralMeshComponent::from_mesh(two_sections(red, blue));
    let mirror = Transform { scale: Vec3::new(-1.0, 1.0, 1.0), ..Transform::IDENTITY };
    let (_, id) = world.spawn_actor("pmc", Box::new(component), mirror).unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    let (_, image) = frame(world.render_thread().unwrap());
    // Mirrored in X: section 0 (red) is now on the right.
    assert!(is_reddish(pixel_at(&image, RIGHT)), "mirrored proxy drawn");
    assert!(is_bluish(pixel_at(&image, LEFT)));

    // Un-mirror by a move: the proxy stays and the renderer tells it.
    world.set_relative_transform(id, Transform::IDENTITY).unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent, eof.transforms_sent), (0, 0, 1));
    let (_, image) = frame(world.render_thread().unwrap());
    assert!(is_reddish(pixel_at(&image, LEFT)), "winding follows the transform");
    assert!(is_bluish(pixel_at(&image, RIGHT)));
    assert_clean(world.render_thread().unwrap());
}
