// The particle sprite vertex factory (UE's FParticleSpriteVertexFactory).
//
// Stream 0: the unit quad, one corner in [-0.5, 0.5]^2 per vertex.
// Stream 1: one ParticleSpriteVertex (64 bytes) per instance = per particle.
// Particles are simulated in world space, so the primitive's local_to_world
// is not applied; the primitive id comes from the draw's push constants.
//
// Screen alignment is per instance (`misc.z`, uniform across an emitter's
// draw, so the branch is coherent): 0 faces the camera plane, 1 stretches
// the sprite's y axis along the velocity (position - old_position) as seen
// from the camera. The particle rotation turns the sprite in its plane in
// both cases.

struct VertexFactoryInput {
    @location(0) corner: vec2<f32>,
    @location(1) position: vec3<f32>,
    @location(2) old_position: vec3<f32>,
    @location(3) size: vec2<f32>,
    @location(4) rotation: f32,
    @location(5) color: vec4<f32>,
    // relative time, sub-image index, alignment (0 facing, 1 velocity)
    @location(6) misc: vec3<f32>,
}

fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex {
    let right = view.camera_right.xyz;
    let up = view.camera_up.xyz;
    // Direction from the eye to the particle (the view direction for ortho).
    var to_particle = cross(up, right);
    if (view.camera_position.w > 0.5) {
        let d = input.position - view.camera_position.xyz;
        if (dot(d, d) > 1e-12) {
            to_particle = normalize(d);
        }
    }
    var axis_x = right;
    var axis_y = up;
    var normal = -cross(up, right);
    if (input.misc.z > 0.5) {
        let velocity = input.position - input.old_position;
        let along = velocity - dot(velocity, to_particle) * to_particle;
        // A particle moving straight at the camera (or not at all) keeps
        // the camera-facing axes.
        if (dot(along, along) > 1e-12) {
            axis_y = normalize(along);
            axis_x = normalize(cross(to_particle, axis_y));
            normal = -to_particle;
        }
    }
    let c = cos(input.rotation);
    let s = sin(input.rotation);
    let rx = c * axis_x + s * axis_y;
    let ry = c * axis_y - s * axis_x;
    let offset = input.corner * input.size;

    let world_position = input.position + offset.x * rx + offset.y * ry;
    // U runs along the sprite's x axis, V down its y axis; the binormal
    // (cross(normal, tangent) = ry) points to the image's top, as the
    // tangent-space convention wants (see `shading_normal`).
    let uv0 = vec2<f32>(input.corner.x + 0.5, 0.5 - input.corner.y);
    var v = factory_vertex(draw.primitive_id, world_position, normal, vec4<f32>(rx, 1.0), input.color, uv0);
    // For materials: relative time, sub-image index.
    v.custom = vec4<f32>(input.misc.x, input.misc.y, 0.0, 0.0);
    return v;
}

// Custom floats: the particle's relative time (0) and sub-image index (1);
// 0 past them.
fn vf_custom_data(in: MaterialInput, index: u32) -> f32 {
    return custom_vec4_data(in, index);
}
