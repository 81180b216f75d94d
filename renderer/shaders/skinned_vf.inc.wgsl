// The GPU skin vertex factory (UE's FGPUSkinVertexFactory): the local
// factory's streams (the mesh in its bind pose) and primitive id stream,
// each vertex moved by up to eight joints of the primitive's skeleton
// (linear blend skinning) before the primitive's transform places it in
// the world. Group 3 is a joint page of the mesh, shared by the proxies
// that have a slot in it (renderer/src/skeletal/joint_pages.rs); the
// primitive's slot is its `vertex_factory_data`:
//   binding 0: the page's joint matrices, model space × inverse bind: per
//              slot this frame's J matrices, then the previous frame's J
//              (motion vectors: `prev_world_position` is skinned with them)
//   binding 1: per vertex, its joint indices in fours (16 bits each;
//              one or two fours per vertex: the header's z)
//   binding 2: per vertex, its weights in as many fours (summing to 1)
//   binding 3: the morph targets' deltas, target-major: per vertex its
//              position delta, then its normal delta (xyz of each vec4)
//   binding 4: the page's morph lists: element 0 a header (x: J, y: the
//              entries per slot, z: fours of influences per vertex), then
//              per slot its list: the first
//              entry's x their count, then per target its index, weight
//              now and weight in the previous frame (only targets weighed
//              in either frame are listed, so an unmorphed mesh loops over
//              nothing)
// Morph targets apply in the bind pose, before skinning.
// The vertex's index (`@builtin(vertex_index)`, the mesh's own: draws use
// base vertex 0) finds its influences.

@group(3) @binding(0) var<storage, read> skin_joints: array<mat4x4<f32>>;
@group(3) @binding(1) var<storage, read> skin_joint_indices: array<vec2<u32>>;
@group(3) @binding(2) var<storage, read> skin_weights: array<vec4<f32>>;
@group(3) @binding(3) var<storage, read> morph_deltas: array<vec4<f32>>;
@group(3) @binding(4) var<storage, read> morph_list: array<vec4<f32>>;

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
    @builtin(vertex_index) vertex_index: u32,
}

// Where a primitive's pose is in the page: its first matrix of this frame
// and of the previous frame, and its morph list.
struct SkinSlot {
    joints: u32,
    previous_joints: u32,
    morphs: u32,
    // Fours of influences per vertex (1 or 2).
    quads: u32,
}

fn skin_slot(slot: u32) -> SkinSlot {
    let header = morph_list[0];
    let joint_count = u32(header.x);
    let first = slot * 2u * joint_count;
    return SkinSlot(first, first + joint_count, 1u + slot * u32(header.y), u32(header.z));
}

// The blended joint matrix of vertex `v` from the matrices at `first`
// (this frame's or the previous frame's of a slot), over its `quads`
// fours of influences.
fn skin_matrix(v: u32, first: u32, quads: u32) -> mat4x4<f32> {
    var m = mat4x4<f32>();
    for (var q = 0u; q < quads; q++) {
        let j = skin_joint_indices[v * quads + q];
        let w = skin_weights[v * quads + q];
        m += skin_joints[first + (j.x & 0xffffu)] * w.x
            + skin_joints[first + (j.x >> 16u)] * w.y
            + skin_joints[first + (j.y & 0xffffu)] * w.z
            + skin_joints[first + (j.y >> 16u)] * w.w;
    }
    return m;
}

// The bind-pose position (now and in the previous frame) and normal of
// vertex `v` with the weighed morph targets applied.
struct Morphed {
    position: vec3<f32>,
    previous: vec3<f32>,
    normal: vec3<f32>,
}

fn morphed(v: u32, slot: SkinSlot, input: VertexFactoryInput) -> Morphed {
    var m = Morphed(input.position, input.position, input.normal.xyz);
    let list = slot.morphs;
    let count = u32(morph_list[list].x);
    let vertices = arrayLength(&skin_weights) / slot.quads;
    for (var k = 1u; k <= count; k++) {
        let item = morph_list[list + k];
        let at = (u32(item.x) * vertices + v) * 2u;
        let dp = morph_deltas[at].xyz;
        m.position += dp * item.y;
        m.previous += dp * item.z;
        m.normal += morph_deltas[at + 1u].xyz * item.y;
    }
    return m;
}

fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex {
    let primitive = scene_primitive(input.primitive_id);
    let slot = skin_slot(primitive.vertex_factory_data);
    let skin = skin_matrix(input.vertex_index, slot.joints, slot.quads);
    let bind = morphed(input.vertex_index, slot, input);
    let position = (skin * vec4<f32>(bind.position, 1.0)).xyz;
    let normal = (skin * vec4<f32>(bind.normal, 0.0)).xyz;
    let tangent_dir = (skin * vec4<f32>(input.tangent_x.xyz, 0.0)).xyz;
    // A mirroring transform flips the binormal's handedness.
    let m = mat3x3<f32>(primitive.local_to_world[0].xyz, primitive.local_to_world[1].xyz, primitive.local_to_world[2].xyz);
    let mirrored = select(1.0, -1.0, determinant(m) < 0.0);
    let tangent = vec4<f32>(tangent_dir, input.tangent_x.w * mirrored);
    var v = mesh_factory_vertex(input.primitive_id, primitive.local_to_world, position, normal, tangent, input.color, input.uv0);
    v.uv1 = input.uv1;
    v.uv2 = input.uv2;
    v.uv3 = input.uv3;
    v.custom = primitive.custom;
    let before = (skin_matrix(input.vertex_index, slot.previous_joints, slot.quads) * vec4<f32>(bind.previous, 1.0)).xyz;
    v.prev_world_position = (primitive.prev_local_to_world * vec4<f32>(before, 1.0)).xyz;
    return v;
}

// The primitive's custom vec4 (`PrimitiveData.custom`): floats 0..3.
fn vf_custom_data(in: MaterialInput, index: u32) -> f32 {
    return custom_vec4_data(in, index);
}
