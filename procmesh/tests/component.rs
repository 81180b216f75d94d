//! `ProceduralMeshComponent` in an engine-core `World` on the real device
//! (validation on, zero errors and warnings).

mod common;

use common::*;
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
    let (_, id) = world
        .spawn_actor("pmc", Box::new(component), Transform::IDENTITY)
        .unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 1);
    let (_, before) = frame(world.render_thread().unwrap());
    assert!(
        is_bluish(pixel_at(&before, RIGHT)),
        "right section drawn blue"
    );

    // Same vertex count: in place, no proxy.
    let g = grid(Vec2::new(0.5, -1.5), Vec2::new(3.0, 1.5), 5);
    let moved = shifted(&g, Vec3::new(0.0, 1.0, 0.0));
    world
        .with_component_mut::<ProceduralMeshComponent, _>(id, |c| {
            c.update_mesh_section(1, SectionData::positions(&moved))
        })
        .unwrap()
        .unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!(eof.proxies_created, 0);
    assert_eq!(eof.dynamic_data_sent, 1);
    assert_eq!(eof.transforms_sent, 1, "the bounds moved");
    let (stats, after) = frame(world.render_thread().unwrap());
    assert_eq!(stats.proxies_created, 0);
    assert!(diff_pixels(&before, &after) > 0, "the image changed");
    assert!(is_bluish(pixel_at(
        &after,
        RIGHT + Vec3::new(0.0, 1.5, 0.0)
    )));

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
        .with_component_mut::<ProceduralMeshComponent, _>(id, |c| {
            c.update_mesh_section(1, SectionData::positions(&g.positions))
        })
        .unwrap()
        .unwrap();
    world.set_material(id, 1, red).unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent), (1, 0));
    let (_, image) = frame(world.render_thread().unwrap());
    assert!(
        is_reddish(pixel_at(&image, RIGHT)),
        "override material, update applied"
    );
    assert!(
        is_reddish(pixel_at(&image, LEFT)),
        "an unset slot keeps the section's material"
    );
    world
        .with_component_mut::<ProceduralMeshComponent, _>(id, |c| {
            c.set_mesh_section_visible(0, false)
        })
        .unwrap()
        .unwrap();
    let eof = world.send_all_end_of_frame_updates().unwrap();
    assert_eq!((eof.proxies_created, eof.dynamic_data_sent), (0, 1));
    let (_, image) = frame(world.render_thread().unwrap());
    assert_eq!(
        pixel_at(&image, LEFT),
        background(&image),
        "section 0 hidden"
    );
    assert_clean(world.render_thread().unwrap());
}

#[test]
fn world_raycast_hits_section_collision() {
    let mut component = ProceduralMeshComponent::new();
    for (index, x0) in [(0, -3.0), (1, 0.5)] {
        let g = grid(Vec2::new(x0, -1.5), Vec2::new(x0 + 2.5, 1.5), 5);
        component
            .create_mesh_section(index, SectionData::new(&g.positions, &g.triangles), true)
            .unwrap();
    }
    let mut world = World::new(None);
    let (_, id) = world
        .spawn_actor("pmc", Box::new(component), Transform::IDENTITY)
        .unwrap();
    world.send_all_end_of_frame_updates().unwrap();
    for (at, section) in [(LEFT, 0u16), (RIGHT, 1)] {
        let hit = world
            .raycast(at + Vec3::Z * 5.0, -Vec3::Z, 100.0)
            .unwrap()
            .expect("a hit");
        assert_eq!(hit.component, id);
        assert_eq!(hit.material_index, Some(section));
        assert!((hit.distance - 5.0).abs() < 1e-3);
    }
}
