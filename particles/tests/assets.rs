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
    ParticleSystem::from_json_str(&text)
        .expect_err("must be rejected")
        .to_string()
}

fn assert_names(message: &str, path: &str) {
    assert!(
        message.starts_with(&format!("{path}: ")),
        "expected `{path}` in: {message}"
    );
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
    assert!(
        water.particles().locations().iter().all(|p| p.z >= 0.0),
        "ground plane holds"
    );
    let bounds = s.bounds().unwrap();
    assert!(bounds.max.z > 200.0 && bounds.min.z < 10.0, "{bounds:?}");
    // The over-life curve fades alpha in, then out.
    assert!(water
        .current_colors()
        .iter()
        .all(|c| c.w <= 1.0 && c.w >= 0.0));
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

    let busy = ParticleSystem {
        emitters: vec![busy_emitter(100, 10.0)],
    };
    let text = busy.to_json_string().unwrap();
    assert!(text.contains("\n  "), "pretty printed");
    assert_eq!(ParticleSystem::from_json_str(&text).unwrap(), busy);
}

#[test]
fn wrong_types_name_the_field() {
    let e = error_for("\"max_particles\": 100", "\"max_particles\": \"many\"");
    assert_names(&e, "emitters[0].required.max_particles");
    assert!(e.contains("invalid type"), "{e}");

    let e = error_for(
        "\"acceleration\": [0.0, 0.0, 10.0]",
        "\"acceleration\": [0.0, \"up\", 10.0]",
    );
    assert_names(&e, "emitters[1].modules[1].acceleration[1]");

    let e = error_for(
        "\"acceleration\": [0.0, 0.0, 10.0]",
        "\"acceleration\": [0.0, 0.0]",
    );
    assert_names(&e, "emitters[1].modules[1].acceleration");
    assert!(e.contains("invalid length"), "{e}");

    let e = error_for("\"rate\": 5.0", "\"rate\": { \"per_second\": 5.0 }");
    assert_names(&e, "emitters[1].modules[0].spawn.rate");

    let e = error_for(
        "{ \"time\": 0.5, \"value\": [1.0, 1.0, 1.0, 0.5] }",
        "{ \"time\": 0.5, \"value\": true }",
    );
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

    let e = error_for(
        "{ \"uniform\": { \"min\": 1.0, \"max\": 2.0 } }",
        "{ \"uniform\": { \"min\": 1.0 } }",
    );
    assert_names(&e, "emitters[1].modules[2].lifetime.uniform.max");
}

#[test]
fn invalid_values_name_the_field() {
    let e = error_for(
        "{ \"lifetime\": { \"constant\": 1.0 } }",
        "{ \"lifetime\": { \"constant\": -1.0 } }",
    );
    assert_eq!(e, "emitters[0].modules[1].lifetime.constant: must be > 0");

    let e = error_for(
        "{ \"uniform\": { \"min\": 1.0, \"max\": 2.0 } }",
        "{ \"uniform\": { \"min\": -0.5, \"max\": 2.0 } }",
    );
    assert_eq!(
        e,
        "emitters[1].modules[2].lifetime.uniform.min: must be > 0"
    );

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
    assert!(
        matches!(e, ParticleError::Io { .. }) && e.to_string().contains("/nonexistent/fx.json"),
        "{e}"
    );
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
    let other = Arc::new(ParticleSystem {
        emitters: vec![busy_emitter(100, 10.0)],
    });
    s.set_system(other.clone()).unwrap();
    assert!(Arc::ptr_eq(s.system(), &other));
    assert_eq!(s.emitters().len(), 1);
    assert_eq!(s.live_particles(), 0);

    // Construction validates too.
    let e = ParticleSystemInstance::new(
        Arc::new(ParticleSystem {
            emitters: vec![emitter(0, vec![])],
        }),
        0,
    )
    .unwrap_err();
    assert_eq!(e.field_path(), Some("emitters[0].required.max_particles"));
}
