//! # engine-core
//!
//! The game side of Proxima: `World`, actors, components, the three dirty
//! flags and end-of-frame updates that turn component changes into render
//! commands, static-mesh assets, collision data and the engine loop.
//!
//! Not written yet: this crate builds and documents what it will hold.
//!
//! - [`collision`]: collision data providers, body setups cooked sync or
//!   async (parry3d BVHs and convex hulls), and the world's ray cast.

pub mod collision;
