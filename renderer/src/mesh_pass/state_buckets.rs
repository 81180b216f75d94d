//! State buckets: identical mesh draw commands share one refcounted id (UE's
//! FStateBucketMap). Cached commands are stored once per bucket; visible
//! primitives refer to buckets by id, and the merge turns a run of one
//! bucket into one instanced draw.

use super::MeshDrawCommand;
use std::collections::HashMap;

#[derive(Default)]
pub struct StateBuckets {
    map: HashMap<MeshDrawCommand, u32>,
    entries: Vec<Option<(MeshDrawCommand, u32)>>,
    free: Vec<u32>,
    /// Draw order of each bucket id (sorted by pipeline, then buffers, then material).
    ranks: Vec<u32>,
    ranks_dirty: bool,
}

impl StateBuckets {
    /// The bucket of `cmd`, created with a refcount of 1 or incremented.
    pub fn acquire(&mut self, cmd: MeshDrawCommand) -> u32 {
        if let Some(&id) = self.map.get(&cmd) {
            if let Some((_, rc)) = &mut self.entries[id as usize] {
                *rc += 1;
            }
            return id;
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.entries.push(None);
                (self.entries.len() - 1) as u32
            }
        };
        self.entries[id as usize] = Some((cmd.clone(), 1));
        self.map.insert(cmd, id);
        self.ranks_dirty = true;
        id
    }

    /// Drops one reference; the bucket is freed at zero.
    pub fn release(&mut self, id: u32) {
        let Some(Some((cmd, rc))) = self.entries.get_mut(id as usize) else { return };
        *rc -= 1;
        if *rc == 0 {
            let cmd = cmd.clone();
            self.map.remove(&cmd);
            self.entries[id as usize] = None;
            self.free.push(id);
            self.ranks_dirty = true;
        }
    }

    /// The bucket id of a command equal to `cmd`, if any (no refcount change).
    pub fn find(&self, cmd: &MeshDrawCommand) -> Option<u32> {
        self.map.get(cmd).copied()
    }

    pub fn get(&self, id: u32) -> Option<&MeshDrawCommand> {
        self.entries.get(id as usize).and_then(|e| e.as_ref()).map(|(c, _)| c)
    }

    pub fn refcount(&self, id: u32) -> u32 {
        self.entries.get(id as usize).and_then(|e| e.as_ref()).map(|(_, rc)| *rc).unwrap_or(0)
    }

    /// Live buckets.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// One past the largest id ever handed out.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Draw-order rank of every id, as of the last [`StateBuckets::update_ranks`].
    pub fn ranks(&self) -> &[u32] {
        debug_assert!(!self.ranks_dirty && self.ranks.len() == self.entries.len(), "update_ranks first");
        &self.ranks
    }

    /// Recomputes the draw-order ranks if buckets changed.
    pub fn update_ranks(&mut self) {
        if self.ranks_dirty || self.ranks.len() != self.entries.len() {
            let mut ids: Vec<u32> = (0..self.entries.len() as u32).collect();
            let key = |id: &u32| {
                self.entries[*id as usize].as_ref().map(|(c, _)| {
                    (c.pipeline.index(), c.streams[0].map(|s| s.0.index()).unwrap_or(u32::MAX), c.material_index, *id)
                })
            };
            ids.sort_by_key(|id| (key(id).is_none(), key(id)));
            self.ranks = vec![0; ids.len()];
            for (rank, id) in ids.into_iter().enumerate() {
                self.ranks[id as usize] = rank as u32;
            }
            self.ranks_dirty = false;
        }
    }
}
