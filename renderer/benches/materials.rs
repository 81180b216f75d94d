//! Materials at the scale of the frame-prep bench: 160,000 static cubes,
//! one 1280x720 view, CPU only (frames discarded), validation off.
//!
//! - cached frame prep per primitive with 1,024 material instances of 8
//!   parents (each parent with a texture parameter; the instances override
//!   a vector, so each parent's instances share its bind group, while each
//!   draws with its own parameter slot) vs. with 8 materials, goal ≤ 1.2×;
//!   base-pass draws = the distinct (pipeline, material) pairs in view;
//! - creating 1,000 material instances: cached commands rebuilt in the
//!   creating frame (goal 0) and that frame's CPU time vs. a normal
//!   frame's, goal ≤ 1.5×;
//! - changing one parameter of 1,000 instances per frame: commands and
//!   pipelines rebuilt (goal 0 each) and bytes uploaded (goal 1,000 × the
//!   256-byte block);
//! - texture upload with GPU mip generation (2048² RGBA8) in MB/s vs. a
//!   plain staged buffer upload of the same bytes (context, no goal);
//! - creating and destroying 10× as many material instances through the
//!   render thread (inline: the game side's checks and the render side's
//!   tables, no frame): 10,000 vs 1,000 under one parent, and 1,000 vs 100
//!   parents with 10 instances each, goal ≤ 12× the time (issue #40: every
//!   operation costs what it touches, not the number of materials; the
//!   debug-build test is `tests/material_scaling.rs`). Past that the
//!   allocator and the caches, not the code, add to the time per material
//!   (about 1.3× from 10,000 to 100,000 live).
//!
//! Ratios are medians of paired measurements (`test_support::bench::paired`).
//! Writes `target/bench/renderer-materials.json` for `cargo xtask bench`.

use glam::Vec4;
use renderer::*;
use rhi_vulkan::{BufferDesc, BufferUsage, Device, DeviceDesc, Format, SamplerDesc, TextureData, TextureDesc, Validation};
use std::time::Instant;
use test_support::bench::quick;
use test_support::bench::{paired, write_rows, Arm, GridScene, Row};

const SIDE: usize = 400;
const PARENTS: usize = 8;
const INSTANCES_PER_PARENT: usize = 128;
const W: u32 = 1280;
const H: u32 = 720;

struct Setup {
    grid: GridScene,
    /// The materials the cubes cycle through.
    materials: Vec<MaterialId>,
    /// The next new material slot, and destroyed ids' slots in their next
    /// generation (ids are handed out here, as the render thread would).
    next_slot: u32,
    free: Vec<MaterialId>,
}

const TINTED: &str = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    o.base_color = texture_albedo(i.uv0).rgb * param_tint().rgb;\n    o.roughness = param_rough();\n    return o;\n}\n";

fn parent(k: usize) -> Material {
    Material::with_shader(&format!("bench_parent_{k}.wgsl"), &TINTED.replace("param_rough()", &format!("param_rough() + {k}.0 * 0.01")))
        .with_parameter(MaterialParameter::texture("albedo", TextureId::WHITE, SamplerDesc::linear_repeat()))
        .with_parameter(MaterialParameter::vector("tint", Vec4::ONE))
        .with_parameter(MaterialParameter::scalar("rough", 0.5))
}

/// 160k cubes over `materials` (cycled); `materials` made by `make`.
fn setup(instanced: bool) -> Setup {
    let mut scene = Scene::default();
    let mut next_slot = 1;
    let mut materials = Vec::new();
    for k in 0..PARENTS {
        let id = MaterialId(next_slot);
        next_slot += 1;
        scene.set_material(id, parent(k)).unwrap();
        if !instanced {
            materials.push(id);
            continue;
        }
        for j in 0..INSTANCES_PER_PARENT {
            let inst = MaterialId(next_slot);
            next_slot += 1;
            let t = j as f32 / INSTANCES_PER_PARENT as f32;
            scene.set_material_instance(inst, MaterialInstance::of(id).with_vector("tint", Vec4::new(t, 1.0 - t, 0.5, 1.0))).unwrap();
            materials.push(inst);
        }
    }
    let grid = GridScene::new(scene, SIDE, |i| materials[i % materials.len()], W, H);
    Setup { grid, materials, next_slot, free: Vec::new() }
}

fn cvars() -> ConsoleVariables {
    let mut c = ConsoleVariables::default();
    c.set(cvars::SHADOW_ENABLE, "0").unwrap();
    // Occlusion culling has rows of its own (renderer/benches/occlusion.rs);
    // these figures are the rest of the frame, as they were measured before it.
    c.set(cvars::ALLOW_OCCLUSION_QUERIES, "0").unwrap();
    c
}

fn prepare_ms(s: &mut Setup, c: &ConsoleVariables) -> f64 {
    let t = Instant::now();
    s.grid.renderer.prepare(&s.grid.device, &s.grid.scene, c, &s.grid.family).unwrap();
    t.elapsed().as_secs_f64() * 1e3
}

/// One discarded frame (every CPU stage, no GPU work): its stats and ms.
fn frame(s: &mut Setup, c: &ConsoleVariables) -> (FrameStats, f64) {
    let request = FrameRequest { family: s.grid.family.clone(), read_back: false, execute: false };
    let t = Instant::now();
    let (stats, _) = s.grid.renderer.render(&s.grid.device, &mut s.grid.scene, c, &request).unwrap();
    (stats, t.elapsed().as_secs_f64() * 1e3)
}

/// Creates `n` instances of material 1 (in destroyed materials' slots
/// first, as the render thread hands ids out); returns their ids.
fn create_instances(s: &mut Setup, n: usize) -> Vec<MaterialId> {
    (0..n)
        .map(|j| {
            let id = s.free.pop().unwrap_or_else(|| {
                s.next_slot += 1;
                MaterialId(s.next_slot - 1)
            });
            s.grid.scene.set_material_instance(id, MaterialInstance::of(MaterialId(1)).with_scalar("rough", j as f32 / n as f32)).unwrap();
            id
        })
        .collect()
}

/// MB/s of making a 2048² RGBA8 texture with its mips generated on the GPU,
/// and of a staged GPU-only buffer of the same bytes.
fn upload_mb_s(device: &Device) -> (f64, f64) {
    let side = 2048;
    let bytes: Vec<u8> = (0..side * side * 4).map(|i| (i * 7 % 251) as u8).collect();
    let mb = bytes.len() as f64 / 1e6;
    let runs = if quick() { 3 } else { 5 };
    let texture = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let desc = TextureDesc::sampled("bench", side as u32, side as u32, Format::Rgba8Srgb)
                .with_mip_levels(TextureDesc::full_mip_count(side as u32, side as u32));
            let tex = device.create_texture_with_data(&desc, TextureData::Level0(&bytes)).unwrap();
            let s = t.elapsed().as_secs_f64();
            device.destroy_texture(tex);
            s
        })
        .fold(f64::INFINITY, f64::min);
    let buffer = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let b = device.create_buffer_init(&BufferDesc::gpu_only("bench", bytes.len() as u64, BufferUsage::STORAGE), &bytes).unwrap();
            let s = t.elapsed().as_secs_f64();
            device.destroy_buffer(b);
            s
        })
        .fold(f64::INFINITY, f64::min);
    (mb / texture, mb / buffer)
}

/// Creates `parents` parents of one shader (parameters differ) with
/// `per_parent` instances each on `rt`, then destroys them all. Milliseconds.
fn churn_ms(rt: &mut RenderThread, parents: usize, per_parent: usize) -> f64 {
    // One shader for all: the compile check is cached after the first.
    let parent = |k: usize| parent(0).with_parameter(MaterialParameter::scalar("k", k as f32));
    test_support::material_churn(rt, parents, per_parent, parent).as_secs_f64() * 1e3
}

/// 10× the materials vs 1×, as (parents, instances per parent) pairs:
/// the time ratio, paired.
fn churn_scaling(pairs: usize, small: (usize, usize), large: (usize, usize)) -> test_support::bench::Paired {
    let desc = DeviceDesc { validation: Validation::Disabled, ..Default::default() };
    let mut rt = RenderThread::new(&desc, RenderThreadMode::Inline).unwrap();
    churn_ms(&mut rt, small.0, small.1);
    churn_ms(&mut rt, large.0, large.1);
    paired(pairs, |arm| match arm {
        Arm::Measured => churn_ms(&mut rt, large.0, large.1),
        Arm::Baseline => churn_ms(&mut rt, small.0, small.1),
    })
}

fn main() {
    let _pool = renderer::render_worker_pool();
    let c = cvars();
    let pairs = if quick() { 5 } else { 9 };
    // 1. Per-primitive prep: 1,024 instances of 8 parents vs. 8 materials.
    let mut plain = setup(false);
    let mut inst = setup(true);
    for s in [&mut plain, &mut inst] {
        frame(s, &c);
        prepare_ms(s, &c);
    }
    let prep = paired(pairs, |arm| match arm {
        Arm::Measured => prepare_ms(&mut inst, &c),
        Arm::Baseline => prepare_ms(&mut plain, &c),
    });
    let per_primitive = prep.measured.scaled(1e6 / (SIDE * SIDE) as f64);
    let (inst_stats, _) = frame(&mut inst, &c);
    let (plain_stats, _) = frame(&mut plain, &c);
    let base_draws = inst_stats.pass(MeshPass::Base).draws;
    drop(plain);
    // 2. Creating 1,000 instances: the creating frame vs. a normal one.
    let mut created_rebuilt = 0;
    let mut created_pipelines = 0;
    let creating = paired(pairs, |arm| match arm {
        Arm::Measured => {
            let ids = create_instances(&mut inst, 1000);
            let (stats, ms) = frame(&mut inst, &c);
            created_rebuilt = created_rebuilt.max(stats.cached_commands_built);
            created_pipelines = created_pipelines.max(stats.pipelines_created);
            for id in ids {
                inst.grid.scene.remove_material(id).unwrap();
                inst.free.push(MaterialId::new(id.slot(), id.generation() + 1).unwrap());
            }
            frame(&mut inst, &c);
            ms
        }
        Arm::Baseline => frame(&mut inst, &c).1,
    });
    // 3. One parameter of 1,000 instances per frame.
    let targets: Vec<MaterialId> = inst.materials[..1000].to_vec();
    assert!(targets.iter().all(|m| inst.grid.scene.materials.is_instance(*m)));
    let mut changed = FrameStats::default();
    for f in 0..3 {
        for (k, &m) in targets.iter().enumerate() {
            inst.grid
                .scene
                .set_material_parameter(m, "tint", ParameterValue::Vector(Vec4::new(f as f32 / 3.0, k as f32 / 1000.0, 0.5, 1.0)))
                .unwrap();
        }
        changed = frame(&mut inst, &c).0;
    }
    // 4. Texture upload with mips vs. a plain buffer upload.
    let (tex_mb_s, buf_mb_s) = upload_mb_s(&inst.grid.device);
    drop(inst);
    // 5. Creating and destroying 10x the material instances.
    let one_parent = churn_scaling(pairs, (1, 1000), (1, 10_000));
    let many_parents = churn_scaling(pairs, (100, 10), (1000, 10));
    println!(
        "materials: prep {:.2} ms with 1,024 instances vs {:.2} ms with 8 materials ({:.2}x, {:.1} ns/primitive); base draws {base_draws} (8 materials: {}); creating 1,000 instances: frame {:.2} vs {:.2} ms ({:.2}x), {created_rebuilt} commands rebuilt, {created_pipelines} pipelines; 1,000 parameter changes: {} commands, {} pipelines, {} bytes; {} instances changed; texture upload with mips {tex_mb_s:.0} MB/s vs buffer {buf_mb_s:.0} MB/s; 10x the instances: {:.1}x the time under one parent ({:.1} vs {:.1} ms), {:.1}x across many parents ({:.1} vs {:.1} ms)",
        prep.measured.median,
        prep.baseline.median,
        prep.ratio.median,
        per_primitive.median,
        plain_stats.pass(MeshPass::Base).draws,
        creating.measured.median,
        creating.baseline.median,
        creating.ratio.median,
        changed.cached_commands_built,
        changed.pipelines_created,
        changed.material_bytes_uploaded,
        targets.len(),
        one_parent.ratio.median,
        one_parent.measured.median,
        one_parent.baseline.median,
        many_parents.ratio.median,
        many_parents.measured.median,
        many_parents.baseline.median,
    );
    let rows = [
        Row::spread(
            "renderer: cached frame prep, 1,024 material instances of 8 parents vs 8 materials (160k cubes)",
            prep.ratio,
            "x",
            Some("<= 1.2"),
        ),
        Row::spread("renderer: cached frame prep per primitive with 1,024 material instances", per_primitive, "ns", None),
        Row::new(
            "renderer: base-pass draws with 1,024 material instances (= distinct pipeline+material pairs in view)",
            base_draws as f64,
            "draws",
            Some("= 1024"),
        ),
        Row::spread(
            "renderer: frame creating 1,000 material instances vs a normal frame (160k cubes)",
            creating.ratio,
            "x",
            Some("<= 1.5"),
        ),
        Row::new(
            "renderer: cached commands rebuilt when creating 1,000 material instances",
            created_rebuilt as f64,
            "commands",
            Some("= 0"),
        ),
        Row::new(
            "renderer: cached commands rebuilt by 1,000 parameter changes",
            changed.cached_commands_built as f64,
            "commands",
            Some("= 0"),
        ),
        Row::new("renderer: pipelines created by 1,000 parameter changes", changed.pipelines_created as f64, "pipelines", Some("= 0")),
        Row::new(
            "renderer: material bytes uploaded for 1,000 parameter changes (1,000 x 256-byte block)",
            changed.material_bytes_uploaded as f64,
            "bytes",
            Some("= 256000"),
        ),
        Row::new("renderer: texture upload with GPU mip generation (2048x2048 RGBA8)", tex_mb_s, "MB/s", None),
        Row::new("renderer: texture upload with mips vs a plain staged buffer upload of the same bytes", tex_mb_s / buf_mb_s, "x", None),
        Row::spread(
            "renderer: creating and destroying 10,000 vs 1,000 material instances of one parent",
            one_parent.ratio,
            "x",
            Some("<= 12"),
        ),
        Row::spread(
            "renderer: creating and destroying 1,000 vs 100 parent materials with 10 instances each",
            many_parents.ratio,
            "x",
            Some("<= 12"),
        ),
    ];
    let path = write_rows("renderer-materials", &rows).unwrap();
    println!("wrote {}", path.display());
}
