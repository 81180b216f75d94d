//! The game side's scene requests: primitives (added, moved, removed,
//! their settings and dynamic data), debug lines and lights. Each is checked
//! here — matrices, bounds, settings, a light's mobility — so a bad request
//! is a typed error and nothing is queued; a batch command (what end-of-frame
//! updates send) refuses a bad item alone ([`Refused`]) and enqueues the
//! rest.

use super::{RenderContext, RenderThread};
use crate::error::{RendererError, Result};
use crate::scene::{Light, LightId, PrimitiveId, PrimitiveSceneProxy};
use glam::Mat4;
use std::any::Any;
use std::sync::atomic::Ordering;

impl RenderThread {
    /// Adds a primitive; a bad transform or bounds are rejected here, before
    /// anything is enqueued.
    pub fn add_primitive(&mut self, proxy: Box<dyn PrimitiveSceneProxy>, local_to_world: Mat4) -> Result<PrimitiveId> {
        let id = PrimitiveId::new();
        self.add_primitive_with_id(id, proxy, local_to_world)?;
        Ok(id)
    }

    /// Adds a primitive under an id the caller chose (see
    /// [`PrimitiveId::new`]); a bad transform or bounds are rejected here,
    /// before anything is enqueued.
    pub fn add_primitive_with_id(&mut self, id: PrimitiveId, proxy: Box<dyn PrimitiveSceneProxy>, local_to_world: Mat4) -> Result<()> {
        validate_transform(&local_to_world, &proxy.local_bounds())?;
        self.enqueue_render_command(move |ctx| {
            if let Err(e) = ctx.scene.add_primitive(id, proxy, local_to_world) {
                log::error!("add {id:?}: {e}");
            }
        })
    }

    /// Adds many primitives in one command (their render data and cached
    /// commands are then created in parallel).
    pub fn add_primitives(&mut self, primitives: Vec<(Box<dyn PrimitiveSceneProxy>, Mat4)>) -> Result<Vec<PrimitiveId>> {
        for (proxy, m) in &primitives {
            validate_transform(m, &proxy.local_bounds())?;
        }
        let with_ids: Vec<_> = primitives.into_iter().map(|(p, m)| (PrimitiveId::new(), p, m)).collect();
        let ids = with_ids.iter().map(|(id, _, _)| *id).collect();
        self.enqueue_render_command(move |ctx| {
            for (id, proxy, m) in with_ids {
                if let Err(e) = ctx.scene.add_primitive(id, proxy, m) {
                    log::error!("add {id:?}: {e}");
                }
            }
        })?;
        Ok(ids)
    }

    /// Removes a primitive at the next frame (an unknown id is ignored there).
    pub fn remove_primitive(&mut self, id: PrimitiveId) -> Result<()> {
        self.enqueue_render_command(move |ctx| ctx.scene.remove_primitive(id))
    }

    /// Sets a primitive's local-to-world; a non-finite or zero-scale matrix
    /// is rejected here, before anything is enqueued.
    pub fn update_primitive_transform(&mut self, id: PrimitiveId, local_to_world: Mat4) -> Result<()> {
        validate_matrix(&local_to_world)?;
        self.enqueue_render_command(move |ctx| {
            let _ = ctx.scene.update_primitive_transform(id, local_to_world);
        })
    }

    /// Overrides a primitive's previous-frame transform for the next frame
    /// (UE's `PreviousTransform`; `Scene::set_primitive_previous_transform`):
    /// a teleport passes the new transform, so nothing smears behind it.
    pub fn set_primitive_previous_transform(&mut self, id: PrimitiveId, previous: Mat4) -> Result<()> {
        validate_matrix(&previous)?;
        self.enqueue_render_command(move |ctx| {
            let _ = ctx.scene.set_primitive_previous_transform(id, previous);
        })
    }

    /// Many transform (and optionally bounds) updates in one command: what
    /// end-of-frame updates send for every transform-dirty component. An
    /// update with a bad matrix or bounds is refused alone (returned, and
    /// counted in the next frame's `failed_updates`); every other update
    /// of the batch is enqueued.
    pub fn update_primitive_transforms(
        &mut self,
        updates: Vec<(PrimitiveId, Mat4, Option<crate::math::Bounds>)>,
    ) -> Result<Refused<PrimitiveId>> {
        let (updates, refused) =
            split_refused(updates, |(id, m, b)| (*id, b.as_ref().map_or_else(|| validate_matrix(m), |b| validate_transform(m, b))));
        self.enqueue_batch("transform", updates, refused, |ctx, (id, m, b)| {
            let _ = match b {
                Some(b) => ctx.scene.update_primitive_transform_and_bounds(id, m, b),
                None => ctx.scene.update_primitive_transform(id, m),
            };
        })
    }

    /// Adds primitives under ids the caller chose (the game side allocates
    /// them, see [`PrimitiveId::new`]), in one command. A primitive whose
    /// transform or bounds are bad is refused alone (returned with why, and
    /// counted in the next frame's `failed_updates`); the others are added.
    pub fn add_primitives_with_ids(
        &mut self,
        primitives: Vec<(PrimitiveId, Box<dyn PrimitiveSceneProxy>, Mat4)>,
    ) -> Result<Refused<PrimitiveId>> {
        let (primitives, refused) = split_refused(primitives, |(id, proxy, m)| (*id, validate_transform(m, &proxy.local_bounds())));
        self.enqueue_batch("add", primitives, refused, |ctx, (id, proxy, m)| {
            if let Err(e) = ctx.scene.add_primitive(id, proxy, m) {
                log::error!("add {id:?}: {e}");
            }
        })
    }

    /// Enqueues one command that records `refused` as failed updates and
    /// applies `apply` to each of `items`; nothing when both are empty.
    /// Returns `refused`.
    fn enqueue_batch<T: Send + 'static, Id: std::fmt::Debug>(
        &mut self,
        what: &'static str,
        items: Vec<T>,
        refused: Refused<Id>,
        apply: impl Fn(&mut RenderContext, T) + Send + 'static,
    ) -> Result<Refused<Id>> {
        if items.is_empty() && refused.is_empty() {
            return Ok(refused);
        }
        let messages: Vec<String> = refused.iter().map(|(id, e)| format!("{what} of {id:?} refused: {e}")).collect();
        for m in &messages {
            log::warn!("{m}");
        }
        self.enqueue_render_command(move |ctx| {
            for m in messages {
                ctx.scene.note_refused(m);
            }
            for item in items {
                apply(ctx, item);
            }
        })?;
        Ok(refused)
    }

    /// Sets primitives' render settings (draw distances, translucency sort
    /// priority; [`crate::PrimitiveRenderSettings`]) in one command, applied
    /// after the adds of the frame they arrive in, so they may follow the
    /// primitives' adds. A setting that is not valid is refused alone
    /// ([`RendererError::InvalidPrimitiveSettings`], returned and counted in
    /// the next frame's `failed_updates`); the others are applied.
    pub fn set_primitive_settings(&mut self, settings: Vec<(PrimitiveId, crate::PrimitiveRenderSettings)>) -> Result<Refused<PrimitiveId>> {
        let (settings, refused) = split_refused(settings, |(id, s)| {
            let check = s.invalid_reason().map_or(Ok(()), |reason| Err(RendererError::InvalidPrimitiveSettings { primitive: *id, reason }));
            (*id, check)
        });
        self.enqueue_batch("render settings", settings, refused, |ctx, (id, s)| {
            // Validated above: cannot fail.
            let _ = ctx.scene.set_primitive_settings(id, s);
        })
    }

    /// Removes many primitives in one command.
    pub fn remove_primitives(&mut self, ids: Vec<PrimitiveId>) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.enqueue_render_command(move |ctx| {
            for id in ids {
                ctx.scene.remove_primitive(id);
            }
        })
    }

    /// New transform and local bounds (UE sends both when bounds change).
    pub fn update_primitive_transform_and_bounds(
        &mut self,
        id: PrimitiveId,
        local_to_world: Mat4,
        local_bounds: crate::math::Bounds,
    ) -> Result<()> {
        validate_transform(&local_to_world, &local_bounds)?;
        self.enqueue_render_command(move |ctx| {
            let _ = ctx.scene.update_primitive_transform_and_bounds(id, local_to_world, local_bounds);
        })
    }

    /// Lines to draw in the next frame's main views, over the scene and
    /// depth-tested against it (UE's `DrawDebugLine` for one frame;
    /// [`crate::debug_lines`]); lines with a non-finite end are dropped.
    pub fn draw_debug_lines(&mut self, lines: Vec<crate::DebugLine>) -> Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let bytes = (lines.len() * std::mem::size_of::<crate::DebugLine>()) as u64;
        self.enqueue_sized(bytes, move |ctx| ctx.scene.draw_debug_lines(lines))
    }

    /// Hands `data` to the primitive's proxy at the next frame (UE's
    /// SendRenderDynamicData), through `PrimitiveSceneProxy::update_dynamic_data`.
    pub fn update_dynamic_data(&mut self, id: PrimitiveId, data: Box<dyn Any + Send>) -> Result<()> {
        self.enqueue_render_command(move |ctx| ctx.scene.update_dynamic_data(id, data))
    }

    /// Adds a light and returns its id; an invalid light ([`Light::is_valid`])
    /// or a fifth directional light is [`RendererError::InvalidLight`]
    /// (with no id) and nothing is enqueued.
    pub fn add_light(&mut self, light: Light) -> Result<LightId> {
        let id = LightId(self.next_light.fetch_add(1, Ordering::Relaxed));
        self.set_light(id, light).map_err(|e| match e {
            RendererError::InvalidLight { reason, .. } => RendererError::InvalidLight { light: None, reason },
            e => e,
        })?;
        Ok(id)
    }

    /// Replaces (or adds) the light `id`; an invalid light, or a fifth
    /// directional light, is [`RendererError::InvalidLight`] and nothing is
    /// enqueued. No mesh draw command is rebuilt for a light.
    pub fn set_light(&mut self, id: LightId, light: Light) -> Result<()> {
        // The mirror refuses what the scene would, and changes nothing then.
        self.lights.check(id, &light)?;
        self.enqueue_render_command(move |ctx| {
            let _ = ctx.scene.set_light(id, light);
        })?;
        self.lights.set(id, light)
    }

    /// Places the lights by their components' world transforms
    /// ([`Light::with_transform`]): what a moved light component sends
    /// (UE's light scene proxy keeps its parameters; only the transform
    /// travels). Unknown ids are ignored. A light whose mobility forbids
    /// moving ([`Light::change_problem`]) is refused alone
    /// ([`RendererError::InvalidLight`], returned and counted in the next
    /// frame's `failed_updates`) and stays where it was; the others move.
    pub fn update_light_transforms(&mut self, transforms: Vec<(LightId, glam::Mat4)>) -> Result<Refused<LightId>> {
        let (transforms, refused) = split_refused(transforms, |(id, m)| (*id, self.lights.check_transform(*id, m)));
        let mirror: Vec<(LightId, glam::Mat4)> = transforms.clone();
        let refused = self.enqueue_batch("light transform", transforms, refused, |ctx, (id, m)| {
            let _ = ctx.scene.set_light_transform(id, m);
        })?;
        for (id, m) in &mirror {
            self.lights.set_transform(*id, m)?;
        }
        Ok(refused)
    }

    /// Removes a light (an unknown id is ignored).
    pub fn remove_light(&mut self, id: LightId) -> Result<()> {
        self.enqueue_render_command(move |ctx| ctx.scene.remove_light(id))?;
        self.lights.remove(id);
        Ok(())
    }
}

/// The items of a batch command refused on the game side, each with why
/// (every other item of the batch was enqueued: one bad item does not lose
/// the frame's others). Each also counts in the `failed_updates` of the
/// frame the batch arrives in.
pub type Refused<Id> = Vec<(Id, RendererError)>;

/// `items` split into those `check` passes and the refused ones' ids with why.
fn split_refused<T, Id>(items: Vec<T>, check: impl Fn(&T) -> (Id, Result<()>)) -> (Vec<T>, Refused<Id>) {
    let mut refused = Vec::new();
    let kept = items
        .into_iter()
        .filter(|item| match check(item) {
            (_, Ok(())) => true,
            (id, Err(e)) => {
                refused.push((id, e));
                false
            }
        })
        .collect();
    (kept, refused)
}

fn validate_matrix(m: &Mat4) -> Result<()> {
    crate::math::check_transform(m).map_err(|p| RendererError::InvalidTransform { what: "primitive".into(), reason: p.to_string() })
}

fn validate_transform(m: &Mat4, local: &crate::math::Bounds) -> Result<()> {
    validate_matrix(m)?;
    if !local.is_valid() || !local.transformed(m).is_valid() {
        return Err(RendererError::InvalidTransform { what: "primitive".into(), reason: "invalid bounds".into() });
    }
    Ok(())
}
