//! The collision scene and its ray cast: the core of a world line trace.
//!
//! The world owns one [`CollisionScene`] (feature `collision`) and mirrors
//! each registered component's collision into it as a body: an id the
//! caller chooses, the shared [`CookedCollision`] and the component's world
//! transform. Which shapes a trace hits — simple or complex — is the
//! trace's choice, as UE's `bTraceComplex` is: [`CollisionScene::raycast`]
//! takes a [`CollisionComplexity`], and a body cooked with `use_complex_as_simple`
//! answers simple traces with its triangle mesh. Bodies keep their cooked
//! shapes in local space; moving a body only changes its transform and
//! its entry in the broad-phase, never the shapes (no re-cook, no BVH
//! rebuild), which is what lets thousands of bodies move every frame.
//!
//! A ray cast walks two levels of BVH. The broad-phase is a BVH over the
//! bodies' world-space bounds (parry's dynamic `Bvh`, updated in place as
//! bodies are added, moved and removed); it visits bodies nearest-first and
//! stops once no body box can beat the best hit. For each candidate body the
//! ray is moved into the body's local space with the inverse transform, so
//! any affine transform (rotation, non-uniform scale) works without touching
//! the shapes, and the cooked triangle mesh's own BVH finds the triangle.
//!
//! Hits are reported in world space: the distance along the ray, the point,
//! and the surface normal (transformed with the inverse transpose, so it
//! stays perpendicular under non-uniform scale) turned to face against the
//! ray, so a caller can reflect or slide without caring which side it hit.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use glam::{Affine3A, Mat3A, Vec2, Vec3};
use parry3d::bounding_volume::Aabb;
use parry3d::partitioning::{Bvh, BvhWorkspace};
use parry3d::query::Ray;

use super::cook::{CollisionBounds, CollisionComplexity, CookedCollision};
use super::error::CollisionError;

/// A body's id in a [`CollisionScene`], chosen by the caller (the world
/// uses the component's id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyId(pub u64);

/// The nearest surface a ray reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RayHit {
    /// The body hit.
    pub body: BodyId,
    /// The hit point, in world space.
    pub position: Vec3,
    /// The unit surface normal at the hit, in world space, facing against
    /// the ray (`normal.dot(direction) <= 0`).
    pub normal: Vec3,
    /// The distance from the ray origin to `position`.
    pub distance: f32,
    /// The triangle hit, indexing the provider's triangles, when a triangle
    /// mesh was hit; `None` for convex elements.
    pub triangle_index: Option<u32>,
    /// That triangle's material index.
    pub material_index: Option<u16>,
}

struct Body {
    id: BodyId,
    collision: Arc<CookedCollision>,
    transform: Affine3A,
    inverse: Affine3A,
    /// Inverse transpose of the linear part: takes local normals to world.
    normal_matrix: Mat3A,
    /// The bounds of all its shapes, simple and complex (what the
    /// broad-phase holds; a trace of either kind can hit inside).
    world_bounds: Option<CollisionBounds>,
}

impl Body {
    fn new(id: BodyId, collision: Arc<CookedCollision>, transform: Affine3A) -> Result<Self, CollisionError> {
        let inverse = checked_inverse(id, &transform)?;
        let mut body = Self { id, collision, transform, inverse, normal_matrix: inverse.matrix3.transpose(), world_bounds: None };
        body.update_bounds();
        Ok(body)
    }

    fn update_bounds(&mut self) {
        let local = [CollisionComplexity::Simple, CollisionComplexity::Complex].map(|c| self.collision.local_bounds(c));
        self.world_bounds = local.into_iter().flatten().reduce(CollisionBounds::union).map(|b| b.transformed(&self.transform));
    }

    /// The nearest hit of the world ray `origin + t * dir` (`dir` unit
    /// length) with `t <= max_distance`, against the shapes of `complexity`.
    fn raycast(&self, origin: Vec3, dir: Vec3, max_distance: f32, complexity: CollisionComplexity) -> Option<RayHit> {
        let local_origin = self.inverse.transform_point3(origin);
        let local_dir = self.inverse.transform_vector3(dir);
        // Cast with a unit local direction, so parry's tolerances see the
        // usual scale, and convert its parameter back to world distance.
        let scale = local_dir.length();
        if !(scale.is_finite() && scale > 0.0) {
            return None;
        }
        // parry keeps only hits strictly nearer than its bound, and the
        // round trip through local space rounds; allow a few ulps so a hit at
        // exactly `max_distance` counts, and clamp what is reported.
        let limit = inclusive(max_distance);
        let local_max = limit * scale;
        let hit = self.collision.cast_local_ray(
            local_origin,
            local_dir / scale,
            if local_max.is_finite() { local_max } else { f32::MAX },
            complexity,
        )?;
        let distance = hit.t / scale;
        if distance.is_nan() || distance > limit {
            return None;
        }
        let distance = distance.min(max_distance);
        let mut normal = (self.normal_matrix * hit.normal).normalize_or_zero();
        if normal == Vec3::ZERO {
            normal = -dir;
        } else if normal.dot(dir) > 0.0 {
            normal = -normal;
        }
        Some(RayHit {
            body: self.id,
            position: origin + dir * distance,
            normal,
            distance,
            triangle_index: hit.triangle_index,
            material_index: hit.material_index,
        })
    }
}

/// `max` widened by a few ulps, for bounds that parry treats as exclusive.
fn inclusive(max: f32) -> f32 {
    max * (1.0 + 8.0 * f32::EPSILON) + 1e-30
}

fn checked_inverse(id: BodyId, transform: &Affine3A) -> Result<Affine3A, CollisionError> {
    renderer::check_affine(transform).map_err(|_| CollisionError::InvalidTransform(id))?;
    Ok(transform.inverse())
}

/// Every body that traces can hit, with a broad-phase over their bounds.
pub struct CollisionScene {
    /// Indexed by broad-phase leaf; `None` is a free slot.
    slots: Vec<Option<Body>>,
    free: Vec<u32>,
    by_id: HashMap<BodyId, u32>,
    broad_phase: Bvh,
    workspace: BvhWorkspace,
}

impl Default for CollisionScene {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for CollisionScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollisionScene").field("bodies", &self.by_id.len()).finish_non_exhaustive()
    }
}

impl CollisionScene {
    /// An empty scene.
    pub fn new() -> Self {
        Self { slots: Vec::new(), free: Vec::new(), by_id: HashMap::new(), broad_phase: Bvh::new(), workspace: BvhWorkspace::default() }
    }

    /// How many bodies the scene holds.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether the scene holds no bodies.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Every body: its id, cooked collision and local-to-world transform
    /// (in no particular order).
    pub fn bodies(&self) -> impl Iterator<Item = (BodyId, &Arc<CookedCollision>, Affine3A)> + '_ {
        self.slots.iter().flatten().map(|b| (b.id, &b.collision, b.transform))
    }

    /// Whether a body with this id is in the scene.
    pub fn contains(&self, id: BodyId) -> bool {
        self.by_id.contains_key(&id)
    }

    /// Adds a body. Rejects an id already present and a transform that is
    /// not finite or not invertible. A body whose collision has no shapes
    /// is kept but never hit.
    pub fn add_body(&mut self, id: BodyId, collision: Arc<CookedCollision>, transform: Affine3A) -> Result<(), CollisionError> {
        if self.by_id.contains_key(&id) {
            return Err(CollisionError::DuplicateBody(id));
        }
        let body = Body::new(id, collision, transform)?;
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                let slot = u32::try_from(self.slots.len()).map_err(|_| CollisionError::SceneFull)?;
                self.slots.push(None);
                slot
            }
        };
        self.slots[slot as usize] = Some(body);
        self.by_id.insert(id, slot);
        self.sync_broad_phase(slot);
        Ok(())
    }

    /// Removes a body.
    pub fn remove_body(&mut self, id: BodyId) -> Result<(), CollisionError> {
        let slot = self.by_id.remove(&id).ok_or(CollisionError::UnknownBody(id))?;
        let body = self.slots[slot as usize].take();
        if body.is_some_and(|b| b.world_bounds.is_some()) {
            self.broad_phase.remove(slot);
        }
        self.free.push(slot);
        Ok(())
    }

    /// Moves a body (the world's "render transform dirty" for collision).
    /// On error the body keeps its transform.
    pub fn set_transform(&mut self, id: BodyId, transform: Affine3A) -> Result<(), CollisionError> {
        let slot = self.slot(id)?;
        let inverse = checked_inverse(id, &transform)?;
        self.update(slot, |body| {
            body.transform = transform;
            body.inverse = inverse;
            body.normal_matrix = inverse.matrix3.transpose();
        });
        Ok(())
    }

    /// Swaps in newly cooked collision, e.g. after
    /// [`BodySetup::apply_finished`](super::BodySetup::apply_finished).
    pub fn set_collision(&mut self, id: BodyId, collision: Arc<CookedCollision>) -> Result<(), CollisionError> {
        let slot = self.slot(id)?;
        self.update(slot, |body| body.collision = collision);
        Ok(())
    }

    /// Tidies the broad-phase after a frame's updates; call once per frame
    /// after moving bodies (the world's end-of-frame update).
    ///
    /// Moving a body updates its own box at once, but the boxes above it
    /// only ever grow, so a scene whose bodies wander gets slower to trace
    /// (never wrong). This shrinks every box back to fit and rebuilds a
    /// few percent of the tree per call, rotating through it over frames.
    pub fn maintain(&mut self) {
        self.broad_phase.refit(&mut self.workspace);
        self.broad_phase.optimize_incremental(&mut self.workspace);
    }

    /// The world-space bounds of all a body's shapes, simple and complex;
    /// `None` for an unknown body or one with no shapes.
    pub fn body_bounds(&self, id: BodyId) -> Option<CollisionBounds> {
        self.body(id)?.world_bounds
    }

    /// The UV of `channel` at a hit on a triangle mesh, when its body setup
    /// kept UVs (`support_uv_from_hit_results`).
    pub fn hit_uv(&self, hit: &RayHit, channel: usize) -> Option<Vec2> {
        let body = self.body(hit.body)?;
        let local = body.inverse.transform_point3(hit.position);
        body.collision.uv_at(hit.triangle_index?, local, channel)
    }

    /// The nearest hit along the ray from `origin` in `direction` (any
    /// non-zero length) within `max_distance` (may be infinite), or `None`,
    /// against each body's shapes of `complexity` (UE's trace-complex
    /// flag): [`CollisionComplexity::Simple`] hits convex elements, or the
    /// triangle mesh of bodies cooked with `use_complex_as_simple`;
    /// [`CollisionComplexity::Complex`] hits triangle meshes (convex
    /// elements where a body has none). Rejects a non-finite origin or
    /// direction, a zero direction and a NaN or negative distance.
    pub fn raycast(
        &self,
        origin: Vec3,
        direction: Vec3,
        max_distance: f32,
        complexity: CollisionComplexity,
    ) -> Result<Option<RayHit>, CollisionError> {
        if !origin.is_finite() || !direction.is_finite() {
            return Err(CollisionError::NonFiniteRay { origin, direction });
        }
        if max_distance.is_nan() || max_distance < 0.0 {
            return Err(CollisionError::InvalidMaxDistance(max_distance));
        }
        let dir = direction.normalize_or_zero();
        if dir == Vec3::ZERO {
            return Err(CollisionError::ZeroRayDirection);
        }
        let ray = Ray::new(origin, dir);
        let best = Cell::new(None::<RayHit>);
        // The broad-phase keeps only leaves strictly nearer than its bound;
        // widen it a hair and let each body enforce the exact limit.
        let bound = inclusive(max_distance);
        let bound = if bound.is_finite() { bound } else { f32::MAX };
        self.broad_phase.cast_ray(&ray, bound, |slot, best_so_far| {
            let body = self.slots.get(slot as usize)?.as_ref()?;
            let hit = body.raycast(origin, dir, best_so_far.min(max_distance), complexity)?;
            if best.get().is_none_or(|b| hit.distance < b.distance) {
                best.set(Some(hit));
            }
            Some(hit.distance)
        });
        Ok(best.get())
    }

    fn slot(&self, id: BodyId) -> Result<u32, CollisionError> {
        self.by_id.get(&id).copied().ok_or(CollisionError::UnknownBody(id))
    }

    fn body(&self, id: BodyId) -> Option<&Body> {
        self.slots[*self.by_id.get(&id)? as usize].as_ref()
    }

    fn update(&mut self, slot: u32, change: impl FnOnce(&mut Body)) {
        let Some(body) = self.slots[slot as usize].as_mut() else {
            return;
        };
        let was_in = body.world_bounds.is_some();
        change(body);
        body.update_bounds();
        if was_in && body.world_bounds.is_none() {
            self.broad_phase.remove(slot);
        }
        self.sync_broad_phase(slot);
    }

    /// Inserts or refreshes the slot's leaf. The box is padded a hair so
    /// that rounding in the transform never lets a grazing ray miss the box
    /// of a surface it touches.
    fn sync_broad_phase(&mut self, slot: u32) {
        let Some(bounds) = self.slots[slot as usize].as_ref().and_then(|b| b.world_bounds) else {
            return;
        };
        let pad = (bounds.max - bounds.min).max_element() * 1e-5 + 1e-6;
        let aabb = Aabb::new(bounds.min - Vec3::splat(pad), bounds.max + Vec3::splat(pad));
        self.broad_phase.insert(aabb, slot);
    }
}
