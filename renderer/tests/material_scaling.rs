//! What creating and destroying materials costs as their number grows
//! (issue #40): every check and table operation costs what it touches —
//! a destroy looks up its own material and its parent's instances, never
//! every material — so 10× as many materials cost about 10× the time, not
//! 100×. Measured through the render thread (inline: its commands run on
//! the calling thread, so the game side's checks and the render side's
//! tables are both timed, and nothing else runs meanwhile), on the real
//! device (validation on, asserted), with no frame in between.
//!
//! Each size is timed several times, the two sizes alternating, and the
//! medians compared: a neighbour's burst of CPU use moves single runs, not
//! the median. The goal is ≤ 12× for 10×; quadratic costs came to 60-100×.

use renderer::*;
use test_support::{assert_clean, render_thread};

/// Timed runs per size (after one warm-up run of each).
const RUNS: usize = 9;
/// The goal: 10× the materials for at most this many times the time.
const MAX_RATIO: f64 = 12.0;

fn parent(k: usize) -> Material {
    // Parents differ in parameters, not in shader: the compile check is
    // cached after the first, so the figures are the tables' and checks'.
    let wgsl = "fn material_main(i: MaterialInput) -> MaterialOutput {\n    var o = default_material(i);\n    o.base_color = param_tint().rgb;\n    o.roughness = param_rough();\n    return o;\n}\n";
    Material::with_shader("scaling.wgsl", wgsl)
        .with_parameter(MaterialParameter::vector("tint", glam::Vec4::new(k as f32 / 1000.0, 0.5, 0.5, 1.0)))
        .with_parameter(MaterialParameter::scalar("rough", 0.5))
}

/// Creates `parents` parents with `per_parent` instances each, then
/// destroys every instance (in creation order) and every parent. Seconds.
fn churn(rt: &mut RenderThread, parents: usize, per_parent: usize) -> f64 {
    test_support::material_churn(rt, parents, per_parent, parent).as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median seconds of `churn` at (parents, per_parent) `small` and at `large`.
fn medians(rt: &mut RenderThread, small: (usize, usize), large: (usize, usize)) -> (f64, f64) {
    churn(rt, small.0, small.1);
    churn(rt, large.0, large.1);
    let (mut s, mut l) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        // Alternate which size goes first.
        if run % 2 == 0 {
            s.push(churn(rt, small.0, small.1));
            l.push(churn(rt, large.0, large.1));
        } else {
            l.push(churn(rt, large.0, large.1));
            s.push(churn(rt, small.0, small.1));
        }
    }
    (median(s), median(l))
}

#[test]
fn creating_and_destroying_10x_the_material_instances_costs_at_most_12x() {
    let mut rt = render_thread(RenderThreadMode::Inline);
    for (what, small, large) in [("under one parent", (1, 500), (1, 5000)), ("across many parents", (50, 10), (500, 10))] {
        let (s, l) = medians(&mut rt, small, large);
        let ratio = l / s;
        eprintln!("{what}: {:.1} ms for {small:?}, {:.1} ms for {large:?}: {ratio:.1}x", s * 1e3, l * 1e3);
        assert!(ratio <= MAX_RATIO, "{what}: 10x the materials took {ratio:.1}x the time ({:.1} vs {:.1} ms)", l * 1e3, s * 1e3);
    }
    let live = rt.with_context(|ctx| ctx.scene.materials.live()).unwrap();
    assert_eq!(live, 1, "only the default is left");
    assert_clean(&mut rt);
}
