// Bloom's downsample (renderer/src/postprocess/bloom.rs): the next smaller
// mip of the chain from the one before, by the 13-tap filter of Jimenez's
// "Next generation post processing in Call of Duty: Advanced Warfare"
// (five overlapping 2x2 boxes, weighted 0.5 for the centre one and 0.125
// for each corner one). The first step, from scene color, also applies the
// threshold (a soft knee) and weighs each box by 1 / (1 + luma) (Karis'
// average), so that a lone very bright pixel cannot make a flickering
// blob. Push constants: the source's texel size (xy), the threshold (z)
// and whether this is the first step (w, 0 or 1).

struct BloomPush {
    texel: vec2<f32>,
    threshold: f32,
    first: f32,
}

@group(0) @binding(0) var source: texture_2d<f32>;
@group(0) @binding(1) var source_sampler: sampler;
var<immediate> bloom: BloomPush;

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

fn s(uv: vec2<f32>, dx: f32, dy: f32) -> vec3<f32> {
    // Half floats may hold infinities: keep the filter finite.
    return min(textureSampleLevel(source, source_sampler, uv + vec2<f32>(dx, dy) * bloom.texel, 0.0).rgb, vec3<f32>(65504.0));
}

fn luma(c: vec3<f32>) -> f32 {
    return dot(c, vec3<f32>(0.2126, 0.7152, 0.0722));
}

// The weight of a 2x2 box in the first step (1 elsewhere).
fn karis(c: vec3<f32>) -> f32 {
    return select(1.0, 1.0 / (1.0 + luma(c)), bloom.first > 0.5);
}

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let out_size = vec2<f32>(textureDimensions(source)) * 0.5;
    let uv = position.xy / max(floor(out_size), vec2<f32>(1.0));
    let a = s(uv, -2.0, -2.0);
    let b = s(uv, 0.0, -2.0);
    let c = s(uv, 2.0, -2.0);
    let d = s(uv, -2.0, 0.0);
    let e = s(uv, 0.0, 0.0);
    let f = s(uv, 2.0, 0.0);
    let g = s(uv, -2.0, 2.0);
    let h = s(uv, 0.0, 2.0);
    let i = s(uv, 2.0, 2.0);
    let j = s(uv, -1.0, -1.0);
    let k = s(uv, 1.0, -1.0);
    let l = s(uv, -1.0, 1.0);
    let m = s(uv, 1.0, 1.0);
    // The five boxes: the centre one (j k l m) and the four corner ones.
    let boxes = array<vec3<f32>, 5>((j + k + l + m) * 0.25, (a + b + d + e) * 0.25, (b + c + e + f) * 0.25, (d + e + g + h) * 0.25, (e + f + h + i) * 0.25);
    let weights = array<f32, 5>(0.5, 0.125, 0.125, 0.125, 0.125);
    var sum = vec3<f32>(0.0);
    var total = 0.0;
    for (var n = 0u; n < 5u; n++) {
        let w = weights[n] * karis(boxes[n]);
        sum += boxes[n] * w;
        total += w;
    }
    var color = sum / total;
    // The threshold's soft knee (half its value wide): only light above it blooms.
    if (bloom.first > 0.5 && bloom.threshold > 0.0) {
        let brightness = max(color.r, max(color.g, color.b));
        let knee = bloom.threshold * 0.5;
        let soft = clamp(brightness - bloom.threshold + knee, 0.0, 2.0 * knee);
        let contribution = max(soft * soft / (4.0 * knee + 1e-5), brightness - bloom.threshold) / max(brightness, 1e-5);
        color *= contribution;
    }
    return vec4<f32>(color, 1.0);
}
