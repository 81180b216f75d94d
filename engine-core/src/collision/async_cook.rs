//! Asynchronous cooking where a newer request aborts the older ones.
//!
//! A procedural mesh can change its triangles every frame. Cooking a BVH for
//! each change on the game thread would stall it, so UE cooks on a worker
//! and, when a newer cook is requested before an older one finished, aborts
//! the older one: only the newest data may ever become the body's collision.
//!
//! Each request gets the next *generation* number, and the cooker keeps the
//! newest in one shared atomic. A job is stale as soon as that atomic moves
//! past its generation. The worker checks it before cooking (skip the work)
//! and after (drop the result); the game thread checks it once more when it
//! applies, so the guarantee holds even if a stale job slips past both
//! worker checks.
//!
//! ```text
//! game thread   request g1      request g2            poll()        poll()
//!                  │ latest=1      │ latest=2            │ apply g2    │ g1 discarded
//! worker A         └── cook g1 ────┼──────────────────────────────── done, stale ─┘
//! worker B                         └── cook g2 ── done ──┘
//! ```
//!
//! Where a job runs is the [`CookExecutor`]'s business: the rayon pool by
//! default, [`InlineExecutor`] for the engine's inline (deterministic) mode,
//! and [`ManualExecutor`] to hold jobs and run them, or their cook and
//! deliver halves, in any order a test wants, with no sleeps.
//!
//! Every job reports back exactly once (finished, failed or aborted), also
//! when an executor drops it without running it, so the cooker's in-flight
//! count always returns to zero.

use crossbeam_channel::{Receiver, Sender};
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::cook::{CookInput, CookedCollision};
use super::error::CollisionError;

/// Runs cook jobs somewhere. Must eventually run or drop every job.
pub trait CookExecutor: Send + Sync {
    /// Takes a job; call [`CookJob::run`] on any thread.
    fn execute(&self, job: CookJob);
}

/// Runs each job on the global rayon pool. The default.
#[derive(Debug, Clone, Copy, Default)]
pub struct RayonExecutor;

impl CookExecutor for RayonExecutor {
    fn execute(&self, job: CookJob) {
        rayon::spawn(move || {
            // A panic escaping a rayon job aborts the process. `cook` already
            // turns a panicking cook into a failed result; this catches
            // anything else, and the job's dropped reply reports it aborted.
            let generation = job.generation();
            if let Err(message) = catch_panic(move || job.run()) {
                log::error!("cook job of generation {generation} panicked: {message}");
            }
        });
    }
}

/// Runs `f`, turning a panic into its message. Everything a cook job runs
/// on a worker goes through this: a panic escaping a `rayon::spawn` job
/// aborts the whole process.
fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-string payload".to_owned())
    })
}

/// Runs a cook, turning a panic inside it into
/// [`CollisionError::CookPanicked`] (a failed cook the owner sees).
fn cook_catching(cook: impl FnOnce() -> Result<CookedCollision, CollisionError>) -> Result<CookedCollision, CollisionError> {
    catch_panic(cook).unwrap_or_else(|message| Err(CollisionError::CookPanicked(message)))
}

/// Runs each job immediately on the requesting thread; the result is ready at
/// the next poll. For the engine's inline mode and deterministic tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct InlineExecutor;

impl CookExecutor for InlineExecutor {
    fn execute(&self, job: CookJob) {
        job.run();
    }
}

/// Holds jobs until the owner takes or runs them: lets a test finish cooks
/// in any order, or stop one between cooking and delivering.
#[derive(Default)]
pub struct ManualExecutor {
    queue: Mutex<VecDeque<CookJob>>,
}

impl ManualExecutor {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, VecDeque<CookJob>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Generations of the jobs waiting, oldest first.
    pub fn pending(&self) -> Vec<u64> {
        self.queue().iter().map(CookJob::generation).collect()
    }

    /// Removes and returns the waiting job of `generation`.
    pub fn take(&self, generation: u64) -> Option<CookJob> {
        let mut queue = self.queue();
        let at = queue.iter().position(|job| job.generation() == generation)?;
        queue.remove(at)
    }

    /// Runs every waiting job, oldest first, on this thread; returns how many.
    pub fn run_all(&self) -> usize {
        let jobs: Vec<_> = self.queue().drain(..).collect();
        let count = jobs.len();
        jobs.into_iter().for_each(CookJob::run);
        count
    }
}

impl CookExecutor for ManualExecutor {
    fn execute(&self, job: CookJob) {
        self.queue().push_back(job);
    }
}

impl fmt::Debug for ManualExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualExecutor").field("pending", &self.pending()).finish()
    }
}

enum Outcome {
    Finished(Result<Arc<CookedCollision>, CollisionError>),
    Aborted,
}

struct Message {
    generation: u64,
    outcome: Outcome,
}

/// The way back to the cooker; reports `Aborted` if dropped unsent.
struct Reply {
    generation: u64,
    latest: Arc<AtomicU64>,
    tx: Option<Sender<Message>>,
}

impl Reply {
    fn is_stale(&self) -> bool {
        self.latest.load(Ordering::Acquire) != self.generation
    }

    fn send(mut self, outcome: Outcome) {
        if let Some(tx) = self.tx.take() {
            // The cooker may be gone (its body setup dropped); nobody is
            // waiting for the result then.
            let _ = tx.send(Message { generation: self.generation, outcome });
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Message { generation: self.generation, outcome: Outcome::Aborted });
        }
    }
}

/// One requested cook, handed to a [`CookExecutor`].
pub struct CookJob {
    input: CookInput,
    reply: Reply,
}

impl CookJob {
    /// The generation of the request.
    pub fn generation(&self) -> u64 {
        self.reply.generation
    }

    /// Whether a newer request has superseded this one.
    pub fn is_aborted(&self) -> bool {
        self.reply.is_stale()
    }

    /// Cooks and delivers the result: `self.cook().deliver()`.
    pub fn run(self) {
        self.cook().deliver();
    }

    /// The first half of [`run`](Self::run): cooks, unless the job is
    /// already aborted. Deliver the result with [`CookedJob::deliver`] (or
    /// drop it, which reports the job as aborted).
    pub fn cook(self) -> CookedJob {
        self.cook_with(CookInput::cook)
    }

    /// [`cook`](Self::cook) with `cook` doing the cooking (tests inject
    /// a panicking one).
    fn cook_with(self, cook: impl FnOnce(CookInput) -> Result<CookedCollision, CollisionError>) -> CookedJob {
        let result = if self.reply.is_stale() {
            log::trace!("cook generation {} aborted before starting", self.reply.generation);
            None
        } else {
            // Wrapped on the worker, so the game thread only moves a pointer.
            // A panic while cooking becomes a failed cook, not an abort.
            let input = self.input;
            Some(cook_catching(|| cook(input)).map(Arc::new))
        };
        CookedJob { result, reply: self.reply }
    }
}

impl fmt::Debug for CookJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CookJob").field("generation", &self.generation()).field("aborted", &self.is_aborted()).finish_non_exhaustive()
    }
}

/// A cook job whose cooking is done and whose result is not yet delivered.
pub struct CookedJob {
    result: Option<Result<Arc<CookedCollision>, CollisionError>>,
    reply: Reply,
}

impl CookedJob {
    /// The generation of the request.
    pub fn generation(&self) -> u64 {
        self.reply.generation
    }

    /// Sends the result back to the cooker, unless a newer request arrived
    /// meanwhile, in which case the result is dropped and the job reported
    /// aborted.
    pub fn deliver(self) {
        let outcome = match self.result {
            Some(result) if !self.reply.is_stale() => Outcome::Finished(result),
            _ => Outcome::Aborted,
        };
        self.reply.send(outcome);
    }
}

impl fmt::Debug for CookedJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CookedJob").field("generation", &self.generation()).field("cooked", &self.result.is_some()).finish_non_exhaustive()
    }
}

/// What [`AsyncCooker::poll`] found: the newest request's outcome.
#[derive(Debug, Clone)]
pub enum CookEvent {
    /// The newest request cooked; this is the new collision.
    Finished {
        /// Its generation.
        generation: u64,
        /// The cooked collision.
        collision: Arc<CookedCollision>,
    },
    /// The newest request failed on the worker (e.g. a degenerate convex
    /// element); the previous collision stays.
    Failed {
        /// Its generation.
        generation: u64,
        /// Why.
        error: CollisionError,
    },
}

/// Counters of what happened to requests, for tests and stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CookStats {
    /// Requests made.
    pub requested: u64,
    /// Newest requests whose outcome `poll` returned (finished or failed).
    pub completed: u64,
    /// Jobs that found themselves superseded on the worker, before or after
    /// cooking, or were dropped unrun.
    pub aborted: u64,
    /// Results that reached the game thread after a newer request and were
    /// thrown away there.
    pub discarded: u64,
}

/// Cooks on an executor; applies only the newest request's result.
pub struct AsyncCooker {
    executor: Arc<dyn CookExecutor>,
    latest: Arc<AtomicU64>,
    newest: u64,
    tx: Sender<Message>,
    rx: Receiver<Message>,
    in_flight: usize,
    stats: CookStats,
}

impl Default for AsyncCooker {
    fn default() -> Self {
        Self::new()
    }
}

impl AsyncCooker {
    /// A cooker on the rayon pool.
    pub fn new() -> Self {
        Self::with_executor(Arc::new(RayonExecutor))
    }

    /// A cooker on `executor`.
    pub fn with_executor(executor: Arc<dyn CookExecutor>) -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        Self { executor, latest: Arc::new(AtomicU64::new(0)), newest: 0, tx, rx, in_flight: 0, stats: CookStats::default() }
    }

    /// Queues a cook of `input` and aborts every older one. Returns its
    /// generation.
    pub(crate) fn request(&mut self, input: CookInput) -> u64 {
        let generation = self.bump();
        self.in_flight += 1;
        self.stats.requested += 1;
        let reply = Reply { generation, latest: Arc::clone(&self.latest), tx: Some(self.tx.clone()) };
        self.executor.execute(CookJob { input, reply });
        generation
    }

    /// Aborts every request in flight (a synchronous cook superseded them).
    pub fn abort_all(&mut self) {
        self.bump();
    }

    fn bump(&mut self) -> u64 {
        self.newest += 1;
        self.latest.store(self.newest, Ordering::Release);
        self.newest
    }

    /// The newest generation handed out (requests and aborts both take one).
    pub fn newest_generation(&self) -> u64 {
        self.newest
    }

    /// Jobs requested whose outcome has not come back yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// What happened to requests so far.
    pub fn stats(&self) -> CookStats {
        self.stats
    }

    /// Collects every outcome that came back, discards the stale ones and
    /// returns the newest request's, if it has finished. Never blocks.
    pub fn poll(&mut self) -> Option<CookEvent> {
        let mut current = None;
        while let Ok(Message { generation, outcome }) = self.rx.try_recv() {
            self.in_flight = self.in_flight.saturating_sub(1);
            match outcome {
                Outcome::Aborted => self.stats.aborted += 1,
                Outcome::Finished(_) if generation != self.newest => {
                    log::trace!("cook generation {generation} finished stale; discarded");
                    self.stats.discarded += 1;
                }
                Outcome::Finished(result) => {
                    self.stats.completed += 1;
                    current = Some(match result {
                        Ok(collision) => CookEvent::Finished { generation, collision },
                        Err(error) => CookEvent::Failed { generation, error },
                    });
                }
            }
        }
        current
    }
}

impl fmt::Debug for AsyncCooker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncCooker")
            .field("newest", &self.newest)
            .field("in_flight", &self.in_flight)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> CookInput {
        CookInput { tri_mesh: None, convex: Vec::new(), use_complex_as_simple: false }
    }

    #[test]
    fn stale_result_that_slipped_past_the_worker_is_discarded_on_poll() {
        let executor = Arc::new(ManualExecutor::new());
        let mut cooker = AsyncCooker::with_executor(executor.clone());
        let old = cooker.request(input());
        let new = cooker.request(input());
        // Deliver the old result skipping both worker checks, as a worker
        // racing the newer request could.
        let CookJob { input, reply } = executor.take(old).unwrap();
        reply.send(Outcome::Finished(input.cook().map(Arc::new)));
        assert!(cooker.poll().is_none());
        assert_eq!(cooker.stats().discarded, 1);

        executor.run_all();
        assert!(matches!(cooker.poll(), Some(CookEvent::Finished { generation, .. }) if generation == new));
        assert_eq!(cooker.in_flight(), 0);
    }

    #[test]
    fn a_panicking_cook_is_a_failed_cook_not_an_abort() {
        let result = cook_catching(|| panic!("injected cook failure {}", 7));
        assert_eq!(result.err(), Some(CollisionError::CookPanicked("injected cook failure 7".into())));
        let result = cook_catching(|| std::panic::panic_any(3u8));
        assert!(matches!(result, Err(CollisionError::CookPanicked(_))));
        assert!(cook_catching(|| input().cook()).is_ok());

        // Through a job: the owner's poll sees a failed cook.
        let executor = Arc::new(ManualExecutor::new());
        let mut cooker = AsyncCooker::with_executor(executor.clone());
        let generation = cooker.request(input());
        let job = executor.take(generation).unwrap();
        job.cook_with(|_| panic!("injected cook failure")).deliver();
        match cooker.poll() {
            Some(CookEvent::Failed { generation: g, error }) => {
                assert_eq!(g, generation);
                assert_eq!(error, CollisionError::CookPanicked("injected cook failure".into()));
            }
            other => panic!("expected a failed cook, got {other:?}"),
        }
        assert_eq!(cooker.in_flight(), 0);
    }

    #[test]
    fn a_job_dropped_unrun_reports_aborted() {
        let executor = Arc::new(ManualExecutor::new());
        let mut cooker = AsyncCooker::with_executor(executor.clone());
        let generation = cooker.request(input());
        drop(executor.take(generation));
        assert!(cooker.poll().is_none());
        assert_eq!(cooker.in_flight(), 0);
        assert_eq!(cooker.stats().aborted, 1);
    }

    #[test]
    fn inline_results_are_ready_at_the_next_poll() {
        let mut cooker = AsyncCooker::with_executor(Arc::new(InlineExecutor));
        let generation = cooker.request(input());
        assert!(matches!(cooker.poll(), Some(CookEvent::Finished { generation: g, .. }) if g == generation));
        assert!(cooker.poll().is_none());
        assert_eq!(cooker.stats(), CookStats { requested: 1, completed: 1, aborted: 0, discarded: 0 });
    }
}
