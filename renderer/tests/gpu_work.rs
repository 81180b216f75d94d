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
//!
//! The textures a work declares are checked the same way: a work samples
//! the cube's positions from a texture (uploaded, or written by an earlier
//! work as a storage texture) into the vertex buffer, and the storage
//! texture is read back after the frames from `ShaderRead`, where it rests.
//! Here the layer does report a dropped texture barrier — measured: without
//! the `General → ShaderRead` between two works, image layout errors and a
//! read-after-write hazard; without the one at the frame's end, layout
//! errors at the read-back — but not a dropped `General → General` between
//! two dispatches of one work.

mod common;

use common::*;
use glam::{Mat4, Vec4};
use renderer::vertex_factory::LocalVertexFactory;
use renderer::*;
use rhi_vulkan::{
    BindGroup, BindingResource, BufferDesc, BufferHandle, BufferUsage, ComputePipelineDesc, Device, Format, PipelineHandle, ShaderHandle,
    ShaderStageDesc, TextureData, TextureDesc, TextureHandle, TextureState, TextureUsage,
};
use std::sync::{Arc, Mutex};

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

/// Stores each position `p` of `src` (three floats) as the texel
/// `(p + 0.5, 1)` of `dst`, one texel a vertex (the unit cube's coordinates,
/// ±0.5, are exactly 0 and 1 in RGBA8).
const STORE_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var dst: texture_storage_2d<rgba8unorm, write>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&src) / 3u) {
        let p = vec3<f32>(src[3u * i], src[3u * i + 1u], src[3u * i + 2u]);
        textureStore(dst, vec2<u32>(i, 0u), vec4<f32>(p + vec3<f32>(0.5), 1.0));
    }
}
"#;

/// Samples the texels `STORE_WGSL` writes back into positions in `dst`.
const SAMPLE_WGSL: &str = r#"
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < textureDimensions(src).x) {
        let p = textureLoad(src, vec2<u32>(i, 0u), 0).xyz - vec3<f32>(0.5);
        dst[3u * i] = p.x;
        dst[3u * i + 1u] = p.y;
        dst[3u * i + 2u] = p.z;
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
    /// Samples the positions texture (uploaded), writes the vertex buffer.
    SampledTexture,
    /// Samples the positions texture without declaring it.
    UndeclaredTexture,
    /// As `SampledTexture`, but the positions texture was destroyed before
    /// the first frame.
    DeadTexture,
    /// Two works: the first stores the source's positions into the storage
    /// texture, the second samples that into the vertex buffer.
    StorageTexture,
    /// As `StorageTexture`, but the first work declares the storage texture
    /// only as read.
    StorageTextureReadOnly,
    /// As `StorageTexture`, but the second work declares the storage texture
    /// as written too (it samples it).
    SampledWhileWritten,
}

/// A bind group the recorder refused for a texture: the error's name, the
/// texture and the binding.
type Refusal = (&'static str, TextureHandle, u32);

/// What the test sees of the works, shared with the proxy.
#[derive(Clone, Debug, Default)]
struct Probe {
    /// The positions texture (uploaded) and the storage texture.
    texture: Option<TextureHandle>,
    storage: Option<TextureHandle>,
    /// Closures of texture-sampling or -storing works that ran.
    ran: u32,
    /// Texture bind groups the recorder refused; any other refusal fails
    /// the test.
    refusals: Vec<Refusal>,
}

/// Notes a refused texture bind group in `probe`.
fn note(probe: &Mutex<Probe>, group: Result<BindGroup, GpuWorkError>) -> Result<BindGroup, GpuWorkError> {
    if let Err(e) = &group {
        let refusal = match *e {
            GpuWorkError::UndeclaredTexture { texture, binding, .. } => ("UndeclaredTexture", texture, binding),
            GpuWorkError::TextureWriteNotDeclared { texture, binding, .. } => ("TextureWriteNotDeclared", texture, binding),
            GpuWorkError::SampledWhileWritten { texture, binding, .. } => ("SampledWhileWritten", texture, binding),
            ref other => panic!("an unexpected refusal: {other}"),
        };
        probe.lock().unwrap().refusals.push(refusal);
    }
    group
}

struct Gpu {
    vertices: BufferHandle,
    offsets: [u64; 4],
    indices: BufferHandle,
    source: BufferHandle,
    scratch: BufferHandle,
    shader: ShaderHandle,
    pipeline: PipelineHandle,
    /// The positions as texels (uploaded; `STORE_WGSL`'s encoding).
    texture: TextureHandle,
    /// Written by the store work, sampled by the next (zeros at first).
    storage: TextureHandle,
    store: (ShaderHandle, PipelineHandle),
    sample: (ShaderHandle, PipelineHandle),
}

/// A cube whose vertex buffer starts with every position at the origin
/// (nothing to see) and gets the cube's positions from its GPU work.
struct ComputedCube {
    lod: StaticMeshLod,
    material: MaterialId,
    declaration: Declaration,
    gpu: Option<Gpu>,
    probe: Arc<Mutex<Probe>>,
}

impl ComputedCube {
    fn new(material: MaterialId, declaration: Declaration, probe: Arc<Mutex<Probe>>) -> Self {
        Self { lod: shapes::cube(1.0), material, declaration, gpu: None, probe }
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
        let compute = |name: &str, wgsl: &str| -> rhi_vulkan::Result<(ShaderHandle, PipelineHandle)> {
            let shader = device.create_shader(name, wgsl)?;
            Ok((shader, device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "main") })?))
        };
        let (shader, pipeline) = compute("copy_positions.wgsl", COPY_WGSL)?;
        let (store, sample) = (compute("store_positions.wgsl", STORE_WGSL)?, compute("sample_positions.wgsl", SAMPLE_WGSL)?);
        // Both textures are made with data, so they are in ShaderRead, where
        // the textures GPU work declares rest.
        let n = self.lod.vertices.len() as u32;
        let texels: Vec<u8> =
            positions.chunks(3).flat_map(|p| [p[0], p[1], p[2]].map(|c| ((c + 0.5) * 255.0) as u8).into_iter().chain([255])).collect();
        let texture = device
            .create_texture_with_data(&TextureDesc::sampled("positions texture", n, 1, Format::Rgba8Unorm), TextureData::Level0(&texels))?;
        let storage_desc = TextureDesc {
            label: "stored positions".into(),
            width: n,
            height: 1,
            format: Format::Rgba8Unorm,
            usage: TextureUsage::STORAGE | TextureUsage::SAMPLED | TextureUsage::TRANSFER_SRC,
            mip_levels: 1,
            dimension: Default::default(),
            samples: 1,
        };
        let storage = device.create_texture_with_data(&storage_desc, TextureData::Level0(&vec![0; n as usize * 4]))?;
        if self.declaration == Declaration::DeadTexture {
            device.destroy_texture(texture);
        }
        let mut probe = self.probe.lock().unwrap();
        (probe.texture, probe.storage) = (Some(texture), Some(storage));
        self.gpu = Some(Gpu { vertices, offsets, indices, source, scratch, shader, pipeline, texture, storage, store, sample });
        Ok(())
    }

    fn release_render_resources(&mut self, device: &Device) {
        if let Some(g) = self.gpu.take() {
            for b in [g.vertices, g.indices, g.source, g.scratch] {
                device.destroy_buffer(b);
            }
            for t in [g.texture, g.storage] {
                device.destroy_texture(t);
            }
            for (shader, pipeline) in [(g.shader, g.pipeline), g.store, g.sample] {
                device.destroy_pipeline(pipeline);
                device.destroy_shader(shader);
            }
        }
    }

    fn get_dynamic_mesh_elements(&self, _views: &[&SceneView], visibility: &[bool], collector: &mut MeshElementCollector<'_, '_>) {
        let Some(g) = &self.gpu else { return };
        assert!(collector.records_gpu_work(), "a rendered frame records GPU work");
        let (pipeline, size, from_source) = (g.pipeline, self.position_bytes(), g.source);
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
        let n = self.lod.vertices.len() as u32;
        // A work storing the source's positions into `to` (declared by the
        // caller), twice: the recorder puts `General → General` between the
        // dispatches (recorded clean here; that the layer would miss it is
        // in the module docs).
        let (probe, store) = (self.probe.clone(), g.store.1);
        let store = move |to: TextureHandle| {
            let probe = probe.clone();
            GpuWork::new("store positions", move |rec: &mut GpuWorkRecorder<'_, '_>| {
                probe.lock().unwrap().ran += 1;
                let entries = [(0, BindingResource::Buffer(from_source)), (1, BindingResource::Texture(to))];
                let group = note(&probe, rec.create_bind_group(store, 0, &entries))?;
                rec.bind_pipeline(store);
                rec.bind_group(0, group);
                rec.dispatch(n.div_ceil(64), 1, 1)?;
                rec.dispatch(n.div_ceil(64), 1, 1)
            })
            .reads(from_source)
        };
        // A work sampling the positions of `from` into the vertex buffer
        // (declared by the caller).
        let (probe, sample, vertices) = (self.probe.clone(), g.sample.1, g.vertices);
        let sample = move |from: TextureHandle| {
            let probe = probe.clone();
            GpuWork::new("sample positions", move |rec: &mut GpuWorkRecorder<'_, '_>| {
                probe.lock().unwrap().ran += 1;
                let entries =
                    [(0, BindingResource::Texture(from)), (1, BindingResource::BufferRange { buffer: vertices, offset: 0, size })];
                let group = note(&probe, rec.create_bind_group(sample, 0, &entries))?;
                rec.bind_pipeline(sample);
                rec.bind_group(0, group);
                rec.dispatch(n.div_ceil(64), 1, 1)
            })
            .writes(vertices, &[PassRead::Shader])
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
            Declaration::SampledTexture | Declaration::DeadTexture => vec![sample(g.texture).reads_texture(g.texture)],
            Declaration::UndeclaredTexture => vec![sample(g.texture)],
            Declaration::StorageTexture => vec![store(g.storage).writes_texture(g.storage), sample(g.storage).reads_texture(g.storage)],
            Declaration::StorageTextureReadOnly => {
                vec![store(g.storage).reads_texture(g.storage), sample(g.storage).reads_texture(g.storage)]
            }
            Declaration::SampledWhileWritten => {
                vec![store(g.storage).writes_texture(g.storage), sample(g.storage).writes_texture(g.storage)]
            }
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
    render_with_probe(cube).0
}

/// [`render`], with what the test's works saw and the computed cube's
/// storage texture read back after the frames (from `ShaderRead`, where
/// the textures GPU work declares rest).
fn render_with_probe(cube: Cube) -> (rhi_vulkan::Image, Probe, Option<rhi_vulkan::Image>) {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    sun(&mut rt, true);
    let red = rt.create_material(Material::colored(Vec4::new(0.9, 0.1, 0.1, 1.0))).unwrap();
    let probe = Arc::new(Mutex::new(Probe::default()));
    let proxy: Option<Box<dyn PrimitiveSceneProxy>> = match cube {
        Cube::Computed(d) => Some(Box::new(ComputedCube::new(red, d, probe.clone()))),
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
    let storage = probe.lock().unwrap().storage;
    let stored = storage.map(|t| rt.with_context(move |ctx| ctx.device.read_texture(t, TextureState::ShaderRead)).unwrap().unwrap());
    assert_clean(&mut rt);
    let probe = probe.lock().unwrap().clone();
    (image.unwrap(), probe, stored)
}

/// The error lines the renderer logs (from every test of this binary).
static LOGGED: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Error
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            LOGGED.lock().unwrap().push(record.args().to_string());
        }
    }

    fn flush(&self) {}
}

/// Keeps the error lines logged from now on in [`LOGGED`].
fn capture_errors() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        log::set_logger(&Capture).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Error);
    });
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

/// The unit cube's vertex positions as `STORE_WGSL` stores them: `p + 0.5`
/// (0 or 1 per coordinate), alpha 1.
fn stored_texels() -> Vec<[u8; 4]> {
    shapes::cube(1.0)
        .vertices
        .iter()
        .map(|v| [v.position[0], v.position[1], v.position[2], 0.5].map(|c| ((c + 0.5) * 255.0) as u8))
        .collect()
}

#[test]
fn a_work_that_samples_a_declared_texture_writes_what_the_passes_draw() {
    let (computed, probe, _) = render_with_probe(Cube::Computed(Declaration::SampledTexture));
    assert_eq!((probe.ran, probe.refusals.len()), (3, 0), "{probe:?}");
    assert!(is_red(computed.pixel(W / 2, H / 2)));
    assert_images_equal(&computed, &render(Cube::Static), "positions sampled from a texture vs static mesh");
}

/// The first work writes the storage texture, the second samples it
/// (`General → ShaderRead` between them); the frame leaves it in
/// `ShaderRead`, where the next frame's write starts from and where it is
/// read back from: a wrong layout anywhere is a validation error.
#[test]
fn a_texture_a_work_writes_is_sampled_by_a_later_work_and_rests_in_shader_read() {
    let (computed, probe, stored) = render_with_probe(Cube::Computed(Declaration::StorageTexture));
    assert_eq!((probe.ran, probe.refusals.len()), (6, 0), "{probe:?}");
    let stored = stored.expect("the storage texture");
    let texels: Vec<[u8; 4]> = (0..stored.width).map(|x| stored.pixel(x, 0)).collect();
    assert_eq!(texels, stored_texels(), "the stored positions, by value");
    assert!(is_red(computed.pixel(W / 2, H / 2)));
    assert_images_equal(&computed, &render(Cube::Static), "positions through a storage texture vs static mesh");
}

#[test]
fn a_texture_bound_against_the_declaration_is_refused_and_the_frame_goes_on() {
    let empty = render(Cube::None);
    let cases = [
        // The sample work binds the uploaded texture at 0, undeclared.
        (Declaration::UndeclaredTexture, "UndeclaredTexture", false, 0),
        // The store work binds the storage texture, declared read, at the storage binding 1.
        (Declaration::StorageTextureReadOnly, "TextureWriteNotDeclared", true, 1),
        // The sample work binds the storage texture, declared written, at the sampled binding 0.
        (Declaration::SampledWhileWritten, "SampledWhileWritten", true, 0),
    ];
    for (d, error, storage, binding) in cases {
        let (image, probe, stored) = render_with_probe(Cube::Computed(d));
        let texture = if storage { probe.storage } else { probe.texture }.unwrap();
        assert_eq!(probe.refusals, vec![(error, texture, binding); 3], "{d:?}: refused once a frame");
        // The refused work records nothing: the positions stay at the
        // origin (or, where the store work was refused, come from the
        // storage texture's zeros: one point), the cube draws nothing.
        assert_images_equal(&image, &empty, &format!("{d:?} vs no cube"));
        if d == Declaration::SampledWhileWritten {
            // The store work ran alone: no later work sampled its texture,
            // and the frame's end put it back in ShaderRead, where it is
            // read back from.
            let stored = stored.expect("the storage texture");
            let texels: Vec<[u8; 4]> = (0..stored.width).map(|x| stored.pixel(x, 0)).collect();
            assert_eq!(texels, stored_texels(), "the stored positions, by value");
        }
    }
}

#[test]
fn a_work_declaring_a_destroyed_texture_is_left_out_before_its_closure_runs_and_the_frame_goes_on() {
    capture_errors();
    let (image, probe, _) = render_with_probe(Cube::Computed(Declaration::DeadTexture));
    assert_eq!(probe.ran, 0, "the closure never runs");
    let dead = format!("declares texture {:?}, which is not alive", probe.texture.unwrap());
    let logged = LOGGED.lock().unwrap().iter().filter(|l| l.contains(&dead)).count();
    assert_eq!(logged, 3, "logged once a frame");
    assert_images_equal(&image, &render(Cube::None), "a work on a destroyed texture vs no cube");
}
