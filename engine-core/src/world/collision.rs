//! The world's collision (feature `collision`): the scene of bodies, the
//! end-of-frame step that keeps each primitive's body in step with its dirty
//! flags, and [`World::raycast`].
//!
//! This is its own end-of-frame step, separate from the render updates: it
//! reads the marked components' dirty flags before the render step clears
//! them, and touches nothing the render thread sees.

use super::end_of_frame::EndOfFrameStats;
use crate::collision::{BodyId, CollisionComplexity, CollisionScene, RayHit};
use crate::component::DirtyFlags;
use crate::error::Result;
use crate::handle::ComponentId;
use crate::world::{ComponentEntry, World};
use glam::{Affine3A, Vec3};
use renderer::MaterialId;

/// A ray-cast hit on a component (UE's FHitResult).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldHit {
    /// The component hit.
    pub component: ComponentId,
    /// The hit point, in world space.
    pub position: Vec3,
    /// The unit surface normal at the hit, facing against the ray.
    pub normal: Vec3,
    /// The distance from the ray origin to `position`.
    pub distance: f32,
    /// The collision triangle hit (UE's FaceIndex), for triangle meshes.
    pub triangle_index: Option<u32>,
    /// That triangle's material index: the element (a procedural mesh's
    /// section) it belongs to.
    pub material_index: Option<u16>,
    /// The material of the face hit (UE's
    /// `GetMaterialFromCollisionFaceIndex`): the world's override for that
    /// element if set, else the component's own material for it; `None`
    /// for convex hits and elements without a material.
    pub material: Option<MaterialId>,
}

/// The colour of the collision view's lines ([`World::set_show_collision`]).
pub const COLLISION_VIEW_COLOR: [u8; 4] = [40, 255, 90, 255];

/// The world's collision state.
#[derive(Debug, Default)]
pub(crate) struct WorldCollision {
    scene: CollisionScene,
    /// Draw every body's shapes as lines each frame (UE's `ShowFlags.Collision`).
    show: bool,
    /// Bodies added, moved or removed since the broad phase was last tidied.
    bodies_moved_since_maintain: usize,
}

impl World {
    /// The nearest collision hit along a ray (UE's LineTraceSingle), against
    /// the shapes `complexity` names (UE's trace-complex flag; see
    /// [`CollisionScene::raycast`]).
    pub fn raycast(&self, origin: Vec3, direction: Vec3, max_distance: f32, complexity: CollisionComplexity) -> Result<Option<WorldHit>> {
        let hit: Option<RayHit> = self.collision.scene.raycast(origin, direction, max_distance, complexity)?;
        Ok(hit.map(|h| {
            let component = ComponentId::from_bits(h.body.0);
            WorldHit {
                component,
                position: h.position,
                normal: h.normal,
                distance: h.distance,
                triangle_index: h.triangle_index,
                material_index: h.material_index,
                material: h.material_index.and_then(|m| self.face_material(component, m)),
            }
        }))
    }

    /// Draws every collision body's cooked shapes — triangle meshes and
    /// convex hulls — as lines in [`COLLISION_VIEW_COLOR`] over the scene,
    /// each frame from the next end of frame on (UE's `ShowFlags.Collision`;
    /// through `RenderThread::draw_debug_lines`).
    pub fn set_show_collision(&mut self, show: bool) {
        self.collision.show = show;
    }

    /// Whether the collision view is on ([`Self::set_show_collision`]).
    pub fn show_collision(&self) -> bool {
        self.collision.show
    }

    /// The collision view's lines: every body's shape edges in world space.
    pub fn collision_lines(&self) -> Vec<renderer::DebugLine> {
        let mut lines = Vec::new();
        for (_, cooked, transform) in self.collision.scene.bodies() {
            lines.extend(cooked.wireframe().into_iter().map(|[a, b]| {
                renderer::DebugLine::new(transform.transform_point3(a), transform.transform_point3(b), COLLISION_VIEW_COLOR)
            }));
        }
        lines
    }

    /// Sends the collision view's lines for the next frame, when it is on.
    pub(crate) fn send_collision_lines(&mut self) -> Result<()> {
        if !self.collision.show {
            return Ok(());
        }
        let lines = self.collision_lines();
        if let Some(rt) = self.render.as_mut() {
            rt.draw_debug_lines(lines)?;
        }
        Ok(())
    }

    /// The material of element `material_index` of `component`: the world's
    /// override, else the component's own.
    fn face_material(&self, component: ComponentId, material_index: u16) -> Option<MaterialId> {
        let e = self.components.get(component)?;
        let overridden = e.settings.materials.get(usize::from(material_index)).copied().filter(|&m| m != MaterialId::DEFAULT);
        overridden.or_else(|| e.behaviour.as_primitive()?.collision_face_material(material_index))
    }

    /// The end-of-frame collision step: the bodies of the marked components
    /// among `ids` follow their dirty flags (which stay set for the render
    /// step). An error stops the step where it is.
    pub(crate) fn update_collision(&mut self, ids: &[ComponentId], stats: &mut EndOfFrameStats) -> Result<()> {
        for id in ids {
            let Some(e) = self.components.get_mut(*id) else { continue };
            let d = e.dirty;
            update_body(&mut self.collision.scene, *id, e, d, stats)?;
        }
        self.maintain_collision(stats.bodies_updated);
        Ok(())
    }

    /// Tidies the broad phase once enough bodies moved since it was last tidied.
    fn maintain_collision(&mut self, bodies_updated: usize) {
        // Tidying the broad phase walks every body: amortize it so that the
        // cost of a frame stays proportional to what moved (traces are
        // correct either way, only slower while boxes are loose).
        let c = &mut self.collision;
        c.bodies_moved_since_maintain += bodies_updated;
        if c.bodies_moved_since_maintain * 10 >= c.scene.len().max(1) {
            c.scene.maintain();
            c.bodies_moved_since_maintain = 0;
        }
    }
}

/// Keeps `e`'s collision body in step with its dirty flags `d`: (re)cooks on registration or a collision change, moves on a transform, removes on unregistration.
fn update_body(
    collision: &mut CollisionScene,
    id: ComponentId,
    e: &mut ComponentEntry,
    d: DirtyFlags,
    stats: &mut EndOfFrameStats,
) -> Result<()> {
    let body = BodyId(id.to_bits());
    if e.behaviour.as_primitive().is_none() || !(d.collision || d.render_state || d.transform) {
        return Ok(());
    }
    let affine = Affine3A::from_mat4(e.node.world);
    if e.registered {
        if d.collision || e.body.is_none() {
            if let Some(cooked) = e.behaviour.as_primitive_mut().and_then(|p| p.collision()) {
                if e.body.is_some() {
                    collision.set_collision(body, cooked)?;
                    collision.set_transform(body, affine)?;
                } else {
                    collision.add_body(body, cooked, affine)?;
                    e.body = Some(body);
                }
                stats.bodies_updated += 1;
            }
        } else if d.transform && e.body.is_some() {
            collision.set_transform(body, affine)?;
            stats.bodies_updated += 1;
        }
    } else if e.body.take().is_some() {
        collision.remove_body(body)?;
        stats.bodies_updated += 1;
    }
    Ok(())
}
