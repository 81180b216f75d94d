//! GPU work before the passes: compute a proxy declares and the renderer
//! records, with the barriers its declaration implies (as kajiya's
//! `PassBuilder` does for its passes).
//!
//! A dynamic proxy that needs the GPU to produce what its draws read — the
//! instancing feature's culling writes compacted instances and indirect
//! arguments — queues a [`GpuWork`] through
//! [`MeshElementCollector::add_gpu_work`](crate::MeshElementCollector::add_gpu_work)
//! while it collects its mesh elements. The work names the buffers it
//! reads and the buffers it writes, and for each written buffer how the
//! passes read it afterwards ([`PassRead`]). The renderer records every
//! queued work in the frame's `gpu_prepare` stage, in the order they were
//! queued (primitive order), and puts in the barriers:
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
//! declaration names whole buffers. A work records through a
//! [`GpuWorkRecorder`]: bind groups, compute pipelines and dispatches only —
//! no barriers, no render passes. The recorder refuses a bind group that
//! binds a buffer the work did not declare (or a writable storage binding of
//! a buffer declared only as read), so a declaration cannot silently miss a
//! buffer the work binds.
//!
//! ## When a work fails
//!
//! A work is all or nothing as far as the renderer can make it: every
//! work's closure runs first, its commands collected, and only the works
//! whose closures returned `Ok` are then recorded, with the barriers their
//! declarations imply. A work whose closure fails, or that declares a
//! buffer that is no longer alive, is logged (`log::error!`) and recorded
//! not at all — no commands, no barriers of its own — and the frame goes on.
//! Its proxy's draws were built during `collect_dynamic` and are drawn
//! anyway, reading what the buffers hold without the work; a proxy whose
//! draws must not show stale data makes them draw nothing then (the
//! instancing feature writes its indirect arguments with zero instances from
//! the host every frame; the work fills in the counts). The frame stays
//! valid either way: the barriers of the works that ran are complete. An
//! error the RHI raises while a collected command is replayed (the recorder
//! checks that a compute pipeline is bound before each dispatch, and that
//! the dispatch is within the device's limits) is logged the same way; the
//! work's later commands are dropped, the barriers still go in.

use rhi_vulkan::{BindGroup, BindingResource, BindingType, BufferHandle, BufferState, Device, Frame, PipelineHandle, RhiError};
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
}

/// What a [`GpuWork`] records; see [`GpuWorkRecorder`].
pub type RecordGpuWork = Box<dyn FnOnce(&mut GpuWorkRecorder<'_, '_>) -> Result<(), GpuWorkError> + Send + Sync>;

/// Compute work that runs before the passes, with the buffers it touches
/// declared (module docs).
pub struct GpuWork {
    /// Names the work in errors, logs and profiler spans.
    pub label: String,
    /// Buffers it reads and does not write (storage or uniform).
    pub reads: Vec<BufferHandle>,
    /// Buffers it writes (and may read), with how the passes read them.
    pub writes: Vec<BufferWrite>,
    /// Records the work's commands; called once, in `gpu_prepare`.
    pub record: RecordGpuWork,
}

impl GpuWork {
    /// A work that records with `record`; declare its buffers with
    /// [`Self::reads`] and [`Self::writes`].
    pub fn new(
        label: impl Into<String>,
        record: impl FnOnce(&mut GpuWorkRecorder<'_, '_>) -> Result<(), GpuWorkError> + Send + Sync + 'static,
    ) -> Self {
        Self { label: label.into(), reads: Vec::new(), writes: Vec::new(), record: Box::new(record) }
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
            .finish_non_exhaustive()
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
    reads: &'a [BufferHandle],
    writes: &'a [BufferWrite],
    commands: Vec<Command>,
    bound: bool,
}

impl<'a, 'd> GpuWorkRecorder<'a, 'd> {
    /// The device, to make pipelines and look up limits.
    pub fn device(&self) -> &'d Device {
        self.frame.device()
    }

    /// A bind group of this frame for `group` of `pipeline`
    /// ([`Frame::create_bind_group`]); every buffer it binds must be
    /// declared by the work, as written where the binding is writable storage.
    pub fn create_bind_group(
        &mut self,
        pipeline: PipelineHandle,
        group: u32,
        entries: &[(u32, BindingResource)],
    ) -> Result<BindGroup, GpuWorkError> {
        let layout = self.device().pipeline_bind_group_layout(pipeline, group)?;
        for &(binding, ref resource) in entries {
            let buffer = match *resource {
                BindingResource::Buffer(b) | BindingResource::BufferRange { buffer: b, .. } => b,
                _ => continue,
            };
            let written = self.writes.iter().any(|w| w.buffer == buffer);
            if !written && !self.reads.contains(&buffer) {
                return Err(GpuWorkError::Undeclared { work: self.work.to_string(), buffer, binding });
            }
            let writable = layout.entries.iter().any(|e| e.binding == binding && e.ty == BindingType::StorageBuffer { read_only: false });
            if writable && !written {
                return Err(GpuWorkError::WriteNotDeclared { work: self.work.to_string(), buffer, binding });
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
enum Step<B> {
    Barrier(B, BufferState, BufferState),
    Work(usize),
}

/// A work's declaration as [`plan`] reads it: buffers read, buffers
/// written with how the passes read them.
type Declared<'a, B> = (&'a [B], Vec<(B, &'a [PassRead])>);

/// The barriers around `works`, in order (module docs). Generic over the
/// buffer so the rules are unit-tested without a device.
fn plan<B: Copy + Eq + std::hash::Hash>(works: &[Declared<'_, B>]) -> Vec<Step<B>> {
    let mut steps = Vec::new();
    let mut track: HashMap<B, Track> = HashMap::new();
    // Written buffers in first-write order, with how the passes read them.
    let mut written: Vec<(B, Vec<PassRead>)> = Vec::new();
    for (i, (reads, writes)) in works.iter().enumerate() {
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
        steps.push(Step::Work(i));
    }
    for (b, reads) in &written {
        steps.extend(reads.iter().map(|r| Step::Barrier(*b, BufferState::ShaderWrite, r.state())));
    }
    steps
}

/// A work whose closure returned `Ok`: its declaration and its commands.
struct Collected {
    label: String,
    reads: Vec<BufferHandle>,
    writes: Vec<BufferWrite>,
    commands: Vec<Command>,
}

/// Records `works` into `frame`'s primary in order, with the barriers of
/// their declarations (module docs). Every closure runs first (its
/// commands kept); the works that failed are logged and left out; then the
/// barriers and the others' commands are recorded. Returns how many were
/// recorded completely. An `Err` is a barrier the RHI refused on a live
/// buffer outside any pass: the frame cannot go on.
pub(crate) fn record_gpu_work(frame: &mut Frame<'_>, works: Vec<GpuWork>) -> rhi_vulkan::Result<usize> {
    let mut collected = Vec::with_capacity(works.len());
    for work in works {
        let GpuWork { label, reads, writes, record } = work;
        if let Some(&buffer) = reads.iter().chain(writes.iter().map(|w| &w.buffer)).find(|&&b| frame.device().buffer_desc(b).is_err()) {
            log::error!("{}", GpuWorkError::DeadBuffer { work: label, buffer });
            continue;
        }
        let mut recorder =
            GpuWorkRecorder { frame: &*frame, work: &label, reads: &reads, writes: &writes, commands: Vec::new(), bound: false };
        match record(&mut recorder) {
            Ok(()) => {
                let commands = recorder.commands;
                collected.push(Collected { label, reads, writes, commands });
            }
            Err(e) => log::error!("GPU work {label:?} not recorded: {e}"),
        }
    }
    let declared: Vec<Declared<'_, BufferHandle>> = collected
        .iter()
        .map(|c| (c.reads.as_slice(), c.writes.iter().map(|w| (w.buffer, w.read_by_passes.as_slice())).collect()))
        .collect();
    let steps = plan(&declared);
    let mut commands: Vec<Option<Vec<Command>>> = collected.iter_mut().map(|c| Some(std::mem::take(&mut c.commands))).collect();
    let mut recorded = 0;
    let cmd = frame.cmd();
    for step in steps {
        match step {
            Step::Barrier(b, from, to) => cmd.buffer_barrier(b, from, to)?,
            Step::Work(i) => match replay(cmd, &collected[i].writes, commands[i].take().unwrap_or_default()) {
                Ok(()) => recorded += 1,
                Err(e) => log::error!("GPU work {:?} recorded in part: {e}", collected[i].label),
            },
        }
    }
    Ok(recorded)
}

/// A work's collected commands into the primary, its written buffers
/// ordered between dispatches.
fn replay(cmd: &mut rhi_vulkan::CommandList<'_>, writes: &[BufferWrite], commands: Vec<Command>) -> rhi_vulkan::Result<()> {
    let mut dispatched = false;
    for c in commands {
        match c {
            Command::Pipeline(p) => cmd.bind_pipeline(p)?,
            Command::Group(i, g) => cmd.bind_group(i, &g)?,
            Command::Dispatch(x, y, z) => {
                if dispatched {
                    for w in writes {
                        cmd.buffer_barrier(w.buffer, BufferState::ShaderWrite, BufferState::ShaderWrite)?;
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
    const PASS_INDIRECT: PassRead = PassRead::Indirect;
    const PASS_SHADER: PassRead = PassRead::Shader;

    fn barrier(b: u32, from: BufferState, to: BufferState) -> Step<u32> {
        Step::Barrier(b, from, to)
    }

    /// Instancing's culling: reads the instances (0), writes the visible
    /// instances (1, an instance stream) and the ring (2, indirect
    /// arguments and vertex data).
    #[test]
    fn a_work_s_writes_come_from_and_go_back_to_the_passes_reads() {
        let steps = plan(&[(&[0u32][..], vec![(1, &[PASS_SHADER][..]), (2, &[PASS_INDIRECT, PASS_SHADER][..])])]);
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
            (&[][..], vec![(7u32, none)]),
            (&[7][..], vec![(8, &[PASS_SHADER][..])]),
            (&[][..], vec![(7, none), (8, &[PASS_INDIRECT][..])]),
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
        let steps = plan(&[(&[3u32, 4][..], vec![(4, &[PASS_SHADER][..])]), (&[3][..], vec![])]);
        assert_eq!(steps, [barrier(4, ShaderRead, ShaderWrite), Step::Work(0), Step::Work(1), barrier(4, ShaderWrite, ShaderRead)]);
    }
}
