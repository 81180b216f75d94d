//! [`ProcMeshRenderState`]: what a `ProceduralMeshComponent` does with the
//! render thread, until engine-core's component system holds it.
//!
//! The component owns a [`ProcMeshData`], merges the [`ChangeSet`]s of a
//! frame's calls and, at end of frame, hands them to
//! [`ProcMeshRenderState::apply`], which turns them into render commands:
//!
//! | change | dynamic draw path | static draw path |
//! | --- | --- | --- |
//! | `render_state` (create, clear, material) | new proxy: add, then remove the old one | same |
//! | `dynamic_data` (update in place) | one [`SectionUpdate`](crate::SectionUpdate) per section, whole streams | same (cached commands name buffers, not contents) |
//! | `visibility` | one [`ProcMeshProxyUpdate::Visibility`] message | new proxy (the cache holds which sections draw) |
//! | `transform` (bounds moved) | transform and new local bounds | same |
//!
//! **Bounds.** The renderer culls with the local bounds a primitive was
//! added with until it is told otherwise; when an update moves the mesh's
//! bounds (`ChangeSet::transform`), `apply` sends the transform together
//! with the new bounds (`RenderThread::update_primitive_transform_and_bounds`,
//! UE's `MarkRenderTransformDirty`): no proxy and no command is rebuilt.
//!
//! ```text
//! game:   mesh.update_mesh_section(..) -> ChangeSet ─┐ merge over the frame
//!         end of frame: state.apply(rt, &mesh, &frame_changes)
//! render: next frame: apply_updates -> proxy.update_dynamic_data -> staged buffer writes
//! ```

use glam::Mat4;
use renderer::{PrimitiveId, RenderThread, RendererError};
use thiserror::Error;

use crate::bounds::Aabb;
use crate::change::ChangeSet;
use crate::error::ProcMeshError;
use crate::mesh::ProcMeshData;
use crate::proxy::{ProcMeshProxyOptions, ProcMeshProxyUpdate, ProceduralMeshSceneProxy};
use crate::streams::render_streams;

/// Why a render-state operation failed. A failed call leaves the live proxy
/// as it was.
#[derive(Debug, Error)]
pub enum RenderStateError {
    /// The change set names a section the mesh does not have (it came from
    /// another mesh, or from before a clear).
    #[error(transparent)]
    Mesh(#[from] ProcMeshError),
    /// The renderer refused the request (a bad transform, or the render
    /// thread is gone).
    #[error(transparent)]
    Renderer(#[from] RendererError),
}

/// Why [`ProcMeshRenderState::apply`] recreated the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecreateReason {
    /// Sections were created or cleared, or a material changed.
    RenderState,
    /// A section's visibility changed on the static draw path.
    VisibilityOnStaticPath,
}

/// What [`ProcMeshRenderState::apply`] sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RenderUpdate {
    /// The proxy was replaced, and why; the new id is
    /// [`ProcMeshRenderState::id`].
    pub recreated: Option<RecreateReason>,
    /// Section updates sent to the existing proxy (in one message with the
    /// visibility flags).
    pub sections_sent: usize,
    /// Visibility flags sent to the existing proxy.
    pub visibility_sent: usize,
    /// The transform and the new local bounds were sent.
    pub bounds_sent: bool,
}

/// A procedural mesh's primitive in a render thread's scene: its id, its
/// transform, the draw path and the local bounds the renderer culls with.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcMeshRenderState {
    id: PrimitiveId,
    local_to_world: Mat4,
    options: ProcMeshProxyOptions,
    bounds: Aabb,
}

impl ProcMeshRenderState {
    /// Creates the proxy of `mesh` and adds it to `rt`'s scene (UE's
    /// `CreateRenderState`).
    pub fn register(
        rt: &mut RenderThread,
        mesh: &ProcMeshData,
        local_to_world: Mat4,
        options: ProcMeshProxyOptions,
    ) -> Result<Self, RenderStateError> {
        let (id, bounds) = add_proxy(rt, mesh, local_to_world, options)?;
        Ok(Self { id, local_to_world, options, bounds })
    }

    /// The primitive's current id (it changes when the proxy is recreated).
    pub fn id(&self) -> PrimitiveId {
        self.id
    }

    /// The local-to-world it was last given.
    pub fn local_to_world(&self) -> Mat4 {
        self.local_to_world
    }

    /// The draw path and shadow options.
    pub fn options(&self) -> ProcMeshProxyOptions {
        self.options
    }

    /// The local bounds last given to the renderer: what it culls with.
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// Sends what `changes` (the merged change sets of a frame's calls on
    /// `mesh`) require; see the module doc for the table.
    pub fn apply(&mut self, rt: &mut RenderThread, mesh: &ProcMeshData, changes: &ChangeSet) -> Result<RenderUpdate, RenderStateError> {
        if !changes.touches_render_thread() {
            return Ok(RenderUpdate::default());
        }
        let reason = if changes.render_state {
            Some(RecreateReason::RenderState)
        } else if self.options.static_draw_path && !changes.visibility.is_empty() {
            Some(RecreateReason::VisibilityOnStaticPath)
        } else {
            None
        };
        if let Some(reason) = reason {
            self.recreate(rt, mesh)?;
            return Ok(RenderUpdate { recreated: Some(reason), ..RenderUpdate::default() });
        }
        // Copy everything first: a stale change set fails before anything
        // is sent.
        let updates = proxy_updates(mesh, changes)?;
        let mut sent = RenderUpdate {
            sections_sent: changes.dynamic_data.len(),
            visibility_sent: changes.visibility.len(),
            ..RenderUpdate::default()
        };
        if !updates.is_empty() {
            rt.update_dynamic_data(self.id, Box::new(updates))?;
        }
        if changes.transform {
            let bounds = mesh.local_bounds();
            rt.update_primitive_transform_and_bounds(self.id, self.local_to_world, bounds.into())?;
            self.bounds = bounds;
            sent.bounds_sent = true;
        }
        Ok(sent)
    }

    /// Moves the primitive (UE's `MarkRenderTransformDirty` after a move).
    /// On the dynamic path a change of the determinant's sign also tells the
    /// proxy to flip its batches' winding.
    pub fn set_transform(&mut self, rt: &mut RenderThread, local_to_world: Mat4) -> Result<(), RenderStateError> {
        rt.update_primitive_transform(self.id, local_to_world)?;
        let mirrored = is_mirrored(&local_to_world);
        if !self.options.static_draw_path && mirrored != is_mirrored(&self.local_to_world) {
            rt.update_dynamic_data(self.id, Box::new(ProcMeshProxyUpdate::Mirrored(mirrored)))?;
        }
        self.local_to_world = local_to_world;
        Ok(())
    }

    /// Replaces the proxy with a new one built from `mesh` (UE's
    /// `RecreateRenderState`): the new one is added before the old one is
    /// removed, so a refused add leaves the old one in place. Returns the
    /// new id.
    pub fn recreate(&mut self, rt: &mut RenderThread, mesh: &ProcMeshData) -> Result<PrimitiveId, RenderStateError> {
        let (id, bounds) = add_proxy(rt, mesh, self.local_to_world, self.options)?;
        let old = std::mem::replace(&mut self.id, id);
        self.bounds = bounds;
        rt.remove_primitive(old)?;
        Ok(id)
    }

    /// Removes the primitive from the scene (UE's `DestroyRenderState`).
    pub fn unregister(self, rt: &mut RenderThread) -> Result<(), RenderStateError> {
        rt.remove_primitive(self.id)?;
        Ok(())
    }
}

/// The messages an existing proxy needs for the in-place part of
/// `changes` (its `dynamic_data` and `visibility`): one [`SectionUpdate`](crate::SectionUpdate)
/// per updated section, carrying whole streams
/// ([`render_streams`]), then the new visibility flags. Sent as one
/// `Vec<ProcMeshProxyUpdate>`, this is also what a component's per-frame
/// dynamic-data snapshot holds.
pub fn proxy_updates(mesh: &ProcMeshData, changes: &ChangeSet) -> Result<Vec<ProcMeshProxyUpdate>, ProcMeshError> {
    let mut updates: Vec<ProcMeshProxyUpdate> = changes
        .dynamic_data
        .iter()
        .map(|d| mesh.section_update(d.section, render_streams(d.attributes)).map(|u| ProcMeshProxyUpdate::Section(Box::new(u))))
        .collect::<Result<_, _>>()?;
    if !changes.visibility.is_empty() {
        updates.push(ProcMeshProxyUpdate::Visibility(changes.visibility.iter().map(|&i| (i, mesh.is_mesh_section_visible(i))).collect()));
    }
    Ok(updates)
}

fn is_mirrored(m: &Mat4) -> bool {
    m.determinant() < 0.0
}

fn add_proxy(
    rt: &mut RenderThread,
    mesh: &ProcMeshData,
    local_to_world: Mat4,
    options: ProcMeshProxyOptions,
) -> Result<(PrimitiveId, Aabb), RenderStateError> {
    let proxy = ProceduralMeshSceneProxy::new(mesh, options).with_mirrored(!options.static_draw_path && is_mirrored(&local_to_world));
    let bounds = proxy.bounds();
    let id = rt.add_primitive(Box::new(proxy), local_to_world)?;
    Ok((id, bounds))
}
