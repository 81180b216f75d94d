// The depth prepass for opaque geometry where the frame has a velocity
// target: depth, and each pixel's motion vector (`velocity.inc.wgsl`
// comes first).

struct VelocityVsOut {
    @builtin(position) @invariant clip: vec4<f32>,
    @location(0) current: vec4<f32>,
    @location(1) previous: vec4<f32>,
}

@vertex
fn vs_main(input: VertexFactoryInput) -> VelocityVsOut {
    let v = vf_fetch(input);
    var out: VelocityVsOut;
    out.clip = view_clip(v.world_position);
    let clips = velocity_clips(v.world_position, v.prev_world_position);
    out.current = clips[0];
    out.previous = clips[1];
    return out;
}

@fragment
fn fs_main(in: VelocityVsOut) -> @location(0) vec4<f32> {
    return velocity_of(in.current, in.previous);
}
