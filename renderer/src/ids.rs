//! The ids the renderer hands out and the game side holds: primitives,
//! lights, materials and textures, and the game-side allocator of slot ids
//! (materials and textures). They sit at the bottom of the crate so that
//! every module — the error type included — can name them without
//! depending on the module that owns the thing named.

use std::sync::atomic::{AtomicU64, Ordering};

/// Names a primitive across threads. Allocated on the game side
/// ([`PrimitiveId::new`]) so a component knows its id before the render
/// thread has added the proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PrimitiveId(pub u64);

impl PrimitiveId {
    /// A process-wide unique id.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        PrimitiveId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// Names a light in the scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LightId(pub u64);

/// The packing material and texture ids share: a table slot in the low
/// [`SLOT_BITS`](MaterialId::SLOT_BITS) bits and the slot's generation in
/// the rest, and the slot storage's key ([`rhi_vulkan::SlotKey`]) over it.
macro_rules! slot_packing {
    ($id:ident) => {
        impl $id {
            /// Bits of the slot; the rest carry the generation.
            pub const SLOT_BITS: u32 = 20;
            /// Slots of the table: the most alive at once (the built-in ones included).
            pub const MAX_SLOTS: u32 = 1 << Self::SLOT_BITS;
            /// The last generation of a slot; a slot past it is retired.
            pub const MAX_GENERATION: u32 = u32::MAX >> Self::SLOT_BITS;

            /// The slot: the index in the tables (and the GPU table).
            pub const fn slot(self) -> u32 {
                self.0 & (Self::MAX_SLOTS - 1)
            }

            /// The slot's generation this id was handed out in.
            pub const fn generation(self) -> u32 {
                self.0 >> Self::SLOT_BITS
            }
        }

        impl rhi_vulkan::SlotKey for $id {
            const MAX_SLOTS: u32 = $id::MAX_SLOTS;
            const MAX_GENERATION: u32 = $id::MAX_GENERATION;
            fn from_parts(slot: u32, generation: u32) -> Self {
                Self(generation << Self::SLOT_BITS | slot)
            }
            fn index(self) -> u32 {
                self.slot()
            }
            fn generation(self) -> u32 {
                $id::generation(self)
            }
        }
    };
}

/// Names a material; `MaterialId::DEFAULT` always exists.
///
/// The number packs a slot of the material tables (its low
/// [`Self::SLOT_BITS`] bits; the GPU table is indexed by it) and the slot's
/// generation (the high bits), which grows each time a material in the slot
/// is destroyed. `MaterialId(n)` for `n` below [`Self::MAX_SLOTS`] is slot
/// `n` in its first generation, the id `create_material` returns the first
/// time it fills that slot. A slot whose generations are used up is retired:
/// never handed out again, so no id ever names two materials.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MaterialId(pub u32);

impl MaterialId {
    /// The default material (slot 0): always alive; what an unknown id draws with.
    pub const DEFAULT: MaterialId = MaterialId(0);

    /// The id of `slot` in `generation`, or `None` when either is out of range.
    pub const fn new(slot: u32, generation: u32) -> Option<Self> {
        if slot < Self::MAX_SLOTS && generation <= Self::MAX_GENERATION {
            Some(Self(generation << Self::SLOT_BITS | slot))
        } else {
            None
        }
    }
}

slot_packing!(MaterialId);

impl std::fmt::Display for MaterialId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (slot {}, generation {})", self.0, self.slot(), self.generation())
    }
}

/// An id that packs a table slot and the slot's generation, as
/// [`MaterialId`] does: materials and textures, whose game-side ids
/// [`SlotIds`] hands out.
pub(crate) trait SlotId: rhi_vulkan::SlotKey + std::fmt::Debug {
    /// Slots live from the start, never released (the defaults).
    const BUILTIN: u32;
}

impl SlotId for MaterialId {
    const BUILTIN: u32 = 1;
}

/// Hands out ids on the game side ([`crate::RenderThread`]): the
/// workspace's slot storage ([`rhi_vulkan::Slots`], which reuses the oldest
/// freed slot in its next generation and retires spent slots) without
/// values, its first `I::BUILTIN` slots live from the start and never
/// freed. It mirrors the slots of the render thread's tables
/// ([`super::MaterialRegistry`], [`crate::texture::TextureRegistry`]), which
/// see the same creations and destructions in the same order.
#[derive(Debug)]
pub(crate) struct SlotIds<I: SlotId> {
    slots: rhi_vulkan::Slots<I, ()>,
}

/// Material ids of the game side.
pub(crate) type MaterialIds = SlotIds<MaterialId>;

impl<I: SlotId> Default for SlotIds<I> {
    fn default() -> Self {
        let mut slots = rhi_vulkan::Slots::default();
        for _ in 0..I::BUILTIN {
            slots.insert(());
        }
        Self { slots }
    }
}

impl<I: SlotId> SlotIds<I> {
    /// The id the next [`Self::take`] hands out, or `None` when every slot
    /// is live or retired.
    pub(crate) fn peek(&self) -> Option<I> {
        self.slots.next_key()
    }

    /// Hands out the id [`Self::peek`] returned.
    pub(crate) fn take(&mut self) -> Option<I> {
        self.slots.try_insert(()).ok()
    }

    /// Whether `id` names a live object (the built-in ones are always live).
    pub(crate) fn is_live(&self, id: I) -> bool {
        self.slots.contains(id)
    }

    /// Frees a live id's slot for the next generation (retires it after the
    /// last one). Returns false, changing nothing, for an id that is not live
    /// or built in.
    pub(crate) fn release(&mut self, id: I) -> bool {
        id.index() >= I::BUILTIN && self.slots.remove(id).is_some()
    }
}

/// Names a texture: a slot of the texture table and its generation (the
/// packing of [`crate::MaterialId`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TextureId(pub u32);

impl TextureId {
    /// Opaque white (1, 1, 1, 1): what an unknown id samples.
    pub const WHITE: TextureId = TextureId(0);
    /// Opaque black (0, 0, 0, 1).
    pub const BLACK: TextureId = TextureId(1);
    /// A flat tangent-space normal map ((0.5, 0.5, 1) encoded, linear).
    pub const FLAT_NORMAL: TextureId = TextureId(2);
    pub(crate) const BUILTIN: u32 = 3;
}

slot_packing!(TextureId);

impl SlotId for TextureId {
    const BUILTIN: u32 = TextureId::BUILTIN;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_pack_a_slot_and_a_generation() {
        let id = MaterialId::new(5, 3).unwrap();
        assert_eq!((id.slot(), id.generation()), (5, 3));
        assert_eq!(MaterialId(7), MaterialId::new(7, 0).unwrap(), "a plain number is a slot's first generation");
        assert_eq!(MaterialId(u32::MAX), MaterialId::new(MaterialId::MAX_SLOTS - 1, MaterialId::MAX_GENERATION).unwrap());
        assert_eq!(MaterialId::new(MaterialId::MAX_SLOTS, 0), None);
        assert_eq!(MaterialId::new(0, MaterialId::MAX_GENERATION + 1), None);
        assert_eq!(MaterialId::DEFAULT.to_string(), "0 (slot 0, generation 0)");
    }

    #[test]
    fn destroyed_ids_are_reused_in_the_next_generation_oldest_first() {
        let mut ids = MaterialIds::default();
        assert!(ids.is_live(MaterialId::DEFAULT));
        let [a, b, c] = [(); 3].map(|_| ids.take().unwrap());
        assert_eq!([a, b, c], [MaterialId(1), MaterialId(2), MaterialId(3)]);
        assert!(!ids.release(MaterialId::DEFAULT), "the default stays");
        assert!(ids.release(b) && ids.release(a));
        assert!(!ids.is_live(b) && !ids.release(b), "a destroyed id is dead, once");
        let b2 = ids.take().unwrap();
        assert_eq!((b2.slot(), b2.generation()), (b.slot(), 1), "the oldest freed slot, next generation");
        assert!(ids.is_live(b2) && !ids.is_live(b), "the old id stays stale");
        assert!(!ids.release(b), "a stale id frees nothing");
        assert!(ids.is_live(b2));
        assert_eq!(ids.take().unwrap(), MaterialId::new(a.slot(), 1).unwrap());
        assert_eq!(ids.take().unwrap(), MaterialId(4), "no free slot: a new one");
        assert!(ids.is_live(c));
    }
}
