//! engine-core's error type.

use crate::handle::{ActorId, ComponentId};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Renderer(#[from] renderer::RendererError),
    #[cfg(feature = "collision")]
    #[error(transparent)]
    Collision(#[from] crate::collision::CollisionError),
    /// An animation clip, pose or skeleton that does not hold together
    /// (`crate::animation`); nothing changed.
    #[error(transparent)]
    Animation(#[from] crate::animation::AnimationError),
    #[error("unknown actor {0:?}")]
    UnknownActor(ActorId),
    #[error("unknown component {0:?}")]
    UnknownComponent(ComponentId),
    #[error("component {0:?} is not a {1}")]
    WrongComponentType(ComponentId, &'static str),
    /// A NaN/infinite transform or a zero scale; the component keeps its last valid transform.
    #[error("invalid transform for {component:?}: {reason}")]
    InvalidTransform { component: ComponentId, reason: String },
    /// Moving a registered light component whose mobility is static or
    /// stationary (directly, or with what it is attached to); nothing moves.
    #[error("{component:?} is a {mobility:?} light: only a movable light can move (set its mobility first)")]
    NotMovable { component: ComponentId, mobility: crate::Mobility },
    #[error("attaching {child:?} to {parent:?} would make a cycle or cross actors")]
    InvalidAttachment { child: ComponentId, parent: ComponentId },
    /// A material slot past [`crate::MAX_MATERIAL_SLOT`].
    #[error("material slot {slot} of {component:?} is past the largest allowed ({max})")]
    InvalidMaterialSlot { component: ComponentId, slot: usize, max: usize },
    /// Draw distances that are not finite and >= 0, or a minimum not below
    /// the maximum; the settings are unchanged.
    #[error("invalid render settings for {component:?}: {reason}")]
    InvalidRenderSettings { component: ComponentId, reason: String },
    #[error("invalid mesh: {0}")]
    InvalidMesh(String),
    /// A frame size with a zero side (a minimized window); the size is unchanged.
    #[error("invalid frame size {width}x{height}: both sides must be at least 1")]
    InvalidSize { width: u32, height: u32 },
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;
