//! The instanced vertex factory (UE's `FInstancedStaticMeshVertexFactory`).
//!
//! A factory reads per-instance data through vertex streams, and may bind
//! one group of its own (group 3, `renderer::VERTEX_FACTORY_BIND_GROUP`,
//! carried by each mesh batch). Four streams at most are allowed, so the
//! local factory's color and UV streams are interleaved into one:
//!
//! ```text
//! stream 0  per vertex    position                       12 B  (as the local factory)
//! stream 1  per vertex    tangent_x (w: sign), normal    32 B  (as the local factory)
//! stream 2  per vertex    color RGBA8, UV0               12 B  (color + UV0 of the local factory)
//! stream 3  per instance  InstanceStreamData             80 B
//! ```
//!
//! [`InstanceStreamData`] is both the layout of the proxy's persistent
//! instance buffer and of the compacted, per-view buffer the GPU culling pass
//! writes; it carries the instance's stable id slot (location 10) through
//! culling, and custom floats 0..3 inline.
//!
//! Every custom float (up to [`crate::MAX_CUSTOM_DATA_FLOATS`]) reaches
//! materials through `custom_data(in, k)`: the factory's `vf_custom_data`
//! reads float `k` of the instance's slot from the proxy's custom data
//! buffer, a storage buffer bound at group 3 (layout and updates:
//! `proxy/custom_data.rs`). The inline copies stay for materials written
//! against them: floats 0..2 in `in.custom.xyz`, float 3 in `in.custom1.x`,
//! and `PerInstanceRandom` in `in.custom.w` (see
//! `shaders/instanced_vf.inc.wgsl`).
//!
//! ## Dithered fade
//!
//! The factory comes in two variants, the same WGSL and streams:
//! [`INSTANCED_VERTEX_FACTORY`] and [`INSTANCED_DITHERED_VERTEX_FACTORY`],
//! whose [`VertexFactoryType::dithered_fade`] is on. The proxy draws with
//! the dithered one only when its component has a fade band
//! ([`crate::CullDistances::has_fade_band`]) or a dithered LOD transition
//! ([`crate::LodDitherBand`]: an instance near a LOD threshold drawn at two
//! LODs, each copy's side of the pattern and share in its `flags`, which
//! the factory folds into the fade it passes on —
//! `renderer::vertex_factory::dithered_lod_fade`): then opaque and masked
//! instances keep only the pixels whose 4×4 ordered dither threshold is
//! below their cull-distance fade, in every pass — depth-only passes get a
//! fragment stage for it — so depth, shadow and colour agree. Components
//! without a fade band keep the plain factory and its depth-only pipelines
//! (no fragment stage); their images do not change. The factories' names
//! differ, so their pipelines are cached apart.

use bytemuck::{Pod, Zeroable};
use renderer::vertex_factory::{put_position_and_basis, stream_offsets, LocalVertexFactory};
use renderer::{LocalVertex, VertexFactoryType};
use rhi_vulkan::{VertexAttribute, VertexBufferLayout, VertexFormat, VertexStepMode};

use crate::gpu_data::InstanceGpuData;

/// Custom-data floats carried inline per instance (all of them reach
/// materials through `custom_data(in, k)`; see the module docs).
pub const INLINE_CUSTOM_DATA_FLOATS: usize = 4;

/// One instance as the instanced vertex factory's instance stream and the
/// GPU culling pass read it (std430-compatible, 80 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InstanceStreamData {
    /// Rows 0..3 of the instance→component matrix, translation in `.w`.
    pub transform_rows: [[f32; 4]; 3],
    /// Custom data floats 0..3 (zero where the component has fewer).
    pub custom: [f32; 4],
    /// UE's `PerInstanceRandom`.
    pub random: f32,
    /// Cull-distance fade: 1 in the persistent buffer, the computed fade in
    /// culled output.
    pub fade: f32,
    /// The slot of the instance's stable id.
    pub instance_id: u32,
    /// [`InstanceGpuData::FLAG_MIRRORED`]; in culled output also the
    /// copy's LOD-dither bits ([`InstanceGpuData::lod_dither_flags`]),
    /// which the factory reads (location 11).
    pub flags: u32,
}

impl InstanceStreamData {
    pub const SIZE: u64 = std::mem::size_of::<Self>() as u64;

    /// From the game side's packed instance and its custom floats.
    pub fn new(gpu: &InstanceGpuData, custom: &[f32]) -> Self {
        let mut c = [0.0; INLINE_CUSTOM_DATA_FLOATS];
        for (d, s) in c.iter_mut().zip(custom) {
            *d = *s;
        }
        Self {
            transform_rows: gpu.transform_rows,
            custom: c,
            random: gpu.random,
            fade: 1.0,
            instance_id: gpu.instance_id,
            flags: gpu.flags,
        }
    }

    /// The instance→component transform.
    pub fn transform(&self) -> glam::Affine3A {
        let r = &self.transform_rows;
        glam::Affine3A::from_cols_array(&[
            r[0][0], r[1][0], r[2][0], r[0][1], r[1][1], r[2][1], r[0][2], r[1][2], r[2][2], r[0][3], r[1][3], r[2][3],
        ])
    }
}

/// One vertex of the interleaved color/UV stream.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ColorUvVertex {
    pub color: [u8; 4],
    pub uv0: [f32; 2],
}

/// The instanced factory; use [`INSTANCED_VERTEX_FACTORY`], or
/// [`INSTANCED_DITHERED_VERTEX_FACTORY`] for a component with a fade band
/// (module docs).
pub struct InstancedVertexFactory {
    dithered_fade: bool,
}

pub static INSTANCED_VERTEX_FACTORY: InstancedVertexFactory = InstancedVertexFactory { dithered_fade: false };

/// The instanced factory whose cull-distance fade is dithered (module docs).
pub static INSTANCED_DITHERED_VERTEX_FACTORY: InstancedVertexFactory = InstancedVertexFactory { dithered_fade: true };

impl InstancedVertexFactory {
    /// The factory a component with `distances` and `lod_dither` draws
    /// with: the dithered one when it has a fade band or a dithered LOD
    /// transition.
    pub fn for_settings(distances: &crate::CullDistances, lod_dither: crate::LodDitherBand) -> &'static InstancedVertexFactory {
        if distances.has_fade_band() || lod_dither.is_on() {
            &INSTANCED_DITHERED_VERTEX_FACTORY
        } else {
            &INSTANCED_VERTEX_FACTORY
        }
    }

    /// Byte sizes of the three per-vertex streams for one vertex.
    pub const VERTEX_STREAM_STRIDES: [u32; 3] = [12, 32, 12];

    /// Splits vertices into the three per-vertex streams, concatenated in
    /// one buffer (each stream 16-byte aligned); returns the bytes and each
    /// stream's offset.
    pub fn pack(vertices: &[LocalVertex]) -> (Vec<u8>, [u64; 3]) {
        let (offsets, size) = stream_offsets(Self::VERTEX_STREAM_STRIDES, vertices.len());
        let mut bytes = vec![0u8; size];
        for (i, v) in vertices.iter().enumerate() {
            put_position_and_basis(&mut bytes, [offsets[0], offsets[1]], i, v);
            let at = (offsets[2] + i as u64 * 12) as usize;
            bytes[at..at + 12].copy_from_slice(bytemuck::bytes_of(&ColorUvVertex { color: v.color, uv0: v.uvs[0] }));
        }
        (bytes, offsets)
    }
}

impl VertexFactoryType for InstancedVertexFactory {
    fn name(&self) -> &'static str {
        if self.dithered_fade {
            "instanced_dithered"
        } else {
            "instanced"
        }
    }

    fn wgsl(&self) -> &'static str {
        include_str!("../shaders/instanced_vf.inc.wgsl")
    }

    fn streams(&self) -> Vec<VertexBufferLayout> {
        let attr = |location, format, offset| VertexAttribute { location, format, offset };
        vec![
            LocalVertexFactory::position_stream(),
            LocalVertexFactory::tangent_basis_stream(),
            VertexBufferLayout {
                stride: 12,
                step_mode: VertexStepMode::Vertex,
                attributes: vec![attr(3, VertexFormat::Unorm8x4, 0), attr(4, VertexFormat::Float32x2, 4)],
            },
            VertexBufferLayout {
                stride: InstanceStreamData::SIZE as u32,
                step_mode: VertexStepMode::Instance,
                attributes: vec![
                    attr(5, VertexFormat::Float32x4, 0),
                    attr(6, VertexFormat::Float32x4, 16),
                    attr(7, VertexFormat::Float32x4, 32),
                    attr(8, VertexFormat::Float32x4, 48),
                    attr(9, VertexFormat::Float32x2, 64),
                    attr(10, VertexFormat::Uint32, 72),
                    attr(11, VertexFormat::Uint32, 76),
                ],
            },
        ]
    }

    fn primitive_id_location(&self) -> Option<u32> {
        None
    }

    fn dithered_fade(&self) -> bool {
        self.dithered_fade
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Affine3A, Quat, Vec3};

    #[test]
    fn stream_layout_is_80_bytes_with_fields_where_the_shader_reads_them() {
        assert_eq!(InstanceStreamData::SIZE, 80);
        let d = InstanceStreamData { random: 0.25, fade: 0.5, ..Default::default() };
        let bytes = bytemuck::bytes_of(&d);
        assert_eq!(f32::from_le_bytes(bytes[64..68].try_into().unwrap()), 0.25);
        assert_eq!(f32::from_le_bytes(bytes[68..72].try_into().unwrap()), 0.5);
        let d = InstanceStreamData { flags: InstanceGpuData::lod_dither_flags(true, false, 1.0), ..Default::default() };
        let bytes = bytemuck::bytes_of(&d);
        let flags = u32::from_le_bytes(bytes[76..80].try_into().unwrap());
        assert_eq!(flags, 0xffff_0006, "location 11: dither, finer, share 65535");
        let streams = INSTANCED_DITHERED_VERTEX_FACTORY.streams();
        assert!(streams[3].attributes.iter().any(|a| a.location == 11 && a.offset == 76));
    }

    #[test]
    fn transform_round_trips_through_the_rows() {
        let t = Affine3A::from_scale_rotation_translation(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_z(0.7), Vec3::new(4.0, 5.0, 6.0));
        let mut store = crate::InstanceStore::new(crate::Bounds::new(Vec3::ZERO, Vec3::ONE, 1.8));
        let id = store.add_instance(t).unwrap();
        let gpu = InstanceGpuData::pack(&t, 0.5, 0, id);
        let s = InstanceStreamData::new(&gpu, &[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert!(s.transform().abs_diff_eq(t, 1e-6));
        assert_eq!(s.custom, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.fade, 1.0);
    }

    #[test]
    fn packing_interleaves_color_and_uv() {
        let v = LocalVertex {
            position: [1.0, 2.0, 3.0],
            color: [9, 8, 7, 6],
            uvs: [[0.5, 0.75], [0.0; 2], [0.0; 2], [0.0; 2]],
            ..Default::default()
        };
        let (bytes, offsets) = InstancedVertexFactory::pack(&[v, v]);
        assert_eq!(offsets, [0, 32, 96]);
        let at = offsets[2] as usize + 12;
        assert_eq!(&bytes[at..at + 4], &[9, 8, 7, 6]);
        assert_eq!(f32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()), 0.75);
    }
}
