//! GPU work before the passes (`renderer::gpu_work`): a proxy whose draw
//! reads vertex positions its own compute work writes, every frame. The
//! renderer records the work in `gpu_prepare` with the barriers of its
//! declaration. The device has synchronization validation on, and every
//! frame here must leave it clean; but this layer version (1.3.239) was seen
//! to report none of the hazards a dropped barrier of `gpu_work` leaves
//! (neither the passes' reads inside dynamic rendering — measured on lavapipe —
//! nor storage reads between two dispatches), so the barriers each
//! declaration gives are checked by `gpu_work`'s unit tests, and here the
//! pixels show that the passes read what the work wrote.

mod common;

use common::*;
use glam::{Mat4, Vec4};
use renderer::vertex_factory::LocalVertexFactory;
use renderer::*;
use rhi_vulkan::{
    BindingResource, BufferDesc, BufferHandle, BufferUsage, ComputePipelineDesc, Device, PipelineHandle, ShaderHandle, ShaderStageDesc,
};

/// Copies `src` into the position stream `dst`.
const COPY_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&src)) {
        dst[id.x] = src[id.x];
    }
}
"#;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Declaration {
    /// Reads the source, writes the vertex buffer (read by the passes as vertex input).
    Complete,
    /// Two works: the first copies the source into a scratch buffer (read
    /// by no pass), the second copies that into the vertex buffer.
    TwoWorks,
    /// Leaves out the vertex buffer it writes.
    MissingWrite,
    /// Declares everything, but its closure fails.
    Failing,
}

struct Gpu {
    vertices: BufferHandle,
    offsets: [u64; 4],
    indices: BufferHandle,
    source: BufferHandle,
    scratch: BufferHandle,
    shader: ShaderHandle,
    pipeline: PipelineHandle,
}

/// A cube whose vertex buffer starts with every position at the origin
/// (nothing to see) and gets the cube's positions from its GPU work.
struct ComputedCube {
    lod: StaticMeshLod,
    material: MaterialId,
    declaration: Declaration,
    gpu: Option<Gpu>,
}

impl ComputedCube {
    fn new(material: MaterialId, declaration: Declaration) -> Self {
        Self { lod: shapes::cube(1.0), material, declaration, gpu: None }
    }

    fn position_bytes(&self) -> u64 {
        self.lod.vertices.len() as u64 * 12
    }
}

impl PrimitiveSceneProxy for ComputedCube {
    fn local_bounds(&self) -> Bounds {
        StaticMeshRenderData::new(vec![self.lod.clone()]).unwrap().bounds()
    }

    fn view_relevance(&self, _: &SceneView) -> ViewRelevance {
        ViewRelevance { draw: true, shadow: true, dynamic_relevance: true, opaque: true, ..Default::default() }
    }

    fn create_render_resources(&mut self, device: &Device) -> rhi_vulkan::Result<()> {
        let (mut bytes, offsets) = LocalVertexFactory::pack(&self.lod.vertices);
        let positions: Vec<f32> = self.lod.vertices.iter().flat_map(|v| v.position).collect();
        let at = offsets[0] as usize;
        bytes[at..at + positions.len() * 4].fill(0);
        let vertices = device.create_buffer_init(
            &BufferDesc::gpu_only("computed vertices", bytes.len() as u64, BufferUsage::VERTEX | BufferUsage::STORAGE),
            &bytes,
        )?;
        let indices = device.create_buffer_init(
            &BufferDesc::gpu_only("computed indices", self.lod.indices.len() as u64 * 4, BufferUsage::INDEX),
            bytemuck::cast_slice(&self.lod.indices),
        )?;
        let source = device.create_buffer_init(
            &BufferDesc::gpu_only("computed positions", positions.len() as u64 * 4, BufferUsage::STORAGE),
            bytemuck::cast_slice(&positions),
        )?;
        let scratch = device.create_buffer(&BufferDesc::gpu_only("computed scratch", positions.len() as u64 * 4, BufferUsage::STORAGE))?;
        let shader = device.create_shader("copy_positions.wgsl", COPY_WGSL)?;
        let pipeline = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "main") })?;
        self.gpu = Some(Gpu { vertices, offsets, indices, source, scratch, shader, pipeline });
        Ok(())
    }

    fn release_render_resources(&mut self, device: &Device) {
        if let Some(g) = self.gpu.take() {
            for b in [g.vertices, g.indices, g.source, g.scratch] {
                device.destroy_buffer(b);
            }
            device.destroy_pipeline(g.pipeline);
            device.destroy_shader(g.shader);
        }
    }

    fn get_dynamic_mesh_elements(&self, _views: &[&SceneView], visibility: &[bool], collector: &mut MeshElementCollector<'_, '_>) {
        let Some(g) = &self.gpu else { return };
        assert!(collector.records_gpu_work(), "a rendered frame records GPU work");
        let (pipeline, size) = (g.pipeline, self.position_bytes());
        let failing = self.declaration == Declaration::Failing;
        // A work copying `from` into the first `size` bytes of `to`.
        let copy = move |label: &str, from: BufferHandle, to: BufferHandle| {
            GpuWork::new(label, move |rec: &mut GpuWorkRecorder<'_, '_>| {
                let entries = [(0, BindingResource::Buffer(from)), (1, BindingResource::BufferRange { buffer: to, offset: 0, size })];
                let group = rec.create_bind_group(pipeline, 0, &entries)?;
                rec.bind_pipeline(pipeline);
                rec.bind_group(0, group);
                rec.dispatch(((size / 4) as u32).div_ceil(64), 1, 1)?;
                if failing {
                    return Err(GpuWorkError::Rhi(rhi_vulkan::RhiError::InvalidState("the test's work fails".into())));
                }
                Ok(())
            })
            .reads(from)
        };
        let works = match self.declaration {
            Declaration::Complete | Declaration::Failing => {
                vec![copy("copy positions", g.source, g.vertices).writes(g.vertices, &[PassRead::Shader])]
            }
            Declaration::MissingWrite => vec![copy("copy positions", g.source, g.vertices)],
            Declaration::TwoWorks => vec![
                copy("stage positions", g.source, g.scratch).writes(g.scratch, &[]),
                copy("copy staged positions", g.scratch, g.vertices).writes(g.vertices, &[PassRead::Shader]),
            ],
        };
        for work in works {
            assert!(collector.add_gpu_work(work));
        }
        let streams = [0, 1, 2, 3].map(|i| Some((g.vertices, g.offsets[i])));
        let s = self.lod.sections[0];
        for (vi, _) in visibility.iter().enumerate().filter(|(_, v)| **v) {
            collector.add_mesh(vi, MeshBatch::local(streams, g.indices, s.first_index, s.index_count, self.material));
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// What [`render`] puts in the scene.
#[derive(Clone, Copy, Debug)]
enum Cube {
    Computed(Declaration),
    Static,
    None,
}

/// Three frames (two in flight) of one cube, or none; the last frame's image.
fn render(cube: Cube) -> rhi_vulkan::Image {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, true);
    let red = rt.create_material(Material::colored(Vec4::new(0.9, 0.1, 0.1, 1.0))).unwrap();
    let proxy: Option<Box<dyn PrimitiveSceneProxy>> = match cube {
        Cube::Computed(d) => Some(Box::new(ComputedCube::new(red, d))),
        Cube::Static => Some(Box::new(StaticMeshSceneProxy::new(cube_mesh(), vec![red]))),
        Cube::None => None,
    };
    if let Some(proxy) = proxy {
        rt.add_primitive(proxy, Mat4::from_scale(glam::Vec3::splat(2.0))).unwrap();
    }
    let fam = family(vec![top_view(8.0)]);
    let mut image = None;
    for _ in 0..3 {
        image = Some(frame(&mut rt, &fam).1);
    }
    assert_clean(&mut rt);
    image.unwrap()
}

fn is_red(p: [u8; 4]) -> bool {
    p[0] > 100 && p[0] > p[1] + 60 && p[0] > p[2] + 60
}

#[test]
fn a_declared_compute_write_is_drawn_as_the_static_mesh_is_with_clean_synchronization() {
    let computed = render(Cube::Computed(Declaration::Complete));
    let p = computed.pixel(W / 2, H / 2);
    assert!(is_red(p), "the cube's red at the center: {p:?}");
    assert_images_equal(&computed, &render(Cube::Static), "computed positions vs static mesh");
}

/// The second work reads what the first wrote, and the next frame's first
/// work writes what this frame's second read.
#[test]
fn works_that_read_what_earlier_works_wrote_are_ordered() {
    let computed = render(Cube::Computed(Declaration::TwoWorks));
    assert!(is_red(computed.pixel(W / 2, H / 2)));
    assert_images_equal(&computed, &render(Cube::Static), "two works vs static mesh");
}

#[test]
fn a_work_missing_a_buffer_from_its_declaration_or_failing_is_left_out_and_the_frame_goes_on() {
    let empty = render(Cube::None);
    assert!(!is_red(empty.pixel(W / 2, H / 2)));
    for d in [Declaration::MissingWrite, Declaration::Failing] {
        // Nothing of the work recorded: the positions stay at the origin,
        // the cube draws nothing; the frames complete, validation clean.
        assert_images_equal(&render(Cube::Computed(d)), &empty, &format!("{d:?} vs no cube"));
    }
}
