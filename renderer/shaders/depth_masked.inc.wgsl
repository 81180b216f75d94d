// Depth-only pass for masked materials: evaluates the material to discard
// texels whose opacity (times the instance fade, as the base pass does) is
// below the material's mask clip value — so depth has a hole exactly where
// the base pass discards colour. `material_vs.inc.wgsl` (interpolants,
// vertex shader, MaterialInput) comes first.

@fragment
fn fs_main(in: MaterialVsOut, @builtin(front_facing) front: bool) {
    let mi = material_input(in, front);
    if (material_main(mi).opacity * in.fade < MATERIAL_MASK_CLIP) {
        discard;
    }
}
