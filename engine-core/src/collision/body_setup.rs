//! `BodySetup`: the collision configuration of one component (UE's
//! `UBodySetup`).
//!
//! A body setup says *what* a component collides with: its convex elements
//! (point clouds, hulled when cooked), whether simple queries should use the
//! triangle mesh instead (`use_complex_as_simple`), and whether UVs are kept
//! for hit lookups. The triangles themselves come from the component through
//! a [`CollisionDataProvider`]. Cooking combines the two into one shared
//! [`CookedCollision`].
//!
//! Two ways to cook, as in UE:
//!
//! - [`BodySetup::cook`] cooks now, on the calling thread, and applies the
//!   result at once. Use it when the collision must be right this frame.
//! - [`BodySetup::cook_async`] copies the data now and cooks on a worker
//!   through the body setup's [`AsyncCooker`]; [`BodySetup::apply_finished`],
//!   called once per frame on the game thread, applies the newest finished
//!   cook. A newer request, sync or async, aborts every older one, so a
//!   procedural mesh updated every frame never applies stale collision.
//!
//! In both, a rejected cook (bad provider data, a degenerate convex element)
//! leaves the previously cooked collision in place.

use std::sync::Arc;

use glam::Vec3;

use super::async_cook::{AsyncCooker, CookEvent, CookExecutor};
use super::cook::{CookInput, CookedCollision};
use super::error::CollisionError;
use super::provider::CollisionDataProvider;

/// One convex collision element, given as a point cloud in the component's
/// local space and hulled when cooked (UE's `FKConvexElem`). Interior points
/// are allowed and dropped by the hull.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConvexElement {
    /// The points to hull; at least four, not all coplanar.
    pub points: Vec<Vec3>,
}

impl ConvexElement {
    /// An element hulling `points`.
    pub fn new(points: Vec<Vec3>) -> Self {
        Self { points }
    }

    /// The eight corners of the box from `min` to `max`.
    pub fn cuboid(min: Vec3, max: Vec3) -> Self {
        let points = (0..8)
            .map(|corner| {
                Vec3::new(
                    if corner & 1 == 0 { min.x } else { max.x },
                    if corner & 2 == 0 { min.y } else { max.y },
                    if corner & 4 == 0 { min.z } else { max.z },
                )
            })
            .collect();
        Self { points }
    }

    /// Checks what is cheap to check: enough points, all finite. Whether
    /// they enclose a volume is known only when hulled.
    pub(crate) fn validate(&self, element: usize) -> Result<(), CollisionError> {
        if let Some((point, &position)) = self.points.iter().enumerate().find(|(_, p)| !p.is_finite()) {
            return Err(CollisionError::NonFiniteConvexPoint { element, point, position });
        }
        if self.points.len() < 4 {
            return Err(CollisionError::DegenerateConvex {
                element,
                reason: format!("{} points; a hull needs at least 4", self.points.len()),
            });
        }
        Ok(())
    }
}

/// The collision configuration of one component, and its cooked result.
#[derive(Debug)]
pub struct BodySetup {
    /// Simple queries use the triangle mesh rather than the convex elements
    /// (UE's `CTF_UseComplexAsSimple`). Takes effect at the next cook.
    pub use_complex_as_simple: bool,
    /// Ask providers for UVs and keep them, so hits can be mapped to texture
    /// coordinates with [`CookedCollision::uv_at`]. Takes effect at the next
    /// cook.
    pub support_uv_from_hit_results: bool,
    convex_elements: Vec<ConvexElement>,
    cooked: Option<Arc<CookedCollision>>,
    cooker: AsyncCooker,
    /// Updates refitted in place ([`Self::update_tri_mesh_vertices`]).
    refits: u64,
}

impl Default for BodySetup {
    fn default() -> Self {
        Self::new()
    }
}

impl BodySetup {
    /// A body setup with no convex elements, cooking asynchronously on the
    /// rayon thread pool.
    pub fn new() -> Self {
        Self::with_cooker(AsyncCooker::new())
    }

    /// A body setup whose asynchronous cooks run on `executor` (inline for
    /// deterministic tests, a manual queue to control completion order).
    pub fn with_executor(executor: Arc<dyn CookExecutor>) -> Self {
        Self::with_cooker(AsyncCooker::with_executor(executor))
    }

    fn with_cooker(cooker: AsyncCooker) -> Self {
        Self {
            use_complex_as_simple: false,
            support_uv_from_hit_results: false,
            convex_elements: Vec::new(),
            cooked: None,
            cooker,
            refits: 0,
        }
    }

    /// The convex elements, as given (not hulled).
    pub fn convex_elements(&self) -> &[ConvexElement] {
        &self.convex_elements
    }

    /// Replaces the convex elements (UE's `SetCollisionConvexMeshes`). Takes
    /// effect at the next cook. Rejects non-finite points or elements with
    /// fewer than four points, leaving the current elements in place.
    pub fn set_convex_elements(&mut self, elements: Vec<ConvexElement>) -> Result<(), CollisionError> {
        for (i, element) in elements.iter().enumerate() {
            element.validate(i)?;
        }
        self.convex_elements = elements;
        Ok(())
    }

    /// Appends one convex element; see [`set_convex_elements`](Self::set_convex_elements).
    pub fn add_convex_element(&mut self, element: ConvexElement) -> Result<(), CollisionError> {
        element.validate(self.convex_elements.len())?;
        self.convex_elements.push(element);
        Ok(())
    }

    /// Removes every convex element. Takes effect at the next cook.
    pub fn clear_convex_elements(&mut self) {
        self.convex_elements.clear();
    }

    /// The collision cooked last, if any cook has succeeded.
    pub fn cooked(&self) -> Option<&Arc<CookedCollision>> {
        self.cooked.as_ref()
    }

    /// The asynchronous cooker, for its counters.
    pub fn cooker(&self) -> &AsyncCooker {
        &self.cooker
    }

    /// Copies what a cook needs from this setup and `provider`, and checks it.
    fn gather(&self, provider: &dyn CollisionDataProvider) -> Result<CookInput, CollisionError> {
        let tri_mesh = if provider.contains_tri_mesh_data() { provider.tri_mesh_data(self.support_uv_from_hit_results) } else { None };
        let input = CookInput { tri_mesh, convex: self.convex_elements.clone(), use_complex_as_simple: self.use_complex_as_simple };
        input.validate()?;
        Ok(input)
    }

    /// Cooks now, on this thread, and applies the result. Aborts any
    /// asynchronous cook still in flight, since its data is older. On error
    /// the previous cooked collision stays.
    pub fn cook(&mut self, provider: &dyn CollisionDataProvider) -> Result<Arc<CookedCollision>, CollisionError> {
        let input = self.gather(provider)?;
        self.cooker.abort_all();
        let cooked = Arc::new(input.cook()?);
        self.cooked = Some(Arc::clone(&cooked));
        Ok(cooked)
    }

    /// Puts `provider`'s new vertex positions into the cooked triangle
    /// mesh in place (UE's `UpdateTriMeshVertices`): its tree is refitted,
    /// not rebuilt, now, on this thread, and any asynchronous cook still
    /// in flight is aborted (its data is older). `Ok(None)` when there is
    /// nothing cooked to refit or the topology changed (another vertex
    /// count, other triangles): cook instead. Bad data is an error and
    /// the previous cooked collision stays.
    pub fn update_tri_mesh_vertices(
        &mut self,
        provider: &dyn CollisionDataProvider,
    ) -> Result<Option<Arc<CookedCollision>>, CollisionError> {
        let Some(cooked) = self.cooked.as_ref() else { return Ok(None) };
        let input = self.gather(provider)?;
        let Some(refitted) = input.refitted(cooked)? else { return Ok(None) };
        self.cooker.abort_all();
        let refitted = Arc::new(refitted);
        self.cooked = Some(Arc::clone(&refitted));
        self.refits += 1;
        Ok(Some(refitted))
    }

    /// How many updates [`Self::update_tri_mesh_vertices`] refitted in
    /// place (rather than a full cook).
    pub fn refit_count(&self) -> u64 {
        self.refits
    }

    /// Copies the data now and cooks it on the cooker's worker, aborting
    /// every older request. Returns the request's generation. Bad data is
    /// rejected here, before anything is queued; a cook that fails on the
    /// worker is reported by [`apply_finished`](Self::apply_finished). Either
    /// way the previous cooked collision stays until a newer one succeeds.
    pub fn cook_async(&mut self, provider: &dyn CollisionDataProvider) -> Result<u64, CollisionError> {
        let input = self.gather(provider)?;
        Ok(self.cooker.request(input))
    }

    /// Applies the newest finished asynchronous cook, if it is still the
    /// newest request; older results are discarded. Call once per frame on
    /// the game thread. Returns what happened, or `None` when nothing
    /// current finished since the last call.
    pub fn apply_finished(&mut self) -> Option<CookEvent> {
        let event = self.cooker.poll()?;
        if let CookEvent::Finished { collision, .. } = &event {
            self.cooked = Some(Arc::clone(collision));
        }
        Some(event)
    }
}
