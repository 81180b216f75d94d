//! What instancing needs to know about the static mesh it repeats.
//!
//! The static-mesh asset lives in engine-core (with its GPU buffers in the
//! renderer). Culling, LOD selection, cluster-tree leaf sizing and the
//! indirect draw arguments need only this summary of it: the bounds, and per
//! LOD its screen size, vertex count and index ranges (sections). The
//! component and the proxy build an [`InstancedMesh`] from the mesh's render
//! data ([`crate::proxy::instanced_mesh_for`]).

use crate::bounds::{checked_bounds, Bounds};
use crate::error::{InstancingError, Result};

/// UE's `MAX_STATIC_MESH_LODS`.
pub const MAX_LODS: usize = 8;

/// One section of one LOD: a range of the LOD's index buffer drawn with one
/// material (one indirect draw per section and LOD).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MeshSection {
    pub first_index: u32,
    pub index_count: u32,
    /// Added to each index before fetching a vertex (`vertexOffset`).
    pub vertex_offset: i32,
}

/// One LOD: the screen size below which the next LOD takes over, its vertex
/// count and its sections.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshLod {
    /// UE's `ScreenSize[LODIndex]`: this LOD is used while the instance's
    /// projected screen size is below this LOD's value (and not below the
    /// next LOD's). LOD 0's value is normally 1 or more.
    pub screen_size: f32,
    pub vertex_count: u32,
    pub sections: Vec<MeshSection>,
}

/// A validated mesh summary: bounds plus 1..=[`MAX_LODS`] LODs with
/// non-increasing screen sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct InstancedMesh {
    bounds: Bounds,
    lods: Vec<MeshLod>,
    screen_sizes: Vec<f32>,
}

impl InstancedMesh {
    pub fn new(bounds: Bounds, lods: Vec<MeshLod>) -> Result<Self> {
        let screen_sizes: Vec<f32> = lods.iter().map(|l| l.screen_size).collect();
        validate_screen_sizes(&screen_sizes)?;
        for lod in &lods {
            if lod.sections.is_empty() {
                return Err(InstancingError::InvalidMesh("a LOD has no sections"));
            }
            if lod.vertex_count == 0 {
                return Err(InstancingError::InvalidMesh("a LOD has no vertices"));
            }
        }
        // Re-check bounds: the fields are public, so they may not come from
        // `Bounds::new`.
        checked_bounds(bounds)?;
        Ok(Self { bounds, lods, screen_sizes })
    }

    /// A one-section mesh with `screen_sizes.len()` LODs (tests, examples,
    /// benches): LOD i has `vertex_count >> i` vertices and `index_count >> i`
    /// indices, all in one buffer one after the other.
    pub fn simple(bounds: Bounds, vertex_count: u32, index_count: u32, screen_sizes: &[f32]) -> Result<Self> {
        let mut first_index = 0;
        let lods = screen_sizes
            .iter()
            .enumerate()
            .map(|(i, &screen_size)| {
                let count = (index_count >> i).max(3);
                let lod = MeshLod {
                    screen_size,
                    vertex_count: (vertex_count >> i).max(3),
                    sections: vec![MeshSection { first_index, index_count: count, vertex_offset: 0 }],
                };
                first_index += count;
                lod
            })
            .collect();
        Self::new(bounds, lods)
    }

    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    pub fn lods(&self) -> &[MeshLod] {
        &self.lods
    }

    pub fn lod_count(&self) -> usize {
        self.lods.len()
    }

    /// The LOD screen sizes, LOD 0 first.
    pub fn screen_sizes(&self) -> &[f32] {
        &self.screen_sizes
    }

    /// LOD 0's vertex count (sizes the HISM cluster leaves).
    pub fn lod0_vertex_count(&self) -> u32 {
        self.lods[0].vertex_count
    }
}

/// 1..=`MAX_LODS` finite, non-negative, non-increasing values.
pub fn validate_screen_sizes(sizes: &[f32]) -> Result<()> {
    let ok = !sizes.is_empty()
        && sizes.len() <= MAX_LODS
        && sizes.iter().all(|s| s.is_finite() && *s >= 0.0)
        && sizes.windows(2).all(|w| w[0] >= w[1]);
    if ok {
        Ok(())
    } else {
        Err(InstancingError::InvalidLodScreenSizes(sizes.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn unit() -> Bounds {
        Bounds::new(Vec3::ZERO, Vec3::ONE, 3f32.sqrt())
    }

    #[test]
    fn screen_sizes_validated() {
        assert!(InstancedMesh::simple(unit(), 100, 300, &[1.0, 0.5, 0.1]).is_ok());
        assert!(InstancedMesh::simple(unit(), 100, 300, &[0.5, 1.0]).is_err());
        assert!(InstancedMesh::simple(unit(), 100, 300, &[]).is_err());
        assert!(InstancedMesh::simple(unit(), 100, 300, &[1.0, f32::NAN]).is_err());
        assert!(InstancedMesh::simple(unit(), 100, 300, &[1.0; 9]).is_err());
    }

    #[test]
    fn simple_lays_out_lods_back_to_back() {
        let m = InstancedMesh::simple(unit(), 100, 300, &[1.0, 0.5]).unwrap();
        assert_eq!(m.lods()[1].sections[0].first_index, 300);
        assert_eq!(m.lods()[1].sections[0].index_count, 150);
        assert_eq!(m.lod0_vertex_count(), 100);
    }
}
