//! What the benches share: paired measurements and the rows they write to
//! `target/bench/<crate>.json` for `cargo xtask bench`.
//!
//! On a shared machine absolute times swing by tens of percent between
//! runs, so a ratio is never taken between two medians measured minutes
//! apart: [`paired`] times the two sides back to back, alternating which
//! goes first, takes the ratio per pair, and reports the median of the
//! ratios with their range ([`Spread`]). The summary judges the goal on the
//! median and marks a goal that lies inside the range. A pair the
//! hypervisor stole CPU time from is measured again ([`STEAL_SHARE_RETRY`]).

use std::path::{Path, PathBuf};

/// Whether the benches run quick (`PROXIMA_BENCH_QUICK=1`, which
/// `cargo xtask bench --quick` sets): fewer pairs and smaller scenes.
pub fn quick() -> bool {
    std::env::var("PROXIMA_BENCH_QUICK").as_deref() == Ok("1")
}

/// The fewest paired measurements a ratio with a range is made of.
pub const MIN_PAIRS: usize = 5;

/// The median of measurements, their smallest and largest, and how many.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Spread {
    /// The spread of `values`: the median is the middle value (the upper
    /// one of the two middle values for an even count). `None` when empty
    /// or when a value is not finite.
    pub fn of(values: &[f64]) -> Option<Self> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        Some(Self { median: v[v.len() / 2], min: v[0], max: v[v.len() - 1], n: v.len() })
    }

    /// The same spread with every figure multiplied by `k` (`k` > 0), e.g.
    /// ms to ns per element or a fraction to percent.
    pub fn scaled(self, k: f64) -> Self {
        Self { median: self.median * k, min: self.min * k, max: self.max * k, n: self.n }
    }
}

/// The two sides of a paired measurement: the ratio is measured / baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arm {
    Measured,
    Baseline,
}

/// What [`paired`] found: the ratios' spread and each side's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    /// measured / baseline, per pair.
    pub ratio: Spread,
    pub measured: Spread,
    pub baseline: Spread,
    /// Pairs measured again because the hypervisor took CPU time while
    /// they ran ([`STEAL_SHARE_RETRY`]).
    pub retried: usize,
}

/// The share of the machine's CPU time the hypervisor may take from a pair
/// (steal: time a virtual CPU was ready to run but the host ran something
/// else) before the pair is measured again, up to [`STEAL_RETRIES`] times.
/// Steal on this shared VM comes in bursts of seconds, 10-20% of both CPUs
/// in the worst (1-2% is calm), and it falls unevenly on a pair's two sides:
/// a side that needs both CPUs at once (2 threads vs 1) loses the most.
/// The figures are meant to be the code's, not the neighbours'.
pub const STEAL_SHARE_RETRY: f64 = 0.05;

/// How many times one pair may be measured again for steal; the last try
/// is kept whatever it saw.
pub const STEAL_RETRIES: usize = 3;

/// Runs `pairs` (at least [`MIN_PAIRS`]) paired measurements: each pair
/// calls `time(Arm::Measured)` and `time(Arm::Baseline)` back to back, which
/// one first alternating from pair to pair, and takes measured / baseline.
/// `time` returns the time (or any cost) of one run of that side; warm-up is
/// the caller's. A pair during which the hypervisor took more than
/// [`STEAL_SHARE_RETRY`] of the machine's CPU time is measured again (up to
/// [`STEAL_RETRIES`] times; said on stderr). Panics if a time is not finite
/// and positive (a broken bench, not a slow one).
pub fn paired(pairs: usize, time: impl FnMut(Arm) -> f64) -> Paired {
    let result = paired_with_steal(pairs, time, cpu_ticks);
    if result.retried > 0 {
        eprintln!(
            "bench: {} pair(s) measured again over {} pairs (the hypervisor took CPU time while they ran)",
            result.retried, result.ratio.n
        );
    }
    result
}

/// The machine's CPU time so far, from Linux's `/proc/stat` (its first
/// line, in 10 ms ticks summed over the CPUs): (all, stolen by the
/// hypervisor); `None` where it cannot be read. `cargo xtask bench`'s
/// sample figures read the same counters (xtask has its own reader: it
/// does not build this crate's Vulkan dependencies).
pub fn cpu_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<u64> = stat.lines().next()?.split_whitespace().skip(1).filter_map(|t| t.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal ...
    Some((ticks.iter().take(8).sum(), *ticks.get(7)?))
}

/// [`paired`] with the CPU counters given ([`cpu_ticks`]'s; `None`:
/// unknown, no pair measured again).
fn paired_with_steal(pairs: usize, mut time: impl FnMut(Arm) -> f64, mut ticks: impl FnMut() -> Option<(u64, u64)>) -> Paired {
    let pairs = pairs.max(MIN_PAIRS);
    let (mut measured, mut baseline, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut retried = 0;
    for p in 0..pairs {
        let mut tries = 0;
        let (m, b) = loop {
            let before = ticks();
            let (m, b) = if p % 2 == 0 {
                let m = time(Arm::Measured);
                (m, time(Arm::Baseline))
            } else {
                let b = time(Arm::Baseline);
                (time(Arm::Measured), b)
            };
            let share = match (before, ticks()) {
                (Some((all0, steal0)), Some((all1, steal1))) => {
                    steal1.saturating_sub(steal0) as f64 / all1.saturating_sub(all0).max(1) as f64
                }
                _ => 0.0,
            };
            if share <= STEAL_SHARE_RETRY || tries == STEAL_RETRIES {
                break (m, b);
            }
            tries += 1;
            retried += 1;
        };
        assert!(m.is_finite() && m > 0.0 && b.is_finite() && b > 0.0, "pair {p}: times must be finite and positive ({m}, {b})");
        measured.push(m);
        baseline.push(b);
        ratios.push(m / b);
    }
    let spread = |v: &[f64]| Spread::of(v).expect("finite and non-empty, checked above");
    Paired { ratio: spread(&ratios), measured: spread(&measured), baseline: spread(&baseline), retried }
}

/// One figure of a bench, as `cargo xtask bench` reads it: `goal` is
/// `"<op> <number>"` (`>=`, `<=`, `<`, `>`, `=`) or none; `range` is the
/// spread the value is the median of, where it is one. `met` is left to the
/// summary, which judges every row the same way (on the median).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub goal: Option<String>,
    pub range: Option<Spread>,
}

impl Row {
    /// A figure without a range.
    pub fn new(name: impl Into<String>, value: f64, unit: &str, goal: Option<&str>) -> Self {
        Self { name: name.into(), value, unit: unit.into(), goal: goal.map(Into::into), range: None }
    }

    /// The median of `spread` with its range.
    pub fn spread(name: impl Into<String>, spread: Spread, unit: &str, goal: Option<&str>) -> Self {
        Self { range: Some(spread), ..Self::new(name, spread.median, unit, goal) }
    }

    /// The row as one JSON object.
    pub fn to_json(&self) -> String {
        let num = |v: f64| if v.is_finite() { format!("{v}") } else { "null".into() };
        let mut s = format!(
            "{{\"name\": {}, \"value\": {}, \"unit\": {}, \"goal\": {}, \"met\": null",
            json_string(&self.name),
            num(self.value),
            json_string(&self.unit),
            self.goal.as_deref().map_or("null".into(), json_string)
        );
        if let Some(r) = &self.range {
            s.push_str(&format!(", \"min\": {}, \"max\": {}, \"pairs\": {}", num(r.min), num(r.max), r.n));
        }
        s.push('}');
        s
    }
}

/// `s` as a JSON string literal (serde_json's escaping, not a copy of it).
fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// `target/bench` of the workspace (or of `CARGO_TARGET_DIR`).
pub fn bench_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new("..")).join("target"))
        .join("bench")
}

/// Writes `rows` as `{"rows": [...]}` to `<bench_dir>/<krate>.json` and
/// returns the path.
pub fn write_rows(krate: &str, rows: &[Row]) -> std::io::Result<PathBuf> {
    let dir = bench_dir();
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{krate}.json"));
    let body: Vec<String> = rows.iter().map(|r| format!("  {}", r.to_json())).collect();
    std::fs::write(&path, format!("{{\"rows\": [\n{}\n]}}\n", body.join(",\n")))?;
    Ok(path)
}

/// A device without the validation layer: benches time the engine, not the
/// layer.
pub fn device() -> rhi_vulkan::Device {
    rhi_vulkan::Device::new(&rhi_vulkan::DeviceDesc { validation: rhi_vulkan::Validation::Disabled, ..Default::default() })
        .expect("a Vulkan 1.3 device")
}

/// The renderer benches' set-up (frame prep, materials): a [`device`], the
/// caller's scene (its materials, lights) with [`cube_grid`] added, the
/// renderer with that scene uploaded, and [`grid_family`]'s view.
#[cfg(feature = "renderer")]
pub struct GridScene {
    pub device: rhi_vulkan::Device,
    pub scene: renderer::Scene,
    pub renderer: renderer::SceneRenderer,
    pub family: renderer::ViewFamily,
}

#[cfg(feature = "renderer")]
impl GridScene {
    /// `scene` with a `side`² [`cube_grid`] (primitive `i` drawn with
    /// `material(i)`), seen by a `width`×`height` [`grid_family`].
    pub fn new(mut scene: renderer::Scene, side: usize, material: impl Fn(usize) -> renderer::MaterialId, width: u32, height: u32) -> Self {
        let device = device();
        cube_grid(&mut scene, side, material);
        let mut renderer = renderer::SceneRenderer::new(&device);
        renderer.update_scene(&device, &mut scene).expect("the grid uploads");
        Self { device, scene, renderer, family: grid_family(width, height) }
    }
}

/// The renderer benches' scene (frame prep, materials): `side`² cubes of
/// edge 0.6 on a unit grid in the XY plane centred at the origin, primitive
/// `i` drawn with `material(i)`; and the view that sees all of it
/// ([`grid_family`]).
#[cfg(feature = "renderer")]
pub fn cube_grid(scene: &mut renderer::Scene, side: usize, material: impl Fn(usize) -> renderer::MaterialId) {
    use glam::{Mat4, Quat, Vec3};
    use renderer::{shapes, PrimitiveId, StaticMeshRenderData, StaticMeshSceneProxy};
    let mesh = StaticMeshRenderData::new(vec![shapes::cube(1.0)]).expect("a cube is a valid mesh");
    for i in 0..side * side {
        let (x, y) = ((i % side) as f32 - side as f32 / 2.0, (i / side) as f32 - side as f32 / 2.0);
        let m = Mat4::from_scale_rotation_translation(Vec3::splat(0.6), Quat::IDENTITY, Vec3::new(x, y, 0.0));
        let proxy = StaticMeshSceneProxy::new(mesh.clone(), vec![material(i)]);
        scene.add_primitive(PrimitiveId::new(), Box::new(proxy), m).expect("the grid's transforms are valid");
    }
}

/// A `width`×`height` view high above [`cube_grid`]'s 400² grid, seeing all of it.
#[cfg(feature = "renderer")]
pub fn grid_family(width: u32, height: u32) -> renderer::ViewFamily {
    use glam::Vec3;
    let view = renderer::SceneView::perspective(
        Vec3::new(0.0, -10.0, 300.0),
        Vec3::ZERO,
        Vec3::Y,
        1.2,
        1.0,
        2000.0,
        rhi_vulkan::Rect::from_size(width, height),
    )
    .expect("a valid view");
    renderer::ViewFamily::new(width, height, vec![view])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_median_and_range() {
        let s = Spread::of(&[3.0, 1.0, 2.0, 10.0, 4.0]).unwrap();
        assert_eq!(s, Spread { median: 3.0, min: 1.0, max: 10.0, n: 5 });
        assert_eq!(Spread::of(&[]), None);
        assert_eq!(Spread::of(&[1.0, f64::NAN]), None);
        assert_eq!(s.scaled(2.0), Spread { median: 6.0, min: 2.0, max: 20.0, n: 5 });
    }

    #[test]
    fn pairs_alternate_and_ratio_per_pair() {
        let mut order = Vec::new();
        let mut t = 0.0;
        // No steal clock: no pair measured again (the real one could retry one).
        let p = paired_with_steal(
            3,
            |arm| {
                order.push(arm);
                t += 1.0;
                match arm {
                    Arm::Measured => 2.0 * t,
                    Arm::Baseline => t,
                }
            },
            || None,
        );
        assert_eq!(p.ratio.n, MIN_PAIRS, "at least MIN_PAIRS pairs");
        assert_eq!(&order[..4], [Arm::Measured, Arm::Baseline, Arm::Baseline, Arm::Measured]);
        // Pair 0: 2*1 / 2 = 1; pair 1: 2*4 / 3; ... each ratio from its own pair.
        assert_eq!(p.ratio.min, 1.0);
        assert!(p.ratio.max > 1.0 && p.ratio.median >= p.ratio.min && p.ratio.median <= p.ratio.max);
    }

    #[test]
    fn a_pair_the_hypervisor_stole_from_is_measured_again_at_most_three_times() {
        // Fake counters: each try takes 20 ticks of the machine's time;
        // `stolen[k]` of them are stolen during try k (pair 0: 4 = 20%, then
        // none: one retry; pair 1: 10 every time: three retries, then kept;
        // pair 2: 1 of 20 = 5%, not more than the limit).
        let stolen = [4, 0, 10, 10, 10, 10, 1, 0, 0];
        let (mut reads, mut all, mut steal, mut runs) = (0usize, 0u64, 0u64, 0);
        let p = paired_with_steal(
            5,
            |arm| {
                runs += 1;
                if arm == Arm::Measured {
                    2.0
                } else {
                    1.0
                }
            },
            || {
                // Each try reads the counters before and after.
                let (k, after) = (reads / 2, reads % 2 == 1);
                reads += 1;
                if after {
                    all += 20;
                    steal += stolen.get(k).copied().unwrap_or(0);
                }
                Some((all, steal))
            },
        );
        assert_eq!(p.retried, 4, "1 for pair 0, 3 for pair 1");
        assert_eq!(runs, 2 * (5 + 4));
        assert_eq!(p.ratio.n, 5);
        assert_eq!(p.ratio.median, 2.0);
        // No steal clock: nothing measured again.
        let q = paired_with_steal(5, |_| 1.0, || None);
        assert_eq!((q.retried, q.ratio.n), (0, 5));
    }

    #[test]
    fn rows_serialize_with_their_range() {
        let r = Row::spread("a \"b\"", Spread { median: 1.5, min: 1.0, max: 2.0, n: 7 }, "x", Some(">= 1.3"));
        assert_eq!(
            r.to_json(),
            r#"{"name": "a \"b\"", "value": 1.5, "unit": "x", "goal": ">= 1.3", "met": null, "min": 1, "max": 2, "pairs": 7}"#
        );
        assert_eq!(Row::new("c", 3.0, "ms", None).to_json(), r#"{"name": "c", "value": 3, "unit": "ms", "goal": null, "met": null}"#);
    }
}
