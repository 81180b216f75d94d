// Wireframe view mode: every primitive's edges in one flat color.

@vertex
fn vs_main(input: VertexFactoryInput) -> @builtin(position) vec4<f32> {
    let v = vf_fetch(input);
    return view_clip(v.world_position);
}

@fragment
fn fs_main() -> @location(0) vec4<f32> {
    return view.wireframe_color;
}
