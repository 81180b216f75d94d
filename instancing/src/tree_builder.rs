//! Rebuilding the cluster tree in the background.
//!
//! A tree over a million instances takes tens of milliseconds to build;
//! doing that on the game thread after every edit would stall the frame. UE's
//! HISM builds asynchronously (`BuildTreeAsync`) and draws the old tree plus
//! the unbuilt instances meanwhile. So does this:
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

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use glam::Affine3A;

use crate::cluster_tree::{ClusterTree, ClusterTreeSettings, TreeCullStats, TreeSnapshot};
use crate::culling::{cull_instances, CullDistances, CullOutput, CullView};
use crate::error::Result;
use crate::instance_data::InstanceStore;
use crate::mesh::InstancedMesh;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pending {
    ticket: u64,
    generation: u64,
}

/// Owns the current tree and at most one wanted background build.
#[derive(Debug)]
pub struct ClusterTreeBuilder {
    settings: ClusterTreeSettings,
    current: Option<Arc<ClusterTree>>,
    pending: Option<Pending>,
    next_ticket: u64,
    sender: Sender<(u64, ClusterTree)>,
    /// In a mutex only to make the builder `Sync` (engine-core components
    /// are); used through `&mut self`, so never contended.
    receiver: Mutex<Receiver<(u64, ClusterTree)>>,
    discarded: u64,
}

impl ClusterTreeBuilder {
    pub fn new(settings: ClusterTreeSettings) -> Self {
        let (sender, receiver) = channel();
        Self {
            settings,
            current: None,
            pending: None,
            next_ticket: 0,
            sender,
            receiver: Mutex::new(receiver),
            discarded: 0,
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

    /// No current tree, or it is older than the store.
    pub fn is_stale(&self, store: &InstanceStore) -> bool {
        self.current
            .as_ref()
            .is_none_or(|t| t.is_stale_for(store))
    }

    /// Stale, and no build of the store's present state is under way.
    pub fn needs_rebuild(&self, store: &InstanceStore) -> bool {
        self.is_stale(store)
            && self
                .pending
                .is_none_or(|p| p.generation != store.generation())
    }

    /// Starts a background build of the store as it is now, superseding
    /// any earlier request. Returns false (and does nothing) when the tree
    /// or the pending build already describes this state.
    pub fn request_rebuild(&mut self, store: &InstanceStore, mesh: &InstancedMesh) -> bool {
        if !self.needs_rebuild(store) {
            return false;
        }
        let snapshot = TreeSnapshot::capture(store, mesh, &self.settings);
        self.next_ticket += 1;
        let ticket = self.next_ticket;
        self.pending = Some(Pending {
            ticket,
            generation: snapshot.generation(),
        });
        let sender = self.sender.clone();
        rayon::spawn(move || {
            let tree = ClusterTree::from_snapshot(snapshot);
            // The builder may be gone; then nobody wants the tree.
            let _ = sender.send((ticket, tree));
        });
        true
    }

    /// Installs the newest requested build if it has finished; drops older
    /// ones. Prunes the store's edit list to what the new tree covers.
    /// Returns whether a tree was installed.
    pub fn poll(&mut self, store: &mut InstanceStore) -> bool {
        let mut installed = false;
        while let Ok((ticket, tree)) = self.receiver.get_mut().unwrap_or_else(|e| e.into_inner()).try_recv() {
            installed |= self.accept(ticket, tree, store);
        }
        installed
    }

    /// Blocks until the pending build (if any) is installed.
    pub fn wait(&mut self, store: &mut InstanceStore) {
        while self.pending.is_some() {
            match self.receiver.get_mut().unwrap_or_else(|e| e.into_inner()).recv() {
                Ok((ticket, tree)) => {
                    self.accept(ticket, tree, store);
                }
                Err(_) => unreachable!("the builder holds a sender"),
            }
        }
    }

    fn accept(&mut self, ticket: u64, tree: ClusterTree, store: &mut InstanceStore) -> bool {
        if self.pending.is_some_and(|p| p.ticket == ticket) {
            store.prune_cull_edits(tree.generation());
            self.current = Some(Arc::new(tree));
            self.pending = None;
            true
        } else {
            self.discarded += 1;
            false
        }
    }

    /// Culls through the current tree, or flat when there is none yet.
    pub fn cull(
        &self,
        store: &InstanceStore,
        mesh: &InstancedMesh,
        component_to_world: &Affine3A,
        view: &CullView,
        distances: CullDistances,
    ) -> Result<(CullOutput, TreeCullStats)> {
        match &self.current {
            Some(tree) => tree.cull(store, mesh, component_to_world, view, distances),
            None => Ok((
                cull_instances(store, mesh, component_to_world, view, distances)?,
                TreeCullStats {
                    fell_back_to_flat: true,
                    ..TreeCullStats::default()
                },
            )),
        }
    }
}

impl Default for ClusterTreeBuilder {
    fn default() -> Self {
        Self::new(ClusterTreeSettings::default())
    }
}
