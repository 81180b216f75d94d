// Bloom's upsample (renderer/src/postprocess/bloom.rs): this mip of the
// downsampled chain plus the next smaller level's sum, read through a 3x3
// tent filter (Jimenez's Call of Duty method, as Bevy does it), written to
// the upsampled chain. Push constants: the smaller level's texel size (xy).

struct BloomPush {
    texel: vec2<f32>,
    pad0: f32,
    pad1: f32,
}

@group(0) @binding(0) var smaller: texture_2d<f32>;
@group(0) @binding(1) var smaller_sampler: sampler;
@group(0) @binding(2) var level: texture_2d<f32>;
var<immediate> bloom: BloomPush;

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

fn s(uv: vec2<f32>, dx: f32, dy: f32) -> vec3<f32> {
    return textureSampleLevel(smaller, smaller_sampler, uv + vec2<f32>(dx, dy) * bloom.texel, 0.0).rgb;
}

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let uv = position.xy / vec2<f32>(textureDimensions(level));
    let tent = (s(uv, -1.0, -1.0) + 2.0 * s(uv, 0.0, -1.0) + s(uv, 1.0, -1.0) + 2.0 * s(uv, -1.0, 0.0) + 4.0 * s(uv, 0.0, 0.0)
        + 2.0 * s(uv, 1.0, 0.0) + s(uv, -1.0, 1.0) + 2.0 * s(uv, 0.0, 1.0) + s(uv, 1.0, 1.0)) / 16.0;
    return vec4<f32>(textureLoad(level, vec2<i32>(position.xy), 0).rgb + tent, 1.0);
}
