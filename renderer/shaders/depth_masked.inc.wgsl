// Depth-only pass for masked materials: evaluates the material to discard
// texels whose opacity (times the instance fade, as the base pass does) is
// below the material's mask clip value — so depth has a hole exactly where
// the base pass discards colour. Also the depth pass of every batch whose
// vertex factory dithers its fade (DITHERED_FADE), opaque ones included:
// it discards the pixels `dithered_fade_keeps` leaves out, as the base
// pass does. `material_vs.inc.wgsl` (interpolants, MaterialInput) comes
// first; the entry points follow (`depth_masked_main.inc.wgsl`, or
// `depth_masked_velocity.inc.wgsl` where the pass writes velocity).

// Whether the masked depth pass drops the fragment.
fn masked_depth_discards(in: MaterialVsOut, front: bool) -> bool {
    // DITHERED_FADE: an opaque batch comes here too (with the default
    // material); the fade is dithered instead of multiplying opacity.
    var clipped = false;
    if (BLEND_MODE == 1u) {
        let mi = material_input(in, front);
        clipped = material_main(mi).opacity * select(fade_opacity(in.fade), 1.0, DITHERED_FADE) < MATERIAL_MASK_CLIP;
    }
    return clipped || (DITHERED_FADE && !dithered_fade_keeps(in.fade, in.clip.xy));
}
