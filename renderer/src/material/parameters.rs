//! Material parameters (UE's scalar, vector and texture parameters): what
//! a parent material declares, where each lives, and the WGSL accessors a
//! material function reads them by.
//!
//! Every material — a parent or an instance — owns one 256-byte block of
//! the GPU material table ([`MATERIAL_BLOCK_SIZE`]): four vec4s of built-in
//! parameters (`base_color`, `metallic`/`roughness`/`specular`/`opacity`,
//! `emissive`, `custom`, as `MaterialParams` in `scene.inc.wgsl`) and
//! [`MAX_PARAMETER_VECTORS`] vec4s for the declared ones: each vector
//! parameter takes a vec4, scalars are packed four to a vec4 after them.
//! The block is indexed by the draw's material index, so a parameter change
//! is a write of that block alone — no command, no pipeline changes.
//!
//! Texture parameters are bindings of group 2: texture `2k`, its sampler
//! `2k + 1`, in declaration order. A material instance's textures and
//! samplers form its bind group (created when the instance is, cached), and
//! that bind group is part of its draw commands' shader bindings.
//!
//! The accessors are generated from the declarations and appended after the
//! material's own WGSL (so compile errors keep the material's line numbers):
//! `param_<name>()` returns a scalar (`f32`) or vector (`vec4<f32>`);
//! `texture_<name>(uv)` samples a texture parameter (implicit level of
//! detail), `texture_<name>_grad(uv, dx, dy)` samples it with the given
//! screen-space gradients of `uv`, and `material_texture_<name>` /
//! `material_sampler_<name>` are the texture and sampler themselves for
//! `textureSampleLevel` and the like.
//!
//! A texture coordinate computed from parameters (a UV transform, a UV set
//! chosen by a parameter) must sample through `texture_<name>_grad`, with
//! the gradients of the UV set (`MaterialInput.uv_dx`/`uv_dy`) put through
//! the same linear map: the implicit level of detail is taken from the
//! values a 2x2 pixel quad's helper lanes compute, and some drivers
//! (lavapipe, Mesa 22.3) return 0 for storage-buffer reads in helper lanes,
//! so a parameter-derived coordinate's implicit level jumps to the
//! smallest mips on every quad at a triangle's edge: speckle of the
//! texture's average colour wherever triangles are a few pixels big.

use crate::texture::TextureId;
use glam::Vec4;
use rhi_vulkan::{BindGroupLayoutDesc, BindGroupLayoutEntry, BindingType, SamplerDesc, ShaderStages};
use std::fmt::Write;

/// Vec4s of declared (non-built-in) parameters in a material's block.
pub const MAX_PARAMETER_VECTORS: usize = 12;
/// Texture parameters a material may declare.
pub const MAX_TEXTURE_PARAMETERS: usize = 8;
/// Vec4s of built-in parameters at the start of every block.
const BUILTIN_VECTORS: usize = 4;
/// Vec4s of one material block.
pub const MATERIAL_BLOCK_VECTORS: usize = BUILTIN_VECTORS + MAX_PARAMETER_VECTORS;
/// Bytes of one material's block in the GPU table.
pub const MATERIAL_BLOCK_SIZE: usize = MATERIAL_BLOCK_VECTORS * 16;
/// The bind group material textures are bound at.
pub const MATERIAL_BIND_GROUP: u32 = 2;
/// Longest parameter name.
const MAX_NAME_LEN: usize = 64;

/// One material's parameter block as the GPU table holds it.
pub type MaterialBlock = [[f32; 4]; MATERIAL_BLOCK_VECTORS];

/// A parameter's value (a default, or an instance's override).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParameterValue {
    /// A number (`f32` in WGSL).
    Scalar(f32),
    /// Four numbers (`vec4<f32>`).
    Vector(Vec4),
    /// A texture asset, sampled with the parameter's sampler.
    Texture(TextureId),
}

impl ParameterValue {
    fn kind(&self) -> &'static str {
        match self {
            ParameterValue::Scalar(_) => "scalar",
            ParameterValue::Vector(_) => "vector",
            ParameterValue::Texture(_) => "texture",
        }
    }

    fn is_finite(&self) -> bool {
        match self {
            ParameterValue::Scalar(s) => s.is_finite(),
            ParameterValue::Vector(v) => v.is_finite(),
            ParameterValue::Texture(_) => true,
        }
    }
}

/// A parameter a parent material declares: its name, kind and default (and
/// for a texture, the sampler it is read with).
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialParameter {
    /// The name the material function's accessor and instances' overrides use.
    pub name: String,
    /// Its value unless an instance overrides it; also fixes its kind.
    pub default: ParameterValue,
    /// The sampler of a texture parameter (ignored for the others).
    pub sampler: SamplerDesc,
}

impl MaterialParameter {
    /// A scalar parameter.
    pub fn scalar(name: &str, default: f32) -> Self {
        Self { name: name.into(), default: ParameterValue::Scalar(default), sampler: SamplerDesc::default() }
    }
    /// A vector parameter.
    pub fn vector(name: &str, default: Vec4) -> Self {
        Self { name: name.into(), default: ParameterValue::Vector(default), sampler: SamplerDesc::default() }
    }
    /// A texture parameter read with `sampler` (usually
    /// `SamplerDesc::material()`: trilinear, repeating, anisotropic where
    /// the device has it).
    pub fn texture(name: &str, default: TextureId, sampler: SamplerDesc) -> Self {
        Self { name: name.into(), default: ParameterValue::Texture(default), sampler }
    }
}

/// Where a parameter lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParameterSlot {
    /// A vec4 of the block.
    Vector(u8),
    /// One lane of a vec4 of the block.
    Scalar(u8, u8),
    /// The k-th texture parameter (bindings `2k`, `2k + 1` of group 2).
    Texture(u8),
}

/// The built-in parameters every material has, in its block's first vec4s.
const BUILTINS: [(&str, ParameterSlot); 7] = [
    ("base_color", ParameterSlot::Vector(0)),
    ("metallic", ParameterSlot::Scalar(1, 0)),
    ("roughness", ParameterSlot::Scalar(1, 1)),
    ("specular", ParameterSlot::Scalar(1, 2)),
    ("opacity", ParameterSlot::Scalar(1, 3)),
    ("emissive", ParameterSlot::Vector(2)),
    ("custom", ParameterSlot::Vector(3)),
];

/// Where each declared parameter of a parent lives, computed once from its
/// declarations ([`ParameterLayout::new`] checks them).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ParameterLayout {
    /// (name, slot, declaration index), in declaration order.
    entries: Vec<(String, ParameterSlot, usize)>,
    textures: usize,
}

impl ParameterLayout {
    /// Lays out `declared`. Errors (as text, the caller names the material):
    /// a name that is not a WGSL identifier, is a built-in's or is declared
    /// twice, a non-finite default, or more vectors/scalars or textures than
    /// a block holds.
    pub fn new(declared: &[MaterialParameter]) -> Result<Self, String> {
        let mut entries = Vec::with_capacity(declared.len());
        let vectors = declared.iter().filter(|p| matches!(p.default, ParameterValue::Vector(_))).count();
        let scalars = declared.iter().filter(|p| matches!(p.default, ParameterValue::Scalar(_))).count();
        let textures = declared.iter().filter(|p| matches!(p.default, ParameterValue::Texture(_))).count();
        let needed = vectors + scalars.div_ceil(4);
        if needed > MAX_PARAMETER_VECTORS {
            return Err(format!(
                "{vectors} vector and {scalars} scalar parameters need {needed} vec4s; a material has {MAX_PARAMETER_VECTORS}"
            ));
        }
        if textures > MAX_TEXTURE_PARAMETERS {
            return Err(format!("{textures} texture parameters; a material may have {MAX_TEXTURE_PARAMETERS}"));
        }
        let (mut next_vector, mut next_scalar, mut next_texture) = (BUILTIN_VECTORS, 0usize, 0u8);
        for (i, p) in declared.iter().enumerate() {
            check_name(&p.name)?;
            if BUILTINS.iter().any(|(b, _)| *b == p.name) {
                return Err(format!("parameter {:?} is a built-in parameter", p.name));
            }
            if declared[..i].iter().any(|q| q.name == p.name) {
                return Err(format!("parameter {:?} is declared twice", p.name));
            }
            if !p.default.is_finite() {
                return Err(format!("parameter {:?} has a non-finite default", p.name));
            }
            let slot = match p.default {
                ParameterValue::Vector(_) => {
                    next_vector += 1;
                    ParameterSlot::Vector((next_vector - 1) as u8)
                }
                ParameterValue::Scalar(_) => {
                    let at = BUILTIN_VECTORS + vectors + next_scalar / 4;
                    next_scalar += 1;
                    ParameterSlot::Scalar(at as u8, ((next_scalar - 1) % 4) as u8)
                }
                ParameterValue::Texture(_) => {
                    next_texture += 1;
                    ParameterSlot::Texture(next_texture - 1)
                }
            };
            entries.push((p.name.clone(), slot, i));
        }
        Ok(Self { entries, textures })
    }

    /// Where `name` lives (a built-in's or a declared parameter's slot).
    pub fn find(&self, name: &str) -> Option<ParameterSlot> {
        BUILTINS
            .iter()
            .find(|(b, _)| *b == name)
            .map(|(_, s)| *s)
            .or_else(|| self.entries.iter().find(|(n, ..)| n == name).map(|(_, s, _)| *s))
    }

    /// Texture parameters declared.
    pub fn texture_count(&self) -> usize {
        self.textures
    }

    /// The declaration index of the k-th texture parameter.
    pub fn texture_declaration(&self, k: usize) -> Option<usize> {
        self.entries.iter().filter(|(_, s, _)| matches!(s, ParameterSlot::Texture(_))).nth(k).map(|(.., i)| *i)
    }

    /// Checks an override against the layout: the name exists, with the
    /// same kind, and its value is finite.
    pub fn check_override(&self, name: &str, value: &ParameterValue) -> Result<ParameterSlot, String> {
        let slot = self.find(name).ok_or_else(|| format!("the parent declares no parameter {name:?}"))?;
        let kind = match slot {
            ParameterSlot::Vector(_) => "vector",
            ParameterSlot::Scalar(..) => "scalar",
            ParameterSlot::Texture(_) => "texture",
        };
        if kind != value.kind() {
            return Err(format!("parameter {name:?} is a {kind}, the override a {}", value.kind()));
        }
        if !value.is_finite() {
            return Err(format!("parameter {name:?}: non-finite value"));
        }
        Ok(slot)
    }

    /// Writes `value` at `slot` of `block` (textures live in bindings, not the block).
    pub fn write(block: &mut MaterialBlock, slot: ParameterSlot, value: &ParameterValue) {
        match (slot, value) {
            (ParameterSlot::Vector(v), ParameterValue::Vector(x)) => block[v as usize] = x.to_array(),
            (ParameterSlot::Scalar(v, lane), ParameterValue::Scalar(x)) => block[v as usize][lane as usize] = *x,
            _ => {}
        }
    }

    /// Group 2's layout for a material with this layout's textures (as
    /// shader reflection derives it: every binding visible to both stages).
    pub fn bind_group_layout(&self) -> BindGroupLayoutDesc {
        let stages = ShaderStages::VERTEX | ShaderStages::FRAGMENT;
        let entries = (0..self.textures as u32)
            .flat_map(|k| {
                [
                    BindGroupLayoutEntry { binding: 2 * k, ty: BindingType::SampledTexture, stages },
                    BindGroupLayoutEntry { binding: 2 * k + 1, ty: BindingType::Sampler, stages },
                ]
            })
            .collect();
        BindGroupLayoutDesc { entries }
    }

    /// The WGSL accessors of the declared parameters (appended after the
    /// material function; see the module docs).
    pub fn accessors_wgsl(&self) -> String {
        let mut s = String::new();
        if self.entries.is_empty() {
            return s;
        }
        s.push_str("\n// Generated from the material's parameter declarations.\n");
        for (name, slot, _) in &self.entries {
            let user = |v: u8| v as usize - BUILTIN_VECTORS;
            let _ = match *slot {
                ParameterSlot::Vector(v) => writeln!(s, "fn param_{name}() -> vec4<f32> {{ return materials[draw.material_index].user[{}]; }}", user(v)),
                ParameterSlot::Scalar(v, lane) => {
                    writeln!(s, "fn param_{name}() -> f32 {{ return materials[draw.material_index].user[{}][{lane}]; }}", user(v))
                }
                ParameterSlot::Texture(k) => writeln!(
                    s,
                    "@group({MATERIAL_BIND_GROUP}) @binding({}) var material_texture_{name}: texture_2d<f32>;\n\
                     @group({MATERIAL_BIND_GROUP}) @binding({}) var material_sampler_{name}: sampler;\n\
                     fn texture_{name}(uv: vec2<f32>) -> vec4<f32> {{ return textureSample(material_texture_{name}, material_sampler_{name}, uv); }}\n\
                     fn texture_{name}_grad(uv: vec2<f32>, dx: vec2<f32>, dy: vec2<f32>) -> vec4<f32> {{ return textureSampleGrad(material_texture_{name}, material_sampler_{name}, uv, dx, dy); }}",
                    2 * k as u32,
                    2 * k as u32 + 1
                ),
            };
        }
        s
    }
}

fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') || name.len() > MAX_NAME_LEN || name.starts_with("__") {
        return Err(format!("parameter name {name:?} is not an identifier (ASCII letters, digits, '_'; at most {MAX_NAME_LEN})"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_take_a_vec4_each_and_scalars_pack_after_them() {
        let l = ParameterLayout::new(&[
            MaterialParameter::scalar("a", 1.0),
            MaterialParameter::vector("tint", Vec4::ONE),
            MaterialParameter::texture("albedo", TextureId::WHITE, SamplerDesc::default()),
            MaterialParameter::scalar("b", 2.0),
            MaterialParameter::vector("tint2", Vec4::ONE),
        ])
        .unwrap();
        assert_eq!(l.find("tint"), Some(ParameterSlot::Vector(4)));
        assert_eq!(l.find("tint2"), Some(ParameterSlot::Vector(5)));
        assert_eq!(l.find("a"), Some(ParameterSlot::Scalar(6, 0)));
        assert_eq!(l.find("b"), Some(ParameterSlot::Scalar(6, 1)));
        assert_eq!(l.find("albedo"), Some(ParameterSlot::Texture(0)));
        assert_eq!(l.find("roughness"), Some(ParameterSlot::Scalar(1, 1)), "built-ins are found too");
        assert_eq!(l.texture_declaration(0), Some(2));
        let wgsl = l.accessors_wgsl();
        assert!(wgsl.contains("fn param_tint() -> vec4<f32> { return materials[draw.material_index].user[0]; }"), "{wgsl}");
        assert!(wgsl.contains("fn param_b() -> f32 { return materials[draw.material_index].user[2][1]; }"), "{wgsl}");
        assert!(wgsl.contains("@group(2) @binding(1) var material_sampler_albedo: sampler;"), "{wgsl}");
        assert_eq!(l.bind_group_layout().entries.len(), 2);
    }

    #[test]
    fn bad_declarations_are_refused() {
        let too_many: Vec<_> = (0..13).map(|i| MaterialParameter::vector(&format!("v{i}"), Vec4::ZERO)).collect();
        assert!(ParameterLayout::new(&too_many).unwrap_err().contains("13 vec4s"));
        let ok: Vec<_> = (0..48).map(|i| MaterialParameter::scalar(&format!("s{i}"), 0.0)).collect();
        assert!(ParameterLayout::new(&ok).is_ok(), "48 scalars fill 12 vec4s");
        let textures: Vec<_> =
            (0..9).map(|i| MaterialParameter::texture(&format!("t{i}"), TextureId::WHITE, SamplerDesc::default())).collect();
        assert!(ParameterLayout::new(&textures).is_err());
        for bad in ["", "1a", "a-b", "roughness", "__x", "é"] {
            assert!(ParameterLayout::new(&[MaterialParameter::scalar(bad, 0.0)]).is_err(), "{bad:?}");
        }
        assert!(ParameterLayout::new(&[MaterialParameter::scalar("a", 0.0), MaterialParameter::vector("a", Vec4::ZERO)]).is_err());
        assert!(ParameterLayout::new(&[MaterialParameter::scalar("a", f32::NAN)]).is_err());
    }

    #[test]
    fn overrides_must_name_a_parameter_of_the_same_kind() {
        let l = ParameterLayout::new(&[MaterialParameter::scalar("a", 1.0)]).unwrap();
        assert!(l.check_override("a", &ParameterValue::Scalar(2.0)).is_ok());
        assert!(l.check_override("base_color", &ParameterValue::Vector(Vec4::X)).is_ok());
        assert!(l.check_override("a", &ParameterValue::Vector(Vec4::X)).unwrap_err().contains("is a scalar"));
        assert!(l.check_override("nope", &ParameterValue::Scalar(1.0)).unwrap_err().contains("no parameter"));
        assert!(l.check_override("a", &ParameterValue::Scalar(f32::INFINITY)).is_err());
    }
}
