// The vertex shader of the passes that evaluate a material: the factory's
// vertex as `MaterialVsOut` (material_vs.inc.wgsl).

@vertex
fn vs_main(input: VertexFactoryInput) -> MaterialVsOut {
    return material_vs_out(vf_fetch(input));
}
