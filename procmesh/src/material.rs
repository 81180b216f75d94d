//! The material a section is drawn with.
//!
//! A section's material is a [`MaterialRef`]: the number of a material the
//! game side created on the renderer (`RenderThread::create_material`
//! returns a [`renderer::MaterialId`]; `MaterialRef(id.0)` names the same
//! material, and the two convert into each other). It stays a separate type
//! so that the game-side data (and its tests) need no render thread, and so
//! the per-section table in [`ProcMeshData`](crate::ProcMeshData) keeps UE's
//! rule: changing a material recreates the proxy, as `SetMaterial` marks the
//! render state dirty. A slot without a material, or a number the renderer
//! does not know, draws with `MaterialId::DEFAULT` (the renderer resolves
//! unknown ids to the default material).

use renderer::MaterialId;

/// A renderer material, by its [`MaterialId`] number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MaterialRef(pub u32);

impl From<MaterialId> for MaterialRef {
    fn from(id: MaterialId) -> Self {
        Self(id.0)
    }
}

impl From<MaterialRef> for MaterialId {
    fn from(material: MaterialRef) -> Self {
        MaterialId(material.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn material_refs_name_renderer_ids() {
        assert_eq!(MaterialId::from(MaterialRef(7)), MaterialId(7));
        assert_eq!(MaterialRef::from(MaterialId::DEFAULT), MaterialRef(0));
    }
}
