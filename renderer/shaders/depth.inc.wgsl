// Depth-only pass (depth prepass and shadow depth) for opaque geometry:
// position only, no fragment shader.

@vertex
fn vs_main(input: VertexFactoryInput) -> @builtin(position) @invariant vec4<f32> {
    let v = vf_fetch(input);
    return view_clip(v.world_position);
}
