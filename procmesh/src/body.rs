//! A procedural mesh's collision body: its body setup (engine-core's
//! cooked collision, convex elements) and its cooking mode, the state
//! `ProcMeshData` holds. What reads the mesh's sections to cook is in
//! `collision`, above the mesh.

use std::sync::Arc;

use engine_core::collision::{BodySetup, CookExecutor};

/// The body setup and the cooking mode.
#[derive(Debug)]
pub(crate) struct MeshCollision {
    pub(crate) body_setup: BodySetup,
    /// Cook on the body setup's executor (off the game thread) instead of inline.
    pub(crate) use_async_cooking: bool,
}

impl MeshCollision {
    pub(crate) fn new(executor: Arc<dyn CookExecutor>) -> Self {
        Self { body_setup: BodySetup::with_executor(executor), use_async_cooking: false }
    }
}

impl PartialEq for MeshCollision {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.body_setup, &other.body_setup);
        self.use_async_cooking == other.use_async_cooking
            && a.use_complex_as_simple == b.use_complex_as_simple
            && a.support_uv_from_hit_results == b.support_uv_from_hit_results
            && a.convex_elements() == b.convex_elements()
            && a.cooker().newest_generation() == b.cooker().newest_generation()
            && match (a.cooked(), b.cooked()) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}
