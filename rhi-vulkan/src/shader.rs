//! WGSL shaders: naga parses and validates them, reflects their bindings and
//! push-constant ("immediate") block, and writes SPIR-V 1.3 for Vulkan.
//!
//! naga 30 calls push constants *immediates* (`var<immediate>`); the
//! validator needs `Capabilities::IMMEDIATES` for them. The SPIR-V writer's
//! `ADJUST_COORDINATE_SPACE` flag (WebGPU's Y flip) stays off: shaders see
//! Vulkan's clip space, y down.

use crate::device::{read, write, Device, Retired};
use crate::error::{vk_err, Result, RhiError, ShaderError};
use crate::handle::Handle;
use crate::types::ShaderStages;
use ash::vk;

/// The kind of resource a binding expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindingType {
    /// `var<uniform>`.
    UniformBuffer,
    /// `var<storage>`.
    StorageBuffer {
        /// `var<storage, read>` (`true`) or `var<storage, read_write>`.
        read_only: bool,
    },
    /// A `texture_2d` read through a sampler.
    SampledTexture,
    /// A `texture_cube` read through a sampler (a
    /// [`crate::TextureDimension::Cube`] texture).
    SampledCubeTexture,
    /// A depth texture sampled with a comparison sampler.
    DepthTexture,
    /// A `texture_storage_2d` read or written by compute.
    StorageTexture,
    /// A `sampler`.
    Sampler,
    /// A `sampler_comparison`.
    ComparisonSampler,
}

/// One `@group(g) @binding(b)` resource of an entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReflectedBinding {
    /// The `@group(g)` number.
    pub group: u32,
    /// The `@binding(b)` number.
    pub binding: u32,
    /// The kind of resource it expects.
    pub ty: BindingType,
}

/// A vertex-shader input: its `@location(n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VertexInput {
    /// The `@location(n)` number.
    pub location: u32,
}

/// The interface of one entry point: the module's resource bindings and
/// push-constant block (declared, whether or not this entry point reads them)
/// and the entry point's own vertex inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryPointReflection {
    /// The entry point's name.
    pub name: String,
    /// Its stage (one flag).
    pub stage: ShaderStages,
    /// The module's resource bindings.
    pub bindings: Vec<ReflectedBinding>,
    /// Size in bytes of the `var<immediate>` block this entry point uses (0: none).
    pub push_constant_size: u32,
    /// The locations a vertex entry point reads (empty for other stages).
    pub vertex_inputs: Vec<VertexInput>,
    /// `@workgroup_size` of a compute entry point, as naga reports it.
    pub workgroup_size: [u32; 3],
}

/// A shader compiled from WGSL: SPIR-V words plus reflection.
///
/// Only [`compile_wgsl`] makes one (the fields are private), so
/// [`Device::create_shader_from_compiled`] can trust that the SPIR-V is what
/// naga wrote for a validated module and that the reflection describes it:
/// pipeline layouts are built from that reflection.
///
/// ```compile_fail
/// // Made-up SPIR-V and reflection do not compile:
/// let fake = rhi_vulkan::CompiledShader { name: "x".into(), spirv: vec![], entry_points: vec![] };
/// ```
#[derive(Clone, Debug)]
pub struct CompiledShader {
    name: String,
    spirv: Vec<u32>,
    entry_points: Vec<EntryPointReflection>,
}

impl CompiledShader {
    /// The file or label the source came from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The SPIR-V words (read-only: a module is made from them as they are).
    pub fn spirv(&self) -> &[u32] {
        &self.spirv
    }

    /// The reflected interface of every entry point.
    pub fn entry_points(&self) -> &[EntryPointReflection] {
        &self.entry_points
    }

    /// The reflection of the entry point named `name`, if there is one.
    pub fn entry_point(&self, name: &str) -> Option<&EntryPointReflection> {
        self.entry_points.iter().find(|e| e.name == name)
    }
}

fn shader_error(file: &str, source: &str, loc: Option<naga::SourceLocation>, message: String) -> RhiError {
    let (line, column) = loc.map(|l| (l.line_number, l.line_position)).unwrap_or((0, 0));
    let _ = source;
    RhiError::Shader(Box::new(ShaderError { file: file.into(), line, column, message }))
}

/// Parses, validates and compiles WGSL. `file` names the source in errors.
pub fn compile_wgsl(file: &str, source: &str) -> Result<CompiledShader> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| shader_error(file, source, e.location(source), e.emit_to_string_with_path(source, file)))?;
    let mut validator = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::IMMEDIATES);
    let info = validator
        .validate(&module)
        .map_err(|e| shader_error(file, source, e.location(source), e.emit_to_string_with_path(source, file)))?;
    let options = naga::back::spv::Options { lang_version: (1, 3), flags: naga::back::spv::WriterFlags::empty(), ..Default::default() };
    let spirv = naga::back::spv::write_vec(&module, &info, &options, None)
        .map_err(|e| shader_error(file, source, None, format!("SPIR-V generation failed: {e}")))?;
    let entry_points = reflect(&module);
    Ok(CompiledShader { name: file.into(), spirv, entry_points })
}

fn reflect(module: &naga::Module) -> Vec<EntryPointReflection> {
    let mut layouter = naga::proc::Layouter::default();
    let _ = layouter.update(module.to_ctx());
    module
        .entry_points
        .iter()
        .map(|ep| {
            let stage = match ep.stage {
                naga::ShaderStage::Vertex => ShaderStages::VERTEX,
                naga::ShaderStage::Fragment => ShaderStages::FRAGMENT,
                _ => ShaderStages::COMPUTE,
            };
            let mut bindings = Vec::new();
            let mut push_constant_size = 0;
            // Every resource the *module* declares goes into the layout, used
            // by this entry point or not: pipelines built from modules that
            // share declarations (the renderer's pass shaders) then get
            // identical, compatible layouts and can share bind groups.
            for (_, var) in module.global_variables.iter() {
                if var.space == naga::AddressSpace::Immediate {
                    push_constant_size = layouter[var.ty].size;
                    continue;
                }
                let Some(rb) = &var.binding else { continue };
                let ty = match var.space {
                    naga::AddressSpace::Uniform => BindingType::UniformBuffer,
                    naga::AddressSpace::Storage { access } => {
                        BindingType::StorageBuffer { read_only: !access.contains(naga::StorageAccess::STORE) }
                    }
                    naga::AddressSpace::Handle => match module.types[var.ty].inner {
                        naga::TypeInner::Sampler { comparison: true } => BindingType::ComparisonSampler,
                        naga::TypeInner::Sampler { comparison: false } => BindingType::Sampler,
                        naga::TypeInner::Image { class: naga::ImageClass::Storage { .. }, .. } => BindingType::StorageTexture,
                        naga::TypeInner::Image { class: naga::ImageClass::Depth { .. }, .. } => BindingType::DepthTexture,
                        naga::TypeInner::Image { dim: naga::ImageDimension::Cube, .. } => BindingType::SampledCubeTexture,
                        _ => BindingType::SampledTexture,
                    },
                    _ => continue,
                };
                bindings.push(ReflectedBinding { group: rb.group, binding: rb.binding, ty });
            }
            bindings.sort_by_key(|b| (b.group, b.binding));
            let mut vertex_inputs = Vec::new();
            if ep.stage == naga::ShaderStage::Vertex {
                for arg in &ep.function.arguments {
                    collect_locations(module, arg.ty, arg.binding.as_ref(), &mut vertex_inputs);
                }
            }
            EntryPointReflection {
                name: ep.name.clone(),
                stage,
                bindings,
                push_constant_size,
                vertex_inputs,
                workgroup_size: ep.workgroup_size,
            }
        })
        .collect()
}

fn collect_locations(module: &naga::Module, ty: naga::Handle<naga::Type>, binding: Option<&naga::Binding>, out: &mut Vec<VertexInput>) {
    match binding {
        Some(naga::Binding::Location { location, .. }) => out.push(VertexInput { location: *location }),
        Some(naga::Binding::BuiltIn(_)) => {}
        None => {
            if let naga::TypeInner::Struct { members, .. } = &module.types[ty].inner {
                for m in members {
                    collect_locations(module, m.ty, m.binding.as_ref(), out);
                }
            }
        }
    }
}

/// Handle to a shader module owned by the device.
pub type ShaderHandle = Handle<ShaderEntry>;

#[doc(hidden)]
pub struct ShaderEntry {
    pub(crate) raw: vk::ShaderModule,
    pub(crate) compiled: CompiledShader,
}

impl ShaderEntry {
    pub(crate) fn destroy(self, device: &Device) {
        // SAFETY: modules are only read during pipeline creation; destroyed once.
        unsafe { device.raw.destroy_shader_module(self.raw, None) };
    }
}

impl Device {
    /// Compiles WGSL and creates a shader module from it.
    pub fn create_shader(&self, file: &str, wgsl: &str) -> Result<ShaderHandle> {
        let compiled = compile_wgsl(file, wgsl)?;
        self.create_shader_from_compiled(compiled)
    }

    /// Creates a shader module from a shader [`compile_wgsl`] made (compile
    /// once, create on several devices).
    pub fn create_shader_from_compiled(&self, compiled: CompiledShader) -> Result<ShaderHandle> {
        let info = vk::ShaderModuleCreateInfo::default().code(&compiled.spirv);
        // SAFETY: `spirv` is valid SPIR-V produced by naga from a validated module.
        let raw = unsafe { self.raw.create_shader_module(&info, None) }.map_err(vk_err("vkCreateShaderModule"))?;
        Ok(write(&self.resources.shaders).insert(ShaderEntry { raw, compiled }))
    }

    /// The reflection of one entry point of a shader.
    pub fn shader_entry_point(&self, shader: ShaderHandle, entry: &str) -> Result<EntryPointReflection> {
        let shaders = read(&self.resources.shaders);
        let s = shaders.get(shader).ok_or_else(|| RhiError::InvalidHandle(format!("{shader:?}")))?;
        s.compiled
            .entry_point(entry)
            .cloned()
            .ok_or_else(|| RhiError::NoEntryPoint { shader: s.compiled.name.clone(), entry: entry.to_string() })
    }

    /// Destroys the shader module once the GPU no longer uses it; pipelines
    /// made from it keep working. Destroying twice is a no-op.
    pub fn destroy_shader(&self, shader: ShaderHandle) {
        let entry = write(&self.resources.shaders).remove(shader);
        if let Some(entry) = entry {
            self.retire(Retired::Shader(entry));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
struct Push { color: vec4<f32>, offset: vec2<f32> }
var<immediate> push: Push;
@group(0) @binding(0) var<storage, read> data: array<vec4<f32>>;
@group(0) @binding(2) var tex: texture_2d<f32>;
@group(0) @binding(3) var samp: sampler;

@vertex
fn vs_main(@location(0) pos: vec2<f32>, @builtin(instance_index) i: u32) -> @builtin(position) vec4<f32> {
    return vec4<f32>(pos + push.offset + data[i].xy, 0.0, 1.0);
}

@fragment
fn fs_main() -> @location(0) vec4<f32> {
    return push.color * textureSample(tex, samp, vec2<f32>(0.5));
}
"#;

    #[test]
    fn reflects_bindings_push_constants_and_inputs() {
        let s = compile_wgsl("good.wgsl", GOOD).unwrap();
        assert_eq!(s.spirv[0], 0x0723_0203, "SPIR-V magic");
        let vs = s.entry_point("vs_main").unwrap();
        assert_eq!(vs.stage, ShaderStages::VERTEX);
        assert_eq!(vs.push_constant_size, 32);
        assert_eq!(vs.bindings[0], ReflectedBinding { group: 0, binding: 0, ty: BindingType::StorageBuffer { read_only: true } });
        assert_eq!(vs.bindings.len(), 3, "the module's declarations, used or not");
        assert_eq!(vs.vertex_inputs, vec![VertexInput { location: 0 }]);
        let fs = s.entry_point("fs_main").unwrap();
        assert_eq!(fs.bindings.len(), 3);
        assert_eq!(fs.bindings[1].ty, BindingType::SampledTexture);
        assert_eq!(fs.bindings[2].ty, BindingType::Sampler);
    }

    #[test]
    fn syntax_error_reports_file_line_and_column() {
        let src = "@vertex\nfn vs_main() -> @builtin(position) vec4<f32> {\n    return vec4<f32>(0.0) +;\n}\n";
        let err = compile_wgsl("broken.wgsl", src).unwrap_err();
        let RhiError::Shader(e) = err else { panic!("expected a shader error, got {err:?}") };
        assert_eq!(e.file, "broken.wgsl");
        assert_eq!(e.line, 3, "{e}");
        assert!(e.column > 0);
        assert!(e.message.contains("broken.wgsl"), "{}", e.message);
    }

    #[test]
    fn validation_error_is_a_shader_error_with_a_line() {
        let src = "@fragment\nfn fs_main() -> @location(0) vec4<f32> {\n    let x: f32 = 1u;\n    return vec4<f32>(x);\n}\n";
        let err = compile_wgsl("types.wgsl", src).unwrap_err();
        let RhiError::Shader(e) = err else { panic!("expected a shader error") };
        assert_eq!(e.line, 3, "{e}");
    }
}
