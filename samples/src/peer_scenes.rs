//! Pieces of the peer-scale scenes matched to Bevy's stress tests
//! (`many-cubes --layout sphere`: many_cubes; `lights`: many_lights): the
//! Fibonacci sphere they scatter things on, and inside-out meshes (Bevy
//! scales a mesh by -1; Proxima flips the winding of mirrored meshes, so
//! these are built inside out instead).

use engine_core::StaticMesh;
use glam::Vec3;
use std::sync::Arc;

/// Point `i` of `n` on the unit Fibonacci sphere (golden-angle spiral).
pub fn fibonacci_sphere_point(i: u32, n: u32) -> Vec3 {
    let golden_ratio = 0.5 * (1.0 + 5f64.sqrt());
    let theta = std::f64::consts::TAU * (i as f64 / golden_ratio);
    let phi = (1.0 - 2.0 * i as f64 / n as f64).acos();
    let (sin_theta, cos_theta) = theta.sin_cos();
    let (sin_phi, cos_phi) = phi.sin_cos();
    Vec3::new((cos_theta * sin_phi) as f32, (sin_theta * sin_phi) as f32, cos_phi as f32)
}

/// `lod` turned inside out (triangles reversed, normals negated) as a
/// one-material static mesh named `name`.
pub fn inside_out(name: &str, mut lod: renderer::StaticMeshLod) -> anyhow::Result<Arc<StaticMesh>> {
    for v in &mut lod.vertices {
        v.normal = v.normal.map(|n| -n);
    }
    for tri in lod.indices.chunks_exact_mut(3) {
        tri.swap(1, 2);
    }
    Ok(StaticMesh::new(name, vec![lod], vec!["default".into()])?)
}
