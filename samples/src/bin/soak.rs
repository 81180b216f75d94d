//! `cargo xtask soak [--frames N]`: many frames of churn, to show that
//! nothing grows. Every frame the sample
//!
//! * spawns two static-mesh actors (cubes and spheres), the first with a
//!   material created for it at run time (parameters only: the default
//!   material function with a new color), the second with a texture made
//!   for it (8x8, mips generated) and a material instance of a textured
//!   parent that samples it (so a bind group), and, once 16 live, destroys
//!   the two oldest with the materials, instances and textures made for them;
//! * every 16 frames creates three materials with new WGSL material
//!   functions (new sources; one opaque, one masked, one translucent; all
//!   one-sided or, every other time, all two-sided), so that pass pipelines
//!   and their shader modules are made for them, puts each on a churned mesh
//!   for 2 frames and then destroys the meshes and the materials (and with
//!   them those pipelines);
//! * re-creates one of four procedural mesh sections with a new vertex
//!   count (a grid of 4..=11 quads a side, so its buffers are reallocated)
//!   and clears the one created two frames before;
//! * adds 25 instances to an instanced static mesh and removes 25, and every
//!   64 frames destroys that ISM actor and spawns a new one (2,000 instances);
//! * starts one particle system (a new component) and, once 8 live, stops
//!   (destroys) the oldest;
//! * spawns one animated skeletal mesh (a worm made in code, wriggling:
//!   its pose evaluated and sent every frame) and, once 8 live, destroys
//!   the oldest.
//!
//! The churn repeats every 64 frames (every period above divides 64), so
//! after warm-up the live objects, and with them the memory, repeat a fixed
//! pattern, and any 64 frames see each of its peaks (the test's quarter of
//! 300 frames is 75). Every
//! frame the sample reads its resident set (`VmRSS` of `/proc/self/status`;
//! the kB there need no page size) on the game thread and, through a render
//! command that first waits for the frames on the GPU and collects the
//! deletion queue's garbage (so the counts do not depend on how far behind
//! the GPU happens to be at that instant: sampled without waiting,
//! resources pending deletion and their allocations jitter by what one
//! frame retires, which a per-frame churn of textures and bind groups made
//! exceed the second quarter's peak once in a while), the device's object counts
//! ([`rhi_vulkan::Device::counts`]) on the render thread: live buffers,
//! textures (each with its image view), samplers, shader modules, pipelines,
//! descriptor-set and pipeline layouts, descriptor pools, command pools and
//! the command buffers allocated from them, resources waiting in the
//! deletion queue and gpu-allocator allocations; and the renderer's material
//! table (one entry per material slot: a destroyed material's slot is reused,
//! so it is as long as the most materials alive at once; also the length of
//! its GPU copy) and material shaders in use.
//! Descriptor sets are not counted one by one: they are allocated from
//! per-frame-slot descriptor pools that are reset every frame, so a set
//! that leaked would show as pools that grow. Every series is reduced to
//! one maximum per window of `--sample-every` frames (default: a hundredth
//! of the run, at least 1). A run of fewer than four windows is reported
//! but not judged.
//!
//! **The rule ("flat after warm-up").** With the windows split in quarters
//! (the first quarter is warm-up), let `Q2` be the maximum over the second
//! quarter and `H2` the maximum over the last half. A count is flat when
//! `H2 <= Q2`: it returns to a bounded plateau and never exceeds what
//! it reached before. Host memory is flat when `H2 <= Q2 * 1.05 + 4 MiB`:
//! the allocator's arenas and the validation layer's bookkeeping jitter a
//! little, a leak grows without bound. The run fails (exit 1) when any
//! series grows or the validation layer reported any error or warning. The
//! pipeline cache's hits and misses only ever grow (misses count every
//! pipeline made); they are reported, not judged.
//!
//! **Host memory is judged only without synchronization validation.** The
//! synchronization validation of the Khronos layer we run on (1.3.239, that
//! of Debian 12) keeps state for every buffer ever created: measured alone,
//! creating, uploading and destroying a buffer costs about 3 KB of RSS for
//! good with it on, and nothing with it off or without the layer. So with
//! sync validation on (rhi-vulkan's default where the layer offers it) the
//! RSS series is reported but not judged; `PROXIMA_SYNC_VALIDATION=0` keeps
//! the core validation layer and judges it. `cargo xtask soak` runs both.
//!
//! `--report PATH` writes every series (each with its first and last
//! window), the rule's figures, the churn counts and the verdict as JSON.
//! The frame size defaults to 64×64 so that 10,000 frames (the default) run
//! in minutes on lavapipe; `--width`/`--height` and every other common
//! option work as in any sample.

use clap::{CommandFactory, FromArgMatches, Parser};
use engine_core::*;
use glam::{Affine3A, Quat, Vec2, Vec3, Vec4};
use instancing::{InstancedStaticMeshComponent, TransformSpace};
use particles::{ParticleMaterials, ParticleSystem, ParticleSystemComponent};
use procmesh::{ProceduralMeshComponent, SectionData};
use renderer::{
    BlendMode, Material, MaterialId, MaterialInstance, MaterialParameter, MaterialParams, MaterialShader, Texture2D, TextureId,
};
use rhi_vulkan::{DeviceCounts, SamplerDesc, ValidationCounters};
use samples::{runner, CommonOptions};
use serde_json::json;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const NAME: &str = "soak";
/// Host memory may exceed the second quarter's maximum by this factor plus
/// [`RSS_SLACK_MIB`] (see the module docs).
const RSS_FACTOR: f64 = 1.05;
const RSS_SLACK_MIB: f64 = 4.0;
/// Live static-mesh actors, particle systems, and the ISM's lifetime in frames.
const STATIC_MESHES: usize = 16;
const PARTICLE_SYSTEMS: usize = 8;
/// Animated skeletal meshes alive at once.
const CREATURES: usize = 8;
const ISM_LIFETIME: u64 = 64;
/// Procedural mesh sections taking turns (two live at a time).
const SECTIONS: usize = 4;
const ISM_INSTANCES: u32 = 2000;
const ISM_CHURN: u32 = 25;
/// Materials with new WGSL functions every this many frames (one per blend
/// mode), drawn for [`SHADER_MATERIAL_FRAMES`] frames, then destroyed. The
/// period divides the ISM's, so that the whole churn repeats every 64
/// frames: a quarter of the test's 300 frames sees every phase of it.
const SHADER_MATERIAL_PERIOD: u64 = 16;
const SHADER_MATERIAL_FRAMES: u64 = 2;

/// What the render thread reports each frame.
#[derive(Clone, Copy, Default)]
struct Counts {
    device: DeviceCounts,
    /// Entries of the renderer's material table (and of its GPU copy).
    material_table: usize,
    /// Material shaders in use.
    material_shaders: usize,
    /// Textures alive in the renderer (the built-in ones included).
    textures: usize,
}

/// A count judged: its name in the report and how to read it.
type Kind = (&'static str, fn(&Counts) -> usize);

/// The counts judged: the device's (`"device"` in the report) and the
/// renderer's (`"renderer"`).
const DEVICE_KINDS: [Kind; 13] = [
    ("bind_groups", |c| c.device.bind_groups),
    ("buffers", |c| c.device.buffers),
    ("textures", |c| c.device.textures),
    ("samplers", |c| c.device.samplers),
    ("shaders", |c| c.device.shaders),
    ("pipelines", |c| c.device.pipelines),
    ("layouts", |c| c.device.layouts),
    ("descriptor_pools", |c| c.device.descriptor_pools),
    ("command_pools", |c| c.device.command_pools),
    ("command_buffers", |c| c.device.command_buffers),
    ("query_pools", |c| c.device.query_pools),
    ("pending_deletions", |c| c.device.pending_deletions),
    ("allocations", |c| c.device.allocations),
];
const RENDERER_KINDS: [Kind; 3] =
    [("material_table", |c| c.material_table), ("material_shaders", |c| c.material_shaders), ("textures", |c| c.textures)];

#[derive(Parser, Debug)]
#[command(
    name = "soak",
    about = "Frames of churn (components, materials, sections, instances, particle systems); checks that memory and Vulkan object counts stay flat"
)]
struct Options {
    /// Write the memory series and the verdict as JSON.
    #[arg(long, value_name = "PATH")]
    report: Option<PathBuf>,
    /// Frames per sample window (default: frames / 100, at least 1).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    sample_every: Option<u64>,
    #[command(flatten)]
    common: CommonOptions,
}

fn main() {
    // The soak's own defaults: 10,000 frames at 64x64.
    let command = Options::command()
        .mut_arg("frames", |a| a.default_value("10000"))
        .mut_arg("width", |a| a.default_value("64"))
        .mut_arg("height", |a| a.default_value("64"));
    let o = Options::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    match run(&o) {
        // The report has said what failed.
        Ok(false) => std::process::exit(1),
        result => samples::exit_on_error(NAME, result.map(drop)),
    }
}

/// The resident set in MiB, from `VmRSS` (kB) of `/proc/self/status`.
fn rss_mib() -> anyhow::Result<f64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).ok_or_else(|| anyhow::anyhow!("no VmRSS in /proc/self/status"))?;
    let kb: f64 = line.trim_start_matches("VmRSS:").trim().trim_end_matches("kB").trim().parse()?;
    Ok(kb / 1024.0)
}

/// One series checked by the rule of the module docs.
struct Verdict {
    series: Vec<f64>,
    second_quarter_max: f64,
    last_half_max: f64,
    limit: f64,
    flat: bool,
    /// Whether there were windows enough (4) to judge; if not, `flat` is vacuous.
    enough: bool,
}

/// Window maxima of `per_frame` and the rule's figures; `limit(q2)` is the
/// largest last-half maximum still called flat.
fn verdict(per_frame: &[f64], every: u64, limit: impl Fn(f64) -> f64) -> Verdict {
    let series: Vec<f64> = per_frame.chunks(every as usize).map(|w| w.iter().copied().fold(f64::MIN, f64::max)).collect();
    let n = series.len();
    let max = |s: &[f64]| s.iter().copied().fold(f64::MIN, f64::max);
    if n < 4 {
        // Too short a run to tell warm-up from growth: reported, not judged.
        let m = max(&series).max(0.0);
        return Verdict { flat: true, enough: false, second_quarter_max: m, last_half_max: m, limit: m, series };
    }
    let (q2, h2) = (max(&series[n / 4..n / 2]), max(&series[n / 2..]));
    let limit = limit(q2);
    Verdict { flat: h2 <= limit, enough: true, second_quarter_max: q2, last_half_max: h2, limit, series }
}

fn summary(name: &str, unit: &str, v: &Verdict) -> String {
    let first = v.series.first().copied().unwrap_or(0.0);
    let last = v.series.last().copied().unwrap_or(0.0);
    format!(
        "{name}: first window {first:.1}{unit}, second-quarter max {:.1}{unit}, last-half max {:.1}{unit} (limit {:.1}{unit}), last window {last:.1}{unit}: {}",
        v.second_quarter_max,
        v.last_half_max,
        v.limit,
        if !v.enough {
            "too few windows (4) to judge"
        } else if v.flat {
            "flat"
        } else {
            "GROWS"
        }
    )
}

const PARTICLES_JSON: &str = r#"{"emitters": [{
  "name": "puff",
  "required": {"material": "M_Puff", "blend_mode": "translucent", "screen_alignment": "facing_camera",
               "sort_mode": "distance_to_view", "max_particles": 150},
  "modules": [
    {"spawn": {"rate": 120.0, "bursts": [{"time": 0.0, "count": 40}]}},
    {"lifetime": {"uniform": {"min": 0.4, "max": 0.9}}},
    {"initial_location": {"sphere": {"center": [0.0, 0.0, 0.0], "radius": 0.2}}},
    {"initial_velocity": {"cone": {"direction": [0.0, 0.0, 1.0], "angle": 0.5, "speed": {"uniform": {"min": 1.0, "max": 3.0}}}}},
    {"initial_size": {"uniform": {"min": [0.2, 0.2], "max": [0.4, 0.4]}}},
    {"initial_color": {"constant": [1.0, 0.7, 0.4, 0.8]}},
    {"acceleration": [0.0, 0.0, -2.0]}
  ]
}]}"#;

/// A `(n+1)²`-vertex wavy grid over a 6×6 square centred at `at`.
fn grid_section(at: Vec2, n: u32, phase: f32) -> (Vec<Vec3>, Vec<u32>) {
    let row = n + 1;
    let positions = (0..row * row)
        .map(|k| {
            let (i, j) = ((k % row) as f32 / n as f32, (k / row) as f32 / n as f32);
            let p = at + Vec2::new(i - 0.5, j - 0.5) * 6.0;
            Vec3::new(p.x, p.y, 0.3 * (p.x * 1.3 + phase).sin() * (p.y * 0.9).cos())
        })
        .collect();
    let mut triangles = Vec::with_capacity((n * n * 6) as usize);
    for j in 0..n {
        for i in 0..n {
            let a = j * row + i;
            triangles.extend_from_slice(&[a, a + 1, a + row + 1, a, a + row + 1, a + row]);
        }
    }
    (positions, triangles)
}

/// The transform of instance `k` of the ISM: a ring of small cubes.
fn instance(k: u64) -> Affine3A {
    let a = (k % 997) as f32 * 0.0063;
    let r = 9.0 + (k % 7) as f32 * 0.4;
    Affine3A::from_scale_rotation_translation(Vec3::splat(0.25), Quat::from_rotation_z(a), Vec3::new(r * a.cos(), r * a.sin(), 0.2))
}

/// The `n`th material with its own WGSL function: a new source (and name)
/// each time, so the passes make new pipelines and shader modules for it.
/// Blend modes cycle (opaque, masked, translucent); two-sidedness flips
/// every three.
fn shader_material(n: u64) -> Material {
    let tint = |k: u64| 0.4 + ((n * k) % 7) as f32 * 0.1;
    let wgsl = format!(
        "// soak material {n}\nfn material_main(in: MaterialInput) -> MaterialOutput {{\n    var out = default_material(in);\n    out.base_color = out.base_color * vec3<f32>({:.1}, {:.1}, {:.1});\n    out.emissive = vec3<f32>({:.1}, 0.0, 0.0);\n    return out;\n}}\n",
        tint(1),
        tint(3),
        tint(5),
        tint(2) * 0.2,
    );
    let blend_mode = [BlendMode::Opaque, BlendMode::Masked, BlendMode::Translucent][(n % 3) as usize];
    let params = MaterialParams { base_color: Vec4::new(0.9, 0.8, 0.7, 0.8), ..Default::default() };
    Material {
        shader: MaterialShader::new(&format!("soak_material_{n}.wgsl"), &wgsl),
        blend_mode,
        two_sided: (n / 3) % 2 == 1,
        params,
        ..Default::default()
    }
}

/// The material made for the static mesh spawned `n`th: the default
/// function with its own color (parameters only, no new pipeline).
fn colored_material(n: u64) -> Material {
    let c = |k: u64| 0.2 + ((n * k) % 11) as f32 * 0.07;
    Material::colored(Vec4::new(c(1), c(3), c(7), 1.0))
}

/// The parent of the static meshes' textured instances: its albedo
/// texture times a tint.
fn textured_parent() -> Material {
    let wgsl = "fn material_main(in: MaterialInput) -> MaterialOutput {\n    var out = default_material(in);\n    out.base_color = texture_albedo(in.uv0).rgb * param_tint().rgb;\n    return out;\n}\n";
    Material::with_shader("soak_textured.wgsl", wgsl)
        .with_parameter(MaterialParameter::texture("albedo", TextureId::WHITE, SamplerDesc::material()))
        .with_parameter(MaterialParameter::vector("tint", Vec4::ONE))
}

/// The 8x8 checker made for the static mesh spawned `n`th (mips generated).
fn soak_texture(n: u64) -> Texture2D {
    let (a, b) = ([40 + (n * 37 % 200) as u8, 90, 160, 255], [230, 220, 200, 255]);
    let data = (0..64).flat_map(|i| if (i % 8 + i / 8) % 2 == 0 { a } else { b }).collect();
    Texture2D::from_rgba8(&format!("soak {n}"), 8, 8, data, true)
}

fn spawn_ism(engine: &mut Engine, material: MaterialId, first: u64) -> anyhow::Result<ComponentId> {
    let mut c = InstancedStaticMeshComponent::new(StaticMesh::cube())?;
    let transforms: Vec<Affine3A> = (first..first + ISM_INSTANCES as u64).map(instance).collect();
    c.add_instances(&transforms, TransformSpace::Component)?;
    let (_, id) = engine.world.spawn_actor("soak ism", Box::new(c), Transform::IDENTITY)?;
    engine.world.set_material(id, 0, material)?;
    Ok(id)
}

/// What the churn did, for the report.
#[derive(Default, Debug, serde::Serialize)]
struct Churn {
    static_meshes_spawned: u64,
    static_meshes_destroyed: u64,
    /// Materials created at run time: parameters only / with a new WGSL function.
    colored_materials_created: u64,
    colored_materials_destroyed: u64,
    shader_materials_created: u64,
    shader_materials_destroyed: u64,
    /// Textures and textured material instances made for static meshes.
    textures_created: u64,
    textures_destroyed: u64,
    material_instances_created: u64,
    material_instances_destroyed: u64,
    sections_recreated: u64,
    sections_cleared: u64,
    instances_added: u64,
    instances_removed: u64,
    ism_components_respawned: u64,
    particle_systems_started: u64,
    particle_systems_stopped: u64,
    creatures_spawned: u64,
    creatures_destroyed: u64,
}

/// Sets the stage, churns and samples every frame, then judges, reports
/// and says whether the run passed.
fn run(o: &Options) -> anyhow::Result<bool> {
    let frames = o.common.frame_count();
    let every = o.sample_every.unwrap_or((frames / 100).max(1));
    let mut engine = soak_engine(o)?;
    let materials = base_materials(&mut engine)?;
    let puffs = Puffs::load(&mut engine)?;
    let terrain = spawn_stage(&mut engine, materials[3])?;
    let mut soak = Soak::new(&mut engine, materials, puffs, terrain)?;
    let mut samples = Samples::with_capacity(frames);

    let result = runner::run(NAME, &o.common, &mut engine, |engine, frame, _dt| {
        soak.churn_static_meshes(engine, frame)?;
        soak.churn_shader_materials(engine, frame)?;
        soak.churn_sections(engine, frame)?;
        soak.churn_instances(engine, frame)?;
        soak.churn_particles(engine, frame)?;
        soak.churn_creatures(engine, frame)?;
        samples.take(engine)?;
        Ok(runner::SampleFigures::default())
    });

    let findings = Findings::judge(&mut engine, &samples, frames, every, result.is_ok());
    findings.print(&soak.churn);
    if let Some(path) = &o.report {
        write_report(path, &findings.report(o, &soak.churn, &result))?;
    }
    result?;
    findings.explain_failures();
    Ok(findings.passed)
}

/// The engine, with a small shadow map unless `--cvar` sets one: a small
/// shadow map suits the small frame (and keeps 10,000 frames short).
fn soak_engine(o: &Options) -> anyhow::Result<Engine> {
    let mut engine = runner::engine(NAME, &o.common)?;
    if !o.common.cvar.iter().any(|(n, _)| n.eq_ignore_ascii_case(renderer::cvars::SHADOW_MAP_SIZE)) {
        engine.render_thread().set_cvar(renderer::cvars::SHADOW_MAP_SIZE, "256")?;
    }
    Ok(engine)
}

/// Four colored materials that live for the whole run: one per procedural
/// section; the third also on the ISM, the fourth also on the ground.
fn base_materials(engine: &mut Engine) -> anyhow::Result<Vec<MaterialId>> {
    let colors =
        [Vec4::new(0.8, 0.3, 0.2, 1.0), Vec4::new(0.2, 0.6, 0.3, 1.0), Vec4::new(0.3, 0.4, 0.8, 1.0), Vec4::new(0.7, 0.7, 0.6, 1.0)];
    let mut materials = Vec::new();
    for c in colors {
        materials.push(engine.render_thread().create_material(Material::colored(c))?);
    }
    Ok(materials)
}

/// The particle system every churned particle component plays, and its materials.
struct Puffs {
    system: Arc<ParticleSystem>,
    materials: ParticleMaterials,
}

impl Puffs {
    fn load(engine: &mut Engine) -> anyhow::Result<Self> {
        let system = Arc::new(ParticleSystem::from_json_str(PARTICLES_JSON)?);
        let materials = ParticleMaterials::for_system(engine.render_thread(), &system)?;
        Ok(Puffs { system, materials })
    }
}

/// What stays for the whole run: the camera, the sun, the ground (wearing
/// `ground_material`) and the procedural mesh whose sections are churned.
/// Returns that procedural mesh.
fn spawn_stage(engine: &mut Engine, ground_material: MaterialId) -> anyhow::Result<ComponentId> {
    let eye = Vec3::new(0.0, -22.0, 14.0);
    let mut camera = CameraComponent::default();
    camera.0.near = 0.2;
    camera.0.far = 200.0;
    engine.world.spawn_actor("camera", Box::new(camera), Transform::new(eye, look_rotation(eye, Vec3::ZERO), Vec3::ONE))?;
    let sun = DirectionalLightComponent { intensity: 1.2, color: Vec3::ONE, cast_shadows: true, ..Default::default() };
    engine.world.spawn_actor(
        "sun",
        Box::new(sun),
        Transform::new(Vec3::ZERO, look_rotation(Vec3::ZERO, Vec3::new(0.4, 0.6, -0.7)), Vec3::ONE),
    )?;
    let (_, ground) = engine.world.spawn_actor(
        "ground",
        Box::new(StaticMeshComponent::new(StaticMesh::plane())),
        Transform::from_translation_scale(Vec3::new(0.0, 0.0, -0.05), Vec3::splat(40.0)),
    )?;
    engine.world.set_material(ground, 0, ground_material)?;
    let (_, terrain) = engine.world.spawn_actor("soak procmesh", Box::new(ProceduralMeshComponent::new()), Transform::IDENTITY)?;
    Ok(terrain)
}

/// The churn's state: what it draws with, what it keeps alive, and what it did.
struct Soak {
    /// The four base materials ([`base_materials`]).
    materials: Vec<MaterialId>,
    /// The parent of the per-mesh textured instances.
    textured: MaterialId,
    puffs: Puffs,
    /// The procedural mesh whose sections take turns.
    terrain: ComponentId,
    /// Static-mesh actors, each with the material (or instance and texture) made for it, if any.
    statics: VecDeque<(ActorId, Option<MaterialId>, Option<TextureId>)>,
    /// The meshes drawn with materials that have their own WGSL functions.
    shader_meshes: Vec<(ActorId, MaterialId)>,
    /// The live particle systems, oldest first.
    systems: VecDeque<ActorId>,
    /// The worm every churned creature is, its clip, and the live ones.
    worm: (Arc<SkeletalMesh>, Arc<engine_core::animation::AnimationClip>),
    creatures: VecDeque<ActorId>,
    ism: ComponentId,
    /// The number of the next instance added to the ISM (see [`instance`]).
    next_instance: u64,
    churn: Churn,
}

impl Soak {
    /// Makes the textured parent and spawns the first ISM.
    fn new(engine: &mut Engine, materials: Vec<MaterialId>, puffs: Puffs, terrain: ComponentId) -> anyhow::Result<Self> {
        let textured = engine.render_thread().create_material(textured_parent())?;
        let ism = spawn_ism(engine, materials[2], 0)?;
        Ok(Soak {
            materials,
            textured,
            puffs,
            terrain,
            statics: VecDeque::new(),
            shader_meshes: Vec::new(),
            systems: VecDeque::new(),
            worm: samples::creature::worm()?,
            creatures: VecDeque::new(),
            ism,
            next_instance: ISM_INSTANCES as u64,
            churn: Churn::default(),
        })
    }

    /// Static meshes: two in (the first with a material of its own, the
    /// second with a texture and instance of its own), the oldest out.
    fn churn_static_meshes(&mut self, engine: &mut Engine, frame: u64) -> anyhow::Result<()> {
        for k in 0..2u64 {
            self.spawn_static_mesh(engine, frame * 2 + k, k == 0)?;
        }
        while self.statics.len() > STATIC_MESHES {
            let (actor, own, texture) = self.statics.pop_front().expect("not empty");
            engine.world.destroy_actor(actor)?;
            self.churn.static_meshes_destroyed += 1;
            if let Some(material) = own {
                engine.render_thread().destroy_material(material)?;
                self.churn.colored_materials_destroyed += u64::from(texture.is_none());
                self.churn.material_instances_destroyed += u64::from(texture.is_some());
            }
            if let Some(texture) = texture {
                engine.render_thread().destroy_texture(texture)?;
                self.churn.textures_destroyed += 1;
            }
        }
        Ok(())
    }

    /// The `n`th static mesh, a cube or a sphere on a circle, with a colored
    /// material made for it or (`colored` false) a texture and a textured
    /// instance made for it.
    fn spawn_static_mesh(&mut self, engine: &mut Engine, n: u64, colored: bool) -> anyhow::Result<()> {
        let mesh = if n.is_multiple_of(2) { StaticMesh::cube() } else { StaticMesh::sphere(12) };
        let a = n as f32 * 0.39;
        let at = Vec3::new(5.0 * a.cos(), 5.0 * a.sin(), 0.6);
        let (actor, id) = engine.world.spawn_actor(
            "soak static",
            Box::new(StaticMeshComponent::new(mesh)),
            Transform::from_translation_scale(at, Vec3::splat(0.8)),
        )?;
        let (own, texture) = if colored {
            self.churn.colored_materials_created += 1;
            (engine.render_thread().create_material(colored_material(n))?, None)
        } else {
            let texture = engine.render_thread().create_texture(soak_texture(n))?;
            self.churn.textures_created += 1;
            self.churn.material_instances_created += 1;
            (
                engine.render_thread().create_material_instance(MaterialInstance::of(self.textured).with_texture("albedo", texture))?,
                Some(texture),
            )
        };
        engine.world.set_material(id, 0, own)?;
        self.statics.push_back((actor, Some(own), texture));
        self.churn.static_meshes_spawned += 1;
        Ok(())
    }

    /// Materials with their own WGSL functions: three made every
    /// [`SHADER_MATERIAL_PERIOD`] frames, drawn for [`SHADER_MATERIAL_FRAMES`], destroyed.
    fn churn_shader_materials(&mut self, engine: &mut Engine, frame: u64) -> anyhow::Result<()> {
        if frame.is_multiple_of(SHADER_MATERIAL_PERIOD) {
            for k in 0..3u64 {
                let material = engine.render_thread().create_material(shader_material(frame / SHADER_MATERIAL_PERIOD * 3 + k))?;
                self.churn.shader_materials_created += 1;
                let at = Vec3::new(-3.0 + 3.0 * k as f32, 0.0, 2.0);
                let (actor, id) = engine.world.spawn_actor(
                    "soak shader material",
                    Box::new(StaticMeshComponent::new(StaticMesh::sphere(16))),
                    Transform::from_translation_scale(at, Vec3::splat(1.2)),
                )?;
                engine.world.set_material(id, 0, material)?;
                self.shader_meshes.push((actor, material));
            }
        } else if frame % SHADER_MATERIAL_PERIOD == SHADER_MATERIAL_FRAMES {
            for (actor, material) in self.shader_meshes.drain(..) {
                engine.world.destroy_actor(actor)?;
                engine.render_thread().destroy_material(material)?;
                self.churn.shader_materials_destroyed += 1;
            }
        }
        Ok(())
    }

    /// Procedural sections: one re-created with a new size, the one
    /// created two frames before cleared.
    fn churn_sections(&mut self, engine: &mut Engine, frame: u64) -> anyhow::Result<()> {
        let section = (frame % SECTIONS as u64) as usize;
        let n = 4 + (frame % 8) as u32;
        let (positions, triangles) = grid_section(Vec2::new(-10.5 + 7.0 * section as f32, 6.0), n, frame as f32 * 0.1);
        let material = self.materials[section];
        engine.world.with_component_mut(self.terrain, |c: &mut ProceduralMeshComponent| {
            c.create_mesh_section(section, SectionData::new(&positions, &triangles), false)?;
            c.set_material(section, Some(material.into()))?;
            // Created two frames ago (and not cleared since): two sections live.
            if frame >= 2 {
                c.clear_mesh_section((section + 2) % SECTIONS)?;
            }
            Ok::<(), procmesh::ProcMeshError>(())
        })??;
        self.churn.sections_recreated += 1;
        self.churn.sections_cleared += u64::from(frame >= 2);
        Ok(())
    }

    /// Instances: a whole new ISM every [`ISM_LIFETIME`] frames, else
    /// [`ISM_CHURN`] in and as many out.
    fn churn_instances(&mut self, engine: &mut Engine, frame: u64) -> anyhow::Result<()> {
        if frame > 0 && frame.is_multiple_of(ISM_LIFETIME) {
            let actor = engine.world.actor_of(self.ism)?;
            engine.world.destroy_actor(actor)?;
            self.ism = spawn_ism(engine, self.materials[2], self.next_instance)?;
            self.next_instance += ISM_INSTANCES as u64;
            self.churn.ism_components_respawned += 1;
        } else {
            let added: Vec<Affine3A> = (self.next_instance..self.next_instance + ISM_CHURN as u64).map(instance).collect();
            self.next_instance += ISM_CHURN as u64;
            let stride = 1 + (frame % 16) as u32;
            engine.world.with_component_mut(self.ism, |c: &mut InstancedStaticMeshComponent| {
                c.add_instances(&added, TransformSpace::Component)?;
                for k in 0..ISM_CHURN {
                    c.remove_instance((k * stride * 7) % c.instance_count())?;
                }
                Ok::<(), instancing::InstancingError>(())
            })??;
            self.churn.instances_added += ISM_CHURN as u64;
            self.churn.instances_removed += ISM_CHURN as u64;
        }
        Ok(())
    }

    /// Skeletal meshes: one animated worm spawned, the oldest destroyed.
    fn churn_creatures(&mut self, engine: &mut Engine, frame: u64) -> anyhow::Result<()> {
        let mut c = SkeletalMeshComponent::new(self.worm.0.clone());
        c.add_clip(self.worm.1.clone())?;
        c.play(0, true)?;
        let a = frame as f32 * 0.41;
        let at = Transform::new(Vec3::new(4.0 * a.cos() + 4.0, 4.0 * a.sin(), 0.2), Quat::from_rotation_z(a), Vec3::ONE);
        let (actor, id) = engine.world.spawn_actor("soak creature", Box::new(c), at)?;
        engine.world.set_material(id, 0, self.materials[frame as usize % 3])?;
        self.creatures.push_back(actor);
        self.churn.creatures_spawned += 1;
        while self.creatures.len() > CREATURES {
            engine.world.destroy_actor(self.creatures.pop_front().expect("not empty"))?;
            self.churn.creatures_destroyed += 1;
        }
        Ok(())
    }

    /// Particle systems: one started, the oldest stopped.
    fn churn_particles(&mut self, engine: &mut Engine, frame: u64) -> anyhow::Result<()> {
        let a = frame as f32 * 0.73;
        let at = Transform::from_translation(Vec3::new(3.0 * a.cos(), 3.0 * a.sin() - 3.0, 0.5));
        let c = ParticleSystemComponent::new(self.puffs.system.clone(), frame, self.puffs.materials.clone())?
            .with_spawn_transform(at.to_mat4())?;
        self.systems.push_back(engine.world.spawn_actor("soak particles", Box::new(c), at)?.0);
        self.churn.particle_systems_started += 1;
        while self.systems.len() > PARTICLE_SYSTEMS {
            engine.world.destroy_actor(self.systems.pop_front().expect("not empty"))?;
            self.churn.particle_systems_stopped += 1;
        }
        Ok(())
    }
}

/// The per-frame samples: host memory, read on the game thread, and the
/// device's and the renderer's counts, which the render thread pushes.
struct Samples {
    rss: Vec<f64>,
    counts: Arc<Mutex<Vec<Counts>>>,
}

impl Samples {
    fn with_capacity(frames: u64) -> Self {
        Samples { rss: Vec::with_capacity(frames as usize), counts: Arc::new(Mutex::new(Vec::with_capacity(frames as usize))) }
    }

    /// This frame's sample: host memory now, the counts through a render command.
    fn take(&mut self, engine: &mut Engine) -> anyhow::Result<()> {
        self.rss.push(rss_mib()?);
        let sink = self.counts.clone();
        engine.render_thread().enqueue_render_command(move |ctx| {
            // At GPU idle, garbage collected: what is pending then does not
            // depend on how far behind the GPU happens to be at this instant.
            if let Err(e) = ctx.finish().map_err(|e| e.to_string()).and_then(|()| ctx.device.collect_garbage().map_err(|e| e.to_string())) {
                eprintln!("soak: waiting for the GPU before sampling: {e}");
            }
            let counts = Counts {
                device: ctx.device.counts(),
                material_table: ctx.scene.materials.len(),
                material_shaders: ctx.scene.materials.shader_count(),
                textures: ctx.scene.textures.live(),
            };
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(counts);
        })?;
        Ok(())
    }
}

/// What the validation layer reported over the run.
struct ValidationFigures {
    /// `None` when the render thread could not be asked.
    counters: Option<Arc<ValidationCounters>>,
    enabled: bool,
    sync: bool,
    errors: u64,
    warnings: u64,
}

impl ValidationFigures {
    fn read(engine: &mut Engine) -> Self {
        let v = engine.render_thread().with_context(|ctx| ctx.device.validation());
        let (enabled, sync, errors, warnings) = match &v {
            Ok(v) => (v.enabled(), v.sync_validation(), v.errors(), v.warnings()),
            Err(_) => (false, false, 0, 0),
        };
        ValidationFigures { counters: v.ok(), enabled, sync, errors, warnings }
    }

    /// Asked, and no error or warning.
    fn clean(&self) -> bool {
        self.counters.is_some() && self.errors == 0 && self.warnings == 0
    }
}

/// The run judged by the rule of the module docs.
struct Findings {
    frames: u64,
    every: u64,
    rss: Verdict,
    /// Host memory is judged only without synchronization validation (see the module docs).
    rss_judged: bool,
    device: Vec<(&'static str, Verdict)>,
    renderer: Vec<(&'static str, Verdict)>,
    /// The device's counts at the last sample (the pipeline cache's hits and misses).
    last: DeviceCounts,
    validation: ValidationFigures,
    passed: bool,
}

impl Findings {
    /// Judges `samples` by windows of `every` frames, and asks the
    /// validation layer; `run_ok` is whether every frame ran.
    fn judge(engine: &mut Engine, samples: &Samples, frames: u64, every: u64, run_ok: bool) -> Findings {
        let counts = samples.counts.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let rss = verdict(&samples.rss, every, |q2| q2 * RSS_FACTOR + RSS_SLACK_MIB);
        let judge = |kinds: &[Kind]| -> Vec<(&'static str, Verdict)> {
            kinds
                .iter()
                .map(|&(kind, count)| {
                    let per_frame: Vec<f64> = counts.iter().map(|c| count(c) as f64).collect();
                    (kind, verdict(&per_frame, every, |q2| q2))
                })
                .collect()
        };
        let (device, renderer) = (judge(&DEVICE_KINDS), judge(&RENDERER_KINDS));
        let counts_flat = device.iter().chain(&renderer).all(|(_, v)| v.flat);
        let last = counts.last().map(|c| c.device).unwrap_or_default();
        let validation = ValidationFigures::read(engine);
        // See the module docs: sync validation's own state grows with churn.
        let rss_judged = !validation.sync && rss.enough;
        let passed = run_ok
            && validation.clean()
            && (rss.flat || !rss_judged)
            && counts_flat
            && samples.rss.len() as u64 == frames
            && counts.len() as u64 == frames;
        Findings { frames, every, rss, rss_judged, device, renderer, last, validation, passed }
    }

    fn print(&self, churn: &Churn) {
        let (frames, every, sync) = (self.frames, self.every, self.validation.sync);
        println!("{NAME}: {frames} frames, one sample window per {every} frames");
        println!(
            "{NAME}: {}{}",
            summary("host memory (RSS)", " MiB", &self.rss),
            if !sync {
                ""
            } else {
                " (not judged: synchronization validation keeps state per buffer ever created; PROXIMA_SYNC_VALIDATION=0 judges it)"
            }
        );
        for (kind, v) in self.device.iter().chain(&self.renderer) {
            println!("{NAME}: {}", summary(kind, "", v));
        }
        println!(
            "{NAME}: pipeline cache {} hits, {} misses (not judged: they only grow)",
            self.last.pipeline_cache_hits, self.last.pipeline_cache_misses
        );
        println!("{NAME}: churn {churn:?}");
        println!(
            "{NAME}: validation {} (sync {}), {} errors, {} warnings",
            if self.validation.enabled { "on" } else { "off" },
            if sync { "on" } else { "off" },
            self.validation.errors,
            self.validation.warnings
        );
    }

    /// The `--report` JSON: every series, the rule's figures, the churn counts and the verdict.
    fn report(&self, o: &Options, churn: &Churn, result: &anyhow::Result<()>) -> serde_json::Value {
        let series = |v: &Verdict, judged: bool| {
            json!({
                "series": v.series,
                "first_window": v.series.first(),
                "last_window": v.series.last(),
                "second_quarter_max": v.second_quarter_max,
                "last_half_max": v.last_half_max,
                "limit": v.limit,
                "flat": v.flat,
                "judged": judged,
            })
        };
        let group = |vs: &[(&str, Verdict)]| -> serde_json::Map<String, serde_json::Value> {
            vs.iter().map(|(kind, v)| (kind.to_string(), series(v, v.enough))).collect()
        };
        let (every, v) = (self.every, &self.validation);
        json!({
            "frames": self.frames,
            "sample_every": every,
            "width": o.common.width,
            "height": o.common.height,
            "rule": format!("series = the maximum per window of {every} frames; Q2 = max over the second quarter of the windows, H2 = max over the last half; counts flat when H2 <= Q2; RSS flat when H2 <= Q2 * {RSS_FACTOR} + {RSS_SLACK_MIB} MiB, judged only with synchronization validation off"),
            "rss_mib": series(&self.rss, self.rss_judged),
            "device": group(&self.device),
            "renderer": group(&self.renderer),
            "pipeline_cache": { "hits": self.last.pipeline_cache_hits, "misses": self.last.pipeline_cache_misses },
            "churn": churn,
            "validation": { "enabled": v.enabled, "sync": v.sync, "errors": v.errors, "warnings": v.warnings },
            "error": result.as_ref().err().map(|e| format!("{e:#}")),
            "passed": self.passed,
        })
    }

    /// Says on stderr what failed: validation messages, growing series.
    fn explain_failures(&self) {
        let v = &self.validation;
        if !v.clean() {
            eprintln!(
                "{NAME}: the validation layer reported {} error(s) and {} warning(s): {:#?}",
                v.errors,
                v.warnings,
                v.counters.as_ref().map(|c| c.messages()).unwrap_or_default()
            );
        }
        if self.rss_judged && !self.rss.flat {
            eprintln!("{NAME}: host memory grows after warm-up (see above)");
        }
        let grown: Vec<&str> = self.device.iter().chain(&self.renderer).filter(|(_, v)| !v.flat).map(|(kind, _)| *kind).collect();
        if !grown.is_empty() {
            eprintln!("{NAME}: counts grow after warm-up: {} (see above)", grown.join(", "));
        }
    }
}

fn write_report(path: &Path, report: &serde_json::Value) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(report)? + "\n")?;
    println!("{NAME}: report written to {}", path.display());
    Ok(())
}
