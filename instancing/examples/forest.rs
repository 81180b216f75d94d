//! A forest of 100,000 instanced trees: cull it for one view, per instance
//! and through the HISM cluster tree, and print what each LOD would draw.
//!
//! `cargo run -p proxima-instancing --example forest --release`

use std::time::Instant;

use glam::{Affine3A, Quat, Vec3};
use instancing::*;

fn main() -> Result<()> {
    // The crates' `log` lines (device chosen, validation messages) on stderr; `RUST_LOG` filters them.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    // A tree mesh: 2,000 vertices at LOD 0, four LODs.
    let mesh = InstancedMesh::simple(
        Bounds::new(Vec3::new(0.0, 5.0, 0.0), Vec3::new(3.0, 5.0, 3.0), 34f32.sqrt()),
        2000,
        9000,
        &[1.0, 0.1, 0.03, 0.01],
    )?;

    // 100,000 trees on a jittered grid, with random yaw and size.
    let mut store = InstanceStore::new(*mesh.bounds());
    store.set_num_custom_data_floats(1)?; // e.g. a colour variation
    store.set_random_seed(2024);
    let mut h = 0x2545_F491_4F6C_DD1Du64;
    let mut rand = move || {
        h ^= h << 13;
        h ^= h >> 7;
        h ^= h << 17;
        (h >> 40) as f32 / (1u64 << 24) as f32
    };
    let transforms: Vec<Affine3A> = (0..100_000)
        .map(|i| {
            let (gx, gz) = ((i % 316) as f32, (i / 316) as f32);
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(0.7 + 0.6 * rand()),
                Quat::from_rotation_y(rand() * std::f32::consts::TAU),
                Vec3::new((gx + rand()) * 20.0 - 3160.0, 0.0, (gz + rand()) * 20.0 - 3160.0),
            )
        })
        .collect();
    let ids = store.add_instances(&transforms)?;
    for i in (0..store.instance_count()).step_by(3) {
        store.set_custom_data_value(i, 0, 1.0)?;
    }
    println!("{} instances, {} dirty bytes to upload first", store.instance_count(), store.dirty_bytes());
    store.take_dirty_ranges();

    // Chop one tree down and move another: only two slots to upload.
    store.remove_instance_by_id(ids[500])?;
    store.update_instance_transform(0, Affine3A::from_translation(Vec3::new(5.0, 0.0, 5.0)), TransformSpace::Component)?;
    println!("after two edits: dirty ranges {:?}, {} bytes", store.dirty_ranges(), store.dirty_bytes());

    // A camera standing in the forest, looking across it.
    let view = CullView::look_at(Vec3::new(-2000.0, 15.0, -2000.0), Vec3::new(0.0, 0.0, 0.0), Vec3::Y, 1.2, 16.0 / 9.0, 0.5, 20_000.0)?;
    let distances = CullDistances::new(2500.0, 3000.0)?;
    let component = Affine3A::IDENTITY;

    let t = Instant::now();
    let flat = cull_instances(&store, &InstanceCuller::new(&mesh, &component, &view, distances)?);
    let flat_time = t.elapsed();

    let mut builder = ClusterTreeBuilder::default();
    builder.request_rebuild(&store, &mesh);
    builder.wait(&mut store)?;
    let t = Instant::now();
    let (hier, stats) = builder.cull(&store, &InstanceCuller::new(&mesh, &component, &view, distances)?);
    let tree_time = t.elapsed();

    let ue = cull_ue_mode(&store, &InstanceCuller::new(&mesh, &component, &view, distances)?);

    println!("visible per LOD (per instance): {:?}  total {}", flat.counts(), flat.visible_count());
    println!("visible per LOD (cluster tree): {:?}  total {}", hier.counts(), hier.visible_count());
    println!("UE ISM (one LOD for the component):  {:?}  total {}", ue.counts(), ue.visible_count());
    let fading = flat.lods.iter().flat_map(|b| &b.fades).filter(|&&f| f < 1.0).count();
    println!("{fading} visible instances are fading out between 2500 and 3000 units");
    println!(
        "cull time: per instance {:.2} ms, cluster tree {:.2} ms ({} of {} nodes visited, leaf size {})",
        flat_time.as_secs_f64() * 1e3,
        tree_time.as_secs_f64() * 1e3,
        stats.nodes_visited,
        builder.current().map_or(0, |t| t.node_count()),
        builder.current().map_or(0, |t| t.leaf_size()),
    );
    for (i, a) in flat.draw_args(&mesh).iter().enumerate() {
        println!("  draw {i}: {a:?}");
    }
    Ok(())
}
