// Declarations every mesh pass shader starts with: the view, the GPU scene,
// the material table, the per-draw push constants and the structs that
// vertex factories and material functions exchange with the passes.
// Composed as: scene.inc + <vertex factory>.inc + <material> + <pass>.inc.
// Every vertex factory defines `vf_fetch` and `vf_custom_data` (see
// renderer/src/vertex_factory/mod.rs).

// A point or spot light (`LocalLightData` in renderer/src/light_grid.rs).
struct LocalLight {
    position: vec3<f32>,
    // The distance at which its light reaches 0.
    radius: f32,
    // Linear RGB luminous intensity (colour times candela).
    color: vec3<f32>,
    // The spot cone on cos(angle to the axis): clamp(cos * scale + offset,
    // 0, 1)^2 (glTF's); a point light has scale 0, offset 1.
    spot_scale: f32,
    // The direction the light travels (a spot light's axis).
    direction: vec3<f32>,
    spot_offset: f32,
    // The light sphere's radius: widens specular highlights.
    source_radius: f32,
    // Its first tile in `shadow_tiles` (a point light has six, one per
    // cube face: +X, -X, +Y, -Y, +Z, -Z), or -1: no shadow.
    shadow: i32,
    // Its shadow bias (`ShadowBias`) toward the light and along the
    // normal, in its tile's texels.
    shadow_depth_bias: f32,
    shadow_normal_bias: f32,
}

struct DirectionalLight {
    // The direction the light travels.
    direction: vec3<f32>,
    // 1 when the shadow map holds this frame's shadow of this light.
    shadowed: u32,
    // Its illuminance on a surface facing it (linear RGB, lux).
    color: vec3<f32>,
}

// One cascade of the shadowed directional light (`ShadowCascadeData`).
struct ShadowCascade {
    view_proj: mat4x4<f32>,
    // Its tile in the shadow map: UV offset (xy) and scale (zw).
    atlas_rect: vec4<f32>,
    // The view depth where it ends, and from which it blends into the next.
    far_depth: f32,
    blend_start: f32,
    // The depth bias in its clip-space depth units.
    bias: f32,
    // The normal-offset bias in world units.
    normal_bias: f32,
}

// One tile of the shadow atlas (`ShadowTileData`).
struct ShadowTile {
    view_proj: mat4x4<f32>,
    // Its square in the atlas: UV offset (xy) and scale (zw).
    atlas_rect: vec4<f32>,
    // World size of one of its texels at distance 1 from the light.
    texel_at_unit: f32,
    // One atlas texel in UV.
    atlas_texel: f32,
}

// One field, one meaning (`ViewUniformData` in renderer/src/frame_resources.rs
// is the Rust side; a test compares their layouts).
struct ViewUniform {
    view_proj: mat4x4<f32>,
    camera_position: vec3<f32>,
    // 1 for a perspective view, 0 for an orthographic one.
    perspective: u32,
    camera_right: vec3<f32>,
    // The directional lights in `directional_lights`.
    directional_light_count: u32,
    camera_up: vec3<f32>,
    // The shadowed directional light's cascades (0: no shadow).
    shadow_cascade_count: u32,
    // View depth = dot(xyz, world position) + w.
    view_depth_axis: vec4<f32>,
    // The light grid (renderer/src/light_grid.rs): the viewport's top-left
    // corner in pixels, the tile size in pixels, the view's first cluster,
    // tiles across, tiles down and depth slices (0: no local lights), and
    // slice = log2(depth) * z_scale + z_bias.
    light_grid_origin: vec2<f32>,
    light_grid_tile_size: f32,
    light_grid_base: u32,
    light_grid_size: vec3<u32>,
    // Shadow filtering: 0 one hardware 2x2 comparison, 1 3x3, 2 5x5 Gaussian.
    shadow_filter: u32,
    light_grid_z_scale: f32,
    light_grid_z_bias: f32,
    // One shadow-map texel in UV.
    shadow_texel: f32,
    // Geometric specular anti-aliasing (`r.Shading.SpecularAAVariance`):
    // the scale of the normal's variance (0: off)...
    specular_aa_variance: f32,
    // The hemisphere ambient's radiance from the sky (above, +Z).
    sky_radiance: vec3<f32>,
    // ...and the most roughness² it adds.
    specular_aa_threshold: f32,
    // The hemisphere ambient's radiance from the ground (below).
    ground_radiance: vec3<f32>,
    // 1 when `light_grid_shadowed` holds this frame's per-cluster counts of
    // shadowed lights (some light has a shadow-atlas tile).
    light_grid_has_shadows: u32,
    wireframe_color: vec4<f32>,
    directional_lights: array<DirectionalLight, 4>,
    shadow_cascades: array<ShadowCascade, 4>,
    // The environment's prefiltered specular levels (0: the hemisphere
    // ambient lights the view; renderer/src/environment) and the scale of
    // its radiance (its intensity times r.SkyLight.Intensity).
    environment_levels: u32,
    environment_intensity: f32,
    // This frame's sub-pixel jitter (TAA) in NDC, which `view_clip` adds:
    // `view_proj` itself is unjittered.
    jitter: vec2<f32>,
    // The previous frame's world to clip, unjittered (motion vectors:
    // velocity.inc.wgsl); this frame's, unjittered, where the view has no past.
    prev_view_proj: mat4x4<f32>,
    _reserved: array<vec4<u32>, 13>,
}

struct PrimitiveData {
    local_to_world: mat4x4<f32>,
    prev_local_to_world: mat4x4<f32>,
    bounds_origin_radius: vec4<f32>,
    bounds_extent: vec3<f32>,
    // The vertex factory's word for the primitive (the skinned factory's joint slot).
    vertex_factory_data: u32,
    custom: vec4<f32>,
}

struct MaterialParams {
    base_color: vec4<f32>,
    // metallic, roughness, specular, opacity
    mrso: vec4<f32>,
    emissive: vec4<f32>,
    custom: vec4<f32>,
    // Declared parameters (`MAX_PARAMETER_VECTORS`), read through the
    // generated `param_<name>()` accessors.
    user: array<vec4<f32>, 12>,
}

struct DrawPush {
    material_index: u32,
    primitive_id: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> view: ViewUniform;
// The GPU scene in pages: one storage binding may be at most
// maxStorageBufferRange bytes (2^27 on some devices, lavapipe included),
// fewer than a large scene's primitives need. A page is 2^19 primitives
// (88 MiB), four pages hold 2,097,152 (`GPU_SCENE_PAGE_PRIMITIVES` and
// `GPU_SCENE_PAGES` in gpu_scene.rs); read through `scene_primitive`.
@group(0) @binding(1) var<storage, read> gpu_scene_0: array<PrimitiveData>;
@group(0) @binding(2) var<storage, read> materials: array<MaterialParams>;
@group(0) @binding(3) var<storage, read> gpu_scene_1: array<PrimitiveData>;
@group(0) @binding(4) var<storage, read> gpu_scene_2: array<PrimitiveData>;
@group(0) @binding(5) var<storage, read> gpu_scene_3: array<PrimitiveData>;
const GPU_SCENE_PAGE_PRIMITIVES: u32 = 524288u;

fn scene_primitive(id: u32) -> PrimitiveData {
    let i = id % GPU_SCENE_PAGE_PRIMITIVES;
    switch id / GPU_SCENE_PAGE_PRIMITIVES {
        case 0u: { return gpu_scene_0[i]; }
        case 1u: { return gpu_scene_1[i]; }
        case 2u: { return gpu_scene_2[i]; }
        default: { return gpu_scene_3[i]; }
    }
}
var<immediate> draw: DrawPush;

// The clip position of a world position: `view_proj` and the frame's
// jitter (0 without TAA). Every pass computes it so (positions are
// `@invariant`: depth from one pass is tested by another).
fn view_clip(world_position: vec3<f32>) -> vec4<f32> {
    let c = view.view_proj * vec4<f32>(world_position, 1.0);
    return vec4<f32>(c.xy + view.jitter * c.w, c.zw);
}

// What a vertex factory produces for the passes.
struct FactoryVertex {
    world_position: vec3<f32>,
    // Where the vertex was in the previous frame (motion vectors): through
    // the GPU scene's `prev_local_to_world`, or a particle's previous
    // position; `world_position` for a factory that does not know.
    prev_world_position: vec3<f32>,
    world_normal: vec3<f32>,
    // World-space tangent (U direction) in xyz, the binormal sign in w
    // (binormal = w * cross(normal, tangent)); xyz 0 when the mesh has none.
    world_tangent: vec4<f32>,
    color: vec4<f32>,
    uv0: vec2<f32>,
    uv1: vec2<f32>,
    uv2: vec2<f32>,
    uv3: vec2<f32>,
    primitive_id: u32,
    // The instance within the primitive (the instanced factory's stable id
    // slot), for `vf_custom_data`; 0 for factories without instances.
    instance_id: u32,
    // Per-primitive (or per-instance) custom data, for materials.
    custom: vec4<f32>,
    custom1: vec4<f32>,
    // Multiplies opacity (instance cull-distance fade, through
    // `fade_opacity`); 1 when unused. With DITHERED_FADE (the factory's
    // `dithered_fade()`), opaque and masked pixels are instead kept by
    // `dithered_fade_keeps`. Negative: a copy in a dithered LOD transition
    // (`dithered_lod_fade`).
    fade: f32,
}

// The 4x4 ordered (Bayer) dither threshold of the pixel at framebuffer
// position `pixel`: (index + 0.5) / 16, each of the 16 values once per 4x4
// block (`renderer::vertex_factory::dither_threshold` is the same in Rust).
fn dither_threshold(pixel: vec2<f32>) -> f32 {
    let p = vec2<u32>(pixel) & vec2<u32>(3u);
    let a = p.x ^ p.y;
    let index = ((a & 1u) << 3u) | ((p.y & 1u) << 2u) | (a & 2u) | (p.y >> 1u);
    return (f32(index) + 0.5) / 16.0;
}

// Dithered fade (UE's dithered LOD / distance fade): a pixel of an instance
// with fade `fade` is drawn when the fade is above its dither threshold, so
// fade 1 draws every pixel, fade 0 none, and the pixels drawn only grow with
// the fade. Every pass decides the same pixel the same way (depth and colour
// agree).
//
// A negative fade is one of an instance's two copies in a dithered LOD
// transition (`dithered_lod_fade`): it keeps its side of the pattern, and
// only where its distance fade keeps the pixel.
fn dithered_fade_keeps(fade: f32, pixel: vec2<f32>) -> bool {
    if (fade >= 0.0) {
        return fade > dither_threshold(pixel);
    }
    let c = dithered_lod_code(fade);
    let index = u32(dither_threshold(pixel) * 16.0);
    let hi = c % 17u;
    let split = (c / 17u) % 17u;
    let finer = (c / 289u) % 2u == 1u;
    return index < hi && ((index < split) != finer);
}

// Dithered LOD transition (UE's, issue 18): an instance near a LOD
// threshold is drawn at both neighbouring LODs with complementary masks of
// the one 4x4 pattern. The coarser copy keeps the pixels whose threshold is
// below `coarse_share`, the finer copy the others, each only where the
// distance fade `fade` keeps the pixel: every pixel the fade keeps is
// drawn by exactly one copy, none twice. The copy's fade is encoded as
//   -(1 + hi + 17 * split + 289 * finer + 578 * primary + fade / 2)
// where hi and split count the pattern's thresholds below `fade` and
// `coarse_share` (0..16, all the dither needs, exact through
// interpolation) and `primary` marks the copy at the LOD the plain
// selection picks: the one a translucent material draws, its opacity
// multiplied by `fade` as without the transition (`fade_opacity`).
// `renderer::vertex_factory::dithered_lod_fade` is the same in Rust.
fn dithered_lod_fade(fade: f32, coarse_share: f32, finer: bool, primary: bool) -> f32 {
    let f = clamp(fade, 0.0, 1.0);
    let hi = clamp(ceil(f * 16.0 - 0.5), 0.0, 16.0);
    let split = clamp(ceil(coarse_share * 16.0 - 0.5), 0.0, 16.0);
    let code = hi + 17.0 * split + select(0.0, 289.0, finer) + select(0.0, 578.0, primary);
    return -(1.0 + code + 0.5 * f);
}

// The integer code of an encoded (negative) fade.
fn dithered_lod_code(fade: f32) -> u32 {
    return u32(max(floor(-fade - 1.0 + 0.25), 0.0));
}

// What multiplies opacity where the fade is not dithered (translucent
// materials): the fade itself, or for a copy in a dithered LOD transition
// its distance fade if it is the primary copy, else 0 (not drawn).
fn fade_opacity(fade: f32) -> f32 {
    if (fade >= 0.0) {
        return fade;
    }
    let x = -fade - 1.0;
    let c = dithered_lod_code(fade);
    return select(0.0, clamp((x - f32(c)) * 2.0, 0.0, 1.0), c >= 578u);
}

// The FactoryVertex every factory's `vf_fetch` starts from: what each one
// sets, the rest zero (no UV1-3, no custom data, instance 0) and opaque
// (fade 1), for the factory to fill in.
fn factory_vertex(
    primitive_id: u32,
    world_position: vec3<f32>,
    world_normal: vec3<f32>,
    world_tangent: vec4<f32>,
    color: vec4<f32>,
    uv0: vec2<f32>,
) -> FactoryVertex {
    var v: FactoryVertex;
    v.world_position = world_position;
    v.prev_world_position = world_position;
    v.world_normal = world_normal;
    v.world_tangent = world_tangent;
    v.color = color;
    v.uv0 = uv0;
    v.primitive_id = primitive_id;
    v.fade = 1.0;
    return v;
}

// `factory_vertex` of a mesh vertex (`tangent`: xyz, the binormal sign in
// w) placed in the world by `local_to_world`: the local and instanced
// factories' transform.
fn mesh_factory_vertex(
    primitive_id: u32,
    local_to_world: mat4x4<f32>,
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
    color: vec4<f32>,
    uv0: vec2<f32>,
) -> FactoryVertex {
    let world_position = (local_to_world * vec4<f32>(position, 1.0)).xyz;
    let world_normal = normalize((local_to_world * vec4<f32>(normal, 0.0)).xyz);
    let world_tangent = vec4<f32>((local_to_world * vec4<f32>(tangent.xyz, 0.0)).xyz, tangent.w);
    return factory_vertex(primitive_id, world_position, world_normal, world_tangent, color, uv0);
}

struct MaterialInput {
    world_position: vec3<f32>,
    world_normal: vec3<f32>,
    // As FactoryVertex.world_tangent.
    world_tangent: vec4<f32>,
    color: vec4<f32>,
    uv0: vec2<f32>,
    uv1: vec2<f32>,
    uv2: vec2<f32>,
    uv3: vec2<f32>,
    // Screen-space derivatives of UV sets 0..3 along x and y, taken from the
    // interpolants before the material runs. A texture coordinate computed
    // from material parameters samples with gradients built from these
    // (`texture_<name>_grad`), not with implicit ones: implicit derivatives
    // of a value read from a storage buffer are undefined on drivers that
    // skip such reads in helper lanes (lavapipe reads 0 there, and the
    // quad's level of detail jumps to the smallest mips).
    uv_dx: array<vec2<f32>, 4>,
    uv_dy: array<vec2<f32>, 4>,
    // The squared length of the interpolated normal's screen-space
    // derivatives (how much it turns across a pixel): geometric specular
    // anti-aliasing's input.
    normal_variance: f32,
    custom: vec4<f32>,
    // More per-primitive / per-instance custom data (ISM custom float 3 in x).
    custom1: vec4<f32>,
    // As FactoryVertex.instance_id (flat across the triangle).
    instance_id: u32,
    params: MaterialParams,
}

// Custom float `index` of the primitive (or instance) being shaded, 0 past
// the ones it has: every vertex factory defines `vf_custom_data` (the local
// and sprite factories return their custom vec4's components, the instanced
// factory any of the instance's custom floats). Materials call this.
fn custom_data(in: MaterialInput, index: u32) -> f32 {
    return vf_custom_data(in, index);
}

// `vf_custom_data` of the factories whose custom floats are the four of
// `MaterialInput.custom` (the local and sprite factories); 0 past them.
fn custom_vec4_data(in: MaterialInput, index: u32) -> f32 {
    if (index < 4u) {
        return in.custom[index];
    }
    return 0.0;
}

struct MaterialOutput {
    base_color: vec3<f32>,
    metallic: f32,
    roughness: f32,
    specular: f32,
    emissive: vec3<f32>,
    opacity: f32,
    // Tangent-space shading normal ((0, 0, 1): the vertex normal). Its
    // length under 1 says how much the normals it averages vary (a normal
    // map's mip: its texels are not renormalized), which widens the
    // specular lobe (Toksvig); 1 = one direction.
    normal: vec3<f32>,
    // Multiplies the ambient light (1: unoccluded).
    ambient_occlusion: f32,
}

fn default_material(in: MaterialInput) -> MaterialOutput {
    var out: MaterialOutput;
    out.base_color = in.params.base_color.rgb * in.color.rgb;
    out.metallic = in.params.mrso.x;
    out.roughness = in.params.mrso.y;
    out.specular = in.params.mrso.z;
    out.opacity = in.params.mrso.w * in.params.base_color.a * in.color.a;
    out.emissive = in.params.emissive.rgb;
    out.normal = vec3<f32>(0.0, 0.0, 1.0);
    out.ambient_occlusion = 1.0;
    return out;
}

// The world-space shading normal for a tangent-space one, in glTF's
// convention (MikkTSpace tangents): +X along the tangent (increasing U),
// +Y along the binormal = sign * cross(normal, tangent), which points to
// the image's top (decreasing V: OpenGL-style normal maps), +Z along the
// normal. A mesh without tangents (or a zero normal from a material)
// shades with the vertex normal.
fn shading_normal(mi: MaterialInput, tangent_normal: vec3<f32>) -> vec3<f32> {
    let n = mi.world_normal;
    let t_raw = mi.world_tangent.xyz - n * dot(n, mi.world_tangent.xyz);
    if (dot(t_raw, t_raw) < 1e-12 || dot(tangent_normal, tangent_normal) < 1e-12) {
        return n;
    }
    let t = normalize(t_raw);
    let b = select(1.0, -1.0, mi.world_tangent.w < 0.0) * cross(n, t);
    return normalize(tangent_normal.x * t + tangent_normal.y * b + tangent_normal.z * n);
}
