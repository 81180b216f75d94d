//! What a call changed, for the component to mark dirty, and the vertex
//! data an update sends to the render thread.
//!
//! UE's component reacts to each call by marking one of three things dirty,
//! and the cost differs by orders of magnitude:
//!
//! | here | UE | the render side |
//! | --- | --- | --- |
//! | [`ChangeSet::render_state`] | `MarkRenderStateDirty` | the scene proxy is destroyed and recreated (all sections re-uploaded) |
//! | [`ChangeSet::transform`] | `MarkRenderTransformDirty` | bounds and transform are re-sent; the proxy stays |
//! | [`ChangeSet::dynamic_data`] | the `FProcMeshSectionUpdateData` render command | one section's vertex buffers are overwritten in the existing proxy |
//! | [`ChangeSet::visibility`] | `SetSectionVisibility_RenderThread` | one flag in the existing proxy |
//!
//! The data half returns a [`ChangeSet`] from every mutating call; the
//! `ProceduralMeshComponent` merges them over a frame
//! ([`ChangeSet::merge`]) and, at end of frame, marks what they say. For
//! each dynamic-data entry it takes a [`SectionUpdate`] with
//! [`ProcMeshData::section_update`](crate::ProcMeshData::section_update):
//! copying at send time rather than on every call means several updates of
//! a section in one frame cost one copy, and only the streams that changed
//! are copied.
//!
//! A rejected call returns an error, never a change set: there is nothing
//! to send.

use glam::{Vec2, Vec3};

use crate::bounds::Aabb;
use crate::section::ProcMeshSection;
use crate::vertex::{Color, ProcMeshTangent, VertexAttributes};

/// One section whose vertex data changed without a proxy rebuild.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SectionDirty {
    /// The section.
    pub section: usize,
    /// The vertex streams that changed.
    pub attributes: VertexAttributes,
}

/// What one call (or a frame of calls, merged) changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    /// Sections were created, cleared or changed material: recreate the
    /// scene proxy. Supersedes `dynamic_data` and `visibility`.
    pub render_state: bool,
    /// The mesh's local bounds changed: re-send bounds and transform.
    pub transform: bool,
    /// Sections whose vertices changed in place, sorted by section; send
    /// each to the existing proxy. Empty when `render_state` is set.
    pub dynamic_data: Vec<SectionDirty>,
    /// Sections whose visibility changed, sorted; send the new flags to the
    /// existing proxy. Empty when `render_state` is set.
    pub visibility: Vec<usize>,
    /// A synchronous cook replaced the cooked collision: give the new one to
    /// the collision scene now.
    pub collision_cooked: bool,
    /// An asynchronous cook of this generation was requested; it lands
    /// through [`ProcMeshData::poll_collision`](crate::ProcMeshData::poll_collision).
    pub collision_requested: Option<u64>,
}

impl ChangeSet {
    /// Nothing changed.
    pub const NONE: Self = Self {
        render_state: false,
        transform: false,
        dynamic_data: Vec::new(),
        visibility: Vec::new(),
        collision_cooked: false,
        collision_requested: None,
    };

    /// Only the proxy must be recreated (and bounds re-sent when `bounds`).
    pub(crate) fn render_state(bounds: bool) -> Self {
        Self { render_state: true, transform: bounds, ..Self::NONE }
    }

    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        *self == Self::NONE
    }

    /// Whether anything must reach the render thread.
    pub fn touches_render_thread(&self) -> bool {
        self.render_state || self.transform || !self.dynamic_data.is_empty() || !self.visibility.is_empty()
    }

    /// Folds a later change set into this one, as the component does over a
    /// frame.
    pub fn merge(&mut self, later: ChangeSet) {
        self.render_state |= later.render_state;
        self.transform |= later.transform;
        self.collision_cooked |= later.collision_cooked;
        if later.collision_requested.is_some() {
            self.collision_requested = later.collision_requested;
        }
        if self.render_state {
            self.dynamic_data.clear();
            self.visibility.clear();
            return;
        }
        for dirty in later.dynamic_data {
            match self.dynamic_data.binary_search_by_key(&dirty.section, |d| d.section) {
                Ok(at) => self.dynamic_data[at].attributes |= dirty.attributes,
                Err(at) => self.dynamic_data.insert(at, dirty),
            }
        }
        for section in later.visibility {
            if let Err(at) = self.visibility.binary_search(&section) {
                self.visibility.insert(at, section);
            }
        }
    }
}

/// A copy of one section's changed vertex streams for the render thread
/// (UE's `FProcMeshSectionUpdateData`, split per stream). A stream not
/// asked for is `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionUpdate {
    /// The section.
    pub section: usize,
    /// The streams present.
    pub attributes: VertexAttributes,
    /// The section's new box.
    pub local_box: Aabb,
    /// Positions.
    pub positions: Option<Vec<Vec3>>,
    /// Normals.
    pub normals: Option<Vec<Vec3>>,
    /// Tangents.
    pub tangents: Option<Vec<ProcMeshTangent>>,
    /// Colors.
    pub colors: Option<Vec<Color>>,
    /// UV channels 0 to 3.
    pub uvs: [Option<Vec<Vec2>>; 4],
}

impl SectionUpdate {
    pub(crate) fn copy(index: usize, section: &ProcMeshSection, attributes: VertexAttributes) -> Self {
        let stream = |attribute: VertexAttributes| attributes.contains(attribute);
        Self {
            section: index,
            attributes,
            local_box: section.local_box(),
            positions: stream(VertexAttributes::POSITION).then(|| section.positions().to_vec()),
            normals: stream(VertexAttributes::NORMAL).then(|| section.normals().to_vec()),
            tangents: stream(VertexAttributes::TANGENT).then(|| section.tangents().to_vec()),
            colors: stream(VertexAttributes::COLOR).then(|| section.colors().to_vec()),
            uvs: std::array::from_fn(|channel| stream(VertexAttributes::uv(channel)).then(|| section.uv(channel).to_vec())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_unions_sections_and_render_state_supersedes() {
        let mut frame = ChangeSet::NONE;
        frame.merge(ChangeSet {
            transform: true,
            dynamic_data: vec![SectionDirty { section: 3, attributes: VertexAttributes::POSITION }],
            ..ChangeSet::NONE
        });
        frame.merge(ChangeSet {
            dynamic_data: vec![
                SectionDirty { section: 1, attributes: VertexAttributes::UV0 },
                SectionDirty { section: 3, attributes: VertexAttributes::NORMAL },
            ],
            visibility: vec![2],
            ..ChangeSet::NONE
        });
        assert_eq!(
            frame.dynamic_data,
            vec![
                SectionDirty { section: 1, attributes: VertexAttributes::UV0 },
                SectionDirty { section: 3, attributes: VertexAttributes::POSITION | VertexAttributes::NORMAL },
            ]
        );
        assert!(frame.transform && !frame.render_state);
        frame.merge(ChangeSet::render_state(false));
        assert!(frame.render_state && frame.transform);
        assert!(frame.dynamic_data.is_empty() && frame.visibility.is_empty());
        assert!(!frame.is_empty());
        assert!(ChangeSet::NONE.is_empty());
    }
}
