//! A mesh pass added through `PassDesc` alone: registered in one renderer's
//! pass table, it is drawn with its own WGSL in the views its description
//! names, with no other code knowing of it — and no other renderer drawing it.

mod common;

use common::*;
use glam::Vec4;
use renderer::passes::*;
use renderer::*;
use std::sync::LazyLock;

/// The pass's own fragment shader, after the depth prepass's vertex shader.
const MAGENTA_WGSL: &str = "
@fragment
fn fs_main() -> @location(0) vec4<f32> {
    return vec4<f32>(1.0, 0.0, 1.0, 1.0);
}
";

/// Paints every visible opaque surface magenta, after the built-in passes:
/// the base pass's geometry and depth test, with the default material, no
/// lighting and its own WGSL.
static HIGHLIGHT: LazyLock<PassDesc> = LazyLock::new(|| {
    let wgsl: &'static str = Box::leak(format!("{}{MAGENTA_WGSL}", DEPTH_PREPASS.shader).into_boxed_str());
    PassDesc {
        name: "highlight",
        material: PassMaterial::Default,
        shader: wgsl,
        masked_shader: wgsl,
        lighting: false,
        counts_triangles: false,
        ..BASE
    }
});

const MAGENTA: [u8; 4] = [255, 0, 255, 255];

/// The scene: three opaque cubes and a translucent one, lit by the sun.
fn add_cubes(rt: &mut RenderThread) {
    // The pass's flat magenta as it is: no tone mapping.
    rt.set_cvar(cvars::TONEMAPPER, "0").unwrap();
    sun(rt, true);
    let red = rt.create_material(Material::colored(Vec4::new(0.8, 0.2, 0.2, 1.0))).unwrap();
    let glass = rt.create_material(Material::colored(Vec4::new(0.2, 0.4, 0.9, 0.5)).with_blend(BlendMode::Translucent)).unwrap();
    cube_grid(rt, 4, &[red, red, red, glass], 3.0);
}

fn render(rt: &mut RenderThread) -> (FrameStats, rhi_vulkan::Image) {
    let (stats, image) = frame(rt, &family(vec![top_view(12.0)]));
    assert_clean(rt);
    (stats, image)
}

#[test]
fn a_pass_registered_through_its_desc_alone_renders() {
    let mut plain_rt = render_thread(RenderThreadMode::Threaded);
    add_cubes(&mut plain_rt);
    let (before, plain) = render(&mut plain_rt);
    assert!(!plain.rgba8.chunks(4).any(|p| p == MAGENTA), "nothing is magenta without the pass");

    let mut rt = render_thread(RenderThreadMode::Threaded);
    let pass = rt.register_pass(&HIGHLIGHT).unwrap();
    assert_eq!(pass.name(), "highlight");
    assert_eq!(pass.index(), MeshPass::COUNT, "after the built-in passes");
    assert!(rt.passes().all().any(|p| p == pass));
    add_cubes(&mut rt);
    let (after, highlighted) = render(&mut rt);

    // The new pass drew the three opaque cubes (one merged draw), and the
    // built-in passes drew what they drew before.
    assert_eq!(after.pass(pass).mesh_draw_commands, 3, "{:?}", after.pass(pass));
    assert!(after.pass(pass).draws > 0);
    for p in MeshPass::ALL {
        assert_eq!(after.pass(p), before.pass(p), "{}", p.name());
    }
    // Its pixels: the opaque cubes are magenta now; every other pixel (the
    // background, the translucent cube) is as before.
    let mut magenta = 0;
    for (a, b) in plain.rgba8.chunks(4).zip(highlighted.rgba8.chunks(4)) {
        if a != b {
            assert_eq!(b, MAGENTA, "only the highlight pass changed pixels");
            magenta += 1;
        }
    }
    assert!(magenta > 3 * 100, "three cubes' worth of magenta pixels, got {magenta}");
    let (w, h) = (highlighted.width, highlighted.height);
    assert_ne!(highlighted.pixel(2, 2), MAGENTA, "the background is not drawn");
    assert_ne!(highlighted.pixel(w - 3, h - 3), MAGENTA);
    // The registration is this renderer's: the other one draws as before.
    assert_eq!(render(&mut plain_rt).1.rgba8, plain.rgba8);
    assert_eq!(plain_rt.passes().len(), MeshPass::COUNT);

    // A second pass of the same name is refused; the table is unchanged.
    let count = rt.passes().len();
    assert!(matches!(rt.register_pass(&HIGHLIGHT), Err(RendererError::DuplicatePass(n)) if n == "highlight"));
    assert_eq!(rt.passes().len(), count);

    // The table holds MeshPass::MAX passes; one more is refused and changes nothing.
    for i in count..MeshPass::MAX {
        let name: &'static str = Box::leak(format!("unused {i}").into_boxed_str());
        let unused: &'static PassDesc = Box::leak(Box::new(PassDesc { name, views: PassViews::Shadow, takes: |_, _| false, ..*HIGHLIGHT }));
        assert_eq!(rt.register_pass(unused).unwrap().index(), i);
    }
    let extra: &'static PassDesc = Box::leak(Box::new(PassDesc { name: "one too many", ..*HIGHLIGHT }));
    assert!(matches!(rt.register_pass(extra), Err(RendererError::PassTableFull(n)) if n == MeshPass::MAX));
    assert_eq!(rt.passes().len(), MeshPass::MAX);
    assert!(rt.passes().all().all(|p| p.name() != "one too many"));
    // The render thread's table took every registration too: a frame draws.
    render(&mut rt);
}
