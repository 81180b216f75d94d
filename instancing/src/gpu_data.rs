//! The per-instance data as the GPU reads it.
//!
//! The proxy's instance stream ([`crate::InstanceStreamData::new`]), which
//! the instanced vertex factory and the GPU culling pass read, is made from
//! these bytes, so the layout is fixed here, `Pod`, and documented field by
//! field. Packing is a pure function of one
//! instance, so packing a dirty range gives exactly the bytes a full rebuild
//! would put there.
//!
//! Two buffers, both indexed by instance index:
//!
//! ```text
//! instances:   [InstanceGpuData; count]            64 bytes each
//!              rows 0..3 of the 3x4 instance→component matrix (translation in .w),
//!              random, custom_data_offset, instance id (slot), flags
//! custom data: [f32; count * num_custom_data_floats]
//!              instance i's floats at custom_data_offset = i * num_custom_data_floats
//! ```
//!
//! A dirty range `a..b` covers `instances[a..b]` and
//! `custom_data[a*n..b*n]`; [`crate::InstanceStore::dirty_bytes`] counts both.

use bytemuck::{Pod, Zeroable};
use glam::Affine3A;

use crate::id::InstanceId;

/// One instance as the instanced vertex factory and the GPU culling pass
/// read it. 64 bytes; the rows sit at 16-byte offsets (std430 `vec4`s)
/// and there are no padding holes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InstanceGpuData {
    /// Rows 0..3 of the instance→component matrix; `.w` of each row holds
    /// the translation. Row-major so the shader reads three `vec4`s and the
    /// implicit fourth row is `(0, 0, 0, 1)`.
    pub transform_rows: [[f32; 4]; 3],
    /// UE's `PerInstanceRandom`, in `[0, 1)`.
    pub random: f32,
    /// Index of the instance's first float in the custom-data buffer.
    pub custom_data_offset: u32,
    /// The slot of the instance's stable id (hit proxies, picking).
    pub instance_id: u32,
    /// Bit 0 ([`InstanceGpuData::FLAG_MIRRORED`]): negative determinant;
    /// the pass flips the triangle winding. Other bits are zero here; the
    /// culled copies of an instance in a dithered LOD transition carry the
    /// LOD-dither bits ([`InstanceGpuData::lod_dither_flags`]) in the
    /// instance stream's `flags`.
    pub flags: u32,
}

impl InstanceGpuData {
    pub const FLAG_MIRRORED: u32 = 1;
    /// This culled copy is one of an instance's two copies in a dithered
    /// LOD transition (`crate::culling::select_lod_dithered`).
    pub const FLAG_LOD_DITHER: u32 = 2;
    /// With [`Self::FLAG_LOD_DITHER`]: this copy is the finer LOD's
    /// (it keeps the pixels the coarser copy discards).
    pub const FLAG_LOD_FINER: u32 = 4;
    /// With [`Self::FLAG_LOD_DITHER`]: this copy is at the LOD the plain
    /// selection picks — the one translucent sections draw.
    pub const FLAG_LOD_PRIMARY: u32 = 8;
    /// Bits 16..32: the finer LOD's share of the pixels, unorm16.
    pub const LOD_SHARE_SHIFT: u32 = 16;

    /// The flag bits of one copy in a dithered LOD transition: the finer
    /// share quantised to unorm16 (`floor(share · 65535 + 0.5)`, as
    /// `instance_cull.wgsl` does), which side of the pattern the copy
    /// draws, and whether it is the primary copy.
    #[inline]
    pub fn lod_dither_flags(finer: bool, primary: bool, finer_share: f32) -> u32 {
        let share = (finer_share.clamp(0.0, 1.0) * 65535.0 + 0.5).floor() as u32;
        Self::FLAG_LOD_DITHER
            | if finer { Self::FLAG_LOD_FINER } else { 0 }
            | if primary { Self::FLAG_LOD_PRIMARY } else { 0 }
            | share << Self::LOD_SHARE_SHIFT
    }

    /// Packs one instance. Pure, so a range packs the same as the whole.
    #[inline]
    pub fn pack(transform: &Affine3A, random: f32, custom_data_offset: u32, id: InstanceId) -> Self {
        let m = &transform.matrix3;
        let t = transform.translation;
        let row = |r: usize| [m.x_axis[r], m.y_axis[r], m.z_axis[r], t[r]];
        Self {
            transform_rows: [row(0), row(1), row(2)],
            random,
            custom_data_offset,
            instance_id: id.index(),
            flags: if m.determinant() < 0.0 { Self::FLAG_MIRRORED } else { 0 },
        }
    }
}
