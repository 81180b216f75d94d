// Temporal anti-aliasing (renderer/src/postprocess/taa.rs): each frame's
// scene color, rendered with a sub-pixel jitter, is blended into the
// view's history, reprojected along the motion vectors. Per pixel:
//
// 1. Motion: the velocity of the nearest surface among the pixel and its
//    four diagonal neighbours (so an edge moves with the object in front);
//    where nothing was drawn (depth 1: the sky, the clear colour), the
//    camera's motion at the far plane (`clip_to_prev_clip`). Below a
//    hundredth of a pixel it is none: float noise in a still frame must
//    not blur the history.
// 2. History: sampled where the pixel was in the previous frame with a
//    Catmull-Rom filter (5 bilinear taps; exactly the texel when the
//    motion is 0), and clamped to the colour box (YCoCg) of the current
//    3x3 neighbourhood — a surface revealed this frame (disocclusion)
//    finds its old colour outside the box and takes the current one.
//    Off the viewport, or after a reset (first frame, camera cut, resize),
//    there is no history: the current colour alone.
// 3. Blend: current * weight + history * (1 - weight), each weighted by
//    1 / (1 + luma) (Karis 2014) so a lone bright sample does not flicker.
//
// Outputs: location 0 the anti-aliased colour (the post chain's input),
// location 1 the same into the view's next history.

struct TaaPush {
    // This frame's unjittered clip space -> the previous frame's (the
    // camera's motion; identity for a still camera).
    clip_to_prev_clip: mat4x4<f32>,
    // The view's rectangle in pixels: x, y, width, height.
    viewport: vec4<f32>,
    // The current frame's weight in the blend (r.TemporalAACurrentFrameWeight).
    current_weight: f32,
    // 1: no history (reset).
    reset: f32,
    pad0: f32,
    pad1: f32,
}

@group(0) @binding(0) var scene_color: texture_2d<f32>;
@group(0) @binding(1) var linear_sampler: sampler;
@group(0) @binding(2) var velocity: texture_2d<f32>;
@group(0) @binding(3) var scene_depth: texture_depth_2d;
@group(0) @binding(4) var history: texture_2d<f32>;
var<immediate> taa: TaaPush;

struct TaaOut {
    @location(0) color: vec4<f32>,
    @location(1) history: vec4<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

fn rgb_to_ycocg(c: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(0.25 * c.r + 0.5 * c.g + 0.25 * c.b, 0.5 * c.r - 0.5 * c.b, -0.25 * c.r + 0.5 * c.g - 0.25 * c.b);
}

fn ycocg_to_rgb(c: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(c.x + c.y - c.z, c.x + c.z, c.x - c.y - c.z);
}

fn luma(c: vec3<f32>) -> f32 {
    return dot(c, vec3<f32>(0.2126, 0.7152, 0.0722));
}

// The history at pixel position `p` (in pixels), Catmull-Rom filtered
// with 5 bilinear taps (the corners' weights, small, left out).
fn history_catmull_rom(p: vec2<f32>, size: vec2<f32>) -> vec3<f32> {
    let center = floor(p - 0.5) + 0.5;
    let f = p - center;
    let w0 = f * (-0.5 + f * (1.0 - 0.5 * f));
    let w1 = 1.0 + f * f * (-2.5 + 1.5 * f);
    let w2 = f * (0.5 + f * (2.0 - 1.5 * f));
    let w3 = f * f * (-0.5 + 0.5 * f);
    let w12 = w1 + w2;
    let at0 = (center - 1.0) / size;
    let at3 = (center + 2.0) / size;
    let at12 = (center + w2 / w12) / size;
    var sum = textureSampleLevel(history, linear_sampler, vec2<f32>(at12.x, at0.y), 0.0).rgb * (w12.x * w0.y);
    sum += textureSampleLevel(history, linear_sampler, vec2<f32>(at0.x, at12.y), 0.0).rgb * (w0.x * w12.y);
    sum += textureSampleLevel(history, linear_sampler, at12, 0.0).rgb * (w12.x * w12.y);
    sum += textureSampleLevel(history, linear_sampler, vec2<f32>(at3.x, at12.y), 0.0).rgb * (w3.x * w12.y);
    sum += textureSampleLevel(history, linear_sampler, vec2<f32>(at12.x, at3.y), 0.0).rgb * (w12.x * w3.y);
    let weight = w12.x * w0.y + w0.x * w12.y + w12.x * w12.y + w3.x * w12.y + w12.x * w3.y;
    return max(sum / weight, vec3<f32>(0.0));
}

// The pixel's motion since the previous frame, in pixels.
fn motion_pixels(p: vec2<i32>, pixel: vec2<f32>, lo: vec2<i32>, hi: vec2<i32>) -> vec2<f32> {
    var nearest = p;
    var depth = textureLoad(scene_depth, p, 0);
    let diagonals = array<vec2<i32>, 4>(vec2<i32>(-1, -1), vec2<i32>(1, -1), vec2<i32>(-1, 1), vec2<i32>(1, 1));
    for (var k = 0u; k < 4u; k++) {
        let q = clamp(p + diagonals[k], lo, hi);
        let d = textureLoad(scene_depth, q, 0);
        if (d < depth) {
            depth = d;
            nearest = q;
        }
    }
    var uv_motion = textureLoad(velocity, nearest, 0).xy;
    // Nothing drawn: the camera's motion of a point on the far plane.
    let ndc = (pixel - taa.viewport.xy) / taa.viewport.zw * 2.0 - 1.0;
    let before = taa.clip_to_prev_clip * vec4<f32>(ndc, 1.0, 1.0);
    let camera = (ndc - before.xy / max(before.w, 1e-6)) * 0.5;
    uv_motion = select(uv_motion, camera, depth >= 1.0);
    let m = uv_motion * taa.viewport.zw;
    return select(m, vec2<f32>(0.0), dot(m, m) < 1e-4);
}

@fragment
fn fs_main(@builtin(position) position: vec4<f32>) -> TaaOut {
    let p = vec2<i32>(position.xy);
    let lo = vec2<i32>(taa.viewport.xy);
    let hi = lo + vec2<i32>(taa.viewport.zw) - 1;
    let current = textureLoad(scene_color, p, 0).rgb;
    // The current 3x3 neighbourhood's colour box.
    var box_min = rgb_to_ycocg(current);
    var box_max = box_min;
    for (var dy = -1; dy <= 1; dy++) {
        for (var dx = -1; dx <= 1; dx++) {
            let c = rgb_to_ycocg(textureLoad(scene_color, clamp(p + vec2<i32>(dx, dy), lo, hi), 0).rgb);
            box_min = min(box_min, c);
            box_max = max(box_max, c);
        }
    }
    let before = position.xy - motion_pixels(p, position.xy, lo, hi);
    let inside = all(before >= taa.viewport.xy) && all(before <= taa.viewport.xy + taa.viewport.zw);
    let size = vec2<f32>(textureDimensions(history));
    let history_weight = select(0.0, 1.0 - taa.current_weight, inside && taa.reset == 0.0);
    let clamped = ycocg_to_rgb(clamp(rgb_to_ycocg(history_catmull_rom(before, size)), box_min, box_max));
    // Without history what is bound is not read (scene color after a reset).
    let old = select(current, clamped, history_weight > 0.0);
    let wc = (1.0 - history_weight) / (1.0 + luma(current));
    let wh = history_weight / (1.0 + luma(old));
    let color = (current * wc + old * wh) / (wc + wh);
    var out: TaaOut;
    out.color = vec4<f32>(color, 1.0);
    out.history = out.color;
    return out;
}
