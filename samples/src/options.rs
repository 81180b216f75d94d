//! The options every sample accepts (see `docs/samples.md`). clap exits with
//! code 2 and a clear message on a bad option.

use clap::Args;
use rhi_vulkan::PresentMode;
use std::path::PathBuf;

/// Parses `NAME=VALUE` for `--cvar`.
pub fn parse_cvar(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() && !value.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("expected NAME=VALUE, got {s:?}")),
    }
}

/// A percentage, 0..=100 (the samples' `--moving P`).
pub fn parse_percent(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if (0.0..=100.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not in 0..=100"))
    }
}

/// An anti-aliasing method (`--aa`): `r.AntiAliasingMethod`'s value and,
/// for MSAA, `r.MSAACount`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AaChoice {
    /// `r.AntiAliasingMethod`: 0 none, 1 FXAA, 2 TAA, 3 MSAA.
    pub method: u32,
    /// `r.MSAACount` with MSAA.
    pub samples: Option<u32>,
}

impl AaChoice {
    /// FXAA.
    pub const FXAA: Self = Self { method: 1, samples: None };
    /// 4x MSAA.
    pub const MSAA4: Self = Self { method: 3, samples: Some(4) };
    /// TAA.
    pub const TAA: Self = Self { method: 2, samples: None };
}

/// Parses `--aa`: `none`, `fxaa`, `taa`, `msaa2`, `msaa4` or `msaa8`.
pub fn parse_aa(s: &str) -> Result<AaChoice, String> {
    let msaa = |n| Ok(AaChoice { method: 3, samples: Some(n) });
    match s {
        "none" => Ok(AaChoice { method: 0, samples: None }),
        "fxaa" => Ok(AaChoice::FXAA),
        "msaa2" => msaa(2),
        "msaa4" => msaa(4),
        "msaa8" => msaa(8),
        "taa" => Ok(AaChoice::TAA),
        _ => Err(format!("expected none, fxaa, taa, msaa2, msaa4 or msaa8, got {s:?}")),
    }
}

/// The environment that lights a sample's scene (`--environment`).
#[derive(Clone, Debug, PartialEq)]
pub enum EnvironmentOption {
    /// The flat sky-and-ground ambient, nothing drawn behind the scene.
    Hemisphere,
    /// The renderer's analytic sky (`renderer::ProceduralSky`), its sun the sample's.
    Sky,
    /// An equirectangular Radiance `.hdr` panorama.
    File(PathBuf),
}

/// Parses `--environment`: `hemisphere`, `sky`, or a path to a `.hdr` file.
pub fn parse_environment(s: &str) -> Result<EnvironmentOption, String> {
    match s {
        "hemisphere" => Ok(EnvironmentOption::Hemisphere),
        "sky" => Ok(EnvironmentOption::Sky),
        _ if s.to_ascii_lowercase().ends_with(".hdr") => Ok(EnvironmentOption::File(PathBuf::from(s))),
        _ => Err(format!("expected hemisphere, sky or a .hdr file, got {s:?}")),
    }
}

/// Parses `--fixed-dt`: seconds per frame, positive and at most one.
pub fn parse_fixed_dt(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(format!("expected seconds per frame in (0, 1], got {s:?}")),
    }
}

/// Parses `--ev100`: a finite exposure value within -20..=30.
pub fn parse_ev100(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if (-20.0..=30.0).contains(&v) => Ok(v),
        _ => Err(format!("expected an EV100 in -20..=30, got {s:?}")),
    }
}

/// Parses `on` or `off`.
pub fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("expected on or off, got {s:?}")),
    }
}

/// What `--show` turns on (UE's show flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShowFlags {
    /// Every visible primitive's box and sphere (`SceneView::show_bounds`).
    pub bounds: bool,
    /// Every collision body's shapes as lines (`World::set_show_collision`).
    pub collision: bool,
}

/// Parses `--show`: a comma-separated list of `bounds` and `collision`.
pub fn parse_show(s: &str) -> Result<ShowFlags, String> {
    let mut flags = ShowFlags::default();
    for name in s.split(',').map(str::trim) {
        match name {
            "bounds" => flags.bounds = true,
            "collision" => flags.collision = true,
            _ => return Err(format!("expected bounds and/or collision (comma-separated), got {name:?}")),
        }
    }
    Ok(flags)
}

/// Parses `--tonemapper`: the value of `r.Tonemapper`.
pub fn parse_tonemapper(s: &str) -> Result<u32, String> {
    match s {
        "none" => Ok(0),
        "aces" => Ok(1),
        "agx" => Ok(2),
        "pbr-neutral" => Ok(3),
        _ => Err(format!("expected none, aces, agx or pbr-neutral, got {s:?}")),
    }
}

/// Parses `fifo`, `mailbox` or `immediate` for `--present`.
pub fn parse_present(s: &str) -> Result<PresentMode, String> {
    s.parse()
}

#[derive(Args, Debug, Clone)]
pub struct CommonOptions {
    /// Render N frames, then exit (headless default: 3).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub frames: Option<u64>,
    /// Frame width in pixels.
    #[arg(long, default_value_t = 1280, value_parser = clap::value_parser!(u32).range(1..=16384))]
    pub width: u32,
    /// Frame height in pixels.
    #[arg(long, default_value_t = 720, value_parser = clap::value_parser!(u32).range(1..=16384))]
    pub height: u32,
    /// Write the last frame as PNG (headless default: `target/samples/<sample>.png`).
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Write the last frame's stats as JSON.
    #[arg(long, value_name = "PATH")]
    pub stats: Option<PathBuf>,
    /// Write a Chrome trace of the run (every frame stage, worker task and
    /// game frame) for chrome://tracing or Perfetto.
    #[arg(long, value_name = "PATH")]
    pub trace: Option<PathBuf>,
    /// Never open a window (the default when no display is set).
    #[arg(long, conflicts_with = "window")]
    pub headless: bool,
    /// Open a window (the default when DISPLAY or WAYLAND_DISPLAY is set).
    #[arg(long)]
    pub window: bool,
    /// One thread everywhere: inline render commands, serial pass setup and recording.
    #[arg(long)]
    pub serial: bool,
    /// Set a console variable, e.g. --cvar r.MeshDrawCommands.DynamicInstancing=0 (repeatable).
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_cvar)]
    pub cvar: Vec<(String, String)>,
    /// Draw every view in wireframe.
    #[arg(long)]
    pub wireframe: bool,
    /// Debug views (UE's show flags): bounds (every visible primitive's
    /// box and sphere) and/or collision (every collision body's shapes),
    /// comma-separated, drawn as lines over the scene.
    #[arg(long, value_name = "bounds,collision", value_parser = parse_show)]
    pub show: Option<ShowFlags>,
    /// Anti-aliasing: none, fxaa, taa, or msaa2/msaa4/msaa8
    /// (`r.AntiAliasingMethod` and `r.MSAACount`: the device's most samples
    /// below the count where it has fewer). Default: the sample's own (taa
    /// in the showcase, msaa4 in gltf, fxaa elsewhere).
    #[arg(long, value_name = "none|fxaa|taa|msaa2|msaa4|msaa8", value_parser = parse_aa)]
    pub aa: Option<AaChoice>,
    /// Advance time by exactly this many seconds each frame, in a window as
    /// headless (headless default: 1/60), so that a run is repeatable.
    #[arg(long, value_name = "SECONDS", value_parser = parse_fixed_dt)]
    pub fixed_dt: Option<f32>,
    /// A manual exposure as an EV100 (`r.Exposure` = 1 / (1.2 · 2^EV100);
    /// default: the sample's own, 1 for most: EV100 -0.26).
    #[arg(long, value_name = "EV100", allow_hyphen_values = true, value_parser = parse_ev100)]
    pub ev100: Option<f32>,
    /// The environment that lights the scene and is drawn behind it:
    /// hemisphere (a flat sky-and-ground ambient), sky (an analytic sky
    /// from the sample's sun) or an equirectangular Radiance .hdr file.
    /// Default: sky in the gltf and materials samples, hemisphere elsewhere.
    #[arg(long, value_name = "hemisphere|sky|FILE.hdr", value_parser = parse_environment)]
    pub environment: Option<EnvironmentOption>,
    /// Automatic exposure: on or off (`r.AutoExposure`: a luminance
    /// histogram of the view, adapted over time; default off). `--ev100`
    /// is the manual exposure it replaces.
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub auto_exposure: Option<bool>,
    /// Bloom: on or off (`r.Bloom`; default: on in the showcase, off elsewhere).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub bloom: Option<bool>,
    /// The tone mapper: none, aces, agx or pbr-neutral (`r.Tonemapper`;
    /// default aces).
    #[arg(long, value_name = "none|aces|agx|pbr-neutral", value_parser = parse_tonemapper)]
    pub tonemapper: Option<u32>,
    /// Window mode's present mode: fifo (vsync), mailbox or immediate (not
    /// capped by vsync); fifo where the surface lacks the one asked for.
    #[arg(long, value_name = "fifo|mailbox|immediate", default_value = "fifo", value_parser = parse_present)]
    pub present: PresentMode,
}

impl CommonOptions {
    /// The headless frame time: `--fixed-dt`, else 1/60 s.
    pub fn headless_dt(&self) -> f32 {
        self.fixed_dt.unwrap_or(1.0 / 60.0)
    }

    /// Frames to render: `--frames`, else 3.
    pub fn frame_count(&self) -> u64 {
        self.frames.unwrap_or(3)
    }

    /// Where the PNG goes: `--out`, else `target/samples/<sample>.png`.
    pub fn out_path(&self, sample: &str) -> PathBuf {
        self.out.clone().unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| "target".into());
            target.join("samples").join(format!("{sample}.png"))
        })
    }

    /// Whether a window was asked for, explicitly or by a display being set.
    pub fn wants_window(&self) -> bool {
        if self.headless {
            return false;
        }
        self.window || std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        common: CommonOptions,
    }

    fn parse(args: &[&str]) -> Result<CommonOptions, clap::Error> {
        use clap::Parser;
        Cli::try_parse_from(std::iter::once("sample").chain(args.iter().copied())).map(|c| c.common)
    }

    #[test]
    fn aa_and_tonemapper_take_their_names_and_refuse_the_rest() {
        let o = parse(&["--aa", "fxaa", "--tonemapper", "pbr-neutral", "--bloom", "on", "--environment", "studio.HDR"]).unwrap();
        assert_eq!(o.environment, Some(EnvironmentOption::File("studio.HDR".into())));
        assert_eq!(parse(&["--environment", "sky"]).unwrap().environment, Some(EnvironmentOption::Sky));
        assert_eq!(parse(&["--auto-exposure", "on"]).unwrap().auto_exposure, Some(true));
        assert_eq!((o.aa, o.tonemapper, o.bloom), (Some(AaChoice::FXAA), Some(3), Some(true)));
        assert_eq!(parse(&["--aa", "msaa4"]).unwrap().aa, Some(AaChoice::MSAA4));
        assert_eq!(parse(&["--aa", "taa"]).unwrap().aa, Some(AaChoice::TAA));
        assert_eq!(parse(&["--fixed-dt", "0.02"]).unwrap().headless_dt(), 0.02);
        assert_eq!(parse(&[]).unwrap().headless_dt(), 1.0 / 60.0);
        assert_eq!(parse(&["--ev100", "-1.5"]).unwrap().ev100, Some(-1.5));
        assert_eq!(parse(&[]).unwrap().aa, None);
        for bad in [
            &["--aa", "smaa"][..],
            &["--environment", "studio.exr"],
            &["--tonemapper", "filmic"],
            &["--bloom", "yes"],
            &["--fixed-dt", "0"],
            &["--fixed-dt", "-1"],
            &["--fixed-dt", "nan"],
            &["--ev100", "99"],
        ] {
            let e = parse(bad).err().unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert_eq!(e.exit_code(), 2, "{bad:?}: {e}");
        }
    }

    #[test]
    fn present_defaults_to_fifo_and_takes_the_three_modes() {
        assert_eq!(parse(&[]).unwrap().present, PresentMode::Fifo);
        assert_eq!(parse(&["--present", "mailbox"]).unwrap().present, PresentMode::Mailbox);
        assert_eq!(parse(&["--present", "immediate"]).unwrap().present, PresentMode::Immediate);
        assert_eq!(parse(&["--present", "fifo"]).unwrap().present, PresentMode::Fifo);
        for bad in [&["--present", "vsync"][..], &["--present"], &["--present", ""]] {
            let e = parse(bad).err().unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert_eq!(e.exit_code(), 2, "{bad:?}: {e}");
        }
    }

    #[test]
    fn cvars_need_a_name_and_a_value() {
        use renderer::cvars::WIREFRAME;
        assert_eq!(parse_cvar(&format!("{WIREFRAME}=1")), Ok((WIREFRAME.into(), "1".into())));
        assert!(parse_cvar(WIREFRAME).is_err());
        assert!(parse_cvar("=1").is_err());
        assert!(parse_cvar("r.X=").is_err());
    }
}
