// The unlit sprite-sheet particle material (UE's particle material with a
// ParticleSubUV texture sample): the sprite sheet texture parameter
// `sprite_sheet` sampled at the particle's two sub-images (UV0 and UV1 from
// the sprite vertex factory) and cross-faded by the blend weight (custom
// float 2, 0 unless the emitter's sub-UV interpolation is linear_blend).
// Emissive = base colour × particle colour × texel; opacity = opacity ×
// base alpha × particle alpha × texel alpha.

fn material_main(in: MaterialInput) -> MaterialOutput {
    var out: MaterialOutput;
    let texel = mix(texture_sprite_sheet(in.uv0), texture_sprite_sheet(in.uv1), custom_data(in, 2u));
    out.base_color = vec3<f32>(0.0);
    out.metallic = 0.0;
    out.roughness = 1.0;
    out.specular = 0.0;
    out.emissive = in.params.base_color.rgb * in.color.rgb * texel.rgb;
    out.opacity = in.params.mrso.w * in.params.base_color.a * in.color.a * texel.a;
    return out;
}
