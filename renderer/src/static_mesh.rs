//! Static mesh data on the render side: `StaticMeshRenderData` (LODs →
//! sections → index ranges and material slots, vertex data in the local
//! vertex factory's streams) shared by every
//! [`StaticMeshSceneProxy`](crate::StaticMeshSceneProxy) that draws it, and
//! simple [`shapes`]. The data sits below the scene (occlusion rasterizes a
//! LOD's triangles); the proxy, which plugs it into the scene, is above.

use crate::error::{RendererError, Result};
use crate::math::Bounds;
use crate::vertex_factory::{LocalVertex, LocalVertexFactory};
use glam::Vec3;
use rhi_vulkan::{BufferDesc, BufferHandle, BufferUsage, Device};
use std::sync::{Arc, Mutex};

/// A run of triangles drawn with one material slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticMeshSection {
    /// The section's first index in the LOD's index list.
    pub first_index: u32,
    /// Indices in the section (three per triangle).
    pub index_count: u32,
    /// Index into the proxy's materials; past their end, the default material.
    pub material_slot: u32,
}

/// One level of detail.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticMeshLod {
    /// The LOD's vertices (the local vertex factory's layout).
    pub vertices: Vec<LocalVertex>,
    /// Triangle list indices into `vertices`.
    pub indices: Vec<u32>,
    /// The index ranges drawn, each with its material slot.
    pub sections: Vec<StaticMeshSection>,
    /// This LOD is used while the mesh's screen size is at least this.
    pub screen_size: f32,
}

impl StaticMeshLod {
    /// One section covering every index, material slot 0.
    pub fn single_section(vertices: Vec<LocalVertex>, indices: Vec<u32>) -> Self {
        let count = indices.len() as u32;
        Self {
            vertices,
            indices,
            sections: vec![StaticMeshSection { first_index: 0, index_count: count, material_slot: 0 }],
            screen_size: 0.0,
        }
    }
}

/// One LOD's GPU buffers: the vertices (four streams at `offsets`) and the indices.
pub(crate) struct LodGpu {
    pub vertices: BufferHandle,
    pub offsets: [u64; 4],
    pub indices: BufferHandle,
}

/// CPU and GPU data of a static mesh; GPU buffers are created on the render
/// thread by the first proxy that needs them and destroyed (deferred by the
/// RHI) when the last proxy using them is removed, so that meshes created
/// and dropped at run time do not pile up buffers until shutdown. A mesh
/// drawn again later is uploaded again.
pub struct StaticMeshRenderData {
    pub(crate) lods: Vec<StaticMeshLod>,
    pub(crate) bounds: Bounds,
    pub(crate) screen_sizes: Vec<f32>,
    /// The GPU buffers and the device ([`Device::id`]) they were made on:
    /// one device's buffers are never used by another.
    gpu: Mutex<Option<(u64, Arc<Vec<LodGpu>>)>>,
    /// Proxies holding the GPU buffers ([`StaticMeshSceneProxy`](crate::StaticMeshSceneProxy)s in a scene).
    users: Mutex<usize>,
}

impl std::fmt::Debug for StaticMeshRenderData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticMeshRenderData").field("lods", &self.lods.len()).field("bounds", &self.bounds).finish()
    }
}

impl StaticMeshRenderData {
    /// Validates the LODs (indices in range, sections inside the index list,
    /// finite positions) and computes bounds.
    pub fn new(lods: Vec<StaticMeshLod>) -> Result<Arc<Self>> {
        if lods.is_empty() {
            return Err(RendererError::InvalidMesh("a static mesh needs at least one LOD".into()));
        }
        let mut min = Vec3::splat(f32::MAX);
        let mut max = Vec3::splat(f32::MIN);
        for (l, lod) in lods.iter().enumerate() {
            if lod.vertices.is_empty() || lod.indices.is_empty() || lod.indices.len() % 3 != 0 {
                return Err(RendererError::InvalidMesh(format!("LOD {l}: {} vertices, {} indices", lod.vertices.len(), lod.indices.len())));
            }
            if let Some(i) = lod.indices.iter().find(|&&i| i as usize >= lod.vertices.len()) {
                return Err(RendererError::InvalidMesh(format!("LOD {l}: index {i} ≥ vertex count {}", lod.vertices.len())));
            }
            for s in &lod.sections {
                if s.index_count == 0 || s.index_count % 3 != 0 || s.first_index as usize + s.index_count as usize > lod.indices.len() {
                    return Err(RendererError::InvalidMesh(format!("LOD {l}: section {s:?} outside {} indices", lod.indices.len())));
                }
            }
            for v in &lod.vertices {
                let p = Vec3::from(v.position);
                if !p.is_finite() {
                    return Err(RendererError::InvalidMesh(format!("LOD {l}: non-finite position")));
                }
                min = min.min(p);
                max = max.max(p);
            }
        }
        let screen_sizes = if lods.len() > 1 { lods.iter().map(|l| l.screen_size).collect() } else { Vec::new() };
        Ok(Arc::new(Self { lods, bounds: Bounds::from_box(min, max), screen_sizes, gpu: Mutex::new(None), users: Mutex::new(0) }))
    }

    /// The local-space bounds of every LOD's vertices.
    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// The LODs, most detailed first.
    pub fn lods(&self) -> &[StaticMeshLod] {
        &self.lods
    }

    /// Creates the GPU buffers once (render thread). The render data
    /// belongs to the device that made them until they are released: on
    /// another device it is [`rhi_vulkan::RhiError::OtherDevice`] (make the
    /// render data again for a second device).
    pub fn init_gpu(&self, device: &Device) -> rhi_vulkan::Result<()> {
        let mut gpu = self.gpu.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((owner, _)) = gpu.as_ref() {
            if *owner != device.id() {
                return Err(rhi_vulkan::RhiError::OtherDevice { what: "a static mesh's GPU buffers" });
            }
            return Ok(());
        }
        let mut out = Vec::with_capacity(self.lods.len());
        for lod in &self.lods {
            let (bytes, offsets) = LocalVertexFactory::pack(&lod.vertices);
            let vertices = device
                .create_buffer_init(&BufferDesc::gpu_only("static mesh vertices", bytes.len() as u64, BufferUsage::VERTEX), &bytes)?;
            let indices = device.create_buffer_init(
                &BufferDesc::gpu_only("static mesh indices", lod.indices.len() as u64 * 4, BufferUsage::INDEX),
                bytemuck::cast_slice(&lod.indices),
            )?;
            out.push(LodGpu { vertices, offsets, indices });
        }
        *gpu = Some((device.id(), Arc::new(out)));
        Ok(())
    }

    /// Destroys the GPU buffers (deferred by the RHI); proxies still in the
    /// scene must be removed first.
    pub fn release_gpu(&self, device: &Device) {
        let mut gpu = self.gpu.lock().unwrap_or_else(|p| p.into_inner());
        // Another device's buffers are that device's to release.
        if gpu.as_ref().is_some_and(|(owner, _)| *owner != device.id()) {
            return;
        }
        if let Some((_, gpu)) = gpu.take() {
            for l in gpu.iter() {
                device.destroy_buffer(l.vertices);
                device.destroy_buffer(l.indices);
            }
        }
    }

    /// A proxy starts using the GPU buffers (created if needed).
    pub(crate) fn acquire_gpu(&self, device: &Device) -> rhi_vulkan::Result<()> {
        let mut users = self.users.lock().unwrap_or_else(|p| p.into_inner());
        self.init_gpu(device)?;
        *users += 1;
        Ok(())
    }

    /// A proxy stops using the GPU buffers; the last one destroys them
    /// (returns whether it was the last).
    pub(crate) fn release_user(&self, device: &Device) -> bool {
        let mut users = self.users.lock().unwrap_or_else(|p| p.into_inner());
        *users = users.saturating_sub(1);
        if *users == 0 {
            self.release_gpu(device);
        }
        *users == 0
    }

    pub(crate) fn gpu(&self) -> Option<Arc<Vec<LodGpu>>> {
        self.gpu.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|(_, g)| g.clone())
    }
}

/// Simple shapes as single-LOD mesh data (engine-core builds its assets on these).
pub mod shapes {
    use super::StaticMeshLod;
    use crate::vertex_factory::LocalVertex;
    use glam::Vec3;

    fn vertex(p: Vec3, n: Vec3, uv: [f32; 2]) -> LocalVertex {
        let t = if n.z.abs() > 0.9 { Vec3::X } else { Vec3::Z.cross(n).normalize() };
        LocalVertex {
            position: p.to_array(),
            tangent_x: t.extend(1.0).to_array(),
            normal: n.to_array(),
            color: [255; 4],
            uvs: [uv, [0.0; 2], [0.0; 2], [0.0; 2]],
        }
    }

    /// An axis-aligned cube of edge `size` centred at the origin (24 vertices, 12 triangles, CCW outward).
    /// Each face shows a texture upright (UV (0, 0) at its top left, seen
    /// from outside with +Z — or +Y for the top and bottom — up), with
    /// tangents along U and the binormal toward the image's top.
    pub fn cube(size: f32) -> StaticMeshLod {
        let h = size * 0.5;
        let faces = [
            (Vec3::X, Vec3::Y, Vec3::Z),
            (Vec3::NEG_X, Vec3::NEG_Y, Vec3::Z),
            (Vec3::Y, Vec3::NEG_X, Vec3::Z),
            (Vec3::NEG_Y, Vec3::X, Vec3::Z),
            (Vec3::Z, Vec3::X, Vec3::Y),
            (Vec3::NEG_Z, Vec3::X, Vec3::NEG_Y),
        ];
        let mut vertices = Vec::new();
        let mut indices = Vec::new();
        for (n, u, v) in faces {
            let base = vertices.len() as u32;
            for (su, sv) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                vertices.push(vertex((n + u * su + v * sv) * h, n, [(su + 1.0) / 2.0, (1.0 - sv) / 2.0]));
            }
            indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
        }
        StaticMeshLod::single_section(vertices, indices)
    }

    /// A geodesic icosphere of `radius` centred at the origin: each face of
    /// an icosahedron cut into `frequency`² triangles, its vertices pushed
    /// onto the sphere (20 · frequency² triangles, CCW outward; vertices
    /// are not shared between the icosahedron's faces). UVs are the
    /// direction's longitude and latitude.
    pub fn icosphere(radius: f32, frequency: u32) -> StaticMeshLod {
        let f = frequency.max(1);
        let t = (1.0 + 5f32.sqrt()) / 2.0;
        let corners = [
            Vec3::new(-1.0, t, 0.0),
            Vec3::new(1.0, t, 0.0),
            Vec3::new(-1.0, -t, 0.0),
            Vec3::new(1.0, -t, 0.0),
            Vec3::new(0.0, -1.0, t),
            Vec3::new(0.0, 1.0, t),
            Vec3::new(0.0, -1.0, -t),
            Vec3::new(0.0, 1.0, -t),
            Vec3::new(t, 0.0, -1.0),
            Vec3::new(t, 0.0, 1.0),
            Vec3::new(-t, 0.0, -1.0),
            Vec3::new(-t, 0.0, 1.0),
        ];
        const FACES: [[usize; 3]; 20] = [
            [0, 11, 5],
            [0, 5, 1],
            [0, 1, 7],
            [0, 7, 10],
            [0, 10, 11],
            [1, 5, 9],
            [5, 11, 4],
            [11, 10, 2],
            [10, 7, 6],
            [7, 1, 8],
            [3, 9, 4],
            [3, 4, 2],
            [3, 2, 6],
            [3, 6, 8],
            [3, 8, 9],
            [4, 9, 5],
            [2, 4, 11],
            [6, 2, 10],
            [8, 6, 7],
            [9, 8, 1],
        ];
        let mut vertices = Vec::new();
        let mut indices = Vec::new();
        for [a, b, c] in FACES {
            let (a, b, c) = (corners[a], corners[b], corners[c]);
            let base = vertices.len() as u32;
            // Row i of the face has i + 1 vertices, from a towards b and c.
            for i in 0..=f {
                for j in 0..=i {
                    let p = a + (b - a) * (i as f32 / f as f32) + (c - b) * (j as f32 / f as f32);
                    let n = p.normalize();
                    let uv = [0.5 + n.y.atan2(n.x) / std::f32::consts::TAU, n.z.clamp(-1.0, 1.0).acos() / std::f32::consts::PI];
                    vertices.push(vertex(n * radius, n, uv));
                }
            }
            let at = |i: u32, j: u32| base + i * (i + 1) / 2 + j;
            for i in 0..f {
                for j in 0..=i {
                    indices.extend_from_slice(&[at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
                    if j < i {
                        indices.extend_from_slice(&[at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
                    }
                }
            }
        }
        StaticMeshLod::single_section(vertices, indices)
    }

    /// A square in the XY plane facing +Z, edge `size`, centred at the
    /// origin; UV (0, 0) at its -X +Y corner, so seen from +Z with +Y up a
    /// texture is upright.
    pub fn plane(size: f32) -> StaticMeshLod {
        let h = size * 0.5;
        let vertices = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
            .map(|(x, y)| vertex(Vec3::new(x * h, y * h, 0.0), Vec3::Z, [(x + 1.0) / 2.0, (1.0 - y) / 2.0]))
            .to_vec();
        StaticMeshLod::single_section(vertices, vec![0, 1, 2, 0, 2, 3])
    }

    /// A UV sphere of `radius` centred at the origin, poles on ±Z:
    /// `segments` slices around Z (at least 3) and `rings` bands from pole
    /// to pole (at least 2), CCW outward. U runs once around from +X
    /// towards +Y, V from the north pole (0) to the south pole (1), so a
    /// texture is upright seen from outside with +Z up; tangents point
    /// along increasing U, the binormal (w = +1) towards the image's top.
    /// The seam repeats its column of vertices (U = 0 and 1); each pole has
    /// one vertex per slice, at the slice's middle U, and no degenerate
    /// triangle.
    pub fn uv_sphere(radius: f32, segments: u32, rings: u32) -> StaticMeshLod {
        let (segments, rings) = (segments.max(3), rings.max(2));
        let mut vertices = Vec::with_capacity(((segments + 1) * (rings + 1)) as usize);
        for r in 0..=rings {
            let v = r as f32 / rings as f32;
            let phi = std::f32::consts::PI * v;
            for s in 0..=segments {
                // At a pole every slice meets; its vertex takes the slice's middle U.
                let pole = r == 0 || r == rings;
                let u = if pole { (s as f32 + 0.5).min(segments as f32) / segments as f32 } else { s as f32 / segments as f32 };
                let theta = std::f32::consts::TAU * u;
                let (st, ct) = theta.sin_cos();
                let n = if pole {
                    Vec3::new(0.0, 0.0, if r == 0 { 1.0 } else { -1.0 })
                } else {
                    Vec3::new(phi.sin() * ct, phi.sin() * st, phi.cos())
                };
                let tangent = Vec3::new(-st, ct, 0.0);
                vertices.push(LocalVertex {
                    position: (n * radius).to_array(),
                    tangent_x: tangent.extend(1.0).to_array(),
                    normal: n.to_array(),
                    color: [255; 4],
                    uvs: [[u, v], [0.0; 2], [0.0; 2], [0.0; 2]],
                });
            }
        }
        let row = segments + 1;
        let mut indices = Vec::with_capacity((6 * segments * (rings - 1)) as usize);
        for r in 0..rings {
            for s in 0..segments {
                let (a, b) = (r * row + s, r * row + s + 1);
                let (c, d) = (a + row, b + row);
                // a b   (V grows downwards; seen from outside U grows to the right)
                // c d
                if r != 0 {
                    indices.extend_from_slice(&[a, c, b]);
                }
                if r != rings - 1 {
                    indices.extend_from_slice(&[b, c, d]);
                }
            }
        }
        StaticMeshLod::single_section(vertices, indices)
    }

    fn ring(v: &mut Vec<LocalVertex>, radius: f32, z: f32, normal_z: f32, segments: u32, uv_v: f32) {
        for s in 0..=segments {
            let theta = std::f32::consts::TAU * s as f32 / segments as f32;
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
            let theta = std::f32::consts::TAU * s as f32 / segments as f32;
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

    /// A cylinder of `radius` and `height` centred at the origin, axis on Z:
    /// `segments` slices around (at least 3), capped, CCW outward.
    pub fn cylinder(radius: f32, height: f32, segments: u32) -> StaticMeshLod {
        let segments = segments.max(3);
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

    /// A cone of `radius` and `height` centred at the origin, apex on +Z:
    /// `segments` slices around (at least 3), its base capped, CCW outward.
    pub fn cone(radius: f32, height: f32, segments: u32) -> StaticMeshLod {
        let segments = segments.max(3);
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
        fn an_icosphere_has_twenty_frequency_squared_outward_triangles_on_its_sphere() {
            let lod = icosphere(2.0, 5);
            assert_eq!(lod.indices.len(), 3 * 20 * 25);
            outward(&lod);
            assert!(lod.vertices.iter().all(|v| (Vec3::from(v.position).length() - 2.0).abs() < 1e-5));
            assert!(lod.indices.chunks_exact(3).all(|t| t.iter().all(|&i| (i as usize) < lod.vertices.len())));
        }

        #[test]
        fn shapes_wind_outward() {
            outward(&uv_sphere(0.5, 12, 6));
            outward(&cylinder(0.5, 1.0, 12));
            outward(&cone(0.5, 1.0, 12));
            outward(&cube(1.0));
        }

        #[test]
        fn uv_sphere_winds_outward_with_tangents_along_u_and_v_down() {
            let (segments, rings) = (12, 7);
            let lod = uv_sphere(2.0, segments, rings);
            assert_eq!(lod.vertices.len(), ((segments + 1) * (rings + 1)) as usize);
            assert_eq!(lod.indices.len(), (6 * segments * (rings - 1)) as usize, "two triangles per quad, one per pole quad");
            assert!(lod.indices.iter().all(|&i| (i as usize) < lod.vertices.len()));
            let p = |i: u32| Vec3::from(lod.vertices[i as usize].position);
            for v in &lod.vertices {
                let (pos, n, t) = (Vec3::from(v.position), Vec3::from(v.normal), Vec3::from_slice(&v.tangent_x[..3]));
                assert!((pos.length() - 2.0).abs() < 1e-5 && (n - pos / 2.0).length() < 1e-5, "{v:?}");
                assert!((t.length() - 1.0).abs() < 1e-5 && t.dot(n).abs() < 1e-5 && v.tangent_x[3] == 1.0, "{v:?}");
                // V = 0 at the north pole, 1 at the south pole.
                assert!((v.uvs[0][1] - n.z.clamp(-1.0, 1.0).acos() / std::f32::consts::PI).abs() < 1e-5, "{v:?}");
            }
            for t in lod.indices.chunks_exact(3) {
                let face = (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0]));
                assert!(face.length() > 1e-4, "triangle {t:?} is degenerate");
                assert!(face.dot(p(t[0]) + p(t[1]) + p(t[2])) > 0.0, "triangle {t:?} winds inward");
            }
            // Off the poles U grows along the tangent and V downwards, the
            // binormal pointing to the row above.
            let row = segments + 1;
            for r in 1..rings {
                for s in 0..segments {
                    let i = r * row + s;
                    let v = &lod.vertices[i as usize];
                    let (t, n) = (Vec3::from_slice(&v.tangent_x[..3]), Vec3::from(v.normal));
                    let binormal = n.cross(t) * v.tangent_x[3];
                    assert!((p(i + 1) - p(i)).dot(t) > 0.0, "U grows along the tangent at {i}");
                    assert!(lod.vertices[i as usize + 1].uvs[0][0] > v.uvs[0][0]);
                    assert!((p(i - row) - p(i)).dot(binormal) > 0.0, "the binormal points to the row above (smaller V) at {i}");
                    assert!(lod.vertices[(i - row) as usize].uvs[0][1] < v.uvs[0][1]);
                }
            }
            // The +X equator point: U = 0, V = 0.5; tangent +Y, binormal +Z.
            let eq = uv_sphere(1.0, 8, 4);
            let v = &eq.vertices[(2 * 9) as usize];
            assert_eq!(v.uvs[0], [0.0, 0.5]);
            assert!((Vec3::from(v.position) - Vec3::X).length() < 1e-6);
            assert!((Vec3::from_slice(&v.tangent_x[..3]) - Vec3::Y).length() < 1e-6);
            assert!((Vec3::X.cross(Vec3::Y) * v.tangent_x[3] - Vec3::Z).length() < 1e-6, "binormal up");
            let seam_end = &eq.vertices[(2 * 9 + 8) as usize];
            assert_eq!(seam_end.uvs[0], [1.0, 0.5]);
            assert!((Vec3::from(seam_end.position) - Vec3::X).length() < 1e-5, "the seam repeats the first column");
            // Out-of-range counts are raised to the smallest sphere.
            let small = uv_sphere(1.0, 0, 0);
            assert_eq!((small.vertices.len(), small.indices.len()), (4 * 3, 6 * 3));
        }
    }
}
