// The masked depth pass where the frame has a velocity target: the
// material's interpolants plus the two clip positions of
// `velocity.inc.wgsl`; discards as `masked_depth_discards` says and
// writes the motion vector of what it keeps.

struct MaskedVelocityVsOut {
    @builtin(position) @invariant clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec4<f32>,
    @location(3) uv0: vec2<f32>,
    @location(4) custom: vec4<f32>,
    @location(5) @interpolate(flat) fade: f32,
    @location(6) tangent: vec4<f32>,
    @location(7) uv12: vec4<f32>,
    @location(8) uv3: vec2<f32>,
    @location(9) custom1: vec4<f32>,
    @location(10) @interpolate(flat) instance_id: u32,
    @location(11) current: vec4<f32>,
    @location(12) previous: vec4<f32>,
}

@vertex
fn vs_main(input: VertexFactoryInput) -> MaskedVelocityVsOut {
    let v = vf_fetch(input);
    let m = material_vs_out(v);
    let clips = velocity_clips(v.world_position, v.prev_world_position);
    return MaskedVelocityVsOut(
        m.clip, m.world_position, m.normal, m.color, m.uv0, m.custom, m.fade,
        m.tangent, m.uv12, m.uv3, m.custom1, m.instance_id, clips[0], clips[1],
    );
}

@fragment
fn fs_main(in: MaskedVelocityVsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let m = MaterialVsOut(
        in.clip, in.world_position, in.normal, in.color, in.uv0, in.custom, in.fade,
        in.tangent, in.uv12, in.uv3, in.custom1, in.instance_id,
    );
    if (masked_depth_discards(m, front)) {
        discard;
    }
    return velocity_of(in.current, in.previous);
}
