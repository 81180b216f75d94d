//! Random mutation sequences, often with invalid input (NaN or singular
//! transforms, out-of-range indices, bad custom data, cull distances and minimum LODs):
//! never panic; a rejected call returns a typed error and leaves the store —
//! or the component, dirty flags included — unchanged; ids, indices and data
//! always match a simple model. The component half covers every public
//! mutating call of `InstancedStaticMeshComponent` (ISM and HISM mode) and
//! the engine-facing ones (`take_dirty`, `dynamic_data`,
//! `create_scene_proxy`, `tick`).

mod common;

use std::collections::BTreeMap;

use common::*;
use engine_core::{Component, DirtyFlags, PrimitiveComponent, PrimitiveSettings, ProxyCreateContext, StaticMesh};
use glam::{Affine3A, Mat4, Vec3};
use instancing::*;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Add(Affine3A),
    AddBatch(Vec<Affine3A>),
    Remove(u32),
    RemoveId(usize),
    Update(u32, Affine3A),
    SetCustom(u32, u32, f32),
    SetNumCustom(u32),
    Clear,
    TakeDirty,
}

fn transform() -> impl Strategy<Value = Affine3A> {
    prop_oneof![
        8 => (test_support::f32_in(-100.0, 100.0), test_support::f32_in(-100.0, 100.0), test_support::f32_in(0.1, 3.0))
            .prop_map(|(x, z, s)| Affine3A::from_scale_rotation_translation(Vec3::splat(s), glam::Quat::from_rotation_y(x), Vec3::new(x, 0.0, z))),
        1 => Just(translate(f32::NAN, 0.0, 0.0)),
        1 => Just(Affine3A::from_scale(Vec3::new(0.0, 1.0, 1.0))),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => transform().prop_map(Op::Add),
        1 => prop::collection::vec(transform(), 0..5).prop_map(Op::AddBatch),
        3 => (0u32..24).prop_map(Op::Remove),
        2 => (0usize..64).prop_map(Op::RemoveId),
        3 => (0u32..24, transform()).prop_map(|(i, t)| Op::Update(i, t)),
        2 => (0u32..24, 0u32..4, prop_oneof![4 => test_support::f32_in(-5.0, 5.0), 1 => Just(f32::NAN)])
            .prop_map(|(i, f, v)| Op::SetCustom(i, f, v)),
        1 => prop_oneof![4 => 0u32..4, 1 => Just(MAX_CUSTOM_DATA_FLOATS + 1), 1 => Just(u32::MAX)].prop_map(Op::SetNumCustom),
        1 => Just(Op::Clear),
        1 => Just(Op::TakeDirty),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(test_support::property_cases(256)))]

    #[test]
    fn mutations_keep_the_store_consistent(ops in prop::collection::vec(op(), 1..60)) {
        let mut s = InstanceStore::new(*cube_mesh().bounds());
        // Model: live id → (transform, custom floats).
        let mut model: BTreeMap<InstanceId, (Affine3A, Vec<f32>)> = BTreeMap::new();
        let mut issued: Vec<InstanceId> = Vec::new();

        for op in ops {
            let before = s.clone();
            let n = s.num_custom_data_floats() as usize;
            let result: Result<()> = match op.clone() {
                Op::Add(t) => s.add_instance(t).map(|id| {
                    model.insert(id, (t, vec![0.0; n]));
                    issued.push(id);
                }),
                Op::AddBatch(ts) => s.add_instances(&ts).map(|ids| {
                    for (id, t) in ids.into_iter().zip(ts) {
                        model.insert(id, (t, vec![0.0; n]));
                        issued.push(id);
                    }
                }),
                Op::Remove(i) => s.remove_instance(i).map(|id| {
                    model.remove(&id);
                }),
                Op::RemoveId(k) => match issued.get(k) {
                    Some(&id) => s.remove_instance_by_id(id).map(|_| {
                        model.remove(&id);
                    }),
                    None => Ok(()),
                },
                Op::Update(i, t) => s.update_instance_transform(i, t, TransformSpace::Component).map(|()| {
                    let id = s.ids()[i as usize];
                    model.get_mut(&id).unwrap().0 = t;
                }),
                Op::SetCustom(i, f, v) => s.set_custom_data_value(i, f, v).map(|()| {
                    let id = s.ids()[i as usize];
                    model.get_mut(&id).unwrap().1[f as usize] = v;
                }),
                Op::SetNumCustom(m) => s.set_num_custom_data_floats(m).map(|()| {
                    for (_, c) in model.values_mut() {
                        c.resize(m as usize, 0.0);
                    }
                }),
                Op::Clear => {
                    s.clear_instances();
                    model.clear();
                    Ok(())
                }
                Op::TakeDirty => {
                    let count = s.instance_count();
                    let ranges = s.take_dirty_ranges();
                    for w in ranges.windows(2) {
                        prop_assert!(w[0].end < w[1].start, "ranges sorted and coalesced");
                    }
                    prop_assert!(ranges.iter().all(|r| r.start < r.end && r.end <= count));
                    prop_assert_eq!(s.dirty_bytes(), 0);
                    Ok(())
                }
            };
            if result.is_err() {
                prop_assert_eq!(&s, &before, "rejected {:?} changed the store", op);
            }

            // Invariants.
            prop_assert_eq!(s.instance_count() as usize, model.len());
            prop_assert_eq!(s.custom_data().len(), model.len() * s.num_custom_data_floats() as usize);
            for (i, &id) in s.ids().iter().enumerate() {
                prop_assert_eq!(s.index_of(id), Some(i as u32));
                let (t, c) = &model[&id];
                prop_assert_eq!(&s.transforms()[i], t);
                prop_assert_eq!(s.instance_custom_data(i as u32).unwrap(), &c[..]);
            }
            for id in &issued {
                prop_assert_eq!(s.index_of(*id).is_some(), model.contains_key(id));
            }
            prop_assert!(s.dirty_ranges().iter().all(|r| r.end <= s.instance_count()));
            let exact = s.transforms().iter().fold(Aabb::EMPTY, |a, t| a.union(s.mesh_bounds().aabb().transformed(t)));
            prop_assert!(s.bounds().contains_box(&exact));
        }
    }

    #[test]
    fn packed_dirty_ranges_equal_full_rebuild(
        n in 1usize..300,
        edits in prop::collection::vec((0usize..300, test_support::f32_in(-50.0, 50.0)), 0..20),
    ) {
        let ts: Vec<Affine3A> = (0..n).map(|i| translate(i as f32, 0.0, 0.0)).collect();
        let mut s = store_with(&ts);
        s.set_num_custom_data_floats(1).unwrap();
        let mut uploaded = s.gpu_data_all();
        s.take_dirty_ranges();
        for (i, x) in edits {
            let i = (i % n) as u32;
            s.update_instance_transform(i, translate(x, 1.0, 0.0), TransformSpace::Component).unwrap();
        }
        for r in s.take_dirty_ranges() {
            let mut packed = Vec::new();
            s.write_gpu_data(r.clone(), &mut packed).unwrap();
            uploaded[r.start as usize..r.end as usize].copy_from_slice(&packed);
        }
        prop_assert_eq!(uploaded, s.gpu_data_all());
    }
}

#[derive(Clone, Debug)]
enum CompOp {
    Add(Affine3A, TransformSpace),
    AddBatch(Vec<Affine3A>, TransformSpace),
    Remove(u32),
    Update(u32, Affine3A, TransformSpace),
    SetCustom(u32, u32, f32),
    SetNumCustom(u32),
    SetSeed(u32),
    SetCull(f32, f32),
    SetMinLod(u32),
    SetMesh(usize),
    Clear,
    TakeDirty,
    DynamicData,
    CreateProxy,
    Tick,
    WaitTree,
}

fn space() -> impl Strategy<Value = TransformSpace> {
    prop_oneof![3 => Just(TransformSpace::Component), 2 => transform().prop_map(TransformSpace::World)]
}

fn distance() -> impl Strategy<Value = f32> {
    prop_oneof![4 => test_support::f32_in(0.0, 200.0), 1 => Just(-1.0f32), 1 => Just(f32::NAN), 1 => Just(f32::INFINITY)]
}

fn comp_op() -> impl Strategy<Value = CompOp> {
    prop_oneof![
        4 => (transform(), space()).prop_map(|(t, s)| CompOp::Add(t, s)),
        1 => (prop::collection::vec(transform(), 0..5), space()).prop_map(|(t, s)| CompOp::AddBatch(t, s)),
        3 => (0u32..24).prop_map(CompOp::Remove),
        3 => (0u32..24, transform(), space()).prop_map(|(i, t, s)| CompOp::Update(i, t, s)),
        2 => (0u32..24, 0u32..4, prop_oneof![4 => test_support::f32_in(-5.0, 5.0), 1 => Just(f32::NAN)]).prop_map(|(i, f, v)| CompOp::SetCustom(i, f, v)),
        1 => prop_oneof![4 => 0u32..4, 1 => Just(MAX_CUSTOM_DATA_FLOATS + 1), 1 => Just(u32::MAX)].prop_map(CompOp::SetNumCustom),
        1 => any::<u32>().prop_map(CompOp::SetSeed),
        1 => (distance(), distance()).prop_map(|(a, b)| CompOp::SetCull(a, b)),
        1 => prop_oneof![4 => 0u32..MAX_LODS as u32, 1 => MAX_LODS as u32..20, 1 => Just(u32::MAX)].prop_map(CompOp::SetMinLod),
        1 => (0usize..3).prop_map(CompOp::SetMesh),
        1 => Just(CompOp::Clear),
        1 => Just(CompOp::TakeDirty),
        1 => Just(CompOp::DynamicData),
        1 => Just(CompOp::CreateProxy),
        1 => Just(CompOp::Tick),
        1 => Just(CompOp::WaitTree),
    ]
}

/// Everything a caller can observe of a component, but the dirty flags.
#[derive(Debug, PartialEq)]
struct Seen {
    store: InstanceStore,
    distances: CullDistances,
    min_lod: u32,
    seed: u32,
    mesh: usize,
    tree: Option<u64>,
}

fn seen(c: &InstancedStaticMeshComponent) -> Seen {
    Seen {
        store: c.store().clone(),
        distances: c.cull_distances(),
        min_lod: c.min_lod(),
        seed: c.random_seed(),
        mesh: std::sync::Arc::as_ptr(c.mesh()) as usize,
        tree: c.cluster_tree().map(|t| t.generation()),
    }
}

fn to_local(t: Affine3A, space: &TransformSpace) -> Affine3A {
    match space {
        TransformSpace::Component => t,
        TransformSpace::World(c2w) => c2w.inverse() * t,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(test_support::property_cases(128)))]

    #[test]
    fn component_calls_never_panic_and_rejections_change_nothing(hierarchical: bool, ops in prop::collection::vec((comp_op(), any::<bool>()), 1..50)) {
        let meshes = [StaticMesh::cube(), StaticMesh::sphere(8), StaticMesh::cube()];
        let mut c = if hierarchical {
            InstancedStaticMeshComponent::new_hierarchical(meshes[0].clone())
        } else {
            InstancedStaticMeshComponent::new(meshes[0].clone())
        }
        .unwrap();
        // Model: the store the accepted calls would give (content only).
        let mut model = InstanceStore::new(*c.store().mesh_bounds());
        let view = CullView::look_at(Vec3::new(0.0, 30.0, -60.0), Vec3::ZERO, Vec3::Y, 1.0, 1.5, 0.5, 500.0).unwrap();

        for (op, take_first) in ops {
            // Flags so far are taken first (sometimes: taking them also lets
            // the component forget what a just-created proxy holds): a
            // rejected call must add none.
            if take_first {
                c.take_dirty();
            }
            let before = seen(&c);
            let result: Result<()> = match op.clone() {
                CompOp::Add(t, sp) => c.add_instance(t, sp).map(|_| {
                    model.add_instance(to_local(t, &sp)).unwrap();
                }),
                CompOp::AddBatch(ts, sp) => c.add_instances(&ts, sp).map(|ids| {
                    assert_eq!(ids.len(), ts.len());
                    let locals: Vec<Affine3A> = ts.iter().map(|t| to_local(*t, &sp)).collect();
                    model.add_instances(&locals).unwrap();
                }),
                CompOp::Remove(i) => c.remove_instance(i).map(|_| {
                    model.remove_instance(i).unwrap();
                }),
                CompOp::Update(i, t, sp) => c.update_instance_transform(i, t, sp).map(|()| {
                    model.update_instance_transform(i, to_local(t, &sp), TransformSpace::Component).unwrap();
                }),
                CompOp::SetCustom(i, f, v) => c.set_custom_data_value(i, f, v).map(|()| {
                    model.set_custom_data_value(i, f, v).unwrap();
                }),
                CompOp::SetNumCustom(n) => c.set_num_custom_data_floats(n).map(|()| {
                    model.set_num_custom_data_floats(n).unwrap();
                }),
                CompOp::SetSeed(seed) => {
                    c.set_random_seed(seed);
                    model.set_random_seed(seed);
                    Ok(())
                }
                CompOp::SetCull(a, b) => c.set_cull_distances(a, b).map(|()| {
                    assert_eq!(c.cull_distances(), CullDistances::new(a, b).unwrap());
                }),
                CompOp::SetMinLod(l) => c.set_min_lod(l).map(|()| {
                    assert_eq!(c.min_lod(), l);
                }),
                CompOp::SetMesh(k) => c.set_mesh(meshes[k].clone()),
                CompOp::Clear => {
                    c.clear_instances();
                    model.clear_instances();
                    Ok(())
                }
                CompOp::TakeDirty => {
                    c.take_dirty();
                    prop_assert_eq!(c.take_dirty(), DirtyFlags::NONE, "taking twice");
                    Ok(())
                }
                CompOp::DynamicData => {
                    let data = c.dynamic_data().expect("an update");
                    let u = data.downcast::<IsmUpdate>().expect("an IsmUpdate");
                    prop_assert_eq!(u.instance_count, c.instance_count());
                    for (first, items) in &u.ranges {
                        prop_assert!(*first as usize + items.len() <= c.instance_count() as usize);
                    }
                    prop_assert!(c.store().dirty_ranges().is_empty(), "the update took the dirty ranges");
                    Ok(())
                }
                CompOp::CreateProxy => {
                    let settings = PrimitiveSettings::default();
                    let proxy = c.create_scene_proxy(&ProxyCreateContext { settings: &settings, local_to_world: Mat4::IDENTITY }).expect("a proxy");
                    let p = proxy.as_any().downcast_ref::<InstancedStaticMeshSceneProxy>().expect("an ISM proxy");
                    prop_assert_eq!(p.instance_count(), c.instance_count());
                    prop_assert_eq!(p.is_hierarchical(), hierarchical);
                    Ok(())
                }
                CompOp::Tick => {
                    c.tick(0.016);
                    Ok(())
                }
                CompOp::WaitTree => {
                    prop_assert!(c.wait_for_cluster_tree().is_ok());
                    if hierarchical {
                        prop_assert!(!c.is_building_tree());
                        prop_assert_eq!(c.cluster_tree().map(|t| t.generation()), Some(c.store().generation()));
                    }
                    Ok(())
                }
            };
            if let Err(e) = &result {
                prop_assert!(!e.to_string().is_empty());
                prop_assert_eq!(&seen(&c), &before, "rejected {:?} ({}) changed the component", op, e);
                if take_first {
                    prop_assert_eq!(c.take_dirty(), DirtyFlags::NONE, "rejected {:?} marked the component dirty", op);
                }
            }

            // Content matches the model of accepted calls.
            let s = c.store();
            prop_assert_eq!(s.ids(), model.ids());
            prop_assert_eq!(s.transforms(), model.transforms());
            prop_assert_eq!(s.custom_data(), model.custom_data());
            prop_assert_eq!(s.random_seed(), model.random_seed());
            prop_assert!(s.transforms().iter().all(|t| validate_transform(t).is_ok()));
            // The component's cull (through a possibly stale tree in HISM
            // mode) equals flat culling.
            let (out, stats) = c.cull(&Affine3A::IDENTITY, &view).unwrap();
            let mesh = instanced_mesh_for(c.mesh().render_data()).unwrap();
            let culler = InstanceCuller::new(&mesh, &Affine3A::IDENTITY, &view, c.cull_distances()).unwrap().with_min_lod(c.min_lod() as u8);
            let flat = cull_instances(s, &culler);
            prop_assert!(visible_set(&flat).iter().all(|v| v.1 >= clamp_min_lod(c.min_lod() as u8, mesh.lod_count()) as usize));
            prop_assert_eq!(visible_set(&out), visible_set(&flat), "{:?}", stats);
            prop_assert_eq!(c.is_hierarchical(), hierarchical);
        }
    }
}
