// What every pass that evaluates a material shares (the base and
// translucency passes, the masked depth pass): the interpolants from the
// vertex factory to the fragment (`MaterialVsOut`), the vertex shader that
// fills them, and the `MaterialInput` built from them, with the tangent
// frame reversed on back faces of two-sided materials. The vertex shader
// itself is `material_vs_main.inc.wgsl` (a pass with interpolants of its
// own, as the masked depth pass writing velocity, has its own); the pass's
// shader follows.

struct MaterialVsOut {
    @builtin(position) @invariant clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec4<f32>,
    @location(3) uv0: vec2<f32>,
    @location(4) custom: vec4<f32>,
    // Per instance: flat, so an encoded fade (`dithered_lod_fade`) arrives exact.
    @location(5) @interpolate(flat) fade: f32,
    @location(6) tangent: vec4<f32>,
    @location(7) uv12: vec4<f32>,
    @location(8) uv3: vec2<f32>,
    @location(9) custom1: vec4<f32>,
    @location(10) @interpolate(flat) instance_id: u32,
}

// The interpolants of a factory's vertex, clip position included: what
// every material pass's vertex shader returns (`material_vs_main.inc.wgsl`).
fn material_vs_out(v: FactoryVertex) -> MaterialVsOut {
    var out: MaterialVsOut;
    out.clip = view_clip(v.world_position);
    out.world_position = v.world_position;
    out.normal = v.world_normal;
    out.color = v.color;
    out.uv0 = v.uv0;
    out.custom = v.custom;
    out.fade = v.fade;
    out.tangent = v.world_tangent;
    out.uv12 = vec4<f32>(v.uv1, v.uv2);
    out.uv3 = v.uv3;
    out.custom1 = v.custom1;
    out.instance_id = v.instance_id;
    return out;
}

fn material_input(in: MaterialVsOut, front: bool) -> MaterialInput {
    var mi: MaterialInput;
    mi.world_position = in.world_position;
    // A two-sided material's back face reverses the whole tangent frame
    // (normal, tangent and the binormal's sign, so the binormal too), as
    // glTF does: its shading normal is the front's, negated.
    let back = TWO_SIDED && !front;
    let n = select(1.0, -1.0, back) * normalize(in.normal);
    mi.world_normal = n;
    let dn_dx = dpdx(n);
    let dn_dy = dpdy(n);
    mi.normal_variance = dot(dn_dx, dn_dx) + dot(dn_dy, dn_dy);
    mi.world_tangent = select(1.0, -1.0, back) * in.tangent;
    mi.color = in.color;
    mi.uv0 = in.uv0;
    mi.uv1 = in.uv12.xy;
    mi.uv2 = in.uv12.zw;
    mi.uv3 = in.uv3;
    // In uniform control flow, from interpolants only (see MaterialInput.uv_dx).
    mi.uv_dx = array<vec2<f32>, 4>(dpdx(in.uv0), dpdx(in.uv12.xy), dpdx(in.uv12.zw), dpdx(in.uv3));
    mi.uv_dy = array<vec2<f32>, 4>(dpdy(in.uv0), dpdy(in.uv12.xy), dpdy(in.uv12.zw), dpdy(in.uv3));
    mi.custom = in.custom;
    mi.custom1 = in.custom1;
    mi.instance_id = in.instance_id;
    mi.params = materials[draw.material_index];
    return mi;
}
