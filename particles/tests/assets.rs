//! Asset loading: the shipped fountain, JSON round trips, and malformed or
//! invalid files rejected with errors that name the field.

mod common;

use std::sync::Arc;

use common::*;
use particles::*;

const FOUNTAIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/fountain.json");

const BASE: &str = r#"{
  "emitters": [
    {
      "name": "sparks",
      "required": {
        "material": "M_Spark",
        "blend_mode": "additive",
        "screen_alignment": "facing_camera",
        "sort_mode": "none",
        "max_particles": 100
      },
      "modules": [
        { "spawn": { "rate": 10.0 } },
        { "lifetime": { "constant": 1.0 } }
      ]
    },
    {
      "name": "smoke",
      "required": {
        "material": "M_Smoke",
        "blend_mode": "translucent",
        "screen_alignment": "facing_camera",
        "sort_mode": "distance_to_view",
        "max_particles": 50
      },
      "modules": [
        { "spawn": { "rate": 5.0 } },
        { "acceleration": [0.0, 0.0, 10.0] },
        { "lifetime": { "uniform": { "min": 1.0, "max": 2.0 } } },
        { "color_over_life": { "curve": [
          { "time": 0.0, "value": [1.0, 1.0, 1.0, 1.0] },
          { "time": 0.5, "value": [1.0, 1.0, 1.0, 0.5] },
          { "time": 1.0, "value": [1.0, 1.0, 1.0, 0.0] }
        ] } }
      ]
    }
  ]
}"#;

/// Parses `BASE` with `from` replaced by `to`; the error's message.
fn error_for(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "test edit must apply: {from}");
    let text = BASE.replacen(from, to, 1);
    ParticleSystem::from_json_str(&text).expect_err("must be rejected").to_string()
}

fn assert_names(message: &str, path: &str) {
    assert!(message.starts_with(&format!("{path}: ")), "expected `{path}` in: {message}");
}

#[test]
fn fountain_loads_and_simulates() {
    let fountain = ParticleSystem::load(FOUNTAIN).unwrap();
    assert_eq!(fountain.emitters.len(), 2);
    assert_eq!(fountain.emitters[0].name, "water");
    let mut s = ParticleSystemInstance::new(Arc::new(fountain), 7).unwrap();
    for _ in 0..120 {
        s.tick(DT);
    }
    let water = &s.emitters()[0];
    assert!(water.live_particles() > 900, "{}", water.live_particles());
    assert!(water.particles().locations().iter().all(|p| p.z >= 0.0), "ground plane holds");
    let bounds = s.bounds().unwrap();
    assert!(bounds.max.z > 200.0 && bounds.min.z < 10.0, "{bounds:?}");
    // The over-life curve fades alpha in, then out.
    assert!(water.current_colors().iter().all(|c| c.w <= 1.0 && c.w >= 0.0));
}

#[test]
fn json_round_trip_is_lossless() {
    let fountain = ParticleSystem::load(FOUNTAIN).unwrap();
    let dir = std::env::temp_dir().join(format!("proxima-particles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fountain.json");
    fountain.save(&path).unwrap();
    let back = ParticleSystem::load(&path).unwrap();
    assert_eq!(back, fountain);
    std::fs::remove_dir_all(&dir).unwrap();

    let busy = ParticleSystem { emitters: vec![busy_emitter(100, 10.0)] };
    let text = busy.to_json_string().unwrap();
    assert!(text.contains("\n  "), "pretty printed");
    assert_eq!(ParticleSystem::from_json_str(&text).unwrap(), busy);
}

#[test]
fn wrong_types_name_the_field() {
    let e = error_for("\"max_particles\": 100", "\"max_particles\": \"many\"");
    assert_names(&e, "emitters[0].required.max_particles");
    assert!(e.contains("invalid type"), "{e}");

    let e = error_for("\"acceleration\": [0.0, 0.0, 10.0]", "\"acceleration\": [0.0, \"up\", 10.0]");
    assert_names(&e, "emitters[1].modules[1].acceleration[1]");

    let e = error_for("\"acceleration\": [0.0, 0.0, 10.0]", "\"acceleration\": [0.0, 0.0]");
    assert_names(&e, "emitters[1].modules[1].acceleration");
    assert!(e.contains("invalid length"), "{e}");

    let e = error_for("\"rate\": 5.0", "\"rate\": { \"per_second\": 5.0 }");
    assert_names(&e, "emitters[1].modules[0].spawn.rate");

    let e = error_for("{ \"time\": 0.5, \"value\": [1.0, 1.0, 1.0, 0.5] }", "{ \"time\": 0.5, \"value\": true }");
    assert_names(&e, "emitters[1].modules[3].color_over_life.curve[1].value");

    let e = error_for("\"sort_mode\": \"none\"", "\"sort_mode\": \"sideways\"");
    assert_names(&e, "emitters[0].required.sort_mode");
    assert!(e.contains("unknown variant `sideways`"), "{e}");
}

#[test]
fn missing_and_unknown_fields_name_the_field() {
    let e = error_for("\"max_particles\": 50\n", "\"max_particle\": 50\n");
    assert_names(&e, "emitters[1].required.max_particle");
    assert!(e.contains("unknown field `max_particle`"), "{e}");

    let e = error_for(",\n        \"max_particles\": 50\n", "\n");
    assert_names(&e, "emitters[1].required.max_particles");
    assert!(e.contains("missing field `max_particles`"), "{e}");

    let e = error_for("{ \"uniform\": { \"min\": 1.0, \"max\": 2.0 } }", "{ \"uniform\": { \"min\": 1.0 } }");
    assert_names(&e, "emitters[1].modules[2].lifetime.uniform.max");
}

#[test]
fn invalid_values_name_the_field() {
    let e = error_for("{ \"lifetime\": { \"constant\": 1.0 } }", "{ \"lifetime\": { \"constant\": -1.0 } }");
    assert_eq!(e, "emitters[0].modules[1].lifetime.constant: must be ≥ MIN_LIFETIME (1e-4 s)");
    assert!(e.contains(&format!("{MIN_LIFETIME:e}")), "message names the cap: {e}");

    let e = error_for("{ \"uniform\": { \"min\": 1.0, \"max\": 2.0 } }", "{ \"uniform\": { \"min\": -0.5, \"max\": 2.0 } }");
    assert_eq!(e, "emitters[1].modules[2].lifetime.uniform.min: must be ≥ MIN_LIFETIME (1e-4 s)");

    let e = error_for("\"max_particles\": 100", "\"max_particles\": 0");
    assert_names(&e, "emitters[0].required.max_particles");

    let e = error_for("{ \"time\": 0.5, \"value\"", "{ \"time\": 1.5, \"value\"");
    assert_names(&e, "emitters[1].modules[3].color_over_life.curve[1].time");

    let e = error_for("{ \"time\": 1.0, \"value\"", "{ \"time\": 0.25, \"value\"");
    assert_names(&e, "emitters[1].modules[3].color_over_life.curve[2].time");
    assert!(e.contains("out of order"), "{e}");

    let e = error_for("\"material\": \"M_Spark\"", "\"material\": \"\"");
    assert_names(&e, "emitters[0].required.material");
}

#[test]
fn syntax_errors_and_missing_files_are_reported() {
    let truncated = &BASE[..BASE.find("\"smoke\"").unwrap()];
    match ParticleSystem::from_json_str(truncated).unwrap_err() {
        ParticleError::Parse { line, message, .. } => {
            assert!(line > 1 && message.contains("EOF"), "{message}");
        }
        other => panic!("expected a parse error, got {other}"),
    }
    let e = ParticleSystem::load("/nonexistent/fx.json").unwrap_err();
    assert!(matches!(e, ParticleError::Io { .. }) && e.to_string().contains("/nonexistent/fx.json"), "{e}");
}

#[test]
fn set_system_keeps_the_previous_system_on_error() {
    let good = Arc::new(ParticleSystem::from_json_str(BASE).unwrap());
    let mut s = ParticleSystemInstance::new(good.clone(), 1).unwrap();
    for _ in 0..30 {
        s.tick(DT);
    }
    let before: Vec<ParticleStore> = s.emitters().iter().map(|e| e.particles().clone()).collect();

    let mut bad = (*good).clone();
    bad.emitters[1].required.max_particles = 0;
    let e = s.set_system(Arc::new(bad)).unwrap_err();
    assert_eq!(e.field_path(), Some("emitters[1].required.max_particles"));
    assert!(Arc::ptr_eq(s.system(), &good));
    for (e, b) in s.emitters().iter().zip(&before) {
        assert!(e.particles().bitwise_eq(b));
    }
    // Ticking goes on as before.
    s.tick(DT);
    assert!(s.live_particles() > 0);

    // A valid replacement takes over with fresh emitters.
    let other = Arc::new(ParticleSystem { emitters: vec![busy_emitter(100, 10.0)] });
    s.set_system(other.clone()).unwrap();
    assert!(Arc::ptr_eq(s.system(), &other));
    assert_eq!(s.emitters().len(), 1);
    assert_eq!(s.live_particles(), 0);

    // Construction validates too.
    let e = ParticleSystemInstance::new(Arc::new(ParticleSystem { emitters: vec![emitter(0, vec![])] }), 0).unwrap_err();
    assert_eq!(e.field_path(), Some("emitters[0].required.max_particles"));
}

/// Values that a valid-looking asset used to carry into an overflowing or
/// spinning tick (a rate of 1e21, a burst of u32::MAX, a lifetime of 1e-9)
/// are rejected, each naming its field; the caps themselves are accepted.
#[test]
fn extreme_rates_counts_and_lifetimes_are_rejected_with_named_fields() {
    let e = error_for("{ \"spawn\": { \"rate\": 10.0 } }", "{ \"spawn\": { \"rate\": 1e21 } }");
    assert_names(&e, "emitters[0].modules[0].spawn.rate");
    assert!(e.contains("MAX_SPAWN_RATE"), "{e}");
    // Spawn modules add up: two halves of too much are too much.
    let e = error_for("{ \"spawn\": { \"rate\": 10.0 } }", "{ \"spawn\": { \"rate\": 6e6 } }, { \"spawn\": { \"rate\": 6e6 } }");
    assert_names(&e, "emitters[0].modules[1].spawn.rate");
    let e = error_for(
        "{ \"spawn\": { \"rate\": 10.0 } }",
        "{ \"spawn\": { \"rate\": 1.0, \"bursts\": [{ \"time\": 0.0, \"count\": 4294967295 }] } }",
    );
    assert_names(&e, "emitters[0].modules[0].spawn.bursts[0].count");
    let bursts = vec!["{ \"time\": 0.0, \"count\": 1 }"; MAX_BURSTS + 1].join(", ");
    let e = error_for("{ \"spawn\": { \"rate\": 10.0 } }", &format!("{{ \"spawn\": {{ \"rate\": 1.0, \"bursts\": [{bursts}] }} }}"));
    assert_names(&e, "emitters[0].modules[0].spawn.bursts");
    let e = error_for("{ \"lifetime\": { \"constant\": 1.0 } }", "{ \"lifetime\": { \"constant\": 1e-9 } }");
    assert_names(&e, "emitters[0].modules[1].lifetime.constant");
    let e = error_for(
        "{ \"uniform\": { \"min\": 1.0, \"max\": 2.0 } }",
        "{ \"curve\": [{ \"time\": 0.0, \"value\": 1.0 }, { \"time\": 1.0, \"value\": 1e-30 }] }",
    );
    assert_names(&e, "emitters[1].modules[2].lifetime.curve[1].value");

    // The caps themselves are valid.
    let at_caps = emitter(1, vec![spawn(MAX_SPAWN_RATE, &[(0.0, MAX_PARTICLES_LIMIT)]), lifetime(MIN_LIFETIME)]);
    ParticleSystem { emitters: vec![at_caps] }.validate().unwrap();
}

/// The field-path finder re-scans the text after a parse error. It used to
/// keep every value's full path: a 3 MB text of a million numbers under a
/// 1 MB key asked for about a terabyte. Now the scan is linear: the error
/// comes back quickly, names the field, and the process's peak memory
/// stays small.
#[test]
fn a_pathological_3mb_text_fails_fast_with_bounded_memory() {
    let key = "k".repeat(1 << 20);
    let values = vec!["0"; 1 << 20].join(",");
    let text = format!("{{\"emitters\": [], \"{key}\": [{values}]}}");
    assert!(text.len() > 3_000_000 && text.len() <= MAX_ASSET_BYTES);
    let before = peak_rss_bytes();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(ParticleSystem::from_json_str(&text).map(|_| ()));
    });
    let result = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the error path must not take minutes");
    match result {
        Err(ParticleError::Parse { path, message, .. }) => {
            assert_eq!(path, key, "the unknown field is named");
            assert!(message.starts_with("unknown field"), "{}", &message[..40]);
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    if let (Some(before), Some(after)) = (before, peak_rss_bytes()) {
        let grown = after.saturating_sub(before);
        assert!(grown < 256 << 20, "peak memory grew by {} MiB", grown >> 20);
    }
}

/// Peak resident memory of this process (Linux), `None` elsewhere.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Text and files over `MAX_ASSET_BYTES` are rejected with a typed error;
/// a file is never read past the cap, even one with no end.
#[test]
fn oversized_text_and_files_are_rejected_unread() {
    let padded = format!("{BASE}{}", " ".repeat(MAX_ASSET_BYTES + 1 - BASE.len()));
    assert!(matches!(
        ParticleSystem::from_json_str(&padded),
        Err(ParticleError::TooLarge { bytes, max }) if bytes == padded.len() as u64 && max == MAX_ASSET_BYTES as u64
    ));
    // Exactly at the cap is fine.
    ParticleSystem::from_json_str(&padded[..MAX_ASSET_BYTES]).unwrap();

    let dir = std::env::temp_dir().join(format!("proxima-particles-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.json");
    std::fs::write(&path, &padded).unwrap();
    let e = ParticleSystem::load(&path).unwrap_err();
    assert!(matches!(e, ParticleError::TooLarge { .. }), "{e}");
    assert!(e.to_string().contains(&MAX_ASSET_BYTES.to_string()), "{e}");
    std::fs::write(&path, &padded[..MAX_ASSET_BYTES]).unwrap();
    ParticleSystem::load(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();

    // A device that never ends (its size reads as 0): read up to the cap only.
    if std::path::Path::new("/dev/zero").exists() {
        let e = ParticleSystem::load("/dev/zero").unwrap_err();
        assert!(matches!(e, ParticleError::TooLarge { bytes, .. } if bytes == MAX_ASSET_BYTES as u64 + 1), "{e}");
    }
}
