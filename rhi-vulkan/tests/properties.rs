//! A property test of the RHI's safe API: random sequences of safe calls —
//! buffers and textures made and destroyed (also from another thread while a
//! frame records), writes, reads, copies, fills, passes, pipelines, streams,
//! push constants, draws of every kind, dispatches — end in typed errors or
//! in work the Khronos validation layer (synchronization validation
//! included) accepts: zero messages, no panic, no crash.
//!
//! The one contract the test keeps on the caller's side is the one the RHI
//! documents as the caller's: barriers name the state a texture is in (the
//! test tracks it) and a transfer into a buffer is preceded by a barrier
//! from shader reads. Every other argument is random, mostly invalid.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rhi_vulkan::*;
use std::sync::atomic::{AtomicU64, Ordering};
use test_support::QuadGrid;

/// Draws and dispatches that were recorded, and calls refused, over the run:
/// the test must reach both valid work and typed errors.
static RECORDED: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);

const COMPUTE_WGSL: &str = r#"
var<immediate> push: vec4<u32>;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    out[id.x] = push.x;
}
"#;

#[derive(Clone, Debug)]
enum Cmd {
    Begin {
        texture: usize,
        area: (i32, i32, u32, u32),
        secondary: bool,
    },
    End,
    BindGrid,
    BindCompute,
    ComputeGroup {
        buffer: usize,
    },
    Viewport((i32, i32, u32, u32)),
    Scissor((i32, i32, u32, u32)),
    Vertex {
        slot: u32,
        buffers: Vec<(usize, u64)>,
    },
    Index {
        buffer: usize,
        offset: u64,
        u16: bool,
    },
    Push {
        offset: u32,
        len: u32,
    },
    Draw {
        vertices: u32,
        instances: u32,
        first_vertex: u32,
        first_instance: u32,
    },
    DrawIndexed {
        indices: u32,
        instances: u32,
        first_index: u32,
        first_instance: u32,
    },
    Indirect {
        buffer: usize,
        offset: u64,
        count: u32,
        stride: u32,
    },
    Dispatch {
        x: u32,
    },
    CopyInFrame {
        src: usize,
        dst: usize,
        size: u64,
    },
    Secondaries {
        draws: u32,
    },
    /// A valid set-up in one step (pass, grid pipeline, streams, viewport,
    /// scissor, push constants), so random draws after it often succeed.
    Prepare {
        texture: usize,
    },
}

#[derive(Clone, Debug)]
enum Op {
    CreateBuffer { size: u64, usage: u32, host: bool },
    DestroyBuffer(usize),
    CreateTexture { width: u32, height: u32, format: usize, usage: u32 },
    DestroyTexture(usize),
    Write { buffer: usize, offset: u64, len: usize },
    Read { buffer: usize, offset: u64, len: u64 },
    Copy { src: usize, dst: usize, src_offset: u64, dst_offset: u64, size: u64 },
    Fill { buffer: usize, offset: u64, size: u64 },
    Frame { cmds: Vec<Cmd>, destroy_meanwhile: Option<usize> },
}

fn small() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..300, Just(u64::MAX), Just(u64::MAX - 15), 0u64..5000]
}

fn rect() -> impl Strategy<Value = (i32, i32, u32, u32)> {
    (
        prop_oneof![Just(0i32), -4i32..40, Just(i32::MAX)],
        prop_oneof![Just(0i32), -4i32..40],
        prop_oneof![Just(32u32), 0u32..70, Just(u32::MAX)],
        prop_oneof![Just(32u32), 0u32..70],
    )
}

fn count() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0u32..4, 2 => 0u32..10, 1 => Just(6), 1 => Just(u32::MAX), 1 => 0u32..100_000]
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        (0usize..4, rect(), any::<bool>()).prop_map(|(texture, area, secondary)| Cmd::Begin { texture, area, secondary }),
        Just(Cmd::End),
        Just(Cmd::BindGrid),
        Just(Cmd::BindGrid),
        Just(Cmd::BindCompute),
        (0usize..8).prop_map(|buffer| Cmd::ComputeGroup { buffer }),
        rect().prop_map(Cmd::Viewport),
        rect().prop_map(Cmd::Scissor),
        (0u32..9, prop::collection::vec((0usize..8, small()), 0..3)).prop_map(|(slot, buffers)| Cmd::Vertex { slot, buffers }),
        (0usize..8, small(), any::<bool>()).prop_map(|(buffer, offset, u16)| Cmd::Index { buffer, offset, u16 }),
        (prop_oneof![Just(0u32), 0u32..20], prop_oneof![Just(16u32), 0u32..24]).prop_map(|(offset, len)| Cmd::Push { offset, len }),
        (count(), count(), count(), count()).prop_map(|(vertices, instances, first_vertex, first_instance)| Cmd::Draw {
            vertices,
            instances,
            first_vertex,
            first_instance
        }),
        (count(), count(), count(), count()).prop_map(|(indices, instances, first_index, first_instance)| Cmd::DrawIndexed {
            indices,
            instances,
            first_index,
            first_instance
        }),
        (0usize..8, small(), 0u32..4, prop_oneof![Just(20u32), 0u32..40]).prop_map(|(buffer, offset, count, stride)| Cmd::Indirect {
            buffer,
            offset,
            count,
            stride
        }),
        prop_oneof![0u32..4, Just(u32::MAX)].prop_map(|x| Cmd::Dispatch { x }),
        (0usize..8, 0usize..8, small()).prop_map(|(src, dst, size)| Cmd::CopyInFrame { src, dst, size }),
        (0u32..3).prop_map(|draws| Cmd::Secondaries { draws }),
        (0usize..4).prop_map(|texture| Cmd::Prepare { texture }),
        (0usize..4).prop_map(|texture| Cmd::Prepare { texture }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (prop_oneof![Just(0u64), 1u64..4096, Just(u64::MAX)], 0u32..128, any::<bool>()).prop_map(|(size, usage, host)| Op::CreateBuffer { size, usage, host }),
        1 => (0usize..8).prop_map(Op::DestroyBuffer),
        2 => (prop_oneof![Just(32u32), 0u32..48, Just(u32::MAX)], prop_oneof![Just(32u32), 0u32..48], 0usize..6, 0u32..32).prop_map(|(width, height, format, usage)| Op::CreateTexture { width, height, format, usage }),
        1 => (0usize..4).prop_map(Op::DestroyTexture),
        2 => (0usize..8, small(), 0usize..600).prop_map(|(buffer, offset, len)| Op::Write { buffer, offset, len }),
        1 => (0usize..8, small(), small()).prop_map(|(buffer, offset, len)| Op::Read { buffer, offset, len }),
        2 => (0usize..8, 0usize..8, small(), small(), small()).prop_map(|(src, dst, src_offset, dst_offset, size)| Op::Copy { src, dst, src_offset, dst_offset, size }),
        1 => (0usize..8, small(), small()).prop_map(|(buffer, offset, size)| Op::Fill { buffer, offset, size }),
        4 => (prop::collection::vec(cmd(), 0..14), prop::option::of(0usize..8)).prop_map(|(cmds, destroy_meanwhile)| Op::Frame { cmds, destroy_meanwhile }),
    ]
}

const FORMATS: [Format; 6] =
    [Format::Rgba8Unorm, Format::Rgba8Srgb, Format::Bgra8Unorm, Format::Bgra8Srgb, Format::Rgba16Float, Format::Depth32Float];

/// What the test knows: every handle ever made (destroyed ones stay, so
/// stale handles are used too) and each live texture's state.
struct World<'d> {
    device: &'d Device,
    grid: QuadGrid,
    compute: PipelineHandle,
    buffers: Vec<BufferHandle>,
    textures: Vec<(TextureHandle, TextureState)>,
}

impl World<'_> {
    fn buffer(&self, i: usize) -> Option<BufferHandle> {
        (!self.buffers.is_empty()).then(|| self.buffers[i % self.buffers.len()])
    }

    fn texture(&self, i: usize) -> Option<usize> {
        (!self.textures.is_empty()).then(|| i % self.textures.len())
    }

    /// The caller's half of the barrier contract before a transfer writes `b`.
    fn before_transfer(cmd: &mut CommandList<'_>, src: BufferHandle, dst: BufferHandle) -> Result<()> {
        cmd.buffer_barrier(src, BufferState::ShaderRead, BufferState::TransferSrc)?;
        cmd.buffer_barrier(dst, BufferState::ShaderRead, BufferState::TransferDst)
    }

    fn apply(&mut self, op: &Op) {
        let d = self.device;
        match op {
            Op::CreateBuffer { size, usage, host } => {
                let usage = BufferUsage::from_bits_truncate(*usage);
                let desc = if *host { BufferDesc::host_visible("p", *size, usage) } else { BufferDesc::gpu_only("p", *size, usage) };
                if let Ok(b) = d.create_buffer(&desc) {
                    self.buffers.push(b);
                }
            }
            Op::DestroyBuffer(i) => {
                if let Some(b) = self.buffer(*i) {
                    d.destroy_buffer(b);
                }
            }
            Op::CreateTexture { width, height, format, usage } => {
                let desc = TextureDesc {
                    label: "p".into(),
                    width: *width,
                    height: *height,
                    format: FORMATS[*format],
                    usage: TextureUsage::from_bits_truncate(*usage),
                    mip_levels: 1,
                    dimension: Default::default(),
                    samples: 1,
                };
                if let Ok(t) = d.create_texture(&desc) {
                    self.textures.push((t, TextureState::Undefined));
                }
            }
            Op::DestroyTexture(i) => {
                if let Some(t) = self.texture(*i) {
                    d.destroy_texture(self.textures.remove(t).0);
                }
            }
            Op::Write { buffer, offset, len } => {
                if let Some(b) = self.buffer(*buffer) {
                    let host = d.buffer_desc(b).is_ok_and(|desc| desc.memory != MemoryLocation::GpuOnly);
                    if host {
                        // Host-visible memory may still be read by a frame in
                        // flight: the documented rule is to ring it; here, wait.
                        let _ = d.wait_idle();
                    }
                    let _ = d.write_buffer(b, *offset, &vec![7u8; *len]);
                }
            }
            Op::Read { buffer, offset, len } => {
                if let Some(b) = self.buffer(*buffer) {
                    let _ = d.read_buffer(b, *offset, (*len).min(1 << 20));
                }
            }
            Op::Copy { src, dst, src_offset, dst_offset, size } => {
                if let (Some(s), Some(t)) = (self.buffer(*src), self.buffer(*dst)) {
                    let _ = d.immediate(|cmd| {
                        Self::before_transfer(cmd, s, t)?;
                        cmd.copy_buffer(s, *src_offset, t, *dst_offset, *size)
                    });
                }
            }
            Op::Fill { buffer, offset, size } => {
                if let Some(b) = self.buffer(*buffer) {
                    let _ = d.immediate(|cmd| {
                        cmd.buffer_barrier(b, BufferState::ShaderRead, BufferState::TransferDst)?;
                        cmd.fill_buffer(b, *offset, *size, 3)
                    });
                }
            }
            Op::Frame { cmds, destroy_meanwhile } => self.frame(cmds, *destroy_meanwhile),
        }
    }

    fn frame(&mut self, cmds: &[Cmd], destroy_meanwhile: Option<usize>) {
        let d = self.device;
        let Ok(mut frame) = d.begin_frame() else { return };
        let mut open: Option<(usize, bool)> = None;
        let mut transferred = false;
        let mut dispatched = false;
        let mut compute_buffer = None;
        for (n, c) in cmds.iter().enumerate() {
            if n == cmds.len() / 2 {
                if let Some(b) = destroy_meanwhile.and_then(|i| self.buffer(i)) {
                    // Another thread destroys a buffer the frame may have bound.
                    std::thread::scope(|s| s.spawn(|| d.destroy_buffer(b)).join().unwrap());
                }
            }
            let cmd = frame.cmd();
            let result = match c {
                Cmd::Prepare { texture } => {
                    let Some(t) = self.texture(*texture).filter(|_| open.is_none()) else { continue };
                    let (handle, state) = self.textures[t];
                    let desc = d.texture_desc(handle).unwrap();
                    if desc.format != Format::Rgba8Unorm || !desc.usage.contains(TextureUsage::RENDER_TARGET) {
                        continue;
                    }
                    cmd.texture_barrier(handle, state, TextureState::ColorAttachment).unwrap();
                    self.textures[t].1 = TextureState::ColorAttachment;
                    let area = Rect::from_size(desc.width.min(32), desc.height.min(32));
                    let rendering = RenderingDesc {
                        color: vec![ColorAttachment { texture: handle, load: LoadOp::Clear([0.0; 4]), store: true, resolve: None }],
                        depth: None,
                        area,
                    };
                    cmd.begin_rendering(&rendering, RenderingContents::Inline).unwrap();
                    open = Some((t, false));
                    self.grid.record(cmd, area, 0, 1, 1)
                }
                Cmd::Begin { texture, area, secondary } => {
                    let Some(t) = self.texture(*texture).filter(|_| open.is_none()) else { continue };
                    let (handle, state) = self.textures[t];
                    let desc = d.texture_desc(handle).unwrap();
                    let attachment = if desc.format.is_depth() { TextureState::DepthAttachment } else { TextureState::ColorAttachment };
                    if !desc.usage.contains(TextureUsage::RENDER_TARGET) || cmd.texture_barrier(handle, state, attachment).is_err() {
                        continue;
                    }
                    self.textures[t].1 = attachment;
                    let area = Rect::new(area.0, area.1, area.2, area.3);
                    let rendering = if desc.format.is_depth() {
                        RenderingDesc {
                            color: vec![],
                            depth: Some(DepthAttachment { texture: handle, load: LoadOp::Clear(1.0), store: true, resolve: None }),
                            area,
                        }
                    } else {
                        RenderingDesc {
                            color: vec![ColorAttachment { texture: handle, load: LoadOp::Clear([0.0; 4]), store: true, resolve: None }],
                            depth: None,
                            area,
                        }
                    };
                    let contents = if *secondary { RenderingContents::Secondary } else { RenderingContents::Inline };
                    cmd.begin_rendering(&rendering, contents).map(|_| open = Some((t, *secondary)))
                }
                Cmd::End => cmd.end_rendering().map(|()| open = None),
                Cmd::BindGrid => cmd.bind_pipeline(self.grid.pipeline),
                Cmd::BindCompute => cmd.bind_pipeline(self.compute),
                Cmd::ComputeGroup { buffer } => {
                    let Some(b) = self.buffer(*buffer) else { continue };
                    let r = frame
                        .create_bind_group(self.compute, 0, &[(0, BindingResource::Buffer(b))])
                        .and_then(|g| frame.cmd().bind_group(0, &g));
                    if r.is_ok() {
                        compute_buffer = Some(b);
                    }
                    r
                }
                Cmd::Viewport(r) => cmd.set_viewport(Rect::new(r.0, r.1, r.2, r.3)),
                Cmd::Scissor(r) => cmd.set_scissor(Rect::new(r.0, r.1, r.2, r.3)),
                Cmd::Vertex { slot, buffers } => {
                    let list: Vec<_> = buffers.iter().filter_map(|(b, off)| self.buffer(*b).map(|b| (b, *off))).collect();
                    cmd.bind_vertex_buffers(*slot, &list)
                }
                Cmd::Index { buffer, offset, u16 } => {
                    let Some(b) = self.buffer(*buffer) else { continue };
                    cmd.bind_index_buffer(b, *offset, if *u16 { IndexFormat::Uint16 } else { IndexFormat::Uint32 })
                }
                Cmd::Push { offset, len } => cmd.push_constants(*offset, &vec![0u8; *len as usize]),
                Cmd::Draw { vertices, instances, first_vertex, first_instance } => {
                    cmd.draw(*vertices, *instances, *first_vertex, *first_instance)
                }
                Cmd::DrawIndexed { indices, instances, first_index, first_instance } => {
                    cmd.draw_indexed(*indices, *instances, *first_index, 0, *first_instance)
                }
                Cmd::Indirect { buffer, offset, count, stride } => {
                    let Some(b) = self.buffer(*buffer) else { continue };
                    cmd.draw_indexed_indirect(b, *offset, *count, *stride)
                }
                Cmd::Dispatch { x } => {
                    // One dispatch per frame, its writes made visible to
                    // later reads (the caller's half of the contract).
                    let Some(b) = compute_buffer.filter(|_| !dispatched) else { continue };
                    let r = cmd.dispatch(*x, 1, 1);
                    if r.is_ok() {
                        dispatched = true;
                        let _ = cmd.buffer_barrier(b, BufferState::ShaderWrite, BufferState::ShaderRead);
                    }
                    r
                }
                Cmd::CopyInFrame { src, dst, size } => {
                    // One transfer per frame keeps the barrier contract simple.
                    let (Some(s), Some(t)) = (self.buffer(*src), self.buffer(*dst)) else { continue };
                    if transferred || cmd.in_pass() || Self::before_transfer(cmd, s, t).is_err() {
                        continue;
                    }
                    transferred = true;
                    let r = cmd.copy_buffer(s, 0, t, 0, *size);
                    let _ = cmd.buffer_barrier(t, BufferState::TransferDst, BufferState::ShaderRead);
                    r
                }
                Cmd::Secondaries { draws } => {
                    let Some((t, true)) = open else { continue };
                    let format = d.texture_desc(self.textures[t].0).unwrap().format;
                    let layout = if format.is_depth() {
                        RenderingLayout { color_formats: vec![], depth_format: Some(format), samples: 1 }
                    } else {
                        RenderingLayout { color_formats: vec![format], depth_format: None, samples: 1 }
                    };
                    let grid = &self.grid;
                    let recorded = frame.record_secondary(&layout, |cmd| grid.record(cmd, Rect::from_size(32, 32), 0, 4, *draws));
                    match recorded {
                        Ok((s, ())) => frame.cmd().execute_secondaries(std::slice::from_ref(&s)),
                        Err(e) => Err(e),
                    }
                }
            };
            match (result, c) {
                (Ok(_), Cmd::Prepare { .. } | Cmd::Draw { .. } | Cmd::DrawIndexed { .. } | Cmd::Indirect { .. } | Cmd::Dispatch { .. }) => {
                    RECORDED.fetch_add(1, Ordering::Relaxed);
                }
                (Err(_), _) => {
                    REFUSED.fetch_add(1, Ordering::Relaxed);
                }
                _ => {}
            }
        }
        if open.is_some() {
            let _ = frame.cmd().end_rendering();
        }
        frame.submit().expect("a frame whose passes are closed submits");
    }
}

fn run(ops: &[Op]) {
    let device = test_support::new_device();
    {
        let grid = QuadGrid::new(&device, Format::Rgba8Unorm, 2, 2).unwrap();
        let shader = device.create_shader("compute.wgsl", COMPUTE_WGSL).unwrap();
        let compute = device.create_compute_pipeline(&ComputePipelineDesc { shader: ShaderStageDesc::new(shader, "main") }).unwrap();
        let mut world = World { device: &device, grid, compute, buffers: Vec::new(), textures: Vec::new() };
        // One usable target, so frames have something to draw into.
        let color = device.create_texture(&TextureDesc::render_target("p", 32, 32, Format::Rgba8Unorm)).unwrap();
        world.textures.push((color, TextureState::Undefined));
        for op in ops {
            world.apply(op);
        }
        device.wait_idle().unwrap();
        for b in world.buffers.drain(..) {
            device.destroy_buffer(b);
        }
        for (t, _) in world.textures.drain(..) {
            device.destroy_texture(t);
        }
    }
    let validation = device.validation();
    let report = device.shutdown();
    assert_eq!(report.leaked_allocations, 0);
    test_support::assert_clean(&validation);
}

#[test]
fn random_safe_calls_end_in_typed_errors_or_valid_work() {
    let config = Config { cases: test_support::property_cases(64), max_shrink_iters: 64, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    runner
        .run(&prop::collection::vec(op(), 1..24), |ops| {
            run(&ops);
            Ok(())
        })
        .unwrap();
    let (recorded, refused) = (RECORDED.load(Ordering::Relaxed), REFUSED.load(Ordering::Relaxed));
    println!("{recorded} draws and dispatches recorded, {refused} calls refused");
    assert!(recorded > 0 && refused > 0, "the sequences must reach valid work and typed errors");
}
