//! Material shaders (a parent's material function with its generated
//! accessors) interned by name and source, counted by the parents using
//! them: parents with the same shader share its id, and so its pipelines.
//! One no parent uses any more is released and reported stale
//! ([`ShaderInterner::take_stale`]) so that its pipelines are destroyed;
//! its id is reused after that.

use super::{MaterialShader, MaterialShaderId};
use std::collections::HashMap;
use std::sync::Arc;

/// The interned material shaders (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct ShaderInterner {
    shaders: Vec<Option<Arc<MaterialShader>>>,
    /// Parents using each shader.
    refs: Vec<u32>,
    by_source: HashMap<Arc<MaterialShader>, MaterialShaderId>,
    stale: Vec<MaterialShaderId>,
    /// Released ids whose pipelines are gone: reusable.
    free: Vec<MaterialShaderId>,
}

impl ShaderInterner {
    /// The id of `shader`, one more parent using it.
    pub fn intern(&mut self, shader: Arc<MaterialShader>) -> MaterialShaderId {
        if let Some(&id) = self.by_source.get(&shader) {
            self.refs[id.0 as usize] += 1;
            return id;
        }
        let id = match self.free.pop() {
            Some(id) => {
                self.shaders[id.0 as usize] = Some(shader.clone());
                self.refs[id.0 as usize] = 1;
                id
            }
            None => {
                self.shaders.push(Some(shader.clone()));
                self.refs.push(1);
                MaterialShaderId(self.shaders.len() as u32 - 1)
            }
        };
        self.by_source.insert(shader, id);
        id
    }

    /// One parent fewer uses `id`; the last one releases it.
    pub fn release(&mut self, id: MaterialShaderId) {
        let i = id.0 as usize;
        self.refs[i] -= 1;
        if self.refs[i] == 0 {
            if let Some(s) = self.shaders[i].take() {
                self.by_source.remove(&s);
            }
            self.stale.push(id);
        }
    }

    /// Shaders released since the last call: pipelines made from them must
    /// be destroyed. Their ids become reusable now.
    pub fn take_stale(&mut self) -> Vec<MaterialShaderId> {
        let stale = std::mem::take(&mut self.stale);
        for &id in &stale {
            if self.shaders[id.0 as usize].is_none() && !self.free.contains(&id) {
                self.free.push(id);
            }
        }
        stale
    }

    /// The shader interned under `id` (`None` once no parent uses it).
    pub fn get(&self, id: MaterialShaderId) -> Option<&Arc<MaterialShader>> {
        self.shaders.get(id.0 as usize).and_then(|s| s.as_ref())
    }

    /// Shaders in use.
    pub fn len(&self) -> usize {
        self.shaders.iter().filter(|s| s.is_some()).count()
    }
}
