//! End-of-frame updates (UE's SendAllEndOfFrameUpdates): the marked
//! components, and only those, send their changes to the render thread with
//! UE's precedence — render state dirty recreates the proxy (and wins over
//! the rest); otherwise transform dirty sends the transform and bounds;
//! dynamic data dirty sends the component's snapshot to the existing proxy;
//! render settings dirty (draw distances, translucency sort priority) sends
//! them to the scene for the existing primitive (a new proxy gets them too).
//! New proxies are created in parallel and added in one batch; transforms go
//! in one batch too. Collision bodies follow the same dirty flags in a
//! step of their own (feature `collision`, in `world::collision`), run first.

use crate::component::{DirtyFlags, ProxyCreateContext};
use crate::error::Result;
use crate::handle::ComponentId;
use crate::world::{ComponentEntry, World};
use rayon::prelude::*;
use renderer::{Bounds, Light, PrimitiveId, PrimitiveRenderSettings, PrimitiveSceneProxy};
use std::any::Any;

/// Below this many render-state changes, proxies are created serially.
const PARALLEL_THRESHOLD: usize = 64;

/// What the last end-of-frame update did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndOfFrameStats {
    pub visited: usize,
    pub proxies_created: usize,
    pub proxies_removed: usize,
    pub transforms_sent: usize,
    pub dynamic_data_sent: usize,
    pub lights_sent: usize,
    pub bodies_updated: usize,
    /// Updates refused alone because the renderer would refuse them (a
    /// transform whose world bounds overflow), or that it refused (each
    /// also in the next frame's `failed_updates`): logged, not applied;
    /// every other update of the frame is.
    pub rejected_updates: usize,
}

impl World {
    /// Sends every marked component's changes to the render thread.
    pub fn send_all_end_of_frame_updates(&mut self) -> Result<EndOfFrameStats> {
        // A component is in the list once while `queued`; one sent early
        // ([`Self::flush_unregistered`]) is no longer queued and is skipped
        // (so destroying does not search the list), and one marked again
        // since is there twice: the first entry clears `queued`, the second
        // is skipped.
        let mut ids = std::mem::take(&mut self.dirty);
        ids.retain(|&id| self.components.get_mut(id).is_some_and(|e| std::mem::replace(&mut e.queued, false)));
        let stats = self.send_updates(ids)?;
        #[cfg(feature = "collision")]
        self.send_collision_lines()?;
        self.last_update = stats;
        Ok(stats)
    }

    /// Sends the updates of `ids` now (used when components are destroyed).
    pub(crate) fn flush_unregistered(&mut self, ids: &[ComponentId]) -> Result<()> {
        // Their entries in the dirty list stay; sending clears `queued`,
        // and the frame's send skips an entry that is not queued.
        self.send_updates(ids.to_vec())?;
        Ok(())
    }

    fn send_updates(&mut self, ids: Vec<ComponentId>) -> Result<EndOfFrameStats> {
        let mut stats = EndOfFrameStats { visited: ids.len(), ..Default::default() };
        // Collision bodies first: the step reads the dirty flags the render
        // step clears (an error stops the frame before anything is sent).
        #[cfg(feature = "collision")]
        self.update_collision(&ids, &mut stats)?;
        self.send_render_updates(&ids, &mut stats)?;
        Ok(stats)
    }

    /// The render step: proxies, transforms, dynamic data and lights of the marked components among `ids`; clears their dirty flags.
    fn send_render_updates(&mut self, ids: &[ComponentId], stats: &mut EndOfFrameStats) -> Result<()> {
        // 1. New proxies for render-state-dirty primitives (parallel for big batches).
        let created = self.create_proxies(ids);
        let mut batch = self.install_proxies(created, stats);
        // 2. Transforms, dynamic data and lights, in one pass over the components.
        for id in ids {
            let Some(e) = self.components.get_mut(*id) else { continue };
            let d = std::mem::replace(&mut e.dirty, DirtyFlags::NONE);
            e.queued = false;
            gather_render_updates(*id, e, d, &mut batch);
        }
        // Teleported primitives: no motion from where they were.
        for id in std::mem::take(&mut self.teleported) {
            if let Some((pid, world)) = self.components.get(id).and_then(|e| Some((e.primitive?, e.node.world))) {
                batch.previous.push((pid, world));
            }
        }
        stats.transforms_sent = batch.transforms.len();
        stats.rejected_updates = batch.rejected;
        stats.dynamic_data_sent = batch.dynamic.len();
        stats.lights_sent = batch.lights.len();
        // 3. Send, in order: removes, adds, transforms, dynamic data, light transforms, lights.
        stats.rejected_updates += self.send_to_render_thread(batch)?;
        Ok(())
    }

    /// Creates the scene proxies of the render-state-dirty primitives among `ids` (`None`: the old proxy goes, none replaces it).
    fn create_proxies(&self, ids: &[ComponentId]) -> Vec<(ComponentId, Option<Box<dyn PrimitiveSceneProxy>>)> {
        let has_renderer = self.render.is_some();
        let comps = &self.components;
        let make = |id: &ComponentId| -> Option<(ComponentId, Option<Box<dyn PrimitiveSceneProxy>>)> {
            let e = comps.get(*id)?;
            if !e.dirty.render_state || !has_renderer {
                return None;
            }
            let prim = e.behaviour.as_primitive()?;
            // A primitive edited in place (`with_component_mut`: a new mesh)
            // can have bounds its world transform overflows; like an invalid
            // light, it is left out rather than failing the whole frame.
            let drawable = || match crate::world::world_invalid_reason(&*e.behaviour, &e.node.world) {
                Some(reason) => {
                    log::warn!("{id:?}: {reason}; not drawn");
                    false
                }
                None => true,
            };
            let proxy = if e.registered && e.settings.is_drawn() && drawable() {
                prim.create_scene_proxy(&ProxyCreateContext { settings: &e.settings, local_to_world: e.node.world })
            } else {
                None
            };
            Some((*id, proxy))
        };
        if ids.len() >= PARALLEL_THRESHOLD {
            ids.par_iter().filter_map(make).collect()
        } else {
            ids.iter().filter_map(make).collect()
        }
    }

    /// Gives the new proxies their ids and queues the old ones' removal.
    fn install_proxies(
        &mut self,
        created: Vec<(ComponentId, Option<Box<dyn PrimitiveSceneProxy>>)>,
        stats: &mut EndOfFrameStats,
    ) -> RenderBatch {
        let mut batch = RenderBatch::default();
        for (id, proxy) in created {
            let e = self.components.get_mut(id).expect("live");
            if let Some(old) = e.primitive.take() {
                batch.removes.push(old);
                stats.proxies_removed += 1;
            }
            if let Some(p) = proxy {
                let pid = PrimitiveId::new();
                batch.adds.push((pid, p, e.node.world));
                batch.add_owners.push(id);
                if e.settings.render != PrimitiveRenderSettings::default() {
                    batch.settings.push((pid, e.settings.render));
                }
                e.primitive = Some(pid);
                stats.proxies_created += 1;
            }
        }
        batch
    }

    /// Sends `batch` to the render thread, if there is one, in order:
    /// removes, adds, render settings, transforms, dynamic data, light
    /// transforms, lights. Returns how many items the render thread refused
    /// alone (each batch sends its other items); a refused add leaves its
    /// component without a primitive. An error is the render thread's own
    /// (gone, panicked), not one item's.
    fn send_to_render_thread(&mut self, batch: RenderBatch) -> Result<usize> {
        let Some(rt) = self.render.as_mut() else { return Ok(0) };
        rt.remove_primitives(batch.removes)?;
        let added: Vec<PrimitiveId> = batch.adds.iter().map(|(pid, ..)| *pid).collect();
        let refused_adds = rt.add_primitives_with_ids(batch.adds)?;
        if !refused_adds.is_empty() {
            let owner: std::collections::HashMap<PrimitiveId, ComponentId> = added.into_iter().zip(batch.add_owners).collect();
            for (pid, _) in &refused_adds {
                if let Some(e) = owner.get(pid).and_then(|&c| self.components.get_mut(c)) {
                    e.primitive = None;
                }
            }
        }
        let mut refused = refused_adds.len();
        refused += rt.set_primitive_settings(batch.settings)?.len();
        refused += rt.update_primitive_transforms(batch.transforms)?.len();
        for (pid, previous) in batch.previous {
            rt.set_primitive_previous_transform(pid, previous)?;
        }
        for (pid, data) in batch.dynamic {
            rt.update_dynamic_data(pid, data)?;
        }
        refused += rt.update_light_transforms(batch.light_transforms)?.len();
        for (id, light) in batch.lights {
            let e = self.components.get_mut(id).expect("live");
            match (light, e.light) {
                // An edit the light's mobility forbids (a static light's new
                // colour): the scene keeps the light as it was.
                (Some(l), Some(lid)) => match rt.set_light(lid, l) {
                    Err(renderer::RendererError::InvalidLight { reason, .. }) => log::warn!("{id:?}: light kept as it was: {reason}"),
                    other => other?,
                },
                (Some(l), None) => e.light = Some(rt.add_light(l)?),
                (None, Some(lid)) => {
                    rt.remove_light(lid)?;
                    e.light = None;
                }
                (None, None) => {}
            }
        }
        Ok(refused)
    }
}

/// What one end-of-frame update sends to the render thread.
#[derive(Default)]
struct RenderBatch {
    removes: Vec<PrimitiveId>,
    adds: Vec<(PrimitiveId, Box<dyn PrimitiveSceneProxy>, glam::Mat4)>,
    /// The component of each of `adds`, in order.
    add_owners: Vec<ComponentId>,
    /// Render settings of new proxies (when not the defaults) and of
    /// primitives whose settings changed.
    settings: Vec<(PrimitiveId, PrimitiveRenderSettings)>,
    transforms: Vec<(PrimitiveId, glam::Mat4, Option<Bounds>)>,
    /// Previous-frame transforms overridden (teleports: the new transform).
    previous: Vec<(PrimitiveId, glam::Mat4)>,
    /// Updates left out (see [`EndOfFrameStats::rejected_updates`]).
    rejected: usize,
    dynamic: Vec<(PrimitiveId, Box<dyn Any + Send>)>,
    lights: Vec<(ComponentId, Option<Light>)>,
    /// Registered lights that moved: their new world transforms.
    light_transforms: Vec<(renderer::LightId, glam::Mat4)>,
}

/// Queues the transform, dynamic data and light that `e`'s dirty flags `d` call for.
fn gather_render_updates(id: ComponentId, e: &mut ComponentEntry, d: DirtyFlags, batch: &mut RenderBatch) {
    if let Some(pid) = e.primitive {
        if d.transform && !d.render_state {
            // Checked where it is made, item by item: one the renderer
            // would refuse (bounds grown past what its transform can
            // carry) is left out alone, not the frame's whole batch.
            match crate::world::world_invalid_reason(&*e.behaviour, &e.node.world) {
                Some(reason) => {
                    log::warn!("{id:?}: transform not sent: {reason}");
                    batch.rejected += 1;
                }
                None => {
                    let bounds = e.behaviour.as_primitive().map(|p| p.local_bounds());
                    batch.transforms.push((pid, e.node.world, bounds));
                }
            }
        }
        if d.render_settings && !d.render_state {
            batch.settings.push((pid, e.settings.render));
        }
        if d.dynamic_data && !d.render_state {
            if let Some(data) = e.behaviour.as_primitive_mut().and_then(|p| p.dynamic_data()) {
                batch.dynamic.push((pid, data));
            }
        }
    }
    if d.render_state || d.transform {
        if let Some(desc) = e.behaviour.light() {
            let w = e.node.world;
            // A registered light that only moved sends its transform (UE's
            // light proxy keeps its parameters; only the placement travels).
            if let (Some(lid), false, true) = (e.light, d.render_state, e.registered) {
                batch.light_transforms.push((lid, w));
                return;
            }
            let light = e.registered.then(|| desc.to_light(&w).with_mobility(e.settings.mobility));
            // A light edited to values the scene rejects (NaN, a zero
            // radius) is taken out rather than failing the whole frame.
            let light = light.filter(|l| {
                let valid = l.is_valid();
                if !valid {
                    log::warn!("{id:?}: light {l:?} is invalid; not drawn");
                }
                valid
            });
            batch.lights.push((id, light));
        }
    }
}
