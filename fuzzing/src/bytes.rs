//! A reader that turns fuzzer bytes into values. It never fails: past the
//! end it reads zeros, so every byte string decodes to something and a
//! mutation anywhere changes only what follows it.

use glam::{Vec2, Vec3};

/// Reads values off the front of a byte slice.
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// The next four bytes, little-endian.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// A boolean from one byte.
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// Mostly a small number in quarter steps (a plausible coordinate),
    /// sometimes one of the values that break geometry code, sometimes
    /// any bit pattern (NaN payloads, subnormals, infinities).
    pub fn f32(&mut self) -> f32 {
        match self.u8() {
            0..=199 => f32::from(self.u8() as i8) * 0.25,
            200..=209 => {
                [0.0, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN, 1e-30, 1e30, -1e30][self.u8() as usize % 10]
            }
            _ => f32::from_bits(self.u32()),
        }
    }

    /// Three [`f32`](Self::f32)s.
    pub fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.f32(), self.f32(), self.f32())
    }

    /// Two [`f32`](Self::f32)s.
    pub fn vec2(&mut self) -> Vec2 {
        Vec2::new(self.f32(), self.f32())
    }

    /// A length for an array meant to hold `n` items: usually empty or `n`,
    /// sometimes off by a little.
    pub fn len_for(&mut self, n: usize) -> usize {
        match self.u8() % 8 {
            0..=2 => 0,
            3..=6 => n,
            _ => (n + self.u8() as usize % 3).saturating_sub(1),
        }
    }

    /// A section or slot index: small, or now and then past every limit.
    pub fn index(&mut self) -> usize {
        match self.u8() {
            0..=249 => self.u8() as usize % 6,
            250..=252 => self.u32() as usize,
            253 => procmesh::MAX_SECTION_INDEX,
            254 => procmesh::MAX_SECTION_INDEX + 1,
            _ => usize::MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_zeros_past_the_end() {
        let mut b = Bytes::new(&[7, 1, 0, 0, 0]);
        assert_eq!(b.u8(), 7);
        assert_eq!(b.u32(), 1);
        assert!(b.is_empty());
        assert_eq!(b.u32(), 0);
        assert_eq!(b.f32(), 0.0);
    }

    #[test]
    fn floats_cover_the_special_values() {
        let mut nan = Bytes::new(&[200, 2]);
        assert!(nan.f32().is_nan());
        let mut raw = Bytes::new(&[255, 0, 0, 0x80, 0x7f]);
        assert_eq!(raw.f32(), f32::INFINITY);
        let mut small = Bytes::new(&[0, 0xfe]);
        assert_eq!(small.f32(), -0.5);
    }
}
