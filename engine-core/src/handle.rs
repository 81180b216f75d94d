//! Ids of actors and components: generational keys of the workspace's one
//! slot storage ([`rhi_vulkan::Slots`]). A stale id (a destroyed actor or
//! component) finds nothing, and is an error, never another object.

rhi_vulkan::slot_key!(
    /// Names an actor of a [`crate::World`].
    pub struct ActorId
);
rhi_vulkan::slot_key!(
    /// Names a component of a [`crate::World`].
    pub struct ComponentId
);

impl ComponentId {
    /// An id no component has: what errors name for a component that was
    /// refused before it got an id.
    pub(crate) const NONE: ComponentId = ComponentId { index: u32::MAX, generation: 0 };
}
