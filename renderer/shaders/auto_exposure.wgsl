// Auto exposure (renderer/src/postprocess/exposure.rs; UE's histogram eye
// adaptation): `histogram` bins the log2 luminance of every fourth pixel
// (in x and y: a sixteenth of the view) in scene color; `adapt` takes the mean log2
// luminance of the middle 80% of the pixels (10% darkest and brightest
// left out), turns it into the EV100 that exposes it as the standard's
// camera would (EV100 = log2(L · 100 / 12.5)), clamps it, and moves the
// view's exposure towards it exponentially at the frame's rate; the
// first frame of a view takes it at once.

struct Params {
    // The view's viewport in scene color: x, y, width, height.
    viewport: vec4<u32>,
    // The histogram's range of log2 luminance: its first bin's start, and
    // the width of the 63 bins after bin 0 (which counts black).
    min_log2: f32,
    log2_range: f32,
    delta_seconds: f32,
    speed_up: f32,
    speed_down: f32,
    min_ev100: f32,
    max_ev100: f32,
    compensation: f32,
}

// `view_state.rs`'s EXPOSURE_STATE_SIZE.
struct ExposureState {
    // The linear multiplier tone mapping applies: 1 / (1.2 · 2^ev100).
    multiplier: f32,
    ev100: f32,
    // 1 once adapted.
    valid: u32,
    target_ev100: f32,
}

var<immediate> p: Params;
@group(0) @binding(0) var scene_color: texture_2d<f32>;
@group(0) @binding(1) var<storage, read_write> histogram: array<atomic<u32>, 64>;
@group(0) @binding(2) var<storage, read_write> state: ExposureState;

var<workgroup> local_bins: array<atomic<u32>, 64>;

@compute @workgroup_size(16, 16, 1)
fn histogram_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (li < 64u) {
        atomicStore(&local_bins[li], 0u);
    }
    workgroupBarrier();
    let at = id.xy * 4u;
    if (at.x < p.viewport.z && at.y < p.viewport.w) {
        let c = textureLoad(scene_color, vec2<i32>(p.viewport.xy + at), 0).rgb;
        let l = dot(max(c, vec3<f32>(0.0)), vec3<f32>(0.2126, 0.7152, 0.0722));
        let t = (log2(max(l, 1e-10)) - p.min_log2) / p.log2_range;
        let bin = select(u32(clamp(t * 63.0, 0.0, 62.0)) + 1u, 0u, l < exp2(p.min_log2));
        atomicAdd(&local_bins[bin], 1u);
    }
    workgroupBarrier();
    if (li < 64u) {
        let n = atomicLoad(&local_bins[li]);
        if (n > 0u) {
            atomicAdd(&histogram[li], n);
        }
    }
}

var<workgroup> counts: array<u32, 64>;

// The log2 luminance bin `k` stands for (bin 0: black, the range's start).
fn bin_log2(k: u32) -> f32 {
    return select(p.min_log2 + (f32(k) - 0.5) / 63.0 * p.log2_range, p.min_log2, k == 0u);
}

@compute @workgroup_size(64, 1, 1)
fn adapt(@builtin(local_invocation_index) i: u32) {
    counts[i] = atomicLoad(&histogram[i]);
    workgroupBarrier();
    if (i != 0u) {
        return;
    }
    var total = 0.0;
    for (var k = 0u; k < 64u; k++) {
        total += f32(counts[k]);
    }
    let lo = total * 0.1;
    let hi = total * 0.9;
    var seen = 0.0;
    var sum = 0.0;
    var weight = 0.0;
    for (var k = 0u; k < 64u; k++) {
        let n = f32(counts[k]);
        let w = max(min(seen + n, hi) - max(seen, lo), 0.0);
        sum += w * bin_log2(k);
        weight += w;
        seen += n;
    }
    // No pixel: keep what there is.
    if (weight <= 0.0 && state.valid != 0u) {
        return;
    }
    let mean_log2 = select(-3.0, sum / weight, weight > 0.0);
    let target_ev = clamp(mean_log2 + 3.0 - p.compensation, p.min_ev100, p.max_ev100);
    var ev = target_ev;
    if (state.valid != 0u) {
        let rate = select(p.speed_down, p.speed_up, target_ev > state.ev100);
        ev = state.ev100 + (target_ev - state.ev100) * (1.0 - exp(-p.delta_seconds * rate));
    }
    state.ev100 = ev;
    state.multiplier = 1.0 / (1.2 * exp2(ev));
    state.valid = 1u;
    state.target_ev100 = target_ev;
}
