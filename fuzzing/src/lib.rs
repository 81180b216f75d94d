//! # proxima-fuzzing
//!
//! The bodies of Proxima's fuzz targets, as plain functions from bytes to
//! nothing that panic when they find a bug:
//!
//! - [`procmesh_section`]: bytes decoded into procedural-mesh section data
//!   (positions, normals, tangents, colors, UVs, triangles, section
//!   indices, in any shape, valid or not) and a sequence of calls on a
//!   `ProcMeshData` and a `ProceduralMeshComponent` side by side;
//! - [`particle_asset`]: bytes handed to the particle asset loader; what
//!   loads must save and reload equal, and simulate;
//! - [`gltf_import`]: bytes imported as a `.gltf`/`.glb` file; no panic,
//!   errors that say where, and an import whose indices, sections and
//!   references are all in range.
//!
//! Why a library: the same bodies run in two places. `fuzz/` (excluded from
//! the workspace, built by `cargo +nightly fuzz`, see `cargo xtask fuzz`)
//! wraps each in a libFuzzer target for long coverage-guided runs; and
//! `tests/ci.rs` runs each over the checked-in seed corpus under
//! `corpus/<target>/` plus a few thousand deterministic mutations of it, on
//! stable, inside the normal test suite — so whatever a long run found and
//! was added to the corpus stays fixed.
//!
//! A body *panics* on a bug (a panic in the code under test, a rejected
//! call that changed something, an error that does not say what is wrong)
//! and returns quietly on any input the code handles, rejection included.

mod bytes;
mod gltf_import;
mod particle_asset;
mod procmesh_section;

pub use bytes::Bytes;
pub use gltf_import::gltf_import;
pub use particle_asset::particle_asset;
pub use procmesh_section::procmesh_section;

/// A fuzz target: its name and its body.
pub type FuzzTarget = (&'static str, fn(&[u8]));

/// The fuzz targets by name (the names of `fuzz/fuzz_targets/*.rs` and of
/// the corpus folders).
pub const TARGETS: &[FuzzTarget] =
    &[("procmesh_section", procmesh_section), ("particle_asset", particle_asset), ("gltf_import", gltf_import)];
