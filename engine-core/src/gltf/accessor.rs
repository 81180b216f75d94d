//! Reading accessors: every range checked against its buffer view and
//! buffer, strides removed, sparse substitutions applied, integer and
//! normalized components (`KHR_mesh_quantization`) turned into floats.

use super::GltfError;
use gltf::accessor::{DataType, Dimensions};
use gltf::Accessor;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

/// The accessor data an import has read so far, against
/// [`super::GltfLimits::max_accessor_bytes`]: every read of an accessor is
/// charged before anything is allocated for it (meshes are read in
/// parallel, so the count is shared), whether or not the file holds its
/// bytes (an accessor of zeros with sparse values costs the file nothing).
pub(crate) struct AccessorBudget {
    used: AtomicU64,
    limit: u64,
}

impl AccessorBudget {
    /// A budget of `limit` bytes, none used.
    pub(crate) fn new(limit: u64) -> Self {
        Self { used: AtomicU64::new(0), limit }
    }

    /// Counts `bytes` more; [`GltfError::LimitExceeded`] naming `path`
    /// when the total passes the limit (the charge stays: the import fails).
    pub(crate) fn charge(&self, path: &str, bytes: u64) -> Result<(), GltfError> {
        let total = self.used.fetch_add(bytes, Ordering::Relaxed).saturating_add(bytes);
        GltfError::check_limit(path, "accessor bytes", total, self.limit)
    }
}

/// A buffer's or image's bytes: borrowed (never copied) from a `.glb`'s BIN
/// chunk or a buffer's file or data URI as read once, owned for an image
/// read from a URI.
pub(crate) type Buffer<'a> = std::borrow::Cow<'a, [u8]>;

fn accessor_err(path: &str, acc: &Accessor, problem: String) -> GltfError {
    GltfError::Accessor { path: path.into(), problem: format!("accessor {}: {problem}", acc.index()) }
}

/// The bytes of buffer view `view`, checked against its buffer.
pub(crate) fn view_bytes<'b>(view: &gltf::buffer::View, buffers: &'b [Buffer<'_>]) -> Result<&'b [u8], GltfError> {
    let path = format!("/bufferViews/{}", view.index());
    let data = buffers
        .get(view.buffer().index())
        .ok_or_else(|| GltfError::Buffer { path: path.clone(), problem: format!("buffer {} was not loaded", view.buffer().index()) })?;
    let end = view.offset().checked_add(view.length());
    match end {
        Some(end) if end <= data.len() => Ok(&data[view.offset()..end]),
        _ => Err(GltfError::Accessor {
            path,
            problem: format!(
                "bytes {}..+{} are past the end of buffer {} ({} bytes)",
                view.offset(),
                view.length(),
                view.buffer().index(),
                data.len()
            ),
        }),
    }
}

/// What reading an accessor may make: its elements, at most `max_count`,
/// charged to `budget` as 4 bytes a component (the floats or `u32`
/// indices they become) before anything is allocated.
#[derive(Clone, Copy)]
pub(crate) struct Read<'a> {
    pub max_count: u64,
    pub budget: &'a AccessorBudget,
}

/// The accessor's elements tightly packed (stride removed, sparse values
/// substituted): borrowed from the buffer when they already are (no
/// stride, no sparse values: the usual accessor, read without a copy).
/// `read` bounds `count` and charges the data before anything is allocated.
fn packed<'b>(acc: &Accessor, buffers: &'b [Buffer<'_>], path: &str, read: Read<'_>) -> Result<Cow<'b, [u8]>, GltfError> {
    let elem = acc.data_type().size() * acc.dimensions().multiplicity();
    let count = acc.count();
    GltfError::check_limit(path, "accessor count", count as u64, read.max_count)?;
    read.budget.charge(path, (count as u64).saturating_mul(acc.dimensions().multiplicity() as u64 * 4))?;
    // Ranges are checked before anything is allocated.
    let mut out = Vec::new();
    if let Some(view) = acc.view() {
        let bytes = view_bytes(&view, buffers)?;
        let stride = view.stride().unwrap_or(elem);
        if stride < elem {
            return Err(accessor_err(path, acc, format!("byteStride {stride} is less than its element size {elem}")));
        }
        if count > 0 {
            let needed = (count - 1).checked_mul(stride).and_then(|n| n.checked_add(elem)).and_then(|n| n.checked_add(acc.offset()));
            match needed {
                Some(n) if n <= bytes.len() => {}
                _ => {
                    return Err(accessor_err(
                        path,
                        acc,
                        format!(
                            "{count} elements of {elem} bytes (stride {stride}) from byte {} run past buffer view {} ({} bytes)",
                            acc.offset(),
                            view.index(),
                            bytes.len()
                        ),
                    ))
                }
            }
            let at = acc.offset();
            if stride == elem && acc.sparse().is_none() {
                return Ok(Cow::Borrowed(&bytes[at..at + count * elem]));
            }
            out.reserve_exact(count * elem);
            if stride == elem {
                out.extend_from_slice(&bytes[at..at + count * elem]);
            } else {
                for i in 0..count {
                    out.extend_from_slice(&bytes[at + i * stride..at + i * stride + elem]);
                }
            }
        }
    } else {
        // No view: zeros (sparse values below replace some).
        out.resize(count * elem, 0);
    }
    if let Some(sparse) = acc.sparse() {
        let n = sparse.count();
        if n > count {
            return Err(accessor_err(path, acc, format!("sparse count {n} is more than its count {count}")));
        }
        let ind = sparse.indices();
        let isize = ind.index_type().size();
        let ibytes = view_bytes(&ind.view(), buffers)?;
        let vals = sparse.values();
        let vbytes = view_bytes(&vals.view(), buffers)?;
        let ok_i = n.checked_mul(isize).and_then(|b| b.checked_add(ind.offset())).is_some_and(|e| e <= ibytes.len());
        let ok_v = n.checked_mul(elem).and_then(|b| b.checked_add(vals.offset())).is_some_and(|e| e <= vbytes.len());
        if !ok_i || !ok_v {
            return Err(accessor_err(path, acc, format!("sparse indices or values ({n}) run past their buffer views")));
        }
        for k in 0..n {
            let at = ind.offset() + k * isize;
            let i = match isize {
                1 => ibytes[at] as usize,
                2 => u16::from_le_bytes([ibytes[at], ibytes[at + 1]]) as usize,
                _ => u32::from_le_bytes([ibytes[at], ibytes[at + 1], ibytes[at + 2], ibytes[at + 3]]) as usize,
            };
            if i >= count {
                return Err(accessor_err(path, acc, format!("sparse index {i} is past its count {count}")));
            }
            let v = vals.offset() + k * elem;
            out[i * elem..(i + 1) * elem].copy_from_slice(&vbytes[v..v + elem]);
        }
    }
    Ok(Cow::Owned(out))
}

/// The accessor as floats, `components` per element (its dimensions must
/// be one of `allowed`): normalized integers map to [0, 1] / [-1, 1],
/// other integers convert as they are.
pub(crate) fn read_floats(
    acc: &Accessor,
    buffers: &[Buffer<'_>],
    path: &str,
    allowed: &[Dimensions],
    read: Read<'_>,
) -> Result<(Vec<f32>, usize), GltfError> {
    if !allowed.contains(&acc.dimensions()) {
        return Err(accessor_err(path, acc, format!("type {:?} where {allowed:?} is needed", acc.dimensions())));
    }
    let bytes = packed(acc, buffers, path, read)?;
    let norm = acc.normalized();
    let values: Vec<f32> = match acc.data_type() {
        DataType::F32 => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        DataType::U8 => bytes.iter().map(|&b| if norm { b as f32 / 255.0 } else { b as f32 }).collect(),
        DataType::I8 => bytes.iter().map(|&b| if norm { (b as i8 as f32 / 127.0).max(-1.0) } else { b as i8 as f32 }).collect(),
        DataType::U16 => {
            bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]]) as f32).map(|v| if norm { v / 65535.0 } else { v }).collect()
        }
        DataType::I16 => bytes
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32)
            .map(|v| if norm { (v / 32767.0).max(-1.0) } else { v })
            .collect(),
        DataType::U32 => bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32).collect(),
    };
    Ok((values, acc.dimensions().multiplicity()))
}

/// An index accessor: unsigned integer scalars.
pub(crate) fn read_indices(acc: &Accessor, buffers: &[Buffer<'_>], path: &str, read: Read<'_>) -> Result<Vec<u32>, GltfError> {
    if acc.dimensions() != Dimensions::Scalar
        || !matches!(acc.data_type(), DataType::U8 | DataType::U16 | DataType::U32)
        || acc.normalized()
    {
        return Err(accessor_err(
            path,
            acc,
            format!("indices must be unsigned integer scalars, not {:?} {:?}", acc.dimensions(), acc.data_type()),
        ));
    }
    let bytes = packed(acc, buffers, path, read)?;
    Ok(match acc.data_type() {
        DataType::U8 => bytes.iter().map(|&b| b as u32).collect(),
        DataType::U16 => bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u32).collect(),
        _ => bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
    })
}
