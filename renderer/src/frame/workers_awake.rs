//! Keeping the render thread's workers awake through a frame's CPU stages.
//!
//! The frame's parallel sections are short and separated by serial work
//! (collecting dynamic elements, the uploads, GPU prepare). Between two
//! sections rayon puts an idle worker to sleep after a few dozen rounds of
//! looking for work, and a sleeping worker is woken when the next section
//! pushes its first task. Where waking a thread takes longer than a
//! section (as on small virtual machines), the render thread runs the
//! whole section itself while the worker is still waking.
//!
//! UE's task-graph workers and Unity's job workers spin a while before they
//! sleep for the same reason. Here, while a [`WorkersAwake`] guard lives,
//! every other worker of the render thread's pool runs a polling job: it
//! takes whatever work the pool has (`rayon::yield_now`), between polls
//! pauses a few µs (spin-loop hints), and every 16th idle poll yields its
//! core to the OS scheduler (so a runnable thread on that core — the
//! driver's, on lavapipe — still runs). The job ends when the guard is
//! dropped, or after [`MAX_IDLE`] with nothing to take, so a long serial
//! stretch does not keep a core busy.
//!
//! When it does nothing:
//! - `r.RenderWorkers.StayAwake` is 0;
//! - the pool has one thread (the render thread alone: nothing to wake);
//! - the calling thread is not a worker of its pool (e.g. a test thread on
//!   rayon's global pool, shared with other threads: a worker polling for
//!   one caller could be inside another caller's task, see below);
//! - a guard is already alive on this thread.
//!
//! Why those rules keep it free of deadlock: a polling job runs a stolen
//! task inside itself, and that task, waiting in a `join`, may run other
//! jobs of its worker — including a polling job still queued. A polling
//! job started there would hold the task (and so the section the guard's
//! owner waits for) until its guard is dropped: never, since the owner
//! waits. Within one guard there is no such job: each worker gets one,
//! taken before any task (rayon takes a worker's broadcast jobs before it
//! steals), the owner's own copy returns at once, and earlier guards' jobs
//! see their guard dropped and return. Nested guards and several owners on
//! one pool are what would queue a second one — hence the rules — and
//! [`MAX_IDLE`] bounds what any case missed here could cost.

use crate::settings::FrameSettings;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a polling worker looks for work before it goes back to sleep.
pub(crate) const MAX_IDLE: Duration = Duration::from_millis(2);
/// Spin-loop hints between two idle polls (a few µs).
const PAUSES_PER_POLL: u32 = 64;
/// Every this many idle polls, the core is offered to the OS scheduler.
const YIELD_EVERY: u32 = 16;

thread_local! {
    /// Whether a guard is alive on this thread.
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

/// While alive, the other workers of the calling thread's rayon pool poll
/// for work instead of sleeping (see the module docs).
pub(crate) struct WorkersAwake {
    done: Option<Arc<AtomicBool>>,
}

impl WorkersAwake {
    /// Wakes the other workers of the calling thread's pool when `enabled`
    /// and the module's rules allow; otherwise a guard that does nothing.
    pub fn new(enabled: bool) -> Self {
        let Some(own) = rayon::current_thread_index() else { return Self { done: None } };
        if !enabled || rayon::current_num_threads() < 2 || ACTIVE.with(Cell::get) {
            return Self { done: None };
        }
        ACTIVE.with(|a| a.set(true));
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        rayon::spawn_broadcast(move |ctx| {
            if ctx.index() != own {
                poll_until(&flag);
            }
        });
        Self { done: Some(done) }
    }

    /// The guard for a frame's CPU stages: on when `r.RenderWorkers.StayAwake`
    /// is and the frame has parallel sections (culling and pass setup with
    /// `r.MeshDrawCommands.ParallelPassSetup`, recording with
    /// `r.RHICmdList.ParallelRecord`).
    pub fn for_frame(settings: &FrameSettings) -> Self {
        let parallel = settings.parallel_pass_setup || settings.parallel_record;
        Self::new(parallel && settings.workers_stay_awake)
    }

    /// Whether other workers were asked to stay awake.
    #[cfg(test)]
    pub fn is_active(&self) -> bool {
        self.done.is_some()
    }
}

impl Drop for WorkersAwake {
    fn drop(&mut self) {
        if let Some(done) = self.done.take() {
            done.store(true, Ordering::Release);
            ACTIVE.with(|a| a.set(false));
        }
    }
}

/// A worker's polling loop: runs the pool's work until `done`, or until it
/// found none for [`MAX_IDLE`].
fn poll_until(done: &AtomicBool) {
    crate::trace::span!("wait", "worker_poll");
    let mut idle_since = Instant::now();
    let mut idle_polls = 0u32;
    while !done.load(Ordering::Acquire) {
        match rayon::yield_now() {
            Some(rayon::Yield::Executed) => {
                idle_since = Instant::now();
                idle_polls = 0;
            }
            _ if idle_since.elapsed() >= MAX_IDLE => return,
            _ => {
                // A few µs between polls, pausing (light on a core shared
                // with the render thread's), and now and then the core
                // offered to the OS scheduler.
                idle_polls += 1;
                if idle_polls.is_multiple_of(YIELD_EVERY) {
                    std::thread::yield_now();
                } else {
                    (0..PAUSES_PER_POLL).for_each(|_| std::hint::spin_loop());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
    }

    #[test]
    fn off_outside_a_pool_with_one_thread_when_disabled_or_nested() {
        // This test's thread is no pool's worker.
        assert!(!WorkersAwake::new(true).is_active());
        pool(1).install(|| assert!(!WorkersAwake::new(true).is_active()));
        pool(2).install(|| {
            assert!(!WorkersAwake::new(false).is_active());
            let outer = WorkersAwake::new(true);
            assert!(outer.is_active());
            assert!(!WorkersAwake::new(true).is_active(), "a nested guard does nothing");
            drop(outer);
            assert!(WorkersAwake::new(true).is_active(), "the next guard works again");
        });
    }

    #[test]
    fn a_worker_takes_tasks_while_awake_and_sections_end() {
        let pool = pool(2);
        pool.install(|| {
            let me = rayon::current_thread_index().unwrap();
            // Many short sections under one guard, and guards back to
            // back: every section ends (no polling job holds a task), and
            // the other worker ran some of the tasks.
            let mut elsewhere = 0;
            for _ in 0..50 {
                let _awake = WorkersAwake::new(true);
                for _ in 0..20 {
                    let ran: Vec<usize> = (0..8)
                        .into_par_iter()
                        .map(|_| {
                            let t = Instant::now();
                            while t.elapsed() < Duration::from_micros(20) {}
                            rayon::current_thread_index().unwrap()
                        })
                        .collect();
                    elsewhere += ran.iter().filter(|&&i| i != me).count();
                }
            }
            assert!(elsewhere > 0, "the other worker never took a task");
        });
    }

    #[test]
    fn a_polling_worker_goes_back_to_sleep_when_idle() {
        let pool = pool(2);
        let done = Arc::new(AtomicBool::new(false));
        let t = Instant::now();
        // No guard drops this flag: the loop must end on its own.
        pool.install(|| poll_until(&done));
        assert!(t.elapsed() >= MAX_IDLE);
        assert!(!done.load(Ordering::Acquire));
    }
}
