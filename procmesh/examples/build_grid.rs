//! Builds a small heightfield section, animates it with in-place updates and
//! prints what each call asks of the renderer: the change set a
//! `ProceduralMeshComponent` turns into dirty flags, which a `World`'s
//! end-of-frame update turns into render commands.
//!
//! Run with `cargo run -p proxima-procmesh --example build_grid`.

use glam::{Vec2, Vec3};
use procmesh::{MaterialRef, ProcMeshData, ProcMeshError, SectionData, VertexAttributes};

const SIDE: usize = 16;

/// Grid positions with height `h(x, y)`.
fn heights(time: f32) -> Vec<Vec3> {
    (0..SIDE * SIDE)
        .map(|i| {
            let (x, y) = ((i % SIDE) as f32, (i / SIDE) as f32);
            Vec3::new(x, y, (x * 0.5 + time).sin() + (y * 0.4 - time).cos() * 0.5)
        })
        .collect()
}

/// Central-difference normals of the grid.
fn normals(positions: &[Vec3]) -> Vec<Vec3> {
    let at = |x: usize, y: usize| positions[y.min(SIDE - 1) * SIDE + x.min(SIDE - 1)].z;
    (0..SIDE * SIDE)
        .map(|i| {
            let (x, y) = (i % SIDE, i / SIDE);
            let dx = at(x + 1, y) - at(x.saturating_sub(1), y);
            let dy = at(x, y + 1) - at(x, y.saturating_sub(1));
            Vec3::new(-dx, -dy, 2.0).normalize()
        })
        .collect()
}

fn main() -> Result<(), ProcMeshError> {
    // The crates' `log` lines (device chosen, validation messages) on stderr; `RUST_LOG` filters them.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let mut triangles = Vec::new();
    for y in 0..SIDE as u32 - 1 {
        for x in 0..SIDE as u32 - 1 {
            let i = y * SIDE as u32 + x;
            let s = SIDE as u32;
            triangles.extend_from_slice(&[i, i + 1, i + s + 1, i, i + s + 1, i + s]);
        }
    }
    let uvs: Vec<Vec2> = (0..SIDE * SIDE).map(|i| Vec2::new((i % SIDE) as f32, (i / SIDE) as f32) / (SIDE - 1) as f32).collect();

    let mut mesh = ProcMeshData::new();
    let positions = heights(0.0);
    let normals0 = normals(&positions);
    let data = SectionData::new(&positions, &triangles).normals(&normals0).uv0(&uvs);
    let changes = mesh.create_mesh_section(0, data, true)?;
    mesh.set_material(0, Some(MaterialRef(1)))?;
    println!(
        "created: {} sections, {} vertices, {} triangles; recreate proxy: {}, collision cooked: {}",
        mesh.num_sections(),
        mesh.section(0).map_or(0, |s| s.vertex_count()),
        mesh.section(0).map_or(0, |s| s.triangle_count()),
        changes.render_state,
        changes.collision_cooked,
    );
    println!("bounds: {:?}", mesh.local_bounds());

    for frame in 1..=3 {
        let positions = heights(frame as f32 * 0.5);
        let normals = normals(&positions);
        let changes = mesh.update_mesh_section(0, SectionData::positions(&positions).normals(&normals))?;
        let update = mesh.section_update(0, changes.dynamic_data[0].attributes)?;
        println!(
            "frame {frame}: recreate proxy: {}, bounds moved: {}, streams sent: positions {} normals {} colors {}; bounds {:?}",
            changes.render_state,
            changes.transform,
            update.attributes.contains(VertexAttributes::POSITION),
            update.attributes.contains(VertexAttributes::NORMAL),
            update.colors.is_some(),
            mesh.local_bounds(),
        );
    }

    let wrong = vec![Vec3::ZERO; 10];
    if let Err(error) = mesh.update_mesh_section(0, SectionData::positions(&wrong)) {
        println!("rejected: {error}");
    }
    println!("sections: {}", mesh.num_sections());
    Ok(())
}
