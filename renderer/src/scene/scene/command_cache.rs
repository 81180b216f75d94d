//! The scene's side of the cached mesh draw commands (UE's
//! `CacheMeshDrawCommands` on add): a slot's static batches built into
//! commands for every pass that takes them, entered into the state
//! buckets and the per-pass caches, with the materials they use noted;
//! and all of it released again when the slot is removed or re-cached.

use super::*;

impl Scene {
    /// Builds the cached commands of `slots` (parallel over primitives), then
    /// enters them into the state buckets (serial). A slot whose commands
    /// fail to build is recorded as a failed update and left without cached
    /// commands; the others are cached.
    pub(super) fn cache_slots(&mut self, slots: &[u32], device: &Device, pipelines: &PipelineLibrary) {
        for &slot in slots {
            self.note_shadow_change(slot);
        }
        let materials = &self.materials;
        let infos = &self.infos;
        let flags_ = &self.flags;
        let transforms = &self.transforms;
        let passes = &self.passes;
        // (commands, material slots used, material relevance flags)
        type Built = (Vec<(MeshPass, MeshDrawCommand, u8)>, Vec<u32>, u32);
        let built: Vec<Result<Built>> = slots
            .par_iter()
            .map(|&slot| {
                let mut out = Vec::new();
                let mut used: Vec<u32> = Vec::new();
                let mut material_flags = 0;
                if flags_[slot as usize] & flags::STATIC == 0 {
                    return Ok((out, used, material_flags));
                }
                let info = infos[slot as usize].as_ref().expect("live slot");
                let mut batches: Vec<MeshBatch> = Vec::new();
                info.proxy.draw_static_elements(&mut batches);
                let mirrored = transforms[slot as usize].determinant() < 0.0;
                for mut batch in batches {
                    batch.reverse_culling ^= mirrored;
                    if !used.contains(&batch.material.slot()) {
                        used.push(batch.material.slot());
                    }
                    material_flags |= blend_flags(materials.resolve(batch.material).blend_mode);
                    for pass in passes.all() {
                        if let Some(cmd) = build_mesh_draw_command(pass, &batch, device, materials, pipelines)? {
                            out.push((pass, cmd, batch.lod_index));
                        }
                    }
                }
                Ok((out, used, material_flags))
            })
            .collect();
        for (&slot, commands) in slots.iter().zip(built) {
            let commands = match commands {
                Ok((c, used, material_flags)) => {
                    for &m in &used {
                        self.material_users.entry(m).or_default().insert(slot);
                    }
                    let info = self.infos[slot as usize].as_mut().expect("live slot");
                    info.materials = used;
                    // The materials' relevance replaces the last caching's.
                    let f = &mut self.flags[slot as usize];
                    *f = (*f & !MATERIAL_FLAGS) | (info.declared & MATERIAL_FLAGS) | material_flags;
                    c
                }
                Err(e) => {
                    let id = self.infos[slot as usize].as_ref().map(|i| i.id);
                    self.failed(format!("caching the draw commands of {id:?}: {e}"));
                    continue;
                }
            };
            for (pass, cmd, lod) in commands {
                let bucket = self.buckets.acquire(cmd);
                let entry = CachedEntry { bucket, lod, more: false };
                let cache = &mut self.cache[pass.index()];
                if cache.first.is_empty() {
                    cache.first.reserve_exact(self.infos.len());
                    cache.first.resize(self.infos.len(), EMPTY_CACHED_ENTRY);
                }
                cache.entries += 1;
                let first = &mut cache.first[slot as usize];
                if first.bucket == BucketId::NONE {
                    *first = entry;
                } else {
                    first.more = true;
                    cache.extra.entry(PrimitiveSlot(slot)).or_default().push(entry);
                }
                self.infos[slot as usize].as_mut().expect("live slot").cached.push(bucket);
                self.counters.cached_commands_built += 1;
            }
        }
    }

    pub(super) fn uncache(&mut self, slot: u32) {
        let Some(info) = self.infos[slot as usize].as_mut() else { return };
        for bucket in info.cached.drain(..) {
            self.buckets.release(bucket);
        }
        for m in info.materials.drain(..) {
            if let Some(users) = self.material_users.get_mut(&m) {
                users.remove(&slot);
                if users.is_empty() {
                    self.material_users.remove(&m);
                }
            }
        }
        for cache in self.cache.iter_mut().filter(|c| !c.first.is_empty()) {
            let first = std::mem::replace(&mut cache.first[slot as usize], EMPTY_CACHED_ENTRY);
            let extra = cache.extra.remove(&PrimitiveSlot(slot)).map_or(0, |v| v.len());
            cache.entries -= usize::from(first.bucket != BucketId::NONE) + extra;
        }
    }
}
