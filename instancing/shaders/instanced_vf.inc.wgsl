// The instanced vertex factory (UE's FInstancedStaticMeshVertexFactory):
// the local factory's vertex attributes (position; tangent basis; color and
// UV0 interleaved in one stream) plus one instance-rate stream of
// `InstanceStreamData` (80 bytes; see instancing/src/vertex_factory.rs).
//
// The primitive id comes from the draw's push constants (`draw.primitive_id`):
// instanced draws are never merged by the renderer.
//
// `FactoryVertex.fade` is the instance's cull-distance fade, or for a copy
// in a dithered LOD transition that fade combined with its side of the
// pattern (`dithered_lod_fade`). The same text is the dithered variant
// (INSTANCED_DITHERED_VERTEX_FACTORY, for components with a fade band or a
// LOD transition): the renderer then sets DITHERED_FADE and the passes
// keep only the pixels `dithered_fade_keeps` passes (scene.inc.wgsl).
//
// What materials receive (MaterialInput):
//   custom_data(in, k)  any of the instance's custom floats (k below the
//                       component's NumCustomDataFloats, up to
//                       instancing::MAX_CUSTOM_DATA_FLOATS = 256; 0 past it),
//                       read from the proxy's custom data buffer (group 3)
//   in.instance_id  the instance's stable id slot (InstanceStreamData.instance_id)
//   in.custom.xyz   custom floats 0..2 again, inline (0 when absent)
//   in.custom.w     PerInstanceRandom, in [0, 1)
//   in.custom1.x    custom float 3, inline
//   in.world_tangent, in.uv0 as the local factory (no UV1-3: the color/UV
//   stream carries UV0 only)
//
// The custom data buffer (instancing/src/proxy/custom_data.rs), indexed by
// the instance's id slot, which culling's compacted copies keep:
//   [0]                    the floats per instance n (u32 bits); [1..4] 0
//   [4 + slot * n + k]     float k of the instance in `slot`
// The count lives in the buffer's header rather than in the GPU scene so the
// buffer and its count are always re-made together.

@group(3) @binding(0) var<storage, read> instance_custom_data: array<f32>;
const INSTANCE_CUSTOM_DATA_HEADER: u32 = 4u;

struct VertexFactoryInput {
    @location(0) position: vec3<f32>,
    @location(1) tangent_x: vec4<f32>,
    @location(2) normal: vec4<f32>,
    @location(3) color: vec4<f32>,
    @location(4) uv0: vec2<f32>,
    // Instance → component, rows 0..2 (translation in .w).
    @location(5) instance_row0: vec4<f32>,
    @location(6) instance_row1: vec4<f32>,
    @location(7) instance_row2: vec4<f32>,
    @location(8) instance_custom: vec4<f32>,
    // x: PerInstanceRandom; y: cull-distance fade (1 = opaque).
    @location(9) instance_random_fade: vec2<f32>,
    // The instance's stable id slot.
    @location(10) instance_id: u32,
    // InstanceGpuData flags: bit 0 mirrored; bits 1..3 and 16..31 the
    // dithered LOD transition of this copy (instancing/src/gpu_data.rs).
    @location(11) instance_flags: u32,
}

fn instance_transform_point(input: VertexFactoryInput, p: vec3<f32>) -> vec3<f32> {
    let q = vec4<f32>(p, 1.0);
    return vec3<f32>(dot(input.instance_row0, q), dot(input.instance_row1, q), dot(input.instance_row2, q));
}

fn instance_transform_vector(input: VertexFactoryInput, v: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(dot(input.instance_row0.xyz, v), dot(input.instance_row1.xyz, v), dot(input.instance_row2.xyz, v));
}

fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex {
    let primitive = scene_primitive(draw.primitive_id);
    let component_position = instance_transform_point(input, input.position);
    // Normals by the inverse transpose would be exact for non-uniform scale;
    // the instance matrix itself keeps the direction for rotations and
    // uniform scale (UE does the same) and the renormalisation handles length.
    let component_normal = instance_transform_vector(input, input.normal.xyz);
    let component_tangent = vec4<f32>(instance_transform_vector(input, input.tangent_x.xyz), input.tangent_x.w);
    var v = mesh_factory_vertex(
        draw.primitive_id,
        primitive.local_to_world,
        component_position,
        component_normal,
        component_tangent,
        input.color,
        input.uv0,
    );
    // The component's motion (instances keep their place in it between frames).
    v.prev_world_position = (primitive.prev_local_to_world * vec4<f32>(component_position, 1.0)).xyz;
    v.instance_id = input.instance_id;
    v.custom = vec4<f32>(input.instance_custom.xyz, input.instance_random_fade.x);
    v.custom1 = vec4<f32>(input.instance_custom.w, 0.0, 0.0, 0.0);
    v.fade = input.instance_random_fade.y;
    // A copy in a dithered LOD transition (FLAG_LOD_DITHER): its side of
    // the pattern, the coarser LOD's share (1 - the finer one's, unorm16 in
    // bits 16..31) and the distance fade, encoded for `dithered_fade_keeps`.
    let flags = input.instance_flags;
    if ((flags & 2u) != 0u) {
        let coarse_share = 1.0 - f32(flags >> 16u) / 65535.0;
        v.fade = dithered_lod_fade(v.fade, coarse_share, (flags & 4u) != 0u, (flags & 8u) != 0u);
    }
    return v;
}

// Custom float `index` of the instance being shaded; 0 past the component's
// floats per instance.
fn vf_custom_data(in: MaterialInput, index: u32) -> f32 {
    let n = bitcast<u32>(instance_custom_data[0]);
    if (index >= n) {
        return 0.0;
    }
    return instance_custom_data[INSTANCE_CUSTOM_DATA_HEADER + in.instance_id * n + index];
}
