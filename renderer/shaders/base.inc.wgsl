// The base pass (forward lit) and the translucency pass: evaluates the
// material, lights it with the directional light (shadowed) and the point
// lights. BLEND_MODE (0 opaque, 1 masked, 2 translucent, 3 additive) and
// TWO_SIDED are constants the composer prepends.

@group(1) @binding(0) var shadow_map: texture_depth_2d;
@group(1) @binding(1) var shadow_sampler: sampler_comparison;

struct VsOut {
    @builtin(position) @invariant clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec4<f32>,
    @location(3) uv0: vec2<f32>,
    @location(4) custom: vec4<f32>,
    @location(5) fade: f32,
}

@vertex
fn vs_main(input: VertexFactoryInput) -> VsOut {
    let v = vf_fetch(input);
    var out: VsOut;
    out.clip = view.view_proj * vec4<f32>(v.world_position, 1.0);
    out.world_position = v.world_position;
    out.normal = v.world_normal;
    out.color = v.color;
    out.uv0 = v.uv0;
    out.custom = v.custom;
    out.fade = v.fade;
    return out;
}

fn shadow_factor(world_position: vec3<f32>, n_dot_l: f32) -> f32 {
    if (view.light_direction.w < 0.5) {
        return 1.0;
    }
    let p = view.shadow_view_proj * vec4<f32>(world_position, 1.0);
    let ndc = p.xyz / p.w;
    let uv = vec2<f32>(ndc.x * 0.5 + 0.5, ndc.y * 0.5 + 0.5);
    if (any(uv < vec2<f32>(0.0)) || any(uv > vec2<f32>(1.0)) || ndc.z > 1.0) {
        return 1.0;
    }
    // ambient.w: the bias in shadow-map depth units; grows on slopes facing away.
    let bias = view.ambient.w * (1.0 + 4.0 * (1.0 - clamp(n_dot_l, 0.0, 1.0)));
    let texel = 1.0 / f32(max(view.counts.y, 1u));
    var lit = 0.0;
    for (var y = -1; y <= 1; y++) {
        for (var x = -1; x <= 1; x++) {
            lit += textureSampleCompareLevel(shadow_map, shadow_sampler, uv + vec2<f32>(f32(x), f32(y)) * texel, ndc.z - bias);
        }
    }
    return lit / 9.0;
}

@fragment
fn fs_main(in: VsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    var mi: MaterialInput;
    mi.world_position = in.world_position;
    var n = normalize(in.normal);
    if (TWO_SIDED && !front) {
        n = -n;
    }
    mi.world_normal = n;
    mi.color = in.color;
    mi.uv0 = in.uv0;
    mi.custom = in.custom;
    mi.params = materials[draw.material_index];
    let m = material_main(mi);
    let opacity = m.opacity * in.fade;
    if (BLEND_MODE == 1u && opacity < 0.5) {
        discard;
    }
    let to_eye = view.camera_position.xyz - in.world_position;
    let v_dir = select(normalize(-view.light_direction.xyz), normalize(to_eye), view.camera_position.w > 0.5);
    let l = normalize(-view.light_direction.xyz);
    let n_dot_l = max(dot(n, l), 0.0);
    let shininess = mix(256.0, 4.0, clamp(m.roughness, 0.0, 1.0));
    let h = normalize(l + v_dir);
    let spec = m.specular * pow(max(dot(n, h), 0.0), shininess) * n_dot_l;
    let diffuse_color = m.base_color * (1.0 - m.metallic);
    let spec_color = mix(vec3<f32>(0.04), m.base_color, m.metallic);
    var color = diffuse_color * view.ambient.rgb;
    color += (diffuse_color * n_dot_l + spec_color * spec) * view.light_color.rgb * shadow_factor(in.world_position, n_dot_l);
    for (var i = 0u; i < min(view.counts.x, 8u); i++) {
        let light = view.point_lights[i];
        let d = light.position_radius.xyz - in.world_position;
        let dist = length(d);
        let radius = light.position_radius.w;
        let falloff = clamp(1.0 - dist / radius, 0.0, 1.0);
        let pl = d / max(dist, 1e-4);
        color += diffuse_color * max(dot(n, pl), 0.0) * light.color.rgb * falloff * falloff;
    }
    color += m.emissive;
    if (BLEND_MODE >= 2u) {
        return vec4<f32>(color, clamp(opacity, 0.0, 1.0));
    }
    return vec4<f32>(color, 1.0);
}
