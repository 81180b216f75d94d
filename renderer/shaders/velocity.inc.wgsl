// Motion vectors (the velocity target, RG16F; read by TAA,
// renderer/src/postprocess/taa.rs): what the depth prepass writes where
// the frame has a velocity target. A pixel's velocity is how far its
// surface moved on screen since the previous frame, in UV units of the
// view's viewport (current - previous; +x right, +y down), from its
// position now and its position in the previous frame (the vertex
// factory's `prev_world_position`: the GPU scene's previous transform,
// a particle's previous position), each through its frame's camera
// without the sub-pixel jitter (`ViewUniform.jitter`,
// `ViewUniform.prev_view_proj`), so a still surface under a still
// camera has exactly 0.

// The unjittered clip position now and the previous frame's, of a
// factory vertex (computed the same way: a still vertex under a still
// camera gives the same bits, and exactly 0).
fn velocity_clips(world_position: vec3<f32>, prev_world_position: vec3<f32>) -> array<vec4<f32>, 2> {
    let current = view.view_proj * vec4<f32>(world_position, 1.0);
    let previous = view.prev_view_proj * vec4<f32>(prev_world_position, 1.0);
    return array<vec4<f32>, 2>(current, previous);
}

// The velocity of a fragment from its interpolated clip positions.
fn velocity_of(current: vec4<f32>, previous: vec4<f32>) -> vec4<f32> {
    let now = current.xy / current.w;
    let before = previous.xy / max(previous.w, 1e-6);
    return vec4<f32>((now - before) * 0.5, 0.0, 0.0);
}
