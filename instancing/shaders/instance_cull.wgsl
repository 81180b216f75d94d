// GPU instance culling for one component and one view: a port of
// instancing/src/culling.rs's per-instance test (sphere vs frustum planes,
// cull distance with fade, LOD by screen size and the minimum LOD), in two
// dispatches:
//
//   count_main  classify every instance; count visible instances per LOD
//   write_main  classify again; copy each visible instance (with its fade)
//               into its LOD's region of `visible` (regions packed LOD 0,
//               LOD 1, ... by the counts of pass 1), and write one
//               VkDrawIndexedIndirectCommand per (LOD, section)
//
// Both passes aggregate per workgroup first (workgroup atomics), so the
// global counters see one atomic per workgroup and LOD. Order inside a LOD
// region is unspecified.

const WG: u32 = 256u;
const MAX_LODS: u32 = 8u;

struct Instance {
    rows: array<vec4<f32>, 3>,
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
    // start, end cull distance; component scale; unused.
    distances: vec4<f32>,
    // instance count, LOD count, draw count, plane count.
    counts: vec4<u32>,
    // UE-convention LOD screen sizes (culling.rs), 8 of them.
    screen_sizes: array<vec4<f32>, 2>,
    // The LOD of each draw (LOD-major, sections within), 64 of them.
    draw_lods: array<vec4<u32>, 16>,
    // x: the minimum LOD (UE's MinLOD), clamped to the last LOD; yzw unused.
    lod: vec4<u32>,
}

struct DrawArgs {
    index_count: u32,
    instance_count: u32,
    first_index: u32,
    vertex_offset: i32,
    first_instance: u32,
}

struct Control {
    lod_counts: array<atomic<u32>, 8>,
    cursors: array<atomic<u32>, 8>,
    args: array<DrawArgs>,
}

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> instances: array<Instance>;
@group(0) @binding(2) var<storage, read_write> control: Control;
@group(0) @binding(3) var<storage, read_write> visible: array<Instance>;

var<workgroup> wg_counts: array<atomic<u32>, 8>;
var<workgroup> wg_base: array<u32, 8>;

fn screen_size_of(l: u32) -> f32 {
    return params.screen_sizes[l / 4u][l % 4u];
}

// LOD (0..7) of instance `i`, or -1 when culled; the fade goes to `fade_out`.
fn classify(i: u32, fade_out: ptr<function, f32>) -> i32 {
    let inst = instances[i];
    let o = params.sphere.xyz;
    let r = inst.rows;
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
    *fade_out = fade;
    let size = 2.0 * params.origin_multiple.w * radius / max(distance, 1.0);
    var lod = 0u;
    for (var k = params.counts.y; k > 1u; k--) {
        if (screen_size_of(k - 1u) > size) {
            lod = k - 1u;
            break;
        }
    }
    return i32(max(lod, params.lod.x));
}

fn instance_index(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.x + gid.y * groups.x * WG;
}

@compute @workgroup_size(256)
fn count_main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) groups: vec3<u32>) {
    if (lid < MAX_LODS) {
        atomicStore(&wg_counts[lid], 0u);
    }
    workgroupBarrier();
    let i = instance_index(gid, groups);
    if (i < params.counts.x) {
        var fade = 1.0;
        let lod = classify(i, &fade);
        if (lod >= 0) {
            atomicAdd(&wg_counts[u32(lod)], 1u);
        }
    }
    workgroupBarrier();
    if (lid < params.counts.y) {
        let n = atomicLoad(&wg_counts[lid]);
        if (n > 0u) {
            atomicAdd(&control.lod_counts[lid], n);
        }
    }
}

@compute @workgroup_size(256)
fn write_main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) groups: vec3<u32>) {
    if (lid < MAX_LODS) {
        atomicStore(&wg_counts[lid], 0u);
    }
    workgroupBarrier();
    let i = instance_index(gid, groups);
    var lod = -1;
    var fade = 1.0;
    var slot = 0u;
    if (i < params.counts.x) {
        lod = classify(i, &fade);
        if (lod >= 0) {
            slot = atomicAdd(&wg_counts[u32(lod)], 1u);
        }
    }
    workgroupBarrier();
    if (lid < params.counts.y) {
        let n = atomicLoad(&wg_counts[lid]);
        var base = 0u;
        if (n > 0u) {
            base = atomicAdd(&control.cursors[lid], n);
        }
        // LOD `lid`'s region starts after every lower LOD's instances.
        for (var k = 0u; k < lid; k++) {
            base += atomicLoad(&control.lod_counts[k]);
        }
        wg_base[lid] = base;
    }
    workgroupBarrier();
    if (lod >= 0) {
        var out = instances[i];
        out.fade = fade;
        visible[wg_base[u32(lod)] + slot] = out;
    }
    // One invocation writes the draw arguments (the counts are final).
    if (gid.x == 0u && gid.y == 0u) {
        for (var d = 0u; d < params.counts.z; d++) {
            let l = params.draw_lods[d / 4u][d % 4u];
            var first = 0u;
            for (var k = 0u; k < l; k++) {
                first += atomicLoad(&control.lod_counts[k]);
            }
            control.args[d].instance_count = atomicLoad(&control.lod_counts[l]);
            control.args[d].first_instance = first;
        }
    }
}
