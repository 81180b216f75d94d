//! Textures the samples make in code (no files): tileable value noise,
//! a checker, bricks, bumps, leaves with an alpha mask, grass, rock, sand,
//! bark, a fireball flipbook (a sprite sheet for sub-UV particles), and
//! normal maps made from height fields; and the material
//! functions that read them ([`TEXTURED_WGSL`], [`NORMAL_MAPPED_WGSL`],
//! [`LEAVES_WGSL`]). Their UVs are scaled by a parameter, so they sample
//! with UV0's gradients scaled alike (`texture_<name>_grad`; see
//! `renderer::material::parameters` for why not implicit ones).
//!
//! Every texture but the flipbook (whose images are separate puffs) tiles
//! (its noise lattice wraps at the texture's edge); every one is
//! square, and follows the renderer's conventions: rows top to bottom, UV
//! (0, 0) at the top-left texel; colour textures are sRGB, normal maps and
//! masks linear; normal maps are OpenGL-style (tangent-space +X towards
//! increasing U, +Y towards the image's top), as `MaterialOutput.normal`
//! expects.

use rayon::prelude::*;
use renderer::{Texture2D, TextureFormat};

/// A material function: base colour × an albedo texture parameter
/// `albedo`, tiled `uv_scale.xy` times over UV0 (a vector parameter).
pub const TEXTURED_WGSL: &str = "fn material_main(in: MaterialInput) -> MaterialOutput {
    var out = default_material(in);
    let s = param_uv_scale().xy;
    out.base_color = out.base_color * texture_albedo_grad(in.uv0 * s, in.uv_dx[0] * s, in.uv_dy[0] * s).rgb;
    return out;
}
";

/// A material function: the shading normal from a tangent-space normal
/// map parameter `normal_map` (OpenGL-style, linear), tiled `uv_scale.xy`
/// times over UV0.
pub const NORMAL_MAPPED_WGSL: &str = "fn material_main(in: MaterialInput) -> MaterialOutput {
    var out = default_material(in);
    let s = param_uv_scale().xy;
    out.normal = normalize(texture_normal_map_grad(in.uv0 * s, in.uv_dx[0] * s, in.uv_dy[0] * s).xyz * 2.0 - 1.0);
    return out;
}
";

/// A material function for masked leaves: base colour × the texture
/// parameter `leaves`, whose alpha is the opacity (the mask), tiled
/// `uv_scale.xy` times over UV0.
pub const LEAVES_WGSL: &str = "fn material_main(in: MaterialInput) -> MaterialOutput {
    var out = default_material(in);
    let s = param_uv_scale().xy;
    let leaf = texture_leaves_grad(in.uv0 * s, in.uv_dx[0] * s, in.uv_dy[0] * s);
    out.base_color = out.base_color * leaf.rgb;
    out.opacity = leaf.a;
    return out;
}
";

/// A hash of a lattice point and a seed, in [0, 1).
pub fn hash(x: i32, y: i32, seed: u32) -> f32 {
    unit_hash((x as u32).wrapping_mul(0x8DA6_B343) ^ (y as u32).wrapping_mul(0xD816_3841) ^ seed.wrapping_mul(0xCB1A_B31F))
}

/// The samples' 32-bit integer hash (xorshift-multiply rounds), as a number
/// in [0, 1) with 24 bits: what their procedural textures and scenes place
/// and tint things with.
pub fn unit_hash(mut h: u32) -> f32 {
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    h = h.wrapping_mul(0x297A_2D39);
    h ^= h >> 15;
    (h & 0xFF_FFFF) as f32 / 16_777_216.0
}

/// Smooth value noise in [0, 1) at `(x, y)` in lattice units, the lattice
/// wrapping every `period` cells (so a texture covering one period tiles).
pub fn value_noise(x: f32, y: f32, period: i32, seed: u32) -> f32 {
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let (sx, sy) = (fx * fx * (3.0 - 2.0 * fx), fy * fy * (3.0 - 2.0 * fy));
    let p = period.max(1);
    let at = |i: i32, j: i32| hash((x0 as i32 + i).rem_euclid(p), (y0 as i32 + j).rem_euclid(p), seed);
    let top = at(0, 0) + (at(1, 0) - at(0, 0)) * sx;
    let bottom = at(0, 1) + (at(1, 1) - at(0, 1)) * sx;
    top + (bottom - top) * sy
}

/// Fractal value noise in [0, 1): `octaves` octaves, each of twice the
/// frequency and half the amplitude of the one before, at `(u, v)` in
/// [0, 1) with `cells` lattice cells across the first octave (tileable).
pub fn fbm(u: f32, v: f32, cells: i32, octaves: u32, seed: u32) -> f32 {
    let (mut sum, mut amp, mut norm, mut cells) = (0.0, 1.0, 0.0, cells);
    for o in 0..octaves {
        sum += amp * value_noise(u * cells as f32, v * cells as f32, cells, seed.wrapping_add(o * 7919));
        norm += amp;
        amp *= 0.5;
        cells *= 2;
    }
    sum / norm
}

fn srgb8(c: [f32; 3]) -> [u8; 3] {
    c.map(|x| (x.clamp(0.0, 1.0) * 255.0 + 0.5) as u8)
}

/// An RGBA8 texture of `size`² texels from `texel(u, v)` at texel centres
/// (rows made in parallel).
fn generate(label: &str, size: u32, srgb: bool, texel: impl Fn(f32, f32) -> [u8; 4] + Sync) -> Texture2D {
    let mut data = vec![0u8; (size * size * 4) as usize];
    data.par_chunks_mut((size * 4) as usize).enumerate().for_each(|(y, row)| {
        for (x, out) in row.chunks_exact_mut(4).enumerate() {
            out.copy_from_slice(&texel((x as f32 + 0.5) / size as f32, (y as f32 + 0.5) / size as f32));
        }
    });
    Texture2D::from_rgba8(label, size, size, data, srgb)
}

/// `size`² values of `f(u, v)` at texel centres, rows top to bottom (made in parallel).
fn field(size: u32, f: impl Fn(f32, f32) -> f32 + Sync) -> Vec<f32> {
    (0..size * size).into_par_iter().map(|i| f(((i % size) as f32 + 0.5) / size as f32, ((i / size) as f32 + 0.5) / size as f32)).collect()
}

/// A tangent-space normal map (RGBA8 linear, OpenGL-style) of a tileable
/// height field `height` (`size`² values, rows top to bottom, heights in
/// texels × `strength`): central differences, wrapping at the edges.
pub fn normal_map(label: &str, size: u32, height: &[f32], strength: f32) -> Texture2D {
    let n = size as i32;
    let h = |x: i32, y: i32| height[(y.rem_euclid(n) * n + x.rem_euclid(n)) as usize] * strength;
    let mut data = Vec::with_capacity((size * size * 4) as usize);
    for y in 0..n {
        for x in 0..n {
            // Height grows to the right along +X; towards the image's top
            // (+Y) is towards smaller rows.
            let dx = (h(x + 1, y) - h(x - 1, y)) / 2.0;
            let dy = (h(x, y - 1) - h(x, y + 1)) / 2.0;
            let len = (dx * dx + dy * dy + 1.0).sqrt();
            let v = [-dx / len, -dy / len, 1.0 / len].map(|c| ((c * 0.5 + 0.5) * 255.0 + 0.5) as u8);
            data.extend_from_slice(&[v[0], v[1], v[2], 255]);
        }
    }
    Texture2D::new(label, size, size, TextureFormat::Rgba8Unorm, data)
}

/// Bricks: the albedo (sRGB; light, varied bricks and pale mortar, to be
/// tinted by a material's base colour) and the height field (1 on a
/// brick's face, bevelled to 0 in the mortar) of a `size`² tile of 8 rows
/// of 4 bricks, every other row offset by half a brick.
pub fn bricks(size: u32) -> (Texture2D, Vec<f32>) {
    const ROWS: f32 = 8.0;
    const COLS: f32 = 4.0;
    let cell = |u: f32, v: f32| {
        let row = (v * ROWS).floor();
        let shifted = u * COLS + if row as i32 % 2 == 1 { 0.5 } else { 0.0 };
        let col = shifted.floor();
        // Distance to the brick's edge, in bricks' heights.
        let (fu, fv) = (shifted - col, v * ROWS - row);
        let edge = (fu.min(1.0 - fu) * 2.0 * ROWS / COLS).min(fv.min(1.0 - fv));
        (row as i32, (col as i32).rem_euclid(COLS as i32), edge)
    };
    let mortar = 0.07;
    let height = field(size, |u, v| {
        let (.., edge) = cell(u, v);
        let bevel = ((edge - mortar) / 0.12).clamp(0.0, 1.0);
        bevel * (2.0 - bevel) * (0.9 + 0.1 * fbm(u, v, 16, 3, 5))
    });
    let albedo = generate("bricks", size, true, |u, v| {
        let (row, col, edge) = cell(u, v);
        let grain = fbm(u, v, 32, 4, 9);
        let c = if edge < mortar {
            let m = 0.78 + 0.12 * grain;
            [m, m * 0.97, m * 0.92]
        } else {
            let tone = hash(col, row, 3);
            let base = [0.88 - 0.2 * tone, 0.62 - 0.12 * tone, 0.50 - 0.08 * tone];
            base.map(|b| b * (0.82 + 0.3 * grain))
        };
        let [r, g, b] = srgb8(c);
        [r, g, b, 255]
    });
    (albedo, height)
}

/// A checker of 2×2 cells per tile in colours `a` and `b` (linear RGB,
/// stored sRGB).
pub fn checker(size: u32, a: [f32; 3], b: [f32; 3]) -> Texture2D {
    generate("checker", size, true, |u, v| {
        let (cu, cv) = ((u * 2.0).floor() as i32, (v * 2.0).floor() as i32);
        let [r, g, b] = srgb8(if (cu + cv) % 2 == 0 { a } else { b });
        [r, g, b, 255]
    })
}

/// Round bumps on a hexagonal grid, `rows` rows of them per tile: a height
/// field for [`normal_map`] (domes of height 1 on a flat 0).
pub fn bumps(size: u32, rows: u32) -> Vec<f32> {
    let rows = rows.max(1) as f32;
    field(size, |u, v| {
        let (y, row) = (v * rows, (v * rows).floor());
        let x = u * rows + if row as i32 % 2 == 1 { 0.5 } else { 0.0 };
        let (dx, dy) = (x - x.floor() - 0.5, y - row - 0.5);
        let r = (dx * dx + dy * dy).sqrt() / 0.42;
        if r < 1.0 {
            (1.0 - r * r).sqrt()
        } else {
            0.0
        }
    })
}

/// Leaves (sRGB with an alpha mask): pointed leaves at random angles, with
/// a paler midrib and veins, over transparent holes; `coverage` in (0, 1)
/// sets how much of the tile the leaves cover (more leaves, wider).
pub fn leaves(size: u32, coverage: f32, seed: u32) -> Texture2D {
    struct Leaf {
        centre: [f32; 2],
        dir: [f32; 2],
        length: f32,
        width: f32,
        tone: f32,
    }
    let count = (12.0 + 40.0 * coverage) as i32;
    let leaves: Vec<Leaf> = (0..count)
        .map(|i| {
            let a = hash(i, 1, seed) * std::f32::consts::TAU;
            Leaf {
                centre: [hash(i, 2, seed), hash(i, 3, seed)],
                dir: [a.cos(), a.sin()],
                length: 0.11 + 0.05 * hash(i, 4, seed),
                width: 0.35 + 0.2 * coverage,
                tone: hash(i, 5, seed),
            }
        })
        .collect();
    generate("leaves", size, true, |u, v| {
        // The topmost leaf (last drawn) under the texel, tiles wrapping.
        for leaf in leaves.iter().rev() {
            let mut d = [u - leaf.centre[0], v - leaf.centre[1]];
            d = d.map(|c| c - c.round());
            let along = (d[0] * leaf.dir[0] + d[1] * leaf.dir[1]) / leaf.length;
            let across = (d[1] * leaf.dir[0] - d[0] * leaf.dir[1]) / leaf.length;
            if along.abs() >= 1.0 {
                continue;
            }
            // A pointed leaf: half-width shrinking to 0 at both tips.
            let half = leaf.width * (1.0 - along * along) * (1.0 - 0.35 * along);
            if across.abs() < half {
                let rib = (across.abs() < 0.035) as u32 as f32;
                let vein = ((across.abs() * 9.0 - along * 6.0).fract() < 0.12) as u32 as f32 * 0.5;
                let light = 0.75 + 0.25 * leaf.tone + 0.25 * rib + 0.08 * vein - 0.2 * (across.abs() / half);
                let [r, g, b] = srgb8([0.22 * light, 0.48 * light, 0.12 * light]);
                return [r, g, b, 255];
            }
        }
        [20, 40, 15, 0]
    })
}

/// Grass: greens and yellows of fine fractal noise with blade streaks.
pub fn grass(size: u32) -> Texture2D {
    generate("grass", size, true, |u, v| {
        let patches = fbm(u, v, 4, 3, 21);
        let blades = fbm(u, v * 0.25, 64, 2, 22);
        let fine = fbm(u, v, 64, 2, 23);
        let c = [0.26 + 0.16 * patches, 0.44 + 0.14 * blades, 0.13 + 0.06 * patches].map(|x| x * (0.75 + 0.4 * fine));
        let [r, g, b] = srgb8(c);
        [r, g, b, 255]
    })
}

/// Rock: grey fractal noise with dark cracks.
pub fn rock(size: u32) -> Texture2D {
    generate("rock", size, true, |u, v| {
        let n = fbm(u, v, 8, 5, 31);
        let crack = (fbm(u, v, 6, 3, 32) - 0.5).abs();
        let dark = if crack < 0.02 { 0.55 } else { 1.0 };
        let g = (0.34 + 0.3 * n) * dark;
        let [r, gg, b] = srgb8([g * 1.03, g, g * 0.95]);
        [r, gg, b, 255]
    })
}

/// Sand: fine beige noise.
pub fn sand(size: u32) -> Texture2D {
    generate("sand", size, true, |u, v| {
        let n = fbm(u, v, 16, 4, 41);
        let c = [0.72, 0.64, 0.46].map(|x| x * (0.85 + 0.25 * n));
        let [r, g, b] = srgb8(c);
        [r, g, b, 255]
    })
}

/// Bark: brown ridges running along V (up a trunk), with knots of darker noise.
pub fn bark(size: u32) -> Texture2D {
    generate("bark", size, true, |u, v| {
        let ridges = fbm(u, v * 0.125, 16, 3, 51);
        let furrow = (ridges * 9.0).fract();
        let dark = if furrow < 0.3 { 0.55 + furrow } else { 1.0 };
        let n = fbm(u, v, 8, 3, 52);
        let c = [0.36, 0.25, 0.16].map(|x| x * dark * (0.8 + 0.4 * n));
        let [r, g, b] = srgb8(c);
        [r, g, b, 255]
    })
}

/// A sprite sheet (sRGB with alpha) of `cells`² images of `image_size`²
/// texels each, numbered row by row from the top-left: a fireball's life
/// in `cells`² steps. Image `k` of `n` is a noisy, soft-edged puff whose
/// radius grows from a fifth to over a third of its image with `p = k /
/// (n - 1)`, its colour going from white-hot yellow through orange and red
/// to grey smoke and its alpha fading to a third; a margin of transparent
/// texels keeps neighbours apart at lower mips.
pub fn fireball_flipbook(image_size: u32, cells: u32) -> Texture2D {
    let n = (cells * cells).max(2) as f32;
    let cells_f = cells as f32;
    generate("fireball flipbook", image_size * cells, true, |u, v| {
        let (cu, cv) = ((u * cells_f).floor(), (v * cells_f).floor());
        let p = (cv * cells_f + cu) / (n - 1.0);
        // Local coordinates in the image, centred.
        let (x, y) = (u * cells_f - cu - 0.5, v * cells_f - cv - 0.5);
        let radius = 0.2 + 0.16 * p;
        let noise = fbm(u * 0.5, v * 0.5, 8, 3, 17) - 0.5;
        let r = (x * x + y * y).sqrt() / radius + 0.5 * noise;
        let a = ((1.0 - r) * 4.0).clamp(0.0, 1.0) * (1.0 - 0.67 * p);
        let keys = [[1.0, 0.95, 0.7], [1.0, 0.6, 0.15], [0.85, 0.2, 0.05], [0.35, 0.33, 0.32]];
        let at = p * 3.0;
        let (i, f) = ((at.floor() as usize).min(2), at - at.floor().min(2.0));
        let c: [f32; 3] = std::array::from_fn(|k| keys[i][k] + (keys[i + 1][k] - keys[i][k]) * f);
        let [r8, g8, b8] = srgb8(c);
        [r8, g8, b8, (a * 255.0 + 0.5) as u8]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flipbook_goes_from_a_small_hot_puff_to_wide_faint_smoke() {
        let (image, cells) = (32u32, 4u32);
        let t = fireball_flipbook(image, cells);
        let size = image * cells;
        assert_eq!((t.width, t.height), (size, size));
        let texel = |x: u32, y: u32| {
            let i = ((y * size + x) * 4) as usize;
            [t.data[i], t.data[i + 1], t.data[i + 2], t.data[i + 3]]
        };
        // Image k's centre and a point a third of an image out from it.
        let at = |k: u32, dx: u32| texel((k % cells) * image + image / 2 + dx, (k / cells) * image + image / 2);
        let (first, last) = (at(0, 0), at(cells * cells - 1, 0));
        assert!(first[0] > 240 && first[2] > 150 && first[3] > 240, "white-hot: {first:?}");
        assert!(last[0].abs_diff(last[2]) < 30 && last[3] < 120, "grey, faint: {last:?}");
        // The first puff is small, the last wide.
        assert!(at(0, image / 4)[3] == 0 && at(cells * cells - 1, image / 4)[3] > 0);
        // Margins are clear: every image's corners.
        for k in 0..cells * cells {
            assert_eq!(texel((k % cells) * image, (k / cells) * image)[3], 0, "image {k}");
        }
    }

    #[test]
    fn noise_tiles_and_stays_in_range() {
        for i in 0..64 {
            let (u, v) = (hash(i, 0, 1), hash(i, 1, 1));
            let n = fbm(u, v, 8, 4, 3);
            assert!((0.0..1.0).contains(&n), "{n}");
            // One period over: the same value (the lattice wraps).
            assert!((value_noise(u * 8.0, v * 8.0, 8, 2) - value_noise(u * 8.0 + 8.0, v * 8.0 - 8.0, 8, 2)).abs() < 1e-5);
        }
    }

    /// A dome in the middle of the tile: right of it the surface slopes down
    /// to the right, so the normal leans +X; above it (smaller rows, the
    /// image's top) it leans +Y — OpenGL-style, as materials expect.
    #[test]
    fn normal_maps_lean_away_from_a_bump_with_y_up() {
        let size = 32u32;
        let height: Vec<f32> = (0..size * size)
            .map(|i| {
                let (x, y) = ((i % size) as f32 - 16.0, (i / size) as f32 - 16.0);
                (-(x * x + y * y) / 20.0).exp() * 4.0
            })
            .collect();
        let t = normal_map("bump", size, &height, 1.0);
        assert_eq!(t.format, TextureFormat::Rgba8Unorm);
        let texel = |x: u32, y: u32| {
            let i = ((y * size + x) * 4) as usize;
            [t.data[i], t.data[i + 1], t.data[i + 2]].map(|c| c as f32 / 255.0 * 2.0 - 1.0)
        };
        let right = texel(19, 16);
        let above = texel(16, 13);
        let flat = texel(0, 0);
        assert!(right[0] > 0.3 && right[1].abs() < 0.05, "{right:?}");
        assert!(above[1] > 0.3 && above[0].abs() < 0.05, "{above:?}");
        assert!(flat[2] > 0.99, "{flat:?}");
    }

    #[test]
    fn leaves_have_holes_and_bricks_have_mortar() {
        let t = leaves(64, 0.5, 7);
        let alpha: Vec<u8> = t.data.chunks(4).map(|p| p[3]).collect();
        let covered = alpha.iter().filter(|&&a| a == 255).count() as f32 / alpha.len() as f32;
        assert!(alpha.iter().all(|&a| a == 0 || a == 255));
        assert!((0.2..0.9).contains(&covered), "leaves cover {covered}");
        let (albedo, height) = bricks(64);
        assert_eq!((albedo.width, albedo.format, height.len()), (64, TextureFormat::Rgba8Srgb, 64 * 64));
        assert!(height.contains(&0.0) && height.iter().any(|&h| h > 0.8), "mortar and brick faces");
    }
}
