//! A section's vertex streams in the renderer's local vertex factory layout.
//!
//! The local factory reads four streams (`renderer::LOCAL_VERTEX_FACTORY`):
//!
//! | stream | bytes per vertex | holds | from the section's |
//! | --- | --- | --- | --- |
//! | 0 | 12 | position `f32x3` | positions |
//! | 1 | 32 | tangent X `f32x4` (binormal sign in `w`), normal `f32x4` | tangents and normals |
//! | 2 | 4 | color `RGBA8` (sRGB-encoded bytes, as stored) | colors |
//! | 3 | 32 | UV0..UV3 `f32x2` each | four UV channels |
//!
//! A section's four streams live in one GPU buffer, one region each
//! ([`StreamLayout`]); an update writes only the regions of the streams it
//! carries. Streams 1 and 3 interleave several attributes, so a stream can
//! only be rewritten whole: an update that changes normals must also carry
//! the tangents, and one that changes a UV channel all four channels
//! ([`render_streams`] widens a set of attributes to that). Keeping the
//! game side's structure-of-arrays data apart per stream is what makes a
//! positions-only update one copy of 12 bytes per vertex.
//!
//! The binormal sign in stream 1's `w` is `-1` when the tangent's
//! `flip_tangent_y` is set and `+1` otherwise, so a shader rebuilds the
//! binormal as `w * cross(normal, tangent_x)`, the same vector
//! [`ProcMeshVertex::binormal`](crate::ProcMeshVertex::binormal) gives.

use glam::{Vec2, Vec3};

use crate::section::ProcMeshSection;
use crate::vertex::{Color, ProcMeshTangent, VertexAttributes};

/// Bytes per vertex of each stream, in binding order.
pub(crate) const STREAM_STRIDES: [u64; 4] = [12, 32, 4, 32];

/// The attributes each stream is built from, in binding order.
pub(crate) const STREAM_ATTRIBUTES: [VertexAttributes; 4] = [
    VertexAttributes::POSITION,
    VertexAttributes::NORMAL.union(VertexAttributes::TANGENT),
    VertexAttributes::COLOR,
    VertexAttributes::UV0.union(VertexAttributes::UV1).union(VertexAttributes::UV2).union(VertexAttributes::UV3),
];

/// `attributes` widened to whole streams: every attribute that shares a
/// stream with one in `attributes`. What a
/// [`SectionUpdate`](crate::SectionUpdate) for the proxy must carry.
pub fn render_streams(attributes: VertexAttributes) -> VertexAttributes {
    STREAM_ATTRIBUTES.iter().filter(|s| !attributes.intersection(**s).is_empty()).fold(VertexAttributes::NONE, |all, s| all.union(*s))
}

/// Where each stream of a section with a given vertex count starts in the
/// section's vertex buffer. Regions start on 16-byte boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamLayout {
    pub offsets: [u64; 4],
    pub size: u64,
}

impl StreamLayout {
    pub fn new(vertex_count: usize) -> Self {
        let mut offsets = [0; 4];
        let mut size = 0;
        for (offset, stride) in offsets.iter_mut().zip(STREAM_STRIDES) {
            *offset = size;
            size += (stride * vertex_count as u64).next_multiple_of(16);
        }
        Self { offsets, size }
    }
}

pub(crate) fn position_bytes(positions: &[Vec3]) -> Vec<u8> {
    bytemuck::cast_slice(positions).to_vec()
}

pub(crate) fn tangent_basis_bytes(normals: &[Vec3], tangents: &[ProcMeshTangent]) -> Vec<u8> {
    debug_assert_eq!(normals.len(), tangents.len());
    let mut bytes = Vec::with_capacity(normals.len() * 32);
    for (n, t) in normals.iter().zip(tangents) {
        let sign = if t.flip_tangent_y { -1.0 } else { 1.0 };
        let basis: [f32; 8] = [t.tangent_x.x, t.tangent_x.y, t.tangent_x.z, sign, n.x, n.y, n.z, 0.0];
        bytes.extend_from_slice(bytemuck::bytes_of(&basis));
    }
    bytes
}

pub(crate) fn color_bytes(colors: &[Color]) -> Vec<u8> {
    bytemuck::cast_slice(colors).to_vec()
}

pub(crate) fn uv_bytes(uvs: [&[Vec2]; 4]) -> Vec<u8> {
    let n = uvs[0].len();
    debug_assert!(uvs.iter().all(|c| c.len() == n));
    let mut bytes = Vec::with_capacity(n * 32);
    for i in 0..n {
        for channel in uvs {
            bytes.extend_from_slice(bytemuck::bytes_of(&channel[i]));
        }
    }
    bytes
}

/// The whole vertex buffer of `section`: every stream at its offset.
pub(crate) fn section_vertex_bytes(section: &ProcMeshSection, layout: &StreamLayout) -> Vec<u8> {
    let mut bytes = vec![0; layout.size as usize];
    let uvs = [0, 1, 2, 3].map(|c| section.uv(c));
    let streams = [
        position_bytes(section.positions()),
        tangent_basis_bytes(section.normals(), section.tangents()),
        color_bytes(section.colors()),
        uv_bytes(uvs),
    ];
    for (stream, offset) in streams.iter().zip(layout.offsets) {
        let at = offset as usize;
        bytes[at..at + stream.len()].copy_from_slice(stream);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_widen_to_whole_interleaved_streams() {
        assert_eq!(render_streams(VertexAttributes::NORMAL), VertexAttributes::NORMAL | VertexAttributes::TANGENT);
        assert_eq!(render_streams(VertexAttributes::UV2), STREAM_ATTRIBUTES[3]);
        assert_eq!(
            render_streams(VertexAttributes::POSITION | VertexAttributes::COLOR),
            VertexAttributes::POSITION | VertexAttributes::COLOR
        );
        assert_eq!(render_streams(VertexAttributes::NONE), VertexAttributes::NONE);
        assert_eq!(render_streams(VertexAttributes::ALL), VertexAttributes::ALL);
    }

    #[test]
    fn layout_matches_the_local_vertex_factory() {
        let layout = StreamLayout::new(3);
        assert_eq!(layout.offsets, [0, 48, 144, 160]);
        assert_eq!(layout.size, 256);
        for (ours, theirs) in STREAM_STRIDES.iter().zip(renderer::vertex_factory::LocalVertexFactory::STREAM_STRIDES) {
            assert_eq!(*ours, u64::from(theirs));
        }
    }

    fn to_f32s(bytes: &[u8]) -> Vec<f32> {
        bytes.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    #[test]
    fn tangent_basis_carries_the_binormal_sign() {
        let bytes = tangent_basis_bytes(&[Vec3::Z, Vec3::Y], &[ProcMeshTangent::new(Vec3::X, false), ProcMeshTangent::new(Vec3::X, true)]);
        let floats: Vec<f32> = to_f32s(&bytes);
        assert_eq!(&floats[..8], &[1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
        assert_eq!(&floats[8..], &[1.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0, 0.0]);
        let uv = uv_bytes([&[Vec2::new(1.0, 2.0)], &[Vec2::new(3.0, 4.0)], &[Vec2::ZERO], &[Vec2::ONE]]);
        let floats: Vec<f32> = to_f32s(&uv);
        assert_eq!(floats, [1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 1.0, 1.0]);
    }
}
