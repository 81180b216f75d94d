//! Loading off the game thread: [`load_async`] runs [`import_with`] on a
//! thread of its own (its images and meshes still go to rayon's pool in
//! parallel) and returns a [`GltfLoad`] handle the game polls between
//! frames; spawning the result is [`GltfImport::spawn`], on the game thread.

use super::*;
use std::path::PathBuf;
use std::thread::JoinHandle;

/// An import running on a background thread (see [`load_async`]).
///
/// Dropping the handle before the import finishes detaches the thread: it
/// runs to its end and its result is dropped.
#[derive(Debug)]
pub struct GltfLoad {
    path: PathBuf,
    progress: Arc<ImportProgress>,
    /// The size of the file itself (the reading stage's total), 0 when unknown.
    file_bytes: u64,
    /// `None` once the result was handed out.
    thread: Option<JoinHandle<Result<GltfImport, GltfError>>>,
}

/// Starts importing `path` on a background thread, held to `limits`.
/// Returns at once; several loads may run together. Errors (including a
/// file that cannot be read) arrive through [`GltfLoad::poll`] or
/// [`GltfLoad::wait`].
pub fn load_async(path: impl AsRef<Path>, limits: &GltfLimits) -> GltfLoad {
    let path = path.as_ref().to_path_buf();
    let progress = Arc::new(ImportProgress::default());
    let file_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let (thread_path, thread_progress, limits) = (path.clone(), Arc::clone(&progress), *limits);
    let thread = std::thread::Builder::new()
        .name("gltf-load".into())
        .spawn(move || import_with(&thread_path, &limits, &thread_progress))
        // Failing to start a thread is resource exhaustion, as failing to allocate.
        .expect("cannot start a glTF load thread");
    GltfLoad { path, progress, file_bytes, thread: Some(thread) }
}

impl GltfLoad {
    /// The file being loaded.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The import's counters (bytes read, images decoded, meshes built),
    /// updated by the loading thread as it goes.
    pub fn progress(&self) -> &ImportProgress {
        &self.progress
    }

    /// Bytes of the file, its buffers and images read so far.
    pub fn bytes_read(&self) -> u64 {
        self.progress.bytes_read.load(Ordering::Relaxed)
    }

    /// Images decoded so far.
    pub fn images_decoded(&self) -> u64 {
        self.progress.images_decoded.load(Ordering::Relaxed)
    }

    /// Meshes built so far.
    pub fn meshes_built(&self) -> u64 {
        self.progress.meshes_built.load(Ordering::Relaxed)
    }

    /// Whether the import has ended (successfully or not), or its result
    /// was already handed out.
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// How far the import is, 0..=1, never decreasing: reading the file
    /// (to 0.1), decoding images (to 0.7), building meshes (to 0.99); 1.0
    /// once it has ended, with a result or an error.
    pub fn fraction(&self) -> f32 {
        if self.is_finished() {
            return 1.0;
        }
        let p = &*self.progress;
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let part = |done: u64, total: u64| if total == 0 { 1.0 } else { (done as f32 / total as f32).min(1.0) };
        // Each total is stored when its stage starts (the meshes' after the images').
        let (meshes_total, images_total) = (load(&p.meshes_total), load(&p.images_total));
        if meshes_total > 0 {
            0.7 + 0.29 * part(load(&p.meshes_built), meshes_total)
        } else if images_total > 0 {
            0.1 + 0.6 * part(load(&p.images_decoded), images_total)
        } else if self.file_bytes > 0 {
            0.1 * part(load(&p.bytes_read), self.file_bytes)
        } else {
            0.0
        }
    }

    /// The result once the import has ended, without blocking: `Some` once,
    /// then `None` again (as before it ends).
    pub fn poll(&mut self) -> Option<Result<GltfImport, GltfError>> {
        if !self.thread.as_ref()?.is_finished() {
            return None;
        }
        self.thread.take().map(join)
    }

    /// Blocks until the import ends and returns its result.
    ///
    /// # Panics
    /// When the result was already taken by [`Self::poll`].
    pub fn wait(mut self) -> Result<GltfImport, GltfError> {
        join(self.thread.take().expect("GltfLoad::wait after poll returned the result"))
    }
}

/// The thread's result; a panic in the import (a bug) goes on in the caller.
fn join(thread: JoinHandle<Result<GltfImport, GltfError>>) -> Result<GltfImport, GltfError> {
    thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
