//! glTF textures and materials that reach the screen, rendered on the real
//! device (validation on): an unlit material's colour whatever the light,
//! KTX2 textures (RGBA8, uncompressed or zstd; BCn as blocks where the
//! device samples them, decoded to RGBA8 where it does not; Basis
//! Universal UASTC transcoded to BC7 or RGBA8) and the ones the importer
//! skips with the reason.

#![cfg(feature = "gltf")]

use engine_core::gltf::{self, GltfError};
use engine_core::*;
use glam::Vec3;
use renderer::{RenderThreadMode, TextureMips};
use serde_json::json;
use test_support::gltf_writer::*;

mod common;
use common::*;

/// The centre pixel of a frame showing quad_file()'s quad (material 0 of
/// `w`) face-on, lit by a sun of `intensity`; no tone mapping.
fn centre_pixel(w: &GltfWriter, intensity: f32) -> [u8; 4] {
    centre_pixel_on(w, intensity, test_support::device_desc())
}

/// [`centre_pixel`] on a device made from `device`.
fn centre_pixel_on(w: &GltfWriter, intensity: f32, device: rhi_vulkan::DeviceDesc) -> [u8; 4] {
    let desc = EngineDesc { width: 64, height: 64, mode: RenderThreadMode::Inline, device };
    let mut engine = Engine::new(&desc).unwrap();
    engine.render_thread().set_cvar(renderer::cvars::TONEMAPPER, "0").unwrap();
    let import = import(w);
    import.spawn(&mut engine.world).unwrap();
    // The quad spans glTF X, Y in [0, 1] facing +Z: Proxima Y, Z in [0, 1] facing +X.
    let (eye, target) = (Vec3::new(2.0, 0.5, 0.5), Vec3::new(0.0, 0.5, 0.5));
    engine
        .world
        .spawn_actor("camera", Box::new(CameraComponent::default()), Transform::new(eye, look_rotation(eye, target), Vec3::ONE))
        .unwrap();
    let sun = Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, Vec3::new(-1.0, -0.2, -0.3)), Vec3::ONE);
    engine.world.spawn_actor("sun", Box::new(DirectionalLightComponent { intensity, ..Default::default() }), sun).unwrap();
    engine.tick(0.016, true).unwrap();
    engine.flush().unwrap();
    let img = engine.read_back().unwrap().expect("an image");
    test_support::assert_clean(engine.render_thread());
    img.pixel(32, 32)
}

#[test]
fn an_unlit_quad_shows_its_base_colour_whatever_the_light() {
    let with_material = |unlit: bool| {
        let mut w = quad_file();
        let mut m = json!({ "pbrMetallicRoughness": { "baseColorFactor": [0.2, 0.4, 0.6, 1.0], "metallicFactor": 0.0 } });
        if unlit {
            m["extensions"] = json!({ "KHR_materials_unlit": {} });
            w.set("extensionsUsed", json!(["KHR_materials_unlit"]));
        }
        w.push("materials", m);
        w.json["meshes"][0]["primitives"][0]["material"] = json!(0);
        w
    };
    // The base colour, linear, as the sRGB target stores it.
    let srgb = |c: f32| ((if c <= 0.0031308 { 12.92 * c } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 }) * 255.0).round() as i32;
    let expect = [srgb(0.2), srgb(0.4), srgb(0.6)];
    let unlit = with_material(true);
    for intensity in [0.5, 8.0] {
        let p = centre_pixel(&unlit, intensity);
        for k in 0..3 {
            assert!((p[k] as i32 - expect[k]).abs() <= 1, "sun {intensity}: {p:?}, base colour {expect:?}");
        }
    }
    // The same material lit: the light changes it (the check above can fail).
    let lit = with_material(false);
    assert_ne!(centre_pixel(&lit, 0.5), centre_pixel(&lit, 8.0));
}

/// quad_file() with material 0 using texture `t` (made by `texture`) as
/// its base colour and metallic-roughness textures.
fn textured_quad(texture: impl FnOnce(&mut GltfWriter) -> usize) -> GltfWriter {
    let mut w = quad_file();
    let uv = w.floats(&[0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0], "VEC2");
    w.json["meshes"][0]["primitives"][0]["attributes"]["TEXCOORD_0"] = json!(uv);
    w.json["meshes"][0]["primitives"][0]["material"] = json!(0);
    let t = texture(&mut w);
    w.push(
        "materials",
        json!({ "pbrMetallicRoughness": { "baseColorTexture": { "index": t }, "metallicRoughnessTexture": { "index": t } } }),
    );
    w.set("extensionsUsed", json!(["KHR_texture_basisu"]));
    w
}

/// A KTX2 image (`image/ktx2`) and a texture naming it through
/// `KHR_texture_basisu` only (no core `source`); returns the texture.
fn ktx2_texture(w: &mut GltfWriter, ktx: &[u8]) -> usize {
    let view = w.view(ktx, None);
    let image = w.push("images", json!({ "bufferView": view, "mimeType": "image/ktx2" }));
    w.push("textures", json!({ "extensions": { "KHR_texture_basisu": { "source": image } } }))
}

#[test]
fn ktx2_rgba8_textures_decode_with_and_without_zstd_supercompression() {
    // 4x2 with its full chain: 4x2, 2x1, 1x1.
    let levels = vec![(0..32).map(|i| i * 7).collect::<Vec<u8>>(), vec![10, 20, 30, 40, 50, 60, 70, 80], vec![1, 2, 3, 4]];
    let mut decoded = Vec::new();
    for zstd in [false, true] {
        let ktx = ktx2_file(4, 2, Some(ktx2::Format::R8G8B8A8_SRGB), &levels, zstd);
        let mut w = textured_quad(|w| ktx2_texture(w, &ktx));
        w.set("extensionsRequired", json!(["KHR_texture_basisu"]));
        let import = import(&w);
        assert!(import.skipped.is_empty(), "zstd {zstd}: {:?}", import.skipped);
        assert_eq!(import.textures.len(), 2, "one per colour space");
        let t = &import.textures[0].texture;
        assert_eq!((t.width, t.height, t.format), (4, 2, renderer::TextureFormat::Rgba8Srgb), "zstd {zstd}");
        assert_eq!(t.data, levels[0]);
        assert_eq!(t.mips, TextureMips::Supplied(levels[1..].to_vec()), "the file's mip levels");
        assert_eq!(import.textures[1].texture.format, renderer::TextureFormat::Rgba8Unorm, "metallic-roughness is linear");
        assert!(import.materials[0].base_color_texture.is_some() && import.materials[0].metallic_roughness_texture.is_some());
        let mut world = world();
        let spawned = import.spawn(&mut world).unwrap();
        assert_eq!(spawned.textures.len(), 2);
        world.send_all_end_of_frame_updates().unwrap();
        test_support::assert_clean(world.render_thread().unwrap());
        decoded.push(import.textures[0].texture.clone());
    }
    assert_eq!(decoded[0], decoded[1], "zstd supercompression changes nothing");
    // One level: the chain is generated, as for PNG.
    let ktx = ktx2_file(4, 2, Some(ktx2::Format::R8G8B8A8_UNORM), &levels[..1], true);
    let import = import(&textured_quad(|w| ktx2_texture(w, &ktx)));
    assert_eq!((&import.textures[0].texture.data, &import.textures[0].texture.mips), (&levels[0], &TextureMips::Generate));
}

#[test]
fn ktx2_textures_that_are_not_read_are_skipped_with_the_reason() {
    let block = vec![0u8; 16]; // one 4x4 block
                               // A UASTC block of mode 19 (its first byte's low 7 bits, 69): there are 19.
    let mut corrupt_uastc = uastc_solid([1, 2, 3, 255]);
    corrupt_uastc[0] = 69;
    let cases: [(&str, Vec<u8>, &str); 6] = [
        ("corrupt UASTC", ktx2_file(4, 4, None, &[corrupt_uastc.clone()], false), "Basis Universal UASTC: level 0 not transcoded"),
        ("corrupt UASTC + zstd", ktx2_file(4, 4, None, &[corrupt_uastc], true), "Basis Universal UASTC: level 0 not transcoded"),
        ("BC6H", ktx2_file(4, 4, Some(ktx2::Format::BC6H_UFLOAT_BLOCK), std::slice::from_ref(&block), false), "HDR"),
        ("BC2", ktx2_file(4, 4, Some(ktx2::Format::BC2_SRGB_BLOCK), std::slice::from_ref(&block), false), "not read (BC1_RGBA, BC3"),
        ("RGBA16F", ktx2_file(1, 1, Some(ktx2::Format::R16G16B16A16_SFLOAT), &[vec![0; 8]], false), "is not read"),
        ("corrupt", ktx2_file(4, 4, None, std::slice::from_ref(&block), false)[..90].to_vec(), "not a valid KTX2 file"),
    ];
    for (what, ktx, reason) in cases {
        let import = import(&textured_quad(|w| ktx2_texture(w, &ktx)));
        assert!(
            import.skipped.iter().any(|s| s.starts_with("/images/0: does not decode") && s.contains(reason)),
            "{what}: {:?}",
            import.skipped
        );
        assert!(import.textures.is_empty(), "{what}");
        assert!(import.materials[0].base_color_texture.is_none(), "{what}: the factor alone");
        // Required, the same image is the file's typed error.
        let mut w = textured_quad(|w| ktx2_texture(w, &ktx));
        w.set("extensionsRequired", json!(["KHR_texture_basisu"]));
        let e = import_err(&w.to_gltf());
        assert!(
            matches!(&e, GltfError::UndecodableImage { path, problem } if path == "/images/0" && problem.contains(reason)),
            "{what}: {e}"
        );
    }
    // With a PNG fallback as the core source, the PNG is used.
    let uastc = ktx2_file(4, 4, None, &[uastc_solid([1, 2, 3, 255])], false);
    let fallback = import(&textured_quad(|w| {
        let png = w.image_png(1, 1, &[9, 8, 7, 255]);
        let t = ktx2_texture(w, &uastc);
        w.json["textures"][t]["source"] = json!(png);
        t
    }));
    assert!(fallback.skipped.is_empty(), "{:?}", fallback.skipped);
    assert_eq!((fallback.textures[0].image, &fallback.textures[0].texture.data[..]), (0, &[9u8, 8, 7, 255][..]));
    // A texture with no image the importer knows: the factor alone.
    let import = gltf::import_slice(
        &textured_quad(|w| w.push("textures", json!({ "extensions": { "EXT_texture_webp": { "source": 0 } } }))).to_gltf(),
        None,
    )
    .unwrap();
    assert!(import.materials[0].base_color_texture.is_none());
    assert!(import.skipped.iter().any(|s| s.contains("baseColorTexture: texture 0 has no image")), "{:?}", import.skipped);
    // A KHR_texture_basisu source that is not an image: invalid.
    let e =
        import_err(&textured_quad(|w| w.push("textures", json!({ "extensions": { "KHR_texture_basisu": { "source": 3 } } }))).to_gltf());
    assert!(matches!(&e, GltfError::Invalid { path, .. } if path == "/textures/0/extensions/KHR_texture_basisu/source"), "{e}");
}

/// A BC1 block: RGB565 endpoints `c0` > `c1` (four colours) and a 2-bit
/// index per texel, texel 0 in the low bits.
fn bc1_block(c0: u16, c1: u16, indices: u32) -> Vec<u8> {
    [c0.to_le_bytes().as_slice(), &c1.to_le_bytes(), &indices.to_le_bytes()].concat()
}

/// A BC4 block (also BC3's alpha and each BC5 channel): 8-bit endpoints
/// `e0` > `e1` (eight values) and a 3-bit index per texel.
fn bc4_block(e0: u8, e1: u8, indices: [u8; 16]) -> Vec<u8> {
    let bits = indices.iter().enumerate().fold(0u64, |acc, (i, &v)| acc | u64::from(v) << (3 * i));
    [&[e0, e1][..], &bits.to_le_bytes()[..6]].concat()
}

/// A BC7 mode-6 block: 7-bit RGBA endpoints with a p-bit each ([r, g, b,
/// a, p]) and a 4-bit index per texel (the anchor's top bit 0).
fn bc7_mode6_block(e0: [u8; 5], e1: [u8; 5], indices: [u8; 16]) -> Vec<u8> {
    let mut bits = 1u128 << 6; // mode 6
    let mut at = 7;
    let mut put = |value: u8, n: u32| {
        bits |= u128::from(value & ((1u16 << n) - 1) as u8) << at;
        at += n;
    };
    for c in 0..4 {
        put(e0[c], 7);
        put(e1[c], 7);
    }
    put(e0[4], 1);
    put(e1[4], 1);
    put(indices[0], 3);
    for &i in &indices[1..] {
        put(i, 4);
    }
    bits.to_le_bytes().to_vec()
}

#[test]
fn bc_blocks_decode_on_the_cpu_to_the_texels_they_encode() {
    // BC1: red and blue endpoints, each row's texels the indices 0, 1, 2,
    // 3: red, blue, 2/3 red + 1/3 blue, 1/3 red + 2/3 blue; a 5x3 level cut
    // from 2x1 blocks (the second block all blue), then 2x1 and 1x1 levels.
    let row = 0b11_10_01_00u32;
    let pattern = row * 0x0101_0101;
    let all_blue = 0x5555_5555;
    let level0 = [bc1_block(0xF800, 0x001F, pattern), bc1_block(0xF800, 0x001F, all_blue)].concat();
    let t = renderer::Texture2D::compressed(
        "bc1",
        5,
        3,
        renderer::TextureFormat::Bc1RgbaSrgb,
        vec![level0, bc1_block(0xF800, 0x001F, 0), bc1_block(0xF800, 0x001F, all_blue)],
    );
    let rgba = gltf::decompress_bc(&t);
    assert_eq!((rgba.width, rgba.height, rgba.format), (5, 3, renderer::TextureFormat::Rgba8Srgb));
    let (red, blue, third, two_thirds) = ([255, 0, 0, 255], [0, 0, 255, 255], [170, 0, 85, 255], [85, 0, 170, 255]);
    let want_row: Vec<u8> = [red, blue, third, two_thirds, blue].concat();
    assert_eq!(rgba.data, want_row.repeat(3), "level 0");
    assert_eq!(rgba.mips, TextureMips::Supplied(vec![red.repeat(2), blue.to_vec()]), "the file's levels, decoded");
    // A single level gets a generated chain, as an RGBA8 file would.
    let single = renderer::Texture2D::compressed("one", 4, 4, renderer::TextureFormat::Bc1RgbaUnorm, vec![bc1_block(0xF800, 0x001F, 0)]);
    let decoded = gltf::decompress_bc(&single);
    assert_eq!((decoded.format, &decoded.mips), (renderer::TextureFormat::Rgba8Unorm, &TextureMips::Generate));
    assert_eq!(decoded.data, red.repeat(16));
    // BC4: endpoints 200 and 100, indices 0, 1, 2 (6/7 200 + 1/7 100 = 186)
    // then 0s; sampled as (r, 0, 0, 1). BC5: that red, green from a second
    // block with endpoints 10 and 250 (index 1: 250).
    let mut idx = [0u8; 16];
    idx[1] = 1;
    idx[2] = 2;
    let r_block = bc4_block(200, 100, idx);
    let bc4 = gltf::decompress_bc(&renderer::Texture2D::compressed("bc4", 4, 4, renderer::TextureFormat::Bc4Unorm, vec![r_block.clone()]));
    assert_eq!(bc4.format, renderer::TextureFormat::Rgba8Unorm);
    assert_eq!(&bc4.data[..12], &[200, 0, 0, 255, 100, 0, 0, 255, 186, 0, 0, 255]);
    let g_block = bc4_block(10, 250, [1; 16]);
    let bc5 = gltf::decompress_bc(&renderer::Texture2D::compressed(
        "bc5",
        4,
        4,
        renderer::TextureFormat::Bc5Unorm,
        vec![[r_block, g_block].concat()],
    ));
    assert_eq!(&bc5.data[..12], &[200, 250, 0, 255, 100, 250, 0, 255, 186, 250, 0, 255]);
    // BC7 mode 6: index 0 is endpoint 0 ((127 << 1) | 1 per channel), index
    // 15 endpoint 1.
    let mut ends = [15u8; 16];
    ends[0] = 0;
    let bc7 = renderer::Texture2D::compressed(
        "bc7",
        4,
        4,
        renderer::TextureFormat::Bc7Srgb,
        vec![bc7_mode6_block([127, 0, 64, 127, 1], [0, 127, 0, 32, 0], ends)],
    );
    let bc7 = gltf::decompress_bc(&bc7);
    assert_eq!((&bc7.data[..4], &bc7.data[4..8]), (&[255u8, 1, 129, 255][..], &[0u8, 254, 0, 64][..]));
    // Uncompressed textures are left as they are.
    let plain = renderer::Texture2D::from_rgba8("plain", 1, 1, vec![1, 2, 3, 4], true);
    assert_eq!(gltf::decompress_bc(&plain), plain);
}

/// The texel every texel of `block` (one 4x4 block of `format`) decodes
/// to on the CPU (bcdec_rs, as the fallback uses), checked uniform.
fn uniform_texel(format: renderer::TextureFormat, block: &[u8]) -> [u8; 4] {
    let t = gltf::decompress_bc(&renderer::Texture2D::compressed("probe", 4, 4, format, vec![block.to_vec()]));
    let texel: [u8; 4] = t.data[..4].try_into().unwrap();
    assert!(t.data.chunks(4).all(|p| p == texel), "{format:?}: a uniform block");
    texel
}

#[test]
fn ktx2_bc_textures_import_as_blocks_and_render_the_colours_the_cpu_decoder_gives() {
    // One uniform 4x4 block per format (so filtering and mip selection do
    // not matter), each a colour none of the others has.
    let mut bc3 = bc4_block(255, 0, [0; 16]); // alpha 255
    bc3.extend(bc1_block(0x07E0, 0x001F, 0xFFFF_FFFF)); // 1/3 green + 2/3 blue
    let cases: [(ktx2::Format, renderer::TextureFormat, Vec<u8>, bool); 5] = [
        (ktx2::Format::BC1_RGBA_SRGB_BLOCK, renderer::TextureFormat::Bc1RgbaSrgb, bc1_block(0xF800, 0x001F, 0xAAAA_AAAA), false),
        (ktx2::Format::BC3_SRGB_BLOCK, renderer::TextureFormat::Bc3Srgb, bc3, true),
        (ktx2::Format::BC4_UNORM_BLOCK, renderer::TextureFormat::Bc4Unorm, bc4_block(200, 40, [3; 16]), false),
        (
            ktx2::Format::BC5_UNORM_BLOCK,
            renderer::TextureFormat::Bc5Unorm,
            [bc4_block(90, 30, [0; 16]), bc4_block(250, 100, [2; 16])].concat(),
            true,
        ),
        (
            ktx2::Format::BC7_UNORM_BLOCK,
            renderer::TextureFormat::Bc7Srgb,
            bc7_mode6_block([127, 20, 0, 127, 1], [10, 100, 127, 127, 1], [5; 16]),
            true,
        ),
    ];
    // The base colour, linear, as the sRGB target stores it (unlit, no tone mapping).
    let encode = |c: u8| {
        let c = f32::from(c) / 255.0;
        ((if c <= 0.0031308 { 12.92 * c } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 }) * 255.0).round() as u8
    };
    let mut bc_device = None;
    for (ktx_format, format, block, zstd) in cases {
        let ktx = ktx2_file(4, 4, Some(ktx_format), std::slice::from_ref(&block), zstd);
        let mut w = textured_quad(|w| ktx2_texture(w, &ktx));
        w.json["materials"][0]["extensions"] = json!({ "KHR_materials_unlit": {} });
        w.set("extensionsUsed", json!(["KHR_texture_basisu", "KHR_materials_unlit"]));
        let imported = import(&w);
        assert!(imported.skipped.is_empty(), "{format:?}: {:?}", imported.skipped);
        let t = &imported.textures[0].texture;
        assert_eq!((t.width, t.height, t.format, &t.data, &t.mips), (4, 4, format, &block, &TextureMips::None), "{ktx_format:?}");
        // The texel the CPU decoder gives, as the sRGB target shows it.
        let texel = uniform_texel(format, &block);
        let want: [u8; 3] = std::array::from_fn(|c| if format.is_srgb() { texel[c] } else { encode(texel[c]) });
        for bc in [true, false] {
            let device = rhi_vulkan::DeviceDesc { texture_compression_bc: bc, ..test_support::device_desc() };
            if bc && bc_device.is_none() {
                let probe = rhi_vulkan::Device::new(&device).unwrap();
                bc_device = Some(renderer::TextureLimits::of(&probe).bc_sampled);
                println!("{} samples BC (textureCompressionBC): {}", probe.name(), bc_device.unwrap());
            }
            if bc && bc_device == Some(false) {
                println!("skipped: the device has no textureCompressionBC, so {format:?} goes only the decoded path");
                continue;
            }
            let p = centre_pixel_on(&w, 1.0, device);
            let path = if bc { "uploaded as BC" } else { "decoded to RGBA8 (device without BC)" };
            assert!(
                p.iter().zip(want).all(|(&g, w)| g.abs_diff(w) <= 2),
                "{format:?} {path}: pixel {p:?}, the CPU decoder's texel {want:?}"
            );
        }
    }
}

#[test]
fn ktx2_bc_textures_keep_the_files_levels_and_bad_levels_are_skipped() {
    // BC7 8x8 with its chain: 2x2 blocks, then one block for 4x4, 2x2, 1x1.
    let block = |i: u8| bc7_mode6_block([i, 0, 0, 127, 1], [0, i, 0, 127, 1], [i % 8; 16]);
    let levels = vec![[block(1), block(2), block(3), block(4)].concat(), block(5), block(6), block(7)];
    let ktx = ktx2_file(8, 8, Some(ktx2::Format::BC7_SRGB_BLOCK), &levels, true);
    let mut w = textured_quad(|w| ktx2_texture(w, &ktx));
    w.set("extensionsRequired", json!(["KHR_texture_basisu"]));
    let imported = import(&w);
    let (base, mr) = (&imported.textures[0].texture, &imported.textures[1].texture);
    assert_eq!((base.format, mr.format), (renderer::TextureFormat::Bc7Srgb, renderer::TextureFormat::Bc7Unorm), "the slots' colour spaces");
    assert_eq!((&base.data, &base.mips), (&levels[0], &TextureMips::Supplied(levels[1..].to_vec())));
    // Spawned on the test device (BC or decoded, whichever it has), validation clean.
    let mut world = world();
    let spawned = imported.spawn(&mut world).unwrap();
    assert_eq!(spawned.textures.len(), 2);
    world.send_all_end_of_frame_updates().unwrap();
    test_support::assert_clean(world.render_thread().unwrap());
    // A level one byte short (a 4x4 BC1 level must be 8 bytes): skipped, with why.
    let short = ktx2_file(4, 4, Some(ktx2::Format::BC1_RGBA_UNORM_BLOCK), &[vec![0; 7]], false);
    let imported = import(&textured_quad(|w| ktx2_texture(w, &short)));
    assert!(imported.skipped.iter().any(|s| s.contains("level 0 has 7 bytes; 4x4 Bc1RgbaSrgb needs 8")), "{:?}", imported.skipped);
}

/// A UASTC 4x4 block of one colour (mode 8, "solid colour": the 5-bit mode
/// code 0b10111, then R, G, B, A, 8 bits each, LSB first; the ETC1 hints
/// after them zero).
fn uastc_solid([r, g, b, a]: [u8; 4]) -> Vec<u8> {
    let bits = 0b10111 | u128::from(r) << 5 | u128::from(g) << 13 | u128::from(b) << 21 | u128::from(a) << 29;
    bits.to_le_bytes().to_vec()
}

#[test]
fn a_hostile_uastc_descriptor_is_not_a_panic() {
    // A texel block dimension of 255 in the data format descriptor (stored
    // minus one) made the ktx2 crate's descriptor parser overflow and
    // panic; the importer reads the colour model itself.
    let mut ktx = ktx2_file(4, 4, None, &[uastc_solid([10, 20, 30, 255])], false);
    let dfd = u32::from_le_bytes(ktx[48..52].try_into().unwrap()) as usize;
    for byte in 12..16 {
        let mut bad = ktx.clone();
        bad[dfd + 4 + byte] = 255;
        let import = import(&textured_quad(|w| ktx2_texture(w, &bad)));
        assert!(!import.textures.is_empty() || import.skipped.iter().any(|s| s.starts_with("/images/0")), "{:?}", import.skipped);
    }
    // The same file, untouched, reads.
    ktx[dfd + 4 + 12] = 3;
    let import = import(&textured_quad(|w| ktx2_texture(w, &ktx)));
    assert!(!import.textures.is_empty() && !import.skipped.iter().any(|s| s.starts_with("/images/0")), "{:?}", import.skipped);
}

#[test]
fn basis_uastc_textures_transcode_to_bc7_or_rgba8_and_render_their_colour() {
    // 8x8 with its chain (2x2 blocks, then one block a level), every block
    // the solid colour `c`: whatever the filtering and the mip, the quad shows `c`.
    let c = [200u8, 60, 20, 255];
    let levels = vec![uastc_solid(c).repeat(4), uastc_solid(c), uastc_solid(c), uastc_solid(c)];
    let mut imported = Vec::new();
    for zstd in [false, true] {
        let ktx = ktx2_file(8, 8, None, &levels, zstd);
        let mut w = textured_quad(|w| ktx2_texture(w, &ktx));
        w.set("extensionsRequired", json!(["KHR_texture_basisu"]));
        let import = import(&w);
        assert!(import.skipped.is_empty(), "zstd {zstd}: {:?}", import.skipped);
        let (base, mr) = (&import.textures[0], &import.textures[1]);
        assert_eq!(
            (base.texture.format, mr.texture.format),
            (renderer::TextureFormat::Bc7Srgb, renderer::TextureFormat::Bc7Unorm),
            "zstd {zstd}: BC7, in the slots' colour spaces"
        );
        assert_eq!((base.texture.width, base.texture.height, base.texture.data.len()), (8, 8, 4 * 16));
        assert!(matches!(&base.texture.mips, TextureMips::Supplied(l) if l.len() == 3), "the file's levels: {:?}", base.texture.mips);
        // The BC7 blocks decode to the colour.
        let bc7 = gltf::decompress_bc(&base.texture);
        assert!(bc7.data.chunks(4).all(|t| t.iter().zip(c).all(|(&g, w)| g.abs_diff(w) <= 2)), "BC7 texels {:?}", &bc7.data[..4]);
        // The RGBA8 path (a device without BC): the colour, in every level.
        let rgba8 = gltf::transcode_basis_rgba8(base).expect("a Basis texture").unwrap();
        assert_eq!((rgba8.width, rgba8.height, rgba8.format), (8, 8, renderer::TextureFormat::Rgba8Srgb));
        assert_eq!(rgba8.data, c.repeat(64));
        assert_eq!(rgba8.mips, TextureMips::Supplied(vec![c.repeat(16), c.repeat(4), c.to_vec()]));
        assert_eq!(gltf::transcode_basis_rgba8(mr).unwrap().unwrap().format, renderer::TextureFormat::Rgba8Unorm);
        imported.push(import.textures[0].texture.clone());
    }
    assert_eq!(imported[0], imported[1], "zstd supercompression changes nothing");
    // PNG textures are not Basis.
    let png = import(&textured_quad(|w| {
        let image = w.image_png(1, 1, &[9, 8, 7, 255]);
        w.push("textures", json!({ "source": image }))
    }));
    assert!(png.textures[0].basis.is_none() && gltf::transcode_basis_rgba8(&png.textures[0]).is_none());

    // Rendered unlit (the sRGB base colour is what the sRGB target shows),
    // as BC7 where the device samples BC and as RGBA8 where it does not;
    // validation clean (centre_pixel_on checks).
    let ktx = ktx2_file(8, 8, None, &levels, true);
    let mut w = textured_quad(|w| ktx2_texture(w, &ktx));
    w.json["materials"][0]["extensions"] = json!({ "KHR_materials_unlit": {} });
    w.set("extensionsUsed", json!(["KHR_texture_basisu", "KHR_materials_unlit"]));
    for bc in [true, false] {
        let device = rhi_vulkan::DeviceDesc { texture_compression_bc: bc, ..test_support::device_desc() };
        if bc && !renderer::TextureLimits::of(&rhi_vulkan::Device::new(&device).unwrap()).bc_sampled {
            println!("skipped: the device has no textureCompressionBC, so the Basis texture goes only the RGBA8 path");
            continue;
        }
        let p = centre_pixel_on(&w, 1.0, device);
        let path = if bc { "BC7" } else { "RGBA8 (device without BC)" };
        assert!(p.iter().zip(c).take(3).all(|(&g, w)| g.abs_diff(w) <= 2), "{path}: pixel {p:?}, want {c:?}");
    }
}
