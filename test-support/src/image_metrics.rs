//! Measures of a rendered image that two renderers of the same scene should
//! agree on, for comparing Proxima's image of a model with a reference
//! renderer's (`samples/tests/gltf_reference.rs`):
//!
//! * [`foreground_mask`]: the model's silhouette — every pixel that is not
//!   the background colour ([`background_colour`]: the most common colour on
//!   the image's border).
//! * [`impulse_noise_share`]: the share of foreground pixels that stand out
//!   from their 3×3 neighbourhood — speckle. A pixel is *noisy* when its
//!   luminance differs from the median luminance of its 3×3 neighbourhood
//!   (the pixel and its 8 neighbours) by more than `max(8, 0.4 × median)`.
//!   Luminance is Rec. 709's `0.2126 R + 0.7152 G + 0.0722 B` of the
//!   sRGB-encoded 8-bit values as they are (0..255, not linearised), the
//!   measure's unit. Only pixels whose whole neighbourhood is foreground
//!   count (the interior of the silhouette): at the silhouette's edge the
//!   neighbourhood holds background, and an edge is not noise.
//! * [`region_means`]: the mean colour of each cell of a grid (8×8 in the
//!   tests) laid over a bounding box (the reference's silhouette's,
//!   [`Mask::bounding_box`]), over the foreground pixels in the cell; a
//!   cell with fewer than a minimum number of them has no mean.
//!
//! Colours are `[f64; 3]` of 8-bit sRGB-encoded values (0..255).

use rhi_vulkan::Image;

/// Rec. 709 luminance of an sRGB-encoded 8-bit pixel's values, 0..255.
pub fn luminance(p: [u8; 4]) -> f64 {
    // In integers first, so a grey's luminance is its value exactly.
    f64::from(2126 * u32::from(p[0]) + 7152 * u32::from(p[1]) + 722 * u32::from(p[2])) / 10000.0
}

fn pixel(img: &Image, x: u32, y: u32) -> [u8; 4] {
    let i = (y as usize * img.width as usize + x as usize) * 4;
    [img.rgba8[i], img.rgba8[i + 1], img.rgba8[i + 2], img.rgba8[i + 3]]
}

/// The most common colour (RGB, alpha ignored) among the pixels of the
/// image's outermost rows and columns: the background of a framed model.
pub fn background_colour(img: &Image) -> [u8; 3] {
    let (w, h) = (img.width, img.height);
    let mut counts: std::collections::HashMap<[u8; 3], usize> = std::collections::HashMap::new();
    let border = (0..w).flat_map(|x| [(x, 0), (x, h - 1)]).chain((0..h).flat_map(|y| [(0, y), (w - 1, y)]));
    for (x, y) in border {
        let p = pixel(img, x, y);
        *counts.entry([p[0], p[1], p[2]]).or_default() += 1;
    }
    // Ties go to the smallest colour, so the answer does not depend on hashing.
    counts.into_iter().max_by_key(|&(c, n)| (n, std::cmp::Reverse(c))).map(|(c, _)| c).unwrap_or([0; 3])
}

/// Which pixels are foreground (row-major, `width × height`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mask {
    pub width: u32,
    pub height: u32,
    pub bits: Vec<bool>,
}

impl Mask {
    pub fn get(&self, x: u32, y: u32) -> bool {
        self.bits[y as usize * self.width as usize + x as usize]
    }

    /// How many pixels are foreground.
    pub fn count(&self) -> usize {
        self.bits.iter().filter(|&&b| b).count()
    }

    /// The smallest rectangle holding every foreground pixel (`None`: none).
    pub fn bounding_box(&self) -> Option<Rect> {
        let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
        for y in 0..self.height {
            for x in 0..self.width {
                if self.get(x, y) {
                    (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1));
                }
            }
        }
        (x0 < x1).then_some(Rect { x0, y0, x1, y1 })
    }

    /// Intersection over union of two masks of the same size (1: the same
    /// silhouette; 1 as well when both are empty).
    pub fn iou(&self, other: &Mask) -> f64 {
        assert_eq!((self.width, self.height), (other.width, other.height), "masks of different sizes");
        let both = self.bits.iter().zip(&other.bits).filter(|(a, b)| **a && **b).count();
        let either = self.bits.iter().zip(&other.bits).filter(|(a, b)| **a || **b).count();
        if either == 0 {
            1.0
        } else {
            both as f64 / either as f64
        }
    }
}

/// A pixel rectangle, `x0..x1` × `y0..y1` (ends exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub x0: u32,
    pub y0: u32,
    pub x1: u32,
    pub y1: u32,
}

/// Every pixel whose RGB differs from `background` (alpha ignored).
pub fn foreground_mask(img: &Image, background: [u8; 3]) -> Mask {
    let bits = img.rgba8.chunks_exact(4).map(|p| [p[0], p[1], p[2]] != background).collect();
    Mask { width: img.width, height: img.height, bits }
}

/// What [`impulse_noise_share`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseShare {
    /// Pixels counted: foreground with an all-foreground 3×3 neighbourhood.
    pub counted: usize,
    /// Of those, the ones off their neighbourhood's median by more than
    /// `max(8, 0.4 × median)`.
    pub noisy: usize,
}

impl NoiseShare {
    /// `noisy / counted` (0 when nothing was counted).
    pub fn share(&self) -> f64 {
        if self.counted == 0 {
            0.0
        } else {
            self.noisy as f64 / self.counted as f64
        }
    }
}

/// The impulse-noise share of `img` over `mask` (see the module docs).
pub fn impulse_noise_share(img: &Image, mask: &Mask) -> NoiseShare {
    assert_eq!((img.width, img.height), (mask.width, mask.height), "image and mask of different sizes");
    let (w, h) = (img.width, img.height);
    let lum: Vec<f64> = img.rgba8.chunks_exact(4).map(|p| luminance([p[0], p[1], p[2], p[3]])).collect();
    let mut share = NoiseShare { counted: 0, noisy: 0 };
    let mut window = [0.0f64; 9];
    for y in 1..h.saturating_sub(1) {
        for x in 1..w.saturating_sub(1) {
            let mut all = true;
            for (k, (dx, dy)) in (0..3).flat_map(|dy| (0..3).map(move |dx| (dx, dy))).enumerate() {
                let (nx, ny) = (x + dx - 1, y + dy - 1);
                all &= mask.get(nx, ny);
                window[k] = lum[ny as usize * w as usize + nx as usize];
            }
            if !all {
                continue;
            }
            window.sort_by(f64::total_cmp);
            let median = window[4];
            share.counted += 1;
            if (lum[y as usize * w as usize + x as usize] - median).abs() > f64::max(8.0, 0.4 * median) {
                share.noisy += 1;
            }
        }
    }
    share
}

/// The mean colour of one grid cell's foreground pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellMean {
    /// Mean R, G, B (sRGB-encoded, 0..255).
    pub mean: [f64; 3],
    /// Foreground pixels in the cell.
    pub pixels: usize,
}

/// The cells of a `grid × grid` division of `bbox`, row-major (top row
/// first): cell `(i, j)` is columns `x0 + i·W/grid .. x0 + (i+1)·W/grid`
/// (integer division) and the same for rows.
pub fn grid_cells(bbox: Rect, grid: u32) -> Vec<Rect> {
    let (w, h) = (bbox.x1 - bbox.x0, bbox.y1 - bbox.y0);
    let mut cells = Vec::with_capacity((grid * grid) as usize);
    for j in 0..grid {
        for i in 0..grid {
            cells.push(Rect {
                x0: bbox.x0 + i * w / grid,
                x1: bbox.x0 + (i + 1) * w / grid,
                y0: bbox.y0 + j * h / grid,
                y1: bbox.y0 + (j + 1) * h / grid,
            });
        }
    }
    cells
}

/// The mean colour of `mask`'s pixels of `img` in each cell of a
/// `grid × grid` division of `bbox` ([`grid_cells`]); `None` for a cell
/// with fewer than `min_pixels` foreground pixels.
pub fn region_means(img: &Image, mask: &Mask, bbox: Rect, grid: u32, min_pixels: usize) -> Vec<Option<CellMean>> {
    assert_eq!((img.width, img.height), (mask.width, mask.height), "image and mask of different sizes");
    assert!(grid > 0 && bbox.x1 <= img.width && bbox.y1 <= img.height, "grid {grid}, box {bbox:?} in {}x{}", img.width, img.height);
    grid_cells(bbox, grid)
        .into_iter()
        .map(|cell| {
            let (mut sum, mut pixels) = ([0.0f64; 3], 0usize);
            for y in cell.y0..cell.y1 {
                for x in cell.x0..cell.x1 {
                    if mask.get(x, y) {
                        let p = pixel(img, x, y);
                        for c in 0..3 {
                            sum[c] += f64::from(p[c]);
                        }
                        pixels += 1;
                    }
                }
            }
            (pixels >= min_pixels.max(1)).then(|| CellMean { mean: sum.map(|s| s / pixels as f64), pixels })
        })
        .collect()
}

/// The largest per-channel difference of two mean colours.
pub fn max_channel_diff(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|c| (a[c] - b[c]).abs()).fold(0.0, f64::max)
}

/// An image of `|a − b|` per channel, times `gain`, clamped (opaque), for
/// looking at where two images differ.
pub fn diff_image(a: &Image, b: &Image, gain: f64) -> Image {
    assert_eq!((a.width, a.height), (b.width, b.height), "images of different sizes");
    let rgba8 = a
        .rgba8
        .chunks_exact(4)
        .zip(b.rgba8.chunks_exact(4))
        .flat_map(|(p, q)| {
            let d = |c: usize| ((f64::from(p[c]) - f64::from(q[c])).abs() * gain).round().min(255.0) as u8;
            [d(0), d(1), d(2), 255]
        })
        .collect();
    Image { width: a.width, height: a.height, rgba8 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small seeded generator (the crate's `Rng` needs the `renderer` feature).
    struct Lcg(u64);

    impl Lcg {
        fn next_f64(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn solid(w: u32, h: u32, c: [u8; 4]) -> Image {
        Image { width: w, height: h, rgba8: c.repeat((w * h) as usize) }
    }

    fn set(img: &mut Image, x: u32, y: u32, c: [u8; 4]) {
        let i = (y as usize * img.width as usize + x as usize) * 4;
        img.rgba8[i..i + 4].copy_from_slice(&c);
    }

    const BG: [u8; 4] = [255, 0, 255, 255];

    /// A 100×80 image: background around a 60×40 block of `fill` at (20, 20).
    fn block(fill: [u8; 4]) -> Image {
        let mut img = solid(100, 80, BG);
        for y in 20..60 {
            for x in 20..80 {
                set(&mut img, x, y, fill);
            }
        }
        img
    }

    #[test]
    fn luminance_weights_are_rec_709() {
        assert_eq!(luminance([255, 255, 255, 255]), 255.0);
        assert!((luminance([100, 0, 0, 255]) - 21.26).abs() < 1e-9);
        assert!((luminance([0, 100, 0, 255]) - 71.52).abs() < 1e-9);
        assert!((luminance([0, 0, 100, 255]) - 7.22).abs() < 1e-9);
    }

    #[test]
    fn the_mask_is_everything_but_the_border_colour() {
        let img = block([90, 90, 90, 255]);
        assert_eq!(background_colour(&img), [255, 0, 255]);
        let mask = foreground_mask(&img, [255, 0, 255]);
        assert_eq!(mask.count(), 60 * 40);
        assert_eq!(mask.bounding_box(), Some(Rect { x0: 20, y0: 20, x1: 80, y1: 60 }));
        assert_eq!(mask.iou(&mask), 1.0);
        let empty = foreground_mask(&solid(4, 4, BG), [255, 0, 255]);
        assert_eq!(empty.bounding_box(), None);
        assert_eq!(mask.iou(&foreground_mask(&solid(100, 80, BG), [255, 0, 255])), 0.0);
    }

    #[test]
    fn a_smooth_image_has_no_impulse_noise_and_its_edges_do_not_count() {
        // A gradient inside the block: each pixel is within a few levels
        // of its neighbours' median; the block's edge against the
        // background is excluded (the background is far brighter).
        let mut img = block([0; 4]);
        for y in 20..60 {
            for x in 20..80 {
                let v = (x * 2) as u8;
                set(&mut img, x, y, [v, v, v, 255]);
            }
        }
        let mask = foreground_mask(&img, [255, 0, 255]);
        let noise = impulse_noise_share(&img, &mask);
        assert_eq!(noise.counted, 58 * 38, "interior pixels only");
        assert_eq!(noise.noisy, 0);
        assert_eq!(noise.share(), 0.0);
    }

    /// Salt-and-pepper noise: a share `p` of a grey block's pixels set to
    /// black or white at random. A flipped pixel is noisy (its median is
    /// the grey, unless its neighbourhood is mostly flipped too), so the
    /// share found is close to `p`.
    #[test]
    fn salt_and_pepper_noise_reads_as_its_share() {
        for p in [0.01, 0.05, 0.2] {
            let mut img = block([120, 120, 120, 255]);
            let mut rng = Lcg(7);
            let mut flipped = 0;
            for y in 21..59 {
                for x in 21..79 {
                    if rng.next_f64() < p {
                        let v = if rng.next_f64() < 0.5 { 0 } else { 250 };
                        set(&mut img, x, y, [v, v, v, 255]);
                        flipped += 1;
                    }
                }
            }
            let mask = foreground_mask(&img, [255, 0, 255]);
            let noise = impulse_noise_share(&img, &mask);
            let expected = flipped as f64 / noise.counted as f64;
            assert!(
                (noise.share() - expected).abs() <= 0.1 * expected + 0.002,
                "p {p}: share {} vs {expected} flipped ({noise:?})",
                noise.share()
            );
            assert!(noise.share() > 0.8 * p, "p {p}: {noise:?}");
        }
    }

    /// The threshold is `max(8, 0.4 × median)`: in a dark region a step of
    /// 9 levels is noise, in a bright one (median 200) it takes over 80.
    #[test]
    fn the_threshold_is_relative_above_20_and_8_levels_below() {
        let one_pixel = |grey: u8, centre: u8| {
            let mut img = block([grey, grey, grey, 255]);
            set(&mut img, 50, 40, [centre, centre, centre, 255]);
            impulse_noise_share(&img, &foreground_mask(&img, [255, 0, 255])).noisy
        };
        assert_eq!(one_pixel(10, 19), 1);
        assert_eq!(one_pixel(10, 18), 0);
        assert_eq!(one_pixel(200, 255), 0);
        assert_eq!(one_pixel(200, 119), 1);
        assert_eq!(one_pixel(200, 121), 0);
    }

    #[test]
    fn region_means_average_the_foreground_of_each_cell() {
        // Left half red, right half blue, in a 2×2 grid over the block.
        let mut img = block([0; 4]);
        for y in 20..60 {
            for x in 20..80 {
                set(&mut img, x, y, if x < 50 { [200, 10, 10, 255] } else { [10, 10, 200, 255] });
            }
        }
        // A hole of background in the top-left cell: not averaged in.
        for y in 20..30 {
            for x in 20..50 {
                set(&mut img, x, y, BG);
            }
        }
        let mask = foreground_mask(&img, [255, 0, 255]);
        let bbox = Rect { x0: 20, y0: 20, x1: 80, y1: 60 };
        let means = region_means(&img, &mask, bbox, 2, 1);
        assert_eq!(means.len(), 4);
        let m: Vec<CellMean> = means.into_iter().map(Option::unwrap).collect();
        assert_eq!(m[0], CellMean { mean: [200.0, 10.0, 10.0], pixels: 30 * 10 });
        assert_eq!(m[1], CellMean { mean: [10.0, 10.0, 200.0], pixels: 30 * 20 });
        assert_eq!(m[2].mean, [200.0, 10.0, 10.0]);
        assert_eq!(m[3].pixels, 600);
        // A minimum the hole-y cell does not meet.
        assert!(region_means(&img, &mask, bbox, 2, 301)[0].is_none());
        // A cell half red, half blue averages them.
        let one = region_means(&img, &mask, Rect { x0: 40, y0: 40, x1: 60, y1: 60 }, 1, 1);
        assert_eq!(one[0].unwrap().mean, [105.0, 10.0, 105.0]);
        assert_eq!(max_channel_diff([1.0, 2.0, 3.0], [1.5, 0.0, 3.0]), 2.0);
    }

    #[test]
    fn grid_cells_tile_the_box() {
        let cells = grid_cells(Rect { x0: 3, y0: 5, x1: 20, y1: 12 }, 8);
        assert_eq!(cells.len(), 64);
        let area: u32 = cells.iter().map(|c| (c.x1 - c.x0) * (c.y1 - c.y0)).sum();
        assert_eq!(area, 17 * 7);
        assert_eq!((cells[0].x0, cells[0].y0, cells[63].x1, cells[63].y1), (3, 5, 20, 12));
    }

    #[test]
    fn the_diff_image_scales_the_difference() {
        let a = solid(2, 1, [10, 20, 30, 255]);
        let b = solid(2, 1, [12, 20, 0, 255]);
        assert_eq!(diff_image(&a, &b, 4.0).rgba8, [8, 0, 120, 255].repeat(2));
    }
}
