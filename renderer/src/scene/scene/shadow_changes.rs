//! What invalidates cached shadows (`crate::shadow_atlas`): the scene
//! notes the bounding spheres of the shadow casters that changed in a
//! batch of updates — added, removed, moved, re-cached, or the parts a
//! proxy reports ([`GeometryChange`]) — and counts the casters drawn
//! dynamically as changed every frame unless their proxy reports its
//! changes. And the casters' bounds the cascades are fitted to.

use super::{flags, Scene};
use crate::math::Bounds;
use crate::scene::proxy::GeometryChange;
use glam::Vec4;

impl Scene {
    /// Notes `slot`'s sphere in [`Self::shadow_changes`] if it casts shadows.
    pub(super) fn note_shadow_change(&mut self, slot: u32) {
        let both = flags::VALID | flags::SHADOW;
        if self.flags[slot as usize] & both == both {
            self.changed_casters.push(self.spheres[slot as usize]);
        }
    }

    /// Notes the world spheres of the reported changes of `slot` that a
    /// shadow pass draws (the primitive casts shadows; the part does, with
    /// a material that is not translucent) in [`Self::shadow_changes`].
    pub(super) fn note_geometry_changes(&mut self, slot: u32, changes: &[GeometryChange]) {
        let both = flags::VALID | flags::SHADOW;
        if self.flags[slot as usize] & both != both {
            return;
        }
        let m = self.transforms[slot as usize];
        for c in changes {
            if c.cast_shadow && !self.materials.resolve(c.material).blend_mode.is_translucent() {
                let world = c.local_bounds.transformed(&m);
                self.changed_casters.push(world.origin.extend(world.radius));
            }
        }
    }

    /// The bounding spheres of the shadow casters that draw dynamically
    /// (their shadows may change every frame, unless the proxy reports its
    /// changes) and of those that changed in the last batch of updates:
    /// what invalidates cached shadows.
    pub(crate) fn shadow_changes(&self) -> Vec<Vec4> {
        let both = flags::VALID | flags::SHADOW | flags::DYNAMIC;
        let mut changes = self.changed_casters.clone();
        if self.dynamic_primitives > 0 {
            let every_frame = |f: u32| f & both == both && f & flags::REPORTS_CHANGES == 0;
            changes.extend(self.flags.iter().zip(&self.spheres).filter(|(f, _)| every_frame(**f)).map(|(_, s)| *s));
        }
        changes
    }

    /// World box of every shadow-casting primitive (for the cascades' fit).
    pub(crate) fn shadow_caster_bounds(&self) -> Option<Bounds> {
        let mut min = glam::Vec3::splat(f32::MAX);
        let mut max = glam::Vec3::splat(f32::MIN);
        let mut any = false;
        for (i, s) in self.spheres.iter().enumerate() {
            if self.flags[i] & (flags::VALID | flags::SHADOW) != (flags::VALID | flags::SHADOW) {
                continue;
            }
            any = true;
            min = min.min(s.truncate() - self.extents[i]);
            max = max.max(s.truncate() + self.extents[i]);
        }
        any.then(|| Bounds::from_box(min, max))
    }
}
