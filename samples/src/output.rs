//! PNG output and the progress line.

use anyhow::Context;
use rhi_vulkan::Image;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// Writes an RGBA8 image as PNG, creating the folder.
pub fn write_png(path: &Path, image: &Image) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), image.width, image.height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&image.rgba8)?;
    writer.finish()?;
    Ok(())
}

/// Prints "frame i/n" at most once a second, and only after the first second.
pub struct Progress {
    started: Instant,
    last: Instant,
    total: u64,
}

impl Progress {
    pub fn new(total: u64) -> Self {
        let now = Instant::now();
        Self { started: now, last: now, total }
    }

    pub fn frame_done(&mut self, done: u64) {
        let now = Instant::now();
        if now.duration_since(self.started) > Duration::from_secs(1) && now.duration_since(self.last) > Duration::from_secs(1) {
            self.last = now;
            eprint!("\r  frame {done}/{}", self.total);
            let _ = std::io::stderr().flush();
        }
    }

    pub fn finish(&self) {
        if self.last != self.started {
            eprintln!();
        }
    }
}
