//! # renderer
//!
//! The FScene-style scene of render-thread primitive proxies and the retained
//! mesh-drawing pipeline (mesh batches → per-pass processors → cached, sorted,
//! merged mesh draw commands → parallel submission), built on `rhi-vulkan`.
//!
//! Not written yet: this crate will hold `Scene`, `PrimitiveSceneProxy`, the
//! render thread, mesh pass processors, `MeshDrawCommand` caching, sorting and
//! merging, the GPU scene and the vertex factories (see `DESIGN.md`).
