//! Textures with mip chains, uploads in one call, samplers and persistent
//! bind groups (issue 16), on the real Vulkan device with the validation
//! layer on: every test asserts it reported nothing. Tests that count the
//! device's objects or shut it down have a device of their own.

use rhi_vulkan::*;
use test_support::{assert_clean, device, new_device};

/// Reads mip level `level` of `texture` (in `ShaderRead`, left there) back, tightly packed.
fn read_level(device: &Device, texture: TextureHandle, level: u32) -> Vec<u8> {
    let size = device.texture_desc(texture).unwrap().level_size(level);
    let buffer = device.create_buffer(&BufferDesc::readback("level readback", size)).unwrap();
    device
        .immediate(|cmd| {
            cmd.texture_barrier(texture, TextureState::ShaderRead, TextureState::TransferSrc)?;
            cmd.copy_texture_level_to_buffer(texture, level, buffer, 0)?;
            cmd.buffer_barrier(buffer, BufferState::TransferDst, BufferState::HostRead)?;
            cmd.texture_barrier(texture, TextureState::TransferSrc, TextureState::ShaderRead)
        })
        .unwrap();
    let bytes = device.read_buffer(buffer, 0, size).unwrap();
    device.destroy_buffer(buffer);
    bytes
}

/// A sampled texture that can also be read back.
fn readable(label: &str, width: u32, height: u32, format: Format) -> TextureDesc {
    let desc = TextureDesc::sampled(label, width, height, format);
    TextureDesc { usage: desc.usage | TextureUsage::TRANSFER_SRC, ..desc }
}

/// Texel bytes of one level, different for every `seed`, level and texel
/// (a multiplicative hash: no two neighbours alike); RGBA16F gets finite
/// half floats (0..1).
fn texels(seed: &mut u32, desc: &TextureDesc, level: u32) -> Vec<u8> {
    let size = desc.level_size(level) as usize;
    let mut next = || {
        *seed = seed.wrapping_add(1);
        seed.wrapping_mul(0x9E37_79B1) >> 8
    };
    if desc.format == Format::Rgba16Float {
        (0..size / 2).flat_map(|_| (next() as u16 & 0x3bff).to_le_bytes()).collect()
    } else {
        (0..size).map(|_| next() as u8).collect()
    }
}

#[test]
fn every_supplied_level_reads_back_byte_exact_in_every_format() {
    let device = device();
    let mut seed = 16u32;
    for format in [Format::R8Unorm, Format::Rg8Unorm, Format::Rgba8Unorm, Format::Rgba8Srgb, Format::Rgba16Float] {
        // 5x3 -> 2x1 -> 1x1: odd extents round down, rows of 5 R8 texels are not 4-byte multiples.
        let desc = readable("levels", 5, 3, format).with_mip_levels(TextureDesc::full_mip_count(5, 3));
        assert_eq!(desc.mip_levels, 3);
        let levels: Vec<Vec<u8>> = (0..desc.mip_levels).map(|l| texels(&mut seed, &desc, l)).collect();
        let slices: Vec<&[u8]> = levels.iter().map(Vec::as_slice).collect();
        let texture = device.create_texture_with_data(&desc, TextureData::AllLevels(&slices)).unwrap();
        for (level, want) in (0u32..).zip(&levels) {
            assert_eq!(&read_level(device, texture, level), want, "{format:?} level {level}");
        }
        // One level, supplied as Level0: nothing to generate, any format.
        let single = readable("single", 3, 2, format);
        let data = texels(&mut seed, &single, 0);
        let one = device.create_texture_with_data(&single, TextureData::Level0(&data)).unwrap();
        assert_eq!(read_level(device, one, 0), data, "{format:?} single level");
        device.destroy_texture(texture);
        device.destroy_texture(one);
    }
    assert_clean(device);
}

#[test]
fn generated_levels_average_the_level_above() {
    let device = device();
    // A one-texel checker of 0 and 255: every 2x2 block averages to 127.5.
    let checker: Vec<u8> = (0..64u32 * 64)
        .flat_map(|i| {
            let v = if (i % 64 + i / 64) % 2 == 0 { 0 } else { 255 };
            [v, v, v, 255]
        })
        .collect();
    let desc = readable("checker", 64, 64, Format::Rgba8Unorm).with_mip_levels(7);
    assert!(device.supports_mip_generation(Format::Rgba8Unorm));
    let texture = device.create_texture_with_data(&desc, TextureData::Level0(&checker)).unwrap();
    assert_eq!(read_level(device, texture, 0), checker, "level 0 is the data");
    let last = read_level(device, texture, 6);
    assert_eq!(last.len(), 4, "level 6 is 1x1");
    assert!(last[..3].iter().all(|&c| c == 127 || c == 128) && last[3] == 255, "level 6: {last:?}");
    for level in 1..6 {
        let bytes = read_level(device, texture, level);
        assert!(bytes.chunks(4).all(|p| (127..=128).contains(&p[0]) && p[3] == 255), "level {level}");
    }
    // A constant image stays constant at every level.
    let constant: Vec<u8> = [10u8, 20, 30, 40].repeat(16 * 8);
    let desc = readable("constant", 16, 8, Format::Rgba8Unorm).with_mip_levels(5);
    let flat = device.create_texture_with_data(&desc, TextureData::Level0(&constant)).unwrap();
    for level in 1..5 {
        let bytes = read_level(device, flat, level);
        assert_eq!(bytes, [10u8, 20, 30, 40].repeat(bytes.len() / 4), "level {level}");
    }
    device.destroy_texture(texture);
    device.destroy_texture(flat);
    assert_clean(device);
}

fn srgb_to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

fn linear_to_srgb(c: f32) -> f32 {
    let c = c.clamp(0.0, 1.0);
    255.0 * if c <= 0.003_130_8 { c * 12.92 } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 }
}

/// Level `level` of a chain generated on the CPU the way the GPU's must
/// be: each texel the average of the 2x2 texels above it, in linear light
/// for sRGB (alpha is linear).
fn cpu_level(level0: &[u8], width: u32, level: u32, srgb: bool) -> Vec<u8> {
    let mut texels: Vec<[f32; 4]> = level0
        .chunks(4)
        .map(|p| {
            let c = |i: usize| if srgb && i < 3 { srgb_to_linear(p[i]) } else { f32::from(p[i]) / 255.0 };
            [c(0), c(1), c(2), c(3)]
        })
        .collect();
    let mut w = width as usize;
    for _ in 0..level {
        let h = texels.len() / w;
        texels = (0..(w / 2) * (h / 2))
            .map(|i| {
                let (x, y) = (2 * (i % (w / 2)), 2 * (i / (w / 2)));
                let at = |dx: usize, dy: usize, c: usize| texels[(y + dy) * w + x + dx][c];
                std::array::from_fn(|c| (at(0, 0, c) + at(1, 0, c) + at(0, 1, c) + at(1, 1, c)) / 4.0)
            })
            .collect();
        w /= 2;
    }
    texels
        .iter()
        .flat_map(|t| std::array::from_fn::<u8, 4, _>(|c| if srgb && c < 3 { linear_to_srgb(t[c]) } else { t[c] * 255.0 }.round() as u8))
        .collect()
}

#[test]
fn generated_levels_of_a_large_srgb_texture_are_its_linear_light_averages() {
    // A 512x512 photo-sized texture of noise (as a real base-colour map
    // has detail at every texel): each generated level must be the 2x2
    // average of the level above in linear light, within rounding. Mips
    // averaged in sRGB bytes come out darker (a black/white pair averages
    // to 128 instead of 188); a level with texels from elsewhere is far off.
    let device = device();
    let (w, h) = (512u32, 512u32);
    let mut seed = 7u32;
    let desc = readable("noise", w, h, Format::Rgba8Srgb).with_mip_levels(TextureDesc::full_mip_count(w, h));
    let mut data = texels(&mut seed, &desc, 0);
    // Every fourth texel of every row pair black or white: the sRGB and linear averages differ most there.
    for (i, p) in data.chunks_mut(4).enumerate() {
        if i % 4 == 0 {
            let v = if (i / 4) % 2 == 0 { 0 } else { 255 };
            p[..3].copy_from_slice(&[v, v, v]);
        }
    }
    let texture = device.create_texture_with_data(&desc, TextureData::Level0(&data)).unwrap();
    for level in 1..desc.mip_levels {
        let got = read_level(device, texture, level);
        let want = cpu_level(&data, w, level, true);
        let worst = got.iter().zip(&want).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
        let first_bad = got.iter().zip(&want).position(|(a, b)| a.abs_diff(*b) > 2);
        assert!(
            first_bad.is_none(),
            "level {level}: byte {first_bad:?} is {:?}, want {:?} (worst difference {worst})",
            first_bad.map(|i| got[i]),
            first_bad.map(|i| want[i])
        );
    }
    device.destroy_texture(texture);
    assert_clean(device);
}

#[test]
fn bad_uploads_are_typed_errors_and_create_nothing() {
    let device = new_device();
    let before = device.counts();
    let desc = readable("bad", 8, 8, Format::Rgba8Unorm).with_mip_levels(4);
    let good: Vec<Vec<u8>> = (0..4).map(|l| vec![7u8; desc.level_size(l) as usize]).collect();
    let short = vec![7u8; desc.level_size(1) as usize - 1];
    let slices: Vec<&[u8]> = vec![&good[0], &short, &good[2], &good[3]];
    // The error says which level, how many bytes it needs and how many came.
    match device.create_texture_with_data(&desc, TextureData::AllLevels(&slices)) {
        Err(RhiError::WrongCount { what: "bytes", resource, expected: 64, found: 63 }) => {
            assert!(resource.starts_with("level 1 (4x4 Rgba8Unorm)"), "{resource}");
        }
        other => panic!("a short level 1: {other:?}"),
    }
    let three: Vec<&[u8]> = good[..3].iter().map(Vec::as_slice).collect();
    let r = device.create_texture_with_data(&desc, TextureData::AllLevels(&three));
    assert!(matches!(r, Err(RhiError::WrongCount { what: "level slices", expected: 4, found: 3, .. })), "3 slices for 4 levels: {r:?}");
    let r = device.create_texture_with_data(&desc, TextureData::Level0(&good[1]));
    assert!(
        matches!(r, Err(RhiError::WrongCount { what: "bytes", expected: 256, found: 64, ref resource }) if resource.starts_with("level 0")),
        "{r:?}"
    );
    for levels in [0, 5] {
        // An 8x8 texture has 1..=4 levels.
        let r = device.create_texture_with_data(&desc.clone().with_mip_levels(levels), TextureData::Level0(&good[0]));
        let bad = |r: &Result<TextureHandle>| matches!(r, Err(RhiError::OutOfLimits { what: "mip levels", value, min: 1, max: 4, .. }) if *value == u64::from(levels));
        assert!(bad(&r), "{levels} levels: {r:?}");
        let r = device.create_texture(&desc.clone().with_mip_levels(levels));
        assert!(bad(&r), "{levels} levels: {r:?}");
    }
    let max = device.info().max_image_dimension_2d;
    let r = device.create_texture(&readable("oversize", max + 1, 1, Format::R8Unorm));
    let too_wide = |value: u64, limit: u64| value == u64::from(max) + 1 && limit < value;
    assert!(
        matches!(r, Err(RhiError::OutOfLimits { what: "width", value, max: limit, .. }) if too_wide(value, limit)),
        "{}x1: {r:?}",
        max + 1
    );
    // Not sampled: uploads end in ShaderRead.
    let transfer_only = TextureDesc { usage: TextureUsage::TRANSFER_SRC, ..desc.clone() };
    let slices: Vec<&[u8]> = good.iter().map(Vec::as_slice).collect();
    let r = device.create_texture_with_data(&transfer_only, TextureData::AllLevels(&slices));
    assert!(matches!(r, Err(RhiError::MissingUsage { usage: Usage::Texture(TextureUsage::SAMPLED), .. })), "{r:?}");
    // Depth cannot be blitted linearly; look for a color format that cannot either.
    let depth = TextureDesc::sampled("depth", 4, 4, Format::Depth32Float).with_mip_levels(2);
    let r = device.create_texture_with_data(&depth, TextureData::Level0(&[0u8; 64]));
    assert!(matches!(r, Err(RhiError::Unsupported(_))), "{r:?}");
    let color = [
        Format::R8Unorm,
        Format::Rg8Unorm,
        Format::Rgba8Unorm,
        Format::Rgba8Srgb,
        Format::Bgra8Unorm,
        Format::Bgra8Srgb,
        Format::Rgba16Float,
    ];
    match color.into_iter().find(|f| !device.supports_mip_generation(*f)) {
        Some(format) => {
            let d = readable("no blit", 4, 4, format).with_mip_levels(3);
            let r = device.create_texture_with_data(&d, TextureData::Level0(&vec![0u8; d.level_size(0) as usize]));
            assert!(matches!(r, Err(RhiError::Unsupported(_))), "{format:?}: {r:?}");
        }
        None => println!("skipped: every color format of {} can generate mips by linear blits", device.name()),
    }
    device.wait_idle().unwrap();
    let after = device.counts();
    assert_eq!((after.textures, after.buffers, after.allocations), (before.textures, before.buffers, before.allocations));
    assert_clean(&device);
    let report = device.shutdown();
    assert_eq!(report.leaked_allocations, 0);
}

#[test]
fn anisotropy_is_applied_where_the_device_has_it_clamped_to_its_limit() {
    let device = device();
    let info = device.info();
    if device.name().contains("llvmpipe") {
        // lavapipe advertises samplerAnisotropy; the RHI leaves it off on
        // CPU devices (see `DeviceFeatures::sampler_anisotropy`).
        assert!(!info.features.sampler_anisotropy, "lavapipe's anisotropic filtering is not used");
    }
    let aniso = device.create_sampler(&SamplerDesc::linear_repeat().with_anisotropy(16)).unwrap();
    let plain = device.create_sampler(&SamplerDesc::linear_repeat()).unwrap();
    let mirrored = SamplerDesc { address_u: AddressMode::MirrorRepeat, mipmap_filter: Filter::Nearest, ..SamplerDesc::nearest_clamp() };
    let mirrored = device.create_sampler(&mirrored).unwrap();
    if info.features.sampler_anisotropy {
        let applied = device.sampler_anisotropy(aniso).unwrap();
        assert_eq!(applied, 16f32.min(info.max_sampler_anisotropy));
        assert!(applied > 1.0, "limit {}", info.max_sampler_anisotropy);
    } else {
        println!("skipped: {} has no samplerAnisotropy", device.name());
        assert_eq!(device.sampler_anisotropy(aniso).unwrap(), 1.0);
    }
    assert_eq!(device.sampler_anisotropy(plain).unwrap(), 1.0);
    for s in [aniso, plain, mirrored] {
        device.destroy_sampler(s);
    }
    assert!(matches!(device.sampler_anisotropy(aniso), Err(RhiError::InvalidHandle(_))));
    assert_clean(device);
}

const SAMPLED_WGSL: &str = r#"
@group(0) @binding(0) var tex: texture_2d<f32>;
@group(0) @binding(1) var samp: sampler;

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let p = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(p * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs_main() -> @location(0) vec4<f32> {
    return textureSampleLevel(tex, samp, vec2<f32>(0.5, 0.5), 0.0);
}
"#;

fn sampled_pipeline(device: &Device) -> PipelineHandle {
    let shader = device.create_shader("sampled.wgsl", SAMPLED_WGSL).unwrap();
    device.create_graphics_pipeline(&GraphicsPipelineDesc::color(shader, Format::Rgba8Unorm)).unwrap()
}

fn constant_texture(device: &Device, texel: [u8; 4]) -> TextureHandle {
    let desc = TextureDesc::sampled("constant", 4, 4, Format::Rgba8Unorm).with_mip_levels(3);
    device.create_texture_with_data(&desc, TextureData::Level0(&texel.repeat(16))).unwrap()
}

#[test]
fn persistent_bind_groups_live_across_frames_and_refuse_destroyed_resources() {
    let device = new_device();
    let pipeline = sampled_pipeline(&device);
    let texel = [200, 100, 50, 255];
    let texture = constant_texture(&device, texel);
    let doomed = constant_texture(&device, [1, 2, 3, 4]);
    let sampler = device.create_sampler(&SamplerDesc::linear_repeat().with_anisotropy(16)).unwrap();
    let color = device.create_texture(&TextureDesc::render_target("color", 8, 8, Format::Rgba8Unorm)).unwrap();
    let entries = |t| [(0, BindingResource::Texture(t)), (1, BindingResource::Sampler(sampler))];
    // Checked as a frame's groups are: nothing is made for a bad one.
    let r = device.create_bind_group(pipeline, 0, &entries(texture)[..1]);
    assert!(matches!(r, Err(RhiError::WrongCount { what: "entries", expected: 2, found: 1, .. })), "{r:?}");
    let r = device.create_bind_group(pipeline, 0, &[(0, BindingResource::Sampler(sampler)), (1, BindingResource::Texture(texture))]);
    assert!(matches!(r, Err(RhiError::BindingMismatch { group: 0, binding: 0, .. })), "{r:?}");
    assert_eq!(device.counts().bind_groups, 0);
    let group = device.create_bind_group(pipeline, 0, &entries(texture)).unwrap();
    let stale = device.create_bind_group(pipeline, 0, &entries(doomed)).unwrap();
    device.destroy_texture(doomed);
    assert_eq!(device.counts().bind_groups, 2);
    for i in 0..3 {
        let mut frame = device.begin_frame().unwrap();
        let cmd = frame.cmd();
        let from = if i == 0 { TextureState::Undefined } else { TextureState::ColorAttachment };
        cmd.texture_barrier(color, from, TextureState::ColorAttachment).unwrap();
        let pass = RenderingDesc {
            color: vec![ColorAttachment { texture: color, load: LoadOp::Clear([0.0; 4]), store: true, resolve: None }],
            depth: None,
            area: Rect::from_size(8, 8),
        };
        cmd.begin_rendering(&pass, RenderingContents::Inline).unwrap();
        let r = cmd.bind_group_handle(0, group);
        assert!(matches!(r, Err(RhiError::NotBound { command: "bind_group_handle", missing: Unbound::Pipeline })), "{r:?}");
        cmd.bind_pipeline(pipeline).unwrap();
        cmd.set_viewport(Rect::from_size(8, 8)).unwrap();
        cmd.set_scissor(Rect::from_size(8, 8)).unwrap();
        let r = cmd.bind_group_handle(1, group);
        assert!(matches!(r, Err(RhiError::OutOfRange { what: "bind group", limit: 1, .. })), "past the layout: {r:?}");
        let r = cmd.bind_group_handle(0, stale);
        assert!(matches!(r, Err(RhiError::InvalidHandle(ref m)) if m.contains("texture")), "{r:?}");
        let r = cmd.draw(3, 1, 0, 0);
        assert!(matches!(r, Err(RhiError::NotBound { missing: Unbound::BindGroup(0), .. })), "the refused group was not bound: {r:?}");
        cmd.bind_group_handle(0, group).unwrap();
        cmd.draw(3, 1, 0, 0).unwrap();
        cmd.end_rendering().unwrap();
        if i == 2 {
            // Destroyed while the frame that bound it is being recorded:
            // freed only after its submission completes.
            device.destroy_bind_group(group);
            device.destroy_bind_group(stale);
        }
        frame.submit().unwrap();
    }
    let image = device.read_texture(color, TextureState::ColorAttachment).unwrap();
    assert_eq!(image.pixel(4, 4), texel);
    assert_eq!(device.counts().bind_groups, 0);
    let mut frame = device.begin_frame().unwrap();
    let cmd = frame.cmd();
    cmd.texture_barrier(color, TextureState::ColorAttachment, TextureState::ColorAttachment).unwrap();
    cmd.begin_rendering(
        &RenderingDesc {
            color: vec![ColorAttachment { texture: color, load: LoadOp::Load, store: true, resolve: None }],
            depth: None,
            area: Rect::from_size(8, 8),
        },
        RenderingContents::Inline,
    )
    .unwrap();
    cmd.bind_pipeline(pipeline).unwrap();
    assert!(matches!(cmd.bind_group_handle(0, group), Err(RhiError::InvalidHandle(_))), "a destroyed group");
    cmd.end_rendering().unwrap();
    frame.submit().unwrap();
    // More groups than one pool holds (256 sets): the device's pools grow,
    // and sets freed go back to them.
    let pools = device.counts().descriptor_pools;
    let many: Vec<_> = (0..300).map(|_| device.create_bind_group(pipeline, 0, &entries(texture)).unwrap()).collect();
    assert_eq!(device.counts().bind_groups, 300);
    assert!(device.counts().descriptor_pools > pools, "{} pools, {pools} before", device.counts().descriptor_pools);
    many.into_iter().for_each(|g| device.destroy_bind_group(g));
    device.wait_idle().unwrap();
    let grown = device.counts().descriptor_pools;
    let again: Vec<_> = (0..300).map(|_| device.create_bind_group(pipeline, 0, &entries(texture)).unwrap()).collect();
    assert_eq!(device.counts().descriptor_pools, grown, "freed sets are reused");
    again.into_iter().for_each(|g| device.destroy_bind_group(g));
    device.wait_idle().unwrap();
    assert_eq!(device.counts().pending_deletions, 0);
    assert_clean(&device);
    let report = device.shutdown();
    assert_eq!((report.leaked_allocations, report.validation_errors, report.validation_warnings), (0, 0, 0));
}

/// A BC1 block: endpoints `c0` > `c1` (RGB565, so four colours: c0, c1 and
/// two thirds between) and a 2-bit index per texel, texel 0 in the low bits.
fn bc1_block(c0: u16, c1: u16, indices: u32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..2].copy_from_slice(&c0.to_le_bytes());
    b[2..4].copy_from_slice(&c1.to_le_bytes());
    b[4..].copy_from_slice(&indices.to_le_bytes());
    b
}

/// A BC7 mode-6 block: one subset, 7-bit RGBA endpoints with a p-bit each
/// (`e0`, `e1`: [r, g, b, a, p]) and a 4-bit index per texel (the first,
/// the anchor, stored in 3 bits: its top bit must be 0).
fn bc7_mode6_block(e0: [u8; 5], e1: [u8; 5], indices: [u8; 16]) -> [u8; 16] {
    let mut bits = 0u128;
    let mut at = 0;
    let mut put = |value: u32, n: u32| {
        bits |= u128::from(value & ((1 << n) - 1)) << at;
        at += n;
    };
    put(1 << 6, 7); // mode 6: six 0 bits, then a 1
    for c in 0..4 {
        put(u32::from(e0[c]), 7);
        put(u32::from(e1[c]), 7);
    }
    put(u32::from(e0[4]), 1);
    put(u32::from(e1[4]), 1);
    assert!(indices[0] < 8, "the anchor index has 3 bits");
    put(u32::from(indices[0]), 3);
    for &i in &indices[1..] {
        put(u32::from(i), 4);
    }
    assert_eq!(at, 128);
    bits.to_le_bytes()
}

/// Whether `device` samples BCn; prints which path a test takes.
fn bc_or_skip(device: &Device, test: &str) -> bool {
    let on = device.features().texture_compression_bc;
    let sampled = Format::BLOCK_COMPRESSED.map(|f| device.supports_sampled_format(f));
    println!("{test}: {} has textureCompressionBC: {on}; samples BC1/BC1s/BC3/BC3s/BC4/BC5/BC7/BC7s: {sampled:?}", device.name());
    if on {
        assert!(sampled.iter().all(|&s| s), "textureCompressionBC promises every BC format sampled with linear filtering");
    } else {
        assert!(sampled.iter().all(|&s| !s));
        println!("skipped: {} has no textureCompressionBC", device.name());
    }
    on
}

#[test]
fn bc1_and_bc7_levels_upload_and_read_back_byte_exact() {
    let device = device();
    if !bc_or_skip(device, "bc1_and_bc7_levels_upload_and_read_back_byte_exact") {
        return;
    }
    // BC1 8x8 with its chain: 2x2 blocks, then one block for 4x4, 2x2 and
    // 1x1 (levels smaller than a block still take a whole one). Red/blue
    // endpoints with every index in each row, varied per block.
    let (red, blue) = (0xF800u16, 0x001Fu16);
    for format in [Format::Bc1RgbaUnorm, Format::Bc1RgbaSrgb] {
        let desc = readable("bc1", 8, 8, format).with_mip_levels(4);
        let levels: Vec<Vec<u8>> = (0..4u16)
            .map(|l| {
                let blocks = desc.level_size(u32::from(l)) / 8;
                (0..blocks as u16).flat_map(|b| bc1_block(red - (b << 11), blue + l, 0xE4E4_E4E4 ^ (u32::from(b) * 0x1111_1111))).collect()
            })
            .collect();
        assert_eq!(levels.iter().map(Vec::len).collect::<Vec<_>>(), [32, 8, 8, 8]);
        let slices: Vec<&[u8]> = levels.iter().map(Vec::as_slice).collect();
        let texture = device.create_texture_with_data(&desc, TextureData::AllLevels(&slices)).unwrap();
        for (level, want) in (0u32..).zip(&levels) {
            assert_eq!(&read_level(device, texture, level), want, "{format:?} level {level}");
        }
        device.destroy_texture(texture);
    }
    // BC7 5x3 (not a multiple of the block: 2x1 blocks) with its chain 5x3,
    // 2x1, 1x1: mode-6 blocks, red to green, indices 0..15 and reversed.
    let ramp: [u8; 16] = std::array::from_fn(|i| i as u8);
    let mut reversed = ramp;
    reversed.reverse();
    reversed[0] = 7;
    for format in [Format::Bc7Unorm, Format::Bc7Srgb] {
        let desc = readable("bc7", 5, 3, format).with_mip_levels(3);
        let a = bc7_mode6_block([127, 0, 0, 127, 1], [0, 127, 0, 127, 1], ramp);
        let b = bc7_mode6_block([10, 20, 30, 127, 0], [100, 90, 80, 64, 1], reversed);
        let levels = [[a, b].concat(), b.to_vec(), a.to_vec()];
        let slices: Vec<&[u8]> = levels.iter().map(Vec::as_slice).collect();
        let texture = device.create_texture_with_data(&desc, TextureData::AllLevels(&slices)).unwrap();
        for (level, want) in (0u32..).zip(&levels) {
            assert_eq!(&read_level(device, texture, level), want, "{format:?} level {level}");
        }
        device.destroy_texture(texture);
    }
    assert_clean(device);
}

/// Samples texel (`x`, `y`) of a 4x4 texture with a nearest sampler into an
/// 8x8 RGBA8 target; returns the target's centre pixel.
fn sample_texel(device: &Device, texture: TextureHandle, x: u32, y: u32) -> [u8; 4] {
    let wgsl = SAMPLED_WGSL.replace("vec2<f32>(0.5, 0.5)", &format!("vec2<f32>({}, {})", (x as f32 + 0.5) / 4.0, (y as f32 + 0.5) / 4.0));
    let shader = device.create_shader("sample texel", &wgsl).unwrap();
    let pipeline = device.create_graphics_pipeline(&GraphicsPipelineDesc::color(shader, Format::Rgba8Unorm)).unwrap();
    let sampler = device.create_sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let group =
        device.create_bind_group(pipeline, 0, &[(0, BindingResource::Texture(texture)), (1, BindingResource::Sampler(sampler))]).unwrap();
    let color = device.create_texture(&TextureDesc::render_target("color", 8, 8, Format::Rgba8Unorm)).unwrap();
    device
        .immediate(|cmd| {
            cmd.texture_barrier(color, TextureState::Undefined, TextureState::ColorAttachment)?;
            let pass = RenderingDesc {
                color: vec![ColorAttachment { texture: color, load: LoadOp::Clear([0.0; 4]), store: true, resolve: None }],
                depth: None,
                area: Rect::from_size(8, 8),
            };
            cmd.begin_rendering(&pass, RenderingContents::Inline)?;
            cmd.bind_pipeline(pipeline)?;
            cmd.set_viewport(Rect::from_size(8, 8))?;
            cmd.set_scissor(Rect::from_size(8, 8))?;
            cmd.bind_group_handle(0, group)?;
            cmd.draw(3, 1, 0, 0)?;
            cmd.end_rendering()
        })
        .unwrap();
    let pixel = device.read_texture(color, TextureState::ColorAttachment).unwrap().pixel(4, 4);
    device.destroy_bind_group(group);
    device.destroy_texture(color);
    device.destroy_sampler(sampler);
    device.destroy_pipeline(pipeline);
    pixel
}

#[test]
fn a_bc1_block_samples_as_its_endpoints_and_their_thirds() {
    let device = device();
    if !bc_or_skip(device, "a_bc1_block_samples_as_its_endpoints_and_their_thirds") {
        return;
    }
    // Red and blue endpoints; each row's texels use indices 0, 1, 2, 3:
    // red, blue, 2/3 red + 1/3 blue, 1/3 red + 2/3 blue (BC1's four colours).
    let block = bc1_block(0xF800, 0x001F, 0xE4E4_E4E4);
    let desc = TextureDesc::sampled("bc1 sampled", 4, 4, Format::Bc1RgbaUnorm);
    let texture = device.create_texture_with_data(&desc, TextureData::Level0(&block)).unwrap();
    let want = [[255, 0, 0, 255], [0, 0, 255, 255], [170, 0, 85, 255], [85, 0, 170, 255]];
    for (x, want) in (0u32..).zip(want) {
        for y in [0, 3] {
            let got = sample_texel(device, texture, x, y);
            assert!(got.iter().zip(want).all(|(g, w)| g.abs_diff(w) <= 2), "texel ({x}, {y}): {got:?}, want {want:?}");
        }
    }
    device.destroy_texture(texture);
    device.wait_idle().unwrap();
    assert_clean(device);
}

#[test]
fn block_compressed_textures_are_typed_errors_without_the_feature_and_never_generate_mips() {
    // A device made without textureCompressionBC (as one that lacks it).
    let device = Device::new(&DeviceDesc { texture_compression_bc: false, ..test_support::device_desc() }).unwrap();
    assert!(!device.features().texture_compression_bc);
    let before = device.counts();
    let block = bc1_block(0xF800, 0x001F, 0);
    for format in Format::BLOCK_COMPRESSED {
        assert!(!device.supports_sampled_format(format), "{format:?}");
        assert!(!device.supports_mip_generation(format), "{format:?}");
        let desc = TextureDesc::sampled("bc", 4, 4, format);
        let data = vec![0u8; desc.level_size(0) as usize];
        let r = device.create_texture_with_data(&desc, TextureData::Level0(&data));
        assert!(matches!(r, Err(RhiError::Unsupported(ref m)) if m.contains("textureCompressionBC")), "{format:?}: {r:?}");
        assert!(matches!(device.create_texture(&desc), Err(RhiError::Unsupported(_))), "{format:?}");
    }
    assert!(device.supports_sampled_format(Format::Rgba8Unorm));
    let after = device.counts();
    assert_eq!((after.textures, after.buffers, after.allocations), (before.textures, before.buffers, before.allocations));
    assert_clean(&device);
    drop(device);
    // With the feature: a wrong length, a render target and generated mips
    // are typed errors (compressed formats are no blit destinations).
    let device = new_device();
    if !bc_or_skip(&device, "block_compressed_textures_are_typed_errors_without_the_feature_and_never_generate_mips") {
        return;
    }
    let before = device.counts();
    let desc = TextureDesc::sampled("bc1", 8, 8, Format::Bc1RgbaUnorm);
    let r = device.create_texture_with_data(&desc, TextureData::Level0(&block));
    assert!(matches!(r, Err(RhiError::WrongCount { what: "bytes", expected: 32, found: 8, .. })), "{r:?}");
    let r = device.create_texture_with_data(&desc.clone().with_mip_levels(4), TextureData::Level0(&[block; 4].concat()));
    assert!(matches!(r, Err(RhiError::Unsupported(ref m)) if m.contains("cannot generate mip levels")), "{r:?}");
    let r = device.create_texture(&TextureDesc::render_target("bc rt", 8, 8, Format::Bc7Unorm));
    assert!(matches!(r, Err(RhiError::Unsupported(_))), "{r:?}");
    let one = device.create_texture_with_data(&desc, TextureData::Level0(&[block; 4].concat())).unwrap();
    let r = device.read_texture(one, TextureState::ShaderRead);
    assert!(matches!(r, Err(RhiError::Unsupported(_)) | Err(RhiError::MissingUsage { .. })), "{r:?}");
    device.destroy_texture(one);
    device.wait_idle().unwrap();
    let after = device.counts();
    assert_eq!((after.textures, after.buffers, after.allocations), (before.textures, before.buffers, before.allocations));
    assert_clean(&device);
}

/// The direction through the centre of texel (x, y) of `face` of a cube
/// `size` texels across: `TextureDimension::Cube`'s documented mapping.
fn cube_texel_direction(face: u32, x: u32, y: u32, size: u32) -> [f32; 3] {
    let s = 2.0 * (x as f32 + 0.5) / size as f32 - 1.0;
    let t = 2.0 * (y as f32 + 0.5) / size as f32 - 1.0;
    match face {
        0 => [1.0, -t, -s],
        1 => [-1.0, -t, s],
        2 => [s, 1.0, t],
        3 => [s, -1.0, -t],
        4 => [s, -t, 1.0],
        _ => [-s, -t, -1.0],
    }
}

const CUBE_SAMPLER_WGSL: &str = "
@group(0) @binding(0) var cube: texture_cube<f32>;
@group(0) @binding(1) var cube_sampler: sampler;
@group(0) @binding(2) var<storage, read> directions: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> texels: array<vec4<f32>>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&directions)) {
        let d = directions[id.x];
        texels[id.x] = textureSampleLevel(cube, cube_sampler, d.xyz, d.w);
    }
}
";

#[test]
fn cube_maps_upload_every_face_and_level_and_sample_by_the_documented_direction() {
    // A device of its own: the test counts its objects.
    let device = &new_device();
    let before = device.counts();
    let size = 4u32;
    let desc = TextureDesc {
        usage: TextureDesc::cube("cube", size, Format::Rgba8Unorm).usage | TextureUsage::TRANSFER_SRC,
        ..TextureDesc::cube("cube", size, Format::Rgba8Unorm)
    }
    .with_mip_levels(3);
    assert_eq!((desc.dimension.layers(), desc.level_size(0), desc.level_size(2)), (6, 6 * 16 * 4, 6 * 4));
    // Every texel of every face and level distinct: each reads back where it was put.
    let mut seed = 7u32;
    let levels: Vec<Vec<u8>> = (0..desc.mip_levels).map(|l| texels(&mut seed, &desc, l)).collect();
    let slices: Vec<&[u8]> = levels.iter().map(Vec::as_slice).collect();
    let cube = device.create_texture_with_data(&desc, TextureData::AllLevels(&slices)).unwrap();
    for (level, want) in (0u32..).zip(&levels) {
        assert_eq!(&read_level(device, cube, level), want, "level {level}");
    }
    // Sampling (nearest, level 0) along each texel's documented direction
    // finds that texel: the face order and orientation are Vulkan's.
    let texel_count = (6 * size * size) as usize;
    let mut directions = Vec::with_capacity(texel_count * 4);
    for face in 0..6 {
        for y in 0..size {
            for x in 0..size {
                directions.extend(cube_texel_direction(face, x, y, size));
                directions.push(0.0);
            }
        }
    }
    let bytes = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
    let dir_buffer =
        device.create_buffer(&BufferDesc::host_visible("directions", directions.len() as u64 * 4, BufferUsage::STORAGE)).unwrap();
    device.write_buffer(dir_buffer, 0, &bytes(&directions)).unwrap();
    let out_size = texel_count as u64 * 16;
    let out = device
        .create_buffer(&BufferDesc { usage: BufferUsage::STORAGE | BufferUsage::TRANSFER_DST, ..BufferDesc::readback("sampled", out_size) })
        .unwrap();
    let shader = device.create_shader("cube_sampler.wgsl", CUBE_SAMPLER_WGSL).unwrap();
    assert_eq!(device.shader_entry_point(shader, "main").unwrap().bindings[0].ty, BindingType::SampledCubeTexture);
    let pipeline = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "main") }).unwrap();
    let sampler = device.create_sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let group = device
        .create_bind_group(
            pipeline,
            0,
            &[
                (0, BindingResource::Texture(cube)),
                (1, BindingResource::Sampler(sampler)),
                (2, BindingResource::Buffer(dir_buffer)),
                (3, BindingResource::Buffer(out)),
            ],
        )
        .unwrap();
    device
        .immediate(|cmd| {
            cmd.bind_pipeline(pipeline)?;
            cmd.bind_group_handle(0, group)?;
            cmd.dispatch((texel_count as u32).div_ceil(64), 1, 1)?;
            cmd.buffer_barrier(out, BufferState::ShaderWrite, BufferState::HostRead)
        })
        .unwrap();
    let sampled = device.read_buffer(out, 0, out_size).unwrap();
    for (i, texel) in sampled.chunks_exact(16).enumerate() {
        let rgba: Vec<u8> = texel.chunks_exact(4).map(|c| (f32::from_le_bytes(c.try_into().unwrap()) * 255.0).round() as u8).collect();
        assert_eq!(rgba, levels[0][i * 4..i * 4 + 4], "face {} texel {}", i / 16, i % 16);
    }
    // A cube cannot bind where a 2D texture is declared, nor be read back
    // as one image, a render target, storage or non-square.
    let flat =
        device.create_shader("flat.wgsl", &CUBE_SAMPLER_WGSL.replace("texture_cube", "texture_2d").replace("d.xyz", "d.xy")).unwrap();
    let flat = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(flat, "main") }).unwrap();
    let entries = [
        (0, BindingResource::Texture(cube)),
        (1, BindingResource::Sampler(sampler)),
        (2, BindingResource::Buffer(dir_buffer)),
        (3, BindingResource::Buffer(out)),
    ];
    assert!(matches!(device.create_bind_group(flat, 0, &entries), Err(RhiError::InvalidDesc(ref m)) if m.contains("cube")));
    assert!(matches!(device.read_texture(cube, TextureState::ShaderRead), Err(RhiError::Unsupported(_))));
    let rt = TextureDesc { dimension: TextureDimension::Cube, ..TextureDesc::render_target("cube rt", 4, 4, Format::Rgba8Unorm) };
    assert!(matches!(device.create_texture(&rt), Err(RhiError::Unsupported(_))));
    let wide = TextureDesc { width: 8, ..TextureDesc::cube("wide", 4, Format::Rgba8Unorm) };
    assert!(matches!(device.create_texture(&wide), Err(RhiError::InvalidDesc(_))));
    // Generated levels of a cube: every face its own average.
    let gen = TextureDesc { usage: desc.usage, ..TextureDesc::cube("generated", 4, Format::Rgba8Unorm) }.with_mip_levels(3);
    let faces: Vec<u8> = (0..6u8).flat_map(|f| [40 * f, 255 - 40 * f, 7, 255].repeat(16)).collect();
    let generated = device.create_texture_with_data(&gen, TextureData::Level0(&faces)).unwrap();
    let last = read_level(device, generated, 2);
    assert_eq!(last, (0..6u8).flat_map(|f| [40 * f, 255 - 40 * f, 7, 255]).collect::<Vec<u8>>());
    for t in [cube, generated] {
        device.destroy_texture(t);
    }
    device.destroy_bind_group(group);
    for b in [dir_buffer, out] {
        device.destroy_buffer(b);
    }
    device.destroy_sampler(sampler);
    device.destroy_pipeline(pipeline);
    device.destroy_pipeline(flat);
    device.wait_idle().unwrap();
    let after = device.counts();
    assert_eq!((after.textures, after.buffers, after.allocations), (before.textures, before.buffers, before.allocations));
    assert_clean(device);
}
