//! Built-in shapes beyond the renderer's cube and plane: UV sphere,
//! cylinder and cone, with normals and UVs, wound counter-clockwise seen
//! from outside.

use glam::Vec3;
use renderer::{LocalVertex, StaticMeshLod};
use std::f32::consts::TAU;

fn vertex(p: Vec3, n: Vec3, uv: [f32; 2]) -> LocalVertex {
    let t = if n.z.abs() > 0.9 { Vec3::X } else { Vec3::Z.cross(n).normalize_or_zero() };
    LocalVertex {
        position: p.to_array(),
        tangent_x: t.extend(1.0).to_array(),
        normal: n.to_array(),
        color: [255; 4],
        uvs: [uv, [0.0; 2], [0.0; 2], [0.0; 2]],
    }
}

pub fn sphere(radius: f32, segments: u32, rings: u32) -> StaticMeshLod {
    let mut v = Vec::new();
    let mut idx = Vec::new();
    for r in 0..=rings {
        let phi = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..=segments {
            let theta = TAU * s as f32 / segments as f32;
            let n = Vec3::new(phi.sin() * theta.cos(), phi.sin() * theta.sin(), phi.cos());
            v.push(vertex(n * radius, n, [s as f32 / segments as f32, r as f32 / rings as f32]));
        }
    }
    let row = segments + 1;
    for r in 0..rings {
        for s in 0..segments {
            let a = r * row + s;
            let b = a + row;
            idx.extend_from_slice(&[a, b, a + 1, a + 1, b, b + 1]);
        }
    }
    StaticMeshLod::single_section(v, idx)
}

fn ring(v: &mut Vec<LocalVertex>, radius: f32, z: f32, normal_z: f32, segments: u32, uv_v: f32) {
    for s in 0..=segments {
        let theta = TAU * s as f32 / segments as f32;
        let dir = Vec3::new(theta.cos(), theta.sin(), 0.0);
        let n = (dir + Vec3::Z * normal_z).normalize();
        v.push(vertex(dir * radius + Vec3::Z * z, n, [s as f32 / segments as f32, uv_v]));
    }
}

fn cap(v: &mut Vec<LocalVertex>, idx: &mut Vec<u32>, radius: f32, z: f32, up: bool, segments: u32) {
    let n = if up { Vec3::Z } else { Vec3::NEG_Z };
    let center = v.len() as u32;
    v.push(vertex(Vec3::Z * z, n, [0.5, 0.5]));
    for s in 0..=segments {
        let theta = TAU * s as f32 / segments as f32;
        v.push(vertex(Vec3::new(theta.cos() * radius, theta.sin() * radius, z), n, [0.5 + theta.cos() * 0.5, 0.5 + theta.sin() * 0.5]));
    }
    for s in 0..segments {
        let (a, b) = (center + 1 + s, center + 2 + s);
        if up {
            idx.extend_from_slice(&[center, a, b]);
        } else {
            idx.extend_from_slice(&[center, b, a]);
        }
    }
}

pub fn cylinder(radius: f32, height: f32, segments: u32) -> StaticMeshLod {
    let (mut v, mut idx) = (Vec::new(), Vec::new());
    ring(&mut v, radius, -height / 2.0, 0.0, segments, 1.0);
    ring(&mut v, radius, height / 2.0, 0.0, segments, 0.0);
    let row = segments + 1;
    for s in 0..segments {
        let (a, b) = (s, s + row);
        idx.extend_from_slice(&[a, a + 1, b, a + 1, b + 1, b]);
    }
    cap(&mut v, &mut idx, radius, height / 2.0, true, segments);
    cap(&mut v, &mut idx, radius, -height / 2.0, false, segments);
    StaticMeshLod::single_section(v, idx)
}

pub fn cone(radius: f32, height: f32, segments: u32) -> StaticMeshLod {
    let (mut v, mut idx) = (Vec::new(), Vec::new());
    let slope = radius / height;
    ring(&mut v, radius, -height / 2.0, slope, segments, 1.0);
    ring(&mut v, 0.0, height / 2.0, slope, segments, 0.0);
    let row = segments + 1;
    for s in 0..segments {
        let (a, b) = (s, s + row);
        idx.extend_from_slice(&[a, a + 1, b, a + 1, b + 1, b]);
    }
    cap(&mut v, &mut idx, radius, -height / 2.0, false, segments);
    StaticMeshLod::single_section(v, idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outward(lod: &StaticMeshLod) {
        // Every triangle's winding agrees with its vertex normals (CCW from outside).
        for t in lod.indices.chunks_exact(3) {
            let p = |i: u32| Vec3::from(lod.vertices[i as usize].position);
            let face = (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0]));
            if face.length_squared() < 1e-12 {
                continue;
            }
            let n = Vec3::from(lod.vertices[t[0] as usize].normal)
                + Vec3::from(lod.vertices[t[1] as usize].normal)
                + Vec3::from(lod.vertices[t[2] as usize].normal);
            assert!(face.dot(n) > 0.0, "triangle {t:?} winds inward");
        }
    }

    #[test]
    fn shapes_wind_outward() {
        outward(&sphere(0.5, 12, 6));
        outward(&cylinder(0.5, 1.0, 12));
        outward(&cone(0.5, 1.0, 12));
        outward(&renderer::shapes::cube(1.0));
    }
}
