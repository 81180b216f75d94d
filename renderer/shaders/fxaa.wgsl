// FXAA 3.11 (Timothy Lottes), its quality algorithm at preset 12 (5 steps),
// on the tone-mapped image (renderer/src/postprocess/fxaa.rs). The input is
// the 8-bit sRGB output of tone mapping, read as linear values; luma is
// taken in a perceptual space (the square root of linear luminance, close
// to the sRGB encoding FXAA was tuned for). Push constants: whether the
// region is anti-aliased (0: a wireframe view, passed through as drawn).

struct FxaaPush {
    enabled: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var input: texture_2d<f32>;
@group(0) @binding(1) var input_sampler: sampler;
var<immediate> fxaa: FxaaPush;

// Edges whose local contrast is below max(EDGE_MIN, EDGE_MAX * the
// brightest luma) are left alone (FXAA's "quality" defaults); sub-pixel
// aliasing is removed at SUBPIXEL of full strength.
const EDGE_MIN: f32 = 0.0312;
const EDGE_MAX: f32 = 0.125;
const SUBPIXEL: f32 = 0.75;
const STEPS: u32 = 5u;

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

fn luma(c: vec3<f32>) -> f32 {
    return sqrt(dot(c, vec3<f32>(0.299, 0.587, 0.114)));
}

fn luma_at(p: vec2<i32>, size: vec2<i32>) -> f32 {
    return luma(textureLoad(input, clamp(p, vec2<i32>(0), size - 1), 0).rgb);
}

fn luma_uv(uv: vec2<f32>) -> f32 {
    return luma(textureSampleLevel(input, input_sampler, uv, 0.0).rgb);
}

// How far the edge search moves at step `i` (in pixels): FXAA's quality
// preset 12 (five steps, the last a long jump that ends the search).
fn step_size(i: u32) -> f32 {
    return select(select(select(12.0, 4.0, i < 4u), 2.0, i < 3u), 1.5, i < 2u);
}

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let size = vec2<i32>(textureDimensions(input));
    let inv = 1.0 / vec2<f32>(size);
    let p = vec2<i32>(position.xy);
    let center = textureLoad(input, p, 0);
    let m = luma(center.rgb);
    let n = luma_at(p + vec2<i32>(0, -1), size);
    let s = luma_at(p + vec2<i32>(0, 1), size);
    let e = luma_at(p + vec2<i32>(1, 0), size);
    let w = luma_at(p + vec2<i32>(-1, 0), size);
    let lo = min(m, min(min(n, s), min(e, w)));
    let hi = max(m, max(max(n, s), max(e, w)));
    let range = hi - lo;
    let edge = fxaa.enabled != 0u && range >= max(EDGE_MIN, hi * EDGE_MAX);
    var color = center.rgb;
    // The rest in a loop that runs once on an edge and not at all
    // elsewhere: lavapipe runs an untaken branch's body, not a loop that
    // does not start.
    for (var once = 0u; once < u32(edge); once++) {
        let nw = luma_at(p + vec2<i32>(-1, -1), size);
        let ne = luma_at(p + vec2<i32>(1, -1), size);
        let sw = luma_at(p + vec2<i32>(-1, 1), size);
        let se = luma_at(p + vec2<i32>(1, 1), size);
        let ns = n + s;
        let we = w + e;
        let horizontal_edge = abs(-2.0 * w + nw + sw) + 2.0 * abs(-2.0 * m + ns) + abs(-2.0 * e + ne + se);
        let vertical_edge = abs(-2.0 * n + nw + ne) + 2.0 * abs(-2.0 * m + we) + abs(-2.0 * s + sw + se);
        let horizontal = horizontal_edge >= vertical_edge;
        // The neighbours across the edge, and on which side it is steeper.
        let l1 = select(w, n, horizontal);
        let l2 = select(e, s, horizontal);
        let g1 = l1 - m;
        let g2 = l2 - m;
        let first_steeper = abs(g1) >= abs(g2);
        let gradient = 0.25 * max(abs(g1), abs(g2));
        var step = select(inv.x, inv.y, horizontal);
        var average = 0.5 * (l2 + m);
        if (first_steeper) {
            step = -step;
            average = 0.5 * (l1 + m);
        }
        let uv = position.xy * inv;
        var edge_uv = uv;
        if (horizontal) {
            edge_uv.y += 0.5 * step;
        } else {
            edge_uv.x += 0.5 * step;
        }
        let along = select(vec2<f32>(0.0, inv.y), vec2<f32>(inv.x, 0.0), horizontal);
        // Walk both ways along the edge until its contrast ends.
        var uv1 = edge_uv - along;
        var uv2 = edge_uv + along;
        var end1 = luma_uv(uv1) - average;
        var end2 = luma_uv(uv2) - average;
        var done1 = abs(end1) >= gradient;
        var done2 = abs(end2) >= gradient;
        for (var i = 1u; i < STEPS && !(done1 && done2); i++) {
            if (!done1) {
                uv1 -= along * step_size(i);
                end1 = luma_uv(uv1) - average;
                done1 = abs(end1) >= gradient;
            }
            if (!done2) {
                uv2 += along * step_size(i);
                end2 = luma_uv(uv2) - average;
                done2 = abs(end2) >= gradient;
            }
        }
        let d1 = select(uv.y - uv1.y, uv.x - uv1.x, horizontal);
        let d2 = select(uv2.y - uv.y, uv2.x - uv.x, horizontal);
        let nearer_first = d1 < d2;
        let thickness = d1 + d2;
        let pixel_offset = -min(d1, d2) / thickness + 0.5;
        // Only when the nearer end's contrast has the sign that puts this
        // pixel on the edge's other side.
        let center_darker = m < average;
        let right_side = (select(end2, end1, nearer_first) < 0.0) != center_darker;
        let edge_offset = select(0.0, pixel_offset, right_side);
        // Sub-pixel aliasing: a pixel unlike all its neighbours.
        let mean = (2.0 * (ns + we) + nw + ne + sw + se) / 12.0;
        let sub1 = clamp(abs(mean - m) / range, 0.0, 1.0);
        let sub2 = (-2.0 * sub1 + 3.0) * sub1 * sub1;
        let offset = max(edge_offset, sub2 * sub2 * SUBPIXEL);
        var final_uv = uv;
        if (horizontal) {
            final_uv.y += offset * step;
        } else {
            final_uv.x += offset * step;
        }
        color = textureSampleLevel(input, input_sampler, final_uv, 0.0).rgb;
    }
    return vec4<f32>(color, center.a);
}
