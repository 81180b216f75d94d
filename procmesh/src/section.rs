//! A mesh section (UE's `FProcMeshSection`) and the arrays it is built or
//! updated from.
//!
//! Callers hand over geometry the way UE's `CreateMeshSection` takes it:
//! parallel arrays, positions and triangles required, every other attribute
//! optional (an empty slice means "use the default" on create and "leave
//! unchanged" on update). [`SectionData`] borrows those slices; nothing is
//! copied until the data has been checked.
//!
//! Checking and writing are separate passes on purpose. [`SectionData`]'s
//! checks read every array once and decide before anything is modified, so
//! a rejected call leaves the section as it was. The write pass then runs
//! without a single branch that can fail. Both passes are written for large
//! sections updated every frame: the checks fold over cache-sized blocks
//! (branch-free inside a block, so they vectorise, exiting at the first bad
//! block), and the position check computes the section's box on the way.
//! The writes go block by block too, applying each given array to one block
//! of vertices while it is still in cache, rather than sweeping the whole
//! vertex array once per attribute.

use glam::{Vec2, Vec3};

use crate::bounds::Aabb;
use crate::error::{ProcMeshError, Result};
use crate::vertex::{Color, LinearColor, ProcMeshTangent, ProcMeshVertex, VertexAttributes};

/// Vertices per block in the check and write passes: 2048 vertices of 76
/// bytes is 152 KiB, within a typical L2.
const BLOCK: usize = 2048;

/// One section of a procedural mesh: its vertices, triangles, box and flags.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcMeshSection {
    /// The vertices, one per position given.
    pub vertices: Vec<ProcMeshVertex>,
    /// Three indices into `vertices` per triangle.
    pub triangles: Vec<u32>,
    /// The box around `vertices`' positions ([`Aabb::EMPTY`] without any).
    pub local_box: Aabb,
    /// Whether the triangles take part in the mesh's collision.
    pub enable_collision: bool,
    /// Whether the section is drawn.
    pub visible: bool,
}

impl ProcMeshSection {
    /// The number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.vertices.len()
    }

    /// The number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.triangles.len() / 3
    }

    /// Whether the section adds triangles to the mesh's collision.
    pub(crate) fn has_collision_triangles(&self) -> bool {
        self.enable_collision && !self.triangles.is_empty()
    }

    /// Builds a section from data that [`SectionData::check_create`]
    /// accepted, with the box it computed.
    pub(crate) fn build(data: &SectionData<'_>, local_box: Aabb, enable_collision: bool) -> Self {
        let count = data.positions.len();
        let mut vertices = Vec::with_capacity(count);
        for (block, positions) in data.positions.chunks(BLOCK).enumerate() {
            let start = block * BLOCK;
            vertices.extend(positions.iter().map(|&p| ProcMeshVertex::at(p)));
            // Positions are already in; write the rest while the block is hot.
            let attributes = data.given().without(VertexAttributes::POSITION);
            write_block(&mut vertices[start..], start, data, attributes);
        }
        Self {
            vertices,
            triangles: data.triangles.to_vec(),
            local_box,
            enable_collision,
            visible: true,
        }
    }

    /// Writes the arrays of an update that [`SectionData::check_update`]
    /// accepted; `new_box` is the box it computed, if positions were given.
    pub(crate) fn apply_update(&mut self, data: &SectionData<'_>, new_box: Option<Aabb>) {
        let attributes = data.given();
        for (block, vertices) in self.vertices.chunks_mut(BLOCK).enumerate() {
            write_block(vertices, block * BLOCK, data, attributes);
        }
        if let Some(local_box) = new_box {
            self.local_box = local_box;
        }
    }
}

/// Writes the given arrays' entries `start..start + vertices.len()` into
/// `vertices`. Every array named in `attributes` is known to be one entry
/// per vertex.
fn write_block(
    vertices: &mut [ProcMeshVertex],
    start: usize,
    data: &SectionData<'_>,
    attributes: VertexAttributes,
) {
    let range = start..start + vertices.len();
    if attributes.contains(VertexAttributes::POSITION) {
        for (v, &p) in vertices.iter_mut().zip(&data.positions[range.clone()]) {
            v.position = p;
        }
    }
    if attributes.contains(VertexAttributes::NORMAL) {
        for (v, &n) in vertices.iter_mut().zip(&data.normals[range.clone()]) {
            v.normal = n;
        }
    }
    if attributes.contains(VertexAttributes::TANGENT) {
        for (v, &t) in vertices.iter_mut().zip(&data.tangents[range.clone()]) {
            v.tangent = t;
        }
    }
    match data.colors {
        _ if !attributes.contains(VertexAttributes::COLOR) => {}
        VertexColors::Srgb(colors) => {
            for (v, &c) in vertices.iter_mut().zip(&colors[range.clone()]) {
                v.color = c;
            }
        }
        VertexColors::Linear(colors) => {
            for (v, &c) in vertices.iter_mut().zip(&colors[range.clone()]) {
                v.color = c.to_color_srgb();
            }
        }
        VertexColors::None => {}
    }
    let uvs = [data.uv0, data.uv1, data.uv2, data.uv3];
    for (channel, uvs) in uvs.iter().enumerate() {
        if !attributes.contains(VertexAttributes::uv(channel)) {
            continue;
        }
        let uvs = &uvs[range.clone()];
        match channel {
            0 => vertices.iter_mut().zip(uvs).for_each(|(v, &uv)| v.uv0 = uv),
            1 => vertices.iter_mut().zip(uvs).for_each(|(v, &uv)| v.uv1 = uv),
            2 => vertices.iter_mut().zip(uvs).for_each(|(v, &uv)| v.uv2 = uv),
            _ => vertices.iter_mut().zip(uvs).for_each(|(v, &uv)| v.uv3 = uv),
        }
    }
}

/// Per-vertex colors, 8-bit or linear (converted to 8-bit sRGB when stored,
/// as UE's `CreateMeshSection_LinearColor` does).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum VertexColors<'a> {
    /// None given: white on create, unchanged on update.
    #[default]
    None,
    /// 8-bit sRGB-encoded RGBA, stored as is.
    Srgb(&'a [Color]),
    /// Linear float colors, encoded with [`LinearColor::to_color_srgb`].
    Linear(&'a [LinearColor]),
}

impl VertexColors<'_> {
    fn len(&self) -> usize {
        match self {
            Self::None => 0,
            Self::Srgb(c) => c.len(),
            Self::Linear(c) => c.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The arrays a section is created or updated from (the parameters of UE's
/// `CreateMeshSection` / `UpdateMeshSection`). Every optional array is
/// either empty or one entry per position.
///
/// ```
/// # use procmesh::SectionData;
/// # use glam::Vec3;
/// let positions = [Vec3::ZERO, Vec3::X, Vec3::Y];
/// let normals = [Vec3::Z; 3];
/// let data = SectionData::new(&positions, &[0, 1, 2]).normals(&normals);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SectionData<'a> {
    /// Vertex positions. Required on create; on update, empty keeps them.
    pub positions: &'a [Vec3],
    /// Three vertex indices per triangle. Create only; an update must leave
    /// it empty.
    pub triangles: &'a [u32],
    /// Normals.
    pub normals: &'a [Vec3],
    /// Tangents.
    pub tangents: &'a [ProcMeshTangent],
    /// Colors.
    pub colors: VertexColors<'a>,
    /// UV channel 0.
    pub uv0: &'a [Vec2],
    /// UV channel 1.
    pub uv1: &'a [Vec2],
    /// UV channel 2.
    pub uv2: &'a [Vec2],
    /// UV channel 3.
    pub uv3: &'a [Vec2],
}

impl<'a> SectionData<'a> {
    /// Positions and triangles, every other attribute at its default.
    pub fn new(positions: &'a [Vec3], triangles: &'a [u32]) -> Self {
        Self {
            positions,
            triangles,
            ..Self::default()
        }
    }

    /// An update that gives positions only (no triangles).
    pub fn positions(positions: &'a [Vec3]) -> Self {
        Self {
            positions,
            ..Self::default()
        }
    }

    /// With normals.
    pub fn normals(mut self, normals: &'a [Vec3]) -> Self {
        self.normals = normals;
        self
    }

    /// With tangents.
    pub fn tangents(mut self, tangents: &'a [ProcMeshTangent]) -> Self {
        self.tangents = tangents;
        self
    }

    /// With 8-bit colors.
    pub fn colors(mut self, colors: &'a [Color]) -> Self {
        self.colors = VertexColors::Srgb(colors);
        self
    }

    /// With linear colors (stored sRGB-encoded).
    pub fn linear_colors(mut self, colors: &'a [LinearColor]) -> Self {
        self.colors = VertexColors::Linear(colors);
        self
    }

    /// With UV channel `channel` (0..=3; others are ignored).
    pub fn uv(mut self, channel: usize, uvs: &'a [Vec2]) -> Self {
        match channel {
            0 => self.uv0 = uvs,
            1 => self.uv1 = uvs,
            2 => self.uv2 = uvs,
            3 => self.uv3 = uvs,
            _ => {}
        }
        self
    }

    /// With UV channel 0.
    pub fn uv0(self, uvs: &'a [Vec2]) -> Self {
        self.uv(0, uvs)
    }

    /// The attributes whose arrays are not empty.
    pub fn given(&self) -> VertexAttributes {
        VertexAttributes::NONE
            .with_if(VertexAttributes::POSITION, !self.positions.is_empty())
            .with_if(VertexAttributes::NORMAL, !self.normals.is_empty())
            .with_if(VertexAttributes::TANGENT, !self.tangents.is_empty())
            .with_if(VertexAttributes::COLOR, !self.colors.is_empty())
            .with_if(VertexAttributes::UV0, !self.uv0.is_empty())
            .with_if(VertexAttributes::UV1, !self.uv1.is_empty())
            .with_if(VertexAttributes::UV2, !self.uv2.is_empty())
            .with_if(VertexAttributes::UV3, !self.uv3.is_empty())
    }

    /// Checks everything a create needs: vertex count within `u32`, every
    /// optional array empty or one per vertex, whole triangles with indices
    /// in range, every value finite. Returns the section's box.
    pub fn check_create(&self) -> Result<Aabb> {
        let count = self.positions.len();
        if u32::try_from(count).is_err() {
            return Err(ProcMeshError::TooManyVertices { count });
        }
        self.check_attribute_lengths(count)?;
        if self.triangles.len() % 3 != 0 {
            return Err(ProcMeshError::TrianglesNotMultipleOf3 {
                len: self.triangles.len(),
            });
        }
        check_indices(self.triangles, count)?;
        let local_box = scan_positions(self.positions)?;
        self.check_attributes_finite()?;
        Ok(local_box)
    }

    /// Checks an update of section `section`, which has `vertex_count`
    /// vertices: no triangles, positions and every optional array empty or
    /// one per vertex, every value finite. Returns the new box when
    /// positions are given.
    pub fn check_update(&self, section: usize, vertex_count: usize) -> Result<Option<Aabb>> {
        if !self.triangles.is_empty() {
            return Err(ProcMeshError::TrianglesInUpdate { section });
        }
        if !self.positions.is_empty() && self.positions.len() != vertex_count {
            return Err(ProcMeshError::VertexCountMismatch {
                section,
                previous: vertex_count,
                new: self.positions.len(),
            });
        }
        self.check_attribute_lengths(vertex_count)?;
        let new_box = if self.positions.is_empty() {
            None
        } else {
            Some(scan_positions(self.positions)?)
        };
        self.check_attributes_finite()?;
        Ok(new_box)
    }

    fn check_attribute_lengths(&self, expected: usize) -> Result<()> {
        let lengths = [
            ("normals", self.normals.len()),
            ("tangents", self.tangents.len()),
            ("colors", self.colors.len()),
            ("uv0", self.uv0.len()),
            ("uv1", self.uv1.len()),
            ("uv2", self.uv2.len()),
            ("uv3", self.uv3.len()),
        ];
        for (attribute, got) in lengths {
            if got != 0 && got != expected {
                return Err(ProcMeshError::AttributeLength {
                    attribute,
                    expected,
                    got,
                });
            }
        }
        Ok(())
    }

    fn check_attributes_finite(&self) -> Result<()> {
        let non_finite = |attribute, vertex| ProcMeshError::NonFiniteAttribute { attribute, vertex };
        if let Some(vertex) = first_bad(self.normals, |n| n.is_finite()) {
            return Err(non_finite("normals", vertex));
        }
        if let Some(vertex) = first_bad(self.tangents, |t| t.tangent_x.is_finite()) {
            return Err(non_finite("tangents", vertex));
        }
        if let VertexColors::Linear(colors) = self.colors {
            if let Some(vertex) = first_bad(colors, LinearColor::is_finite) {
                return Err(non_finite("colors", vertex));
            }
        }
        let uvs = [
            ("uv0", self.uv0),
            ("uv1", self.uv1),
            ("uv2", self.uv2),
            ("uv3", self.uv3),
        ];
        for (attribute, uvs) in uvs {
            if let Some(vertex) = first_bad(uvs, |uv| uv.is_finite()) {
                return Err(non_finite(attribute, vertex));
            }
        }
        Ok(())
    }
}

/// The first triangle index at or past `vertex_count`, as an error.
fn check_indices(triangles: &[u32], vertex_count: usize) -> Result<()> {
    // `vertex_count` fits in u32 (checked by the caller), so compare as u32.
    let limit = vertex_count as u32;
    for (block, indices) in triangles.chunks(BLOCK * 3).enumerate() {
        let max = indices.iter().copied().fold(0, u32::max);
        if indices.is_empty() || max < limit {
            continue;
        }
        let at = indices.iter().position(|&i| i >= limit).unwrap_or(0);
        let at = block * BLOCK * 3 + at;
        return Err(ProcMeshError::IndexOutOfRange {
            triangle: at / 3,
            index: triangles[at],
            vertex_count,
        });
    }
    Ok(())
}

/// Checks that every position is finite and returns their box.
fn scan_positions(positions: &[Vec3]) -> Result<Aabb> {
    let mut local_box = Aabb::EMPTY;
    for (block, points) in positions.chunks(BLOCK).enumerate() {
        // min/max skip NaN, so NaN is caught another way: `p * 0.0` is
        // zero for a finite p and NaN for NaN or infinity, so the sum stays
        // zero exactly when the whole block is finite.
        let (b, sum) = points.iter().fold((Aabb::EMPTY, Vec3::ZERO), |(b, s), &p| {
            (
                Aabb {
                    min: b.min.min(p),
                    max: b.max.max(p),
                },
                s + p * 0.0,
            )
        });
        if !sum.is_finite() {
            let at = points.iter().position(|p| !p.is_finite()).unwrap_or(0);
            return Err(ProcMeshError::NonFinitePosition {
                vertex: block * BLOCK + at,
            });
        }
        local_box = local_box.union(b);
    }
    Ok(local_box)
}

/// The index of the first element failing `ok`, checking a block at a time
/// without branching inside the block.
fn first_bad<T>(items: &[T], ok: impl Fn(&T) -> bool) -> Option<usize> {
    for (block, chunk) in items.chunks(BLOCK).enumerate() {
        if !chunk.iter().fold(true, |all, item| all & ok(item)) {
            let at = chunk.iter().position(|item| !ok(item)).unwrap_or(0);
            return Some(block * BLOCK + at);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_scan_finds_nan_and_bounds() {
        let mut positions = vec![Vec3::ONE; 5000];
        positions[17] = Vec3::new(-2.0, 0.0, 9.0);
        assert_eq!(
            scan_positions(&positions),
            Ok(Aabb::new(Vec3::new(-2.0, 0.0, 1.0), Vec3::new(1.0, 1.0, 9.0)))
        );
        positions[4097].y = f32::NAN;
        assert_eq!(
            scan_positions(&positions),
            Err(ProcMeshError::NonFinitePosition { vertex: 4097 })
        );
        positions[4097].y = f32::NEG_INFINITY;
        assert_eq!(
            scan_positions(&positions),
            Err(ProcMeshError::NonFinitePosition { vertex: 4097 })
        );
    }

    #[test]
    fn index_check_reports_the_first_bad_triangle() {
        let mut triangles = vec![0u32; 3 * 3000];
        triangles[3 * 2500 + 1] = 7;
        triangles[3 * 2600] = 9;
        assert_eq!(
            check_indices(&triangles, 7),
            Err(ProcMeshError::IndexOutOfRange {
                triangle: 2500,
                index: 7,
                vertex_count: 7
            })
        );
        assert_eq!(check_indices(&triangles, 10), Ok(()));
    }
}
