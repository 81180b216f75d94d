// The environment drawn behind the scene (renderer/src/environment/gpu.rs):
// one triangle over the view at the far plane, drawn after the opaque base
// pass where the depth is still the cleared 1 (depth test less-or-equal, no
// write), looking up the environment's equirectangular image along each
// pixel's view ray.

struct SkyPush {
    // Clip space to world (the view's inverse view-projection).
    clip_to_world: mat4x4<f32>,
    // The viewport: x, y, width, height in pixels.
    viewport: vec4<f32>,
    // The environment's intensity (times r.SkyLight's), and the source level
    // whose texels match a pixel.
    intensity: f32,
    lod: f32,
    _pad: vec2<f32>,
}

var<immediate> sky: SkyPush;
@group(0) @binding(0) var source: texture_2d<f32>;
@group(0) @binding(1) var source_sampler: sampler;

const PI: f32 = 3.14159265;

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 1.0, 1.0);
}

@fragment
fn fs_main(@builtin(position) pixel: vec4<f32>) -> @location(0) vec4<f32> {
    let ndc = vec2<f32>(2.0 * (pixel.x - sky.viewport.x) / sky.viewport.z - 1.0, 2.0 * (pixel.y - sky.viewport.y) / sky.viewport.w - 1.0);
    let near = sky.clip_to_world * vec4<f32>(ndc, 0.0, 1.0);
    let far = sky.clip_to_world * vec4<f32>(ndc, 1.0, 1.0);
    let d = normalize(far.xyz / far.w - near.xyz / near.w);
    let uv = vec2<f32>(0.5 - atan2(d.y, d.x) / (2.0 * PI), acos(clamp(d.z, -1.0, 1.0)) / PI);
    return vec4<f32>(textureSampleLevel(source, source_sampler, uv, sky.lod).rgb * sky.intensity, 1.0);
}
