//! glTF materials: their descriptions, the one PBR parent material
//! function they are instances of, and the parents' keys (alpha mode,
//! double-sided, shading model, samplers — properties a parent has, not an
//! instance).

use super::GltfError;
use glam::{Vec2, Vec3, Vec4};
use renderer::{
    BlendMode, Material, MaterialId, MaterialInstance, MaterialParameter, MaterialParams, MaterialShader, ShadingModel, TextureId,
};
use rhi_vulkan::{AddressMode, Filter, SamplerDesc};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The PBR parent's material function: glTF 2.0's metallic-roughness
/// model over the declared parameters (see [`GltfMaterial::instance`]).
/// Each texture is sampled at its UV set (`<slot>_uv_set`, 0..3) after its
/// `KHR_texture_transform` (`<slot>_uv`: offset.xy, scale.zw;
/// `<slot>_uv_rotation`): uv' = T · R · S · uv as the extension defines,
/// with the set's screen-space gradients through R · S (explicit
/// gradients: a parameter-derived coordinate's implicit level of detail is
/// undefined where a driver skips storage reads in helper lanes).
/// Base colour = factor × vertex colour × texture; metallic = factor × B,
/// roughness = factor × G of the metallic-roughness texture; occlusion
/// = 1 + strength · (R − 1); emissive = factor × texture × strength; the
/// normal texture is tangent-space (glTF's convention) with X and Y scaled
/// by `normal_scale`. Opacity: 1 (OPAQUE), base alpha ≥ `alpha_cutoff`
/// (MASK, the parent's clip is 0.5) or base alpha (BLEND), chosen by
/// `alpha_mode` (0, 1, 2).
pub const PBR_MATERIAL_WGSL: &str = "// glTF 2.0 metallic-roughness PBR (engine_core::gltf).
// A texture's coordinate and its screen-space gradients: UV set `uv_set`
// through the texture transform (uv' = offset + R · S · uv); the gradients
// are the set's own (taken from the interpolants) through the transform's
// linear part, so the level of detail never depends on parameters read in
// a pixel quad's helper lanes (see renderer::material::parameters).
struct GltfUv {
    uv: vec2<f32>,
    dx: vec2<f32>,
    dy: vec2<f32>,
}

fn gltf_uv(in: MaterialInput, uv_set: f32, xf: vec4<f32>, rotation: f32) -> GltfUv {
    let k = u32(clamp(round(uv_set), 0.0, 3.0));
    let sets = array<vec2<f32>, 4>(in.uv0, in.uv1, in.uv2, in.uv3);
    let c = cos(rotation);
    let r = sin(rotation);
    // Scale, then rotate: the transform's linear part as a matrix (columns).
    let m = mat2x2<f32>(vec2<f32>(c, -r) * xf.z, vec2<f32>(r, c) * xf.w);
    var out: GltfUv;
    out.uv = m * sets[k] + xf.xy;
    out.dx = m * in.uv_dx[k];
    out.dy = m * in.uv_dy[k];
    return out;
}

fn material_main(in: MaterialInput) -> MaterialOutput {
    var out: MaterialOutput;
    let base_uv = gltf_uv(in, param_base_color_uv_set(), param_base_color_uv(), param_base_color_uv_rotation());
    let base = in.params.base_color * in.color * texture_base_color_texture_grad(base_uv.uv, base_uv.dx, base_uv.dy);
    let mr_uv = gltf_uv(in, param_metallic_roughness_uv_set(), param_metallic_roughness_uv(), param_metallic_roughness_uv_rotation());
    let mr = texture_metallic_roughness_texture_grad(mr_uv.uv, mr_uv.dx, mr_uv.dy);
    let ao_uv = gltf_uv(in, param_occlusion_uv_set(), param_occlusion_uv(), param_occlusion_uv_rotation());
    let ao = texture_occlusion_texture_grad(ao_uv.uv, ao_uv.dx, ao_uv.dy).r;
    let em_uv = gltf_uv(in, param_emissive_uv_set(), param_emissive_uv(), param_emissive_uv_rotation());
    let em = texture_emissive_texture_grad(em_uv.uv, em_uv.dx, em_uv.dy).rgb;
    let n_uv = gltf_uv(in, param_normal_uv_set(), param_normal_uv(), param_normal_uv_rotation());
    let nt = texture_normal_texture_grad(n_uv.uv, n_uv.dx, n_uv.dy).xyz * 2.0 - 1.0;
    out.base_color = base.rgb;
    out.metallic = in.params.mrso.x * mr.b;
    out.roughness = in.params.mrso.y * mr.g;
    out.specular = 0.5;
    out.emissive = in.params.emissive.rgb * em * param_emissive_strength();
    out.ambient_occlusion = 1.0 + param_occlusion_strength() * (ao - 1.0);
    // The scaled normal's direction with the sampled one's length: a mip of
    // the normal map averages the normals under it, and the shading widens
    // the specular lobe by how much shorter than 1 it is (Toksvig).
    let n = vec3<f32>(nt.xy * param_normal_scale(), nt.z);
    out.normal = select(vec3<f32>(0.0, 0.0, 1.0), normalize(n) * min(length(nt), 1.0), dot(n, n) > 1e-12);
    let mode = param_alpha_mode();
    out.opacity = 1.0;
    if (mode > 1.5) {
        out.opacity = base.a;
    } else if (mode > 0.5) {
        out.opacity = select(0.0, 1.0, base.a >= param_alpha_cutoff());
    }
    return out;
}
";

/// The five texture slots of a glTF material, in the parent's declaration order.
pub(crate) const SLOTS: [&str; 5] = ["base_color", "metallic_roughness", "normal", "occlusion", "emissive"];

/// glTF's alpha modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AlphaMode {
    #[default]
    Opaque,
    /// Alpha-tested at [`GltfMaterial::alpha_cutoff`].
    Mask,
    /// Alpha-blended.
    Blend,
}

/// `KHR_texture_transform`: uv' = offset + rotate(rotation) · (scale · uv).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UvTransform {
    pub offset: Vec2,
    pub scale: Vec2,
    /// Radians, counter-clockwise in UV space as the extension defines.
    pub rotation: f32,
}

impl Default for UvTransform {
    fn default() -> Self {
        Self { offset: Vec2::ZERO, scale: Vec2::ONE, rotation: 0.0 }
    }
}

/// A material's use of a texture.
#[derive(Clone, Debug, PartialEq)]
pub struct TextureRef {
    /// Index into [`super::GltfImport::textures`].
    pub texture: usize,
    /// The UV set (`TEXCOORD_n`), 0..=3.
    pub uv_set: u32,
    pub transform: UvTransform,
    /// The texture's sampler (wrap and filter modes).
    pub sampler: SamplerDesc,
}

/// A glTF material, as the file says.
#[derive(Clone, Debug, PartialEq)]
pub struct GltfMaterial {
    pub name: String,
    /// Linear RGBA.
    pub base_color_factor: Vec4,
    pub base_color_texture: Option<TextureRef>,
    pub metallic_factor: f32,
    pub roughness_factor: f32,
    /// G = roughness, B = metallic.
    pub metallic_roughness_texture: Option<TextureRef>,
    pub normal_texture: Option<TextureRef>,
    pub normal_scale: f32,
    /// R = occlusion.
    pub occlusion_texture: Option<TextureRef>,
    pub occlusion_strength: f32,
    pub emissive_factor: Vec3,
    pub emissive_texture: Option<TextureRef>,
    /// `KHR_materials_emissive_strength` (1 without it).
    pub emissive_strength: f32,
    pub alpha_mode: AlphaMode,
    pub alpha_cutoff: f32,
    pub double_sided: bool,
    /// `KHR_materials_unlit`: drawn with [`ShadingModel::Unlit`] (base
    /// colour, no lighting).
    pub unlit: bool,
}

impl Default for GltfMaterial {
    /// glTF's default material (for primitives without one).
    fn default() -> Self {
        Self {
            name: "default".into(),
            base_color_factor: Vec4::ONE,
            base_color_texture: None,
            metallic_factor: 1.0,
            roughness_factor: 1.0,
            metallic_roughness_texture: None,
            normal_texture: None,
            normal_scale: 1.0,
            occlusion_texture: None,
            occlusion_strength: 1.0,
            emissive_factor: Vec3::ZERO,
            emissive_texture: None,
            emissive_strength: 1.0,
            alpha_mode: AlphaMode::Opaque,
            alpha_cutoff: 0.5,
            double_sided: false,
            unlit: false,
        }
    }
}

/// What makes two glTF materials need different parents.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ParentKey {
    pub blend: BlendMode,
    pub two_sided: bool,
    pub shading_model: ShadingModel,
    pub samplers: [SamplerDesc; 5],
}

fn shader() -> Arc<MaterialShader> {
    static SHADER: OnceLock<Arc<MaterialShader>> = OnceLock::new();
    SHADER.get_or_init(|| MaterialShader::new("gltf_pbr.wgsl", PBR_MATERIAL_WGSL)).clone()
}

impl GltfMaterial {
    /// The texture references in slot order (see [`PBR_MATERIAL_WGSL`]).
    pub fn textures(&self) -> [Option<&TextureRef>; 5] {
        [
            self.base_color_texture.as_ref(),
            self.metallic_roughness_texture.as_ref(),
            self.normal_texture.as_ref(),
            self.occlusion_texture.as_ref(),
            self.emissive_texture.as_ref(),
        ]
    }

    /// The renderer's blend mode for the alpha mode.
    pub fn blend_mode(&self) -> BlendMode {
        match self.alpha_mode {
            AlphaMode::Opaque => BlendMode::Opaque,
            AlphaMode::Mask => BlendMode::Masked,
            AlphaMode::Blend => BlendMode::Translucent,
        }
    }

    pub(crate) fn parent_key(&self) -> ParentKey {
        let samplers = self.textures().map(|t| t.map(|t| t.sampler.clone()).unwrap_or_else(SamplerDesc::material));
        let shading_model = if self.unlit { ShadingModel::Unlit } else { ShadingModel::DefaultLit };
        ParentKey { blend: self.blend_mode(), two_sided: self.double_sided, shading_model, samplers }
    }

    /// The instance of `parent` that is this material; `textures[i]` is
    /// the renderer's id of [`super::GltfImport::textures`]`[i]`.
    pub fn instance(&self, parent: MaterialId, textures: &[TextureId]) -> MaterialInstance {
        let mut inst = MaterialInstance::of(parent)
            .with_vector("base_color", self.base_color_factor)
            .with_scalar("metallic", self.metallic_factor)
            .with_scalar("roughness", self.roughness_factor)
            .with_vector("emissive", self.emissive_factor.extend(0.0))
            .with_scalar("normal_scale", self.normal_scale)
            .with_scalar("occlusion_strength", self.occlusion_strength)
            .with_scalar("emissive_strength", self.emissive_strength)
            .with_scalar("alpha_cutoff", self.alpha_cutoff)
            .with_scalar(
                "alpha_mode",
                match self.alpha_mode {
                    AlphaMode::Opaque => 0.0,
                    AlphaMode::Mask => 1.0,
                    AlphaMode::Blend => 2.0,
                },
            );
        for (slot, t) in SLOTS.iter().zip(self.textures()) {
            if let Some(t) = t {
                let id = textures.get(t.texture).copied().unwrap_or(TextureId::WHITE);
                inst = inst
                    .with_texture(&format!("{slot}_texture"), id)
                    .with_scalar(&format!("{slot}_uv_set"), t.uv_set as f32)
                    .with_vector(
                        &format!("{slot}_uv"),
                        Vec4::new(t.transform.offset.x, t.transform.offset.y, t.transform.scale.x, t.transform.scale.y),
                    )
                    .with_scalar(&format!("{slot}_uv_rotation"), t.transform.rotation);
            }
        }
        inst
    }
}

/// The PBR parent for `key`: [`PBR_MATERIAL_WGSL`] and its declarations
/// (defaults: glTF's default material, white textures, a flat normal map).
pub(crate) fn parent_material(key: &ParentKey) -> Material {
    let params = MaterialParams {
        base_color: Vec4::ONE,
        metallic: 1.0,
        roughness: 1.0,
        specular: 0.5,
        opacity: 1.0,
        emissive: Vec3::ZERO,
        custom: Vec4::ZERO,
    };
    let mut m = Material {
        shader: shader(),
        blend_mode: key.blend,
        shading_model: key.shading_model,
        two_sided: key.two_sided,
        opacity_mask_clip: 0.5,
        params,
        ..Default::default()
    };
    for (i, slot) in SLOTS.iter().enumerate() {
        let default = if *slot == "normal" { TextureId::FLAT_NORMAL } else { TextureId::WHITE };
        m = m.with_parameter(MaterialParameter::texture(&format!("{slot}_texture"), default, key.samplers[i].clone()));
    }
    for slot in SLOTS {
        m = m.with_parameter(MaterialParameter::vector(&format!("{slot}_uv"), Vec4::new(0.0, 0.0, 1.0, 1.0)));
    }
    for slot in SLOTS {
        m = m.with_parameter(MaterialParameter::scalar(&format!("{slot}_uv_set"), 0.0));
        m = m.with_parameter(MaterialParameter::scalar(&format!("{slot}_uv_rotation"), 0.0));
    }
    for (name, v) in
        [("normal_scale", 1.0), ("occlusion_strength", 1.0), ("emissive_strength", 1.0), ("alpha_cutoff", 0.5), ("alpha_mode", 0.0)]
    {
        m = m.with_parameter(MaterialParameter::scalar(name, v));
    }
    m
}

/// glTF sampler → the RHI's: magnification filter (nearest or linear),
/// the minification filter's mipmap part (nearest for `*_MIPMAP_NEAREST`,
/// linear otherwise; the non-mipmapped `NEAREST` and `LINEAR` read level 0
/// alone), wrap S/T; trilinear
/// filtering (linear in both) gets anisotropic filtering as
/// [`SamplerDesc::material`] does.
pub(crate) fn sampler_desc(s: &gltf::texture::Sampler) -> SamplerDesc {
    use gltf::texture::{MagFilter, MinFilter, WrappingMode};
    let wrap = |w: WrappingMode| match w {
        WrappingMode::ClampToEdge => AddressMode::ClampToEdge,
        WrappingMode::MirroredRepeat => AddressMode::MirrorRepeat,
        WrappingMode::Repeat => AddressMode::Repeat,
    };
    let filter = match (s.mag_filter(), s.min_filter()) {
        (Some(MagFilter::Nearest), _) => Filter::Nearest,
        (None, Some(MinFilter::Nearest | MinFilter::NearestMipmapNearest | MinFilter::NearestMipmapLinear)) => Filter::Nearest,
        _ => Filter::Linear,
    };
    let mipmap_filter = match s.min_filter() {
        Some(MinFilter::Nearest | MinFilter::Linear | MinFilter::NearestMipmapNearest | MinFilter::LinearMipmapNearest) => Filter::Nearest,
        _ => Filter::Linear,
    };
    let mipmaps = !matches!(s.min_filter(), Some(MinFilter::Nearest | MinFilter::Linear));
    let max_anisotropy = if filter == Filter::Linear && mipmap_filter == Filter::Linear { SamplerDesc::MATERIAL_ANISOTROPY } else { 1 };
    SamplerDesc {
        filter,
        mipmap_filter,
        mipmaps,
        address_u: wrap(s.wrap_s()),
        address_v: wrap(s.wrap_t()),
        max_anisotropy,
        ..SamplerDesc::linear_clamp()
    }
}

/// Textures the materials use, keyed by (image, sRGB).
#[derive(Default)]
pub(crate) struct TextureKeys {
    pub keys: Vec<(usize, bool)>,
    index: HashMap<(usize, bool), usize>,
}

impl TextureKeys {
    fn get(&mut self, image: usize, srgb: bool) -> usize {
        *self.index.entry((image, srgb)).or_insert_with(|| {
            self.keys.push((image, srgb));
            self.keys.len() - 1
        })
    }
}

fn transform_from_json(v: Option<&gltf::json::Value>) -> (UvTransform, Option<u32>) {
    let Some(v) = v else { return (UvTransform::default(), None) };
    let pair = |name: &str, default: Vec2| {
        v.get(name).and_then(|a| Some(Vec2::new(a.get(0)?.as_f64()? as f32, a.get(1)?.as_f64()? as f32))).unwrap_or(default)
    };
    let t = UvTransform {
        offset: pair("offset", Vec2::ZERO),
        scale: pair("scale", Vec2::ONE),
        rotation: v.get("rotation").and_then(|r| r.as_f64()).unwrap_or(0.0) as f32,
    };
    (t, v.get("texCoord").and_then(|c| c.as_u64()).map(|c| c as u32))
}

/// Reads material `m` (`path`: its JSON pointer), registering the textures it uses.
pub(crate) fn read_material(
    m: &gltf::Material,
    path: &str,
    keys: &mut TextureKeys,
    skipped: &mut Vec<String>,
) -> Result<GltfMaterial, GltfError> {
    let mut tex = |texture: gltf::Texture,
                   tex_coord: u32,
                   transform: (UvTransform, Option<u32>),
                   srgb: bool,
                   what: &str|
     -> Result<Option<TextureRef>, GltfError> {
        // The core `source` (PNG/JPEG), else KHR_texture_basisu's (KTX2).
        let Some(image) = texture.source().map(|i| i.index()).or_else(|| super::read::basisu_source(&texture)) else {
            let line = format!("{path}/{what}: texture {} has no image the importer reads (the factor alone is used)", texture.index());
            log::warn!("glTF import: skipped {line}");
            skipped.push(line);
            return Ok(None);
        };
        let uv_set = transform.1.unwrap_or(tex_coord);
        let uv_set = if uv_set > 3 {
            let line = format!("{path}/{what}: TEXCOORD_{uv_set} (UV sets past 3 are not supported; UV 0 used)");
            log::warn!("glTF import: skipped {line}");
            skipped.push(line);
            0
        } else {
            uv_set
        };
        let t = transform.0;
        if !(t.offset.is_finite() && t.scale.is_finite() && t.rotation.is_finite()) {
            return Err(GltfError::Invalid {
                path: format!("{path}/{what}/extensions/KHR_texture_transform"),
                problem: "non-finite transform".into(),
            });
        }
        Ok(Some(TextureRef { texture: keys.get(image, srgb), uv_set, transform: t, sampler: sampler_desc(&texture.sampler()) }))
    };
    let info_transform = |i: &gltf::texture::Info| match i.texture_transform() {
        Some(t) => (UvTransform { offset: Vec2::from(t.offset()), scale: Vec2::from(t.scale()), rotation: t.rotation() }, t.tex_coord()),
        None => (UvTransform::default(), None),
    };
    let pbr = m.pbr_metallic_roughness();
    let base_color_texture = pbr
        .base_color_texture()
        .map(|i| tex(i.texture(), i.tex_coord(), info_transform(&i), true, "pbrMetallicRoughness/baseColorTexture"))
        .transpose()?
        .flatten();
    let metallic_roughness_texture = pbr
        .metallic_roughness_texture()
        .map(|i| tex(i.texture(), i.tex_coord(), info_transform(&i), false, "pbrMetallicRoughness/metallicRoughnessTexture"))
        .transpose()?
        .flatten();
    let normal = m.normal_texture();
    let normal_texture = normal
        .as_ref()
        .map(|n| tex(n.texture(), n.tex_coord(), transform_from_json(n.extension_value("KHR_texture_transform")), false, "normalTexture"))
        .transpose()?
        .flatten();
    let occlusion = m.occlusion_texture();
    let occlusion_texture = occlusion
        .as_ref()
        .map(|o| {
            tex(o.texture(), o.tex_coord(), transform_from_json(o.extension_value("KHR_texture_transform")), false, "occlusionTexture")
        })
        .transpose()?
        .flatten();
    let emissive_texture =
        m.emissive_texture().map(|i| tex(i.texture(), i.tex_coord(), info_transform(&i), true, "emissiveTexture")).transpose()?.flatten();
    let out = GltfMaterial {
        name: m.name().unwrap_or("").to_string(),
        base_color_factor: Vec4::from(pbr.base_color_factor()),
        base_color_texture,
        metallic_factor: pbr.metallic_factor(),
        roughness_factor: pbr.roughness_factor(),
        metallic_roughness_texture,
        normal_texture,
        normal_scale: normal.as_ref().map_or(1.0, |n| n.scale()),
        occlusion_texture,
        occlusion_strength: occlusion.as_ref().map_or(1.0, |o| o.strength()),
        emissive_factor: Vec3::from(m.emissive_factor()),
        emissive_texture,
        emissive_strength: m.emissive_strength().unwrap_or(1.0),
        alpha_mode: match m.alpha_mode() {
            gltf::material::AlphaMode::Opaque => AlphaMode::Opaque,
            gltf::material::AlphaMode::Mask => AlphaMode::Mask,
            gltf::material::AlphaMode::Blend => AlphaMode::Blend,
        },
        alpha_cutoff: m.alpha_cutoff().unwrap_or(0.5),
        double_sided: m.double_sided(),
        unlit: m.unlit(),
    };
    out.check_factors(path)?;
    Ok(out)
}

impl GltfMaterial {
    /// Every factor finite, or [`GltfError::Invalid`] at `path`.
    fn check_factors(&self, path: &str) -> Result<(), GltfError> {
        let scalars = [
            self.metallic_factor,
            self.roughness_factor,
            self.normal_scale,
            self.occlusion_strength,
            self.emissive_strength,
            self.alpha_cutoff,
        ];
        if self.base_color_factor.is_finite() && self.emissive_factor.is_finite() && scalars.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(GltfError::Invalid { path: path.into(), problem: "a non-finite factor".into() })
        }
    }
}
