// The light grid built in compute passes (renderer/src/light_grid/gpu.rs):
// the alternative the CPU build was measured against. The same tests as
// the CPU's (renderer/src/light_grid.rs): a light's tiles from its view-space
// box's projected corners, its slices from its depths, then per cluster of
// that range its sphere against the cluster's box and a spot light's cone
// against the box's bounding sphere. Four entry points, one bind group:
// `count` (a thread per light, atomics), `offsets` (one workgroup: counts to
// first indices), `scatter` (a thread per light writes its index into each
// list it joins), `sort` (a thread per cluster puts its list in light
// order, whatever order the atomics ran in).

struct Light {
    // Its bounding sphere in view space (z: depth).
    center: vec3<f32>,
    radius: f32,
    // A spot light's cone in view space (range 0: a point light).
    apex: vec3<f32>,
    range: f32,
    axis: vec3<f32>,
    sin_angle: f32,
    cos_angle: f32,
    // Its index in the frame's lights.
    index: u32,
    pad0: u32,
    pad1: u32,
}

struct Params {
    projection: mat4x4<f32>,
    // Tiles across, tiles down, slices, lights.
    size: vec4<u32>,
    // Viewport width and height, tile size in pixels, near plane depth.
    view: vec4<f32>,
    // slice = floor(log2(depth) * x + y).
    z: vec4<f32>,
    // Clusters.
    clusters: vec4<u32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> lights: array<Light>;
// Per slice, per tile column its x extent and per tile row its y extent;
// per slice its depths.
@group(0) @binding(2) var<storage, read> columns: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> rows: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read> depths: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read_write> counts: array<atomic<u32>>;
// Per cluster its first index; one more holds the total.
@group(0) @binding(6) var<storage, read_write> offsets: array<u32>;
@group(0) @binding(7) var<storage, read_write> cursor: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> indices: array<u32>;

fn slice_of(depth: f32) -> u32 {
    let s = floor(log2(max(depth, 1e-6)) * params.z.x + params.z.y);
    return u32(clamp(s, 0.0, f32(params.size.z - 1u)));
}

fn to_tile(ndc: f32, pixels: f32, tiles: u32) -> u32 {
    let px = (ndc * 0.5 + 0.5) * pixels;
    return u32(clamp(floor(px / params.view.z), 0.0, f32(tiles - 1u)));
}

// A light's tiles and slices (inclusive); `valid` false when off screen.
struct Range {
    lo: vec3<u32>,
    hi: vec3<u32>,
    valid: bool,
}

fn light_range(l: Light) -> Range {
    let lo = l.center - vec3<f32>(l.radius);
    let hi = l.center + vec3<f32>(l.radius);
    var mn = vec2<f32>(3.4e38);
    var mx = vec2<f32>(-3.4e38);
    for (var i = 0u; i < 8u; i++) {
        let x = select(lo.x, hi.x, (i & 1u) != 0u);
        let y = select(lo.y, hi.y, (i & 2u) != 0u);
        let z = max(select(lo.z, hi.z, (i & 4u) != 0u), params.view.w);
        let clip = params.projection * vec4<f32>(x, y, -z, 1.0);
        let ndc = clip.xy / max(clip.w, 1e-6);
        mn = min(mn, ndc);
        mx = max(mx, ndc);
    }
    var r: Range;
    r.valid = !(mx.x < -1.0 || mx.y < -1.0 || mn.x > 1.0 || mn.y > 1.0);
    r.lo = vec3<u32>(to_tile(mn.x, params.view.x, params.size.x), to_tile(mn.y, params.view.y, params.size.y), slice_of(l.center.z - l.radius));
    r.hi = vec3<u32>(to_tile(mx.x, params.view.x, params.size.x), to_tile(mx.y, params.view.y, params.size.y), slice_of(l.center.z + l.radius));
    return r;
}

// Whether light `l` reaches cluster (x, y, s).
fn touches(l: Light, x: u32, y: u32, s: u32) -> bool {
    let c = columns[s * params.size.x + x];
    let r = rows[s * params.size.y + y];
    let d = depths[s];
    let pad = (d.y - d.x) * 1e-4 + 1e-5;
    let lo = vec3<f32>(c.x, r.x, d.x - pad);
    let hi = vec3<f32>(c.y, r.y, d.y + pad);
    let q = l.center - clamp(l.center, lo, hi);
    if (dot(q, q) > l.radius * l.radius) {
        return false;
    }
    if (l.range <= 0.0) {
        return true;
    }
    let center = (lo + hi) * 0.5;
    let radius = length(hi - lo) * 0.5;
    let v = center - l.apex;
    let along = dot(v, l.axis);
    let across = sqrt(max(dot(v, v) - along * along, 0.0));
    let beside = l.cos_angle * across - along * l.sin_angle > radius;
    let reach = l.range + radius;
    return !(beside || dot(v, v) > reach * reach || along < -radius);
}

fn cluster_of(x: u32, y: u32, s: u32) -> u32 {
    return (s * params.size.y + y) * params.size.x + x;
}

// Light `index`'s clusters, each counted (`scatter` false) or given the
// light's index in its list (`scatter` true): the same walk both times.
fn bin(index: u32, scatter: bool) {
    if (index >= params.size.w) {
        return;
    }
    let l = lights[index];
    let r = light_range(l);
    if (!r.valid) {
        return;
    }
    let capacity = arrayLength(&indices);
    for (var s = r.lo.z; s <= r.hi.z; s++) {
        for (var y = r.lo.y; y <= r.hi.y; y++) {
            for (var x = r.lo.x; x <= r.hi.x; x++) {
                if (!touches(l, x, y, s)) {
                    continue;
                }
                let c = cluster_of(x, y, s);
                if (!scatter) {
                    atomicAdd(&counts[c], 1u);
                    continue;
                }
                let at = offsets[c] + atomicAdd(&cursor[c], 1u);
                if (at < capacity) {
                    indices[at] = l.index;
                }
            }
        }
    }
}

@compute @workgroup_size(64)
fn count(@builtin(global_invocation_id) id: vec3<u32>) {
    bin(id.x, false);
}

var<workgroup> sums: array<u32, 256>;

@compute @workgroup_size(256)
fn first_indices(@builtin(local_invocation_index) t: u32) {
    let n = params.clusters.x;
    let chunk = (n + 255u) / 256u;
    let start = min(t * chunk, n);
    let end = min(start + chunk, n);
    var sum = 0u;
    for (var i = start; i < end; i++) {
        sum += atomicLoad(&counts[i]);
    }
    sums[t] = sum;
    workgroupBarrier();
    if (t == 0u) {
        var total = 0u;
        for (var i = 0u; i < 256u; i++) {
            let v = sums[i];
            sums[i] = total;
            total += v;
        }
        offsets[n] = total;
    }
    workgroupBarrier();
    var at = sums[t];
    for (var i = start; i < end; i++) {
        offsets[i] = at;
        at += atomicLoad(&counts[i]);
    }
}

@compute @workgroup_size(64)
fn scatter(@builtin(global_invocation_id) id: vec3<u32>) {
    bin(id.x, true);
}

@compute @workgroup_size(64)
fn sort(@builtin(global_invocation_id) id: vec3<u32>) {
    let c = id.x;
    if (c >= params.clusters.x) {
        return;
    }
    let first = offsets[c];
    let end = min(offsets[c + 1u], arrayLength(&indices));
    for (var i = first + 1u; i < end; i++) {
        let v = indices[i];
        var j = i;
        while (j > first && indices[j - 1u] > v) {
            indices[j] = indices[j - 1u];
            j -= 1u;
        }
        indices[j] = v;
    }
}
