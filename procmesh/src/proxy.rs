//! [`ProceduralMeshSceneProxy`]: the render thread's copy of a procedural
//! mesh (UE's `FProceduralMeshSceneProxy`).
//!
//! The proxy is built on the game thread from a `&ProcMeshData` and copies
//! what it draws: for every section with vertices and triangles, the vertex
//! streams in the local vertex factory's layout (see the `streams` module),
//! the `u32` triangles, the material and the visibility flag. It borrows
//! nothing, so the game side may change the mesh the moment the proxy is
//! handed over. On the render thread `create_render_resources` turns each
//! section into two GPU buffers (vertex streams, indices) and drops the CPU
//! copy.
//!
//! ## Two draw paths
//!
//! - **Dynamic** (the default, as in UE): the proxy has dynamic relevance
//!   and `get_dynamic_mesh_elements` emits one batch per visible section per
//!   view, every frame. Section updates ([`SectionUpdate`]) and visibility
//!   flags arrive through `update_dynamic_data` and change the proxy in
//!   place: vertex streams are rewritten in the existing buffers by
//!   `ProxyUpdateContext::upload` (staged, ordered after earlier frames'
//!   reads), and the next frame's batches see the new flags.
//! - **Static** ([`ProcMeshProxyOptions::static_draw_path`]; not in UE): the
//!   sections take the cached path (`draw_static_elements`), so an
//!   unchanged frame builds no command at all. Cached commands name buffers,
//!   not their contents, so vertex updates still go in place; but which
//!   sections are drawn is baked into the cache, so a visibility change (or
//!   any render-state change) recreates the proxy
//!   ([`ProceduralMeshComponent`](crate::ProceduralMeshComponent) marks it
//!   render-state dirty).
//!
//! ## Mirrored transforms
//!
//! A negative-determinant local-to-world flips the triangles' winding. The
//! renderer flips cached commands itself, but it does not touch batches a
//! proxy emits on the dynamic path. The proxy therefore keeps a `mirrored`
//! flag from the transform the renderer tells it on add and after every
//! move (`PrimitiveSceneProxy::on_transform_changed`, UE's
//! `OnTransformChanged`) and sets `reverse_culling` on its dynamic batches
//! only.

use std::any::Any;

use renderer::{
    Bounds, GeometryChange, MaterialId, MeshBatch, MeshElementCollector, PrimitiveSceneProxy, ProxyUpdateContext, SceneView, ViewRelevance,
};
use rhi_vulkan::{BufferDesc, BufferHandle, BufferUsage, Device};

use crate::bounds::Aabb;
use crate::change::{ChangeSet, SectionUpdate};
use crate::error::ProcMeshError;
use crate::mesh::ProcMeshData;
use crate::streams::{color_bytes, position_bytes, render_streams, section_vertex_bytes, tangent_basis_bytes, uv_bytes, StreamLayout};

/// How a procedural mesh is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcMeshProxyOptions {
    /// Draw through the cached (static) path instead of building commands
    /// every frame. Visibility changes then recreate the proxy.
    pub static_draw_path: bool,
    /// The sections cast shadows.
    pub cast_shadow: bool,
}

impl Default for ProcMeshProxyOptions {
    fn default() -> Self {
        Self { static_draw_path: false, cast_shadow: true }
    }
}

/// A message for an existing proxy, sent with
/// `RenderThread::update_dynamic_data`. A bare [`SectionUpdate`] and a
/// `Vec<ProcMeshProxyUpdate>` (a frame's messages in one box, applied in
/// order: what a component's one dynamic-data snapshot per frame carries)
/// are accepted too.
#[derive(Debug, Clone, PartialEq)]
pub enum ProcMeshProxyUpdate {
    /// New vertex streams of one section (same vertex count). Streams are
    /// written whole: normals and tangents together, all four UV channels
    /// together (see [`render_streams`](crate::render_streams)).
    Section(Box<SectionUpdate>),
    /// New visibility flags, `(section, visible)`. On the static path the
    /// cached commands do not follow: recreate the proxy instead.
    Visibility(Vec<(usize, bool)>),
}

/// The messages an existing proxy needs for the in-place part of
/// `changes` (its `dynamic_data` and `visibility`): one [`SectionUpdate`]
/// per updated section, carrying whole streams ([`render_streams`]), then
/// the new visibility flags. Sent as one `Vec<ProcMeshProxyUpdate>`, this is
/// what a [`ProceduralMeshComponent`](crate::ProceduralMeshComponent)'s
/// per-frame dynamic-data snapshot holds. A change set naming a section the
/// mesh does not have (from another mesh, or from before a clear) is an
/// error.
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

/// One section on the GPU (or about to be).
struct ProxySection {
    index: usize,
    vertex_count: usize,
    index_count: u32,
    material: MaterialId,
    visible: bool,
    layout: StreamLayout,
    /// Vertex and index bytes until `create_render_resources` uploads them.
    pending: Option<(Vec<u8>, Vec<u8>)>,
    gpu: Option<(BufferHandle, BufferHandle)>,
}

/// Why an update was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Rejected {
    Stream(&'static str),
    Length { stream: &'static str, got: usize },
}

/// The scene proxy of a procedural mesh. See the module doc.
pub struct ProceduralMeshSceneProxy {
    sections: Vec<ProxySection>,
    /// Every slot's box (empty ones too), so the bounds follow updates.
    boxes: Vec<Aabb>,
    options: ProcMeshProxyOptions,
    mirrored: bool,
    rejected_updates: u64,
}

impl std::fmt::Debug for ProceduralMeshSceneProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProceduralMeshSceneProxy")
            .field("sections", &self.sections.len())
            .field("options", &self.options)
            .field("mirrored", &self.mirrored)
            .finish()
    }
}

impl ProceduralMeshSceneProxy {
    /// Copies what `mesh` draws: one GPU section per section with vertices
    /// and triangles, with its material (`MaterialId::DEFAULT` for a slot
    /// without one) and visibility.
    pub fn new(mesh: &ProcMeshData, options: ProcMeshProxyOptions) -> Self {
        let sections = mesh
            .sections()
            .filter(|(_, s)| s.vertex_count() > 0 && !s.triangles().is_empty())
            .map(|(index, s)| {
                let layout = StreamLayout::new(s.vertex_count());
                let vertices = section_vertex_bytes(s, &layout);
                let indices = bytemuck::cast_slice(s.triangles()).to_vec();
                ProxySection {
                    index,
                    vertex_count: s.vertex_count(),
                    // A section's indices are checked to fit u32 vertex
                    // numbers; their count fits u32 for any drawable mesh.
                    index_count: u32::try_from(s.triangles().len()).unwrap_or(u32::MAX),
                    material: mesh.material(index).map_or(MaterialId::DEFAULT, Into::into),
                    visible: s.visible(),
                    layout,
                    pending: Some((vertices, indices)),
                    gpu: None,
                }
            })
            .collect();
        let boxes = (0..mesh.num_sections()).map(|i| mesh.section(i).map_or(Aabb::EMPTY, |s| s.local_box())).collect();
        Self { sections, boxes, options, mirrored: false, rejected_updates: 0 }
    }

    /// Overrides section `index`'s material with `materials[index]` for
    /// every index the slice covers (the component's per-slot materials
    /// win over the mesh's); a `MaterialId::DEFAULT` entry (an unset slot
    /// padded by the world) keeps the section's own material.
    pub fn with_material_overrides(mut self, materials: &[MaterialId]) -> Self {
        for s in &mut self.sections {
            if let Some(&m) = materials.get(s.index).filter(|&&m| m != MaterialId::DEFAULT) {
                s.material = m;
            }
        }
        self
    }

    /// The options it was built with.
    pub fn options(&self) -> ProcMeshProxyOptions {
        self.options
    }

    /// The section numbers it draws (visible or not), in order.
    pub fn section_indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.sections.iter().map(|s| s.index)
    }

    /// Whether it draws section `index` now; `None` if it has no such
    /// section.
    pub fn is_section_visible(&self, index: usize) -> Option<bool> {
        self.section(index).map(|s| self.sections[s].visible)
    }

    /// The mesh's local bounds as of the last update it received (the
    /// renderer reads `local_bounds` only when the primitive is added).
    pub fn bounds(&self) -> Aabb {
        let b = self.boxes.iter().fold(Aabb::EMPTY, |b, s| b.union(*s));
        if b.is_empty() {
            Aabb::ZERO
        } else {
            b
        }
    }

    /// Whether the primitive's local-to-world, as the renderer last told
    /// it, has a negative determinant: the dynamic batches then flip their
    /// winding.
    pub fn is_mirrored(&self) -> bool {
        self.mirrored
    }

    /// Updates it refused (wrong vertex count, a partial interleaved
    /// stream, an unknown message); each is also logged.
    pub fn rejected_updates(&self) -> u64 {
        self.rejected_updates
    }

    fn section(&self, index: usize) -> Option<usize> {
        self.sections.binary_search_by_key(&index, |s| s.index).ok()
    }

    /// The batch of a section, without per-path flags.
    fn batch(section: &ProxySection, cast_shadow: bool) -> Option<MeshBatch> {
        let (vertices, indices) = section.gpu?;
        let streams = section.layout.offsets.map(|offset| Some((vertices, offset)));
        let mut batch = MeshBatch::local(streams, indices, 0, section.index_count, section.material);
        batch.cast_shadow = cast_shadow;
        Some(batch)
    }

    /// Applies a message; stream writes go through `write(buffer, offset,
    /// bytes)` once the section is on the GPU, or into its pending bytes
    /// before. Returns where the drawn geometry changed (a section's box
    /// before and after new positions or UVs, which masked materials'
    /// shadows read; a section shown or hidden), for the renderer's cached
    /// shadows (`PrimitiveSceneProxy::reports_geometry_changes`).
    fn apply(&mut self, update: ProcMeshProxyUpdate, write: &mut dyn FnMut(BufferHandle, u64, Vec<u8>)) -> Vec<GeometryChange> {
        let mut changed = Vec::new();
        match update {
            ProcMeshProxyUpdate::Section(update) => {
                let before = self.boxes.get(update.section).copied();
                match self.apply_section(&update, write) {
                    Err(why) => {
                        log::warn!("procedural mesh proxy: update rejected: {why:?}");
                        self.rejected_updates += 1;
                    }
                    Ok(()) if update.positions.is_some() || update.uvs.iter().any(Option::is_some) => {
                        let after = self.boxes.get(update.section).copied();
                        changed.extend([before, after].into_iter().flatten().filter_map(|b| self.change(update.section, b)));
                    }
                    Ok(()) => {}
                }
            }
            ProcMeshProxyUpdate::Visibility(flags) => {
                for (index, visible) in flags {
                    if let Some(s) = self.section(index) {
                        if std::mem::replace(&mut self.sections[s].visible, visible) != visible {
                            changed.extend(self.boxes.get(index).and_then(|&b| self.change(index, b)));
                        }
                    }
                }
            }
        }
        changed
    }

    /// [`Self::apply`], its writes uploaded and its changes reported through `ctx`.
    fn apply_reporting(&mut self, update: ProcMeshProxyUpdate, ctx: &mut ProxyUpdateContext<'_>) {
        let changes = self.apply(update, &mut |b, o, bytes| ctx.upload(b, o, bytes));
        for c in changes {
            ctx.geometry_changed(c);
        }
    }

    /// A change of section `index`'s geometry within `local_box` (none for
    /// an empty box or a section that draws nothing).
    fn change(&self, index: usize, local_box: Aabb) -> Option<GeometryChange> {
        let section = &self.sections[self.section(index)?];
        (!local_box.is_empty()).then(|| GeometryChange {
            local_bounds: local_box.into(),
            material: section.material,
            cast_shadow: self.options.cast_shadow,
        })
    }

    fn apply_section(&mut self, update: &SectionUpdate, write: &mut dyn FnMut(BufferHandle, u64, Vec<u8>)) -> Result<(), Rejected> {
        let Some(s) = self.section(update.section) else {
            // A section without triangles: nothing drawn, only its box moves.
            if let Some(b) = self.boxes.get_mut(update.section) {
                *b = update.local_box;
            }
            return Ok(());
        };
        let n = self.sections[s].vertex_count;
        let check = |stream: &'static str, len: usize| {
            if len == n {
                Ok(())
            } else {
                Err(Rejected::Length { stream, got: len })
            }
        };
        // Check everything before writing anything.
        let mut writes: Vec<(usize, Vec<u8>)> = Vec::new();
        if let Some(p) = &update.positions {
            check("positions", p.len())?;
            writes.push((0, position_bytes(p)));
        }
        match (&update.normals, &update.tangents) {
            (Some(normals), Some(tangents)) => {
                check("normals", normals.len())?;
                check("tangents", tangents.len())?;
                writes.push((1, tangent_basis_bytes(normals, tangents)));
            }
            (None, None) => {}
            _ => return Err(Rejected::Stream("normals and tangents share a stream")),
        }
        if let Some(c) = &update.colors {
            check("colors", c.len())?;
            writes.push((2, color_bytes(c)));
        }
        match &update.uvs {
            [Some(a), Some(b), Some(c), Some(d)] => {
                for uv in [a, b, c, d] {
                    check("uvs", uv.len())?;
                }
                writes.push((3, uv_bytes([a, b, c, d])));
            }
            [None, None, None, None] => {}
            _ => return Err(Rejected::Stream("the four UV channels share a stream")),
        }
        if update.positions.is_some() {
            if let Some(b) = self.boxes.get_mut(update.section) {
                *b = update.local_box;
            }
        }
        let section = &mut self.sections[s];
        for (stream, bytes) in writes {
            let offset = section.layout.offsets[stream];
            if let Some((vertices, _)) = section.gpu {
                write(vertices, offset, bytes);
            } else if let Some((pending, _)) = section.pending.as_mut() {
                let at = offset as usize;
                pending[at..at + bytes.len()].copy_from_slice(&bytes);
            }
        }
        Ok(())
    }
}

impl PrimitiveSceneProxy for ProceduralMeshSceneProxy {
    fn local_bounds(&self) -> Bounds {
        self.bounds().into()
    }

    fn view_relevance(&self, _view: &SceneView) -> ViewRelevance {
        let static_path = self.options.static_draw_path;
        ViewRelevance {
            draw: true,
            shadow: self.options.cast_shadow,
            static_relevance: static_path,
            dynamic_relevance: !static_path,
            opaque: true,
            ..Default::default()
        }
    }

    fn draw_static_elements(&self, out: &mut Vec<MeshBatch>) {
        if !self.options.static_draw_path {
            return;
        }
        // The renderer flips cached commands of mirrored primitives itself.
        out.extend(self.sections.iter().filter(|s| s.visible).filter_map(|s| Self::batch(s, self.options.cast_shadow)));
    }

    /// Keeps the mirrored flag (the renderer calls this on add and after
    /// every move, so a move that flips the determinant's sign needs
    /// nothing from the component).
    fn on_transform_changed(&mut self, local_to_world: glam::Mat4) {
        self.mirrored = local_to_world.determinant() < 0.0;
    }

    fn get_dynamic_mesh_elements(&self, _views: &[&SceneView], visibility: &[bool], collector: &mut MeshElementCollector<'_, '_>) {
        if self.options.static_draw_path {
            return;
        }
        let batches: Vec<MeshBatch> = self
            .sections
            .iter()
            .filter(|s| s.visible)
            .filter_map(|s| Self::batch(s, self.options.cast_shadow))
            .map(|mut b| {
                b.reverse_culling = self.mirrored;
                b
            })
            .collect();
        for (view, _) in visibility.iter().enumerate().filter(|(_, v)| **v) {
            for batch in &batches {
                collector.add_mesh(view, batch.clone());
            }
        }
    }

    fn create_render_resources(&mut self, device: &Device) -> rhi_vulkan::Result<()> {
        for section in &mut self.sections {
            let Some((vertices, indices)) = section.pending.take() else {
                continue;
            };
            let vb = device.create_buffer_init(
                &BufferDesc::gpu_only("procedural mesh vertices", vertices.len() as u64, BufferUsage::VERTEX),
                &vertices,
            )?;
            let ib = device
                .create_buffer_init(&BufferDesc::gpu_only("procedural mesh indices", indices.len() as u64, BufferUsage::INDEX), &indices);
            match ib {
                Ok(ib) => section.gpu = Some((vb, ib)),
                Err(e) => {
                    device.destroy_buffer(vb);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn release_render_resources(&mut self, device: &Device) {
        for section in &mut self.sections {
            if let Some((vertices, indices)) = section.gpu.take() {
                device.destroy_buffer(vertices);
                device.destroy_buffer(indices);
            }
        }
    }

    fn update_dynamic_data(&mut self, data: Box<dyn Any + Send>, ctx: &mut ProxyUpdateContext<'_>) -> rhi_vulkan::Result<()> {
        let update = match data.downcast::<SectionUpdate>() {
            Ok(update) => ProcMeshProxyUpdate::Section(update),
            Err(data) => match data.downcast::<ProcMeshProxyUpdate>() {
                Ok(update) => *update,
                Err(data) => match data.downcast::<Vec<ProcMeshProxyUpdate>>() {
                    Ok(updates) => {
                        for update in *updates {
                            self.apply_reporting(update, ctx);
                        }
                        return Ok(());
                    }
                    Err(_) => {
                        log::warn!("procedural mesh proxy: unknown dynamic data ignored");
                        self.rejected_updates += 1;
                        return Ok(());
                    }
                },
            },
        };
        self.apply_reporting(update, ctx);
        Ok(())
    }

    /// Its sections change only through updates, and every update reports
    /// the sections whose geometry it changed (`apply`).
    fn reports_geometry_changes(&self) -> bool {
        true
    }

    fn memory_footprint(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.sections.len() * std::mem::size_of::<ProxySection>()
            + self.boxes.len() * std::mem::size_of::<Aabb>()
            + self.sections.iter().filter_map(|s| s.pending.as_ref()).map(|(v, i)| v.len() + i.len()).sum::<usize>()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::section::SectionData;
    use crate::streams::render_streams;
    use crate::vertex::VertexAttributes;
    use crate::MaterialRef;
    use glam::{Mat4, Vec3};

    fn quad(mesh: &mut ProcMeshData, index: usize, x: f32) {
        let p = [Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 0.0), Vec3::new(x, 1.0, 0.0)];
        mesh.create_mesh_section(index, SectionData::new(&p, &[0, 1, 2, 0, 2, 3]), false).unwrap();
    }

    fn pending_vertices(proxy: &ProceduralMeshSceneProxy, index: usize) -> Vec<u8> {
        let s = proxy.section(index).unwrap();
        proxy.sections[s].pending.as_ref().unwrap().0.clone()
    }

    #[test]
    fn snapshot_skips_empty_sections_and_keeps_materials_and_flags() {
        let mut mesh = ProcMeshData::new();
        quad(&mut mesh, 0, 0.0);
        quad(&mut mesh, 3, 2.0);
        // Section 1: vertices without triangles, drawn by nobody.
        mesh.create_mesh_section(1, SectionData::new(&[Vec3::splat(9.0)], &[]), false).unwrap();
        mesh.set_material(3, Some(MaterialRef(5))).unwrap();
        mesh.set_mesh_section_visible(0, false).unwrap();
        let proxy = ProceduralMeshSceneProxy::new(&mesh, ProcMeshProxyOptions::default());
        assert_eq!(proxy.section_indices().collect::<Vec<_>>(), vec![0, 3]);
        assert_eq!(proxy.is_section_visible(0), Some(false));
        assert_eq!(proxy.is_section_visible(1), None);
        assert_eq!(proxy.sections[1].material, MaterialId(5));
        assert_eq!(proxy.sections[0].material, MaterialId::DEFAULT);
        assert_eq!(proxy.sections[1].index_count, 6);
        assert_eq!(proxy.bounds(), mesh.local_bounds());
        let relevance = proxy.view_relevance(&dummy_view());
        assert!(relevance.dynamic_relevance && !relevance.static_relevance && relevance.shadow);
    }

    #[test]
    fn updates_rewrite_whole_streams_and_follow_the_bounds() {
        let mut mesh = ProcMeshData::new();
        quad(&mut mesh, 0, 0.0);
        let mut proxy = ProceduralMeshSceneProxy::new(&mesh, ProcMeshProxyOptions::default());
        let moved: Vec<Vec3> = mesh.section(0).unwrap().positions().iter().map(|p| *p * 0.5).collect();
        let normals = [Vec3::X; 4];
        let changes = mesh.update_mesh_section(0, SectionData::positions(&moved).normals(&normals)).unwrap();
        let attributes = render_streams(changes.dynamic_data[0].attributes);
        let update = mesh.section_update(0, attributes).unwrap();
        let mut writes = Vec::new();
        proxy.apply(ProcMeshProxyUpdate::Section(Box::new(update)), &mut |b, o, bytes| writes.push((b, o, bytes)));
        assert!(writes.is_empty(), "not on the GPU yet: the pending bytes change");
        assert_eq!(proxy.rejected_updates(), 0);
        let layout = StreamLayout::new(4);
        let expected = section_vertex_bytes(mesh.section(0).unwrap(), &layout);
        assert_eq!(pending_vertices(&proxy, 0), expected);
        assert_eq!(proxy.bounds(), mesh.local_bounds());
        assert_eq!(proxy.local_bounds(), Bounds::from(mesh.local_bounds()));

        // Normals without tangents, or a count mismatch: refused whole.
        let mut partial = mesh.section_update(0, VertexAttributes::NORMAL | VertexAttributes::POSITION).unwrap();
        partial.positions = Some(vec![Vec3::splat(7.0); 4]);
        proxy.apply(ProcMeshProxyUpdate::Section(Box::new(partial)), &mut |_, _, _| {});
        let mut short = mesh.section_update(0, VertexAttributes::POSITION).unwrap();
        short.positions.as_mut().unwrap().pop();
        proxy.apply(ProcMeshProxyUpdate::Section(Box::new(short)), &mut |_, _, _| {});
        assert_eq!(proxy.rejected_updates(), 2);
        assert_eq!(pending_vertices(&proxy, 0), expected, "nothing written");

        proxy.apply(ProcMeshProxyUpdate::Visibility(vec![(0, false), (9, true)]), &mut |_, _, _| {});
        assert_eq!(proxy.is_section_visible(0), Some(false));
        proxy.on_transform_changed(Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)));
        assert!(proxy.is_mirrored());
        proxy.on_transform_changed(Mat4::from_scale(Vec3::new(-1.0, -1.0, 1.0)));
        assert!(!proxy.is_mirrored(), "two flips are a rotation");
    }

    fn dummy_view() -> SceneView {
        SceneView::perspective(Vec3::ONE, Vec3::ZERO, Vec3::Z, 1.0, 0.1, 10.0, rhi_vulkan::Rect::from_size(4, 4)).unwrap()
    }
}
