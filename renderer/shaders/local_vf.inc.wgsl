// The local vertex factory (UE's FLocalVertexFactory): position; tangent
// basis (the tangent reaches materials with its handedness); color; UV0-UV3;
// and the primitive id from the renderer's per-pass id stream (one id per instance, so merged draws find their primitives).

struct VertexFactoryInput {
    @location(0) position: vec3<f32>,
    @location(1) tangent_x: vec4<f32>,
    @location(2) normal: vec4<f32>,
    @location(3) color: vec4<f32>,
    @location(4) uv0: vec2<f32>,
    @location(5) uv1: vec2<f32>,
    @location(6) uv2: vec2<f32>,
    @location(7) uv3: vec2<f32>,
    @location(8) primitive_id: u32,
}

fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex {
    let primitive = scene_primitive(input.primitive_id);
    // A mirroring transform flips the binormal's handedness.
    let m = mat3x3<f32>(primitive.local_to_world[0].xyz, primitive.local_to_world[1].xyz, primitive.local_to_world[2].xyz);
    let mirrored = select(1.0, -1.0, determinant(m) < 0.0);
    let tangent = vec4<f32>(input.tangent_x.xyz, input.tangent_x.w * mirrored);
    var v = mesh_factory_vertex(input.primitive_id, primitive.local_to_world, input.position, input.normal.xyz, tangent, input.color, input.uv0);
    v.uv1 = input.uv1;
    v.uv2 = input.uv2;
    v.uv3 = input.uv3;
    v.custom = primitive.custom;
    v.prev_world_position = (primitive.prev_local_to_world * vec4<f32>(input.position, 1.0)).xyz;
    return v;
}

// The primitive's custom vec4 (`PrimitiveData.custom`): floats 0..3.
fn vf_custom_data(in: MaterialInput, index: u32) -> f32 {
    return custom_vec4_data(in, index);
}
