//! The mesh's collision: its sections as a collision data provider, its
//! convex meshes, and when and how its body setup is cooked.
//!
//! As in UE, a procedural mesh has one body for all its sections. Its
//! triangle mesh is the concatenation of every section created with
//! collision, each section's vertex indices rebased past the sections
//! before it and every triangle tagged with its section index as material
//! index, so a ray hit says which section it struck. Convex meshes are
//! separate simple shapes; `use_complex_as_simple` makes simple queries use
//! the triangles instead.
//!
//! Cooking goes through engine-core's [`BodySetup`]: synchronously by
//! default, or, with [`ProcMeshData::set_use_async_cooking`], on the body
//! setup's executor, where a newer request aborts every older one and
//! [`ProcMeshData::poll_collision`] (called by the component once per
//! frame) applies the newest finished result.
//!
//! ```text
//! game thread  update(pos A)    update(pos B)          poll_collision()
//!                │ request g1     │ request g2 (g1 stale)  │ applies g2
//! worker         └── cook g1 ─────┼── (dropped)            │
//!                                 └── cook g2 ── done ─────┘
//! ```
//!
//! A cook happens only when a call changes what collides: a section with
//! collision created, replaced or cleared, its positions updated, the convex
//! meshes or the complex-as-simple flag changed. Updating normals or colors
//! never re-cooks. Convex meshes are hulled once when added (through a
//! throw-away body setup), so a degenerate one is rejected by the call that
//! adds it rather than failing every later cook.

use std::sync::Arc;

use engine_core::collision::{
    BodySetup, CollisionDataProvider, ConvexElement, CookEvent, CookedCollision, InlineExecutor, TriMeshCollisionData,
};
use glam::{Vec2, Vec3};

use crate::change::ChangeSet;
use crate::error::{ProcMeshError, Result};
use crate::mesh::ProcMeshData;
use crate::section::{ProcMeshSection, SectionData};
use crate::vertex::VertexAttributes;

/// One section's arrays replaced for a cook, before the update that gives
/// them is committed. Empty slices keep the section's values.
#[derive(Debug, Clone, Copy)]
struct Patch<'a> {
    pub section: usize,
    pub positions: &'a [Vec3],
    pub uv0: &'a [Vec2],
}

/// The sections seen as a collision data provider.
struct SectionsProvider<'a> {
    sections: &'a [Option<ProcMeshSection>],
    patch: Option<Patch<'a>>,
}

impl SectionsProvider<'_> {
    fn colliding(&self) -> impl Iterator<Item = (usize, &ProcMeshSection)> {
        self.sections.iter().enumerate().filter_map(|(i, s)| s.as_ref().map(|s| (i, s))).filter(|(_, s)| s.has_collision_triangles())
    }
}

impl CollisionDataProvider for SectionsProvider<'_> {
    fn contains_tri_mesh_data(&self) -> bool {
        self.colliding().next().is_some()
    }

    /// Fills the fields directly rather than through `push_section`: the
    /// sections' indices were checked when created, and this way positions
    /// and indices are copied once, straight from the section's streams.
    fn tri_mesh_data(&self, want_uvs: bool) -> Option<TriMeshCollisionData> {
        let (vertex_total, triangle_total) = self.colliding().fold((0, 0), |(v, t), (_, s)| (v + s.vertex_count(), t + s.triangle_count()));
        if triangle_total == 0 {
            return None;
        }
        let mut data = TriMeshCollisionData::new();
        data.vertices.reserve_exact(vertex_total);
        data.indices.reserve_exact(triangle_total);
        data.material_indices.reserve_exact(triangle_total);
        let mut uv0 = Vec::with_capacity(if want_uvs { vertex_total } else { 0 });
        for (index, section) in self.colliding() {
            let patch = self.patch.filter(|p| p.section == index);
            // A total past u32 saturates; the body setup's validation then
            // rejects the out-of-range indices and the call is rolled back.
            let base = u32::try_from(data.vertices.len()).unwrap_or(u32::MAX);
            match patch.map(|p| p.positions).filter(|p| !p.is_empty()) {
                Some(positions) => data.vertices.extend_from_slice(positions),
                None => data.vertices.extend_from_slice(section.positions()),
            }
            data.indices.extend(section.triangles().chunks_exact(3).map(|t| [t[0], t[1], t[2]].map(|i| i.saturating_add(base))));
            // Section indices are capped at u16::MAX when created.
            let material = u16::try_from(index).unwrap_or(u16::MAX);
            data.material_indices.extend(std::iter::repeat_n(material, section.triangle_count()));
            if want_uvs {
                match patch.map(|p| p.uv0).filter(|uv| !uv.is_empty()) {
                    Some(uvs) => uv0.extend_from_slice(uvs),
                    None => uv0.extend_from_slice(section.uv(0)),
                }
            }
        }
        if want_uvs {
            data.uvs.push(uv0);
        }
        Some(data)
    }
}

/// The triangles of every section created with collision, rebased, with
/// the section index as material index and UV0 when asked for.
impl CollisionDataProvider for ProcMeshData {
    fn contains_tri_mesh_data(&self) -> bool {
        self.provider(None).contains_tri_mesh_data()
    }

    fn tri_mesh_data(&self, want_uvs: bool) -> Option<TriMeshCollisionData> {
        self.provider(None).tri_mesh_data(want_uvs)
    }
}

impl ProcMeshData {
    fn provider<'a>(&'a self, patch: Option<Patch<'a>>) -> SectionsProvider<'a> {
        SectionsProvider { sections: &self.sections, patch }
    }

    /// Cooks the current sections and convex meshes (see
    /// [`refresh_collision`](Self::refresh_collision)).
    pub(crate) fn recook(&mut self) -> Result<ChangeSet> {
        self.refresh_collision(None)
    }

    /// Refreshes collision for an update of section `index` with `data`
    /// (giving `attributes`) not yet committed, if the update moves
    /// collision: the section has collision triangles and its positions
    /// change (or its UV0, when UVs are kept for hits). An update keeps the
    /// triangles, so the cooked mesh is refitted in place when there is one
    /// (its tree keeps its structure), and cooked only when nothing is
    /// cooked yet. Otherwise nothing.
    pub(crate) fn recook_for_update(&mut self, index: usize, data: &SectionData<'_>, attributes: VertexAttributes) -> Result<ChangeSet> {
        let collision_moves = attributes.contains(VertexAttributes::POSITION)
            || (attributes.contains(VertexAttributes::UV0) && self.collision.body_setup.support_uv_from_hit_results);
        let collides = self.section(index).is_some_and(ProcMeshSection::has_collision_triangles);
        if !(collides && collision_moves) {
            return Ok(ChangeSet::NONE);
        }
        let patch = Patch { section: index, positions: data.positions, uv0: data.uv0 };
        // The same triangles with new positions: refit the cooked mesh in
        // place (UE's `UpdateTriMeshVertices`) rather than cook it again.
        let provider = SectionsProvider { sections: &self.sections, patch: Some(patch) };
        if self.collision.body_setup.update_tri_mesh_vertices(&provider)?.is_some() {
            return Ok(ChangeSet { collision_cooked: true, ..ChangeSet::NONE });
        }
        self.refresh_collision(Some(patch))
    }

    /// Cooks the current sections (with `patch` applied) and convex meshes,
    /// now or asynchronously per the flag. On error nothing changed: the
    /// body setup keeps its previous cooked collision.
    fn refresh_collision(&mut self, patch: Option<Patch<'_>>) -> Result<ChangeSet> {
        let provider = SectionsProvider { sections: &self.sections, patch };
        let collision = &mut self.collision;
        if collision.use_async_cooking {
            let generation = collision.body_setup.cook_async(&provider)?;
            Ok(ChangeSet { collision_requested: Some(generation), ..ChangeSet::NONE })
        } else {
            collision.body_setup.cook(&provider)?;
            Ok(ChangeSet { collision_cooked: true, ..ChangeSet::NONE })
        }
    }

    /// Whether a cook would produce anything or replace a cooked result.
    fn has_collision(&self) -> bool {
        let body = &self.collision.body_setup;
        body.cooked().is_some() || !body.convex_elements().is_empty() || self.contains_tri_mesh_data()
    }

    /// Adds a convex collision mesh hulling `points` (UE's
    /// `AddCollisionConvexMesh`) and re-cooks. Rejects fewer than four
    /// points, non-finite points and points with no volume.
    pub fn add_collision_convex_mesh(&mut self, points: &[Vec3]) -> Result<ChangeSet> {
        let mut elements = self.collision_convex_meshes().to_vec();
        let element = ConvexElement::new(points.to_vec());
        check_hullable(elements.len(), &element)?;
        elements.push(element);
        self.replace_convex(elements)
    }

    /// Replaces every convex collision mesh (UE's `SetCollisionConvexMeshes`)
    /// and re-cooks; checks them all first.
    pub fn set_collision_convex_meshes(&mut self, meshes: &[Vec<Vec3>]) -> Result<ChangeSet> {
        let elements: Vec<_> = meshes.iter().cloned().map(ConvexElement::new).collect();
        for (i, element) in elements.iter().enumerate() {
            check_hullable(i, element)?;
        }
        if elements == self.collision_convex_meshes() {
            return Ok(ChangeSet::NONE);
        }
        self.replace_convex(elements)
    }

    /// Removes every convex collision mesh (UE's
    /// `ClearCollisionConvexMeshes`) and re-cooks.
    pub fn clear_collision_convex_meshes(&mut self) -> Result<ChangeSet> {
        if self.collision_convex_meshes().is_empty() {
            return Ok(ChangeSet::NONE);
        }
        self.replace_convex(Vec::new())
    }

    fn replace_convex(&mut self, elements: Vec<ConvexElement>) -> Result<ChangeSet> {
        let body = &mut self.collision.body_setup;
        let old = body.convex_elements().to_vec();
        body.set_convex_elements(elements)?;
        self.refresh_collision(None).inspect_err(|_| {
            // These were accepted before, so setting them back cannot fail.
            let _ = self.collision.body_setup.set_convex_elements(old);
        })
    }

    /// The convex collision meshes, as given.
    pub fn collision_convex_meshes(&self) -> &[ConvexElement] {
        self.collision.body_setup.convex_elements()
    }

    /// Makes simple collision queries use the sections' triangles instead of
    /// the convex meshes (UE's `bUseComplexAsSimpleCollision`); re-cooks if
    /// there is collision. Nothing changes if the flag already had this
    /// value.
    pub fn set_use_complex_as_simple_collision(&mut self, on: bool) -> Result<ChangeSet> {
        if self.collision.body_setup.use_complex_as_simple == on {
            return Ok(ChangeSet::NONE);
        }
        self.collision.body_setup.use_complex_as_simple = on;
        if !self.has_collision() {
            return Ok(ChangeSet::NONE);
        }
        self.refresh_collision(None).inspect_err(|_| {
            self.collision.body_setup.use_complex_as_simple = !on;
        })
    }

    /// Whether simple queries use the triangles.
    pub fn use_complex_as_simple_collision(&self) -> bool {
        self.collision.body_setup.use_complex_as_simple
    }

    /// Keeps UV0 in the cooked collision so ray hits can be mapped to
    /// texture coordinates (UE's project setting "Support UV From Hit
    /// Results"); re-cooks if there is collision.
    pub fn set_support_uv_from_hit_results(&mut self, on: bool) -> Result<ChangeSet> {
        if self.collision.body_setup.support_uv_from_hit_results == on {
            return Ok(ChangeSet::NONE);
        }
        self.collision.body_setup.support_uv_from_hit_results = on;
        if !self.has_collision() {
            return Ok(ChangeSet::NONE);
        }
        self.refresh_collision(None).inspect_err(|_| {
            self.collision.body_setup.support_uv_from_hit_results = !on;
        })
    }

    /// Cook on the body setup's executor from now on (UE's
    /// `bUseAsyncCooking`), applying results in
    /// [`poll_collision`](Self::poll_collision). Cooks nothing by itself.
    pub fn set_use_async_cooking(&mut self, on: bool) {
        self.collision.use_async_cooking = on;
    }

    /// Whether cooks run asynchronously.
    pub fn use_async_cooking(&self) -> bool {
        self.collision.use_async_cooking
    }

    /// Applies the newest finished asynchronous cook, discarding older
    /// ones (UE's `FinishPhysicsAsyncCook`). The component calls this once
    /// per frame and, on `Finished`, gives
    /// [`cooked_collision`](Self::cooked_collision) to the collision scene.
    pub fn poll_collision(&mut self) -> Option<CookEvent> {
        self.collision.body_setup.apply_finished()
    }

    /// The collision cooked last, if any.
    pub fn cooked_collision(&self) -> Option<&Arc<CookedCollision>> {
        self.collision.body_setup.cooked()
    }

    /// The body setup, for its cook counters and settings.
    pub fn body_setup(&self) -> &BodySetup {
        &self.collision.body_setup
    }
}

/// Hulls `element` in a throw-away body setup, so a degenerate mesh is
/// rejected now rather than failing every later cook. Errors name the
/// element as `index`.
fn check_hullable(index: usize, element: &ConvexElement) -> Result<()> {
    let mut probe = BodySetup::with_executor(Arc::new(InlineExecutor));
    probe.set_convex_elements(vec![element.clone()]).and_then(|()| probe.cook(&TriMeshCollisionData::new()).map(drop)).map_err(|error| {
        match ProcMeshError::from(error) {
            ProcMeshError::InvalidConvexMesh { reason, .. } => ProcMeshError::InvalidConvexMesh { element: index, reason },
            other => other,
        }
    })
}
