//! Components (UE's UActorComponent / USceneComponent / UPrimitiveComponent).
//!
//! The [`crate::World`] owns every component as a `Box<dyn Component>` plus
//! the data all of them share: the scene node (relative transform,
//! attachment, world transform), registration, the primitive settings and
//! the three dirty flags. A component type implements only its behaviour:
//! ticking and, for primitives, [`PrimitiveComponent::create_scene_proxy`],
//! which copies what rendering needs into a new render-thread proxy.

#[cfg(feature = "collision")]
use crate::collision::CookedCollision;
use glam::{Mat4, Vec4};
use renderer::{Bounds, MaterialId, PrimitiveRenderSettings, PrimitiveSceneProxy};
use std::any::Any;
use std::ops::BitOr;
#[cfg(feature = "collision")]
use std::sync::Arc;

/// UE's three render dirty flags, plus collision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirtyFlags {
    /// What the proxy copied changed: recreate it.
    pub render_state: bool,
    /// Transform or bounds changed: send them only.
    pub transform: bool,
    /// Per-frame data changed: send a snapshot to the existing proxy.
    pub dynamic_data: bool,
    /// The collision geometry changed (a new cook landed). Without the
    /// `collision` feature nothing reads it.
    pub collision: bool,
    /// The primitive's render settings (draw distances, translucency sort
    /// priority) changed: send them to its primitive in the scene, with no
    /// new proxy (a new proxy gets them anyway).
    pub render_settings: bool,
}

impl DirtyFlags {
    pub const NONE: Self = Self { render_state: false, transform: false, dynamic_data: false, collision: false, render_settings: false };
    pub const RENDER_STATE: Self = Self { render_state: true, ..Self::NONE };
    pub const TRANSFORM: Self = Self { transform: true, ..Self::NONE };
    pub const DYNAMIC_DATA: Self = Self { dynamic_data: true, ..Self::NONE };
    pub const COLLISION: Self = Self { collision: true, ..Self::NONE };
    pub const RENDER_SETTINGS: Self = Self { render_settings: true, ..Self::NONE };

    pub fn any(self) -> bool {
        self.render_state || self.transform || self.dynamic_data || self.collision || self.render_settings
    }
}

impl BitOr for DirtyFlags {
    type Output = Self;
    fn bitor(self, o: Self) -> Self {
        Self {
            render_state: self.render_state || o.render_state,
            transform: self.transform || o.transform,
            dynamic_data: self.dynamic_data || o.dynamic_data,
            collision: self.collision || o.collision,
            render_settings: self.render_settings || o.render_settings,
        }
    }
}

/// UE's EComponentMobility, the renderer's (`renderer::Mobility`): every
/// component starts movable; the world refuses moving a registered
/// component that is static or stationary.
pub use renderer::Mobility;

/// Settings every primitive component has (kept by the world).
#[derive(Clone, Debug, PartialEq)]
pub struct PrimitiveSettings {
    pub visible: bool,
    pub hidden_in_game: bool,
    pub cast_shadow: bool,
    pub mobility: Mobility,
    /// Material per slot; a missing slot uses the mesh's / default material.
    pub materials: Vec<MaterialId>,
    pub custom_primitive_data: Vec4,
    /// Draw distances and translucency sort priority: kept by the scene
    /// for the primitive, whatever its proxy ([`World::set_draw_distances`],
    /// [`World::set_translucency_sort_priority`]).
    ///
    /// [`World::set_draw_distances`]: crate::World::set_draw_distances
    /// [`World::set_translucency_sort_priority`]: crate::World::set_translucency_sort_priority
    pub render: PrimitiveRenderSettings,
}

impl Default for PrimitiveSettings {
    fn default() -> Self {
        Self {
            visible: true,
            hidden_in_game: false,
            cast_shadow: true,
            mobility: Mobility::Movable,
            materials: Vec::new(),
            custom_primitive_data: Vec4::ZERO,
            render: PrimitiveRenderSettings::default(),
        }
    }
}

impl PrimitiveSettings {
    pub fn is_drawn(&self) -> bool {
        self.visible && !self.hidden_in_game
    }
}

/// What a primitive gets when asked for a proxy.
pub struct ProxyCreateContext<'a> {
    pub settings: &'a PrimitiveSettings,
    pub local_to_world: Mat4,
}

/// Upcasting to `Any` for every component (blanket-implemented).
pub trait AsAny: Any {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A light a component contributes, in its local frame: at the origin,
/// shining along +X (UE's convention). The world turns it into a
/// render-side light with the component's world transform
/// ([`LightDesc::to_light`]). Units as the renderer's (`renderer::Light`):
/// lux for a directional light, candela for point and spot lights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LightDesc(pub renderer::Light);

impl LightDesc {
    /// The render-side light of a component at `world`.
    pub fn to_light(&self, world: &glam::Mat4) -> renderer::Light {
        self.0.with_transform(world)
    }
}

/// A camera a component contributes (looks along its +X, up +Z, as in UE).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraDesc {
    pub fov_y: f32,
    pub near: f32,
    pub far: f32,
    /// Normalized viewport rectangle in the frame: x, y, width, height in 0..1.
    pub viewport: Vec4,
    /// `Some(width)` for an orthographic camera seeing `width` world units.
    pub ortho_width: Option<f32>,
    pub max_draw_distance: f32,
}

/// Any component. `Send + Sync`: end-of-frame updates read many components
/// from several threads at once (proxies are created in parallel).
pub trait Component: AsAny + Send + Sync {
    /// Per-frame update; returns what the component changed about itself.
    fn tick(&mut self, _dt: f32) -> DirtyFlags {
        DirtyFlags::NONE
    }

    /// Whether [`Component::tick`] should be called.
    fn wants_tick(&self) -> bool {
        false
    }

    fn as_primitive(&self) -> Option<&dyn PrimitiveComponent> {
        None
    }

    fn as_primitive_mut(&mut self) -> Option<&mut dyn PrimitiveComponent> {
        None
    }

    fn light(&self) -> Option<LightDesc> {
        None
    }

    fn camera(&self) -> Option<CameraDesc> {
        None
    }

    /// Type name for error messages.
    fn type_name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}

/// A component that renders (and may collide).
pub trait PrimitiveComponent {
    /// Copies what rendering needs into a new proxy (game thread). `None`:
    /// nothing to draw now (e.g. an empty procedural mesh).
    fn create_scene_proxy(&self, ctx: &ProxyCreateContext<'_>) -> Option<Box<dyn PrimitiveSceneProxy>>;

    /// Bounds in local space (UE's CalcBounds with an identity transform).
    fn local_bounds(&self) -> Bounds;

    /// Changes the component made to itself since the last call (a mesh
    /// edit marks render state, a section update dynamic data…).
    fn take_dirty(&mut self) -> DirtyFlags {
        DirtyFlags::NONE
    }

    /// The snapshot sent to the proxy when dynamic data is dirty (UE's
    /// SendRenderDynamicData_Concurrent).
    fn dynamic_data(&mut self) -> Option<Box<dyn Any + Send>> {
        None
    }

    /// Cooked collision, if the component collides (cook or return a cache).
    #[cfg(feature = "collision")]
    fn collision(&mut self) -> Option<Arc<CookedCollision>> {
        None
    }

    /// The component's own material for the element a collision face
    /// belongs to (the `material_index` its cooked triangles carry: a
    /// procedural mesh's section), for ray-cast hits (UE's
    /// `GetMaterialFromCollisionFaceIndex`). The world's per-slot override
    /// (`World::set_material`) wins over it. Default: none.
    #[cfg(feature = "collision")]
    fn collision_face_material(&self, _material_index: u16) -> Option<MaterialId> {
        None
    }
}

/// A plain scene component: a transform node to attach others to.
#[derive(Debug, Default, Clone, Copy)]
pub struct SceneComponent;

impl Component for SceneComponent {}
