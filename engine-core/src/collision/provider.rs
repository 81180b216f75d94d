//! Where collision geometry comes from: UE's `IInterface_CollisionDataProvider`.
//!
//! A component that owns render geometry (a static mesh, a procedural mesh)
//! does not cook collision itself. It implements [`CollisionDataProvider`] and
//! hands out a plain copy of the triangles to collide with, and a
//! [`BodySetup`](super::BodySetup) cooks that copy into BVH-backed shapes. The
//! copy is what makes asynchronous cooking possible: the game thread gathers
//! [`TriMeshCollisionData`] (cheap, a few `Vec` clones), and a worker cooks it
//! while the component keeps changing.
//!
//! The data carries one material index per triangle, so a ray hit can report
//! which section or material it struck (a procedural mesh uses the section
//! index), and optionally UVs per vertex so a hit can be mapped back to a
//! texture coordinate (UE's "support UV from hit results").

use glam::{Vec2, Vec3};

use super::error::CollisionError;

/// Something that can provide triangle geometry to collide with.
///
/// Called on the game thread; the data returned is a copy, owned by the
/// caller, so the provider may change afterwards without affecting a cook in
/// flight.
pub trait CollisionDataProvider {
    /// Whether [`tri_mesh_data`](Self::tri_mesh_data) would return any
    /// triangles. Lets a body setup skip gathering when there is nothing.
    fn contains_tri_mesh_data(&self) -> bool;

    /// A copy of the triangles to collide with, or `None` when there are
    /// none. `want_uvs` asks for [`TriMeshCollisionData::uvs`]; a provider
    /// may leave them empty when it is false.
    fn tri_mesh_data(&self, want_uvs: bool) -> Option<TriMeshCollisionData>;
}

/// Triangle geometry handed out by a [`CollisionDataProvider`]
/// (UE's `FTriMeshCollisionData`), in the component's local space.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriMeshCollisionData {
    /// Vertex positions.
    pub vertices: Vec<Vec3>,
    /// Triangles, three indices into `vertices` each.
    pub indices: Vec<[u32; 3]>,
    /// One material index per triangle (for a procedural mesh, the section
    /// index). Reported by ray hits.
    pub material_indices: Vec<u16>,
    /// Per UV channel, one coordinate per vertex. Empty when UVs were not
    /// asked for.
    pub uvs: Vec<Vec<Vec2>>,
    /// Reverse the winding of every triangle when cooking (UE's
    /// `bFlipNormals`), for meshes authored with the opposite convention.
    pub flip_normals: bool,
}

impl TriMeshCollisionData {
    /// An empty mesh; fill it with [`push_section`](Self::push_section) or
    /// the public fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len()
    }

    /// Appends one section: `vertices` and `indices` local to the section
    /// (index 0 is the section's first vertex), every triangle tagged with
    /// `material_index`. Existing UV channels are padded with zeros for the
    /// new vertices so the data stays consistent; write `uvs` directly to give
    /// a section real UVs.
    ///
    /// Rejects an index past the section's own vertices (it would silently
    /// reach into another section), leaving the data unchanged; the error's
    /// `triangle` and `vertex_count` are the section's.
    pub fn push_section(&mut self, vertices: &[Vec3], indices: &[[u32; 3]], material_index: u16) -> Result<(), CollisionError> {
        for (triangle, tri) in indices.iter().enumerate() {
            if let Some(&index) = tri.iter().find(|&&i| i as usize >= vertices.len()) {
                return Err(CollisionError::IndexOutOfRange { triangle, index, vertex_count: vertices.len() });
            }
        }
        let total = self.vertices.len() + vertices.len();
        if u32::try_from(total).is_err() {
            return Err(CollisionError::TooManyVertices(total));
        }
        // Fits: it is at most `total`, checked above.
        let base = self.vertices.len() as u32;
        self.vertices.extend_from_slice(vertices);
        self.indices.extend(indices.iter().map(|t| t.map(|i| i + base)));
        self.material_indices.extend(std::iter::repeat_n(material_index, indices.len()));
        for channel in &mut self.uvs {
            channel.resize(self.vertices.len(), Vec2::ZERO);
        }
        Ok(())
    }

    /// Checks that the data can be cooked: every index in range, one material
    /// index per triangle, every position finite, and every UV channel one
    /// finite coordinate per vertex. Reports the first problem found.
    pub fn validate(&self) -> Result<(), CollisionError> {
        if let Some((vertex, &position)) = self.vertices.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(CollisionError::NonFiniteVertex { vertex, position });
        }
        let vertex_count = self.vertices.len();
        for (triangle, tri) in self.indices.iter().enumerate() {
            if let Some(&index) = tri.iter().find(|&&i| i as usize >= vertex_count) {
                return Err(CollisionError::IndexOutOfRange { triangle, index, vertex_count });
            }
        }
        if self.material_indices.len() != self.indices.len() {
            return Err(CollisionError::MaterialCountMismatch {
                material_count: self.material_indices.len(),
                triangle_count: self.indices.len(),
            });
        }
        for (channel, uvs) in self.uvs.iter().enumerate() {
            if uvs.len() != vertex_count {
                return Err(CollisionError::UvCountMismatch { channel, uv_count: uvs.len(), vertex_count });
            }
            if let Some((vertex, &uv)) = uvs.iter().enumerate().find(|(_, uv)| !uv.is_finite()) {
                return Err(CollisionError::NonFiniteUv { channel, vertex, uv });
            }
        }
        Ok(())
    }
}

/// Plain data is its own provider, which is what a caller with no component
/// (a test, a tool, a level's static geometry) wants.
impl CollisionDataProvider for TriMeshCollisionData {
    fn contains_tri_mesh_data(&self) -> bool {
        !self.indices.is_empty()
    }

    fn tri_mesh_data(&self, want_uvs: bool) -> Option<TriMeshCollisionData> {
        if self.indices.is_empty() {
            return None;
        }
        let mut data = self.clone();
        if !want_uvs {
            data.uvs.clear();
        }
        Some(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triangle() -> TriMeshCollisionData {
        let mut data = TriMeshCollisionData::new();
        data.push_section(&[Vec3::ZERO, Vec3::X, Vec3::Y], &[[0, 1, 2]], 0).unwrap();
        data
    }

    #[test]
    fn sections_offset_indices_and_tag_materials() {
        let mut data = triangle();
        data.push_section(&[Vec3::Z, Vec3::X, Vec3::Y], &[[0, 2, 1]], 7).unwrap();
        assert_eq!(
            data.push_section(&[Vec3::Z], &[[0, 0, 1]], 8),
            Err(CollisionError::IndexOutOfRange { triangle: 0, index: 1, vertex_count: 1 })
        );
        assert_eq!(data.indices, vec![[0, 1, 2], [3, 5, 4]]);
        assert_eq!(data.material_indices, vec![0, 7]);
        assert_eq!(data.validate(), Ok(()));
    }

    #[test]
    fn validate_reports_each_problem() {
        let mut data = triangle();
        data.indices.push([0, 1, 3]);
        data.material_indices.push(0);
        assert_eq!(data.validate(), Err(CollisionError::IndexOutOfRange { triangle: 1, index: 3, vertex_count: 3 }));

        let mut data = triangle();
        data.material_indices.push(1);
        assert_eq!(data.validate(), Err(CollisionError::MaterialCountMismatch { material_count: 2, triangle_count: 1 }));

        let mut data = triangle();
        data.vertices[1].y = f32::NAN;
        assert!(matches!(data.validate(), Err(CollisionError::NonFiniteVertex { vertex: 1, .. })));

        let mut data = triangle();
        data.uvs.push(vec![Vec2::ZERO; 2]);
        assert_eq!(data.validate(), Err(CollisionError::UvCountMismatch { channel: 0, uv_count: 2, vertex_count: 3 }));
        data.uvs[0].push(Vec2::new(f32::INFINITY, 0.0));
        assert!(matches!(data.validate(), Err(CollisionError::NonFiniteUv { channel: 0, vertex: 2, .. })));
    }

    #[test]
    fn uv_channels_are_padded_for_new_sections() {
        let mut data = triangle();
        data.uvs.push(vec![Vec2::ONE; 3]);
        data.push_section(&[Vec3::Z, Vec3::X, Vec3::Y], &[[0, 1, 2]], 1).unwrap();
        assert_eq!(data.uvs[0].len(), 6);
        assert_eq!(data.validate(), Ok(()));
        assert!(data.tri_mesh_data(false).unwrap().uvs.is_empty());
        assert_eq!(data.tri_mesh_data(true).unwrap().uvs.len(), 1);
    }
}
