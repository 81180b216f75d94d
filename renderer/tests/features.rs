//! Registration per renderer: a feature adds its passes, vertex factories
//! and console variables to one render thread, once; a vertex factory is
//! compile-checked against every pass when it is registered.

mod common;

use common::*;
use renderer::passes::*;
use renderer::RenderFeature;
use renderer::*;
use rhi_vulkan::VertexBufferLayout;

/// The local factory's streams and id, with WGSL that does not compile.
struct BrokenFactory;

static BROKEN: BrokenFactory = BrokenFactory;

impl VertexFactoryType for BrokenFactory {
    fn name(&self) -> &'static str {
        "broken"
    }
    fn wgsl(&self) -> &'static str {
        "fn vf_fetch(input: VertexFactoryInput) -> FactoryVertex { return nope; }"
    }
    fn streams(&self) -> Vec<VertexBufferLayout> {
        LOCAL_VERTEX_FACTORY.streams()
    }
    fn primitive_id_location(&self) -> Option<u32> {
        LOCAL_VERTEX_FACTORY.primitive_id_location()
    }
}

/// A pass drawn in no view (it takes nothing), to register.
static OUTLINE: PassDesc = PassDesc { name: "outline", views: PassViews::Shadow, takes: |_, _| false, ..DEPTH_PREPASS };

/// A feature registering a pass, the local factory and a console variable.
struct Outline;

static OUTLINE_FEATURE: Outline = Outline;

impl RenderFeature for Outline {
    fn name(&self) -> &'static str {
        "outline"
    }
    fn register(&self, rt: &mut RenderThread) -> Result<()> {
        rt.register_pass(&OUTLINE)?;
        rt.register_vertex_factory(&LOCAL_VERTEX_FACTORY)?;
        rt.register_cvar("r.Outline.Width", CvarValue::Int(2), "outline width in pixels")
    }
}

#[test]
fn a_vertex_factory_that_does_not_compile_is_refused_when_registered() {
    let mut rt = render_thread(RenderThreadMode::Inline);
    match rt.register_vertex_factory(&BROKEN) {
        Err(RendererError::VertexFactoryShader { factory: "broken", pass, error }) => {
            assert_eq!(pass, "depth", "the first pass of the table");
            assert_eq!(error.file, "broken", "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert!(rt.vertex_factories().is_empty(), "nothing registered");
    rt.register_vertex_factory(&LOCAL_VERTEX_FACTORY).unwrap();
    assert_eq!(rt.vertex_factories(), ["local"]);
    assert_clean(&mut rt);
}

#[test]
fn a_feature_registers_on_its_renderer_once() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.add_feature(&OUTLINE_FEATURE).unwrap();
    rt.add_feature(&OUTLINE_FEATURE).unwrap();
    assert_eq!(rt.features(), ["outline"], "added once: the second add changes nothing");
    assert_eq!(rt.passes().find("outline").map(|p| p.index()), Some(MeshPass::COUNT));
    assert_eq!(rt.passes().len(), MeshPass::COUNT + 1);
    rt.set_cvar("r.Outline.Width", "3").unwrap();
    // Another renderer has none of it.
    let mut other = render_thread(RenderThreadMode::Inline);
    assert!(other.features().is_empty() && other.passes().find("outline").is_none());
    assert!(other.set_cvar("r.Outline.Width", "3").is_err(), "its console variables are the renderer's");
    // Frames render with the registered pass in the table.
    let (stats, _) = frame(&mut rt, &family(vec![top_view(8.0)]));
    assert_eq!(stats.mesh_passes.len(), MeshPass::COUNT + 1);
    assert_eq!(stats.mesh_passes.last().map(|p| p.name()), Some("outline"));
    assert_clean(&mut rt);
    assert_clean(&mut other);
}
