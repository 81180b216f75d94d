//! The figures every benchmark writes (`target/bench/<crate>.json`, rows of
//! `{"name", "value", "unit", "goal", "met"}`), gathered into
//! `summary.json` and `summary.md`.
//!
//! A goal is a string `"<op> <number>"` (`>=`, `<=`, `<`, `>`, `=`); `met`
//! is recomputed from it here so every row is judged the same way. A bare
//! number as a goal is read as `<= number` (the older benches' form). A row
//! without a goal is a figure reported for context (`goal` and `met` null).
//!
//! A row may carry a range: `min` and `max` of the paired measurements its
//! `value` is the median of, and how many (`pairs`; see
//! `test_support::bench`). `met` is judged on the median; `straddles` is
//! true when the goal lies inside the range — met by some pairs, missed by
//! others — so the verdict is within this machine's noise. A range that
//! does not contain its value, or half a range, is refused.

use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub name: String,
    /// The figure; with a range, the median of the paired measurements.
    pub value: f64,
    pub unit: String,
    #[serde(default, deserialize_with = "goal_string")]
    pub goal: Option<String>,
    /// The goal judged on `value` (recomputed here).
    #[serde(default)]
    pub met: Option<bool>,
    /// The smallest and largest of the paired measurements.
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
    /// How many paired measurements `value` is the median of.
    #[serde(default)]
    pub pairs: Option<u64>,
    /// Whether the goal lies inside `min..=max` (recomputed here; null
    /// without a goal or a range).
    #[serde(default)]
    pub straddles: Option<bool>,
}

fn goal_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Number(n) => Some(format!("<= {n}")),
        _ => None,
    })
}

/// A parsed goal: the comparison and its bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Goal {
    pub op: Op,
    pub bound: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    AtLeast,
    AtMost,
    Equal,
}

impl Goal {
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        let (op, rest) = [(">=", Op::AtLeast), ("<=", Op::AtMost), (">", Op::AtLeast), ("<", Op::AtMost), ("=", Op::Equal)]
            .into_iter()
            .find_map(|(p, op)| s.strip_prefix(p).map(|r| (op, r)))
            .unwrap_or((Op::Equal, s));
        let bound: f64 = rest.trim().trim_end_matches(['x', '%']).trim().parse().ok()?;
        Some(Self { op, bound })
    }

    pub fn met(&self, value: f64) -> bool {
        match self.op {
            Op::AtLeast => value >= self.bound,
            Op::AtMost => value <= self.bound,
            Op::Equal => (value - self.bound).abs() <= 1e-9 * self.bound.abs().max(1.0),
        }
    }

    /// Whether the goal lies inside `min..=max`: some values of the range
    /// meet it and others do not (for `=`: the bound is inside a range of
    /// non-zero width).
    pub fn straddled_by(&self, min: f64, max: f64) -> bool {
        match self.op {
            Op::Equal => min < max && (min..=max).contains(&self.bound),
            _ => self.met(min) != self.met(max),
        }
    }

    /// How the value stands against the goal as one number where at most 1
    /// means met: value / bound for an upper bound, bound / value for a
    /// lower one. `None` for an equality goal or a zero value.
    pub fn cost(&self, value: f64) -> Option<f64> {
        match self.op {
            Op::AtMost if self.bound > 0.0 => Some(value / self.bound),
            Op::AtLeast if value > 0.0 => Some(self.bound / value),
            _ => None,
        }
    }
}

impl Row {
    /// `(min, max)` when the row has a range.
    pub fn range(&self) -> Option<(f64, f64)> {
        self.min.zip(self.max)
    }

    /// Prefixes the crate's name when the bench did not, checks the range,
    /// and judges `met` (on the value, the median) and `straddles`.
    fn normalized(mut self, krate: &str) -> Result<Self, String> {
        if !self.name.starts_with(krate) {
            self.name = format!("{krate}: {}", self.name);
        }
        match (self.min, self.max) {
            (None, None) => {}
            (Some(lo), Some(hi)) if lo <= self.value && self.value <= hi => {}
            (lo, hi) => {
                return Err(format!("{}: the range {lo:?}..{hi:?} does not contain the value {}", self.name, self.value));
            }
        }
        self.met = None;
        self.straddles = None;
        if let Some(goal) = self.goal.as_deref().and_then(Goal::parse) {
            self.met = Some(goal.met(self.value));
            self.straddles = self.range().map(|(lo, hi)| goal.straddled_by(lo, hi));
        }
        Ok(self)
    }
}

/// The figure files of `krate` in `dir`: `<crate>.json`, then one per
/// further bench of the crate, `<crate>-<bench>.json`, by name.
pub fn figure_files(dir: &Path, krate: &str) -> Vec<std::path::PathBuf> {
    let prefix = format!("{krate}-");
    let mut more: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json") && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix))
        })
        .collect();
    more.sort();
    std::iter::once(dir.join(format!("{krate}.json"))).chain(more).collect()
}

/// Reads each of `sources`' figure files in `dir` ([`figure_files`];
/// missing files are skipped: that crate's benches did not run).
pub fn gather(dir: &Path, sources: &[&str]) -> Result<Vec<Row>, String> {
    #[derive(Deserialize)]
    struct File {
        rows: Vec<Row>,
    }
    let mut rows = Vec::new();
    for krate in sources {
        for path in figure_files(dir, krate) {
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let parsed: Vec<Row> = match serde_json::from_str::<File>(&text) {
                Ok(f) => f.rows,
                Err(_) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?,
            };
            for r in parsed {
                rows.push(r.normalized(krate).map_err(|e| format!("{}: {e}", path.display()))?);
            }
        }
    }
    Ok(rows)
}

pub fn write(dir: &Path, rows: &[Row]) -> Result<(), String> {
    let json = serde_json::to_string_pretty(&serde_json::json!({ "rows": rows })).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("summary.json"), json + "\n").map_err(|e| e.to_string())?;
    std::fs::write(dir.join("summary.md"), markdown(rows)).map_err(|e| e.to_string())
}

fn markdown(rows: &[Row]) -> String {
    let missed = rows.iter().filter(|r| r.met == Some(false)).count();
    let judged = rows.iter().filter(|r| r.met.is_some()).count();
    let straddling = rows.iter().filter(|r| r.straddles == Some(true)).count();
    let mut md = format!(
        "# Benchmark summary\n\n{} of {judged} goals met; {straddling} of the {judged} lie inside their figure's range \
         (straddled: met by some paired measurements, missed by others, so within this machine's noise). A figure with a range is the median of \
         that many paired measurements, and its goal is judged on the median. Figures without a goal are reported for \
         context. Plot: `summary.png`.\n\n| figure | value | range | unit | goal | met |\n| --- | ---: | --- | --- | --- | --- |\n",
        judged - missed
    );
    for r in rows {
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "",
        };
        let straddles = if r.straddles == Some(true) { ", range straddles the goal" } else { "" };
        let range = match (r.range(), r.pairs) {
            (Some((lo, hi)), Some(n)) => format!("{}–{} ({n} pairs)", format_value(lo), format_value(hi)),
            (Some((lo, hi)), None) => format!("{}–{}", format_value(lo), format_value(hi)),
            _ => String::new(),
        };
        md.push_str(&format!(
            "| {} | {} | {range} | {} | {} | {met}{straddles} |\n",
            r.name,
            format_value(r.value),
            r.unit,
            r.goal.as_deref().unwrap_or("")
        ));
    }
    md
}

/// Three significant figures, no exponent for the sizes benches report.
pub fn format_value(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{v:.3e}")
    } else if a >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_parse_and_judge() {
        let g = Goal::parse(">= 10").unwrap();
        assert!(g.met(10.0) && !g.met(9.9));
        assert_eq!(g.cost(20.0), Some(0.5));
        let g = Goal::parse("<= 3x").unwrap();
        assert!(g.met(2.9) && !g.met(3.1));
        assert_eq!(Goal::parse("8").unwrap().op, Op::Equal);
        assert!(Goal::parse("fast").is_none());
    }

    #[test]
    fn rows_are_normalized() {
        let dir = std::env::temp_dir().join(format!("xtask-summary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.json"), r#"[{"name": "x", "value": 0.5, "unit": "%", "goal": 1, "met": null}]"#).unwrap();
        std::fs::write(dir.join("b.json"), r#"{"rows": [{"name": "b: y", "value": 2, "unit": "x", "goal": ">= 3", "met": true}]}"#)
            .unwrap();
        // A crate's further bench writes `<crate>-<bench>.json`: read after its main file.
        std::fs::write(dir.join("b-more.json"), r#"{"rows": [{"name": "z", "value": 1, "unit": "x"}]}"#).unwrap();
        std::fs::write(dir.join("bb.json"), r#"{"rows": [{"name": "not b's", "value": 1, "unit": "x"}]}"#).unwrap();
        let rows = gather(&dir, &["a", "b", "missing"]).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].name, "b: z");
        assert_eq!((rows[0].name.as_str(), rows[0].goal.as_deref(), rows[0].met), ("a: x", Some("<= 1"), Some(true)));
        assert_eq!((rows[1].name.as_str(), rows[1].met), ("b: y", Some(false)));
        assert_eq!((rows[0].range(), rows[0].straddles), (None, None), "no range, no straddle mark");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn ranged(value: f64, min: f64, max: f64, goal: &str) -> Result<Row, String> {
        Row {
            name: "r".into(),
            value,
            unit: "x".into(),
            goal: Some(goal.into()),
            min: Some(min),
            max: Some(max),
            pairs: Some(7),
            ..Default::default()
        }
        .normalized("c")
    }

    #[test]
    fn met_is_judged_on_the_median_and_a_straddled_goal_is_marked() {
        // The median meets ">= 1.5" though the worst pair does not: met, straddled.
        let r = ranged(1.6, 1.2, 1.9, ">= 1.5").unwrap();
        assert_eq!((r.met, r.straddles), (Some(true), Some(true)));
        // The median misses it though the best pair meets it: missed, straddled.
        let r = ranged(1.4, 1.2, 1.9, ">= 1.5").unwrap();
        assert_eq!((r.met, r.straddles), (Some(false), Some(true)));
        // The whole range meets it, or misses it: not straddled.
        assert_eq!(ranged(1.7, 1.6, 1.9, ">= 1.5").map(|r| (r.met, r.straddles)), Ok((Some(true), Some(false))));
        assert_eq!(ranged(1.05, 1.04, 1.06, "<= 1.1").map(|r| (r.met, r.straddles)), Ok((Some(true), Some(false))));
        assert_eq!(ranged(1.3, 1.2, 1.4, "<= 1.1").map(|r| (r.met, r.straddles)), Ok((Some(false), Some(false))));
        // An upper bound inside the range.
        assert_eq!(ranged(1.08, 1.0, 1.2, "<= 1.1").map(|r| (r.met, r.straddles)), Ok((Some(true), Some(true))));
        // A bench's own `met` and `straddles` are overruled.
        let r = Row { met: Some(false), straddles: Some(true), ..ranged(1.7, 1.6, 1.9, ">= 1.5").unwrap() }.normalized("c").unwrap();
        assert_eq!((r.met, r.straddles), (Some(true), Some(false)));
        // Without a goal, nothing is judged.
        let r = Row { goal: None, ..ranged(1.7, 1.6, 1.9, ">= 1.5").unwrap() }.normalized("c").unwrap();
        assert_eq!((r.met, r.straddles), (None, None));
    }

    #[test]
    fn a_range_must_contain_its_value() {
        assert!(ranged(2.0, 1.2, 1.9, ">= 1.5").unwrap_err().contains("does not contain the value 2"));
        assert!(ranged(1.5, 1.9, 1.2, ">= 1.5").is_err(), "min above max");
        let half = Row { name: "h".into(), value: 1.0, unit: "x".into(), min: Some(0.5), ..Default::default() };
        assert!(half.normalized("c").is_err(), "a min without a max");
    }

    #[test]
    fn the_markdown_shows_range_and_straddle() {
        let rows = vec![ranged(1.6, 1.2, 1.9, ">= 1.5").unwrap(), ranged(1.7, 1.6, 1.9, ">= 1.5").unwrap()];
        let md = markdown(&rows);
        assert!(md.contains("| c: r | 1.600 | 1.200–1.900 (7 pairs) | x | >= 1.5 | yes, range straddles the goal |"), "{md}");
        assert!(md.contains("| c: r | 1.700 | 1.600–1.900 (7 pairs) | x | >= 1.5 | yes |"), "{md}");
        assert!(md.contains("2 of 2 goals met; 1 of the 2 lie inside their figure's range"), "{md}");
    }
}
