//! The game thread's view of the materials it has created: the ids it
//! handed out, each parent's parameter layout and each instance's
//! overrides — enough to refuse a bad request with a typed error before
//! anything is queued for the render thread (which then cannot fail on
//! it), so "bad input changes nothing" holds across the two threads.

use super::{Material, MaterialId, MaterialIds, MaterialInstance, ParameterLayout, ParameterValue};
use crate::error::{RendererError, Result};
use std::collections::HashMap;
use std::sync::Arc;

/// What the game side knows of a live material.
#[derive(Clone, Debug)]
enum Known {
    Parent(Arc<ParameterLayout>),
    Instance(MaterialInstance),
}

/// Game-side mirror of the render thread's [`super::MaterialRegistry`].
#[derive(Debug)]
pub(crate) struct MaterialMirror {
    pub ids: MaterialIds,
    known: HashMap<MaterialId, Known>,
}

impl Default for MaterialMirror {
    fn default() -> Self {
        let layout = Material::default().layout().expect("the default material lays out");
        Self { ids: MaterialIds::default(), known: HashMap::from([(MaterialId::DEFAULT, Known::Parent(Arc::new(layout)))]) }
    }
}

impl MaterialMirror {
    fn instances_of(&self, parent: MaterialId) -> impl Iterator<Item = &MaterialInstance> {
        self.known.values().filter_map(move |k| match k {
            Known::Instance(i) if i.parent == parent => Some(i),
            _ => None,
        })
    }

    /// Checks a parent for `id` (`None`: a new one): the id, its declarations'
    /// layout and its instances against them; returns the layout. The
    /// caller compiles its shader ([`crate::mesh_pass::validate_material`]).
    pub fn check_parent(&self, id: Option<MaterialId>, material: &Material) -> Result<ParameterLayout> {
        if let Some(id) = id {
            match self.known.get(&id) {
                None => return Err(RendererError::UnknownMaterial(id)),
                Some(Known::Instance(_)) => {
                    return Err(RendererError::InvalidMaterial {
                        material: id.to_string(),
                        reason: "it is a material instance; set it with an instance".into(),
                    })
                }
                Some(Known::Parent(_)) => {}
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
            match self.known.get(&id) {
                None => return Err(RendererError::UnknownMaterial(id)),
                Some(Known::Parent(_)) => {
                    return Err(RendererError::InvalidMaterial {
                        material: id.to_string(),
                        reason: "it is a parent material; set it with a material".into(),
                    })
                }
                Some(Known::Instance(_)) => {}
            }
        }
        match self.known.get(&instance.parent) {
            Some(Known::Parent(layout)) => instance.check(layout),
            Some(Known::Instance(_)) => Err(RendererError::InvalidMaterial {
                material: id.map_or("a new instance".into(), |i| i.to_string()),
                reason: format!("its parent {} is an instance", instance.parent),
            }),
            None => Err(RendererError::UnknownMaterial(instance.parent)),
        }
    }

    /// Checks a parameter change of a live material.
    pub fn check_parameter(&self, id: MaterialId, name: &str, value: &ParameterValue) -> Result<()> {
        let layout = match self.known.get(&id) {
            Some(Known::Parent(l)) => l,
            Some(Known::Instance(i)) => match self.known.get(&i.parent) {
                Some(Known::Parent(l)) => l,
                _ => return Err(RendererError::UnknownMaterial(i.parent)),
            },
            None => return Err(RendererError::UnknownMaterial(id)),
        };
        layout.check_override(name, value).map(|_| ()).map_err(|reason| RendererError::InvalidMaterial { material: id.to_string(), reason })
    }

    /// Checks that `id` may be destroyed: live, not the default, no instances.
    pub fn check_destroy(&self, id: MaterialId) -> Result<()> {
        if id == MaterialId::DEFAULT || !self.known.contains_key(&id) {
            return Err(RendererError::UnknownMaterial(id));
        }
        let instances = self.instances_of(id).count() as u32;
        if instances > 0 {
            return Err(RendererError::MaterialInUse { material: id, instances });
        }
        Ok(())
    }

    /// Records a parent set under `id` (checked).
    pub fn note_parent(&mut self, id: MaterialId, layout: ParameterLayout) {
        self.known.insert(id, Known::Parent(Arc::new(layout)));
    }

    /// Records an instance set under `id` (checked).
    pub fn note_instance(&mut self, id: MaterialId, instance: MaterialInstance) {
        self.known.insert(id, Known::Instance(instance));
    }

    /// Records a parameter change (an instance keeps its overrides).
    pub fn note_parameter(&mut self, id: MaterialId, name: &str, value: ParameterValue) {
        if let Some(Known::Instance(i)) = self.known.get_mut(&id) {
            i.overrides.retain(|(n, _)| n != name);
            i.overrides.push((name.into(), value));
        }
    }

    /// Records a destruction (checked).
    pub fn note_destroyed(&mut self, id: MaterialId) {
        self.known.remove(&id);
        let released = self.ids.release(id);
        debug_assert!(released);
    }
}
