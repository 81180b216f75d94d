// The default lit material: base color times vertex color.
fn material_main(in: MaterialInput) -> MaterialOutput {
    return default_material(in);
}
