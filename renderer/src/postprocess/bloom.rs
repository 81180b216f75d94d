//! Bloom (Jimenez's Call of Duty: Advanced Warfare method, as Bevy does
//! it): scene color is downsampled into a chain of half-size mips by a
//! 13-tap filter (the first step with Karis' average, and the threshold
//! when one is set), then upsampled back, each level adding the smaller
//! level's sum through a 3x3 tent; the largest level, divided by the level
//! count, is the bloom. Without a threshold (the default) it is
//! energy-conserving: the composite is `mix(scene, bloom, intensity)`, so
//! light is spread, never added; a threshold makes it additive (only light
//! above it blooms, a stylised glow).
//!
//! **Off by default** (`r.Bloom=1` turns it on; the showcase does): it is
//! a look, not a correction, it costs [`LEVELS`] × 2 + 1 full-screen passes
//! (most of them small), and tests that compare exact colours must not see
//! it. Bevy makes it opt-in as well; UE turns it on.
//!
//! It runs before the post chain (the `PostProcessor`), which then
//! reads its composite instead of scene color: the chain's passes are one
//! full-screen draw each, and bloom's mip chain is not. Its three steps are
//! [`PostPassDesc`]s all the same (shader, output, pipeline cache), drawn
//! at each level's size. Wireframe views are left as drawn.

use super::{PostOutput, PostPassDesc};
use crate::render_targets::{Access, Lifetime, TargetDesc};

/// The most mip levels (the chain stops earlier when a side would fall
/// below 8 texels).
pub const LEVELS: usize = 6;

/// The downsampled chain, level by level (level 0: half the frame).
const DOWN: [TargetDesc; LEVELS] =
    targets(["bloom down 0", "bloom down 1", "bloom down 2", "bloom down 3", "bloom down 4", "bloom down 5"]);
/// The upsampled chain (each level: its downsample plus the smaller levels' sum).
const UP: [TargetDesc; LEVELS] = targets(["bloom up 0", "bloom up 1", "bloom up 2", "bloom up 3", "bloom up 4", "bloom up 5"]);
/// The composite: scene color with the bloom, what the post chain reads.
pub(crate) const COMPOSITE: TargetDesc =
    TargetDesc { name: "bloom composite", format: crate::mesh_pass::SCENE_COLOR_FORMAT, lifetime: Lifetime::Frame, samples: 1 };

const fn targets(names: [&'static str; LEVELS]) -> [TargetDesc; LEVELS] {
    let mut out = [COMPOSITE; LEVELS];
    let mut i = 0;
    while i < LEVELS {
        out[i] = TargetDesc { name: names[i], format: crate::mesh_pass::SCENE_COLOR_FORMAT, lifetime: Lifetime::Frame, samples: 1 };
        i += 1;
    }
    out
}

/// The downsample step.
pub static DOWNSAMPLE: PostPassDesc = step("bloom downsample", include_str!("../../shaders/bloom_downsample.wgsl"));
/// The upsample step.
pub static UPSAMPLE: PostPassDesc = step("bloom upsample", include_str!("../../shaders/bloom_upsample.wgsl"));
/// The composite step.
pub static COMPOSITE_STEP: PostPassDesc = step("bloom composite", include_str!("../../shaders/bloom_composite.wgsl"));

const fn step(name: &'static str, shader: &'static str) -> PostPassDesc {
    PostPassDesc {
        name,
        shader,
        output: PostOutput::Hdr,
        push_constants: |_, _| [0; 4],
        timestamps: ["bloom begin", "bloom end"],
        enabled: |s| s.bloom.enabled,
        sampler: true,
        exposure: false,
    }
}

/// The chain's levels for a `width` x `height` frame: each level's size,
/// halving until a side would fall below 8 texels (at least one level).
pub(crate) fn level_sizes(width: u32, height: u32) -> Vec<(u32, u32)> {
    let mut sizes = Vec::new();
    let (mut w, mut h) = ((width / 2).max(1), (height / 2).max(1));
    while sizes.len() < LEVELS {
        sizes.push((w, h));
        if w / 2 < 8 || h / 2 < 8 {
            break;
        }
        (w, h) = (w / 2, h / 2);
    }
    sizes
}

/// One draw of a bloom step: what it reads (binding 0, and binding 2 for
/// the upsample and the composite), what it writes, at what size, with
/// what push constants.
pub(crate) struct BloomDraw {
    pub step: &'static PostPassDesc,
    pub inputs: Vec<&'static str>,
    pub output: TargetDesc,
    pub size: (u32, u32),
    pub push: [f32; 4],
}

/// The draws of a frame's bloom, in order, reading `source` (scene color)
/// and ending in [`COMPOSITE`]: downsample level by level, upsample back,
/// composite at `width` x `height`.
pub(crate) fn draws(source: &'static str, width: u32, height: u32, settings: &crate::settings::BloomSettings) -> Vec<BloomDraw> {
    let sizes = level_sizes(width, height);
    let n = sizes.len();
    let texel = |(w, h): (u32, u32)| [1.0 / w as f32, 1.0 / h as f32];
    let mut out = Vec::new();
    let mut from = (source, (width, height));
    for (i, &size) in sizes.iter().enumerate() {
        let [tx, ty] = texel(from.1);
        let push = [tx, ty, settings.threshold, if i == 0 { 1.0 } else { 0.0 }];
        out.push(BloomDraw { step: &DOWNSAMPLE, inputs: vec![from.0], output: DOWN[i], size, push });
        from = (DOWN[i].name, size);
    }
    // The smallest level's sum is itself: the upsample starts above it.
    let mut smaller = (DOWN[n - 1].name, sizes[n - 1]);
    for i in (0..n - 1).rev() {
        let [tx, ty] = texel(smaller.1);
        out.push(BloomDraw {
            step: &UPSAMPLE,
            inputs: vec![smaller.0, DOWN[i].name],
            output: UP[i],
            size: sizes[i],
            push: [tx, ty, 0.0, 0.0],
        });
        smaller = (UP[i].name, sizes[i]);
    }
    let additive = if settings.threshold > 0.0 { 1.0 } else { 0.0 };
    let push = [settings.intensity, n as f32, additive, 1.0];
    out.push(BloomDraw { step: &COMPOSITE_STEP, inputs: vec![source, smaller.0], output: COMPOSITE, size: (width, height), push });
    out
}

/// The accesses a draw needs from the frame-resource table.
pub(crate) fn accesses(d: &BloomDraw) -> Vec<(&'static str, Access)> {
    d.inputs.iter().map(|&n| (n, Access::Sample)).chain(std::iter::once((d.output.name, Access::ColorWrite))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::BloomSettings;

    #[test]
    fn the_chain_halves_to_eight_texels_and_composites_at_full_size() {
        assert_eq!(level_sizes(1920, 1080), vec![(960, 540), (480, 270), (240, 135), (120, 67), (60, 33), (30, 16)]);
        assert_eq!(level_sizes(40, 30), vec![(20, 15)]);
        assert_eq!(level_sizes(4, 4), vec![(2, 2)]);
        let d = draws("scene color", 1920, 1080, &BloomSettings { enabled: true, intensity: 0.15, threshold: 0.0 });
        assert_eq!(d.len(), 6 + 5 + 1);
        assert_eq!(d.last().map(|d| (d.output.name, d.size)), Some((COMPOSITE.name, (1920, 1080))));
        assert_eq!(d[0].push[3], 1.0, "the first downsample is the one with Karis' average and the threshold");
        assert!(d[1..6].iter().all(|d| d.push[3] == 0.0));
    }

    #[test]
    fn the_shaders_compile() {
        for s in [&DOWNSAMPLE, &UPSAMPLE, &COMPOSITE_STEP] {
            rhi_vulkan::compile_wgsl(s.name, s.shader).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        }
    }
}
