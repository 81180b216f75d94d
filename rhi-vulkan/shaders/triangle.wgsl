// One triangle from the vertex index, no vertex buffers; color from a uniform.
struct Params {
    color: vec4<f32>,
}
@group(0) @binding(0) var<uniform> params: Params;

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    // Apex at the top of the image (Vulkan clip space: y = -1 is the top row).
    var p = array<vec2<f32>, 3>(vec2<f32>(0.0, -0.9), vec2<f32>(-0.5, -0.1), vec2<f32>(0.5, -0.1));
    return vec4<f32>(p[i], 0.0, 1.0);
}

@fragment
fn fs_main() -> @location(0) vec4<f32> {
    return params.color;
}
