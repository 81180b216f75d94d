// Debug lines (renderer/src/debug_lines.rs): coloured segments in world
// space drawn into scene colour after a view's translucency, depth-tested
// against the scene (less-or-equal) and writing no depth. The colour is
// sRGB with alpha, turned linear here (scene colour is linear HDR, tone
// mapped afterwards as everything else).

struct LinesPush {
    // World to clip: the view's view-projection (jittered as its passes are).
    view_proj: mat4x4<f32>,
}

var<immediate> lines: LinesPush;

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
}

@vertex
fn vs_main(@location(0) position: vec3<f32>, @location(1) color: vec4<f32>) -> VsOut {
    var out: VsOut;
    out.clip = lines.view_proj * vec4<f32>(position, 1.0);
    out.color = vec4<f32>(pow(color.rgb, vec3<f32>(2.2)), color.a);
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color.rgb, 1.0);
}
