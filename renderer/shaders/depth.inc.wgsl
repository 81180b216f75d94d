// Depth-only pass (depth prepass and shadow depth) for opaque geometry:
// position only, no fragment shader.

@vertex
fn vs_main(input: VertexFactoryInput) -> @builtin(position) @invariant vec4<f32> {
    let v = vf_fetch(input);
    return view.view_proj * vec4<f32>(v.world_position, 1.0);
}
