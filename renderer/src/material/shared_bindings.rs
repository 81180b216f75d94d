//! Material bind groups shared by every material slot with the same
//! parameter layout and textures.
//!
//! A material's bind group (group 2: its textures and samplers) depends
//! only on its layout and its textures. The instances of one parent mostly
//! override scalars and vectors, which live in the parameter block, not in
//! the group, so they would all make the same group. Rather than allocate
//! and write that same descriptor set once per created instance, a group is
//! made once per (layout, textures) and counted: the last slot that lets it
//! go retires it.
//!
//! A texture that is re-created or destroyed changes what a group holds
//! although its key (texture *ids*) does not: its groups are evicted — no
//! longer handed out — and the slots that hold them are re-bound, each to a
//! fresh group; the old one is retired when its last holder lets it go.
//! The groups handed out are indexed by the textures they bind, so an
//! eviction costs the groups of those textures, not every group.

use super::registry::MaterialTextures;
use super::ParameterLayout;
use rhi_vulkan::BindGroupHandle;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A layout compared by identity. Holding the `Arc` keeps its address from
/// being reused by another layout while the key lives.
#[derive(Clone, Debug)]
struct LayoutRef(Arc<ParameterLayout>);

impl PartialEq for LayoutRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for LayoutRef {}

impl Hash for LayoutRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.0).hash(state);
    }
}

/// What a group is made from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    layout: LayoutRef,
    textures: MaterialTextures,
}

/// The material bind groups, counted by the slots that hold them (see the
/// module docs).
#[derive(Debug, Default)]
pub(crate) struct SharedBindings {
    /// The group handed out for each key (evicted keys are absent).
    by_key: HashMap<Key, BindGroupHandle>,
    /// Every live group: its key and how many slots hold it.
    holders: HashMap<BindGroupHandle, (Key, u32)>,
    /// Per texture slot: the keys in `by_key` that bind it (no empty sets).
    by_texture: HashMap<u32, HashSet<Key>>,
    /// Groups no slot holds any more: to destroy (deferred by the RHI).
    retired: Vec<BindGroupHandle>,
}

impl SharedBindings {
    /// The live group made from `layout` and `textures`, if any.
    pub fn find(&self, layout: &Arc<ParameterLayout>, textures: &MaterialTextures) -> Option<BindGroupHandle> {
        self.by_key.get(&Key { layout: LayoutRef(layout.clone()), textures: textures.clone() }).copied()
    }

    /// A slot now holds `group`, made from `layout` and `textures` (found
    /// with [`SharedBindings::find`], or just made: then it is handed out
    /// for them from now on).
    pub fn hold(&mut self, group: BindGroupHandle, layout: &Arc<ParameterLayout>, textures: &MaterialTextures) {
        let key = Key { layout: LayoutRef(layout.clone()), textures: textures.clone() };
        let held = self.holders.entry(group).or_insert_with(|| (key.clone(), 0));
        held.1 += 1;
        if !self.by_key.contains_key(&key) {
            for (t, _) in &key.textures {
                self.by_texture.entry(t.slot()).or_default().insert(key.clone());
            }
            self.by_key.insert(key, group);
        }
    }

    /// Stops handing out the group made from `key`.
    fn withdraw(&mut self, key: &Key) {
        if self.by_key.remove(key).is_none() {
            return;
        }
        for (t, _) in &key.textures {
            if let Some(keys) = self.by_texture.get_mut(&t.slot()) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_texture.remove(&t.slot());
                }
            }
        }
    }

    /// A slot lets `group` go; the last holder retires it. A group nobody
    /// holds (made, then not installed) is retired at once.
    pub fn release(&mut self, group: Option<BindGroupHandle>) {
        let Some(group) = group else { return };
        let Some((_, holders)) = self.holders.get_mut(&group) else {
            self.retired.push(group);
            return;
        };
        *holders -= 1;
        if *holders == 0 {
            let (key, _) = self.holders.remove(&group).expect("held");
            if self.by_key.get(&key) == Some(&group) {
                self.withdraw(&key);
            }
            self.retired.push(group);
        }
    }

    /// Whether a slot holds `group`.
    pub fn is_held(&self, group: BindGroupHandle) -> bool {
        self.holders.contains_key(&group)
    }

    /// Stops handing out the groups that bind one of `texture_slots` (a
    /// texture was re-created or destroyed); their holders re-bind.
    pub fn evict_textures(&mut self, texture_slots: &[u32]) {
        for t in texture_slots {
            for key in self.by_texture.remove(t).unwrap_or_default() {
                self.withdraw(&key);
            }
        }
    }

    /// Groups to destroy.
    pub fn take_retired(&mut self) -> Vec<BindGroupHandle> {
        std::mem::take(&mut self.retired)
    }

    /// Every group, each once (the scene is going).
    pub fn take_all(&mut self) -> Vec<BindGroupHandle> {
        let mut all = self.take_retired();
        all.extend(self.holders.drain().map(|(g, _)| g));
        self.by_key.clear();
        self.by_texture.clear();
        all
    }

    /// Live groups.
    pub fn len(&self) -> usize {
        self.holders.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texture::TextureId;
    use rhi_vulkan::SamplerDesc;

    fn group(k: u32) -> BindGroupHandle {
        <BindGroupHandle as rhi_vulkan::SlotKey>::from_parts(k, 0)
    }

    #[test]
    fn equal_layout_and_textures_share_a_group_until_its_last_holder_goes() {
        let layout = Arc::new(ParameterLayout::default());
        let other_layout = Arc::new(ParameterLayout::default());
        let textures: MaterialTextures = vec![(TextureId::WHITE, SamplerDesc::linear_repeat())];
        let mut s = SharedBindings::default();
        assert_eq!(s.find(&layout, &textures), None);
        s.hold(group(1), &layout, &textures);
        assert_eq!(s.find(&layout, &textures), Some(group(1)));
        s.hold(group(1), &layout, &textures);
        // An equal layout that is another layout does not share it.
        assert_eq!(s.find(&other_layout, &textures), None);
        s.release(Some(group(1)));
        assert!(s.take_retired().is_empty(), "one holder left");
        s.release(Some(group(1)));
        assert_eq!(s.take_retired(), vec![group(1)]);
        assert_eq!((s.len(), s.find(&layout, &textures)), (0, None));
        // A group made and never held is retired at once.
        s.release(Some(group(2)));
        assert_eq!(s.take_retired(), vec![group(2)]);
    }

    #[test]
    fn an_evicted_group_is_not_handed_out_and_goes_with_its_last_holder() {
        let layout = Arc::new(ParameterLayout::default());
        let textures: MaterialTextures = vec![(TextureId::WHITE, SamplerDesc::linear_repeat())];
        let mut s = SharedBindings::default();
        s.hold(group(1), &layout, &textures);
        s.hold(group(1), &layout, &textures);
        s.evict_textures(&[TextureId::WHITE.slot()]);
        assert_eq!(s.find(&layout, &textures), None);
        // The first holder re-binds to a fresh group, the second finds it.
        s.hold(group(2), &layout, &textures);
        s.release(Some(group(1)));
        assert_eq!(s.find(&layout, &textures), Some(group(2)));
        s.hold(group(2), &layout, &textures);
        s.release(Some(group(1)));
        assert_eq!(s.take_retired(), vec![group(1)]);
        assert_eq!(s.find(&layout, &textures), Some(group(2)), "the fresh group stays handed out");
        assert_eq!(s.take_all(), vec![group(2)]);
        assert_eq!(s.len(), 0);
    }
}
