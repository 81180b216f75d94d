//! The game thread's view of the materials it has created: the ids it
//! handed out, each parent's parameter layout and each instance's
//! overrides — enough to refuse a bad request with a typed error before
//! anything is queued for the render thread (which then cannot fail on
//! it), so "bad input changes nothing" holds across the two threads.
//!
//! Every check and record costs what it touches, never the number of
//! materials: the mirror is a table by slot (ids are slots, as the render
//! thread's tables are), and each parent lists its instances' slots, each
//! instance knowing its place in that list, so a destroy looks up one
//! entry and unlinks one.

use super::{Material, MaterialId, MaterialIds, MaterialInstance, ParameterLayout, ParameterValue};
use crate::error::{RendererError, Result};
use std::sync::Arc;

/// What the game side knows of a live material.
#[derive(Clone, Debug)]
enum Known {
    Parent {
        layout: Arc<ParameterLayout>,
        /// The slots of its live instances, in no particular order.
        instances: Vec<u32>,
    },
    Instance {
        instance: MaterialInstance,
        /// Its place in its parent's `instances`.
        at: usize,
    },
}

/// Game-side mirror of the render thread's [`super::MaterialRegistry`].
#[derive(Debug)]
pub(crate) struct MaterialMirror {
    pub ids: MaterialIds,
    /// Per slot: the live material's id and what is known of it.
    known: Vec<Option<(MaterialId, Known)>>,
}

impl Default for MaterialMirror {
    fn default() -> Self {
        let layout = Material::default().layout().expect("the default material lays out");
        let default = Known::Parent { layout: Arc::new(layout), instances: Vec::new() };
        Self { ids: MaterialIds::default(), known: vec![Some((MaterialId::DEFAULT, default))] }
    }
}

impl MaterialMirror {
    fn get(&self, id: MaterialId) -> Option<&Known> {
        match self.known.get(id.slot() as usize) {
            Some(Some((live, k))) if *live == id => Some(k),
            _ => None,
        }
    }

    fn get_mut(&mut self, id: MaterialId) -> Option<&mut Known> {
        match self.known.get_mut(id.slot() as usize) {
            Some(Some((live, k))) if *live == id => Some(k),
            _ => None,
        }
    }

    /// A parent's live instances (from its list).
    fn instances_of(&self, parent: MaterialId) -> impl Iterator<Item = &MaterialInstance> {
        let slots = match self.get(parent) {
            Some(Known::Parent { instances, .. }) => instances.as_slice(),
            _ => &[],
        };
        slots.iter().filter_map(|&s| match &self.known[s as usize] {
            Some((_, Known::Instance { instance, .. })) => Some(instance),
            _ => None,
        })
    }

    /// Takes `id` out of its parent's list if it is an instance (the last
    /// of the list takes its place).
    fn unlink(&mut self, id: MaterialId) {
        let Some(Known::Instance { instance, at }) = self.get(id) else { return };
        let (parent, at) = (instance.parent, *at);
        let Some(Known::Parent { instances, .. }) = self.get_mut(parent) else { return };
        instances.swap_remove(at);
        let moved = instances.get(at).copied();
        if let Some(Some((_, Known::Instance { at: moved_at, .. }))) = moved.and_then(|m| self.known.get_mut(m as usize)) {
            *moved_at = at;
        }
    }

    /// Puts `known` in `id`'s slot.
    fn put(&mut self, id: MaterialId, known: Known) {
        let i = id.slot() as usize;
        if self.known.len() <= i {
            self.known.resize_with(i + 1, || None);
        }
        self.known[i] = Some((id, known));
    }

    /// Checks a parent for `id` (`None`: a new one): the id, its declarations'
    /// layout and its instances against them; returns the layout. The
    /// caller compiles its shader ([`crate::mesh_pass::validate_material`]).
    pub fn check_parent(&self, id: Option<MaterialId>, material: &Material) -> Result<ParameterLayout> {
        if let Some(id) = id {
            match self.get(id) {
                None => return Err(RendererError::UnknownMaterial(id)),
                Some(Known::Instance { .. }) => {
                    return Err(RendererError::InvalidMaterial {
                        material: id.to_string(),
                        reason: "it is a material instance; set it with an instance".into(),
                    })
                }
                Some(Known::Parent { .. }) => {}
            }
        }
        let layout = material.layout()?;
        if let Some(id) = id {
            for inst in self.instances_of(id) {
                inst.check(&layout)?;
            }
        }
        Ok(layout)
    }

    /// Checks an instance for `id` (`None`: a new one).
    pub fn check_instance(&self, id: Option<MaterialId>, instance: &MaterialInstance) -> Result<()> {
        if let Some(id) = id {
            match self.get(id) {
                None => return Err(RendererError::UnknownMaterial(id)),
                Some(Known::Parent { .. }) => {
                    return Err(RendererError::InvalidMaterial {
                        material: id.to_string(),
                        reason: "it is a parent material; set it with a material".into(),
                    })
                }
                Some(Known::Instance { .. }) => {}
            }
        }
        match self.get(instance.parent) {
            Some(Known::Parent { layout, .. }) => instance.check(layout),
            Some(Known::Instance { .. }) => Err(RendererError::InvalidMaterial {
                material: id.map_or("a new instance".into(), |i| i.to_string()),
                reason: format!("its parent {} is an instance", instance.parent),
            }),
            None => Err(RendererError::UnknownMaterial(instance.parent)),
        }
    }

    /// Checks a parameter change of a live material.
    pub fn check_parameter(&self, id: MaterialId, name: &str, value: &ParameterValue) -> Result<()> {
        let layout = match self.get(id) {
            Some(Known::Parent { layout, .. }) => layout,
            Some(Known::Instance { instance, .. }) => match self.get(instance.parent) {
                Some(Known::Parent { layout, .. }) => layout,
                _ => return Err(RendererError::UnknownMaterial(instance.parent)),
            },
            None => return Err(RendererError::UnknownMaterial(id)),
        };
        layout.check_override(name, value).map(|_| ()).map_err(|reason| RendererError::InvalidMaterial { material: id.to_string(), reason })
    }

    /// Checks that `id` may be destroyed: live, not the default, no instances.
    pub fn check_destroy(&self, id: MaterialId) -> Result<()> {
        match self.get(id) {
            _ if id == MaterialId::DEFAULT => Err(RendererError::UnknownMaterial(id)),
            None => Err(RendererError::UnknownMaterial(id)),
            Some(Known::Parent { instances, .. }) if !instances.is_empty() => {
                Err(RendererError::MaterialInUse { material: id, instances: instances.len() as u32 })
            }
            Some(_) => Ok(()),
        }
    }

    /// Records a parent set under `id` (checked).
    pub fn note_parent(&mut self, id: MaterialId, layout: ParameterLayout) {
        // An edited parent keeps its instances.
        let instances = match self.get_mut(id) {
            Some(Known::Parent { instances, .. }) => std::mem::take(instances),
            _ => Vec::new(),
        };
        self.unlink(id);
        self.put(id, Known::Parent { layout: Arc::new(layout), instances });
    }

    /// Records an instance set under `id` (checked).
    pub fn note_instance(&mut self, id: MaterialId, instance: MaterialInstance) {
        self.unlink(id);
        let Some(Known::Parent { instances, .. }) = self.get_mut(instance.parent) else {
            debug_assert!(false, "checked: {} is a live parent", instance.parent);
            return;
        };
        instances.push(id.slot());
        let at = instances.len() - 1;
        self.put(id, Known::Instance { instance, at });
    }

    /// Records a parameter change (an instance keeps its overrides).
    pub fn note_parameter(&mut self, id: MaterialId, name: &str, value: ParameterValue) {
        if let Some(Known::Instance { instance, .. }) = self.get_mut(id) {
            instance.overrides.retain(|(n, _)| n != name);
            instance.overrides.push((name.into(), value));
        }
    }

    /// Records a destruction (checked).
    pub fn note_destroyed(&mut self, id: MaterialId) {
        self.unlink(id);
        if self.get(id).is_some() {
            self.known[id.slot() as usize] = None;
        }
        let released = self.ids.release(id);
        debug_assert!(released);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MaterialParameter;

    #[test]
    fn a_parents_instances_follow_their_creation_reparenting_and_destruction() {
        let mut m = MaterialMirror::default();
        let parent = |m: &mut MaterialMirror| {
            let id = m.ids.take().unwrap();
            let material = Material::default().with_parameter(MaterialParameter::scalar("x", 1.0));
            let layout = m.check_parent(None, &material).unwrap();
            m.note_parent(id, layout);
            id
        };
        let (a, b) = (parent(&mut m), parent(&mut m));
        let inst = m.ids.take().unwrap();
        m.note_instance(inst, MaterialInstance::of(a).with_scalar("x", 2.0));
        assert!(matches!(m.check_destroy(a), Err(RendererError::MaterialInUse { instances: 1, .. })));
        // An edit that drops the parameter the instance overrides is refused.
        assert!(m.check_parent(Some(a), &Material::default()).is_err());
        m.note_instance(inst, MaterialInstance::of(b).with_scalar("x", 3.0));
        m.check_destroy(a).expect("its instance moved to b");
        m.check_parent(Some(a), &Material::default()).expect("no instance of a is left to fit");
        assert!(matches!(m.check_destroy(b), Err(RendererError::MaterialInUse { instances: 1, .. })));
        m.check_destroy(inst).unwrap();
        m.note_destroyed(inst);
        m.check_destroy(b).expect("its instance is gone");
        assert!(m.instances_of(a).chain(m.instances_of(b)).next().is_none());
        // Three instances of `a`; the first goes, the last takes its place in a's list.
        let three: Vec<MaterialId> = (0..3)
            .map(|k| {
                let id = m.ids.take().unwrap();
                m.note_instance(id, MaterialInstance::of(a).with_scalar("x", k as f32));
                id
            })
            .collect();
        m.note_destroyed(three[0]);
        m.note_instance(three[2], MaterialInstance::of(a).with_scalar("x", 7.0));
        m.note_destroyed(three[1]);
        let left: Vec<_> = m.instances_of(a).map(|i| i.overrides.clone()).collect();
        assert_eq!(left, vec![vec![("x".to_string(), ParameterValue::Scalar(7.0))]]);
        assert!(matches!(m.check_destroy(a), Err(RendererError::MaterialInUse { instances: 1, .. })));
        // An edit of `a` keeps it.
        let layout = m.check_parent(Some(a), &Material::default().with_parameter(MaterialParameter::scalar("x", 0.0))).unwrap();
        m.note_parent(a, layout);
        assert!(matches!(m.check_destroy(a), Err(RendererError::MaterialInUse { instances: 1, .. })));
        m.note_destroyed(three[2]);
        m.check_destroy(a).unwrap();
    }
}
