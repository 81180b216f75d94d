//! Cooking: turning gathered geometry into shapes that answer queries fast.
//!
//! UE cooks a body setup's triangle mesh and convex elements into physics
//! shapes (a BVH-backed triangle mesh, hulled convex meshes) once, and every
//! trace then runs against the cooked result. Cooking is the expensive part
//! (building the BVH, hulling point clouds), so it is separated from gathering:
//! [`CookInput`] is an owned, `Send` snapshot taken on the game thread, and
//! [`CookInput::cook`] may run anywhere, which is what lets
//! [`AsyncCooker`](super::AsyncCooker) move it to a worker.
//!
//! The cooked result, [`CookedCollision`], is immutable and shared through an
//! `Arc`: the body setup, the collision scene and any cook still in flight can
//! all hold it without copying, and replacing it is swapping one pointer.
//!
//! The shapes are parry3d's (its `TriMesh` carries its own BVH over the
//! triangles; convex elements become `ConvexPolyhedron`s), kept private so
//! callers only ever see glam types.

use std::fmt;

use glam::{Affine3A, Vec2, Vec3};
use parry3d::bounding_volume::Aabb;
use parry3d::query::{Ray, RayCast};
use parry3d::shape::{ConvexPolyhedron, TriMesh};
use parry3d::transformation::try_convex_hull;

use super::body_setup::ConvexElement;
use super::error::CollisionError;
use super::provider::TriMeshCollisionData;

/// Which of a body's cooked shapes a query runs against (UE's simple vs.
/// complex collision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CollisionComplexity {
    /// The simple shapes: the convex elements, or the triangle mesh when the
    /// body setup was cooked with `use_complex_as_simple`.
    #[default]
    Simple,
    /// The triangle mesh. A body without one falls back to its convex
    /// elements, as UE does for bodies that have no complex geometry.
    Complex,
}

/// An axis-aligned box, in whatever space its owner says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CollisionBounds {
    /// The smallest corner.
    pub min: Vec3,
    /// The largest corner.
    pub max: Vec3,
}

impl CollisionBounds {
    /// The smallest box holding both.
    pub fn union(self, other: Self) -> Self {
        Self { min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    /// The smallest box holding this box after `transform` (all eight
    /// corners transformed, so rotation and non-uniform scale are exact).
    pub fn transformed(self, transform: &Affine3A) -> Self {
        let mut min = Vec3::splat(f32::INFINITY);
        let mut max = Vec3::splat(f32::NEG_INFINITY);
        for corner in 0..8 {
            let p = Vec3::new(
                if corner & 1 == 0 { self.min.x } else { self.max.x },
                if corner & 2 == 0 { self.min.y } else { self.max.y },
                if corner & 4 == 0 { self.min.z } else { self.max.z },
            );
            let p = transform.transform_point3(p);
            min = min.min(p);
            max = max.max(p);
        }
        Self { min, max }
    }

    fn from_aabb(aabb: &Aabb) -> Self {
        Self { min: aabb.mins, max: aabb.maxs }
    }
}

/// A body setup's collision, cooked and ready for queries. Immutable; shared
/// through `Arc` between the body setup and the collision scene.
pub struct CookedCollision {
    tri_mesh: Option<CookedTriMesh>,
    convex: Vec<CookedConvex>,
    use_complex_as_simple: bool,
}

struct CookedTriMesh {
    mesh: TriMesh,
    material_indices: Vec<u16>,
    uvs: Vec<Vec<Vec2>>,
    bounds: CollisionBounds,
}

struct CookedConvex {
    hull: ConvexPolyhedron,
    aabb: Aabb,
}

/// A ray hit in the body's local space. `t` is in units of the ray direction
/// it was cast with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LocalHit {
    pub t: f32,
    pub normal: Vec3,
    pub triangle_index: Option<u32>,
    pub material_index: Option<u16>,
}

impl CookedCollision {
    /// Its shapes' edges in local space, each once: the triangle mesh's and
    /// every convex hull's (what a collision view draws).
    pub fn wireframe(&self) -> Vec<[Vec3; 2]> {
        let mut edges = Vec::new();
        if let Some(t) = &self.tri_mesh {
            let vertices = t.mesh.vertices();
            let mut seen = std::collections::HashSet::new();
            for tri in t.mesh.indices() {
                for (a, b) in [(tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])] {
                    if seen.insert((a.min(b), a.max(b))) {
                        edges.push([vertices[a as usize], vertices[b as usize]]);
                    }
                }
            }
        }
        for c in &self.convex {
            let points = c.hull.points();
            edges.extend(c.hull.edges().iter().map(|e| [points[e.vertices[0] as usize], points[e.vertices[1] as usize]]));
        }
        edges
    }

    /// Collision with no shapes at all; rays pass through it.
    pub fn empty() -> Self {
        Self { tri_mesh: None, convex: Vec::new(), use_complex_as_simple: false }
    }

    /// Whether a triangle mesh was cooked.
    pub fn has_tri_mesh(&self) -> bool {
        self.tri_mesh.is_some()
    }

    /// Triangles in the cooked mesh (0 without one). Triangle indices in ray
    /// hits index the provider's `indices` in the same order.
    pub fn triangle_count(&self) -> usize {
        self.tri_mesh.as_ref().map_or(0, |m| m.mesh.num_triangles())
    }

    /// The material index the provider gave a triangle.
    pub fn material_index(&self, triangle: u32) -> Option<u16> {
        self.tri_mesh.as_ref().and_then(|m| m.material_indices.get(triangle as usize).copied())
    }

    /// How many convex elements were cooked.
    pub fn convex_count(&self) -> usize {
        self.convex.len()
    }

    /// The vertices of a cooked convex hull (a subset of the element's
    /// points: interior points are dropped), e.g. for debug drawing.
    pub fn convex_hull_points(&self, element: usize) -> Option<Vec<Vec3>> {
        self.convex.get(element).map(|c| c.hull.points().to_vec())
    }

    /// Whether simple queries use the triangle mesh (copied from the body
    /// setup when cooked).
    pub fn use_complex_as_simple(&self) -> bool {
        self.use_complex_as_simple
    }

    /// How many UV channels were kept for [`uv_at`](Self::uv_at).
    pub fn uv_channel_count(&self) -> usize {
        self.tri_mesh.as_ref().map_or(0, |m| m.uvs.len())
    }

    /// Local-space bounds of the shapes a query of this complexity runs
    /// against, or `None` when there are none.
    pub fn local_bounds(&self, complexity: CollisionComplexity) -> Option<CollisionBounds> {
        let (tri_mesh, convex) = self.shapes_for(complexity);
        let mesh_bounds = tri_mesh.map(|m| m.bounds);
        convex.iter().map(|c| CollisionBounds::from_aabb(&c.aabb)).chain(mesh_bounds).reduce(CollisionBounds::union)
    }

    /// The UV of `channel` at a point on `triangle` given in the body's
    /// local space, interpolated barycentrically. `None` when the triangle,
    /// the channel or the UVs were not cooked (cook with
    /// `support_uv_from_hit_results` to keep them) or the triangle is
    /// degenerate.
    pub fn uv_at(&self, triangle: u32, local_point: Vec3, channel: usize) -> Option<Vec2> {
        let mesh = self.tri_mesh.as_ref()?;
        let uvs = mesh.uvs.get(channel)?;
        let [ia, ib, ic] = *mesh.mesh.indices().get(triangle as usize)?;
        let v = mesh.mesh.vertices();
        let (a, b, c) = (v[ia as usize], v[ib as usize], v[ic as usize]);
        let (e0, e1, ep) = (b - a, c - a, local_point - a);
        let (d00, d01, d11) = (e0.dot(e0), e0.dot(e1), e1.dot(e1));
        let (d20, d21) = (ep.dot(e0), ep.dot(e1));
        let denom = d00 * d11 - d01 * d01;
        if denom.abs() <= f32::EPSILON * d00 * d11 {
            return None;
        }
        let wb = (d11 * d20 - d01 * d21) / denom;
        let wc = (d00 * d21 - d01 * d20) / denom;
        let wa = 1.0 - wb - wc;
        Some(uvs[ia as usize] * wa + uvs[ib as usize] * wb + uvs[ic as usize] * wc)
    }

    fn shapes_for(&self, complexity: CollisionComplexity) -> (Option<&CookedTriMesh>, &[CookedConvex]) {
        let use_mesh = match complexity {
            CollisionComplexity::Simple => self.use_complex_as_simple,
            CollisionComplexity::Complex => self.tri_mesh.is_some(),
        };
        if use_mesh {
            (self.tri_mesh.as_ref(), &[])
        } else {
            (None, &self.convex)
        }
    }

    /// The nearest hit of a local-space ray within `max_t` (in units of
    /// `dir`), against the shapes for `complexity`. Shapes are surfaces: a
    /// ray starting inside a convex element hits its far side.
    pub(crate) fn cast_local_ray(&self, origin: Vec3, dir: Vec3, max_t: f32, complexity: CollisionComplexity) -> Option<LocalHit> {
        let ray = Ray::new(origin, dir);
        let (tri_mesh, convex) = self.shapes_for(complexity);
        let mut best: Option<LocalHit> = None;
        let mut max_t = max_t;
        if let Some(mesh) = tri_mesh {
            if let Some(hit) = mesh.mesh.cast_local_ray_and_get_normal(&ray, max_t, false) {
                max_t = hit.time_of_impact;
                best = Some(LocalHit {
                    t: hit.time_of_impact,
                    normal: hit.normal,
                    triangle_index: Some(hit.subshape),
                    material_index: mesh.material_indices.get(hit.subshape as usize).copied(),
                });
            }
        }
        for element in convex {
            if element.aabb.cast_local_ray(&ray, max_t, true).is_none() {
                continue;
            }
            if let Some(hit) = element.hull.cast_local_ray_and_get_normal(&ray, max_t, false) {
                if hit.time_of_impact < max_t || best.is_none() {
                    max_t = hit.time_of_impact;
                    best = Some(LocalHit { t: hit.time_of_impact, normal: hit.normal, triangle_index: None, material_index: None });
                }
            }
        }
        best
    }
}

impl fmt::Debug for CookedCollision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CookedCollision")
            .field("triangles", &self.triangle_count())
            .field("convex_elements", &self.convex.len())
            .field("uv_channels", &self.uv_channel_count())
            .field("use_complex_as_simple", &self.use_complex_as_simple)
            .finish()
    }
}

/// Everything a cook needs, copied out of the body setup and its provider on
/// the game thread. Owned and `Send`, so it can be cooked on a worker.
#[derive(Debug, Clone)]
pub(crate) struct CookInput {
    pub tri_mesh: Option<TriMeshCollisionData>,
    pub convex: Vec<ConvexElement>,
    pub use_complex_as_simple: bool,
}

impl CookInput {
    /// Checks everything that is cheap to check, so that a caller hears about
    /// bad data at once rather than from a worker a frame later. What only
    /// the hull builder can find out (coplanar points) is reported by
    /// [`cook`](Self::cook).
    pub fn validate(&self) -> Result<(), CollisionError> {
        if let Some(data) = &self.tri_mesh {
            data.validate()?;
        }
        for (element, convex) in self.convex.iter().enumerate() {
            convex.validate(element)?;
        }
        Ok(())
    }

    /// Builds the triangle mesh's BVH and hulls every convex element.
    pub fn cook(self) -> Result<CookedCollision, CollisionError> {
        self.validate()?;
        let tri_mesh = match self.tri_mesh {
            Some(data) if !data.indices.is_empty() => Some(cook_tri_mesh(data)?),
            _ => None,
        };
        let convex =
            self.convex.iter().enumerate().map(|(element, convex)| cook_convex(element, &convex.points)).collect::<Result<Vec<_>, _>>()?;
        Ok(CookedCollision { tri_mesh, convex, use_complex_as_simple: self.use_complex_as_simple })
    }
}

impl CookInput {
    /// The cooked collision `cooked` with this input's vertex positions
    /// (and UVs) put into its triangle mesh in place — the tree refitted,
    /// not rebuilt (UE's `UpdateTriMeshVertices`) — or `None` when the
    /// topology is not the same (another vertex count, other triangles or
    /// materials, no triangle mesh) and a full cook is needed. Convex
    /// elements are cooked again (they are few and small).
    pub fn refitted(&self, cooked: &CookedCollision) -> Result<Option<CookedCollision>, CollisionError> {
        let (Some(data), Some(old)) = (&self.tri_mesh, &cooked.tri_mesh) else { return Ok(None) };
        let flip = |&[a, b, c]: &[u32; 3]| if data.flip_normals { [a, c, b] } else { [a, b, c] };
        let same_topology = data.vertices.len() == old.mesh.vertices().len()
            && data.material_indices == old.material_indices
            && data.indices.len() == old.mesh.indices().len()
            && data.indices.iter().map(flip).eq(old.mesh.indices().iter().copied());
        if !same_topology || self.use_complex_as_simple != cooked.use_complex_as_simple {
            return Ok(None);
        }
        let mut mesh = old.mesh.clone();
        mesh.set_vertices(&data.vertices);
        let bounds = CollisionBounds::from_aabb(&mesh.local_aabb());
        let tri_mesh = CookedTriMesh { mesh, material_indices: old.material_indices.clone(), uvs: data.uvs.clone(), bounds };
        let convex =
            self.convex.iter().enumerate().map(|(element, convex)| cook_convex(element, &convex.points)).collect::<Result<Vec<_>, _>>()?;
        Ok(Some(CookedCollision { tri_mesh: Some(tri_mesh), convex, use_complex_as_simple: self.use_complex_as_simple }))
    }
}

fn cook_tri_mesh(data: TriMeshCollisionData) -> Result<CookedTriMesh, CollisionError> {
    let indices = if data.flip_normals { data.indices.iter().map(|&[a, b, c]| [a, c, b]).collect() } else { data.indices };
    // No flags: parry keeps the triangles exactly as given (no merging or
    // removal of degenerate ones), so hit triangle ids index the provider's
    // triangles and material indices one to one.
    let mesh = TriMesh::new(data.vertices, indices).map_err(|e| CollisionError::TriMeshBuild(e.to_string()))?;
    let bounds = CollisionBounds::from_aabb(&mesh.local_aabb());
    Ok(CookedTriMesh { mesh, material_indices: data.material_indices, uvs: data.uvs, bounds })
}

fn cook_convex(element: usize, points: &[Vec3]) -> Result<CookedConvex, CollisionError> {
    let degenerate = |reason: String| CollisionError::DegenerateConvex { element, reason };
    let (vertices, indices) = try_convex_hull(points).map_err(|e| degenerate(e.to_string()))?;
    let hull =
        ConvexPolyhedron::from_convex_mesh(vertices, &indices).ok_or_else(|| degenerate("the hull encloses no volume".to_owned()))?;
    if !encloses_volume(&hull) {
        return Err(degenerate("the points are coplanar".to_owned()));
    }
    let aabb = hull.local_aabb();
    Ok(CookedConvex { hull, aabb })
}

/// Whether some hull vertex lies off the plane of the first three that span
/// one, relative to the hull's size. A flat hull would let rays through
/// edge-on and has no inside.
fn encloses_volume(hull: &ConvexPolyhedron) -> bool {
    let points = hull.points();
    let Some(&origin) = points.first() else {
        return false;
    };
    let size = points.iter().map(|p| (*p - origin).length()).fold(0.0, f32::max);
    let tolerance = size * 1e-5;
    let Some(axis) = points.iter().find(|p| (**p - origin).length() > tolerance) else {
        return false;
    };
    let axis = *axis - origin;
    let Some(normal) = points.iter().map(|p| axis.cross(*p - origin)).find(|n| n.length() > tolerance * axis.length()) else {
        return false;
    };
    let normal = normal.normalize();
    points.iter().any(|p| normal.dot(*p - origin).abs() > tolerance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilted_flat_point_sets_are_not_hulled() {
        // All on the plane x + y + z = 1.
        let flat = [Vec3::X, Vec3::Y, Vec3::Z, Vec3::new(1.0, 1.0, -1.0), Vec3::new(0.5, 0.5, 0.0)];
        assert!(matches!(cook_convex(3, &flat), Err(CollisionError::DegenerateConvex { element: 3, .. })));
        let tetrahedron = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z];
        assert!(cook_convex(0, &tetrahedron).is_ok());
    }

    #[test]
    fn bounds_follow_complexity() {
        let mut data = TriMeshCollisionData::new();
        data.push_section(&[Vec3::ZERO, Vec3::X, Vec3::Y], &[[0, 1, 2]], 0).unwrap();
        let input = CookInput {
            tri_mesh: Some(data),
            convex: vec![ConvexElement::cuboid(Vec3::splat(-2.0), Vec3::splat(-1.0))],
            use_complex_as_simple: false,
        };
        let cooked = input.cook().unwrap();
        let simple = cooked.local_bounds(CollisionComplexity::Simple).unwrap();
        assert_eq!((simple.min, simple.max), (Vec3::splat(-2.0), Vec3::splat(-1.0)));
        let complex = cooked.local_bounds(CollisionComplexity::Complex).unwrap();
        assert_eq!((complex.min, complex.max), (Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)));
        assert!(CookedCollision::empty().local_bounds(CollisionComplexity::Complex).is_none());
    }

    #[test]
    fn uv_lookup_interpolates_and_skips_degenerate_triangles() {
        let mut data = TriMeshCollisionData::new();
        data.push_section(&[Vec3::ZERO, Vec3::X, Vec3::Y], &[[0, 1, 2]], 0).unwrap();
        data.push_section(&[Vec3::ZERO, Vec3::X, Vec3::X * 2.0], &[[0, 1, 2]], 0).unwrap();
        data.uvs.push(vec![Vec2::ZERO, Vec2::new(1.0, 0.0), Vec2::new(0.0, 1.0), Vec2::ZERO, Vec2::ZERO, Vec2::ZERO]);
        let input = CookInput { tri_mesh: Some(data), convex: Vec::new(), use_complex_as_simple: true };
        let cooked = input.cook().unwrap();
        let uv = cooked.uv_at(0, Vec3::new(0.25, 0.5, 0.0), 0).unwrap();
        assert!(uv.abs_diff_eq(Vec2::new(0.25, 0.5), 1e-6));
        assert_eq!(cooked.uv_at(1, Vec3::new(0.5, 0.0, 0.0), 0), None);
        assert_eq!(cooked.uv_at(2, Vec3::ZERO, 0), None);
    }
}
