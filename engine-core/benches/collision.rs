//! Ray casts against thousands of bodies: the scene's BVH broad-phase
//! against a linear scan over the same bodies (each cast on its own), and
//! cooking a triangle mesh synchronously.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use engine_core::collision::{BodyId, BodySetup, CollisionComplexity, CollisionScene, CookedCollision, TriMeshCollisionData};
use glam::{Affine3A, Quat, Vec3};
use test_support::Rng;

/// A `n` x `n` grid of quads (2 n² triangles) on the XZ plane, bumped so the
/// BVH has some depth to it.
fn grid(n: u32) -> TriMeshCollisionData {
    let mut data = TriMeshCollisionData::new();
    let side = n + 1;
    for z in 0..side {
        for x in 0..side {
            let (fx, fz) = (x as f32 / n as f32 - 0.5, z as f32 / n as f32 - 0.5);
            data.vertices.push(Vec3::new(fx, 0.05 * (fx * 20.0).sin() * (fz * 20.0).cos(), fz));
        }
    }
    for z in 0..n {
        for x in 0..n {
            let i = z * side + x;
            data.indices.push([i, i + side, i + side + 1]);
            data.indices.push([i, i + side + 1, i + 1]);
            data.material_indices.extend([0, 0]);
        }
    }
    data
}

fn bodies(count: usize, collision: &Arc<CookedCollision>) -> Vec<(BodyId, Arc<CookedCollision>, Affine3A)> {
    let mut rng = Rng::new(7);
    (0..count)
        .map(|i| {
            let translation = Vec3::new(rng.next_f32() * 200.0 - 100.0, rng.next_f32() * 20.0, rng.next_f32() * 200.0 - 100.0);
            let rotation = Quat::from_rotation_y(rng.next_f32() * std::f32::consts::TAU);
            let transform = Affine3A::from_scale_rotation_translation(Vec3::splat(2.0), rotation, translation);
            (BodyId(i as u64), Arc::clone(collision), transform)
        })
        .collect()
}

fn rays(count: usize) -> Vec<(Vec3, Vec3)> {
    let mut rng = Rng::new(11);
    (0..count)
        .map(|_| {
            let origin = Vec3::new(rng.next_f32() * 200.0 - 100.0, 30.0, rng.next_f32() * 200.0 - 100.0);
            let dir = Vec3::new(rng.next_f32() - 0.5, -1.0, rng.next_f32() - 0.5);
            (origin, dir)
        })
        .collect()
}

fn raycast(c: &mut Criterion) {
    let mut setup = BodySetup::new();
    setup.use_complex_as_simple = true;
    let collision = setup.cook(&grid(16)).expect("grid cooks");
    let rays = rays(64);
    let mut group = c.benchmark_group("raycast 64 rays");
    for count in [100, 2000] {
        let bodies = bodies(count, &collision);
        let mut scene = CollisionScene::new();
        let singles: Vec<CollisionScene> = bodies
            .iter()
            .map(|(id, collision, transform)| {
                scene.add_body(*id, Arc::clone(collision), *transform).unwrap();
                let mut single = CollisionScene::new();
                single.add_body(*id, Arc::clone(collision), *transform).unwrap();
                single
            })
            .collect();
        group.bench_with_input(BenchmarkId::new("bvh broad-phase", count), &scene, |b, scene| {
            b.iter(|| rays.iter().filter_map(|&(o, d)| scene.raycast(o, d, f32::INFINITY, CollisionComplexity::Simple).unwrap()).count())
        });
        group.bench_with_input(BenchmarkId::new("linear scan", count), &singles, |b, singles| {
            b.iter(|| {
                rays.iter()
                    .filter_map(|&(o, d)| {
                        singles
                            .iter()
                            .filter_map(|s| s.raycast(o, d, f32::INFINITY, CollisionComplexity::Simple).unwrap())
                            .min_by(|a, b| a.distance.total_cmp(&b.distance))
                    })
                    .count()
            })
        });
    }
    group.finish();
}

fn cook(c: &mut Criterion) {
    let mut group = c.benchmark_group("cook grid");
    for n in [16, 64] {
        let data = grid(n);
        group.bench_with_input(BenchmarkId::new("triangles", 2 * n * n), &data, |b, data| {
            let mut setup = BodySetup::new();
            setup.use_complex_as_simple = true;
            b.iter(|| black_box(setup.cook(data).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, raycast, cook);
criterion_main!(benches);
