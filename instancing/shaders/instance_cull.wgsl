// GPU instance culling for one component and one view: a port of
// instancing/src/culling.rs's per-instance test (sphere vs frustum planes,
// cull distance with fade, the occlusion buffer's test, LOD by screen size
// and the minimum LOD), in
// three dispatches:
//
//   count_main  classify every instance; each workgroup writes its count of
//               visible instances per LOD (and of occluded instances) into
//               its column of `groups`
//   scan_main   one workgroup: turns the per-workgroup counts into output
//               offsets (an exclusive prefix sum over workgroups, LOD by
//               LOD, each LOD's region after the lower LODs' instances),
//               writes the per-LOD totals into `control` and one
//               VkDrawIndexedIndirectCommand per (LOD, section)
//   write_main  classify again; copy each visible instance (with its fade)
//               to its workgroup's offset for its LOD plus its rank among
//               the workgroup's instances of that LOD (the set bits below
//               its own in a per-LOD bit mask in workgroup memory)
//
// Dithered LOD transition (culling.rs select_lod_dithered, params
// distances.w > 0): an instance within the band of a LOD threshold is
// counted and written in both neighbouring LODs' regions, each copy with
// its LOD-dither flags, still in instance order within each region; the
// output holds up to two copies per instance then.
//
// Order contract (issue 15): the visible instances of each LOD region are
// in instance-index order, exactly the order the CPU path
// (proxy/cpu_culling.rs) produces. Instance i is invocation i % 256 of
// workgroup i / 256, and no atomic decides where anything goes, so the
// output — and the draw order of instances that cover a pixel at equal
// depth — is the same every run.

const WG: u32 = 256u;
const MAX_LODS: u32 = 8u;

struct Instance {
    transform_rows: array<vec4<f32>, 3>,
    custom: vec4<f32>,
    random: f32,
    fade: f32,
    instance_id: u32,
    flags: u32,
}

struct Params {
    planes: array<vec4<f32>, 6>,
    // xyz: the point distances and screen sizes are measured from; w: screen multiple.
    origin_multiple: vec4<f32>,
    // Component → world, rows 0..2.
    component_rows: array<vec4<f32>, 3>,
    // Mesh bounds sphere: origin xyz, radius w.
    sphere: vec4<f32>,
    // start, end cull distance; component scale; dithered LOD transition
    // band (0: off).
    distances: vec4<f32>,
    // instance count, LOD count, draw count, plane count.
    counts: vec4<u32>,
    // UE-convention LOD screen sizes (culling.rs), 8 of them.
    screen_sizes: array<vec4<f32>, 2>,
    // The LOD of each draw (LOD-major, sections within), 64 of them.
    draw_lods: array<vec4<u32>, 16>,
    // x: the minimum LOD (UE's MinLOD), clamped to the last LOD; y: the
    // workgroups of count_main and write_main (columns of `groups`); zw unused.
    lod: vec4<u32>,
}

struct DrawArgs {
    index_count: u32,
    instance_count: u32,
    first_index: u32,
    vertex_offset: i32,
    first_instance: u32,
}

// The control block (CONTROL_HEADER = 64 bytes before the draw arguments).
struct Control {
    // Visible instances per LOD (scan_main writes them).
    lod_counts: array<u32, 8>,
    // Instances the occlusion test hid (frustum-visible, not drawn).
    occluded: u32,
    unused: array<u32, 7>,
    args: array<DrawArgs>,
}

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> instances: array<Instance>;
@group(0) @binding(2) var<storage, read_write> control: Control;
@group(0) @binding(3) var<storage, read_write> visible: array<Instance>;
// Per-workgroup figures, row-major: rows 0..7 one per LOD, row 8 the
// occluded instances (ROWS rows of params.lod.y columns). count_main writes
// each workgroup's counts; scan_main turns the LOD rows into output
// offsets in place.
@group(0) @binding(4) var<storage, read_write> groups: array<u32>;

// The view's occlusion buffer (renderer/src/occlusion.rs, issue 18): its
// max-depth mip chain and what OcclusionBuffer::test_box reads with it.
// level_count 0: the view is not occlusion culled.
struct Occlusion {
    view_proj: mat4x4<f32>,
    // level 0 width, height; level count; RECT_TEXELS.
    info: vec4<u32>,
    // x: DEPTH_MARGIN; yzw unused.
    margin: vec4<f32>,
    // Per level: first depth in `depth`, width, height; w unused.
    levels: array<vec4<u32>, 16>,
    // Every level's depths, row-major, level after level.
    depth: array<f32>,
}

@group(0) @binding(5) var<storage, read> occlusion: Occlusion;

// Rows of `groups`: one per LOD, then the occluded count.
const ROWS: u32 = 9u;
const OCCLUDED_ROW: u32 = 8u;

var<workgroup> wg_counts: array<atomic<u32>, 9>;
// write_main: per LOD, a bit per invocation (WORDS words of 32) set when
// the invocation's instance is visible at that LOD.
const WORDS: u32 = 8u;
var<workgroup> wg_bits: array<atomic<u32>, 64>;
// scan_main: one partial sum per invocation.
var<workgroup> wg_sums: array<u32, 256>;

const F32_MAX: f32 = 3.40282347e38;

// OcclusionBuffer::test_sphere (renderer/src/occlusion.rs): the same math,
// margins and mip selection, in f32 where the CPU measures screen positions
// in f64 (a difference far below the pixel the rectangle is grown by).
// Whether the box around the sphere lies strictly behind the occluders.
fn occluded(center: vec3<f32>, radius: f32) -> bool {
    if (occlusion.info.z == 0u) {
        return false;
    }
    let r = max(radius, 0.0);
    let bmin = center - vec3<f32>(r);
    let bmax = center + vec3<f32>(r);
    let size = vec2<f32>(f32(occlusion.info.x), f32(occlusion.info.y));
    var near = F32_MAX;
    var lo = vec2<f32>(F32_MAX);
    var hi = vec2<f32>(-F32_MAX);
    for (var i = 0u; i < 8u; i++) {
        let p = vec3<f32>(
            select(bmax.x, bmin.x, (i & 1u) == 0u),
            select(bmax.y, bmin.y, (i & 2u) == 0u),
            select(bmax.z, bmin.z, (i & 4u) == 0u),
        );
        let c = occlusion.view_proj * vec4<f32>(p, 1.0);
        // Not finite (NaN fails every comparison), behind the eye or in
        // front of the near plane: never occluded.
        if (!(all(abs(c) <= vec4<f32>(F32_MAX)) && c.w > 0.0 && c.z >= 0.0)) {
            return false;
        }
        near = min(near, c.z / c.w);
        let s = (c.xy / c.w * 0.5 + 0.5) * size;
        lo = min(lo, s);
        hi = max(hi, s);
    }
    // rect_farthest: the rectangle grown by a pixel, clamped to the buffer.
    let f0 = floor(lo - 1.0);
    let f1 = floor(hi + 1.0);
    if (f1.x < 0.0 || f1.y < 0.0 || f0.x >= size.x || f0.y >= size.y) {
        return false;
    }
    let x0 = u32(max(f0.x, 0.0));
    let y0 = u32(max(f0.y, 0.0));
    let x1 = u32(min(f1.x, size.x - 1.0));
    let y1 = u32(min(f1.y, size.y - 1.0));
    let texels = occlusion.info.w;
    var level = 0u;
    while (level + 1u < occlusion.info.z && ((x1 >> level) - (x0 >> level) >= texels || (y1 >> level) - (y0 >> level) >= texels)) {
        level++;
    }
    let l = occlusion.levels[level];
    var far = 0.0;
    for (var y = y0 >> level; y <= min(y1 >> level, l.z - 1u); y++) {
        for (var x = x0 >> level; x <= min(x1 >> level, l.y - 1u); x++) {
            far = max(far, occlusion.depth[l.x + y * l.y + x]);
        }
    }
    return near > far + occlusion.margin.x;
}

fn screen_size_of(l: u32) -> f32 {
    return params.screen_sizes[l / 4u][l % 4u];
}

// LOD (0..7) of instance `i`, -1 when culled by the frustum or distance,
// -2 when it passes those but the occlusion buffer hides it (the CPU
// path's order of tests); the fade goes to `fade_size.x`, the screen size
// to `fade_size.y`.
fn classify(i: u32, fade_size: ptr<function, vec2<f32>>) -> i32 {
    let inst = instances[i];
    let o = params.sphere.xyz;
    let r = inst.transform_rows;
    let local_center = vec3<f32>(
        r[0].x * o.x + r[0].y * o.y + r[0].z * o.z + r[0].w,
        r[1].x * o.x + r[1].y * o.y + r[1].z * o.z + r[1].w,
        r[2].x * o.x + r[2].y * o.y + r[2].z * o.z + r[2].w,
    );
    let c0 = vec3<f32>(r[0].x, r[1].x, r[2].x);
    let c1 = vec3<f32>(r[0].y, r[1].y, r[2].y);
    let c2 = vec3<f32>(r[0].z, r[1].z, r[2].z);
    let scale = sqrt(max(max(dot(c0, c0), dot(c1, c1)), dot(c2, c2)));
    let m = params.component_rows;
    let l = local_center;
    let center = vec3<f32>(
        m[0].x * l.x + m[0].y * l.y + m[0].z * l.z + m[0].w,
        m[1].x * l.x + m[1].y * l.y + m[1].z * l.z + m[1].w,
        m[2].x * l.x + m[2].y * l.y + m[2].z * l.z + m[2].w,
    );
    let radius = params.sphere.w * scale * params.distances.z;
    for (var p = 0u; p < params.counts.w; p++) {
        let plane = params.planes[p];
        if (dot(plane.xyz, center) + plane.w < -radius) {
            return -1;
        }
    }
    let distance = length(center - params.origin_multiple.xyz);
    let start = params.distances.x;
    let end = params.distances.y;
    if (end > 0.0 && distance >= end) {
        return -1;
    }
    var fade = 1.0;
    if (end > 0.0 && distance > start) {
        fade = clamp((end - distance) / (end - start), 0.0, 1.0);
    }
    let size = 2.0 * params.origin_multiple.w * radius / max(distance, 1.0);
    *fade_size = vec2<f32>(fade, size);
    if (occluded(center, radius)) {
        return -2;
    }
    var lod = 0u;
    for (var k = params.counts.y; k > 1u; k--) {
        if (screen_size_of(k - 1u) > size) {
            lod = k - 1u;
            break;
        }
    }
    return i32(max(lod, params.lod.x));
}

// The LOD-dither flags of one copy (InstanceGpuData::lod_dither_flags).
fn lod_flags(finer: bool, primary: bool, share: f32) -> u32 {
    let q = u32(floor(clamp(share, 0.0, 1.0) * 65535.0 + 0.5));
    return 2u | select(0u, 4u, finer) | select(0u, 8u, primary) | (q << 16u);
}

// culling.rs select_lod_dithered: the LODs an instance of plain LOD `lod`
// and screen size `size` is drawn at (y = -1: one copy) and each copy's
// LOD-dither flags (0 outside a transition band).
fn lod_copies(lod: u32, size: f32, flags: ptr<function, vec2<u32>>) -> vec2<i32> {
    *flags = vec2<u32>(0u, 0u);
    let band = params.distances.w;
    if (band <= 0.0) {
        return vec2<i32>(i32(lod), -1);
    }
    let h = 0.5 * band;
    var finer = -1;
    var s = 0.0;
    if (lod > params.lod.x) {
        s = screen_size_of(lod);
        if (size >= s * (1.0 - h) && size < s) {
            finer = i32(lod) - 1;
        }
    }
    if (finer < 0 && lod + 1u < params.counts.y) {
        s = screen_size_of(lod + 1u);
        if (size >= s && size < s * (1.0 + h)) {
            finer = i32(lod);
        }
    }
    if (finer < 0) {
        return vec2<i32>(i32(lod), -1);
    }
    let share = clamp((size - s * (1.0 - h)) / (s * band), 0.0, 1.0);
    *flags = vec2<u32>(lod_flags(true, finer == i32(lod), share), lod_flags(false, finer + 1 == i32(lod), share));
    return vec2<i32>(finer, finer + 1);
}

fn instance_index(wid: vec3<u32>, lid: u32, n: vec3<u32>) -> u32 {
    return workgroup_index(wid, n) * WG + lid;
}

fn workgroup_index(wid: vec3<u32>, n: vec3<u32>) -> u32 {
    return wid.x + wid.y * n.x;
}

@compute @workgroup_size(256)
fn count_main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) n: vec3<u32>) {
    if (lid < ROWS) {
        atomicStore(&wg_counts[lid], 0u);
    }
    workgroupBarrier();
    let i = instance_index(wid, lid, n);
    if (i < params.counts.x) {
        var fade_size = vec2<f32>(1.0, 0.0);
        let lod = classify(i, &fade_size);
        if (lod >= 0) {
            var flags = vec2<u32>(0u, 0u);
            let lods = lod_copies(u32(lod), fade_size.y, &flags);
            atomicAdd(&wg_counts[u32(lods.x)], 1u);
            if (lods.y >= 0) {
                atomicAdd(&wg_counts[u32(lods.y)], 1u);
            }
        } else if (lod == -2) {
            atomicAdd(&wg_counts[OCCLUDED_ROW], 1u);
        }
    }
    workgroupBarrier();
    let g = workgroup_index(wid, n);
    if (lid < ROWS && g < params.lod.y) {
        groups[lid * params.lod.y + g] = atomicLoad(&wg_counts[lid]);
    }
}

// One workgroup. Row by row, each invocation sums a contiguous chunk of
// the workgroup counts, invocation 0 scans the 256 sums serially (carrying
// the running total from one LOD row to the next, so each LOD's offsets
// start after the lower LODs' instances), and each invocation rewrites its
// chunk as exclusive offsets.
@compute @workgroup_size(256)
fn scan_main(@builtin(local_invocation_index) lid: u32) {
    let count = params.lod.y;
    let chunk = (count + WG - 1u) / WG;
    let begin = min(lid * chunk, count);
    let end = min(begin + chunk, count);
    var running = 0u;
    for (var row = 0u; row < ROWS; row++) {
        let base = row * count;
        var sum = 0u;
        for (var g = begin; g < end; g++) {
            sum += groups[base + g];
        }
        wg_sums[lid] = sum;
        workgroupBarrier();
        if (lid == 0u) {
            // The occluded row counts on its own.
            var at = select(running, 0u, row == OCCLUDED_ROW);
            for (var k = 0u; k < WG; k++) {
                let s = wg_sums[k];
                wg_sums[k] = at;
                at += s;
            }
            if (row == OCCLUDED_ROW) {
                control.occluded = at;
            } else {
                control.lod_counts[row] = at - running;
                running = at;
            }
        }
        workgroupBarrier();
        if (row != OCCLUDED_ROW) {
            var offset = wg_sums[lid];
            for (var g = begin; g < end; g++) {
                let c = groups[base + g];
                groups[base + g] = offset;
                offset += c;
            }
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        for (var d = 0u; d < params.counts.z; d++) {
            let l = params.draw_lods[d / 4u][d % 4u];
            var first = 0u;
            for (var k = 0u; k < l; k++) {
                first += control.lod_counts[k];
            }
            control.args[d].instance_count = control.lod_counts[l];
            control.args[d].first_instance = first;
        }
    }
}

@compute @workgroup_size(256)
fn write_main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) n: vec3<u32>) {
    if (lid < MAX_LODS * WORDS) {
        atomicStore(&wg_bits[lid], 0u);
    }
    workgroupBarrier();
    let i = instance_index(wid, lid, n);
    var lods = vec2<i32>(-1, -1);
    var flags = vec2<u32>(0u, 0u);
    var fade_size = vec2<f32>(1.0, 0.0);
    if (i < params.counts.x) {
        let lod = classify(i, &fade_size);
        if (lod >= 0) {
            lods = lod_copies(u32(lod), fade_size.y, &flags);
        }
    }
    // Each instance's rank among the workgroup's instances of its LOD: the
    // set bits of its LOD's mask below its own. (Two barriers, as the
    // atomic version had: lavapipe runs a workgroup's invocations as
    // coroutines, and a log-step prefix sum's sixteen barriers cost more
    // than the classification.) In a dithered LOD transition an instance
    // has a copy, and a bit, in each of two LODs.
    let word = lid / 32u;
    let bit = 1u << (lid % 32u);
    for (var k = 0u; k < 2u; k++) {
        if (lods[k] >= 0) {
            atomicOr(&wg_bits[u32(lods[k]) * WORDS + word], bit);
        }
    }
    workgroupBarrier();
    for (var k = 0u; k < 2u; k++) {
        if (lods[k] >= 0) {
            let l = u32(lods[k]);
            var rank = countOneBits(atomicLoad(&wg_bits[l * WORDS + word]) & (bit - 1u));
            for (var w = 0u; w < word; w++) {
                rank += countOneBits(atomicLoad(&wg_bits[l * WORDS + w]));
            }
            let base = groups[l * params.lod.y + workgroup_index(wid, n)];
            var out = instances[i];
            out.fade = fade_size.x;
            out.flags = out.flags | flags[k];
            visible[base + rank] = out;
        }
    }
}
