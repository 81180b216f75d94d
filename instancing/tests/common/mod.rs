//! Helpers shared by the integration tests.
#![allow(dead_code)]

use glam::{Affine3A, Quat, Vec3};
use instancing::*;

/// A unit cube mesh (half-extent 1) with three LODs at screen sizes 1, 0.3, 0.1.
pub fn cube_mesh() -> InstancedMesh {
    InstancedMesh::simple(
        BoxSphereBounds::new(Vec3::ZERO, Vec3::ONE, 3f32.sqrt()).unwrap(),
        512,
        1536,
        &[1.0, 0.3, 0.1],
    )
    .unwrap()
}

/// A small deterministic PRNG (xorshift64*), so tests need no extra crate.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `[0, 1)`.
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }
}

/// `n` randomly placed, rotated and scaled instances in a `size`-wide square
/// on the XZ plane (Y up).
pub fn scattered(n: usize, size: f32, seed: u64) -> Vec<Affine3A> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            Affine3A::from_scale_rotation_translation(
                Vec3::splat(rng.range(0.5, 2.0)),
                Quat::from_rotation_y(rng.range(0.0, std::f32::consts::TAU)),
                Vec3::new(
                    rng.range(-size, size) * 0.5,
                    rng.range(0.0, 4.0),
                    rng.range(-size, size) * 0.5,
                ),
            )
        })
        .collect()
}

pub fn store_with(transforms: &[Affine3A]) -> InstanceStore {
    let mut s = InstanceStore::new(*cube_mesh().bounds());
    s.add_instances(transforms).unwrap();
    s.take_dirty_ranges();
    s
}

/// The visible set as sorted (index, lod, fade bits) triples, for comparing
/// outputs that differ only in order.
pub fn visible_set(out: &CullOutput) -> Vec<(u32, usize, u32)> {
    let mut v: Vec<(u32, usize, u32)> = out
        .lods
        .iter()
        .enumerate()
        .flat_map(|(lod, b)| {
            b.instances
                .iter()
                .zip(&b.fades)
                .map(move |(&i, &f)| (i, lod, f.to_bits()))
        })
        .collect();
    v.sort_unstable();
    v
}

pub fn translate(x: f32, y: f32, z: f32) -> Affine3A {
    Affine3A::from_translation(Vec3::new(x, y, z))
}
