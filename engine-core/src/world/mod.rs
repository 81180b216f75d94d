//! `World` (UE's UWorld): actors and their components, the scene graph,
//! registration, the dirty flags and the link to the render thread.
//!
//! Components are addressed by generational [`ComponentId`]s; the world
//! never hands out references that outlive a call. Changing something a
//! proxy copied marks the component dirty; nothing reaches the render thread
//! until [`World::send_all_end_of_frame_updates`], which visits only the
//! marked components.

#[cfg(feature = "collision")]
pub(crate) mod collision;
pub(crate) mod end_of_frame;

#[cfg(feature = "collision")]
use crate::collision::BodyId;
use crate::component::*;
use crate::error::{EngineError, Result};
use crate::handle::{ActorId, ComponentId};
use crate::transform::Transform;
use glam::{Mat4, Vec3};
use renderer::{LightId, PrimitiveId, RenderThread, SceneView};
use rhi_vulkan::Slots;

/// The highest material slot [`World::set_material`] takes: slots are a
/// dense table, so a stray index must not allocate a huge one (and it
/// matches procmesh's largest section index).
pub const MAX_MATERIAL_SLOT: usize = u16::MAX as usize;

/// Why `world` cannot be `behaviour`'s world transform, if it cannot: one
/// the renderer would reject (non-finite, flat, overflowing) or, for a
/// primitive, one that makes its bounds invalid.
pub(crate) fn world_invalid_reason(behaviour: &dyn Component, world: &Mat4) -> Option<String> {
    // The renderer's one rule: it would refuse anything else, and
    // `set_world_location` and the collision scene invert world transforms.
    if let Err(problem) = renderer::check_transform(world) {
        return Some(format!("{problem} (world)"));
    }
    if let Some(p) = behaviour.as_primitive() {
        let local = p.local_bounds();
        if !local.is_valid() || !local.transformed(world).is_valid() {
            return Some("invalid bounds".into());
        }
    }
    None
}

pub(crate) struct SceneNode {
    pub relative: Transform,
    pub world: Mat4,
    pub parent: Option<ComponentId>,
    pub children: Vec<ComponentId>,
}

pub(crate) struct ComponentEntry {
    pub actor: ActorId,
    pub node: SceneNode,
    pub registered: bool,
    pub active: bool,
    pub settings: PrimitiveSettings,
    pub dirty: DirtyFlags,
    pub queued: bool,
    pub primitive: Option<PrimitiveId>,
    pub light: Option<LightId>,
    #[cfg(feature = "collision")]
    pub body: Option<BodyId>,
    /// Whether the component is in [`World::ticking`].
    pub in_tick_list: bool,
    pub behaviour: Box<dyn Component>,
}

pub(crate) struct Actor {
    pub name: String,
    pub root: ComponentId,
    pub components: Vec<ComponentId>,
}

pub struct World {
    pub(crate) actors: Slots<ActorId, Actor>,
    pub(crate) components: Slots<ComponentId, ComponentEntry>,
    pub(crate) dirty: Vec<ComponentId>,
    /// Components that wanted a tick when registered or last changed through
    /// [`World::with_component_mut`] (UE's registered tick functions): the
    /// frame visits these, not every component — a level of a million static
    /// meshes ticks nothing. Entries that stop wanting a tick, or are gone,
    /// leave the list when the tick meets them.
    pub(crate) ticking: Vec<ComponentId>,
    /// Camera components (a component's type decides it, so never stale but
    /// for destroyed ones, which [`World::collect_views`] skips).
    pub(crate) cameras: Vec<ComponentId>,
    /// Components teleported this frame ([`World::teleport`]): their
    /// primitives' motion vectors start from where they landed.
    pub(crate) teleported: std::collections::BTreeSet<ComponentId>,
    /// Cameras cut this frame ([`World::cut_camera`]).
    pub(crate) camera_cuts: Vec<ComponentId>,
    /// Every view shows its primitives' bounds ([`World::set_show_bounds`]).
    show_bounds: bool,
    pub(crate) render: Option<RenderThread>,
    #[cfg(feature = "collision")]
    pub(crate) collision: collision::WorldCollision,
    /// Figures of the last end-of-frame update.
    pub last_update: end_of_frame::EndOfFrameStats,
}

/// Ticking components from which the frame's ticks run in parallel.
const PARALLEL_TICK_THRESHOLD: usize = 64;

impl World {
    /// A world; with a render thread, registered primitives get proxies.
    pub fn new(render: Option<RenderThread>) -> Self {
        Self {
            actors: Slots::default(),
            components: Slots::default(),
            dirty: Vec::new(),
            ticking: Vec::new(),
            cameras: Vec::new(),
            teleported: std::collections::BTreeSet::new(),
            camera_cuts: Vec::new(),
            show_bounds: false,
            render,
            #[cfg(feature = "collision")]
            collision: Default::default(),
            last_update: Default::default(),
        }
    }

    pub fn render_thread(&mut self) -> Option<&mut RenderThread> {
        self.render.as_mut()
    }

    pub fn num_actors(&self) -> usize {
        self.actors.len()
    }

    pub fn num_components(&self) -> usize {
        self.components.len()
    }

    fn entry(&self, id: ComponentId) -> Result<&ComponentEntry> {
        self.components.get(id).ok_or(EngineError::UnknownComponent(id))
    }

    fn entry_mut(&mut self, id: ComponentId) -> Result<&mut ComponentEntry> {
        self.components.get_mut(id).ok_or(EngineError::UnknownComponent(id))
    }

    // ----- actors and components -----

    /// Spawns an actor with `root` as its root component at `transform`
    /// (registered at once).
    pub fn spawn_actor(&mut self, name: &str, root: Box<dyn Component>, transform: Transform) -> Result<(ActorId, ComponentId)> {
        if let Some(reason) = transform.invalid_reason().or_else(|| world_invalid_reason(&*root, &transform.to_mat4())) {
            return Err(EngineError::InvalidTransform { component: ComponentId::NONE, reason });
        }
        let actor = self.actors.insert(Actor { name: name.into(), root: ComponentId::NONE, components: Vec::new() });
        let id = self.insert_component(actor, root, None, transform);
        let a = self.actors.get_mut(actor).expect("just inserted");
        a.root = id;
        a.components.push(id);
        self.register_component(id)?;
        Ok((actor, id))
    }

    /// Adds a component to an actor, attached to `parent` (default: the
    /// actor's root) at `relative`, and registers it.
    pub fn add_component(
        &mut self,
        actor: ActorId,
        component: Box<dyn Component>,
        parent: Option<ComponentId>,
        relative: Transform,
    ) -> Result<ComponentId> {
        let root = self.actors.get(actor).ok_or(EngineError::UnknownActor(actor))?.root;
        let parent = parent.unwrap_or(root);
        if self.entry(parent)?.actor != actor {
            return Err(EngineError::InvalidAttachment { child: ComponentId::NONE, parent });
        }
        let parent_world = self.entry(parent)?.node.world;
        if let Some(reason) = relative.invalid_reason().or_else(|| world_invalid_reason(&*component, &(parent_world * relative.to_mat4())))
        {
            return Err(EngineError::InvalidTransform { component: parent, reason });
        }
        let id = self.insert_component(actor, component, Some(parent), relative);
        self.entry_mut(parent)?.node.children.push(id);
        self.actors.get_mut(actor).expect("checked").components.push(id);
        self.update_world_transforms(id);
        self.register_component(id)?;
        Ok(id)
    }

    /// Spawns many actors with one primitive root each, registered in one
    /// batch: their proxies are created in parallel at the end of the frame
    /// (loading a level).
    pub fn spawn_actors(&mut self, items: Vec<(Box<dyn Component>, Transform)>) -> Result<Vec<ComponentId>> {
        // Check every item first: a bad one must not leave the others spawned.
        if let Some(reason) = items.iter().find_map(|(c, t)| t.invalid_reason().or_else(|| world_invalid_reason(&**c, &t.to_mat4()))) {
            return Err(EngineError::InvalidTransform { component: ComponentId::NONE, reason });
        }
        let mut ids = Vec::with_capacity(items.len());
        for (c, t) in items {
            let (_, id) = self.spawn_actor("actor", c, t)?;
            ids.push(id);
        }
        Ok(ids)
    }

    fn insert_component(
        &mut self,
        actor: ActorId,
        behaviour: Box<dyn Component>,
        parent: Option<ComponentId>,
        relative: Transform,
    ) -> ComponentId {
        let parent_world = parent.and_then(|p| self.components.get(p)).map(|e| e.node.world).unwrap_or(Mat4::IDENTITY);
        let camera = behaviour.camera().is_some();
        // Every component starts movable (UE's USceneComponent default):
        // static or stationary is asked for (`set_mobility`) and then kept.
        let mobility = Mobility::Movable;
        let id = self.components.insert(ComponentEntry {
            actor,
            node: SceneNode { relative, world: parent_world * relative.to_mat4(), parent, children: Vec::new() },
            registered: false,
            active: true,
            settings: PrimitiveSettings { mobility, ..Default::default() },
            dirty: DirtyFlags::NONE,
            queued: false,
            primitive: None,
            light: None,
            #[cfg(feature = "collision")]
            body: None,
            in_tick_list: false,
            behaviour,
        });
        if camera {
            self.cameras.push(id);
        }
        id
    }

    /// Puts `id` in the tick list if it wants a tick and is not there yet.
    fn note_tick_wish(&mut self, id: ComponentId) {
        if let Some(e) = self.components.get_mut(id) {
            if !e.in_tick_list && e.behaviour.wants_tick() {
                e.in_tick_list = true;
                self.ticking.push(id);
            }
        }
    }

    /// Destroys an actor: unregisters and removes its components.
    pub fn destroy_actor(&mut self, actor: ActorId) -> Result<()> {
        let a = self.actors.remove(actor).ok_or(EngineError::UnknownActor(actor))?;
        let had_camera = a.components.iter().any(|&c| self.components.get(c).is_some_and(|e| e.behaviour.camera().is_some()));
        for id in &a.components {
            self.unregister_component(*id)?;
        }
        // Their render and collision state must go now: the entries are removed.
        self.flush_unregistered(&a.components)?;
        for id in &a.components {
            self.components.remove(*id);
        }
        // The camera list is walked only when a camera went (destroying
        // many actors one by one stays linear in what they hold).
        let mut gone = Vec::new();
        if had_camera {
            let components = &self.components;
            let kept;
            (kept, gone) = self.cameras.iter().partition(|&&c| components.get(c).is_some());
            self.cameras = kept;
        }
        // What the renderer kept for a camera's view (auto exposure's
        // adaptation) goes with it.
        if let Some(rt) = self.render.as_mut() {
            for c in gone {
                rt.release_view_state(view_state_id(c))?;
            }
        }
        Ok(())
    }

    /// Registers a component: at the end of the frame a primitive gets its
    /// proxy (render state dirty), a light its light.
    pub fn register_component(&mut self, id: ComponentId) -> Result<()> {
        let e = self.entry_mut(id)?;
        if e.registered {
            return Ok(());
        }
        e.registered = true;
        self.mark_dirty(id, DirtyFlags::RENDER_STATE | DirtyFlags::COLLISION);
        self.note_tick_wish(id);
        Ok(())
    }

    /// Unregisters: the proxy, light and collision body are removed at the
    /// end of the frame.
    pub fn unregister_component(&mut self, id: ComponentId) -> Result<()> {
        let e = self.entry_mut(id)?;
        if !e.registered {
            return Ok(());
        }
        e.registered = false;
        self.mark_dirty(id, DirtyFlags::RENDER_STATE | DirtyFlags::COLLISION);
        Ok(())
    }

    pub fn is_registered(&self, id: ComponentId) -> Result<bool> {
        Ok(self.entry(id)?.registered)
    }

    /// Activation (UE's Activate / Deactivate): inactive components don't tick.
    pub fn set_active(&mut self, id: ComponentId, active: bool) -> Result<()> {
        self.entry_mut(id)?.active = active;
        Ok(())
    }

    /// The component as its concrete type.
    pub fn component<T: Component>(&self, id: ComponentId) -> Result<&T> {
        let e = self.entry(id)?;
        (*e.behaviour).as_any().downcast_ref::<T>().ok_or(EngineError::WrongComponentType(id, std::any::type_name::<T>()))
    }

    /// Runs `f` on the component, then records what it changed about itself
    /// ([`PrimitiveComponent::take_dirty`]).
    pub fn with_component_mut<T: Component, R>(&mut self, id: ComponentId, f: impl FnOnce(&mut T) -> R) -> Result<R> {
        let e = self.entry_mut(id)?;
        let light_before = e.behaviour.light();
        let c = (*e.behaviour).as_any_mut().downcast_mut::<T>().ok_or(EngineError::WrongComponentType(id, std::any::type_name::<T>()))?;
        let r = f(c);
        let mut dirty = e.behaviour.as_primitive_mut().map(|p| p.take_dirty()).unwrap_or_default();
        // A light has no dirty flags of its own: an edited light is resent.
        if e.behaviour.light() != light_before {
            dirty = dirty | DirtyFlags::RENDER_STATE;
        }
        if dirty.any() {
            self.mark_dirty(id, dirty);
        }
        self.note_tick_wish(id);
        Ok(r)
    }

    pub fn actor_of(&self, id: ComponentId) -> Result<ActorId> {
        Ok(self.entry(id)?.actor)
    }

    pub fn actor_name(&self, actor: ActorId) -> Result<&str> {
        Ok(&self.actors.get(actor).ok_or(EngineError::UnknownActor(actor))?.name)
    }

    pub fn root_component(&self, actor: ActorId) -> Result<ComponentId> {
        Ok(self.actors.get(actor).ok_or(EngineError::UnknownActor(actor))?.root)
    }

    /// The render-side primitive of a registered primitive component.
    pub fn primitive_id(&self, id: ComponentId) -> Result<Option<PrimitiveId>> {
        Ok(self.entry(id)?.primitive)
    }

    // ----- dirty flags -----

    pub(crate) fn mark_dirty(&mut self, id: ComponentId, flags: DirtyFlags) {
        if let Some(e) = self.components.get_mut(id) {
            e.dirty = e.dirty | flags;
            if !e.queued {
                e.queued = true;
                self.dirty.push(id);
            }
        }
    }

    /// UE's MarkRenderStateDirty: the proxy is recreated at the end of the frame.
    pub fn mark_render_state_dirty(&mut self, id: ComponentId) -> Result<()> {
        self.entry(id)?;
        self.mark_dirty(id, DirtyFlags::RENDER_STATE);
        Ok(())
    }

    /// UE's MarkRenderTransformDirty: only transform and bounds are sent.
    pub fn mark_render_transform_dirty(&mut self, id: ComponentId) -> Result<()> {
        self.entry(id)?;
        self.mark_dirty(id, DirtyFlags::TRANSFORM);
        Ok(())
    }

    /// UE's MarkRenderDynamicDataDirty: a snapshot goes to the existing proxy.
    pub fn mark_render_dynamic_data_dirty(&mut self, id: ComponentId) -> Result<()> {
        self.entry(id)?;
        self.mark_dirty(id, DirtyFlags::DYNAMIC_DATA);
        Ok(())
    }

    /// Components waiting for end-of-frame updates.
    pub fn dirty_count(&self) -> usize {
        self.dirty.len()
    }

    // ----- transforms and attachment -----

    pub fn relative_transform(&self, id: ComponentId) -> Result<Transform> {
        Ok(self.entry(id)?.node.relative)
    }

    pub fn world_transform(&self, id: ComponentId) -> Result<Mat4> {
        Ok(self.entry(id)?.node.world)
    }

    /// Sets the transform relative to the parent. A non-finite transform, a
    /// zero scale, or one that makes a primitive's bounds invalid (here or in
    /// an attached child) is rejected and nothing changes.
    pub fn set_relative_transform(&mut self, id: ComponentId, t: Transform) -> Result<()> {
        if let Some(reason) = t.invalid_reason() {
            return Err(EngineError::InvalidTransform { component: id, reason });
        }
        let e = self.entry(id)?;
        let parent_world = e.node.parent.and_then(|p| self.components.get(p)).map(|p| p.node.world).unwrap_or(Mat4::IDENTITY);
        self.check_subtree(id, parent_world * t.to_mat4())?;
        self.entry_mut(id)?.node.relative = t;
        self.update_world_transforms(id);
        Ok(())
    }

    /// Checks that `id` at world transform `world`, and its subtree moved
    /// along, would all have usable world transforms; changes nothing.
    fn check_subtree(&self, id: ComponentId, world: Mat4) -> Result<()> {
        let mut stack = vec![(id, world)];
        while let Some((c, world)) = stack.pop() {
            let entry = self.entry(c)?;
            if let Some(reason) = world_invalid_reason(&*entry.behaviour, &world) {
                return Err(EngineError::InvalidTransform { component: c, reason });
            }
            let mobility = entry.settings.mobility;
            if entry.registered && mobility != Mobility::Movable && world != entry.node.world {
                return Err(EngineError::NotMovable { component: c, mobility });
            }
            for child in &entry.node.children {
                let rel = self.entry(*child)?.node.relative.to_mat4();
                stack.push((*child, world * rel));
            }
        }
        Ok(())
    }

    /// Sets the transform relative to the parent as a teleport (UE's
    /// `ETeleportType::TeleportPhysics`): as [`Self::set_relative_transform`],
    /// and the component and everything attached to it have no motion from
    /// where they were — their motion vectors this frame are 0, so TAA and
    /// motion blur draw no smear across the jump.
    pub fn teleport(&mut self, id: ComponentId, t: Transform) -> Result<()> {
        self.set_relative_transform(id, t)?;
        let mut stack = vec![id];
        while let Some(c) = stack.pop() {
            let Some(e) = self.components.get(c) else { continue };
            stack.extend(e.node.children.iter().copied());
            self.teleported.insert(c);
        }
        Ok(())
    }

    /// Marks the camera component `id`'s next view as a camera cut
    /// (`renderer::SceneView::camera_cut`): its temporal history (TAA)
    /// starts again. An unknown id is `EngineError::UnknownComponent`, one
    /// that is not a camera `EngineError::WrongComponentType`; nothing is marked.
    pub fn cut_camera(&mut self, id: ComponentId) -> Result<()> {
        if self.entry(id)?.behaviour.camera().is_none() {
            return Err(EngineError::WrongComponentType(id, "camera"));
        }
        if !self.camera_cuts.contains(&id) {
            self.camera_cuts.push(id);
        }
        Ok(())
    }

    /// Every camera's view draws each primitive visible in it with its
    /// bounds, box and sphere (UE's `ShowFlags.Bounds`;
    /// `renderer::SceneView::show_bounds`).
    pub fn set_show_bounds(&mut self, show: bool) {
        self.show_bounds = show;
    }

    /// Whether the views show bounds ([`Self::set_show_bounds`]).
    pub fn show_bounds(&self) -> bool {
        self.show_bounds
    }

    /// Takes the cameras cut since the last call (the engine, once their
    /// views are collected).
    pub(crate) fn take_camera_cuts(&mut self) {
        self.camera_cuts.clear();
    }

    /// Moves a component to a world location (keeping rotation and scale).
    pub fn set_world_location(&mut self, id: ComponentId, location: Vec3) -> Result<()> {
        let e = self.entry(id)?;
        let parent_world = e.node.parent.and_then(|p| self.components.get(p)).map(|p| p.node.world).unwrap_or(Mat4::IDENTITY);
        let mut t = e.node.relative;
        t.translation = parent_world.inverse().transform_point3(location);
        self.set_relative_transform(id, t)
    }

    /// Recomputes world transforms of `id` and its subtree; marks them transform-dirty.
    fn update_world_transforms(&mut self, id: ComponentId) {
        let mut stack = vec![id];
        while let Some(c) = stack.pop() {
            let Some(e) = self.components.get(c) else { continue };
            let parent_world = e.node.parent.and_then(|p| self.components.get(p)).map(|p| p.node.world).unwrap_or(Mat4::IDENTITY);
            let world = parent_world * e.node.relative.to_mat4();
            let children = e.node.children.clone();
            let e = self.components.get_mut(c).expect("exists");
            e.node.world = world;
            self.mark_dirty(c, DirtyFlags::TRANSFORM);
            stack.extend(children);
        }
    }

    /// Attaches `child` to `parent` (same actor), keeping its relative
    /// transform; rejected (nothing changes) if a world transform in the
    /// moved subtree would be unusable.
    pub fn attach(&mut self, child: ComponentId, parent: ComponentId) -> Result<()> {
        let (c, p) = (self.entry(child)?, self.entry(parent)?);
        if c.actor != p.actor || child == parent {
            return Err(EngineError::InvalidAttachment { child, parent });
        }
        // No cycles: `parent` must not be under `child`.
        let mut up = Some(parent);
        while let Some(u) = up {
            if u == child {
                return Err(EngineError::InvalidAttachment { child, parent });
            }
            up = self.entry(u)?.node.parent;
        }
        // The subtree moves with `child`: every world transform it gets must be usable.
        let parent_world = self.entry(parent)?.node.world;
        self.check_subtree(child, parent_world * self.entry(child)?.node.relative.to_mat4())?;
        if let Some(old) = self.entry(child)?.node.parent {
            self.entry_mut(old)?.node.children.retain(|x| *x != child);
        }
        self.entry_mut(child)?.node.parent = Some(parent);
        self.entry_mut(parent)?.node.children.push(child);
        self.update_world_transforms(child);
        Ok(())
    }

    // ----- primitive settings -----

    fn set_setting(&mut self, id: ComponentId, f: impl FnOnce(&mut PrimitiveSettings) -> bool) -> Result<()> {
        let changed = f(&mut self.entry_mut(id)?.settings);
        if changed {
            self.mark_dirty(id, DirtyFlags::RENDER_STATE);
        }
        Ok(())
    }

    pub fn settings(&self, id: ComponentId) -> Result<&PrimitiveSettings> {
        Ok(&self.entry(id)?.settings)
    }

    pub fn set_visibility(&mut self, id: ComponentId, visible: bool) -> Result<()> {
        self.set_setting(id, |s| std::mem::replace(&mut s.visible, visible) != visible)
    }

    pub fn set_hidden_in_game(&mut self, id: ComponentId, hidden: bool) -> Result<()> {
        self.set_setting(id, |s| std::mem::replace(&mut s.hidden_in_game, hidden) != hidden)
    }

    pub fn set_cast_shadow(&mut self, id: ComponentId, cast: bool) -> Result<()> {
        self.set_setting(id, |s| std::mem::replace(&mut s.cast_shadow, cast) != cast)
    }

    /// Sets the component's mobility (UE's SetMobility; every component
    /// starts movable). A registered component that is not movable refuses
    /// to move, and so does one whose move would carry it along (an
    /// attached parent's) — [`EngineError::NotMovable`], nothing changes —
    /// while an unregistered one may be placed. A light also sends its
    /// mobility to its render-side light at the end of the frame.
    pub fn set_mobility(&mut self, id: ComponentId, mobility: Mobility) -> Result<()> {
        let e = self.entry_mut(id)?;
        let (old, light) = (std::mem::replace(&mut e.settings.mobility, mobility), e.behaviour.light().is_some());
        if light && old != mobility {
            self.mark_dirty(id, DirtyFlags::RENDER_STATE);
        }
        Ok(())
    }

    /// Sets the material of a slot (render state: the proxy is recreated);
    /// slots above [`MAX_MATERIAL_SLOT`] are rejected.
    pub fn set_material(&mut self, id: ComponentId, slot: usize, material: renderer::MaterialId) -> Result<()> {
        self.entry(id)?;
        if slot > MAX_MATERIAL_SLOT {
            return Err(EngineError::InvalidMaterialSlot { component: id, slot, max: MAX_MATERIAL_SLOT });
        }
        self.set_setting(id, |s| {
            if s.materials.len() <= slot {
                s.materials.resize(slot + 1, renderer::MaterialId::DEFAULT);
            }
            std::mem::replace(&mut s.materials[slot], material) != material
        })
    }

    /// Sets the distances between which the primitive is drawn in a view
    /// (UE's MinDrawDistance and MaxDrawDistance, 0: no limit): both finite
    /// and not negative, the minimum below a maximum that is set, or
    /// [`EngineError::InvalidRenderSettings`] and nothing changes. Sent to
    /// the scene at the end of the frame without recreating the proxy.
    pub fn set_draw_distances(&mut self, id: ComponentId, min: f32, max: f32) -> Result<()> {
        let render = renderer::PrimitiveRenderSettings { min_draw_distance: min, max_draw_distance: max, ..self.settings(id)?.render };
        self.set_render_settings(id, render)
    }

    /// Sets the primitive's translucency sort priority (UE's
    /// TranslucencySortPriority): translucent primitives draw by priority
    /// ascending, then back to front. Sent like [`Self::set_draw_distances`].
    pub fn set_translucency_sort_priority(&mut self, id: ComponentId, priority: i16) -> Result<()> {
        let render = renderer::PrimitiveRenderSettings { translucency_sort_priority: priority, ..self.settings(id)?.render };
        self.set_render_settings(id, render)
    }

    fn set_render_settings(&mut self, id: ComponentId, render: renderer::PrimitiveRenderSettings) -> Result<()> {
        if let Some(reason) = render.invalid_reason() {
            return Err(EngineError::InvalidRenderSettings { component: id, reason });
        }
        let e = self.entry_mut(id)?;
        if std::mem::replace(&mut e.settings.render, render) != render {
            self.mark_dirty(id, DirtyFlags::RENDER_SETTINGS);
        }
        Ok(())
    }

    pub fn set_custom_primitive_data(&mut self, id: ComponentId, data: glam::Vec4) -> Result<()> {
        if !data.is_finite() {
            return Err(EngineError::InvalidTransform { component: id, reason: "non-finite custom primitive data".into() });
        }
        self.set_setting(id, |s| std::mem::replace(&mut s.custom_primitive_data, data) != data)
    }

    // ----- ticking, views -----

    /// Ticks every registered, active component that wants it.
    pub fn tick(&mut self, dt: f32) {
        let components = &mut self.components;
        // The ids that still want a tick, in the order they came to want it.
        self.ticking.retain(|&id| {
            let Some(e) = components.get_mut(id) else { return false };
            if !e.behaviour.wants_tick() {
                e.in_tick_list = false;
                return false;
            }
            true
        });
        // Each component ticks on its own data only (`tick` takes `&mut
        // self` of a `Send + Sync` component), so a large tick list runs on
        // rayon's workers (skeletal meshes evaluating their poses); what
        // each changed is kept in tick order, as one thread would mark it.
        let mut entries = components.get_disjoint_mut(&self.ticking);
        let tick_one = |e: &mut Option<&mut ComponentEntry>| {
            let Some(e) = e.as_deref_mut().filter(|e| e.registered && e.active) else { return DirtyFlags::NONE };
            let mut d = e.behaviour.tick(dt);
            if let Some(p) = e.behaviour.as_primitive_mut() {
                d = d | p.take_dirty();
            }
            d
        };
        let marks: Vec<DirtyFlags> = if entries.len() >= PARALLEL_TICK_THRESHOLD {
            use rayon::prelude::*;
            entries.par_iter_mut().with_min_len(16).map(tick_one).collect()
        } else {
            entries.iter_mut().map(tick_one).collect()
        };
        drop(entries);
        let ticked: Vec<(ComponentId, DirtyFlags)> = self.ticking.iter().copied().zip(marks).filter(|(_, d)| d.any()).collect();
        for (id, d) in ticked {
            self.mark_dirty(id, d);
        }
    }

    /// The views of every registered camera component for a `width` x `height` frame.
    pub fn collect_views(&self, width: u32, height: u32) -> Vec<SceneView> {
        let mut views = Vec::new();
        for (id, e) in self.cameras.iter().filter_map(|&id| Some((id, self.components.get(id)?))) {
            let Some(cam) = e.behaviour.camera() else { continue };
            if !e.registered || !e.active {
                continue;
            }
            let w = e.node.world;
            let eye = w.w_axis.truncate();
            let forward = w.x_axis.truncate().normalize_or_zero();
            let up = w.z_axis.truncate().normalize_or_zero();
            let vp = cam.viewport;
            if !vp.is_finite() {
                continue;
            }
            // The renderer rejects a view outside the frame: cut the
            // camera's viewport to the frame; nothing inside, no view.
            let span = |start: f32, size: f32, frame: u32| {
                let a = (start * frame as f32) as i64;
                let (lo, hi) = (a.max(0), a.saturating_add(((size * frame as f32) as u32).max(1).into()).min(frame.into()));
                Some((i32::try_from(lo).ok()?, u32::try_from(hi - lo).ok().filter(|n| *n > 0)?))
            };
            let (Some((x, w)), Some((y, h))) = (span(vp.x, vp.z, width), span(vp.y, vp.w, height)) else { continue };
            let rect = rhi_vulkan::Rect::new(x, y, w, h);
            let view = match cam.ortho_width {
                Some(ow) => SceneView::orthographic(
                    eye,
                    eye + forward,
                    up,
                    ow,
                    ow * rect.height as f32 / rect.width as f32,
                    cam.near,
                    cam.far,
                    rect,
                ),
                None => SceneView::perspective(eye, eye + forward, up, cam.fov_y, cam.near, cam.far, rect),
            };
            // A camera whose description the renderer would refuse (a
            // negative or NaN draw distance, matrices that overflow) gives
            // no view, as a viewport outside the frame does.
            if let Ok(mut v) = view {
                v.max_draw_distance = cam.max_draw_distance;
                v.state = Some(view_state_id(id));
                v.camera_cut = self.camera_cuts.contains(&id);
                v.show_bounds = self.show_bounds;
                if v.validate_in(width, height).is_ok() {
                    views.push(v);
                }
            }
        }
        views
    }
}

/// A camera's view's identity across frames (`renderer::ViewStateId`):
/// its component id, generation and index.
fn view_state_id(camera: ComponentId) -> renderer::ViewStateId {
    renderer::ViewStateId((u64::from(camera.generation()) << 32) | u64::from(camera.index()))
}
