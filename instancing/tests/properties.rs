//! Random mutation sequences: never panic; a rejected call leaves the store
//! unchanged; ids, indices and data always match a simple model.

mod common;

use std::collections::BTreeMap;

use common::*;
use glam::{Affine3A, Vec3};
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
        8 => (-100.0f32..100.0, -100.0f32..100.0, 0.1f32..3.0)
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
        2 => (0u32..24, 0u32..4, prop_oneof![4 => -5.0f32..5.0, 1 => Just(f32::NAN)])
            .prop_map(|(i, f, v)| Op::SetCustom(i, f, v)),
        1 => (0u32..4).prop_map(Op::SetNumCustom),
        1 => Just(Op::Clear),
        1 => Just(Op::TakeDirty),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

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
                Op::SetNumCustom(m) => {
                    s.set_num_custom_data_floats(m);
                    for (_, c) in model.values_mut() {
                        c.resize(m as usize, 0.0);
                    }
                    Ok(())
                }
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
            prop_assert!(s.bounds().contains(&exact));
        }
    }

    #[test]
    fn packed_dirty_ranges_equal_full_rebuild(
        n in 1usize..300,
        edits in prop::collection::vec((0usize..300, -50.0f32..50.0), 0..20),
    ) {
        let ts: Vec<Affine3A> = (0..n).map(|i| translate(i as f32, 0.0, 0.0)).collect();
        let mut s = store_with(&ts);
        s.set_num_custom_data_floats(1);
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
