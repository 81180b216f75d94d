//! The compile check of a material: its shader, with the generated
//! parameter accessors, composed into every pipeline it can be drawn with
//! — each pass that evaluates it (the depth prepass and shadow depth for a
//! masked material, with and without velocity; the base pass, with and
//! without alpha to coverage; translucency for a translucent one) over
//! every vertex factory the renderer knows — must compile, and bind only
//! what that pass binds. A masked material whose code reads something only
//! the base pass declares (its lights, shadow map or environment) is
//! refused at creation, naming the depth pass, instead of being accepted
//! and never drawn. It lives with the pipelines because it composes pass
//! shaders; the material module below only lays out declarations. The
//! scene and the render thread run it before a parent material is created
//! or set.
//!
//! Compiles are what it costs (naga, on the calling thread): identical
//! composed sources (the depth prepass's and shadow depth's masked shader
//! are one) compile once, distinct ones in parallel, and each
//! combination that passed is remembered by material source, so checking
//! the same WGSL again costs hash lookups.

use super::passes::{PassMaterial, PassTable, PassTarget};
use super::{MeshBatch, MeshBatchElement, PassPipelineKey, PipelineLibrary};
use crate::error::{RendererError, Result};
use crate::material::parameters::MATERIAL_BIND_GROUP;
use crate::material::{BlendMode, Material, MaterialId, MaterialShaderId, ParameterLayout};
use crate::vertex_factory::{VertexFactoryType, MAX_VERTEX_STREAMS};
use rayon::prelude::*;
use rhi_vulkan::{CompiledShader, ReflectedBinding, RhiError, ShaderError};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Most (material source, pass, factory, variant) combinations whose
/// successful check is remembered (the cache is emptied when full; a miss
/// only costs a compile).
const VALIDATED_CACHE_CAP: usize = 16 * 1024;

/// A combination that passed: the effective material WGSL, the pass (its
/// description's address: two tables may give registered passes one
/// index), the factory's name, blend mode, two-sided, velocity, alpha to
/// coverage — everything [`PipelineLibrary::compose`] reads.
type ValidatedKey = (Arc<str>, usize, &'static str, BlendMode, bool, bool, bool);

/// What a pass pipeline binds, as its shader with the default material
/// reflects it: the bindings outside the material's group, and each entry
/// point's push-constant size.
#[derive(Debug, PartialEq)]
struct Interface {
    bindings: Vec<ReflectedBinding>,
    push_constants: Vec<(String, u32)>,
}

impl Interface {
    /// `shader`'s interface, and its bindings in the material's group.
    fn of(shader: &CompiledShader) -> (Self, Vec<ReflectedBinding>) {
        let all = shader.entry_points().first().map(|e| e.bindings.clone()).unwrap_or_default();
        let (material, bindings) = all.into_iter().partition(|b| b.group == MATERIAL_BIND_GROUP);
        let push_constants = shader.entry_points().iter().map(|e| (e.name.clone(), e.push_constant_size)).collect();
        (Self { bindings, push_constants }, material)
    }
}

#[derive(Default)]
struct Caches {
    validated: HashSet<ValidatedKey>,
    /// Per composed shader with the default material in the material's
    /// place: what the pass binds (`None`: that does not compile either).
    interfaces: HashMap<String, Option<Arc<Interface>>>,
}

fn caches() -> MutexGuard<'static, Caches> {
    static CACHES: OnceLock<Mutex<Caches>> = OnceLock::new();
    CACHES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// The vertex factories materials are checked over: the local one, the
/// built-ins a render thread notes when it starts (the skinned one,
/// [`note_vertex_factory`]: noted from above, as the skeletal module sits
/// above this one), then every factory that passed [`check_vertex_factory`]
/// (a registered one), in that order. Process-wide, as the compile cache
/// is: a factory registered on one renderer is checked for every
/// renderer's materials.
fn factories() -> MutexGuard<'static, Vec<&'static dyn VertexFactoryType>> {
    static FACTORIES: OnceLock<Mutex<Vec<&'static dyn VertexFactoryType>>> = OnceLock::new();
    FACTORIES.get_or_init(|| Mutex::new(vec![&crate::vertex_factory::LOCAL_VERTEX_FACTORY])).lock().unwrap_or_else(|p| p.into_inner())
}

/// Adds a built-in factory the renderer's shaders were checked with (the
/// skinned one) to those materials are checked over, once.
pub(crate) fn note_vertex_factory(vf: &'static dyn VertexFactoryType) {
    let mut known = factories();
    if !known.iter().any(|f| f.name() == vf.name()) {
        known.push(vf);
    }
}

/// One pipeline a material can be drawn with, as far as its shader goes.
#[derive(Clone, Copy)]
struct MaterialUse {
    key: PassPipelineKey,
    factory: &'static dyn VertexFactoryType,
}

impl MaterialUse {
    fn cache_key(&self, wgsl: &Arc<str>) -> ValidatedKey {
        let k = &self.key;
        let pass = std::ptr::from_ref(k.pass.desc()) as usize;
        (wgsl.clone(), pass, self.factory.name(), k.blend, k.two_sided, k.velocity, k.alpha_to_coverage)
    }

    /// Where, for errors: "the depth pass over the local vertex factory, with velocity".
    fn describe(&self) -> String {
        let variant = match (self.key.velocity, self.key.alpha_to_coverage) {
            (true, _) => ", with velocity",
            (_, true) => ", with alpha to coverage",
            _ => "",
        };
        format!("the {} pass over the {} vertex factory{variant}", self.key.pass.name(), self.factory.name())
    }
}

/// Every pipeline a material of `blend` and `two_sided` can be drawn with
/// in `passes` over `factories`, as the mesh pass processor
/// (`build_mesh_draw_command`) picks them: passes that take such a batch
/// (cast shadow or not) and use the batch's own material; velocity where a
/// scene-depth pass writes it; alpha to coverage for masked materials in
/// scene-color passes (under MSAA).
fn material_uses(passes: &PassTable, factories: &[&'static dyn VertexFactoryType], blend: BlendMode, two_sided: bool) -> Vec<MaterialUse> {
    let mut uses = Vec::new();
    for pass in passes.all() {
        let desc = pass.desc();
        let own = match desc.material {
            PassMaterial::Own => true,
            PassMaterial::DefaultWhenOpaque => blend != BlendMode::Opaque,
            PassMaterial::Default => false,
        };
        if !own {
            continue;
        }
        let velocities: &[bool] = if desc.target == PassTarget::SceneDepth && desc.velocity.is_some() { &[false, true] } else { &[false] };
        let coverages: &[bool] =
            if desc.target == PassTarget::SceneColor && blend == BlendMode::Masked { &[false, true] } else { &[false] };
        for &factory in factories {
            if ![true, false].into_iter().any(|cast_shadow| (desc.takes)(&probe_batch(factory, cast_shadow), blend)) {
                continue;
            }
            for &velocity in velocities {
                for &alpha_to_coverage in coverages {
                    let key = PassPipelineKey {
                        pass,
                        vertex_factory: factory.name(),
                        material_shader: MaterialShaderId(0),
                        blend,
                        two_sided,
                        reverse_culling: false,
                        samples: if alpha_to_coverage { 4 } else { 1 },
                        velocity,
                        depth_write: desc.depth.write,
                        alpha_to_coverage,
                    };
                    uses.push(MaterialUse { key, factory });
                }
            }
        }
    }
    uses
}

/// A batch of `factory` for asking a pass whether it takes it.
fn probe_batch(factory: &'static dyn VertexFactoryType, cast_shadow: bool) -> MeshBatch {
    MeshBatch {
        vertex_factory: factory,
        streams: [None; MAX_VERTEX_STREAMS],
        element: MeshBatchElement { index_buffer: None, first_index: 0, count: 3, base_vertex: 0, instance_count: 1, indirect: None },
        material: MaterialId::DEFAULT,
        lod_index: 0,
        cast_shadow,
        reverse_culling: false,
        vertex_factory_bindings: None,
    }
}

/// Checks `material`: its declarations lay out ([`Material::layout`]) and
/// its shader, with the generated accessors, composed into every pipeline
/// of the built-in passes it can be drawn with (see the module docs), over
/// every vertex factory known (built in or registered), compiles and binds
/// only what the pass binds — otherwise [`RendererError::MaterialShader`],
/// naming the material, the file:line:column of the error and the pass
/// and factory ("in the depth pass over the local vertex factory: …").
/// Successful checks are remembered by source, so checking the same WGSL
/// again costs hash lookups. Returns the layout.
pub fn validate_material(material: &Material) -> Result<ParameterLayout> {
    validate_material_in(material, &PassTable::default())
}

/// [`validate_material`] over the passes of `passes` (a renderer's table,
/// with the passes registered on it) instead of the built-in ones.
pub fn validate_material_in(material: &Material, passes: &PassTable) -> Result<ParameterLayout> {
    let layout = material.layout()?;
    let wgsl: Arc<str> = material.effective_wgsl(&layout).into();
    let factories = factories().clone();
    let uses = material_uses(passes, &factories, material.blend_mode, material.two_sided);
    let missing: Vec<MaterialUse> = {
        let c = caches();
        uses.into_iter().filter(|u| !c.validated.contains(&u.cache_key(&wgsl))).collect()
    };
    if missing.is_empty() {
        return Ok(layout);
    }
    check_uses(material, &layout, &wgsl, &missing)?;
    let mut c = caches();
    if c.validated.len() + missing.len() > VALIDATED_CACHE_CAP {
        c.validated.clear();
    }
    c.validated.extend(missing.iter().map(|u| u.cache_key(&wgsl)));
    Ok(layout)
}

/// Compiles `wgsl` composed for each of `uses` (each distinct source once,
/// in parallel) and checks what each binds; the first use, in order, that
/// fails is the error.
fn check_uses(material: &Material, layout: &ParameterLayout, wgsl: &str, uses: &[MaterialUse]) -> Result<()> {
    let sources: Vec<String> = uses.iter().map(|u| PipelineLibrary::compose(&u.key, u.factory, wgsl)).collect();
    let mut distinct: HashMap<&str, usize> = HashMap::default();
    let mut unique: Vec<&str> = Vec::new();
    let index: Vec<usize> = sources
        .iter()
        .map(|s| {
            *distinct.entry(s.as_str()).or_insert_with(|| {
                unique.push(s);
                unique.len() - 1
            })
        })
        .collect();
    let mut compiled: Vec<std::result::Result<CompiledShader, RhiError>> =
        unique.par_iter().map(|s| rhi_vulkan::compile_wgsl(&material.shader.name, s)).collect();
    let material_group: Vec<(u32, rhi_vulkan::BindingType)> =
        layout.bind_group_layout().entries.iter().map(|e| (e.binding, e.ty)).collect();
    for (u, &k) in uses.iter().zip(&index) {
        if compiled[k].is_err() {
            return Err(match compiled.swap_remove(k) {
                Err(RhiError::Shader(e)) => shader_error(material, u, *e),
                Err(e) => e.into(),
                Ok(_) => unreachable!("an error"),
            });
        }
        let Ok(shader) = &compiled[k] else { unreachable!("compiled") };
        if let Some(problem) = binding_problem(u, shader, &material_group) {
            let message = format!("in {}: {problem}", u.describe());
            let error = ShaderError { file: material.shader.name.clone(), line: 0, column: 0, message };
            return Err(RendererError::MaterialShader { material: material.shader.name.clone(), error: Box::new(error) });
        }
    }
    Ok(())
}

/// What `shader` (the material composed for `at`) declares that its
/// pipeline could not bind, if anything: in the material's group, other
/// than `material_group` (its texture parameters' bindings); elsewhere,
/// other than what the pass binds ([`pass_interface`]).
fn binding_problem(at: &MaterialUse, shader: &CompiledShader, material_group: &[(u32, rhi_vulkan::BindingType)]) -> Option<String> {
    let (got, in_group) = Interface::of(shader);
    let declared: Vec<_> = in_group.iter().map(|b| (b.binding, b.ty)).collect();
    if declared != material_group {
        let holds = if material_group.is_empty() { "nothing".to_string() } else { format!("bindings 0..{}", material_group.len()) };
        return Some(format!(
            "it declares {} in group {MATERIAL_BIND_GROUP}, where its bind group holds {holds} (its texture parameters)",
            describe_bindings(&in_group)
        ));
    }
    pass_interface(at).and_then(|want| interface_problem(&want, &got))
}

/// The error of a composed shader that does not compile, said as the
/// material's: the material's source comes first in the composed shader,
/// so its lines are the material's own; a line past it is in the
/// renderer's code around the material (e.g. a missing `material_main`).
fn shader_error(material: &Material, at: &MaterialUse, mut e: ShaderError) -> RendererError {
    let material_lines = material.shader.wgsl.lines().count().max(1) as u32;
    if e.line > material_lines {
        e.file = format!("{} (in the {} pass composed around it)", material.shader.name, at.key.pass.name());
    }
    e.message = format!("in {}: {}", at.describe(), e.message);
    RendererError::MaterialShader { material: material.shader.name.clone(), error: Box::new(e) }
}

/// What the pipeline of `at` binds: its shader composed with the default
/// material reflected (once per distinct source); `None` when that does
/// not compile either (the factory's fault, reported when it is registered).
fn pass_interface(at: &MaterialUse) -> Option<Arc<Interface>> {
    let default = Material::default();
    let wgsl = default.effective_wgsl(&default.layout().expect("the default material lays out"));
    let source = PipelineLibrary::compose(&at.key, at.factory, &wgsl);
    if let Some(known) = caches().interfaces.get(&source) {
        return known.clone();
    }
    let interface = rhi_vulkan::compile_wgsl("default material", &source).ok().map(|s| Arc::new(Interface::of(&s).0));
    caches().interfaces.insert(source, interface.clone());
    interface
}

/// What the material's shader binds or pushes that the pass's does not
/// (or the other way round), if anything.
fn interface_problem(want: &Interface, got: &Interface) -> Option<String> {
    let extra: Vec<ReflectedBinding> = got.bindings.iter().filter(|b| !want.bindings.contains(b)).copied().collect();
    let missing: Vec<ReflectedBinding> = want.bindings.iter().filter(|b| !got.bindings.contains(b)).copied().collect();
    match (extra.is_empty(), missing.is_empty()) {
        (true, true) => {}
        (false, true) => return Some(format!("it declares {}, which the pass does not bind", describe_bindings(&extra))),
        (true, false) => return Some(format!("its shader lacks the pass's {}", describe_bindings(&missing))),
        (false, false) => {
            return Some(format!("it declares {} where the pass binds {}", describe_bindings(&extra), describe_bindings(&missing)))
        }
    }
    if want.push_constants != got.push_constants {
        return Some(format!("its push constants {:?} are not the pass's {:?}", got.push_constants, want.push_constants));
    }
    None
}

fn describe_bindings(bindings: &[ReflectedBinding]) -> String {
    let each: Vec<String> = bindings.iter().map(|b| format!("@group({}) @binding({}) ({:?})", b.group, b.binding, b.ty)).collect();
    each.join(", ")
}

/// Checks that `vf` composes and compiles into every pass of `passes`, with
/// the default material, opaque and masked (and through its position-only
/// variant where a pass draws opaque batches position-only; with and
/// without velocity where the pass writes it), so a factory
/// that does not compile fails when it is registered, naming the pass:
/// [`RendererError::VertexFactoryShader`]. A factory that passes is one
/// that materials created from then on are checked over
/// ([`validate_material`]).
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
    note_vertex_factory(vf);
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

    /// A material function whose body is `body` (`i`: the input, `o`: the output).
    fn body(name: &str, decls: &str, body: &str) -> Material {
        Material::with_shader(
            name,
            &format!("{decls}\nfn material_main(i: MaterialInput) -> MaterialOutput {{\n    var o = default_material(i);\n    {body}\n    return o;\n}}\n"),
        )
    }

    #[test]
    fn a_masked_material_is_compiled_for_the_depth_passes_too() {
        // The environment cube is the base pass's (group 1): fine there, absent from the depth passes.
        let reads_environment = "o.opacity = textureSampleLevel(environment_specular, environment_sampler, i.world_normal, 0.0).a;";
        let opaque = body("env_opaque.wgsl", "", reads_environment);
        validate_material(&opaque).expect("the base pass alone evaluates an opaque material");
        let e = validate_material(&opaque.clone().with_blend(BlendMode::Masked)).unwrap_err();
        let RendererError::MaterialShader { error, .. } = &e else { panic!("{e:?}") };
        assert_eq!((error.file.as_str(), error.line), ("env_opaque.wgsl", 4), "{e}");
        assert!(error.message.starts_with("in the depth pass over the local vertex factory"), "{e}");
        validate_material(&opaque.clone().with_blend(BlendMode::Translucent)).expect("the translucency pass declares the environment");
    }

    #[test]
    fn a_material_binding_what_its_passes_do_not_is_refused() {
        let extra_pass_binding =
            body("group1.wgsl", "@group(1) @binding(40) var<storage, read> extra: array<f32>;", "o.roughness = extra[0];");
        let e = validate_material(&extra_pass_binding).unwrap_err();
        assert!(e.to_string().contains("in the base pass over the local vertex factory: it declares @group(1) @binding(40)"), "{e}");
        let extra_material_binding = body(
            "group2.wgsl",
            "@group(2) @binding(7) var extra_texture: texture_2d<f32>;",
            "o.roughness = textureLoad(extra_texture, vec2<i32>(0), 0).r;",
        );
        let e = validate_material(&extra_material_binding).unwrap_err();
        assert!(e.to_string().contains("@group(2) @binding(7)"), "{e}");
    }

    #[test]
    fn every_pipeline_a_material_can_be_drawn_with_is_listed_once() {
        let passes = PassTable::default();
        let factories: Vec<&'static dyn VertexFactoryType> = vec![&crate::vertex_factory::LOCAL_VERTEX_FACTORY];
        let names = |blend| material_uses(&passes, &factories, blend, false).iter().map(MaterialUse::describe).collect::<Vec<_>>();
        assert_eq!(names(BlendMode::Opaque), ["the base pass over the local vertex factory"]);
        assert_eq!(
            names(BlendMode::Masked),
            [
                "the depth pass over the local vertex factory",
                "the depth pass over the local vertex factory, with velocity",
                "the shadow pass over the local vertex factory",
                "the base pass over the local vertex factory",
                "the base pass over the local vertex factory, with alpha to coverage",
            ]
        );
        assert_eq!(names(BlendMode::Translucent), ["the translucency pass over the local vertex factory"]);
        assert_eq!(names(BlendMode::Additive), ["the translucency pass over the local vertex factory"]);
    }
}
