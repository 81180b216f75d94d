//! `summary.png`: every figure that has a goal, as a bar of its cost against
//! that goal on a log scale — value / bound for "at most" goals, bound /
//! value for "at least" ones — so the goal is one vertical line for all rows
//! and a bar that stops left of it is met (green), one past it is missed
//! (red). A row with a range (the paired measurements its value is the
//! median of) gets a whisker from the cost of its best to that of its worst
//! measurement across the bar; one that crosses the goal line straddles it.
//! Drawn into a plain RGB buffer with the 5×7 font of [`super::font`].

use super::font;
use super::summary::{format_value, Goal, Row};
use std::path::Path;

const WIDTH: u32 = 1400;
const MARGIN: u32 = 20;
const TEXT_SCALE: u32 = 2;
const ROW_HEIGHT: u32 = 46;
const BAR_HEIGHT: u32 = 14;
/// The log scale's ends: a hundredth and a hundred times the goal.
const LOG_MIN: f64 = -2.0;
const LOG_MAX: f64 = 2.0;

struct Canvas {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Canvas {
    fn new(width: u32, height: u32) -> Self {
        Self { width, height, rgb: vec![255; (width * height * 3) as usize] }
    }

    fn put(&mut self, x: u32, y: u32, c: [u8; 3]) {
        if x < self.width && y < self.height {
            let i = ((y * self.width + x) * 3) as usize;
            self.rgb[i..i + 3].copy_from_slice(&c);
        }
    }

    fn rect(&mut self, x0: u32, y0: u32, x1: u32, y1: u32, c: [u8; 3]) {
        for y in y0..y1 {
            for x in x0..x1 {
                self.put(x, y, c);
            }
        }
    }

    fn text(&mut self, s: &str, x: u32, y: u32, c: [u8; 3]) {
        let max_chars = ((self.width.saturating_sub(x + MARGIN)) / (font::ADVANCE * TEXT_SCALE)) as usize;
        let clipped: String = s.chars().take(max_chars).collect();
        font::draw(&clipped, x, y, TEXT_SCALE, |px, py| self.put(px, py, c));
    }
}

/// The x of a cost on the log axis.
fn axis_x(cost: f64) -> u32 {
    let t = ((cost.max(1e-12).log10() - LOG_MIN) / (LOG_MAX - LOG_MIN)).clamp(0.0, 1.0);
    MARGIN + (t * (WIDTH - 2 * MARGIN) as f64) as u32
}

/// A plotted row: the row, the cost of its value, the costs of its range's ends.
type Judged<'a> = (&'a Row, f64, Option<(f64, f64)>);

/// Writes the plot of `rows` (those with a goal) to `path`; returns how many
/// rows it shows.
pub fn write(path: &Path, rows: &[Row]) -> Result<usize, String> {
    let judged: Vec<Judged> = rows
        .iter()
        .filter_map(|r| {
            let goal = r.goal.as_deref().and_then(Goal::parse)?;
            let range = r.range().and_then(|(lo, hi)| Some((goal.cost(lo)?, goal.cost(hi)?)));
            Some((r, goal.cost(r.value)?, range))
        })
        .collect();
    let header = 3 * ROW_HEIGHT / 2;
    let height = header + judged.len() as u32 * ROW_HEIGHT + 2 * MARGIN;
    let mut c = Canvas::new(WIDTH, height);
    let (ink, grey, green, red) = ([20, 20, 20], [200, 200, 200], [60, 160, 80], [210, 60, 50]);
    c.text("PROXIMA BENCHMARKS: EACH FIGURE AGAINST ITS GOAL (LOG SCALE, GOAL = 1, LEFT OF THE LINE IS MET)", MARGIN, MARGIN, ink);
    for decade in [LOG_MIN as i32, -1, 0, 1, LOG_MAX as i32] {
        let x = axis_x(10f64.powi(decade));
        c.rect(x, header, x + 1, height - MARGIN, grey);
        let label = format!("{}", 10f64.powi(decade));
        c.text(&label, x.saturating_sub(6).max(MARGIN), header - 20, grey);
    }
    let goal_x = axis_x(1.0);
    c.rect(goal_x - 1, header, goal_x + 2, height - MARGIN, [70, 90, 200]);
    for (i, (row, cost, range)) in judged.iter().enumerate() {
        let y = header + i as u32 * ROW_HEIGHT + 4;
        let met = row.met.unwrap_or(*cost <= 1.0);
        let label = format!(
            "{}: {} {} (GOAL {}){}{}",
            row.name,
            format_value(row.value),
            row.unit,
            row.goal.as_deref().unwrap_or(""),
            if met { "" } else { " MISSED" },
            if row.straddles == Some(true) { ", RANGE STRADDLES IT" } else { "" }
        );
        c.text(&label, MARGIN, y, ink);
        let bar_y = y + font::HEIGHT * TEXT_SCALE + 6;
        c.rect(MARGIN, bar_y, axis_x(*cost).max(MARGIN + 2), bar_y + BAR_HEIGHT, if met { green } else { red });
        if let Some((a, b)) = range {
            let (x0, x1) = (axis_x(a.min(*b)), axis_x(a.max(*b)));
            let mid = bar_y + BAR_HEIGHT / 2;
            c.rect(x0, mid - 1, x1 + 1, mid + 1, ink);
            c.rect(x0, bar_y - 2, x0 + 2, bar_y + BAR_HEIGHT + 2, ink);
            c.rect(x1.saturating_sub(1), bar_y - 2, x1 + 1, bar_y + BAR_HEIGHT + 2, ink);
        }
    }
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), c.width, c.height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(&c.rgb).map_err(|e| e.to_string())?;
    Ok(judged.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn met_rows_are_green_and_missed_red() {
        let rows = vec![
            Row { name: "a".into(), value: 20.0, unit: "x".into(), goal: Some(">= 10".into()), met: Some(true), ..Default::default() },
            Row { name: "b".into(), value: 6.0, unit: "x".into(), goal: Some("<= 3".into()), met: Some(false), ..Default::default() },
            Row { name: "c".into(), value: 1.0, unit: "ms".into(), goal: None, met: None, ..Default::default() },
            // Met on the median (cost 0.5), the range's worst at cost 2: a whisker across the goal.
            Row {
                name: "d".into(),
                value: 2.0,
                unit: "x".into(),
                goal: Some("<= 4".into()),
                met: Some(true),
                min: Some(1.0),
                max: Some(8.0),
                pairs: Some(5),
                straddles: Some(true),
            },
        ];
        let path = std::env::temp_dir().join(format!("xtask-plot-{}.png", std::process::id()));
        assert_eq!(write(&path, &rows).unwrap(), 3);
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let header = 3 * ROW_HEIGHT / 2;
        let pixel = |row: u32| {
            let y = header + row * ROW_HEIGHT + 4 + font::HEIGHT * TEXT_SCALE + 6 + BAR_HEIGHT / 2;
            let i = ((y * info.width + MARGIN + 1) * 3) as usize;
            [buf[i], buf[i + 1], buf[i + 2]]
        };
        assert_eq!(pixel(0), [60, 160, 80]);
        assert_eq!(pixel(1), [210, 60, 50]);
        // Row d: green bar up to cost 0.5, the whisker (ink) from cost 0.25
        // to 2 at the bar's middle, right of the goal line too.
        let at = |row: u32, x: u32| {
            let y = header + row * ROW_HEIGHT + 4 + font::HEIGHT * TEXT_SCALE + 6 + BAR_HEIGHT / 2;
            let i = ((y * info.width + x) * 3) as usize;
            [buf[i], buf[i + 1], buf[i + 2]]
        };
        assert_eq!(at(2, MARGIN + 1), [60, 160, 80]);
        assert_eq!(at(2, axis_x(1.5)), [20, 20, 20], "the whisker crosses the goal line");
        assert_eq!(at(2, axis_x(3.0)), [255, 255, 255], "and ends at the worst pair's cost");
        assert_eq!(at(1, axis_x(1.5)), [210, 60, 50], "a row without a range has no whisker");
        std::fs::remove_file(&path).unwrap();
    }
}
