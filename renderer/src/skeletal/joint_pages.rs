//! The joint pages of a skeletal mesh: where its proxies' poses live on the
//! GPU, shared so that identical skinned meshes merge into instanced draws.
//!
//! A skinned draw reads its joint matrices and its weighed morph targets
//! from storage buffers bound in group 3. Were each proxy to have buffers
//! of its own, each would have its own bind group, so its cached commands
//! would differ from every other proxy's and none would merge: a thousand
//! foxes would be a thousand draws per pass. Instead a mesh's proxies take
//! a *slot* in one of the mesh's pages — a joint buffer (per slot this
//! frame's matrices, then the previous frame's) and a morph buffer (a
//! header, then per slot its list of weighed targets) — and every proxy in
//! a page binds the same group per LOD. The slot number goes into the
//! primitive's GPU-scene record (`PrimitiveData.vertex_factory_data`, from
//! [`crate::scene::PrimitiveSceneProxy::vertex_factory_data`]), where the
//! vertex factory finds it through the instance's primitive id: the cached
//! commands of a page's proxies are equal and merge as static meshes' do.
//!
//! Pages never move or grow (a moved buffer would mean new bind groups and
//! rebuilt commands): the first holds about [`FIRST_PAGE_BYTES`] of
//! slots, each next one four times as many (up to [`MAX_PAGE_BYTES`]), so
//! a mesh drawn once wastes little and a thousand foxes take three pages —
//! three instanced draws per pass and section. A slot freed is reused; a
//! page whose last slot is freed is destroyed (the RHI keeps it alive until
//! the frames that read it are done).
//!
//! Poses reach the pages as every proxy upload does
//! ([`crate::scene::ProxyUpdateContext::upload`]): the frame's uploads go
//! through one staging buffer, one copy of all of a page's regions. Only
//! the new pose is written: the slot's previous pose is its current one,
//! moved on the GPU first ([`crate::scene::ProxyUpdateContext::copy_within`]),
//! so a pose crosses from the host once.

use super::SkinnedVertexFactory;
use rhi_vulkan::{BindGroupHandle, BindingResource, BufferDesc, BufferHandle, BufferUsage, Device};

/// The first page's size in bytes (at least one slot).
pub const FIRST_PAGE_BYTES: u64 = 256 << 10;
/// The largest page in bytes; well under Vulkan's guaranteed
/// `maxStorageBufferRange` (2^27).
pub const MAX_PAGE_BYTES: u64 = 16 << 20;
/// Bytes of one joint matrix.
const MATRIX_BYTES: u64 = 64;
/// Bytes of one entry of the morph buffer (a vec4).
const MORPH_ENTRY_BYTES: u64 = 16;

/// Where one proxy's pose lives: its page's buffers and bind groups (one
/// per LOD) and its slot there.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct JointSlot {
    page: usize,
    /// The slot's index in its page: the primitive's vertex-factory word.
    pub slot: u32,
    /// The page's joint buffer and morph buffer.
    pub joints: BufferHandle,
    pub morphs: BufferHandle,
    /// The page's group 3 per LOD.
    pub groups: Vec<BindGroupHandle>,
    joint_bytes: u64,
    morph_bytes: u64,
}

impl JointSlot {
    /// The byte offset of the slot's matrices in the joint buffer.
    pub fn joint_offset(&self) -> u64 {
        u64::from(self.slot) * self.joint_bytes
    }

    /// Bytes of one pose (the slot holds two: this frame's, then the previous frame's).
    pub fn pose_bytes(&self) -> u64 {
        self.joint_bytes / 2
    }

    /// The byte offset of the slot's previous-frame matrices.
    pub fn previous_offset(&self) -> u64 {
        self.joint_offset() + self.pose_bytes()
    }

    /// The byte offset of the slot's morph list in the morph buffer (after the header).
    pub fn morph_offset(&self) -> u64 {
        MORPH_ENTRY_BYTES + u64::from(self.slot) * self.morph_bytes
    }
}

/// One page: its buffers, its bind group per LOD and its slots.
struct Page {
    joints: BufferHandle,
    morphs: BufferHandle,
    groups: Vec<BindGroupHandle>,
    capacity: u32,
    /// Slots never handed out start at `next`; freed ones wait in `free`.
    next: u32,
    free: Vec<u32>,
    live: u32,
}

impl Page {
    fn destroy(self, device: &Device) {
        self.groups.into_iter().for_each(|g| device.destroy_bind_group(g));
        device.destroy_buffer(self.joints);
        device.destroy_buffer(self.morphs);
    }

    fn take_slot(&mut self) -> Option<u32> {
        let slot = match self.free.pop() {
            Some(s) => s,
            None if self.next < self.capacity => {
                self.next += 1;
                self.next - 1
            }
            None => return None,
        };
        self.live += 1;
        Some(slot)
    }
}

/// A skeletal mesh's pages (module docs), for a skeleton of `joint_count`
/// joints and `morph_targets` morph targets.
pub(crate) struct JointPages {
    pages: Vec<Option<Page>>,
    joint_count: u32,
    morph_targets: u32,
    /// Fours of influences per vertex (1 or 2), for the vertex factory.
    influence_quads: u32,
}

impl JointPages {
    pub fn new(joint_count: u32, morph_targets: u32, influence_quads: u32) -> Self {
        Self { pages: Vec::new(), joint_count, morph_targets, influence_quads }
    }

    /// Bytes of one slot in the joint buffer: this frame's and the previous frame's matrices.
    fn joint_bytes(&self) -> u64 {
        2 * u64::from(self.joint_count) * MATRIX_BYTES
    }

    /// Bytes of one slot in the morph buffer: the list's count, then an entry per target.
    fn morph_bytes(&self) -> u64 {
        (1 + u64::from(self.morph_targets)) * MORPH_ENTRY_BYTES
    }

    /// Slots of page `index`: a quarter MiB's worth, four times more per
    /// page after (at least one, at most [`MAX_PAGE_BYTES`]' worth).
    fn capacity(&self, index: usize) -> u32 {
        let per = self.joint_bytes();
        let first = (FIRST_PAGE_BYTES / per).max(1);
        let most = (MAX_PAGE_BYTES / per).max(1);
        let scaled = first.saturating_mul(1u64 << (2 * index.min(16)));
        u32::try_from(scaled.min(most)).unwrap_or(u32::MAX)
    }

    /// Pages that exist now.
    pub fn page_count(&self) -> usize {
        self.pages.iter().flatten().count()
    }

    /// A slot for one proxy, in the first page with room (a new page when
    /// none has), whose group per LOD binds the page's buffers with `lods`
    /// (each LOD's joint-index, weight and morph-delta buffers). The slot's
    /// contents are the caller's to write.
    pub fn allocate(&mut self, device: &Device, lods: &[[BufferHandle; 3]]) -> rhi_vulkan::Result<JointSlot> {
        let found = self.pages.iter_mut().enumerate().find_map(|(i, p)| p.as_mut().and_then(Page::take_slot).map(|s| (i, s)));
        let (page, slot) = match found {
            Some(f) => f,
            None => {
                let index = self.pages.iter().position(Option::is_none).unwrap_or(self.pages.len());
                let mut page = self.make_page(device, lods, self.capacity(index))?;
                let slot = page.take_slot().expect("a new page has room");
                if index == self.pages.len() {
                    self.pages.push(None);
                }
                self.pages[index] = Some(page);
                (index, slot)
            }
        };
        let p = self.pages[page].as_ref().expect("the page just used");
        Ok(JointSlot {
            page,
            slot,
            joints: p.joints,
            morphs: p.morphs,
            groups: p.groups.clone(),
            joint_bytes: self.joint_bytes(),
            morph_bytes: self.morph_bytes(),
        })
    }

    /// Gives `slot` back; its page is destroyed when it was the last one used.
    pub fn free(&mut self, device: &Device, slot: &JointSlot) {
        let Some(page) = self.pages.get_mut(slot.page).and_then(Option::as_mut) else { return };
        page.free.push(slot.slot);
        page.live = page.live.saturating_sub(1);
        if page.live == 0 {
            if let Some(p) = self.pages[slot.page].take() {
                p.destroy(device);
            }
        }
    }

    /// A page of `capacity` slots: its buffers and its group per LOD.
    fn make_page(&self, device: &Device, lods: &[[BufferHandle; 3]], capacity: u32) -> rhi_vulkan::Result<Page> {
        let storage = |label: &str, size: u64| device.create_buffer(&BufferDesc::gpu_only(label, size, BufferUsage::STORAGE));
        let joints = storage("skin joint page", u64::from(capacity) * self.joint_bytes())?;
        let morphs = match storage("skin morph page", MORPH_ENTRY_BYTES + u64::from(capacity) * self.morph_bytes()) {
            Ok(m) => m,
            Err(e) => {
                device.destroy_buffer(joints);
                return Err(e);
            }
        };
        let mut page = Page { joints, morphs, groups: Vec::with_capacity(lods.len()), capacity, next: 0, free: Vec::new(), live: 0 };
        match self.fill_page(device, &mut page, lods) {
            Ok(()) => Ok(page),
            Err(e) => {
                page.destroy(device);
                Err(e)
            }
        }
    }

    /// Writes a new page's morph header (the skeleton's joint count, the
    /// entries per slot and the fours of influences per vertex, which the
    /// vertex factory reads) and makes its group per LOD.
    fn fill_page(&self, device: &Device, page: &mut Page, lods: &[[BufferHandle; 3]]) -> rhi_vulkan::Result<()> {
        let header = [self.joint_count as f32, (1 + self.morph_targets) as f32, self.influence_quads as f32, 0.0];
        device.write_buffer(page.morphs, 0, bytemuck::cast_slice(&header))?;
        for &[indices, weights, deltas] in lods {
            let entries = [page.joints, indices, weights, deltas, page.morphs].map(BindingResource::Buffer);
            let entries: Vec<(u32, BindingResource)> = entries.into_iter().enumerate().map(|(i, e)| (i as u32, e)).collect();
            page.groups.push(device.create_bind_group_with_layout(&SkinnedVertexFactory::bind_group_layout(), &entries)?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_start_small_and_grow_fourfold_within_the_limits() {
        // The Fox: 24 joints, 3 KiB a slot.
        let fox = JointPages::new(24, 0, 1);
        assert_eq!((fox.capacity(0), fox.capacity(1), fox.capacity(2)), (85, 340, 1360));
        assert!(fox.capacity(0) + fox.capacity(1) + fox.capacity(2) >= 1000, "a thousand foxes in three pages");
        assert_eq!(fox.capacity(9), (MAX_PAGE_BYTES / fox.joint_bytes()) as u32, "capped");
        // The largest skeleton still gets a slot per page.
        let big = JointPages::new(super::super::MAX_SKIN_JOINTS, 64, 2);
        assert_eq!(big.capacity(0), 1);
        assert_eq!(big.morph_bytes(), 65 * 16);
    }
}
