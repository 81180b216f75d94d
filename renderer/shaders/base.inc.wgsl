// The base pass (forward lit) and the translucency pass: evaluates the
// material and shades it by its shading model — default lit (metallic-
// roughness PBR: the directional lights, the first shadowed by the shadow
// map, the point and spot lights of the pixel's light-grid cluster and a
// hemisphere ambient or the environment; see `default_lit`) or unlit (base color + emissive) —
// into the HDR scene color. BLEND_MODE (0 opaque, 1 masked, 2 translucent,
// 3 additive), SHADING_MODEL (0 default lit, 1 unlit), TWO_SIDED,
// DITHERED_FADE (the vertex factory's `dithered_fade()`) and
// ALPHA_TO_COVERAGE (masked under MSAA) are constants the composer
// prepends. `material_vs.inc.wgsl` (interpolants, MaterialInput) and
// `material_vs_main.inc.wgsl` (the vertex shader) come first.

@group(1) @binding(0) var shadow_map: texture_depth_2d;
@group(1) @binding(1) var shadow_sampler: sampler_comparison;
// The light grid (renderer/src/light_grid.rs): the point and spot lights
// some view sees, per cluster of every view its first index and count in
// `light_indices`, and the indices into `lights`.
@group(1) @binding(2) var<storage, read> lights: array<LocalLight>;
@group(1) @binding(3) var<storage, read> light_grid: array<vec2<u32>>;
@group(1) @binding(4) var<storage, read> light_indices: array<u32>;
// The point and spot lights' shadow atlas and its tiles
// (renderer/src/shadow_atlas.rs), sampled with `shadow_sampler`.
@group(1) @binding(5) var shadow_atlas: texture_depth_2d;
@group(1) @binding(6) var<storage, read> shadow_tiles: array<ShadowTile>;
// Per cluster, how many of its lights (listed last) have a shadow; read
// only when the view uniform's `light_grid_has_shadows` says it is filled.
@group(1) @binding(7) var<storage, read> light_grid_shadowed: array<u32>;
// The environment (renderer/src/environment): the prefiltered specular
// cube (level i: roughness i / (levels - 1)), its trilinear sampler, the
// split sum's BRDF table (A, B at n.v across, roughness down) and the
// irradiance / pi as nine spherical-harmonic coefficients. Read only where
// the view uniform's `environment_levels` is not 0.
@group(1) @binding(8) var environment_specular: texture_cube<f32>;
@group(1) @binding(9) var environment_sampler: sampler;
@group(1) @binding(10) var environment_brdf: texture_2d<f32>;
@group(1) @binding(11) var<storage, read> environment_sh: array<vec4<f32>, 9>;

// Visibility of the shadowed directional light at `world_position` in
// cascade `i`: the cascade's projection, its tile of the shadow map, PCF
// by `r.Shadow.FilterQuality` (`filtered_shadow`), taps kept inside the
// tile. The light's depth bias grows on slopes facing away from it; its
// normal bias pushes the position along the normal `n`.
fn cascade_visibility(i: u32, world_position: vec3<f32>, n: vec3<f32>, n_dot_l: f32) -> f32 {
    let c = view.shadow_cascades[i];
    let p = c.view_proj * vec4<f32>(world_position + n * c.normal_bias, 1.0);
    let ndc = p.xyz / p.w;
    let local = vec2<f32>(ndc.x * 0.5 + 0.5, ndc.y * 0.5 + 0.5);
    if (any(local < vec2<f32>(0.0)) || any(local > vec2<f32>(1.0)) || ndc.z > 1.0) {
        return 1.0;
    }
    let bias = c.bias * (1.0 + 4.0 * (1.0 - clamp(n_dot_l, 0.0, 1.0)));
    let texel = view.shadow_texel;
    let lo = c.atlas_rect.xy + vec2<f32>(texel);
    let hi = c.atlas_rect.xy + c.atlas_rect.zw - vec2<f32>(texel);
    let uv = c.atlas_rect.xy + local * c.atlas_rect.zw;
    return filtered_shadow(shadow_map, uv, ndc.z - bias, texel, lo, hi, shadow_taps());
}

// Visibility of a point or spot light with a shadow at `world_position`
// (normal `n`): its tile (a point light's cube face by the direction's
// largest axis), the position pushed along the normal and toward the
// light by its shadow bias (in the tile's texels at its distance), then
// `taps` of the filter of `r.Shadow.FilterQuality` inside the tile (0:
// lit, no lookup).
fn local_shadow(light: LocalLight, world_position: vec3<f32>, n: vec3<f32>, taps: u32) -> f32 {
    let to_p = world_position - light.position;
    var index = u32(light.shadow);
    if (light.spot_scale == 0.0) {
        let a = abs(to_p);
        if (a.x >= a.y && a.x >= a.z) {
            index += select(1u, 0u, to_p.x > 0.0);
        } else if (a.y >= a.z) {
            index += select(3u, 2u, to_p.y > 0.0);
        } else {
            index += select(5u, 4u, to_p.z > 0.0);
        }
    }
    let t = shadow_tiles[index];
    let p = world_position + n * (light.shadow_normal_bias * t.texel_at_unit * length(to_p)) - to_p * (light.shadow_depth_bias * t.texel_at_unit);
    let clip = t.view_proj * vec4<f32>(p, 1.0);
    if (clip.w <= 0.0) {
        return 1.0;
    }
    let ndc = clip.xyz / clip.w;
    let local = vec2<f32>(ndc.x * 0.5 + 0.5, ndc.y * 0.5 + 0.5);
    if (any(local < vec2<f32>(0.0)) || any(local > vec2<f32>(1.0)) || ndc.z > 1.0) {
        return 1.0;
    }
    let texel = t.atlas_texel;
    let lo = t.atlas_rect.xy + vec2<f32>(texel);
    let hi = t.atlas_rect.xy + t.atlas_rect.zw - vec2<f32>(texel);
    let uv = t.atlas_rect.xy + local * t.atlas_rect.zw;
    return filtered_shadow(shadow_atlas, uv, ndc.z - 1e-5, texel, lo, hi, taps);
}

// Percentage-closer filtering by `r.Shadow.FilterQuality`, every tap a
// hardware 2x2 bilinear comparison kept within [lo, hi] (a tile): 0 one
// tap; 1 four taps half a texel apart, a 3x3 footprint with tent weights
// (1 2 1); 2 nine taps a texel apart with weights 1 2 1, a 4x4 footprint.
// Tap `k`'s offset in texels (xy) and weight (z).
fn shadow_tap(k: u32) -> vec3<f32> {
    if (view.shadow_filter == 1u) {
        return vec3<f32>(f32(k & 1u) - 0.5, f32(k >> 1u) - 0.5, 1.0);
    }
    let x = i32(k % 3u) - 1;
    let y = i32(k / 3u) - 1;
    return vec3<f32>(f32(x), f32(y), select(1.0, 2.0, x == 0) * select(1.0, 2.0, y == 0));
}

// The taps of the filter: 1, 4 or 9, counted from the uniform so the
// compiler does not unroll the loop (unrolled taps doubled the base pass's
// time on lavapipe, which runs untaken branches' bodies masked, even where
// no shadow was sampled).
fn shadow_taps() -> u32 {
    return select(select(9u, 4u, view.shadow_filter == 1u), 1u, view.shadow_filter == 0u);
}

// `shadow_tap`'s filter on `map` (the cascades' shadow map or the atlas),
// `taps` of its taps (0: lit, no lookup).
fn filtered_shadow(map: texture_depth_2d, uv: vec2<f32>, depth: f32, texel: f32, lo: vec2<f32>, hi: vec2<f32>, taps: u32) -> f32 {
    var lit = 0.0;
    var total = 0.0;
    for (var k = 0u; k < taps; k++) {
        let tap = select(shadow_tap(k), vec3<f32>(0.0, 0.0, 1.0), view.shadow_filter == 0u);
        lit += tap.z * textureSampleCompareLevel(map, shadow_sampler, clamp(uv + tap.xy * texel, lo, hi), depth);
        total += tap.z;
    }
    return select(1.0, lit / total, taps > 0u);
}

// The shadowed directional light's visibility at `world_position` (its
// `shadowed` flag says the shadow map holds this frame's shadow of it):
// the cascade whose depth range holds the pixel, blended into the next
// over the last part of its range; lit past the last one.
fn shadow_factor(world_position: vec3<f32>, n: vec3<f32>, n_dot_l: f32) -> f32 {
    let depth = dot(view.view_depth_axis.xyz, world_position) + view.view_depth_axis.w;
    let count = min(view.shadow_cascade_count, 4u);
    // The first cascade whose range reaches the depth, without a loop:
    // the count of cascades that end before it.
    let i = u32(depth > view.shadow_cascades[0].far_depth) + u32(depth > view.shadow_cascades[1].far_depth && count > 1u)
        + u32(depth > view.shadow_cascades[2].far_depth && count > 2u);
    if (i >= count || depth > view.shadow_cascades[i].far_depth) {
        return 1.0;
    }
    let v = cascade_visibility(i, world_position, n, n_dot_l);
    let blend_start = view.shadow_cascades[i].blend_start;
    if (depth > blend_start && i + 1u < count) {
        let t = (depth - blend_start) / max(view.shadow_cascades[i].far_depth - blend_start, 1e-6);
        return mix(v, cascade_visibility(i + 1u, world_position, n, n_dot_l), t);
    }
    return v;
}

// ---- Default-lit shading: metallic-roughness PBR (UE's DefaultLit) ----
// Units (renderer/src/scene/light.rs): a directional light's `color` is
// the illuminance (lux) it gives a surface facing it; a point or spot
// light's is its luminous intensity (candela: illuminance = intensity /
// distance², windowed to 0 at its radius, times a spot's cone); the
// hemisphere ambient is a radiance. Light is linear and HDR; the tone-mapping pass maps it to 8 bits.

const PI: f32 = 3.14159265;

// The GGX / Trowbridge-Reitz distribution of microfacet normals; a2 =
// alpha², alpha = roughness² (UE's, Disney's remapping).
fn d_ggx(a2: f32, n_dot_h: f32) -> f32 {
    let d = (n_dot_h * a2 - n_dot_h) * n_dot_h + 1.0;
    return a2 / (PI * d * d);
}

// Smith's height-correlated masking-shadowing with the BRDF's
// 1 / (4 n.l n.v) folded in (Heitz 2014; UE's Vis_SmithJoint).
fn v_smith_joint(a2: f32, n_dot_v: f32, n_dot_l: f32) -> f32 {
    let v = n_dot_l * sqrt(n_dot_v * n_dot_v * (1.0 - a2) + a2);
    let l = n_dot_v * sqrt(n_dot_l * n_dot_l * (1.0 - a2) + a2);
    return 0.5 / max(v + l, 1e-6);
}

// Schlick's Fresnel. As in UE, reflectance under 2% is taken as
// pre-baked occlusion: specular 0 (F0 = 0) reflects nothing, even at grazing angles.
fn f_schlick(f0: vec3<f32>, v_dot_h: f32) -> vec3<f32> {
    let fc = pow(1.0 - v_dot_h, 5.0);
    return clamp(50.0 * f0.g, 0.0, 1.0) * fc + (1.0 - fc) * f0;
}

// Karis' analytic fit of the pre-integrated environment BRDF (UE's
// EnvBRDFApprox): how much of a uniform environment the specular lobe reflects.
fn env_brdf_approx(f0: vec3<f32>, roughness: f32, n_dot_v: f32) -> vec3<f32> {
    let r = roughness * vec4<f32>(-1.0, -0.0275, -0.572, 0.022) + vec4<f32>(1.0, 0.0425, 1.04, -0.04);
    let a004 = min(r.x * r.x, exp2(-9.28 * n_dot_v)) * r.x + r.y;
    let ab = vec2<f32>(-1.04, 1.04) * a004 + r.zw;
    return f0 * ab.x + clamp(50.0 * f0.g, 0.0, 1.0) * ab.y;
}

// The hemisphere ambient's radiance in direction `dir`: the ground's below,
// the sky's above (+Z is up), blended by the direction's height.
fn hemisphere_radiance(dir: vec3<f32>) -> vec3<f32> {
    return mix(view.ground_radiance, view.sky_radiance, clamp(dir.z * 0.5 + 0.5, 0.0, 1.0));
}

// The environment's irradiance / pi towards normal `n`: the radiance a
// white Lambert surface facing `n` returns.
fn environment_irradiance(n: vec3<f32>) -> vec3<f32> {
    let c = environment_sh;
    var e = c[0].rgb * 0.282095;
    e += (c[1].rgb * n.y + c[2].rgb * n.z + c[3].rgb * n.x) * 0.488603;
    e += (c[4].rgb * (n.x * n.y) + c[5].rgb * (n.y * n.z) + c[7].rgb * (n.x * n.z)) * 1.092548;
    e += c[6].rgb * (0.315392 * (3.0 * n.z * n.z - 1.0)) + c[8].rgb * (0.546274 * (n.x * n.x - n.y * n.y));
    return max(e, vec3<f32>(0.0));
}

struct Surface {
    n: vec3<f32>,
    v: vec3<f32>,
    n_dot_v: f32,
    diffuse_color: vec3<f32>,
    f0: vec3<f32>,
    a2: f32,
}

// Light arriving from direction `l` with irradiance `e` (facing it), times
// n.l: glTF 2.0's BRDF (its specification's Appendix B, `fresnel_mix`):
// the light the specular layer does not reflect (1 - F) reaches the
// Lambert diffuse base; F · D · V is the GGX specular.
fn direct_light(s: Surface, l: vec3<f32>, e: vec3<f32>) -> vec3<f32> {
    let n_dot_l = clamp(dot(s.n, l), 0.0, 1.0);
    let sum = l + s.v;
    let h = sum * inverseSqrt(max(dot(sum, sum), 1e-12));
    let n_dot_h = clamp(dot(s.n, h), 0.0, 1.0);
    let v_dot_h = clamp(dot(s.v, h), 0.0, 1.0);
    let f = f_schlick(s.f0, v_dot_h);
    let specular = d_ggx(s.a2, n_dot_h) * v_smith_joint(s.a2, s.n_dot_v, n_dot_l) * f;
    return ((1.0 - f) * s.diffuse_color / PI + specular) * e * n_dot_l;
}

// UE's inverse-square falloff windowed to 0 at the radius:
// (1 - (d/r)^4)^2 / d² (`renderer::light_falloff`). (UE adds 1 to d², in
// its unit, the centimetre, to stay finite at the light; with metres that
// is 1e-4.)
fn light_falloff(dist_sq: f32, radius: f32) -> f32 {
    let x = dist_sq / (radius * radius);
    let window = clamp(1.0 - x * x, 0.0, 1.0);
    return window * window / (dist_sq + 1e-4);
}

// The light the point or spot light `index` adds: falloff, glTF's cone
// (`SpotLight::angular_attenuation`), and a light sphere's wider
// highlight (the lobe widened by source radius / (2 distance), Karis 2013).
// The pixel is inside the light's radius (`d`: from it to the light),
// `visibility` the light's shadow there (1: none).
fn local_light(s: Surface, index: u32, d: vec3<f32>, visibility: f32) -> vec3<f32> {
    let dist_sq = dot(d, d);
    let light = lights[index];
    let falloff = light_falloff(dist_sq, light.radius);
    let l = d * inverseSqrt(max(dist_sq, 1e-12));
    let cone = clamp(dot(-l, light.direction) * light.spot_scale + light.spot_offset, 0.0, 1.0);
    if (cone <= 0.0) {
        return vec3<f32>(0.0);
    }
    var lit = s;
    if (light.source_radius > 0.0) {
        let alpha = min(sqrt(s.a2) + light.source_radius * inverseSqrt(max(dist_sq, 1e-12)) * 0.5, 1.0);
        lit.a2 = alpha * alpha;
    }
    return direct_light(lit, l, light.color * (falloff * cone * cone * visibility));
}

// The first index, the count and the index of the light-grid cluster of
// the pixel at framebuffer position `pixel` and world position
// `world_position` (count 0: no cluster).
fn light_cluster(pixel: vec2<f32>, world_position: vec3<f32>) -> vec3<u32> {
    let size = view.light_grid_size;
    if (size.z == 0u) {
        return vec3<u32>(0u);
    }
    let tile = vec2<u32>(max(floor((pixel - view.light_grid_origin) / view.light_grid_tile_size), vec2<f32>(0.0)));
    let t = min(tile, size.xy - vec2<u32>(1u));
    let depth = dot(view.view_depth_axis.xyz, world_position) + view.view_depth_axis.w;
    let slice = u32(clamp(floor(log2(max(depth, 1e-6)) * view.light_grid_z_scale + view.light_grid_z_bias), 0.0, f32(size.z - 1u)));
    let c = view.light_grid_base + (slice * size.y + t.y) * size.x + t.x;
    return vec3<u32>(light_grid[c], c);
}

// How many of cluster `c`'s lights (its last ones) have a shadow.
fn light_cluster_shadowed(c: u32) -> u32 {
    if (view.light_grid_has_shadows == 0u) {
        return 0u;
    }
    return light_grid_shadowed[c];
}

// The environment's light off surface `s` (perceptual roughness
// `roughness`): the multiple-scattering split sum of
// renderer/src/environment's module docs, before ambient occlusion.
fn environment_light(s: Surface, roughness: f32) -> vec3<f32> {
    let r = reflect(-s.v, s.n);
    let lod = roughness * f32(view.environment_levels - 1u);
    let radiance = textureSampleLevel(environment_specular, environment_sampler, r, lod).rgb;
    let irradiance = environment_irradiance(s.n);
    let ab = textureSampleLevel(environment_brdf, environment_sampler, vec2<f32>(s.n_dot_v, roughness), 0.0).rg;
    let fss_ess = s.f0 * ab.x + clamp(50.0 * s.f0.g, 0.0, 1.0) * ab.y;
    let ems = 1.0 - (ab.x + ab.y);
    let f_avg = s.f0 + (1.0 - s.f0) / 21.0;
    let fms_ems = ems * fss_ess * f_avg / (1.0 - f_avg * ems);
    let kd = s.diffuse_color * (1.0 - fss_ess - fms_ems);
    return (fss_ess * radiance + (fms_ems + kd) * irradiance) * view.environment_intensity;
}

fn default_lit(mi: MaterialInput, m: MaterialOutput, world_position: vec3<f32>, pixel: vec2<f32>) -> vec3<f32> {
    // A material that builds its output without `default_material` leaves
    // the normal zero: the vertex normal then.
    let tangent_normal = select(vec3<f32>(0.0, 0.0, 1.0), m.normal, dot(m.normal, m.normal) > 1e-12);
    let n = shading_normal(mi, tangent_normal);
    // Perspective: towards the eye; orthographic: against the view direction.
    let back = cross(view.camera_right, view.camera_up);
    let v = normalize(select(back, view.camera_position - world_position, view.perspective != 0u));
    let metallic = clamp(m.metallic, 0.0, 1.0);
    // Specular anti-aliasing, both off with a variance scale of 0.
    // Geometric (Kaplanyan and Hoffman 2016, as Filament does it): the
    // normal's variance across the pixel widens the lobe, alpha² +=
    // min(2 · scale · variance, threshold). Normal map (Toksvig): a normal
    // shorter than 1 averages varied normals, alpha² += (1 - |n|) / |n|
    // (past the 2/255 an 8-bit normal map's rounding accounts for).
    let alpha_material = clamp(m.roughness, 0.03, 1.0) * clamp(m.roughness, 0.03, 1.0);
    let n_len = clamp(length(tangent_normal), 1e-4, 1.0);
    let toksvig = select(0.0, max((1.0 - n_len) / n_len - 2.0 / 255.0, 0.0), view.specular_aa_variance > 0.0);
    let kernel = min(2.0 * view.specular_aa_variance * mi.normal_variance, view.specular_aa_threshold) + toksvig;
    let alpha = sqrt(min(alpha_material * alpha_material + kernel, 1.0));
    let roughness = sqrt(alpha);
    var s: Surface;
    s.n = n;
    s.v = v;
    // Normals facing slightly away (interpolated, normal-mapped) still shade.
    s.n_dot_v = clamp(abs(dot(n, v)), 1e-4, 1.0);
    s.diffuse_color = m.base_color * (1.0 - metallic);
    s.f0 = mix(vec3<f32>(0.08 * clamp(m.specular, 0.0, 1.0)), m.base_color, metallic);
    s.a2 = alpha * alpha;
    // The directional lights, the shadowed one with the shadow map.
    var color = vec3<f32>(0.0);
    for (var i = 0u; i < min(view.directional_light_count, 4u); i++) {
        let light = view.directional_lights[i];
        let l = normalize(-light.direction);
        var lit = direct_light(s, l, light.color);
        if (light.shadowed != 0u) {
            lit *= shadow_factor(world_position, n, dot(n, l));
        }
        color += lit;
    }
    // The point and spot lights of the pixel's cluster (no cap: the list
    // holds every light that touches the cluster): the unshadowed ones,
    // then those with a shadow (each cluster lists them last,
    // `light_grid_shadowed` counts them). Two loops rather than a branch
    // per light: lavapipe runs an untaken branch's body masked, and the
    // shadow lookup is most of a light's cost. A light's position and
    // radius are read first, the rest only in range; a shadowed light
    // looks its shadow up only where it lights the surface (in its cone,
    // in front), by a tap count of 0 elsewhere: loops that do not run are
    // cheap on lavapipe where untaken branches are not.
    let cluster = light_cluster(pixel, world_position);
    let shadowed = light_cluster_shadowed(cluster.z);
    for (var i = 0u; i < cluster.y - shadowed; i++) {
        let index = light_indices[cluster.x + i];
        let d = lights[index].position - world_position;
        if (dot(d, d) < lights[index].radius * lights[index].radius) {
            color += local_light(s, index, d, 1.0);
        }
    }
    for (var i = cluster.y - shadowed; i < cluster.y; i++) {
        let index = light_indices[cluster.x + i];
        let d = lights[index].position - world_position;
        if (dot(d, d) < lights[index].radius * lights[index].radius) {
            let light = lights[index];
            let l = d * inverseSqrt(max(dot(d, d), 1e-12));
            let lights_it = dot(s.n, l) > 0.0 && dot(-l, light.direction) * light.spot_scale + light.spot_offset > 0.0;
            color += local_light(s, index, d, local_shadow(light, world_position, s.n, select(0u, shadow_taps(), lights_it)));
        }
    }
    // The ambient: the hemisphere's (diffuse from around the normal,
    // specular from around the reflection), replaced by the environment's
    // where the scene has one; occluded by the material's AO. The
    // environment in a loop of 0 or 1 iterations rather than a branch:
    // lavapipe would run an untaken branch's lookups masked.
    let ambient = s.diffuse_color * hemisphere_radiance(n) + env_brdf_approx(s.f0, roughness, s.n_dot_v) * hemisphere_radiance(reflect(-v, n));
    let ao = clamp(m.ambient_occlusion, 0.0, 1.0);
    color += ambient * ao;
    for (var i = 0u; i < min(view.environment_levels, 1u); i++) {
        color += (environment_light(s, roughness) - ambient) * ao;
    }
    return color + m.emissive;
}

@fragment
fn fs_main(in: MaterialVsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let mi = material_input(in, front);
    let m = material_main(mi);
    // DITHERED_FADE: opaque and masked pixels fade by the dither (as the
    // depth pass decides them); translucent ones by opacity.
    let dithered = DITHERED_FADE && BLEND_MODE <= 1u;
    let opacity = m.opacity * select(fade_opacity(in.fade), 1.0, dithered);
    // Alpha to coverage (ALPHA_TO_COVERAGE: a masked material under MSAA):
    // the opacity sharpened to a one-pixel ramp across the clip value
    // (Golus), output as alpha: the share of the pixel's samples covered,
    // so a cut-out's edge is anti-aliased as a triangle's is.
    let coverage = clamp((opacity - MATERIAL_MASK_CLIP) / max(fwidth(opacity), 1e-4) + 0.5, 0.0, 1.0);
    let clipped = select(opacity < MATERIAL_MASK_CLIP, coverage <= 0.0, ALPHA_TO_COVERAGE);
    if ((BLEND_MODE == 1u && clipped) || (dithered && !dithered_fade_keeps(in.fade, in.clip.xy))) {
        discard;
    }
    var color: vec3<f32>;
    if (SHADING_MODEL == 1u) {
        // Unlit.
        color = m.base_color + m.emissive;
    } else {
        color = default_lit(mi, m, in.world_position, in.clip.xy);
    }
    if (BLEND_MODE >= 2u) {
        return vec4<f32>(color, clamp(opacity, 0.0, 1.0));
    }
    return vec4<f32>(color, select(1.0, coverage, ALPHA_TO_COVERAGE && BLEND_MODE == 1u));
}
