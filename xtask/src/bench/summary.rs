//! The figures every benchmark writes (`target/bench/<crate>.json`, rows of
//! `{"name", "value", "unit", "goal", "met"}`), gathered into
//! `summary.json` and `summary.md`.
//!
//! A goal is a string `"<op> <number>"` (`>=`, `<=`, `<`, `>`, `=`); `met`
//! is recomputed from it here so every row is judged the same way. A bare
//! number as a goal is read as `<= number` (the older benches' form). A row
//! without a goal is a figure reported for context (`goal` and `met` null).

use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    pub value: f64,
    pub unit: String,
    #[serde(default, deserialize_with = "goal_string")]
    pub goal: Option<String>,
    #[serde(default)]
    pub met: Option<bool>,
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
    /// Prefixes the crate's name when the bench did not, and judges `met`.
    fn normalized(mut self, krate: &str) -> Self {
        if !self.name.starts_with(krate) {
            self.name = format!("{krate}: {}", self.name);
        }
        if let Some(goal) = self.goal.as_deref().and_then(Goal::parse) {
            self.met = Some(goal.met(self.value));
        }
        self
    }
}

/// Reads `<crate>.json` for each of `sources` in `dir` (missing files are
/// skipped: that crate's benches did not run).
pub fn gather(dir: &Path, sources: &[&str]) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for krate in sources {
        let path = dir.join(format!("{krate}.json"));
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        #[derive(Deserialize)]
        struct File {
            rows: Vec<Row>,
        }
        let parsed: Vec<Row> = match serde_json::from_str::<File>(&text) {
            Ok(f) => f.rows,
            Err(_) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?,
        };
        rows.extend(parsed.into_iter().map(|r| r.normalized(krate)));
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
    let mut md = format!(
        "# Benchmark summary\n\n{} of {judged} goals met; figures without a goal are reported for context. \
         Plot: `summary.png`.\n\n| figure | value | unit | goal | met |\n| --- | ---: | --- | --- | --- |\n",
        judged - missed
    );
    for r in rows {
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "",
        };
        md.push_str(&format!("| {} | {} | {} | {} | {met} |\n", r.name, format_value(r.value), r.unit, r.goal.as_deref().unwrap_or("")));
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
        std::fs::write(dir.join("b.json"), r#"{"rows": [{"name": "b: y", "value": 2, "unit": "x", "goal": ">= 3", "met": true}]}"#).unwrap();
        let rows = gather(&dir, &["a", "b", "missing"]).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].name.as_str(), rows[0].goal.as_deref(), rows[0].met), ("a: x", Some("<= 1"), Some(true)));
        assert_eq!((rows[1].name.as_str(), rows[1].met), ("b: y", Some(false)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
