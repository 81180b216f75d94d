// The local vertex factory (UE's FLocalVertexFactory): position; tangent
// basis; color; UVs; and the primitive id from the renderer's per-pass id
// stream (one id per instance, so merged draws find their primitives).

struct VertexFactoryInput {
    @location(0) position: vec3<f32>,
    @location(1) tangent_x: vec4<f32>,
    @location(2) normal: vec4<f32>,
    @location(3) color: vec4<f32>,
    @location(4) uv0: vec2<f32>,
    @location(8) primitive_id: u32,
}

fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex {
    let primitive = scene_primitive(input.primitive_id);
    var v: FactoryVertex;
    v.world_position = (primitive.local_to_world * vec4<f32>(input.position, 1.0)).xyz;
    v.world_normal = normalize((primitive.local_to_world * vec4<f32>(input.normal.xyz, 0.0)).xyz);
    v.color = input.color;
    v.uv0 = input.uv0;
    v.primitive_id = input.primitive_id;
    v.custom = primitive.custom;
    v.fade = 1.0;
    return v;
}
