//! Rebuilding the cluster tree in the background.
//!
//! A build is O(n log n) in the instances (a median split per level);
//! doing that on the game thread after every edit of a large store would
//! stall the frame. UE's HISM builds asynchronously (`BuildTreeAsync`) and
//! draws the old tree plus the unbuilt instances meanwhile. So does this:
//!
//! ```text
//! game thread   edit ─ request(g=5) ─ edit ─ request(g=7) ─ poll ─ … ─ poll: install g=7
//!                          │                     │
//! rayon pool               └─ build g=5 ──done─► discarded (not the newest)
//!                                                └──── build g=7 ──────done─►
//! culling       uses the tree g=3 (+ flat for instances edited after 3) … then g=7
//! ```
//!
//! * A request snapshots the store (two memcpys) and builds on the rayon
//!   pool; each request gets a ticket, and [`ClusterTreeBuilder::poll`]
//!   installs a finished tree only if it is the newest request's — older
//!   results are dropped, so the tree never goes backwards.
//! * Until then the current (older) tree keeps serving culls; it stays
//!   exact because [`crate::ClusterTree::cull`] culls instances edited since
//!   its snapshot flat (see [`crate::cluster_tree`]).
//! * Edits after a request started leave that build stale on arrival: it is
//!   still installed (it is the newest), and [`ClusterTreeBuilder::needs_rebuild`]
//!   says another request is due.
//! * [`ClusterTreeBuilder::wait`] never blocks on a job still in the pool's
//!   queue: it takes the snapshot back and builds on the calling thread, so
//!   waiting from a rayon worker (a component ticked on the pool) cannot
//!   deadlock the pool.
//! * A build that panics does not abort the process (a panic escaping a
//!   `rayon::spawn` job would): it is caught on the worker and reported as
//!   [`InstancingError::TreeBuildFailed`] by the next `poll` or `wait`; the
//!   previous tree stays, and that store state is not retried.

use crossbeam_channel::{unbounded as channel, Receiver, Sender};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};

use crate::cluster_tree::{ClusterTree, ClusterTreeSettings, TreeCullStats, TreeSnapshot};
use crate::culling::{cull_instances, CullOutput, InstanceCuller};
use crate::error::{InstancingError, Result};
use crate::instance_data::InstanceStore;
use crate::mesh::InstancedMesh;

/// A requested build's input, shared by the queued job and the builder: the
/// first to take it builds (see [`ClusterTreeBuilder::wait`]).
type Slot = Arc<Mutex<Option<TreeSnapshot>>>;

/// What a build sends back: its ticket and the tree, or the panic's message.
type Built = (u64, std::result::Result<ClusterTree, String>);

#[derive(Clone)]
struct Pending {
    ticket: u64,
    generation: u64,
    slot: Slot,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending").field("ticket", &self.ticket).field("generation", &self.generation).finish_non_exhaustive()
    }
}

/// Takes the snapshot out of `slot`, if nobody has yet.
fn take(slot: &Slot) -> Option<TreeSnapshot> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// Runs `f`, turning a panic into an error carrying the panic's message.
/// Background jobs run through this: a panic escaping a `rayon::spawn` job
/// aborts the whole process.
pub(crate) fn catch_panic<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-string payload".to_owned())
    })
}

/// Owns the current tree and at most one wanted background build.
#[derive(Debug)]
pub struct ClusterTreeBuilder {
    settings: ClusterTreeSettings,
    current: Option<Arc<ClusterTree>>,
    pending: Option<Pending>,
    next_ticket: u64,
    sender: Sender<Built>,
    /// In a mutex only to make the builder `Sync` (engine-core components
    /// are); used through `&mut self`, so never contended.
    receiver: Mutex<Receiver<Built>>,
    discarded: u64,
    /// The store generation whose build failed last: not retried until the
    /// store changes.
    failed_generation: Option<u64>,
    failed: u64,
    build: fn(TreeSnapshot) -> ClusterTree,
}

impl ClusterTreeBuilder {
    pub fn new(settings: ClusterTreeSettings) -> Self {
        Self::with_build_fn(settings, ClusterTree::from_snapshot)
    }

    /// A builder whose builds run `build` (tests inject failures here).
    pub(crate) fn with_build_fn(settings: ClusterTreeSettings, build: fn(TreeSnapshot) -> ClusterTree) -> Self {
        let (sender, receiver) = channel();
        Self {
            settings,
            current: None,
            pending: None,
            next_ticket: 0,
            sender,
            receiver: Mutex::new(receiver),
            discarded: 0,
            failed_generation: None,
            failed: 0,
            build,
        }
    }

    /// The tree culls use now (possibly stale).
    pub fn current(&self) -> Option<&Arc<ClusterTree>> {
        self.current.as_ref()
    }

    /// Whether a build has been requested and not yet installed.
    pub fn is_building(&self) -> bool {
        self.pending.is_some()
    }

    /// Finished builds dropped because a newer one had been requested.
    pub fn discarded_builds(&self) -> u64 {
        self.discarded
    }

    /// Builds that panicked (each reported once, by [`Self::poll`] or
    /// [`Self::wait`]).
    pub fn failed_builds(&self) -> u64 {
        self.failed
    }

    /// No current tree, or it is older than the store.
    pub fn is_stale(&self, store: &InstanceStore) -> bool {
        self.current.as_ref().is_none_or(|t| t.is_stale_for(store))
    }

    /// Stale, no build of the store's present state is under way, and none
    /// of it has failed.
    pub fn needs_rebuild(&self, store: &InstanceStore) -> bool {
        self.is_stale(store)
            && self.failed_generation != Some(store.generation())
            && self.pending.as_ref().is_none_or(|p| p.generation != store.generation())
    }

    /// Starts a background build of the store as it is now, superseding
    /// any earlier request. Returns false (and does nothing) when the tree
    /// or the pending build already describes this state (or its build
    /// failed).
    pub fn request_rebuild(&mut self, store: &InstanceStore, mesh: &InstancedMesh) -> bool {
        if !self.needs_rebuild(store) {
            return false;
        }
        let snapshot = TreeSnapshot::capture(store, mesh, &self.settings);
        self.next_ticket += 1;
        let ticket = self.next_ticket;
        let generation = snapshot.generation();
        let slot: Slot = Arc::new(Mutex::new(Some(snapshot)));
        self.pending = Some(Pending { ticket, generation, slot: slot.clone() });
        let sender = self.sender.clone();
        let build = self.build;
        rayon::spawn(move || {
            // `wait` may have taken the snapshot and built it itself.
            if let Some(snapshot) = take(&slot) {
                // The builder may be gone; then nobody wants the tree.
                let _ = sender.send((ticket, catch_panic(|| build(snapshot))));
            }
        });
        true
    }

    /// Installs the newest requested build if it has finished; drops older
    /// ones. Prunes the store's edit list to what the new tree covers.
    /// Returns whether a tree was installed, or the error of a newest build
    /// that panicked (the previous tree stays, and the same store state is
    /// not built again).
    pub fn poll(&mut self, store: &mut InstanceStore) -> Result<bool> {
        let mut installed = Ok(false);
        while let Ok((ticket, tree)) = self.receiver.get_mut().unwrap_or_else(PoisonError::into_inner).try_recv() {
            match self.accept(ticket, tree, store) {
                Ok(true) => installed = Ok(true),
                Ok(false) => {}
                Err(e) => installed = Err(e),
            }
        }
        installed
    }

    /// Blocks until the pending build (if any) is installed, or returns the
    /// error of a build that panicked.
    ///
    /// Never waits on a job that has not started: if the build is still
    /// queued on the rayon pool, this thread takes it and builds the tree
    /// itself. So it cannot deadlock when called from a rayon worker, even
    /// one of a pool whose every thread is waiting here.
    pub fn wait(&mut self, store: &mut InstanceStore) -> Result<()> {
        while let Some(pending) = self.pending.clone() {
            let built = match take(&pending.slot) {
                Some(snapshot) => {
                    let build = self.build;
                    (pending.ticket, catch_panic(|| build(snapshot)))
                }
                // A job is building it now; its result is on its way.
                None => match self.receiver.get_mut().unwrap_or_else(PoisonError::into_inner).recv() {
                    Ok(built) => built,
                    Err(_) => unreachable!("the builder holds a sender"),
                },
            };
            self.accept(built.0, built.1, store)?;
        }
        Ok(())
    }

    fn accept(&mut self, ticket: u64, tree: std::result::Result<ClusterTree, String>, store: &mut InstanceStore) -> Result<bool> {
        let Some(pending) = self.pending.as_ref().filter(|p| p.ticket == ticket) else {
            self.discarded += 1;
            return Ok(false);
        };
        let generation = pending.generation;
        self.pending = None;
        match tree {
            Ok(tree) => {
                store.prune_cull_edits(tree.generation());
                self.current = Some(Arc::new(tree));
                Ok(true)
            }
            Err(message) => {
                log::error!("cluster tree build of store generation {generation} panicked: {message}");
                self.failed += 1;
                self.failed_generation = Some(generation);
                Err(InstancingError::TreeBuildFailed(message))
            }
        }
    }

    /// Culls through the current tree, or flat when there is none yet.
    pub fn cull(&self, store: &InstanceStore, culler: &InstanceCuller<'_>) -> (CullOutput, TreeCullStats) {
        match &self.current {
            Some(tree) => tree.cull(store, culler),
            None => (cull_instances(store, culler), TreeCullStats { fell_back_to_flat: true, ..TreeCullStats::default() }),
        }
    }
}

impl Default for ClusterTreeBuilder {
    fn default() -> Self {
        Self::new(ClusterTreeSettings::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::Bounds;
    use glam::{Affine3A, Vec3};
    use std::time::{Duration, Instant};

    fn panicking_build(_: TreeSnapshot) -> ClusterTree {
        panic!("injected tree build failure")
    }

    fn scene() -> (InstancedMesh, InstanceStore) {
        let mesh = InstancedMesh::simple(Bounds::new(Vec3::ZERO, Vec3::ONE, 3f32.sqrt()), 512, 1536, &[1.0, 0.3]).unwrap();
        let mut store = InstanceStore::new(*mesh.bounds());
        let at = |i: u32| Affine3A::from_translation(Vec3::new(i as f32 * 3.0, 0.0, 0.0));
        store.add_instances(&(0..500).map(at).collect::<Vec<_>>()).unwrap();
        (mesh, store)
    }

    /// A build that panics on the rayon pool does not abort the process (as
    /// a panic escaping a `rayon::spawn` job would): the next poll reports
    /// it; the builder stays usable and does not retry the same state.
    #[test]
    fn a_panicking_background_build_is_reported_by_poll() {
        let (mesh, mut store) = scene();
        let mut b = ClusterTreeBuilder::with_build_fn(ClusterTreeSettings::default(), panicking_build);
        assert!(b.request_rebuild(&store, &mesh));
        let deadline = Instant::now() + Duration::from_secs(60);
        let error = loop {
            match b.poll(&mut store) {
                Err(e) => break e,
                Ok(installed) => assert!(!installed),
            }
            assert!(Instant::now() < deadline, "the failed build was never reported");
            std::thread::sleep(Duration::from_millis(2));
        };
        assert_eq!(error, InstancingError::TreeBuildFailed("injected tree build failure".into()));
        assert!(!b.is_building());
        assert!(b.current().is_none(), "no tree installed");
        assert_eq!(b.failed_builds(), 1);
        assert!(!b.needs_rebuild(&store), "the same state is not built again");
        assert!(!b.request_rebuild(&store, &mesh));

        // An edit makes a new state: requested again, and `wait` reports
        // its failure (whether it built it itself or the pool did).
        store.add_instance(Affine3A::from_translation(Vec3::new(0.0, 9.0, 0.0))).unwrap();
        assert!(b.request_rebuild(&store, &mesh));
        assert!(matches!(b.wait(&mut store), Err(InstancingError::TreeBuildFailed(_))));
        assert_eq!(b.failed_builds(), 2);
        assert!(b.wait(&mut store).is_ok(), "nothing pending any more");

        // The real build still works on the same store.
        let mut good = ClusterTreeBuilder::default();
        assert!(good.request_rebuild(&store, &mesh));
        good.wait(&mut store).unwrap();
        assert_eq!(good.current().unwrap().generation(), store.generation());
    }
}
