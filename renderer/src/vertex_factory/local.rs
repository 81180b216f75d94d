//! The local vertex factory, used by static and procedural meshes.
//!
//! Streams: 0 position (12 B); 1 tangent basis (tangent_x with the binormal
//! sign in w, normal; 32 B); 2 color (RGBA8); 3 UV0..UV3 (32 B, the shader
//! reaches materials as `uv0`..`uv3`); then the renderer's primitive-id
//! stream (one `u32` per instance).
//!
//! Positions are a stream of their own, not interleaved with the other
//! attributes, so the depth-only passes bind them alone through the
//! position-only variant ([`LocalPositionOnlyVertexFactory`], UE's
//! position-only stream). Static meshes and procedural sections keep each
//! stream in a region of its own of one buffer ([`LocalVertexFactory::pack`],
//! procmesh's `StreamLayout`), and a Vulkan vertex binding is a buffer and an
//! offset: bound alone, the position region is to the GPU what UE's separate
//! position buffer is, without a second allocation per mesh.

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
        let (offsets, size) = stream_offsets(Self::STREAM_STRIDES, vertices.len());
        let mut bytes = vec![0u8; size];
        for (i, v) in vertices.iter().enumerate() {
            put_position_and_basis(&mut bytes, [offsets[0], offsets[1]], i, v);
            put(&mut bytes, offsets[2] + i as u64 * 4, &v.color);
            put(&mut bytes, offsets[3] + i as u64 * 32, bytemuck::cast_slice(&v.uvs));
        }
        (bytes, offsets)
    }

    /// Stream 0: the local-space position, `vec3<f32>` at location 0. The
    /// first stream of every factory that reads mesh vertices.
    pub fn position_stream() -> VertexBufferLayout {
        VertexBufferLayout {
            stride: 12,
            step_mode: VertexStepMode::Vertex,
            attributes: vec![VertexAttribute { location: 0, format: VertexFormat::Float32x3, offset: 0 }],
        }
    }

    /// Stream 1: the tangent basis, tangent X with the binormal sign in `w`
    /// at location 1 and the normal at location 2 (32 bytes). The second
    /// stream of every factory that reads mesh vertices.
    pub fn tangent_basis_stream() -> VertexBufferLayout {
        let attr = |location, offset| VertexAttribute { location, format: VertexFormat::Float32x4, offset };
        VertexBufferLayout { stride: 32, step_mode: VertexStepMode::Vertex, attributes: vec![attr(1, 0), attr(2, 16)] }
    }
}

/// Each stream's byte offset in one buffer that holds `n` vertices of
/// streams with these strides one after the other (each stream 16-byte
/// aligned), and the buffer's size (at least 16 bytes).
pub fn stream_offsets<const N: usize>(strides: [u32; N], n: usize) -> ([u64; N], usize) {
    let mut offsets = [0u64; N];
    let mut total = 0usize;
    for (offset, stride) in offsets.iter_mut().zip(strides) {
        *offset = total as u64;
        total += (stride as usize * n).next_multiple_of(16);
    }
    (offsets, total.max(16))
}

/// Writes vertex `i`'s position and tangent basis into the position and
/// tangent-basis streams at `offsets` (the layouts of
/// [`LocalVertexFactory::position_stream`] and
/// [`LocalVertexFactory::tangent_basis_stream`]).
pub fn put_position_and_basis(bytes: &mut [u8], offsets: [u64; 2], i: usize, v: &LocalVertex) {
    let i = i as u64;
    put(bytes, offsets[0] + i * 12, bytemuck::cast_slice(&v.position));
    put(bytes, offsets[1] + i * 32, bytemuck::cast_slice(&v.tangent_x));
    put(bytes, offsets[1] + i * 32 + 16, bytemuck::cast_slice(&[v.normal[0], v.normal[1], v.normal[2], 0.0]));
}

fn put(bytes: &mut [u8], at: u64, data: &[u8]) {
    let at = at as usize;
    bytes[at..at + data.len()].copy_from_slice(data);
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
            Self::position_stream(),
            Self::tangent_basis_stream(),
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

    fn position_only(&self) -> Option<&'static dyn VertexFactoryType> {
        Some(&LOCAL_POSITION_ONLY_VERTEX_FACTORY)
    }
}

/// The local factory's position-only variant (UE's position-only stream):
/// stream 0 (positions) and the id stream, for the depth-only passes of
/// opaque static meshes and procedural sections.
pub struct LocalPositionOnlyVertexFactory;

/// The one instance ([`LocalVertexFactory`]'s `position_only`).
pub static LOCAL_POSITION_ONLY_VERTEX_FACTORY: LocalPositionOnlyVertexFactory = LocalPositionOnlyVertexFactory;

impl VertexFactoryType for LocalPositionOnlyVertexFactory {
    fn name(&self) -> &'static str {
        "local_position_only"
    }

    fn wgsl(&self) -> &'static str {
        include_str!("../../shaders/local_vf_position_only.inc.wgsl")
    }

    fn streams(&self) -> Vec<VertexBufferLayout> {
        vec![LocalVertexFactory::position_stream()]
    }

    fn primitive_id_location(&self) -> Option<u32> {
        Some(1)
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
