// Depth-only pass for masked materials: evaluates the material to discard
// texels whose opacity is below 0.5.

struct DepthVsOut {
    @builtin(position) @invariant clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec4<f32>,
    @location(3) uv0: vec2<f32>,
    @location(4) custom: vec4<f32>,
}

@vertex
fn vs_main(input: VertexFactoryInput) -> DepthVsOut {
    let v = vf_fetch(input);
    var out: DepthVsOut;
    out.clip = view.view_proj * vec4<f32>(v.world_position, 1.0);
    out.world_position = v.world_position;
    out.normal = v.world_normal;
    out.color = v.color;
    out.uv0 = v.uv0;
    out.custom = v.custom;
    return out;
}

@fragment
fn fs_main(in: DepthVsOut) {
    var mi: MaterialInput;
    mi.world_position = in.world_position;
    mi.world_normal = normalize(in.normal);
    mi.color = in.color;
    mi.uv0 = in.uv0;
    mi.custom = in.custom;
    mi.params = materials[draw.material_index];
    if (material_main(mi).opacity < 0.5) {
        discard;
    }
}
