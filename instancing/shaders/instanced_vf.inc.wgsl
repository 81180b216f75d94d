// The instanced vertex factory (UE's FInstancedStaticMeshVertexFactory):
// the local factory's vertex attributes (position; tangent basis; color and
// UV0 interleaved in one stream) plus one instance-rate stream of
// `InstanceStreamData` (80 bytes; see instancing/src/vertex_factory.rs).
//
// The primitive id comes from the draw's push constants (`draw.primitive_id`):
// instanced draws are never merged by the renderer.
//
// What materials receive (MaterialInput):
//   in.custom.xyz  per-instance custom data floats 0..2 (0 when absent)
//   in.custom.w    PerInstanceRandom, in [0, 1)
//   in.custom1.x   custom data float 3
//   in.world_tangent, in.uv0 as the local factory (no UV1-3: the color/UV
//   stream carries UV0 only)

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
    var v: FactoryVertex;
    v.world_position = (primitive.local_to_world * vec4<f32>(component_position, 1.0)).xyz;
    v.world_normal = normalize((primitive.local_to_world * vec4<f32>(component_normal, 0.0)).xyz);
    let component_tangent = instance_transform_vector(input, input.tangent_x.xyz);
    v.world_tangent = vec4<f32>((primitive.local_to_world * vec4<f32>(component_tangent, 0.0)).xyz, input.tangent_x.w);
    v.color = input.color;
    v.uv0 = input.uv0;
    v.primitive_id = draw.primitive_id;
    v.custom = vec4<f32>(input.instance_custom.xyz, input.instance_random_fade.x);
    v.custom1 = vec4<f32>(input.instance_custom.w, 0.0, 0.0, 0.0);
    v.fade = input.instance_random_fade.y;
    return v;
}
