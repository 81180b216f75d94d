// The particle sprite vertex factory (UE's FParticleSpriteVertexFactory).
//
// Stream 0: the unit quad, one corner in [-0.5, 0.5]^2 per vertex.
// Stream 1: one ParticleSpriteVertex (64 bytes) per instance = per particle.
// Instance positions are in world space (local-space emitters' carried there
// on the CPU), so the primitive's local_to_world
// is not applied; the primitive id comes from the draw's push constants.
//
// `misc.z` packs, per instance but uniform across an emitter's draw (so the
// branches are coherent), the screen alignment in its low two bits: 0 faces
// the camera plane (square sprites too: the CPU made their size square), 1
// stretches the sprite's y axis along the velocity (position - old_position)
// as seen from the camera, 2 faces the camera position (normal towards the
// eye); and the sprite sheet's columns - 1 in bits 2-7 and rows - 1 from
// bit 8. The particle rotation turns the sprite in its plane in every case.
//
// Sub-UV: `misc.y` is the sub-image index i; images floor(i) and
// floor(i) + 1 (the last image at most), numbered row by row from the
// top-left, give UV0 and UV1, and i - floor(i) is their blend weight
// (custom.z). A 1 x 1 sheet (no sub-UV) gives UV0 = the whole quad, as
// before. UV2 is always the whole quad (for masks drawn over the sprite).

struct VertexFactoryInput {
    @location(0) corner: vec2<f32>,
    @location(1) position: vec3<f32>,
    @location(2) old_position: vec3<f32>,
    @location(3) size: vec2<f32>,
    @location(4) rotation: f32,
    @location(5) color: vec4<f32>,
    // relative time, sub-image index, alignment and sheet grid (above)
    @location(6) misc: vec3<f32>,
}

fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex {
    let right = view.camera_right;
    let up = view.camera_up;
    // Direction from the eye to the particle (the view direction for ortho).
    var to_particle = cross(up, right);
    if (view.perspective != 0u) {
        let d = input.position - view.camera_position;
        if (dot(d, d) > 1e-12) {
            to_particle = normalize(d);
        }
    }
    let code = u32(input.misc.z + 0.5);
    let alignment = code & 3u;
    var axis_x = right;
    var axis_y = up;
    var normal = -cross(up, right);
    if (alignment == 2u) {
        // Facing the eye: the camera-facing frame turned about the eye so
        // its normal points at it (the same frame on the view axis).
        let x = cross(to_particle, up);
        if (dot(x, x) > 1e-12) {
            axis_x = normalize(x);
            axis_y = cross(axis_x, to_particle);
            normal = -to_particle;
        }
    }
    if (alignment == 1u) {
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
    let quad_uv = vec2<f32>(input.corner.x + 0.5, 0.5 - input.corner.y);
    let columns = ((code >> 2u) & 63u) + 1u;
    let images = columns * ((code >> 8u) + 1u);
    let image = floor(input.misc.y);
    let a = u32(image);
    let b = min(a + 1u, images - 1u);
    let cell = vec2<f32>(1.0 / f32(columns), 1.0 / f32((code >> 8u) + 1u));
    let uv_a = (vec2<f32>(f32(a % columns), f32(a / columns)) + quad_uv) * cell;
    let uv_b = (vec2<f32>(f32(b % columns), f32(b / columns)) + quad_uv) * cell;
    var v = factory_vertex(draw.primitive_id, world_position, normal, vec4<f32>(rx, 1.0), input.color, uv_a);
    // The sprite's corner where the particle was the frame before.
    v.prev_world_position = world_position - (input.position - input.old_position);
    v.uv1 = uv_b;
    v.uv2 = quad_uv;
    // For materials: relative time, sub-image index, the second image's weight.
    v.custom = vec4<f32>(input.misc.x, input.misc.y, input.misc.y - image, 0.0);
    return v;
}

// Custom floats: the particle's relative time (0), sub-image index (1) and
// sub-image blend weight (2); 0 past them.
fn vf_custom_data(in: MaterialInput, index: u32) -> f32 {
    return custom_vec4_data(in, index);
}
