//! The frame in named stages: every stage's CPU time is in the frame's
//! stats (and adds up to the coarse figures), and with the recorder on
//! every stage and the worker tasks leave a span for the Chrome trace.

mod common;

use common::*;
use renderer::*;

#[test]
fn every_stage_is_timed_and_traced_with_worker_tasks() {
    let mut rt = render_thread(RenderThreadMode::Threaded);
    rt.set_cvar(cvars::PARALLEL_PASS_SETUP, "1").unwrap();
    rt.set_cvar(cvars::PARALLEL_RECORD, "1").unwrap();
    sun(&mut rt, true);
    let materials: Vec<MaterialId> = colors(3).into_iter().map(|m| rt.create_material(m).unwrap()).collect();
    cube_grid(&mut rt, 400, &materials, 1.0);
    let family = family(vec![top_view(30.0)]);
    frame(&mut rt, &family);
    renderer::trace::start();
    let (stats, _) = frame(&mut rt, &family);
    let trace = renderer::trace::stop();

    let t = stats.timings;
    for stage in Stage::ALL {
        assert!(t.stage(stage) >= 0.0 && t.stage(stage).is_finite(), "{}: {}", stage.name(), t.stage(stage));
    }
    let sum: f64 = t.stages.iter().sum();
    assert!(sum > 0.0 && sum <= t.total + 1e-9, "stages {sum} ms within the frame's {} ms", t.total);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(close(t.update_scene, t.stage(Stage::UpdateScene)));
    assert!(close(t.init_views, t.stage(Stage::InitViews) + t.stage(Stage::Occlusion) + t.stage(Stage::CollectDynamic)));
    assert!(close(t.pass_setup, t.stage(Stage::PassSetup)));
    assert!(close(t.record, t.stage(Stage::Upload) + t.stage(Stage::GpuPrepare) + t.stage(Stage::Record) + t.stage(Stage::PostProcess)));

    // Every stage once, on one thread (the render thread), in order.
    let stages: Vec<&TraceEventRef> = trace.events.iter().filter(|e| e.category == "stage").collect();
    let names: Vec<&str> = stages.iter().map(|e| e.name).collect();
    assert_eq!(names, Stage::ALL.map(Stage::name).to_vec(), "stage spans end in stage order");
    let render_tid = stages[0].tid;
    assert!(stages.iter().all(|e| e.tid == render_tid));
    for w in stages.windows(2) {
        assert!(w[0].start_us + w[0].dur_us <= w[1].start_us + 1e-3, "{} ends before {} begins", w[0].name, w[1].name);
    }
    // Worker tasks: five pass-setup tasks (depth, base, and shadow in the
    // three cascades that see casters: nothing translucent is in view, so
    // its relevance leaves translucency out),
    // recording chunks and culling chunks, on the render thread's pool
    // (`render_worker_pool`: the render thread is one of its workers, so a
    // task may run on it or on another worker).
    let tasks = |name: &str| trace.events.iter().filter(|e| e.category == "task" && e.name == name).collect::<Vec<_>>();
    assert_eq!(tasks("pass_setup_task").len(), 5);
    assert!(tasks("record_chunk").len() >= 3, "a chunk per pass that draws (translucency draws nothing)");
    assert!(!tasks("cull_chunk").is_empty());
    // Tasks lie within their stage.
    let within = |task: &str, stage: Stage| {
        let s = stages[stage.index()];
        tasks(task).iter().all(|e| e.start_us >= s.start_us - 1e-3 && e.start_us + e.dur_us <= s.start_us + s.dur_us + 1e-3)
    };
    assert!(within("pass_setup_task", Stage::PassSetup));
    assert!(within("record_chunk", Stage::Record));
    assert!(within("cull_chunk", Stage::InitViews));
    assert_eq!(trace.dropped, 0);
    let json = trace.chrome_json();
    assert!(json.starts_with('[') && json.trim_end().ends_with(']'));
    for stage in Stage::ALL {
        assert!(json.contains(&format!("\"name\":\"{}\",\"cat\":\"stage\",\"ph\":\"X\"", stage.name())), "{}", stage.name());
    }

    // Not recording: nothing is kept.
    frame(&mut rt, &family);
    assert_eq!(renderer::trace::stop(), renderer::trace::Trace::default());
    assert_clean(&mut rt);
}

type TraceEventRef = renderer::trace::TraceEvent;

#[test]
fn the_render_thread_is_a_worker_of_its_own_pool() {
    // The render thread is worker 0 of a pool of as many threads as
    // rayon's global one: parallel sections start on it at once instead of
    // waiting for an idle worker to wake. With one thread
    // (`RAYON_NUM_THREADS=1`) it is the pool: sections run on it alone.
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let (index, threads) = rt.with_context(|_| (rayon::current_thread_index(), rayon::current_num_threads())).unwrap();
    assert_eq!(index, Some(0));
    assert_eq!(threads, rayon::current_num_threads());
    // The inline mode keeps the caller's pool.
    let mut inline = render_thread(RenderThreadMode::Inline);
    assert_eq!(inline.with_context(|_| rayon::current_thread_index()).unwrap(), rayon::current_thread_index());
}

/// With one thread (`RAYON_NUM_THREADS=1`, as the frame-overlap benchmark
/// runs) the render thread is its pool alone: a parallel section runs on
/// it, with no hand-off to another thread. The test runs itself again in a
/// process with that variable set (rayon reads it once per process).
#[test]
fn with_one_thread_parallel_sections_run_on_the_render_thread() {
    const NAME: &str = "with_one_thread_parallel_sections_run_on_the_render_thread";
    if std::env::var("RAYON_NUM_THREADS").as_deref() != Ok("1") {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--test-threads", "1"])
            .env("RAYON_NUM_THREADS", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("1 passed"), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
        return;
    }
    let mut rt = render_thread(RenderThreadMode::Threaded);
    let (caller, ran_on) = rt
        .with_context(|_| {
            use rayon::prelude::*;
            assert_eq!((rayon::current_thread_index(), rayon::current_num_threads()), (Some(0), 1));
            let ran_on: Vec<_> = (0..64).into_par_iter().map(|_| std::thread::current().id()).collect();
            (std::thread::current().id(), ran_on)
        })
        .unwrap();
    assert!(ran_on.iter().all(|&t| t == caller), "every task on the render thread");
    assert_clean(&mut rt);
}
