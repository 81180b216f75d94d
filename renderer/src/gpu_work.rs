//! GPU work before the passes: compute a proxy declares and the renderer
//! records, with the barriers its declaration implies (as kajiya's
//! `PassBuilder` does for its passes).
//!
//! A dynamic proxy that needs the GPU to produce what its draws read — the
//! instancing feature's culling writes compacted instances and indirect
//! arguments — queues a [`GpuWork`] through
//! [`MeshElementCollector::add_gpu_work`](crate::MeshElementCollector::add_gpu_work)
//! while it collects its mesh elements. The work names the buffers and
//! textures it reads and the ones it writes, and for each written buffer how
//! the passes read it afterwards ([`PassRead`]). The renderer records every
//! queued work in the frame's `gpu_prepare` stage, in the order they were
//! queued (primitive order), and puts in the barriers.
//!
//! ## Buffers
//!
//! * before a work: each buffer it writes goes from its state in the passes
//!   (the previous frame's reads) — or, when an earlier work of this frame
//!   wrote or read it, from that — to [`BufferState::ShaderWrite`]; each
//!   buffer it reads that an earlier work of this frame wrote goes
//!   `ShaderWrite → ShaderRead`;
//! * between two dispatches of one work: its written buffers
//!   `ShaderWrite → ShaderWrite` (a work's dispatches run in order, each
//!   seeing what the earlier ones wrote);
//! * after every work: each written buffer goes `ShaderWrite →` each state
//!   the passes read it in.
//!
//! A barrier covers the whole buffer (the RHI's barriers do), so a
//! declaration names whole buffers.
//!
//! ## Textures
//!
//! A work samples the textures it reads ([`GpuWork::reads_texture`]: sampled
//! or depth texture bindings, in [`TextureState::ShaderRead`]) and writes
//! the ones it writes as storage textures ([`GpuWork::writes_texture`]:
//! storage texture bindings, in [`TextureState::General`]). A texture has a
//! layout, and a barrier must name the layout the texture is in, so every
//! texture a work declares **rests in `ShaderRead`** between frames,
//! whatever the frame's works were: the one state sampling needs, in a
//! later work, a pass or a later frame alike. That is why a written texture
//! names no [`PassRead`]: whoever reads it after the works reads it there.
//!
//! * before a work: each texture it writes goes from where it is (`ShaderRead`
//!   at the frame's start, or what an earlier work of this frame left) to
//!   `General` (`General → General` after an earlier write); each texture it
//!   reads that an earlier work of this frame wrote goes
//!   `General → ShaderRead`;
//! * between two dispatches of one work: its written textures
//!   `General → General`;
//! * after every work: each texture a work wrote and no later work read goes
//!   `General → ShaderRead`.
//!
//! A work that fails records no barrier, so the rest state holds whichever
//! works ran: a texture a failed work would have written is still in
//! `ShaderRead` for a later work that samples it. A texture is in
//! `ShaderRead` the first time a work declares it: one made with
//! [`Device::create_texture_with_data`](rhi_vulkan::Device::create_texture_with_data)
//! is, one made empty is moved there once (a
//! [`texture_barrier`](rhi_vulkan::CommandList::texture_barrier) from
//! `Undefined` in [`Device::immediate`](rhi_vulkan::Device::immediate)). A
//! written texture needs [`TextureUsage::SAMPLED`] (to rest in `ShaderRead`)
//! besides [`TextureUsage::STORAGE`]; a work whose written texture lacks it
//! fails. A texture a work both reads and writes counts as written: it is
//! in `General` while the work runs, so the work binds it only to storage
//! texture bindings. A barrier covers every mip level.
//!
//! ## Recording
//!
//! A work records through a [`GpuWorkRecorder`]: bind groups, compute
//! pipelines and dispatches only — no barriers, no render passes. The
//! recorder refuses a bind group that binds a buffer or texture the work did
//! not declare, a writable storage binding of a buffer declared only as read,
//! a storage texture binding of a texture declared only as read, and a
//! sampled binding of a texture the work writes, so a declaration cannot
//! silently miss (or misstate) a resource the work binds.
//!
//! ## When a work fails
//!
//! A work is all or nothing as far as the renderer can make it: every
//! work's closure runs first, its commands collected, and only the works
//! whose closures returned `Ok` are then recorded, with the barriers their
//! declarations imply. A work that declares a buffer or texture that is no
//! longer alive, or writes a texture without `SAMPLED`, is refused before
//! its closure runs. A refused work, and one whose closure fails, is logged
//! (`log::error!`) and recorded not at all — no commands, no barriers of its
//! own — and the frame goes on. Its proxy's draws were built during
//! `collect_dynamic` and are drawn anyway, reading what the buffers and
//! textures hold without the work; a proxy whose draws must not show stale
//! data makes them draw nothing then (the instancing feature writes its
//! indirect arguments with zero instances from the host every frame; the
//! work fills in the counts). The frame stays
//! valid either way: the barriers of the works that ran are complete. An
//! error the RHI raises while a collected command is replayed (the recorder
//! checks that a compute pipeline is bound before each dispatch, and that
//! the dispatch is within the device's limits) is logged the same way; the
//! work's later commands are dropped, the barriers still go in.

use rhi_vulkan::{
    BindGroup, BindingResource, BindingType, BufferHandle, BufferState, Device, Frame, PipelineHandle, RhiError, TextureHandle,
    TextureState, TextureUsage, Usage,
};
use std::collections::HashMap;

/// How the passes read a buffer a [`GpuWork`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PassRead {
    /// As indirect draw arguments ([`BufferState::Indirect`]).
    Indirect,
    /// As vertex, index, uniform or storage data of draws
    /// ([`BufferState::ShaderRead`]).
    Shader,
}

impl PassRead {
    fn state(self) -> BufferState {
        match self {
            PassRead::Indirect => BufferState::Indirect,
            PassRead::Shader => BufferState::ShaderRead,
        }
    }
}

/// A buffer a [`GpuWork`] writes, and how the passes read it afterwards
/// (empty: only later works of the frame read it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferWrite {
    /// The buffer written.
    pub buffer: BufferHandle,
    /// How the frame's passes read it once the work is done (empty: they
    /// do not).
    pub read_by_passes: Vec<PassRead>,
}

/// Why a [`GpuWork`] was not recorded (or not completely).
#[derive(Debug, thiserror::Error)]
pub enum GpuWorkError {
    /// The RHI refused a command.
    #[error(transparent)]
    Rhi(#[from] RhiError),
    /// A bind group binds a buffer the work did not declare.
    #[error("GPU work {work:?} binds buffer {buffer:?} (binding {binding}), which it did not declare")]
    Undeclared {
        /// The work's label.
        work: String,
        /// The buffer.
        buffer: BufferHandle,
        /// The binding it is bound at.
        binding: u32,
    },
    /// A bind group binds a buffer the work declared only as read to a
    /// writable storage binding.
    #[error("GPU work {work:?} binds buffer {buffer:?} writable (binding {binding}), but declared it only as read")]
    WriteNotDeclared {
        /// The work's label.
        work: String,
        /// The buffer.
        buffer: BufferHandle,
        /// The binding it is bound at.
        binding: u32,
    },
    /// A dispatch with no compute pipeline bound in the work.
    #[error("GPU work {work:?} dispatches with no pipeline bound")]
    NoPipeline {
        /// The work's label.
        work: String,
    },
    /// A dispatch past the device's work-group limits.
    #[error("GPU work {work:?}: dispatch {groups:?} exceeds the device's {max:?} work groups")]
    TooManyGroups {
        /// The work's label.
        work: String,
        /// The work groups asked for, per dimension.
        groups: [u32; 3],
        /// The device's limit per dimension (`maxComputeWorkGroupCount`).
        max: [u32; 3],
    },
    /// A buffer the work declared is not alive.
    #[error("GPU work {work:?} declares buffer {buffer:?}, which is not alive")]
    DeadBuffer {
        /// The work's label.
        work: String,
        /// The buffer.
        buffer: BufferHandle,
    },
    /// A bind group binds a texture the work did not declare.
    #[error("GPU work {work:?} binds texture {texture:?} (binding {binding}), which it did not declare")]
    UndeclaredTexture {
        /// The work's label.
        work: String,
        /// The texture.
        texture: TextureHandle,
        /// The binding it is bound at.
        binding: u32,
    },
    /// A bind group binds a texture the work declared only as read to a
    /// storage texture binding.
    #[error("GPU work {work:?} binds texture {texture:?} as storage (binding {binding}), but declared it only as read")]
    TextureWriteNotDeclared {
        /// The work's label.
        work: String,
        /// The texture.
        texture: TextureHandle,
        /// The binding it is bound at.
        binding: u32,
    },
    /// A bind group binds a texture the work writes to a sampled (or depth)
    /// texture binding: while the work runs the texture is in
    /// [`TextureState::General`], not the `ShaderRead` a sampled binding
    /// reads it in.
    #[error(
        "GPU work {work:?} binds texture {texture:?} sampled (binding {binding}), but writes it (it is in General while the work runs)"
    )]
    SampledWhileWritten {
        /// The work's label.
        work: String,
        /// The texture.
        texture: TextureHandle,
        /// The binding it is bound at.
        binding: u32,
    },
    /// A texture the work declared is not alive.
    #[error("GPU work {work:?} declares texture {texture:?}, which is not alive")]
    DeadTexture {
        /// The work's label.
        work: String,
        /// The texture.
        texture: TextureHandle,
    },
}

/// What a [`GpuWork`] records; see [`GpuWorkRecorder`].
pub type RecordGpuWork = Box<dyn FnOnce(&mut GpuWorkRecorder<'_, '_>) -> Result<(), GpuWorkError> + Send + Sync>;

/// Compute work that runs before the passes, with the buffers and textures
/// it touches declared (module docs).
pub struct GpuWork {
    /// Names the work in errors, logs and profiler spans.
    pub label: String,
    /// Buffers it reads and does not write (storage or uniform).
    pub reads: Vec<BufferHandle>,
    /// Buffers it writes (and may read), with how the passes read them.
    pub writes: Vec<BufferWrite>,
    /// Textures it samples and does not write ([`TextureState::ShaderRead`]
    /// while it runs).
    pub reads_textures: Vec<TextureHandle>,
    /// Textures it writes (and may read) as storage textures
    /// ([`TextureState::General`] while it runs, `ShaderRead` after the
    /// frame's works).
    pub writes_textures: Vec<TextureHandle>,
    /// Records the work's commands; called once, in `gpu_prepare`.
    pub record: RecordGpuWork,
}

impl GpuWork {
    /// A work that records with `record`; declare its buffers with
    /// [`Self::reads`] and [`Self::writes`], its textures with
    /// [`Self::reads_texture`] and [`Self::writes_texture`].
    pub fn new(
        label: impl Into<String>,
        record: impl FnOnce(&mut GpuWorkRecorder<'_, '_>) -> Result<(), GpuWorkError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            label: label.into(),
            reads: Vec::new(),
            writes: Vec::new(),
            reads_textures: Vec::new(),
            writes_textures: Vec::new(),
            record: Box::new(record),
        }
    }

    /// Declares a buffer the work reads.
    pub fn reads(mut self, buffer: BufferHandle) -> Self {
        if !self.reads.contains(&buffer) {
            self.reads.push(buffer);
        }
        self
    }

    /// Declares a buffer the work writes, and how the passes read it (a
    /// buffer declared twice reads as the union).
    pub fn writes(mut self, buffer: BufferHandle, read_by_passes: &[PassRead]) -> Self {
        match self.writes.iter_mut().find(|w| w.buffer == buffer) {
            Some(w) => union(&mut w.read_by_passes, read_by_passes),
            None => self.writes.push(BufferWrite { buffer, read_by_passes: read_by_passes.to_vec() }),
        }
        self
    }

    /// Declares a texture the work samples (sampled or depth texture
    /// bindings): it is in [`TextureState::ShaderRead`] while the work runs —
    /// moved there from `General` when an earlier work of the frame wrote it.
    pub fn reads_texture(mut self, texture: TextureHandle) -> Self {
        if !self.reads_textures.contains(&texture) {
            self.reads_textures.push(texture);
        }
        self
    }

    /// Declares a texture the work writes (and may read) through storage
    /// texture bindings: it is in [`TextureState::General`] while the work
    /// runs, and back in [`TextureState::ShaderRead`] — where the passes,
    /// later works and later frames sample it — once no later work of the
    /// frame writes it. It needs [`TextureUsage::STORAGE`] and
    /// [`TextureUsage::SAMPLED`].
    pub fn writes_texture(mut self, texture: TextureHandle) -> Self {
        if !self.writes_textures.contains(&texture) {
            self.writes_textures.push(texture);
        }
        self
    }
}

fn union(to: &mut Vec<PassRead>, from: &[PassRead]) {
    for r in from {
        if !to.contains(r) {
            to.push(*r);
        }
    }
}

impl std::fmt::Debug for GpuWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuWork")
            .field("label", &self.label)
            .field("reads", &self.reads)
            .field("writes", &self.writes)
            .field("reads_textures", &self.reads_textures)
            .field("writes_textures", &self.writes_textures)
            .finish_non_exhaustive()
    }
}

/// The resources a work declared (a [`GpuWork`] without its closure).
struct Declaration {
    reads: Vec<BufferHandle>,
    writes: Vec<BufferWrite>,
    reads_textures: Vec<TextureHandle>,
    writes_textures: Vec<TextureHandle>,
}

impl Declaration {
    /// Why the work cannot run at all: a declared buffer or texture not
    /// alive, or a written texture that cannot rest in `ShaderRead`.
    fn check(&self, device: &Device, work: &str) -> Result<(), GpuWorkError> {
        let buffers = self.reads.iter().chain(self.writes.iter().map(|w| &w.buffer));
        if let Some(&buffer) = buffers.into_iter().find(|&&b| device.buffer_desc(b).is_err()) {
            return Err(GpuWorkError::DeadBuffer { work: work.to_string(), buffer });
        }
        for &texture in self.reads_textures.iter().chain(&self.writes_textures) {
            let Ok(desc) = device.texture_desc(texture) else {
                return Err(GpuWorkError::DeadTexture { work: work.to_string(), texture });
            };
            if self.writes_textures.contains(&texture) && !desc.usage.contains(TextureUsage::SAMPLED) {
                let usage = Usage::Texture(TextureUsage::SAMPLED);
                let needed_for = "a texture a GPU work writes (it rests in ShaderRead)";
                return Err(RhiError::MissingUsage { label: desc.label, usage, needed_for }.into());
            }
        }
        Ok(())
    }
}

/// A command of a work, kept until its closure returns.
enum Command {
    Pipeline(PipelineHandle),
    Group(u32, BindGroup),
    Dispatch(u32, u32, u32),
}

/// What a [`GpuWork`]'s closure records with: bind groups (checked against
/// the work's declaration), compute pipelines and dispatches. The commands
/// reach the frame when the closure returns `Ok`.
pub struct GpuWorkRecorder<'a, 'd> {
    frame: &'a Frame<'d>,
    work: &'a str,
    declared: &'a Declaration,
    commands: Vec<Command>,
    bound: bool,
}

impl<'a, 'd> GpuWorkRecorder<'a, 'd> {
    /// The device, to make pipelines and look up limits.
    pub fn device(&self) -> &'d Device {
        self.frame.device()
    }

    /// A bind group of this frame for `group` of `pipeline`
    /// ([`Frame::create_bind_group`]); every buffer and texture it binds
    /// must be declared by the work: a buffer as written where the binding
    /// is writable storage, a texture as written at a storage texture
    /// binding and as read only at a sampled (or depth) one.
    pub fn create_bind_group(
        &mut self,
        pipeline: PipelineHandle,
        group: u32,
        entries: &[(u32, BindingResource)],
    ) -> Result<BindGroup, GpuWorkError> {
        let layout = self.device().pipeline_bind_group_layout(pipeline, group)?;
        let d = self.declared;
        let work = || self.work.to_string();
        for &(binding, ref resource) in entries {
            let ty = layout.entries.iter().find(|e| e.binding == binding).map(|e| e.ty);
            match *resource {
                BindingResource::Buffer(buffer) | BindingResource::BufferRange { buffer, .. } => {
                    let written = d.writes.iter().any(|w| w.buffer == buffer);
                    if !written && !d.reads.contains(&buffer) {
                        return Err(GpuWorkError::Undeclared { work: work(), buffer, binding });
                    }
                    if ty == Some(BindingType::StorageBuffer { read_only: false }) && !written {
                        return Err(GpuWorkError::WriteNotDeclared { work: work(), buffer, binding });
                    }
                }
                BindingResource::Texture(texture) => {
                    let written = d.writes_textures.contains(&texture);
                    if !written && !d.reads_textures.contains(&texture) {
                        return Err(GpuWorkError::UndeclaredTexture { work: work(), texture, binding });
                    }
                    match ty {
                        Some(BindingType::StorageTexture) if !written => {
                            return Err(GpuWorkError::TextureWriteNotDeclared { work: work(), texture, binding });
                        }
                        Some(BindingType::SampledTexture | BindingType::DepthTexture) if written => {
                            return Err(GpuWorkError::SampledWhileWritten { work: work(), texture, binding });
                        }
                        _ => {}
                    }
                }
                BindingResource::Sampler(_) => {}
            }
        }
        Ok(self.frame.create_bind_group(pipeline, group, entries)?)
    }

    /// Binds a compute pipeline for the dispatches that follow.
    pub fn bind_pipeline(&mut self, pipeline: PipelineHandle) {
        self.commands.push(Command::Pipeline(pipeline));
        self.bound = true;
    }

    /// Binds `group` at `index` for the dispatches that follow.
    pub fn bind_group(&mut self, index: u32, group: BindGroup) {
        self.commands.push(Command::Group(index, group));
    }

    /// Dispatches `x`×`y`×`z` work groups; runs after the work's earlier
    /// dispatches and sees what they wrote.
    pub fn dispatch(&mut self, x: u32, y: u32, z: u32) -> Result<(), GpuWorkError> {
        if !self.bound {
            return Err(GpuWorkError::NoPipeline { work: self.work.to_string() });
        }
        let max = self.device().info().max_compute_work_group_count;
        if x > max[0] || y > max[1] || z > max[2] {
            return Err(GpuWorkError::TooManyGroups { work: self.work.to_string(), groups: [x, y, z], max });
        }
        self.commands.push(Command::Dispatch(x, y, z));
        Ok(())
    }
}

/// How far a buffer has come in this frame's works.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Track {
    /// Last touched by a work's write.
    Written,
    /// Read by a work after a write (made visible to shaders).
    Read,
}

/// One step of recording the works: a barrier, or work `i`'s commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step<B, T> {
    Barrier(B, BufferState, BufferState),
    TextureBarrier(T, TextureState, TextureState),
    Work(usize),
}

/// A work's declaration as [`plan`] reads it: buffers read, buffers
/// written with how the passes read them, textures read, textures written.
struct Declared<'a, B, T> {
    reads: &'a [B],
    writes: Vec<(B, &'a [PassRead])>,
    reads_textures: &'a [T],
    writes_textures: &'a [T],
}

/// The barriers around `works`, in order (module docs). Generic over the
/// buffer and texture handles so the rules are unit-tested without a
/// device.
fn plan<B: Copy + Eq + std::hash::Hash, T: Copy + Eq>(works: &[Declared<'_, B, T>]) -> Vec<Step<B, T>> {
    let mut steps = Vec::new();
    let mut track: HashMap<B, Track> = HashMap::new();
    // Written buffers in first-write order, with how the passes read them.
    let mut written: Vec<(B, Vec<PassRead>)> = Vec::new();
    // Written textures in first-write order, with the state the works left
    // them in (every other declared texture is in `ShaderRead`).
    let mut textures: Vec<(T, TextureState)> = Vec::new();
    for (i, work) in works.iter().enumerate() {
        let Declared { reads, writes, reads_textures, writes_textures } = work;
        for &b in reads.iter().filter(|&&b| !writes.iter().any(|w| w.0 == b)) {
            if track.get(&b) == Some(&Track::Written) {
                steps.push(Step::Barrier(b, BufferState::ShaderWrite, BufferState::ShaderRead));
                track.insert(b, Track::Read);
            }
        }
        for &(b, read_by_passes) in writes {
            match track.get(&b) {
                // Last used by earlier frames' works only.
                None if read_by_passes.is_empty() => steps.push(Step::Barrier(b, BufferState::ShaderWrite, BufferState::ShaderWrite)),
                // Last read by the passes of earlier frames.
                None => steps.extend(read_by_passes.iter().map(|r| Step::Barrier(b, r.state(), BufferState::ShaderWrite))),
                Some(Track::Written) => steps.push(Step::Barrier(b, BufferState::ShaderWrite, BufferState::ShaderWrite)),
                Some(Track::Read) => steps.push(Step::Barrier(b, BufferState::ShaderRead, BufferState::ShaderWrite)),
            }
            track.insert(b, Track::Written);
            match written.iter_mut().find(|x| x.0 == b) {
                Some(x) => union(&mut x.1, read_by_passes),
                None => written.push((b, read_by_passes.to_vec())),
            }
        }
        for &t in reads_textures.iter().filter(|t| !writes_textures.contains(t)) {
            if let Some(x) = textures.iter_mut().find(|x| x.0 == t && x.1 == TextureState::General) {
                steps.push(Step::TextureBarrier(t, TextureState::General, TextureState::ShaderRead));
                x.1 = TextureState::ShaderRead;
            }
        }
        for &t in writes_textures.iter() {
            match textures.iter_mut().find(|x| x.0 == t) {
                Some(x) => {
                    steps.push(Step::TextureBarrier(t, x.1, TextureState::General));
                    x.1 = TextureState::General;
                }
                None => {
                    steps.push(Step::TextureBarrier(t, TextureState::ShaderRead, TextureState::General));
                    textures.push((t, TextureState::General));
                }
            }
        }
        steps.push(Step::Work(i));
    }
    for (b, reads) in &written {
        steps.extend(reads.iter().map(|r| Step::Barrier(*b, BufferState::ShaderWrite, r.state())));
    }
    for &(t, state) in &textures {
        if state == TextureState::General {
            steps.push(Step::TextureBarrier(t, TextureState::General, TextureState::ShaderRead));
        }
    }
    steps
}

/// A work whose closure returned `Ok`: its declaration and its commands.
struct Collected {
    label: String,
    declared: Declaration,
    commands: Vec<Command>,
}

/// Records `works` into `frame`'s primary in order, with the barriers of
/// their declarations (module docs). Every closure runs first (its
/// commands kept); the works that failed are logged and left out; then the
/// barriers and the others' commands are recorded. Returns how many were
/// recorded completely. An `Err` is a barrier the RHI refused on a live
/// buffer or texture outside any pass: the frame cannot go on.
pub(crate) fn record_gpu_work(frame: &mut Frame<'_>, works: Vec<GpuWork>) -> rhi_vulkan::Result<usize> {
    let mut collected = Vec::with_capacity(works.len());
    for work in works {
        let GpuWork { label, reads, writes, reads_textures, writes_textures, record } = work;
        let declared = Declaration { reads, writes, reads_textures, writes_textures };
        if let Err(e) = declared.check(frame.device(), &label) {
            log::error!("GPU work {label:?} not recorded: {e}");
            continue;
        }
        let mut recorder = GpuWorkRecorder { frame: &*frame, work: &label, declared: &declared, commands: Vec::new(), bound: false };
        match record(&mut recorder) {
            Ok(()) => {
                let commands = recorder.commands;
                collected.push(Collected { label, declared, commands });
            }
            Err(e) => log::error!("GPU work {label:?} not recorded: {e}"),
        }
    }
    let declared: Vec<Declared<'_, BufferHandle, TextureHandle>> = collected
        .iter()
        .map(|c| Declared {
            reads: &c.declared.reads,
            writes: c.declared.writes.iter().map(|w| (w.buffer, w.read_by_passes.as_slice())).collect(),
            reads_textures: &c.declared.reads_textures,
            writes_textures: &c.declared.writes_textures,
        })
        .collect();
    let steps = plan(&declared);
    let mut commands: Vec<Option<Vec<Command>>> = collected.iter_mut().map(|c| Some(std::mem::take(&mut c.commands))).collect();
    let mut recorded = 0;
    let cmd = frame.cmd();
    for step in steps {
        match step {
            Step::Barrier(b, from, to) => cmd.buffer_barrier(b, from, to)?,
            Step::TextureBarrier(t, from, to) => cmd.texture_barrier(t, from, to)?,
            Step::Work(i) => match replay(cmd, &collected[i].declared, commands[i].take().unwrap_or_default()) {
                Ok(()) => recorded += 1,
                Err(e) => log::error!("GPU work {:?} recorded in part: {e}", collected[i].label),
            },
        }
    }
    Ok(recorded)
}

/// A work's collected commands into the primary, its written buffers and
/// textures ordered between dispatches.
fn replay(cmd: &mut rhi_vulkan::CommandList<'_>, declared: &Declaration, commands: Vec<Command>) -> rhi_vulkan::Result<()> {
    let mut dispatched = false;
    for c in commands {
        match c {
            Command::Pipeline(p) => cmd.bind_pipeline(p)?,
            Command::Group(i, g) => cmd.bind_group(i, &g)?,
            Command::Dispatch(x, y, z) => {
                if dispatched {
                    for w in &declared.writes {
                        cmd.buffer_barrier(w.buffer, BufferState::ShaderWrite, BufferState::ShaderWrite)?;
                    }
                    for &t in &declared.writes_textures {
                        cmd.texture_barrier(t, TextureState::General, TextureState::General)?;
                    }
                }
                cmd.dispatch(x, y, z)?;
                dispatched = true;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use BufferState::*;
    use TextureState::{General, ShaderRead as Sampled};
    const PASS_INDIRECT: PassRead = PassRead::Indirect;
    const PASS_SHADER: PassRead = PassRead::Shader;

    fn barrier(b: u32, from: BufferState, to: BufferState) -> Step<u32, u32> {
        Step::Barrier(b, from, to)
    }

    fn texture_barrier(t: u32, from: TextureState, to: TextureState) -> Step<u32, u32> {
        Step::TextureBarrier(t, from, to)
    }

    /// A work that declares buffers only.
    fn buffers<'a>(reads: &'a [u32], writes: Vec<(u32, &'a [PassRead])>) -> Declared<'a, u32, u32> {
        Declared { reads, writes, reads_textures: &[], writes_textures: &[] }
    }

    /// A work that declares textures only.
    fn textures<'a>(reads: &'a [u32], writes: &'a [u32]) -> Declared<'a, u32, u32> {
        Declared { reads: &[], writes: Vec::new(), reads_textures: reads, writes_textures: writes }
    }

    /// Instancing's culling: reads the instances (0), writes the visible
    /// instances (1, an instance stream) and the ring (2, indirect
    /// arguments and vertex data).
    #[test]
    fn a_work_s_writes_come_from_and_go_back_to_the_passes_reads() {
        let steps = plan(&[buffers(&[0], vec![(1, &[PASS_SHADER][..]), (2, &[PASS_INDIRECT, PASS_SHADER][..])])]);
        assert_eq!(
            steps,
            [
                barrier(1, ShaderRead, ShaderWrite),
                barrier(2, Indirect, ShaderWrite),
                barrier(2, ShaderRead, ShaderWrite),
                Step::Work(0),
                barrier(1, ShaderWrite, ShaderRead),
                barrier(2, ShaderWrite, Indirect),
                barrier(2, ShaderWrite, ShaderRead),
            ]
        );
    }

    #[test]
    fn later_works_are_ordered_after_the_writes_and_reads_of_earlier_ones() {
        // 0 writes scratch 7; 1 reads it, writes 8; 2 writes 7 again (after
        // 1's read) and 8 (after 1's write).
        let none: &[PassRead] = &[];
        let steps = plan(&[
            buffers(&[], vec![(7, none)]),
            buffers(&[7], vec![(8, &[PASS_SHADER][..])]),
            buffers(&[], vec![(7, none), (8, &[PASS_INDIRECT][..])]),
        ]);
        assert_eq!(
            steps,
            [
                barrier(7, ShaderWrite, ShaderWrite),
                Step::Work(0),
                barrier(7, ShaderWrite, ShaderRead),
                barrier(8, ShaderRead, ShaderWrite),
                Step::Work(1),
                barrier(7, ShaderRead, ShaderWrite),
                barrier(8, ShaderWrite, ShaderWrite),
                Step::Work(2),
                // 8 is read by the passes both ways; 7 by none.
                barrier(8, ShaderWrite, ShaderRead),
                barrier(8, ShaderWrite, Indirect),
            ]
        );
    }

    #[test]
    fn a_buffer_read_and_written_by_one_work_counts_as_written_and_reads_need_a_write_before() {
        // 3 is only ever read (uploaded data): no barrier for it.
        let steps = plan(&[buffers(&[3, 4], vec![(4, &[PASS_SHADER][..])]), buffers(&[3], vec![])]);
        assert_eq!(steps, [barrier(4, ShaderRead, ShaderWrite), Step::Work(0), Step::Work(1), barrier(4, ShaderWrite, ShaderRead)]);
    }

    /// A written texture comes from and goes back to `ShaderRead`; one only
    /// ever read (uploaded data, 9) gets no barrier.
    #[test]
    fn a_written_texture_rests_in_shader_read_and_a_read_one_is_left_alone() {
        let steps = plan(&[textures(&[9], &[5])]);
        assert_eq!(steps, [texture_barrier(5, Sampled, General), Step::Work(0), texture_barrier(5, General, Sampled)]);
    }

    #[test]
    fn a_texture_moves_between_the_works_that_write_and_sample_it_from_the_state_the_last_one_left() {
        // 0 samples 5 (at rest); 1 writes it; 2 writes it again; 3 samples
        // it; 4 writes it after that read; the frame ends with 5 sampled.
        let steps = plan(&[
            textures(&[5], &[]),
            textures(&[], &[5]),
            textures(&[], &[5]),
            textures(&[5], &[]),
            textures(&[], &[5]),
            textures(&[5], &[]),
        ]);
        assert_eq!(
            steps,
            [
                Step::Work(0),
                texture_barrier(5, Sampled, General),
                Step::Work(1),
                texture_barrier(5, General, General),
                Step::Work(2),
                texture_barrier(5, General, Sampled),
                Step::Work(3),
                texture_barrier(5, Sampled, General),
                Step::Work(4),
                texture_barrier(5, General, Sampled),
                Step::Work(5),
            ]
        );
        // Without the last read, the frame's end puts it back.
        let steps = plan(&[textures(&[], &[5]), textures(&[5], &[]), textures(&[], &[5])]);
        assert_eq!(steps.last(), Some(&texture_barrier(5, General, Sampled)));
    }

    #[test]
    fn a_texture_read_and_written_by_one_work_counts_as_written_and_buffers_come_first() {
        let work = Declared { reads: &[1], writes: vec![(2, &[PASS_SHADER][..])], reads_textures: &[6], writes_textures: &[6] };
        assert_eq!(
            plan(&[work]),
            [
                barrier(2, ShaderRead, ShaderWrite),
                texture_barrier(6, Sampled, General),
                Step::Work(0),
                barrier(2, ShaderWrite, ShaderRead),
                texture_barrier(6, General, Sampled),
            ]
        );
    }
}
