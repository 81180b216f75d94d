//! CPU time per thread over the frames after warm-up, by what each thread
//! does: the game thread, the render thread, the worker pools, and the rest
//! — the Vulkan driver's threads, where lavapipe runs the GPU's work.
//!
//! Why: on lavapipe the "GPU" is a CPU thread, and the frame's stage and
//! GPU-timestamp figures each see only part of a thread's work (not the
//! render thread's hand-offs, not the driver's submit and fence work).
//! Whether frames overlap as well as they can is a question of how busy
//! each side of the pipeline is, which only the scheduler knows; and time a
//! runnable thread spent waiting for a core says when two busy threads
//! shared one (the noise the overlap figures suffer on a busy machine).
//!
//! The figures are Linux's per-thread scheduler statistics
//! (`/proc/self/task/*/schedstat`: nanoseconds run, nanoseconds runnable
//! but waiting on a run queue); elsewhere there are none. Threads are told
//! apart by name: the process's first thread is the game thread, `render
//! thread` is the renderer's, `render worker N` and `worker N` (rayon's
//! global pool, named by [`name_worker_pool`]) are the workers.

use crate::{ThreadCpu, ThreadMs};
use std::collections::HashMap;

/// A thread's scheduler counters (nanoseconds) and its group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counters {
    run_ns: u64,
    wait_ns: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    Game,
    Render,
    Workers,
    Driver,
}

/// Every live thread's counters, by thread id.
#[derive(Clone, Debug, Default)]
pub(super) struct Snapshot {
    threads: HashMap<u32, (Group, Counters)>,
}

/// Names rayon's global pool's threads `worker N`, so that they are told
/// from the driver's (unnamed threads take the name of the process). Done
/// before the engine starts: a pool already running keeps its names.
pub(super) fn name_worker_pool() {
    let _ = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("worker {i}")).build_global();
}

/// The group of a thread named `name`, `main` when it is the process's first.
fn group(name: &str, main: bool) -> Group {
    if main {
        Group::Game
    } else if name == "render thread" {
        Group::Render
    } else if name.starts_with("render worker") || name.starts_with("worker ") {
        Group::Workers
    } else {
        Group::Driver
    }
}

/// `schedstat`'s first two fields: run and run-queue wait, in nanoseconds.
fn parse_schedstat(text: &str) -> Option<Counters> {
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    Some(Counters { run_ns: fields.next()?.ok()?, wait_ns: fields.next()?.ok()? })
}

impl Snapshot {
    /// The process's threads now; `None` where `/proc` has no per-thread
    /// scheduler statistics (not Linux, or a kernel without them).
    pub(super) fn take() -> Option<Self> {
        let pid = std::process::id();
        let mut threads = HashMap::new();
        for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
            let Some(tid) = entry.file_name().to_str().and_then(|t| t.parse::<u32>().ok()) else { continue };
            // A thread may end between the listing and the reads: skip it.
            let (Ok(name), Ok(stat)) =
                (std::fs::read_to_string(entry.path().join("comm")), std::fs::read_to_string(entry.path().join("schedstat")))
            else {
                continue;
            };
            let counters = parse_schedstat(&stat)?;
            threads.insert(tid, (group(name.trim_end(), tid == pid), counters));
        }
        (!threads.is_empty()).then_some(Self { threads })
    }

    /// Milliseconds per frame of each group between `start` and `self`
    /// over `frames` frames. A thread born since counts from zero; one that
    /// ended is not counted.
    pub(super) fn since(&self, start: &Snapshot, frames: u64) -> ThreadCpu {
        let mut out = ThreadCpu::default();
        let per_frame = |ns: u64| ns as f64 / 1e6 / frames.max(1) as f64;
        for (tid, &(group, now)) in &self.threads {
            let before = start.threads.get(tid).map_or(Counters::default(), |&(_, c)| c);
            let ms = ThreadMs {
                cpu: per_frame(now.run_ns.saturating_sub(before.run_ns)),
                waiting: per_frame(now.wait_ns.saturating_sub(before.wait_ns)),
            };
            let sum = match group {
                Group::Game => &mut out.game,
                Group::Render => &mut out.render,
                Group::Workers => &mut out.workers,
                Group::Driver => &mut out.driver,
            };
            sum.cpu += ms.cpu;
            sum.waiting += ms.waiting;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_grouped_by_name() {
        assert_eq!(group("many-cubes", true), Group::Game);
        assert_eq!(group("render thread", false), Group::Render);
        assert_eq!(group("render worker 1", false), Group::Workers);
        assert_eq!(group("worker 0", false), Group::Workers);
        assert_eq!(group("many-cubes", false), Group::Driver);
        assert_eq!(group("many-cu:disk$0", false), Group::Driver);
    }

    #[test]
    fn schedstat_gives_run_and_wait() {
        assert_eq!(parse_schedstat("3250742358 402650 27\n"), Some(Counters { run_ns: 3_250_742_358, wait_ns: 402_650 }));
        assert_eq!(parse_schedstat("garbage"), None);
        assert_eq!(parse_schedstat(""), None);
    }

    #[test]
    fn per_frame_figures_are_differences_by_group() {
        let snap = |t: &[(u32, Group, u64, u64)]| Snapshot {
            threads: t.iter().map(|&(tid, g, run_ns, wait_ns)| (tid, (g, Counters { run_ns, wait_ns }))).collect(),
        };
        let start = snap(&[(1, Group::Game, 1_000_000, 0), (2, Group::Render, 5_000_000, 1_000_000), (9, Group::Driver, 7, 7)]);
        // Thread 3 was born since; thread 9 ended.
        let end = snap(&[(1, Group::Game, 3_000_000, 0), (2, Group::Render, 25_000_000, 3_000_000), (3, Group::Workers, 4_000_000, 0)]);
        let t = end.since(&start, 2);
        assert_eq!(t.game, ThreadMs { cpu: 1.0, waiting: 0.0 });
        assert_eq!(t.render, ThreadMs { cpu: 10.0, waiting: 1.0 });
        assert_eq!(t.workers, ThreadMs { cpu: 2.0, waiting: 0.0 });
        assert_eq!(t.driver, ThreadMs::default());
    }

    #[test]
    fn this_process_has_a_game_thread_that_runs() {
        // The test harness runs tests on threads of its own, named after
        // the test: they fall in the driver group; the main thread is idle.
        let Some(start) = Snapshot::take() else {
            println!("skipped: no /proc/self/task/*/schedstat here");
            return;
        };
        let busy = std::time::Instant::now();
        while busy.elapsed().as_millis() < 20 {
            std::hint::black_box(busy);
        }
        let t = Snapshot::take().unwrap().since(&start, 1);
        assert!(t.driver.cpu >= 10.0, "this thread ran ~20 ms: {t:?}");
    }
}
