//! # instancing
//!
//! Instanced static meshes (UE's ISM and HISM): one draw per mesh section and
//! LOD for all instances, per-instance GPU culling and LOD, incremental updates.
//!
//! Not written yet: this crate builds and documents what it will hold.
