// The masked depth pass's fragment shader without velocity: depth alone.

@fragment
fn fs_main(in: MaterialVsOut, @builtin(front_facing) front: bool) {
    if (masked_depth_discards(in, front)) {
        discard;
    }
}
