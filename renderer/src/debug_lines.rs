//! Debug lines (UE's line batcher and its `Bounds` and `Collision` show
//! flags): coloured segments drawn into a main view's scene colour after
//! its translucency, tested against the scene's depth and writing none.
//!
//! Two sources, drawn in every main view:
//! - lines the game sends for the next frame
//!   (`RenderThread::draw_debug_lines`, one frame like UE's
//!   `DrawDebugLine` without a duration; engine-core's collision view
//!   draws the cooked collision shapes with them);
//! - in a view with [`crate::SceneView::show_bounds`], every primitive
//!   visible in it: its box, and its sphere as three great circles.
//!
//! This module is the lines' type; the frame draws them
//! (`frame/debug_lines.rs`: the vertices go into the frame's dynamic vertex
//! memory, one pipeline per sample count — line lists, depth test
//! less-or-equal, no write — is made on first use, and a view with no
//! line costs nothing).

use glam::Vec3;

/// The colour of a primitive's box under `show_bounds` (UE draws bounds
/// boxes and spheres in two colours too).
pub const BOUNDS_BOX_COLOR: [u8; 4] = [255, 220, 0, 255];
/// The colour of a primitive's sphere under `show_bounds`.
pub const BOUNDS_SPHERE_COLOR: [u8; 4] = [0, 200, 255, 255];

/// One coloured segment in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DebugLine {
    /// One end.
    pub start: Vec3,
    /// The other end.
    pub end: Vec3,
    /// Its colour, sRGB with alpha (drawn opaque).
    pub color: [u8; 4],
}

impl DebugLine {
    /// A segment from `start` to `end` in `color`.
    pub fn new(start: Vec3, end: Vec3, color: [u8; 4]) -> Self {
        Self { start, end, color }
    }

    /// Whether both ends are finite (others are dropped).
    pub fn is_finite(&self) -> bool {
        self.start.is_finite() && self.end.is_finite()
    }
}
