// The local vertex factory's position-only variant (UE's position-only
// vertex stream): depth-only passes of opaque geometry fetch the position
// stream alone. The world position goes through the same
// `mesh_factory_vertex` as the full factory's, so the depth it gives is
// bit-for-bit the depth the base pass tests against (`@invariant`).

struct VertexFactoryInput {
    @location(0) position: vec3<f32>,
    @location(1) primitive_id: u32,
}

fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex {
    let primitive = scene_primitive(input.primitive_id);
    var v = mesh_factory_vertex(input.primitive_id, primitive.local_to_world, input.position, vec3<f32>(0.0, 0.0, 1.0), vec4<f32>(1.0, 0.0, 0.0, 1.0), vec4<f32>(1.0), vec2<f32>(0.0));
    v.custom = primitive.custom;
    v.prev_world_position = (primitive.prev_local_to_world * vec4<f32>(input.position, 1.0)).xyz;
    return v;
}

// The primitive's custom vec4 (`PrimitiveData.custom`): floats 0..3.
fn vf_custom_data(in: MaterialInput, index: u32) -> f32 {
    return custom_vec4_data(in, index);
}
