//! One procedural-mesh vertex, its tangent and its colors.
//!
//! [`ProcMeshVertex`] is UE's `FProcMeshVertex`: everything a vertex can
//! carry (position, normal, tangent with a flip bit, an 8-bit color and
//! four UV channels) with UE's defaults. Sections store these attributes as
//! separate streams (see the `section` module for why) and hand out
//! `ProcMeshVertex` as the one-vertex view.
//!
//! Colors are stored as 8-bit sRGB-encoded RGBA, as UE stores `FColor` in
//! vertex buffers. Callers with linear colors convert with
//! [`LinearColor::to_color_srgb`], which is UE's `FLinearColor::ToFColor(true)`.

use glam::{Vec2, Vec3};

/// An 8-bit RGBA vertex color, sRGB-encoded in RGB (as UE's `FColor` in a
/// vertex buffer). Alpha is linear.
pub type Color = [u8; 4];

/// Opaque white, the default vertex color.
pub const WHITE: Color = [255, 255, 255, 255];

/// The tangent (U direction) of a vertex and whether the binormal is flipped
/// (UE's `FProcMeshTangent`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcMeshTangent {
    /// The tangent direction.
    pub tangent_x: Vec3,
    /// Negate the binormal (mirrored UVs).
    pub flip_tangent_y: bool,
}

impl ProcMeshTangent {
    /// UE's default: +X, not flipped.
    pub const DEFAULT: Self = Self { tangent_x: Vec3::X, flip_tangent_y: false };

    /// A tangent along `tangent_x`, flipped or not.
    pub const fn new(tangent_x: Vec3, flip_tangent_y: bool) -> Self {
        Self { tangent_x, flip_tangent_y }
    }
}

impl Default for ProcMeshTangent {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One vertex of a procedural mesh section (UE's `FProcMeshVertex`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcMeshVertex {
    /// Position, in the component's local space.
    pub position: Vec3,
    /// Normal; +Z by default.
    pub normal: Vec3,
    /// Tangent and binormal flip; +X, unflipped by default.
    pub tangent: ProcMeshTangent,
    /// Vertex color; white by default.
    pub color: Color,
    /// UV channel 0; zero by default.
    pub uv0: Vec2,
    /// UV channel 1.
    pub uv1: Vec2,
    /// UV channel 2.
    pub uv2: Vec2,
    /// UV channel 3.
    pub uv3: Vec2,
}

impl ProcMeshVertex {
    /// UE's defaults: origin, normal +Z, tangent +X, white, all UVs zero.
    pub const DEFAULT: Self = Self {
        position: Vec3::ZERO,
        normal: Vec3::Z,
        tangent: ProcMeshTangent::DEFAULT,
        color: WHITE,
        uv0: Vec2::ZERO,
        uv1: Vec2::ZERO,
        uv2: Vec2::ZERO,
        uv3: Vec2::ZERO,
    };

    /// A vertex at `position` with every other attribute at its default.
    pub const fn at(position: Vec3) -> Self {
        Self { position, ..Self::DEFAULT }
    }

    /// The binormal (tangent Y) the renderer derives:
    /// `normal × tangent_x`, negated when `flip_tangent_y` is set. UE stores
    /// the flip as the sign in the normal's W and rebuilds the binormal in
    /// the vertex factory the same way.
    pub fn binormal(&self) -> Vec3 {
        let binormal = self.normal.cross(self.tangent.tangent_x);
        if self.tangent.flip_tangent_y {
            -binormal
        } else {
            binormal
        }
    }

    /// One of the four UV channels by number (0..=3).
    pub fn uv(&self, channel: usize) -> Option<Vec2> {
        match channel {
            0 => Some(self.uv0),
            1 => Some(self.uv1),
            2 => Some(self.uv2),
            3 => Some(self.uv3),
            _ => None,
        }
    }
}

impl Default for ProcMeshVertex {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A set of vertex attributes (a bit each): which arrays a call gave, or
/// which streams an update must send to the render thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct VertexAttributes(u8);

impl VertexAttributes {
    /// None.
    pub const NONE: Self = Self(0);
    /// Positions.
    pub const POSITION: Self = Self(1);
    /// Normals.
    pub const NORMAL: Self = Self(1 << 1);
    /// Tangents (and their flip bits).
    pub const TANGENT: Self = Self(1 << 2);
    /// Vertex colors.
    pub const COLOR: Self = Self(1 << 3);
    /// UV channel 0.
    pub const UV0: Self = Self(1 << 4);
    /// UV channel 1.
    pub const UV1: Self = Self(1 << 5);
    /// UV channel 2.
    pub const UV2: Self = Self(1 << 6);
    /// UV channel 3.
    pub const UV3: Self = Self(1 << 7);
    /// Every attribute.
    pub const ALL: Self = Self(u8::MAX);

    /// The UV channel's bit (0..=3).
    pub const fn uv(channel: usize) -> Self {
        Self(Self::UV0.0 << (channel & 3))
    }

    /// Whether every attribute of `other` is in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no attribute is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Both sets together.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// The attributes in both sets.
    pub const fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    /// `self` without the attributes of `other`.
    pub const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// `self` with `other` added when `on`.
    pub const fn with_if(self, other: Self, on: bool) -> Self {
        if on {
            self.union(other)
        } else {
            self
        }
    }
}

impl std::ops::BitOr for VertexAttributes {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        self.union(other)
    }
}

impl std::ops::BitOrAssign for VertexAttributes {
    fn bitor_assign(&mut self, other: Self) {
        *self = self.union(other);
    }
}

/// A linear-space RGBA color with float channels (UE's `FLinearColor`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LinearColor {
    /// Red.
    pub r: f32,
    /// Green.
    pub g: f32,
    /// Blue.
    pub b: f32,
    /// Alpha.
    pub a: f32,
}

impl LinearColor {
    /// Opaque white.
    pub const WHITE: Self = Self::new(1.0, 1.0, 1.0, 1.0);
    /// Opaque black.
    pub const BLACK: Self = Self::new(0.0, 0.0, 0.0, 1.0);

    /// A color from its channels.
    pub const fn new(r: f32, g: f32, b: f32, a: f32) -> Self {
        Self { r, g, b, a }
    }

    /// Whether every channel is finite.
    pub fn is_finite(&self) -> bool {
        self.r.is_finite() && self.g.is_finite() && self.b.is_finite() && self.a.is_finite()
    }

    /// UE's `FLinearColor::ToFColor(true)`: each channel clamped to [0, 1],
    /// RGB encoded with the sRGB transfer function (linear below 0.0031308,
    /// `1.055 x^(1/2.4) - 0.055` above), alpha kept linear, then quantised
    /// with `floor(x * 255.999)`.
    pub fn to_color_srgb(self) -> Color {
        [
            quantize(srgb_encode(self.r.clamp(0.0, 1.0))),
            quantize(srgb_encode(self.g.clamp(0.0, 1.0))),
            quantize(srgb_encode(self.b.clamp(0.0, 1.0))),
            quantize(self.a.clamp(0.0, 1.0)),
        ]
    }

    /// UE's `FLinearColor::ToFColor(false)`: clamped and quantised, no
    /// transfer function.
    pub fn to_color_linear(self) -> Color {
        [self.r, self.g, self.b, self.a].map(|c| quantize(c.clamp(0.0, 1.0)))
    }
}

/// The sRGB opto-electronic transfer function, for `x` in [0, 1].
fn srgb_encode(x: f32) -> f32 {
    if x <= 0.003_130_8 {
        x * 12.92
    } else {
        1.055 * x.powf(1.0 / 2.4) - 0.055
    }
}

/// `floor(x * 255.999)` for `x` in [0, 1], as UE quantises.
fn quantize(x: f32) -> u8 {
    // In range: x is clamped to [0, 1], so the product is in [0, 255.999].
    (x * 255.999).floor() as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srgb_matches_ue_reference_values() {
        // Reference values of FLinearColor::ToFColor(true).
        assert_eq!(LinearColor::WHITE.to_color_srgb(), [255, 255, 255, 255]);
        assert_eq!(LinearColor::BLACK.to_color_srgb(), [0, 0, 0, 255]);
        assert_eq!(LinearColor::new(0.5, 0.5, 0.5, 0.5).to_color_srgb(), [188, 188, 188, 127]);
        assert_eq!(LinearColor::new(0.214, 0.0031308, 0.001, 1.0).to_color_srgb(), [127, 10, 3, 255]);
        // Out of range clamps.
        assert_eq!(LinearColor::new(-1.0, 2.0, 0.0, 7.0).to_color_srgb(), [0, 255, 0, 255]);
        assert_eq!(LinearColor::new(0.5, 0.5, 0.5, 0.5).to_color_linear(), [127, 127, 127, 127]);
    }

    #[test]
    fn binormal_follows_flip() {
        let mut v = ProcMeshVertex::DEFAULT;
        assert_eq!(v.binormal(), Vec3::Y);
        v.tangent.flip_tangent_y = true;
        assert_eq!(v.binormal(), -Vec3::Y);
    }
}
