//! # procmesh
//!
//! UE's ProceduralMeshComponent: numbered sections of run-time geometry with
//! fast updates, per-section visibility and materials, and collision.
//!
//! Not written yet: this crate builds and documents what it will hold.
