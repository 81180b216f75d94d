// Bloom's composite (renderer/src/postprocess/bloom.rs): scene color and
// the bloom (the upsampled chain's largest level, the sum of `levels`
// blurs, read bilinearly at full resolution and divided by `levels`).
// Without a threshold, energy-conserving: mix(scene, bloom, intensity)
// moves light around without adding any; with one, the thresholded light
// is added: scene + intensity * bloom. Push constants: intensity (x), the
// level count (y), whether a threshold applies (z), and 0 in w for a
// wireframe view's rectangle (scene color as drawn).

struct BloomPush {
    intensity: f32,
    levels: f32,
    additive: f32,
    enabled: f32,
}

@group(0) @binding(0) var scene_color: texture_2d<f32>;
@group(0) @binding(1) var bloom_sampler: sampler;
@group(0) @binding(2) var bloom_texture: texture_2d<f32>;
var<immediate> bloom: BloomPush;

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let scene = textureLoad(scene_color, vec2<i32>(position.xy), 0);
    let uv = position.xy / vec2<f32>(textureDimensions(scene_color));
    let glow = textureSampleLevel(bloom_texture, bloom_sampler, uv, 0.0).rgb / bloom.levels;
    let k = bloom.intensity * bloom.enabled;
    let mixed = mix(scene.rgb, glow, k);
    let added = scene.rgb + glow * k;
    return vec4<f32>(select(mixed, added, bloom.additive > 0.5), scene.a);
}
