//! Materials and textures on the real device (validation on, asserted):
//! texel-exact texture placement, mip selection, wrap modes, normal maps,
//! masked depth, shader bindings in merged draws, per-material
//! invalidation counters, and bad input refused with nothing changed.
//!
//! Colour checks run with `r.Tonemapper=0` (the HDR scene colour clamped,
//! not tone mapped), so an unlit material's output is the texel itself.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use renderer::*;
use rhi_vulkan::{AddressMode, Filter, Image, Rect, SamplerDesc};
use std::sync::Arc;

/// Orthographic, looking down -Z with +Y up: x in [-1.5, 1.5] × y in [-1, 1]
/// fills the W×H (192×128) target, so a plane of size 2 at the origin
/// covers pixel columns 32..160 and every row.
fn ortho() -> SceneView {
    SceneView::orthographic(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO, Vec3::Y, 3.0, 2.0, 0.1, 100.0, Rect::from_size(W, H)).unwrap()
}

fn rt() -> RenderThread {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    rt
}

fn plane_mesh() -> Arc<StaticMeshRenderData> {
    StaticMeshRenderData::new(vec![shapes::plane(2.0)]).unwrap()
}

fn add(rt: &mut RenderThread, mesh: &Arc<StaticMeshRenderData>, material: MaterialId, at: Mat4) -> PrimitiveId {
    rt.add_primitive(Box::new(StaticMeshSceneProxy::new(mesh.clone(), vec![material])), at).unwrap()
}

fn pixel(image: &Image, x: u32, y: u32) -> [u8; 3] {
    let i = ((y * image.width + x) * 4) as usize;
    [image.rgba8[i], image.rgba8[i + 1], image.rgba8[i + 2]]
}

fn assert_near(got: [u8; 3], want: [u8; 3], what: &str) {
    assert!(got.iter().zip(want).all(|(a, b)| a.abs_diff(b) <= 2), "{what}: got {got:?}, want {want:?}");
}

/// An unlit material showing texture parameter `tex` at `uv` (a WGSL
/// expression of `i`), read with `sampler`.
fn unlit_textured(name: &str, uv: &str, sampler: SamplerDesc) -> Material {
    let wgsl = format!("fn material_main(i: MaterialInput) -> MaterialOutput {{\n    var o = default_material(i);\n    o.base_color = texture_tex({uv}).rgb;\n    o.emissive = vec3<f32>(0.0);\n    return o;\n}}\n");
    Material::with_shader(name, &wgsl).with_shading_model(ShadingModel::Unlit).with_parameter(MaterialParameter::texture(
        "tex",
        TextureId::WHITE,
        sampler,
    ))
}

fn nearest() -> SamplerDesc {
    SamplerDesc { filter: Filter::Nearest, mipmap_filter: Filter::Nearest, ..SamplerDesc::nearest_clamp() }
}

/// Distinct texel colours of a 4×4 texture, row by row.
fn texel(x: u32, y: u32) -> [u8; 3] {
    [(x * 80 + 15) as u8, (y * 80 + 15) as u8, ((x + y * 4) * 15) as u8]
}

#[test]
fn a_textured_plane_shows_its_texels_where_their_uvs_say() {
    let mut rt = rt();
    let data: Vec<u8> = (0..16)
        .flat_map(|i| {
            let [r, g, b] = texel(i % 4, i / 4);
            [r, g, b, 255]
        })
        .collect();
    let tex = rt.create_texture(Texture2D::from_rgba8("4x4", 4, 4, data, true).without_mips()).unwrap();
    let parent = rt.create_material(unlit_textured("show_uv0.wgsl", "i.uv0", nearest())).unwrap();
    let m = rt.create_material_instance(MaterialInstance::of(parent).with_texture("tex", tex)).unwrap();
    add(&mut rt, &plane_mesh(), m, Mat4::IDENTITY);
    let (_, image) = frame(&mut rt, &family(vec![ortho()]));
    test_support::save_test_output(&image, "materials_texels");
    // Texel (x, y) covers columns 32 + 32x.. and rows 32y..: row 0 of the
    // texture is the plane's top (+Y), column 0 its left (-X).
    for y in 0..4 {
        for x in 0..4 {
            assert_near(pixel(&image, 32 + 32 * x + 16, 32 * y + 16), texel(x, y), &format!("texel ({x}, {y})"));
        }
    }
    assert_eq!(pixel(&image, 8, 64), pixel(&image, W - 8, 64), "outside the plane: the clear colour on both sides");
    assert!((0..16).all(|i| pixel(&image, 8, 64) != texel(i % 4, i / 4)), "no texel outside the plane");
    assert_clean(&mut rt);
}

/// A plane of `size` cut into `n` × `n` quads (two triangles each), UVs 0..1.
fn tessellated_plane(size: f32, n: u32) -> Arc<StaticMeshRenderData> {
    let h = size * 0.5;
    let vertices: Vec<LocalVertex> = (0..=n)
        .flat_map(|j| (0..=n).map(move |i| (i as f32 / n as f32, j as f32 / n as f32)))
        .map(|(u, v)| LocalVertex {
            position: [(u * 2.0 - 1.0) * h, (1.0 - v * 2.0) * h, 0.0],
            tangent_x: [1.0, 0.0, 0.0, 1.0],
            normal: [0.0, 0.0, 1.0],
            color: [255; 4],
            uvs: [[u, v], [0.0; 2], [0.0; 2], [0.0; 2]],
        })
        .collect();
    let row = n + 1;
    let indices = (0..n * n)
        .flat_map(|q| {
            let (a, b) = (q / n * row + q % n, q / n * row + q % n + 1);
            [a, a + row, b, b, a + row, b + row]
        })
        .collect();
    StaticMeshRenderData::new(vec![StaticMeshLod::single_section(vertices, indices)]).unwrap()
}

#[test]
fn mips_are_selected_by_distance_on_triangles_smaller_than_a_pixel_quad() {
    // A model of tens of thousands of triangles seen whole has triangles of
    // a pixel or two: every 2x2 pixel quad straddles several, and the mip
    // level must still be the one its UV footprint says (speckle of the
    // smallest levels otherwise, the texture's average colour per quad).
    let mut rt = rt();
    let colours: [[u8; 3]; 7] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [0, 255, 255], [255, 0, 255], [255, 255, 255]];
    let level = |l: usize| -> Vec<u8> { [colours[l][0], colours[l][1], colours[l][2], 255].repeat((64 >> l) * (64 >> l)) };
    let tex = rt.create_texture(Texture2D::from_rgba8("levels", 64, 64, level(0), true).with_mips((1..7).map(level).collect())).unwrap();
    // The UV goes through parameters (a glTF texture transform, identity
    // here): the texture coordinate depends on the material's parameter
    // block, which every lane of a quad must read, helper lanes included.
    // It samples with the UV set's gradients through the transform's
    // linear part (see `renderer::material::parameters`): with implicit
    // derivatives, 2,700 of these 3,600 pixels came out at level 4 on lavapipe.
    let wgsl = "fn material_main(i: MaterialInput) -> MaterialOutput {
    var o = default_material(i);
    let xf = param_uv_xf();
    o.base_color = texture_tex_grad(i.uv0 * xf.zw + xf.xy, i.uv_dx[0] * xf.zw, i.uv_dy[0] * xf.zw).rgb;
    o.emissive = vec3<f32>(0.0);
    return o;
}
";
    let parent = Material::with_shader("levels_fine.wgsl", wgsl)
        .with_shading_model(ShadingModel::Unlit)
        .with_parameter(MaterialParameter::texture("tex", TextureId::WHITE, nearest()))
        .with_parameter(MaterialParameter::vector("uv_xf", Vec4::new(0.0, 0.0, 1.0, 1.0)));
    let m = rt.create_material(parent).unwrap();
    let m = rt.create_material_instance(MaterialInstance::of(m).with_texture("tex", tex)).unwrap();
    // 96 x 96 quads over ~94 px: triangles of about half a pixel.
    add(&mut rt, &tessellated_plane(2.0, 96), m, Mat4::IDENTITY);
    let view = SceneView::perspective(Vec3::new(0.0, -0.001, 2.0), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    let (_, image) = frame(&mut rt, &family(vec![view]));
    // The plane's middle (magnified 64 texels over ~94 px): level 0 everywhere.
    let mut wrong = Vec::new();
    for y in H / 2 - 30..H / 2 + 30 {
        for x in W / 2 - 30..W / 2 + 30 {
            let p = pixel(&image, x, y);
            if p != colours[0] {
                wrong.push((x, y, p));
            }
        }
    }
    assert!(wrong.is_empty(), "{} of 3600 pixels not level 0, e.g. {:?}", wrong.len(), &wrong[..wrong.len().min(8)]);
    assert_clean(&mut rt);
}

#[test]
fn mips_are_selected_by_distance() {
    let mut rt = rt();
    let colours: [[u8; 3]; 7] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [0, 255, 255], [255, 0, 255], [255, 255, 255]];
    let level = |l: usize| -> Vec<u8> {
        let n = (64 >> l) * (64 >> l);
        (0..n)
            .flat_map(|_| {
                let [r, g, b] = colours[l];
                [r, g, b, 255]
            })
            .collect()
    };
    let tex = Texture2D::from_rgba8("levels", 64, 64, level(0), true).with_mips((1..7).map(level).collect());
    let tex = rt.create_texture(tex).unwrap();
    let m = rt
        .create_material(unlit_textured("levels.wgsl", "i.uv0", nearest()).with_parameter(MaterialParameter::texture(
            "unused",
            tex,
            nearest(),
        )))
        .unwrap();
    let m = rt.create_material_instance(MaterialInstance::of(m).with_texture("tex", tex)).unwrap();
    let plane = add(&mut rt, &plane_mesh(), m, Mat4::IDENTITY);
    // A plane of size 2 seen from height h covers ~187/h pixels: 64 texels
    // over ~94 px (magnified: level 0), then ~6.7 px (~9.6 texels per pixel:
    // level 3), then ~1.7 px at 110 (level 5).
    let at =
        |h: f32| SceneView::perspective(Vec3::new(0.0, -0.001, h), Vec3::ZERO, Vec3::Y, 1.2, 0.1, 500.0, Rect::from_size(W, H)).unwrap();
    for (h, want) in [(2.0, 0), (28.0, 3), (110.0, 5)] {
        let (_, image) = frame(&mut rt, &family(vec![at(h)]));
        assert_near(pixel(&image, W / 2, H / 2), colours[want], &format!("from {h} high: level {want}"));
    }
    // A sampler without mipmaps (glTF's non-mipmapped minification
    // filters) reads level 0 however far the plane is.
    let parent = unlit_textured("levels_no_mips.wgsl", "i.uv0", SamplerDesc { mipmaps: false, ..nearest() });
    let no_mips = rt.create_material(parent).unwrap();
    let no_mips = rt.create_material_instance(MaterialInstance::of(no_mips).with_texture("tex", tex)).unwrap();
    rt.remove_primitive(plane).unwrap();
    add(&mut rt, &plane_mesh(), no_mips, Mat4::IDENTITY);
    for h in [28.0, 110.0] {
        let (_, image) = frame(&mut rt, &family(vec![at(h)]));
        assert_near(pixel(&image, W / 2, H / 2), colours[0], &format!("without mipmaps, from {h} high: level 0"));
    }
    assert_clean(&mut rt);
}

#[test]
fn wrap_modes_are_honoured() {
    let mut rt = rt();
    // Two texels: red on the left, green on the right.
    let tex =
        rt.create_texture(Texture2D::from_rgba8("red|green", 2, 1, vec![255, 0, 0, 255, 0, 255, 0, 255], true).without_mips()).unwrap();
    let (red, green) = ([255, 0, 0], [0, 255, 0]);
    // u = 3 * uv0.x - 1 runs from -1 to 2 across the plane; columns 64, 128
    // and 43 sample u = -0.25, 1.25 and -0.75.
    let cases = [
        (AddressMode::Repeat, [green, red, red]),
        (AddressMode::ClampToEdge, [red, green, red]),
        (AddressMode::MirrorRepeat, [red, green, green]),
    ];
    let mesh = plane_mesh();
    for (mode, want) in cases {
        let sampler = SamplerDesc { address_u: mode, address_v: mode, ..nearest() };
        let m = rt.create_material(unlit_textured(&format!("wrap_{mode:?}.wgsl"), "vec2<f32>(3.0 * i.uv0.x - 1.0, 0.5)", sampler)).unwrap();
        let m = rt.create_material_instance(MaterialInstance::of(m).with_texture("tex", tex)).unwrap();
        let p = add(&mut rt, &mesh, m, Mat4::IDENTITY);
        let (_, image) = frame(&mut rt, &family(vec![ortho()]));
        for (col, want) in [64, 128, 43].into_iter().zip(want) {
            assert_near(pixel(&image, col, 64), want, &format!("{mode:?} at column {col}"));
        }
        rt.remove_primitive(p).unwrap();
    }
    assert_clean(&mut rt);
}

/// A 1×1 linear normal map holding the tangent-space normal `n`.
fn normal_map(rt: &mut RenderThread, n: Vec3) -> TextureId {
    let n = n.normalize();
    let e = |c: f32| ((c * 0.5 + 0.5) * 255.0).round() as u8;
    rt.create_texture(Texture2D::new("normal", 1, 1, TextureFormat::Rgba8Unorm, vec![e(n.x), e(n.y), e(n.z), 255]).without_mips()).unwrap()
}

/// The centre pixel's R+G+B of a rough plane (`at`) whose material's normal
/// map holds the tangent-space normal `tilt`, under a sun from above and
/// from `light_towards`, seen from above.
fn normal_mapped_centre(light_towards: Vec3, tilt: Vec3, two_sided: bool, at: Mat4) -> u32 {
    let wgsl = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    o.normal = texture_normal(i.uv0).xyz * 2.0 - 1.0;\n    o.roughness = 0.8;\n    return o;\n}\n";
    let mut rt = rt();
    rt.add_light(Light::Directional(DirectionalLight {
        direction: -light_towards + Vec3::new(0.0, 0.0, -1.0),
        color: Vec3::ONE,
        intensity: 2.0,
        cast_shadows: false,
        ..Default::default()
    }))
    .unwrap();
    let nm = normal_map(&mut rt, tilt);
    let parent = Material::with_shader("normal_mapped.wgsl", wgsl).with_two_sided(two_sided).with_parameter(MaterialParameter::texture(
        "normal",
        TextureId::FLAT_NORMAL,
        nearest(),
    ));
    let parent = rt.create_material(parent).unwrap();
    let m = rt.create_material_instance(MaterialInstance::of(parent).with_texture("normal", nm)).unwrap();
    add(&mut rt, &plane_mesh(), m, at);
    let (_, image) = frame(&mut rt, &family(vec![ortho()]));
    assert_clean(&mut rt);
    let [r, g, b] = pixel(&image, W / 2, H / 2);
    r as u32 + g as u32 + b as u32
}

#[test]
fn a_normal_map_turns_the_surface_toward_or_away_from_the_light() {
    let lit = |light_towards: Vec3, tilt: Vec3| normal_mapped_centre(light_towards, tilt, false, Mat4::IDENTITY);
    // Light from +X: the map tilted toward +X is brighter than toward -X.
    let (toward, away) = (lit(Vec3::X, Vec3::new(0.7, 0.0, 0.7)), lit(Vec3::X, Vec3::new(-0.7, 0.0, 0.7)));
    assert!(toward > away + 40, "+X light: tilted toward {toward}, away {away}");
    // Green is the image's top (+Y on the plane): glTF / OpenGL-style maps.
    let (toward, away) = (lit(Vec3::Y, Vec3::new(0.0, 0.7, 0.7)), lit(Vec3::Y, Vec3::new(0.0, -0.7, 0.7)));
    assert!(toward > away + 40, "+Y light: green up {toward}, green down {away}");
}

#[test]
fn a_normal_mapped_back_face_shows_the_front_normal_reversed() {
    // glTF (and its Sample Viewer): a double-sided material's back face is
    // shaded with the whole tangent frame reversed, t, b and n, so the
    // shading normal is the front's, negated: a bump seen from behind is a
    // dent. (Reversing n alone mirrors the map's X on back faces.)
    // Turned over about Y, the plane's front faces -Z (tangent -X) and the
    // camera above sees its back. The front's shading normal is
    // (-0.7, 0, -0.7): the back's, reversed, leans toward +X.
    let lit = |light_towards: Vec3| {
        normal_mapped_centre(light_towards, Vec3::new(0.7, 0.0, 0.7), true, Mat4::from_rotation_y(std::f32::consts::PI))
    };
    let (from_plus_x, from_minus_x) = (lit(Vec3::X), lit(-Vec3::X));
    assert!(from_plus_x > from_minus_x + 40, "back face: light from +X {from_plus_x}, from -X {from_minus_x}");
}

#[test]
fn a_masked_material_leaves_no_hole_in_depth() {
    let mut rt = rt();
    // Left half transparent, right half opaque.
    let data: Vec<u8> = [0u8, 0, 0, 0, 255, 255, 255, 255].to_vec();
    let mask = rt.create_texture(Texture2D::from_rgba8("half", 2, 1, data, false).without_mips()).unwrap();
    let wgsl = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    o.base_color = vec3<f32>(0.0, 0.0, 1.0);\n    o.opacity = texture_mask(i.uv0).a;\n    return o;\n}\n";
    let masked = rt
        .create_material(
            Material::with_shader("masked.wgsl", wgsl)
                .with_blend(BlendMode::Masked)
                .with_shading_model(ShadingModel::Unlit)
                .with_parameter(MaterialParameter::texture("mask", mask, nearest())),
        )
        .unwrap();
    let red = rt.create_material(Material::colored(Vec4::new(1.0, 0.0, 0.0, 1.0)).with_shading_model(ShadingModel::Unlit)).unwrap();
    let mesh = plane_mesh();
    add(&mut rt, &mesh, masked, Mat4::from_translation(Vec3::Z));
    add(&mut rt, &mesh, red, Mat4::IDENTITY);
    let (stats, image) = frame(&mut rt, &family(vec![ortho()]));
    assert!(stats.pass(MeshPass::DepthPrepass).draws >= 2, "both planes in the depth prepass");
    assert_near(pixel(&image, 64, 64), [255, 0, 0], "through the hole: the plane behind");
    assert_near(pixel(&image, 128, 64), [0, 0, 255], "the opaque half");
    assert_clean(&mut rt);
}

#[test]
fn bindings_decide_merging_and_material_changes_rebuild_only_their_users() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, false);
    let white = rt.create_texture(Texture2D::from_rgba8("a", 1, 1, vec![255; 4], true)).unwrap();
    let grey = rt.create_texture(Texture2D::from_rgba8("b", 1, 1, vec![128, 128, 128, 255], true)).unwrap();
    let wgsl = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    o.base_color = texture_albedo(i.uv0).rgb * param_tint().rgb;\n    return o;\n}\n";
    let parent_of = |src: &str| {
        Material::with_shader("tinted.wgsl", src)
            .with_parameter(MaterialParameter::texture("albedo", TextureId::WHITE, SamplerDesc::linear_repeat()))
            .with_parameter(MaterialParameter::vector("tint", Vec4::ONE))
    };
    let parent = rt.create_material(parent_of(wgsl)).unwrap();
    let a = rt.create_material_instance(MaterialInstance::of(parent).with_texture("albedo", white)).unwrap();
    let b = rt.create_material_instance(MaterialInstance::of(parent).with_texture("albedo", grey)).unwrap();
    let c = rt.create_material_instance(MaterialInstance::of(parent).with_texture("albedo", white)).unwrap();
    let other = rt.create_material(Material::colored(Vec4::new(0.2, 0.8, 0.2, 1.0))).unwrap();
    // 4 cubes of each instance, 2 of another parent.
    let mats: Vec<MaterialId> = [a, b, c].iter().flat_map(|&m| [m; 4]).chain([other; 2]).collect();
    cube_grid(&mut rt, mats.len(), &mats, 1.5);
    let fam = family(vec![top_view(12.0)]);
    let (first, _) = frame(&mut rt, &fam);
    let per_primitive = first.cached_commands_built / mats.len() as u64;
    assert_eq!(first.cached_commands_built, per_primitive * 14, "every primitive builds the same passes");
    let base = first.pass(MeshPass::Base);
    assert_eq!(base.mesh_draw_commands, 14);
    assert_eq!(base.draws, 4, "one draw per (pipeline, bindings): a, b, c (distinct parameter slots) and the other parent");
    assert!(first.materials_live >= 6 && first.textures_live >= 5, "{first:?}");
    // Creating instances rebuilds nothing and makes no pipeline.
    for i in 0..10 {
        rt.create_material_instance(MaterialInstance::of(parent).with_vector("tint", Vec4::splat(i as f32 / 10.0))).unwrap();
    }
    let (created, _) = frame(&mut rt, &fam);
    assert_eq!((created.cached_commands_built, created.pipelines_created), (0, 0), "creating instances");
    assert_eq!(created.materials_live, first.materials_live + 10);
    assert_eq!(created.material_bind_groups, first.material_bind_groups, "they bind the parent's textures: its group, shared");
    let (quiet, _) = frame(&mut rt, &fam);
    assert_eq!(quiet.material_bytes_uploaded, 0, "nothing changed");
    // A parameter change: one block per instance, nothing rebuilt.
    for m in [a, b, c] {
        rt.set_material_parameter(m, "tint", ParameterValue::Vector(Vec4::new(1.0, 0.5, 0.5, 1.0))).unwrap();
    }
    let (params, _) = frame(&mut rt, &fam);
    assert_eq!((params.cached_commands_built, params.pipelines_created), (0, 0), "a parameter change");
    assert_eq!(params.material_bytes_uploaded, 3 * MATERIAL_BLOCK_SIZE as u64);
    // A texture change: only b's primitives, no pipeline.
    rt.set_material_parameter(b, "albedo", ParameterValue::Texture(white)).unwrap();
    let (rebound, _) = frame(&mut rt, &fam);
    assert_eq!(rebound.cached_commands_built, 4 * per_primitive, "only b's 4 cubes");
    assert_eq!(rebound.pipelines_created, 0);
    assert_eq!(rebound.pass(MeshPass::Base).draws, 4, "b's bindings changed, its slot still differs");
    assert_eq!(rebound.material_bind_groups, first.material_bind_groups - 1, "b now shares a and c's group; its own went");
    // The parent's shader: its users and its instances' users (12 cubes), new pipelines, none of the other parent's.
    rt.set_material(parent, parent_of(&wgsl.replace("* param_tint().rgb", "* param_tint().rgb * 0.9"))).unwrap();
    let (edited, _) = frame(&mut rt, &fam);
    assert_eq!(edited.cached_commands_built, 12 * per_primitive);
    assert!(edited.pipelines_created > 0);
    // The other parent's shader: its 2 cubes only.
    rt.set_material(other, Material::colored(Vec4::ONE).with_two_sided(true)).unwrap();
    let (other_edit, _) = frame(&mut rt, &fam);
    assert_eq!(other_edit.cached_commands_built, 2 * per_primitive);
    assert_clean(&mut rt);
}

#[test]
fn a_destroyed_texture_samples_white_and_materials_survive() {
    let mut rt = rt();
    let tex = rt.create_texture(Texture2D::from_rgba8("blue", 1, 1, vec![0, 0, 255, 255], true)).unwrap();
    let m = rt.create_material(unlit_textured("destroy.wgsl", "i.uv0", nearest())).unwrap();
    let m = rt.create_material_instance(MaterialInstance::of(m).with_texture("tex", tex)).unwrap();
    add(&mut rt, &plane_mesh(), m, Mat4::IDENTITY);
    let fam = family(vec![ortho()]);
    let (_, image) = frame(&mut rt, &fam);
    assert_near(pixel(&image, W / 2, H / 2), [0, 0, 255], "the texture");
    rt.destroy_texture(tex).unwrap();
    let (_, image) = frame(&mut rt, &fam);
    assert_near(pixel(&image, W / 2, H / 2), [255, 255, 255], "destroyed: white");
    assert!(matches!(rt.destroy_texture(tex), Err(RendererError::UnknownTexture(_))), "once");
    assert!(matches!(rt.destroy_texture(TextureId::WHITE), Err(RendererError::UnknownTexture(_))), "built-ins stay");
    // A texture that is gone, or never was, is refused wherever a material
    // names one: an instance's override, a parameter, a parent's default.
    let never = TextureId(0x0000_7fff);
    let parent = rt.create_material(unlit_textured("refuse.wgsl", "i.uv0", nearest())).unwrap();
    for t in [tex, never] {
        let refused = |r: Result<_>| matches!(r, Err(RendererError::UnknownTexture(id)) if id == t);
        assert!(refused(rt.create_material_instance(MaterialInstance::of(parent).with_texture("tex", t)).map(drop)), "{t:?}");
        assert!(refused(rt.set_material_parameter(m, "tex", ParameterValue::Texture(t))), "{t:?}");
        let textured = Material::default().with_parameter(MaterialParameter::texture("t", t, nearest()));
        assert!(refused(rt.create_material(textured).map(drop)), "{t:?}");
    }
    assert!(rt.create_material_instance(MaterialInstance::of(parent).with_texture("tex", TextureId::BLACK)).is_ok(), "built-ins are live");
    for _ in 0..3 {
        frame(&mut rt, &fam);
    }
    assert_clean(&mut rt);
}

/// A material tinted by the environment's mip 0 seen along its normal:
/// the environment cube is declared by the passes that shade (base,
/// translucency), not by the depth passes (prepass, shadow).
fn environment_tinted(blend: BlendMode) -> Material {
    let wgsl = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    let env = textureSampleLevel(environment_specular, environment_sampler, i.world_normal, 0.0);\n    o.base_color = env.rgb;\n    o.opacity = env.a;\n    return o;\n}\n";
    Material::with_shader("environment_tinted.wgsl", wgsl).with_blend(blend)
}

#[test]
fn a_masked_material_that_cannot_draw_in_the_depth_pass_is_refused() {
    let mut rt = rt();
    let e = rt.create_material(environment_tinted(BlendMode::Masked)).unwrap_err();
    let RendererError::MaterialShader { material, error } = &e else { panic!("{e:?}") };
    assert_eq!((material.as_str(), error.file.as_str(), error.line), ("environment_tinted.wgsl", "environment_tinted.wgsl", 3), "{e}");
    assert!(e.to_string().contains("in the depth pass over the local vertex factory"), "{e}");
    // Opaque, the depth passes draw it with the default material: it is drawn.
    let opaque = rt.create_material(environment_tinted(BlendMode::Opaque)).unwrap();
    assert_eq!(opaque, MaterialId(1), "no id was spent on the refused one");
    let e = rt.set_material(opaque, environment_tinted(BlendMode::Masked)).unwrap_err();
    assert!(e.to_string().contains("depth pass"), "an edit is checked as a creation: {e}");
    // A masked material that reads only what every pass has is created and drawn.
    let wgsl = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    o.opacity = select(0.0, 1.0, i.uv0.x > 0.5);\n    return o;\n}\n";
    let masked = rt.create_material(Material::with_shader("half.wgsl", wgsl).with_blend(BlendMode::Masked)).unwrap();
    let mesh = plane_mesh();
    add(&mut rt, &mesh, masked, Mat4::from_translation(Vec3::Z));
    add(&mut rt, &mesh, opaque, Mat4::IDENTITY);
    let (stats, _) = frame(&mut rt, &family(vec![ortho()]));
    assert!(stats.pass(MeshPass::DepthPrepass).draws >= 2, "both planes in the depth prepass");
    assert!(stats.pass(MeshPass::Base).draws >= 2, "both planes in the base pass");
    assert_clean(&mut rt);
}

#[test]
fn bad_textures_and_materials_are_typed_errors_that_change_nothing() {
    let mut rt = rt();
    let first = rt.create_texture(Texture2D::from_rgba8("ok", 2, 2, vec![0; 16], true)).unwrap();
    let bad = [
        Texture2D::from_rgba8("short", 2, 2, vec![0; 15], true),
        Texture2D::new("too big", 1 << 20, 1, TextureFormat::R8Unorm, vec![0; 1 << 20]),
        Texture2D::from_rgba8("levels", 2, 2, vec![0; 16], true).with_mips(vec![vec![0; 4], vec![0; 4]]),
    ];
    for t in bad {
        let label = t.label.clone();
        assert!(matches!(rt.create_texture(t), Err(RendererError::InvalidTexture { texture, .. }) if texture == label), "{label}");
    }
    let second = rt.create_texture(Texture2D::from_rgba8("ok 2", 2, 2, vec![0; 16], true)).unwrap();
    assert_eq!(second.slot(), first.slot() + 1, "no id was spent on the bad ones");
    assert!(matches!(Texture2D::decode("junk.png", b"\x89PNG\r\n\x1a\nnot really", true), Err(RendererError::InvalidTexture { .. })));
    // Materials.
    let broken = Material::with_shader("broken.wgsl", "fn material_main(i: MaterialInput) -> MaterialOutput {\n    return nope;\n}\n");
    let e = rt.create_material(broken).unwrap_err();
    assert!(e.to_string().contains("broken.wgsl:2:"), "{e}");
    let dup = Material::default().with_parameter(MaterialParameter::scalar("x", 1.0)).with_parameter(MaterialParameter::scalar("x", 2.0));
    assert!(matches!(rt.create_material(dup), Err(RendererError::InvalidMaterial { .. })));
    let parent = rt.create_material(Material::default().with_parameter(MaterialParameter::scalar("x", 1.0))).unwrap();
    assert_eq!(parent, MaterialId(1), "no id was spent on the bad ones");
    assert!(
        matches!(
            rt.create_material_instance(MaterialInstance::of(parent).with_vector("x", Vec4::ONE)),
            Err(RendererError::InvalidMaterial { .. })
        ),
        "wrong kind"
    );
    assert!(
        matches!(
            rt.create_material_instance(MaterialInstance::of(parent).with_scalar("y", 1.0)),
            Err(RendererError::InvalidMaterial { .. })
        ),
        "no such parameter"
    );
    assert!(matches!(rt.create_material_instance(MaterialInstance::of(MaterialId(9))), Err(RendererError::UnknownMaterial(_))));
    let inst = rt.create_material_instance(MaterialInstance::of(parent).with_scalar("x", 3.0)).unwrap();
    assert!(rt.create_material_instance(MaterialInstance::of(inst)).is_err(), "an instance is no parent");
    assert!(matches!(rt.destroy_material(parent), Err(RendererError::MaterialInUse { instances: 1, .. })));
    assert!(matches!(rt.set_material_parameter(inst, "x", ParameterValue::Vector(Vec4::ONE)), Err(RendererError::InvalidMaterial { .. })));
    // A parent edit that would orphan the instance's override is refused.
    assert!(matches!(rt.set_material(parent, Material::default()), Err(RendererError::InvalidMaterial { .. })));
    rt.destroy_material(inst).unwrap();
    rt.destroy_material(parent).unwrap();
    let fam = family(vec![ortho()]);
    frame(&mut rt, &fam);
    let live = rt.with_context(|ctx| ctx.scene.materials.live()).unwrap();
    assert_eq!(live, 1, "only the default is left");
    assert_clean(&mut rt);
}

/// The local factory plus a bind group of its own (group 3): a storage
/// buffer whose first three floats are the custom data it hands materials
/// (`custom_data(in, k)`). Its draws merge (the id stream), so only the
/// bindings keep two primitives' commands apart.
struct TintFactory;

static TINT_FACTORY: TintFactory = TintFactory;

static TINT_FACTORY_WGSL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let local = include_str!("../shaders/local_vf.inc.wgsl").replace("fn vf_custom_data(", "fn local_vf_custom_data(");
    format!(
        "{local}\n@group(3) @binding(0) var<storage, read> vf_tint: array<f32>;\n\
         fn vf_custom_data(in: MaterialInput, index: u32) -> f32 {{\n    if (index < 3u) {{\n        return vf_tint[index];\n    }}\n    return 0.0;\n}}\n"
    )
});

impl VertexFactoryType for TintFactory {
    fn name(&self) -> &'static str {
        "test_tint"
    }
    fn wgsl(&self) -> &'static str {
        &TINT_FACTORY_WGSL
    }
    fn streams(&self) -> Vec<rhi_vulkan::VertexBufferLayout> {
        LOCAL_VERTEX_FACTORY.streams()
    }
    fn primitive_id_location(&self) -> Option<u32> {
        LOCAL_VERTEX_FACTORY.primitive_id_location()
    }
}

/// A tint's buffer and bind group, made by the first proxy naming it.
type SharedTint = Arc<std::sync::Mutex<Option<(rhi_vulkan::BufferHandle, rhi_vulkan::BindGroupHandle)>>>;

/// A static mesh drawn by [`TintFactory`] with the bind group of `tint`.
struct TintedProxy {
    inner: StaticMeshSceneProxy,
    color: [f32; 4],
    tint: SharedTint,
}

impl PrimitiveSceneProxy for TintedProxy {
    fn local_bounds(&self) -> Bounds {
        self.inner.local_bounds()
    }
    fn view_relevance(&self, view: &SceneView) -> ViewRelevance {
        self.inner.view_relevance(view)
    }
    fn draw_static_elements(&self, out: &mut Vec<MeshBatch>) {
        let group = self.tint.lock().unwrap().map(|(_, g)| g);
        let first = out.len();
        self.inner.draw_static_elements(out);
        for b in &mut out[first..] {
            b.vertex_factory = &TINT_FACTORY;
            b.vertex_factory_bindings = group;
        }
    }
    fn create_render_resources(&mut self, device: &rhi_vulkan::Device) -> rhi_vulkan::Result<()> {
        self.inner.create_render_resources(device)?;
        let mut tint = self.tint.lock().unwrap();
        if tint.is_none() {
            use rhi_vulkan::*;
            let buffer =
                device.create_buffer_init(&BufferDesc::gpu_only("tint", 16, BufferUsage::STORAGE), bytemuck::cast_slice(&self.color))?;
            let layout = BindGroupLayoutDesc {
                entries: vec![BindGroupLayoutEntry {
                    binding: 0,
                    ty: BindingType::StorageBuffer { read_only: true },
                    stages: ShaderStages::VERTEX | ShaderStages::FRAGMENT,
                }],
            };
            *tint = Some((buffer, device.create_bind_group_with_layout(&layout, &[(0, BindingResource::Buffer(buffer))])?));
        }
        Ok(())
    }
    fn release_render_resources(&mut self, device: &rhi_vulkan::Device) {
        self.inner.release_render_resources(device);
        if Arc::strong_count(&self.tint) == 1 {
            if let Some((buffer, group)) = self.tint.lock().unwrap().take() {
                device.destroy_bind_group(group);
                device.destroy_buffer(buffer);
            }
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// UE's FMeshDrawShaderBindings hold the vertex factory's bindings beside
/// the material's: two primitives of one mesh and material whose factory
/// bind groups differ never merge (and each draws with its own group 3),
/// two naming the same group do.
#[test]
fn commands_with_different_vertex_factory_bindings_never_merge() {
    let mut rt = rt();
    let wgsl = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    o.base_color = vec3<f32>(custom_data(i, 0u), custom_data(i, 1u), custom_data(i, 2u));\n    o.emissive = vec3<f32>(0.0);\n    return o;\n}\n";
    let material = rt.create_material(Material::with_shader("vf_tint.wgsl", wgsl).with_shading_model(ShadingModel::Unlit)).unwrap();
    let mesh = plane_mesh();
    let tint = |color: [f32; 4]| (color, SharedTint::default());
    let (red, green, blue) = (tint([1.0, 0.0, 0.0, 0.0]), tint([0.0, 1.0, 0.0, 0.0]), tint([0.0, 0.0, 1.0, 0.0]));
    // Four planes in a row: red, red (the same bind group), green, blue.
    for (i, (color, shared)) in [&red, &red, &green, &blue].into_iter().enumerate() {
        let at =
            Mat4::from_scale_rotation_translation(Vec3::splat(0.3), glam::Quat::IDENTITY, Vec3::new(-1.125 + 0.75 * i as f32, 0.0, 0.0));
        let proxy = TintedProxy { inner: StaticMeshSceneProxy::new(mesh.clone(), vec![material]), color: *color, tint: shared.clone() };
        rt.add_primitive(Box::new(proxy), at).unwrap();
    }
    let (stats, image) = frame(&mut rt, &family(vec![ortho()]));
    let base = stats.pass(MeshPass::Base);
    assert_eq!(base.mesh_draw_commands, 4);
    assert_eq!(base.draws, 3, "the red pair merges, green and blue stay apart");
    for (x, want) in [(24, [255, 0, 0]), (72, [255, 0, 0]), (120, [0, 255, 0]), (168, [0, 0, 255])] {
        assert_eq!(pixel(&image, x, 64), want, "plane at column {x}");
    }
    assert_clean(&mut rt);
}
