// Instanced quads: stream 0 is one unit quad, stream 1 one instance per quad
// (offset in clip space, color). Push constants scale the quad.
struct Push {
    scale: vec2<f32>,
    pad: vec2<f32>,
}
var<immediate> push: Push;

struct VsOut {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
}

@vertex
fn vs_main(
    @location(0) corner: vec2<f32>,
    @location(1) offset: vec2<f32>,
    @location(2) color: vec4<f32>,
) -> VsOut {
    var out: VsOut;
    out.position = vec4<f32>(corner * push.scale + offset, 0.0, 1.0);
    out.color = color;
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return in.color;
}
