//! A mesh section (UE's `FProcMeshSection`) and the arrays it is built or
//! updated from.
//!
//! Callers hand over geometry the way UE's `CreateMeshSection` takes it:
//! parallel arrays, positions and triangles required, every other attribute
//! optional (an empty slice means "use the default" on create and "leave
//! unchanged" on update). [`SectionData`] borrows those slices; nothing is
//! copied until the data has been checked.
//!
//! A section stores its vertices the same way, one array per attribute
//! (structure of arrays), not UE's array of `FProcMeshVertex`. Two reasons,
//! both about the per-frame update: an update that gives positions and
//! normals is then two `memcpy`s into arrays of exactly that size, instead of
//! a read-modify-write of every 76-byte vertex (which moves the whole vertex
//! for the few attributes that changed); and the render side wants these
//! streams apart anyway, since UE's proxy keeps positions, tangents/UVs and
//! colors in separate vertex buffers, so a
//! [`SectionUpdate`](crate::SectionUpdate) is a copy of whole streams.
//! [`ProcMeshVertex`] remains the one-vertex view ([`ProcMeshSection::vertex`]).
//! Every stream always holds one entry per vertex, defaults included.
//!
//! Checking and writing are separate passes on purpose. [`SectionData`]'s
//! checks (the `validate` module) read every array once and decide before
//! anything is modified, so a rejected call leaves the section as it was;
//! the write pass then cannot fail.

use glam::{Vec2, Vec3};

use crate::bounds::Aabb;
use crate::error::{ProcMeshError, Result};
use crate::validate::{check_indices, first_bad, first_non_finite_vec3, non_finite2, non_finite3, scan_positions};
use crate::vertex::{Color, LinearColor, ProcMeshTangent, ProcMeshVertex, VertexAttributes, WHITE};

/// One section of a procedural mesh: its vertex streams, triangles, box
/// and flags. Read it through [`ProcMeshData::section`](crate::ProcMeshData::section).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcMeshSection {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<ProcMeshTangent>,
    colors: Vec<Color>,
    uvs: [Vec<Vec2>; 4],
    triangles: Vec<u32>,
    local_box: Aabb,
    enable_collision: bool,
    pub(crate) visible: bool,
}

impl ProcMeshSection {
    /// The number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// The number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.triangles.len() / 3
    }

    /// Vertex positions.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Normals, one per vertex.
    pub fn normals(&self) -> &[Vec3] {
        &self.normals
    }

    /// Tangents, one per vertex.
    pub fn tangents(&self) -> &[ProcMeshTangent] {
        &self.tangents
    }

    /// Colors (8-bit sRGB), one per vertex.
    pub fn colors(&self) -> &[Color] {
        &self.colors
    }

    /// UV channel `channel` (0..=3; others give an empty slice).
    pub fn uv(&self, channel: usize) -> &[Vec2] {
        self.uvs.get(channel).map_or(&[], Vec::as_slice)
    }

    /// Three indices into the vertices per triangle.
    pub fn triangles(&self) -> &[u32] {
        &self.triangles
    }

    /// The box around the positions ([`Aabb::EMPTY`] without any).
    pub fn local_box(&self) -> Aabb {
        self.local_box
    }

    /// Whether the triangles take part in the mesh's collision.
    pub fn enable_collision(&self) -> bool {
        self.enable_collision
    }

    /// Whether the section is drawn.
    pub fn visible(&self) -> bool {
        self.visible
    }

    /// Vertex `index` gathered from the streams.
    pub fn vertex(&self, index: usize) -> Option<ProcMeshVertex> {
        (index < self.vertex_count()).then(|| self.gather(index))
    }

    /// Every vertex gathered from the streams, in order.
    pub fn vertices(&self) -> impl ExactSizeIterator<Item = ProcMeshVertex> + '_ {
        (0..self.vertex_count()).map(|i| self.gather(i))
    }

    /// Vertex `index`, which is below the vertex count (every stream has one
    /// entry per vertex).
    fn gather(&self, index: usize) -> ProcMeshVertex {
        ProcMeshVertex {
            position: self.positions[index],
            normal: self.normals[index],
            tangent: self.tangents[index],
            color: self.colors[index],
            uv0: self.uvs[0][index],
            uv1: self.uvs[1][index],
            uv2: self.uvs[2][index],
            uv3: self.uvs[3][index],
        }
    }

    /// Whether the section adds triangles to the mesh's collision.
    pub(crate) fn has_collision_triangles(&self) -> bool {
        self.enable_collision && !self.triangles.is_empty()
    }

    /// Builds a section from data that [`SectionData::check_create`]
    /// accepted, with the box it computed.
    pub(crate) fn build(data: &SectionData<'_>, local_box: Aabb, enable_collision: bool) -> Self {
        let n = data.positions.len();
        let or_default = |given: &[Vec2]| {
            if given.is_empty() {
                vec![Vec2::ZERO; n]
            } else {
                given.to_vec()
            }
        };
        Self {
            positions: data.positions.to_vec(),
            normals: if data.normals.is_empty() { vec![Vec3::Z; n] } else { data.normals.to_vec() },
            tangents: if data.tangents.is_empty() { vec![ProcMeshTangent::DEFAULT; n] } else { data.tangents.to_vec() },
            colors: match data.colors {
                VertexColors::Srgb(c) if !c.is_empty() => c.to_vec(),
                VertexColors::Linear(c) if !c.is_empty() => c.iter().map(|c| c.to_color_srgb()).collect(),
                _ => vec![WHITE; n],
            },
            uvs: [data.uv0, data.uv1, data.uv2, data.uv3].map(or_default),
            triangles: data.triangles.to_vec(),
            local_box,
            enable_collision,
            visible: true,
        }
    }

    /// Writes the arrays of an update that [`SectionData::check_update`]
    /// accepted; `new_box` is the box it computed, if positions were given.
    pub(crate) fn apply_update(&mut self, data: &SectionData<'_>, new_box: Option<Aabb>) {
        fn overwrite<T: Copy>(stream: &mut [T], given: &[T]) {
            if !given.is_empty() {
                stream.copy_from_slice(given);
            }
        }
        overwrite(&mut self.positions, data.positions);
        overwrite(&mut self.normals, data.normals);
        overwrite(&mut self.tangents, data.tangents);
        match data.colors {
            VertexColors::None => {}
            VertexColors::Srgb(c) => overwrite(&mut self.colors, c),
            VertexColors::Linear([]) => {}
            VertexColors::Linear(c) => {
                for (stored, c) in self.colors.iter_mut().zip(c) {
                    *stored = c.to_color_srgb();
                }
            }
        }
        for (stream, given) in self.uvs.iter_mut().zip([data.uv0, data.uv1, data.uv2, data.uv3]) {
            overwrite(stream, given);
        }
        if let Some(local_box) = new_box {
            self.local_box = local_box;
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
        Self { positions, triangles, ..Self::default() }
    }

    /// An update that gives positions only (no triangles).
    pub fn positions(positions: &'a [Vec3]) -> Self {
        Self { positions, ..Self::default() }
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

    /// With linear colors (stored sRGB-encoded). This is how UE's
    /// `CreateMeshSection_LinearColor` and `UpdateMeshSection_LinearColor`
    /// are spelled here: `create_mesh_section` / `update_mesh_section` with
    /// `data.linear_colors(colors)`, one call for both kinds of color.
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
        if !self.triangles.len().is_multiple_of(3) {
            return Err(ProcMeshError::TrianglesNotMultipleOf3 { len: self.triangles.len() });
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
            return Err(ProcMeshError::VertexCountMismatch { section, previous: vertex_count, new: self.positions.len() });
        }
        self.check_attribute_lengths(vertex_count)?;
        let new_box = if self.positions.is_empty() { None } else { Some(scan_positions(self.positions)?) };
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
                return Err(ProcMeshError::AttributeLength { attribute, expected, got });
            }
        }
        Ok(())
    }

    fn check_attributes_finite(&self) -> Result<()> {
        let non_finite = |attribute, vertex| ProcMeshError::NonFiniteAttribute { attribute, vertex };
        if let Some(vertex) = first_non_finite_vec3(self.normals) {
            return Err(non_finite("normals", vertex));
        }
        if let Some(vertex) = first_bad(self.tangents, |t| non_finite3(&t.tangent_x)) {
            return Err(non_finite("tangents", vertex));
        }
        if let VertexColors::Linear(colors) = self.colors {
            if let Some(vertex) = first_bad(colors, |c| !c.is_finite()) {
                return Err(non_finite("colors", vertex));
            }
        }
        let uvs = [("uv0", self.uv0), ("uv1", self.uv1), ("uv2", self.uv2), ("uv3", self.uv3)];
        for (attribute, uvs) in uvs {
            if let Some(vertex) = first_bad(uvs, non_finite2) {
                return Err(non_finite(attribute, vertex));
            }
        }
        Ok(())
    }
}
