//! The compile check of a material: its shader, with the generated
//! parameter accessors, composed into the base pass (the pass that
//! evaluates it) over the local vertex factory, must compile. It lives
//! with the pipelines because it composes a pass shader; the material
//! module below only lays out declarations. The scene and the render
//! thread run it before a parent material is created or set.

use super::passes::PassTable;
use super::{MeshPass, PassPipelineKey, PipelineLibrary};
use crate::error::{RendererError, Result};
use crate::material::{BlendMode, Material, MaterialShaderId, ParameterLayout};
use crate::vertex_factory::VertexFactoryType;

/// Most distinct material sources whose successful compile check is
/// remembered (the cache is emptied when full; a miss only costs a compile).
const VALIDATED_CACHE_CAP: usize = 1024;

type ValidatedKey = (String, BlendMode, bool);

/// (effective material WGSL, blend mode, two-sided) combinations that compiled.
fn validated_cache() -> &'static std::sync::Mutex<std::collections::HashSet<ValidatedKey>> {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<ValidatedKey>>> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Checks `material`: its declarations lay out ([`Material::layout`]) and
/// its shader, with the generated accessors, composed into the base pass
/// (the pass that evaluates it, with its blend mode and sidedness, over
/// the local vertex factory) compiles — otherwise
/// [`RendererError::MaterialShader`], naming the material and the
/// file:line:column of the error. Successful checks are remembered by
/// source, so checking the same WGSL again costs a hash lookup. Returns
/// the layout.
pub fn validate_material(material: &Material) -> Result<ParameterLayout> {
    let layout = material.layout()?;
    let wgsl = material.effective_wgsl(&layout);
    let key = (wgsl, material.blend_mode, material.two_sided);
    let cache = || validated_cache().lock().unwrap_or_else(|p| p.into_inner());
    if cache().contains(&key) {
        return Ok(layout);
    }
    let pipeline_key = PassPipelineKey {
        pass: MeshPass::Base,
        vertex_factory: crate::vertex_factory::VertexFactoryType::name(&crate::vertex_factory::LOCAL_VERTEX_FACTORY),
        material_shader: MaterialShaderId(0),
        blend: material.blend_mode,
        two_sided: material.two_sided,
        reverse_culling: false,
        samples: 1,
        velocity: false,
        depth_write: false,
        alpha_to_coverage: false,
    };
    let source = PipelineLibrary::compose(&pipeline_key, &crate::vertex_factory::LOCAL_VERTEX_FACTORY, &key.0);
    match rhi_vulkan::compile_wgsl(&material.shader.name, &source) {
        Ok(_) => {
            let mut c = cache();
            if c.len() >= VALIDATED_CACHE_CAP {
                c.clear();
            }
            c.insert(key);
            Ok(layout)
        }
        Err(rhi_vulkan::RhiError::Shader(mut e)) => {
            // The material's source comes first in the composed shader, so
            // its lines are the material's own; a line past it is in the
            // renderer's code around the material (e.g. a missing
            // `material_main`).
            let material_lines = material.shader.wgsl.lines().count().max(1) as u32;
            if e.line > material_lines {
                e.file = format!("{} (in the base pass composed around it)", material.shader.name);
            }
            Err(RendererError::MaterialShader { material: material.shader.name.clone(), error: e })
        }
        Err(e) => Err(e.into()),
    }
}

/// Checks that `vf` composes and compiles into every pass of `passes`, with
/// the default material, opaque and masked (and through its position-only
/// variant where a pass draws opaque batches position-only; with and
/// without velocity where the pass writes it), so a factory
/// that does not compile fails when it is registered, naming the pass:
/// [`RendererError::VertexFactoryShader`].
pub fn check_vertex_factory(vf: &'static dyn VertexFactoryType, passes: &PassTable) -> Result<()> {
    let material = Material::default();
    let wgsl = material.effective_wgsl(&material.layout()?);
    let combinations = passes.all().flat_map(|pass| {
        let velocities: &[bool] = if pass.desc().velocity.is_some() { &[false, true] } else { &[false] };
        velocities.iter().flat_map(move |&velocity| [BlendMode::Opaque, BlendMode::Masked].map(|blend| (pass, velocity, blend)))
    });
    for (pass, velocity, blend) in combinations {
        {
            let factory = match vf.position_only() {
                Some(p) if pass.desc().position_only && blend == BlendMode::Opaque => p,
                _ => vf,
            };
            let key = PassPipelineKey {
                pass,
                vertex_factory: factory.name(),
                material_shader: MaterialShaderId(0),
                blend,
                two_sided: false,
                reverse_culling: false,
                samples: 1,
                velocity,
                depth_write: pass.desc().depth.write,
                // The masked base pass under MSAA compiles with it.
                alpha_to_coverage: blend == BlendMode::Masked,
            };
            let source = PipelineLibrary::compose(&key, factory, &wgsl);
            match rhi_vulkan::compile_wgsl(factory.name(), &source) {
                Ok(_) => {}
                Err(rhi_vulkan::RhiError::Shader(error)) => {
                    return Err(RendererError::VertexFactoryShader { factory: vf.name(), pass: pass.name(), error })
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MaterialId, MaterialParameter, Scene, TextureId};
    use rhi_vulkan::SamplerDesc;

    #[test]
    fn a_material_that_does_not_compile_is_rejected_with_where() {
        let mut scene = Scene::default();
        let wgsl = "fn material_main(in: MaterialInput) -> MaterialOutput {\n    var out = default_material(in);\n    out.opacity = nope;\n    return out;\n}\n";
        let e = scene.set_material(MaterialId(1), Material::with_shader("broken.wgsl", wgsl)).unwrap_err();
        let RendererError::MaterialShader { material, error } = &e else { panic!("{e:?}") };
        assert_eq!(material, "broken.wgsl");
        assert_eq!((error.file.as_str(), error.line, error.column), ("broken.wgsl", 3, 19), "{e}");
        assert!(e.to_string().contains("broken.wgsl:3:19"), "{e}");
        assert_eq!(scene.materials.len(), 1, "nothing changed");
        let e = scene.set_material(MaterialId(1), Material::with_shader("empty.wgsl", "fn other() {}")).unwrap_err();
        assert!(e.to_string().contains("empty.wgsl (in the base pass"), "{e}");
        assert!(e.to_string().contains("material_main"), "{e}");
        // A parameter the function reads but does not declare is an error at its line.
        let e = scene.set_material(MaterialId(1), Material::with_shader("undeclared.wgsl", "fn material_main(i: MaterialInput) -> MaterialOutput {\n  var o = default_material(i);\n  o.roughness = param_rough();\n  return o;\n}")).unwrap_err();
        assert!(e.to_string().contains("undeclared.wgsl:3:"), "{e}");
        let ok = Material::with_shader("declared.wgsl", "fn material_main(i: MaterialInput) -> MaterialOutput {\n  var o = default_material(i);\n  o.roughness = param_rough();\n  o.base_color = texture_albedo(i.uv0).rgb;\n  return o;\n}")
            .with_parameter(MaterialParameter::scalar("rough", 0.2))
            .with_parameter(MaterialParameter::texture("albedo", TextureId::WHITE, SamplerDesc::default()));
        scene.set_material(MaterialId(1), ok).unwrap();
    }
}
