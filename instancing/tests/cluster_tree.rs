//! HISM cluster tree: agreement with flat culling, stale trees, background
//! rebuilds.

mod common;

use std::time::{Duration, Instant};

use common::*;
use glam::{Affine3A, Quat, Vec3};
use instancing::*;

fn views() -> Vec<CullView> {
    vec![
        CullView::look_at(Vec3::new(0.0, 30.0, 600.0), Vec3::ZERO, Vec3::Y, 1.0, 1.6, 0.1, 3000.0).unwrap(),
        CullView::look_at(Vec3::new(-400.0, 5.0, -400.0), Vec3::new(0.0, 0.0, 100.0), Vec3::Y, 0.6, 1.0, 1.0, 800.0).unwrap(),
        CullView::look_at(Vec3::new(0.0, 900.0, 0.0), Vec3::new(1.0, 0.0, 0.0), Vec3::Y, 1.2, 1.0, 1.0, 2000.0).unwrap(),
        // Inside the forest, looking along it.
        CullView::look_at(Vec3::new(10.0, 2.0, 10.0), Vec3::new(300.0, 2.0, 40.0), Vec3::Y, 1.4, 1.8, 0.1, 1e5).unwrap(),
    ]
}

fn components() -> Vec<Affine3A> {
    vec![
        Affine3A::IDENTITY,
        Affine3A::from_scale_rotation_translation(
            Vec3::new(1.5, 0.7, 2.0),
            Quat::from_rotation_y(0.8) * Quat::from_rotation_x(0.1),
            Vec3::new(30.0, -5.0, 12.0),
        ),
    ]
}

fn distances() -> Vec<CullDistances> {
    vec![CullDistances::NONE, CullDistances::new(200.0, 700.0).unwrap()]
}

#[test]
fn tree_and_flat_agree_exactly() {
    let ts = scattered(50_000, 1000.0, 11);
    let s = store_with(&ts);
    let mesh = cube_mesh();
    let tree = ClusterTree::build(&s, &mesh, &ClusterTreeSettings::default());
    assert_eq!(tree.leaf_size(), 16);
    let mut saw_shortcut = false;
    for view in views() {
        for c2w in components() {
            for d in distances() {
                let flat = cull_instances(&s, &InstanceCuller::new(&mesh, &c2w, &view, d).unwrap());
                let (hier, stats) = tree.cull(&s, &InstanceCuller::new(&mesh, &c2w, &view, d).unwrap());
                assert!(!stats.fell_back_to_flat);
                assert_eq!(visible_set(&flat), visible_set(&hier), "{view:?} {c2w:?} {d:?}");
                saw_shortcut |= stats.leaves_fully_inside > 0;
            }
        }
    }
    assert!(saw_shortcut, "no view exercised the fully-inside shortcut");
}

#[test]
fn tree_visits_a_fraction_for_a_narrow_view() {
    let ts = scattered(50_000, 1000.0, 12);
    let s = store_with(&ts);
    let mesh = cube_mesh();
    let tree = ClusterTree::build(&s, &mesh, &ClusterTreeSettings::default());
    let view = CullView::look_at(Vec3::new(0.0, 600.0, 0.0), Vec3::new(0.0, 0.0, 0.01), Vec3::Y, 0.3, 1.0, 1.0, 2000.0).unwrap();
    let (out, stats) = tree.cull(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, CullDistances::NONE).unwrap());
    // Median splits give leaves of leaf_size/2..=leaf_size instances.
    let leaves = tree.instance_count() / tree.leaf_size() as usize;
    assert!(out.visible_count() > 0);
    assert!((stats.leaves_visible as usize) * 5 < leaves, "{stats:?} of {leaves}");
}

#[test]
fn stale_tree_stays_exact_after_edits() {
    let ts = scattered(20_000, 800.0, 13);
    let mut s = store_with(&ts);
    let mesh = cube_mesh();
    let tree = ClusterTree::build(&s, &mesh, &ClusterTreeSettings::default());
    let mut rng = Rng::new(5);
    // Moves (some far away, into another cluster's region), adds, removals.
    for _ in 0..300 {
        let i = (rng.next_u64() % u64::from(s.instance_count())) as u32;
        let t = translate(rng.range_f32(-400.0, 400.0), 1.0, rng.range_f32(-400.0, 400.0));
        s.update_instance_transform(i, t, TransformSpace::Component).unwrap();
    }
    s.add_instances(&scattered(500, 800.0, 99)).unwrap();
    for _ in 0..400 {
        let i = (rng.next_u64() % u64::from(s.instance_count())) as u32;
        s.remove_instance(i).unwrap();
    }
    assert!(tree.is_stale_for(&s));
    for view in views() {
        for d in distances() {
            let flat = cull_instances(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, d).unwrap());
            let (hier, stats) = tree.cull(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, d).unwrap());
            assert!(stats.stale_instances > 0);
            assert_eq!(visible_set(&flat), visible_set(&hier));
        }
    }
    // After a clear, the old tree draws nothing it should not.
    s.clear_instances();
    s.add_instance(translate(0.0, 0.0, 0.0)).unwrap();
    let view = &views()[0];
    let (hier, _) = tree.cull(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, view, CullDistances::NONE).unwrap());
    assert_eq!(hier.instance_buffer(), vec![0]);
}

#[test]
fn background_rebuild_installs_only_the_newest() {
    let mesh = cube_mesh();
    let mut s = store_with(&scattered(30_000, 1000.0, 21));
    let mut builder = ClusterTreeBuilder::default();
    assert!(builder.needs_rebuild(&s));
    // Before any tree: culling falls back to flat.
    let view = views()[0];
    let (_, stats) = builder.cull(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, CullDistances::NONE).unwrap());
    assert!(stats.fell_back_to_flat);

    assert!(builder.request_rebuild(&s, &mesh));
    assert!(!builder.request_rebuild(&s, &mesh), "same state already building");
    let first_generation = s.generation();
    s.update_instance_transform(0, translate(1.0, 2.0, 3.0), TransformSpace::Component).unwrap();
    assert!(builder.needs_rebuild(&s), "an edit after the request makes it stale");
    assert!(builder.request_rebuild(&s, &mesh));
    let newest = s.generation();
    assert_ne!(first_generation, newest);

    // Meanwhile culls keep working (on whatever tree is current: none yet).
    assert!(builder.current().is_none());
    builder.wait(&mut s).unwrap();
    assert_eq!(builder.current().unwrap().generation(), newest);
    assert!(!builder.is_stale(&s));

    // The first build is dropped whenever it arrives.
    let deadline = Instant::now() + Duration::from_secs(20);
    while builder.discarded_builds() == 0 && Instant::now() < deadline {
        builder.poll(&mut s).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(builder.discarded_builds(), 1);
    assert_eq!(builder.current().unwrap().generation(), newest);

    // Edits while the next build runs: the old tree serves exact culls.
    let old = builder.current().unwrap().clone();
    s.remove_instance(5).unwrap();
    s.add_instance(translate(0.0, 0.0, 0.0)).unwrap();
    builder.request_rebuild(&s, &mesh);
    let flat = cull_instances(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, CullDistances::NONE).unwrap());
    let (hier, _) = builder.cull(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, CullDistances::NONE).unwrap());
    assert_eq!(visible_set(&flat), visible_set(&hier));
    builder.wait(&mut s).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&old, builder.current().unwrap()));
    let (hier, stats) = builder.cull(&s, &InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, CullDistances::NONE).unwrap());
    assert_eq!(stats.stale_instances, 0);
    assert_eq!(visible_set(&flat), visible_set(&hier));
}

/// `request_rebuild` then `wait` from inside a rayon pool whose every worker
/// is busy (here: its only one). The build used to be queued on that same
/// pool and waited for, so nothing could ever run it. Now `wait` takes a
/// build that has not started back and runs it itself. Run in a thread with
/// a timeout, so a regression fails instead of hanging.
#[test]
fn waiting_for_a_tree_inside_a_saturated_rayon_pool_does_not_deadlock() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let result = pool.install(|| {
            let mesh = cube_mesh();
            let mut s = store_with(&scattered(5_000, 500.0, 3));
            let mut builder = ClusterTreeBuilder::default();
            let mut generations = Vec::new();
            for round in 0..3 {
                assert!(builder.request_rebuild(&s, &mesh));
                builder.wait(&mut s).unwrap();
                generations.push((builder.current().unwrap().generation(), s.generation()));
                s.add_instance(translate(round as f32, 0.0, 0.0)).unwrap();
            }
            generations
        });
        let _ = tx.send(result);
    });
    let generations = rx.recv_timeout(Duration::from_secs(120)).expect("waiting for a tree inside a busy rayon pool deadlocked");
    for (tree, store) in generations {
        assert_eq!(tree, store, "the installed tree is the one waited for");
    }
}

/// Every worker of a pool waits at once (components ticked in parallel,
/// each blocking for its own tree).
#[test]
fn every_worker_of_a_pool_waiting_for_trees_at_once_does_not_deadlock() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use rayon::prelude::*;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let built = pool.install(|| {
            (0..8u64)
                .into_par_iter()
                .map(|i| {
                    let mesh = cube_mesh();
                    let mut s = store_with(&scattered(2_000, 300.0, i));
                    let mut builder = ClusterTreeBuilder::default();
                    builder.request_rebuild(&s, &mesh);
                    builder.wait(&mut s).unwrap();
                    builder.current().is_some_and(|t| t.generation() == s.generation())
                })
                .filter(|&ok| ok)
                .count()
        });
        let _ = tx.send(built);
    });
    let built = rx.recv_timeout(Duration::from_secs(120)).expect("workers waiting for trees deadlocked the pool");
    assert_eq!(built, 8);
}
