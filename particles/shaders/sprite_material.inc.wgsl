// The unlit particle sprite material (UE's typical particle material:
// unlit, colour from the particle). Emissive = base colour × particle
// colour; opacity = opacity × base alpha × particle alpha, times a radial
// mask when params.custom.x > 0 (soft round sprites: the mask falls from 1
// to 0 over that fraction of the radius at the edge, over the whole quad:
// UV2, which sub-UV leaves alone).

fn material_main(in: MaterialInput) -> MaterialOutput {
    var out: MaterialOutput;
    out.base_color = vec3<f32>(0.0);
    out.metallic = 0.0;
    out.roughness = 1.0;
    out.specular = 0.0;
    out.emissive = in.params.base_color.rgb * in.color.rgb;
    var mask = 1.0;
    let softness = in.params.custom.x;
    if (softness > 0.0) {
        let r = length(in.uv2 - vec2<f32>(0.5)) * 2.0;
        mask = clamp((1.0 - r) / softness, 0.0, 1.0);
    }
    out.opacity = in.params.mrso.w * in.params.base_color.a * in.color.a * mask;
    return out;
}
