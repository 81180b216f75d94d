//! The local vertex factory, used by static and procedural meshes.
//!
//! Streams: 0 position (12 B); 1 tangent basis (tangent_x with the binormal
//! sign in w, normal; 32 B); 2 color (RGBA8); 3 UV0..UV3 (32 B, the shader
//! reaches materials as `uv0`..`uv3`); then the renderer's primitive-id
//! stream (one `u32` per instance).

use super::VertexFactoryType;
use rhi_vulkan::{VertexAttribute, VertexBufferLayout, VertexFormat, VertexStepMode};

/// The local vertex factory (UE's FLocalVertexFactory): the four streams
/// of the module docs and the renderer's id stream, so its draws merge.
pub struct LocalVertexFactory;

/// The one instance, as meshes name it in [`crate::MeshBatch`]es.
pub static LOCAL_VERTEX_FACTORY: LocalVertexFactory = LocalVertexFactory;

/// One vertex as the local factory's streams hold it (before splitting).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct LocalVertex {
    /// Local-space position.
    pub position: [f32; 3],
    /// Tangent X with the binormal sign (±1) in `w`.
    pub tangent_x: [f32; 4],
    /// Unit normal.
    pub normal: [f32; 3],
    /// Vertex colour, RGBA8 (the default material multiplies the base
    /// colour by it).
    pub color: [u8; 4],
    /// Texture coordinates UV0..UV3 (`uv0`..`uv3` in materials).
    pub uvs: [[f32; 2]; 4],
}

impl LocalVertexFactory {
    /// Byte sizes of the four streams for one vertex.
    pub const STREAM_STRIDES: [u32; 4] = [12, 32, 4, 32];

    /// Splits vertices into the four stream byte arrays, concatenated in one
    /// buffer; returns the bytes and each stream's offset.
    pub fn pack(vertices: &[LocalVertex]) -> (Vec<u8>, [u64; 4]) {
        let n = vertices.len();
        let sizes = Self::STREAM_STRIDES.map(|s| s as usize * n);
        let mut offsets = [0u64; 4];
        let mut total = 0;
        for (i, size) in sizes.iter().enumerate() {
            offsets[i] = total as u64;
            total += size.next_multiple_of(16);
        }
        let mut bytes = vec![0u8; total.max(16)];
        for (i, v) in vertices.iter().enumerate() {
            let put = |bytes: &mut Vec<u8>, at: usize, data: &[u8]| bytes[at..at + data.len()].copy_from_slice(data);
            put(&mut bytes, offsets[0] as usize + i * 12, bytemuck::cast_slice(&v.position));
            put(&mut bytes, offsets[1] as usize + i * 32, bytemuck::cast_slice(&v.tangent_x));
            let normal = [v.normal[0], v.normal[1], v.normal[2], 0.0];
            put(&mut bytes, offsets[1] as usize + i * 32 + 16, bytemuck::cast_slice(&normal));
            put(&mut bytes, offsets[2] as usize + i * 4, &v.color);
            put(&mut bytes, offsets[3] as usize + i * 32, bytemuck::cast_slice(&v.uvs));
        }
        (bytes, offsets)
    }
}

impl VertexFactoryType for LocalVertexFactory {
    fn name(&self) -> &'static str {
        "local"
    }

    fn wgsl(&self) -> &'static str {
        include_str!("../../shaders/local_vf.inc.wgsl")
    }

    fn streams(&self) -> Vec<VertexBufferLayout> {
        let attr = |location, format, offset| VertexAttribute { location, format, offset };
        vec![
            VertexBufferLayout { stride: 12, step_mode: VertexStepMode::Vertex, attributes: vec![attr(0, VertexFormat::Float32x3, 0)] },
            VertexBufferLayout {
                stride: 32,
                step_mode: VertexStepMode::Vertex,
                attributes: vec![attr(1, VertexFormat::Float32x4, 0), attr(2, VertexFormat::Float32x4, 16)],
            },
            VertexBufferLayout { stride: 4, step_mode: VertexStepMode::Vertex, attributes: vec![attr(3, VertexFormat::Unorm8x4, 0)] },
            VertexBufferLayout {
                stride: 32,
                step_mode: VertexStepMode::Vertex,
                attributes: vec![
                    attr(4, VertexFormat::Float32x2, 0),
                    attr(5, VertexFormat::Float32x2, 8),
                    attr(6, VertexFormat::Float32x2, 16),
                    attr(7, VertexFormat::Float32x2, 24),
                ],
            },
        ]
    }

    fn primitive_id_location(&self) -> Option<u32> {
        Some(8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_puts_each_attribute_in_its_stream() {
        let v = LocalVertex { position: [1.0, 2.0, 3.0], color: [9, 8, 7, 6], normal: [0.0, 0.0, 1.0], ..Default::default() };
        let (bytes, offsets) = LocalVertexFactory::pack(&[v, v]);
        assert_eq!(offsets[0], 0);
        assert_eq!(offsets[1], 32, "24 bytes of positions rounded up to 16");
        let f = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        assert_eq!(f(12 + 8), 3.0, "second vertex z");
        assert_eq!(f(offsets[1] as usize + 16 + 8), 1.0, "normal z");
        assert_eq!(&bytes[offsets[2] as usize + 4..offsets[2] as usize + 8], &[9, 8, 7, 6]);
    }
}
