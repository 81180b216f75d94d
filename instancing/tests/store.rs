//! The instance store: edits, ids, custom data, dirty ranges, errors, bounds.

mod common;

use common::*;
use glam::{Affine3A, Quat, Vec3};
use instancing::*;

#[test]
fn add_update_remove_clear() {
    let mut s = store_with(&[]);
    let a = s.add_instance(translate(1.0, 0.0, 0.0)).unwrap();
    let ids = s.add_instances(&[translate(2.0, 0.0, 0.0), translate(3.0, 0.0, 0.0)]).unwrap();
    assert_eq!(s.instance_count(), 3);
    assert_eq!(s.index_of(a), Some(0));
    assert_eq!(s.index_of(ids[1]), Some(2));

    s.update_instance_transform(1, translate(20.0, 0.0, 0.0), TransformSpace::Component).unwrap();
    assert_eq!(s.get_instance_transform(1, TransformSpace::Component).unwrap(), translate(20.0, 0.0, 0.0));

    // World space in, world space out; the store keeps component space.
    let c2w = Affine3A::from_scale_rotation_translation(Vec3::splat(2.0), Quat::from_rotation_z(0.5), Vec3::new(5.0, 6.0, 7.0));
    let world = translate(100.0, 0.0, 0.0);
    s.update_instance_transform(0, world, TransformSpace::World(c2w)).unwrap();
    let back = s.get_instance_transform(0, TransformSpace::World(c2w)).unwrap();
    assert!(back.abs_diff_eq(world, 1e-4));
    let local = s.get_instance_transform(0, TransformSpace::Component).unwrap();
    assert!(local.abs_diff_eq(c2w.inverse() * world, 1e-5));

    assert_eq!(s.remove_instance_by_id(a).unwrap(), 0);
    assert_eq!(s.index_of(a), None);
    assert_eq!(s.instance_count(), 2);
    // The last instance moved into slot 0.
    assert_eq!(s.index_of(ids[1]), Some(0));
    assert_eq!(s.index_of(ids[0]), Some(1));

    s.clear_instances();
    assert_eq!(s.instance_count(), 0);
    assert!(ids.iter().all(|&id| s.index_of(id).is_none()));
    assert!(s.bounds().is_empty());
    assert!(s.take_dirty_ranges().is_empty());
}

#[test]
fn swap_remove_keeps_other_ids_and_dirties_only_the_moved_slot() {
    let ts: Vec<Affine3A> = (0..10).map(|i| translate(i as f32, 0.0, 0.0)).collect();
    let mut s = store_with(&ts);
    let ids = s.ids().to_vec();
    let removed = s.remove_instance(3).unwrap();
    assert_eq!(removed, ids[3]);
    assert_eq!(s.take_dirty_ranges(), vec![3..4]);
    for (old_index, &id) in ids.iter().enumerate() {
        match old_index {
            3 => assert_eq!(s.index_of(id), None),
            9 => assert_eq!(s.index_of(id), Some(3)),
            i => assert_eq!(s.index_of(id), Some(i as u32)),
        }
    }
    assert_eq!(s.get_instance_transform(3, TransformSpace::Component).unwrap(), ts[9]);

    // Removing the last instance moves nothing and dirties nothing.
    s.remove_instance(s.instance_count() - 1).unwrap();
    assert!(s.take_dirty_ranges().is_empty());
    assert_eq!(s.dirty_bytes(), 0);

    // A dirty last slot that gets moved stays dirty at its new index only.
    s.set_custom_data_value(0, 0, 1.0).unwrap_err(); // no custom floats yet
    s.update_instance_transform(7, translate(70.0, 0.0, 0.0), TransformSpace::Component).unwrap();
    s.remove_instance(1).unwrap();
    assert_eq!(s.take_dirty_ranges(), vec![1..2]);
}

#[test]
fn editing_one_of_100k_dirties_exactly_its_bytes() {
    let ts: Vec<Affine3A> = (0..100_000).map(|i| translate(i as f32, 0.0, 0.0)).collect();
    let mut s = store_with(&ts);
    assert_eq!(s.dirty_bytes(), 0);
    s.update_instance_transform(54_321, translate(0.0, 9.0, 0.0), TransformSpace::Component).unwrap();
    assert_eq!(s.dirty_bytes(), size_of::<InstanceGpuData>() as u64);
    assert_eq!(s.dirty_ranges(), vec![54_321..54_322]);

    // The packed range equals the same instance in a full rebuild.
    let mut packed = Vec::new();
    for r in s.take_dirty_ranges() {
        s.write_gpu_data(r, &mut packed).unwrap();
    }
    assert_eq!(packed, vec![s.gpu_data_all()[54_321]]);

    // With custom data, a dirty instance covers its floats too.
    s.set_num_custom_data_floats(4).unwrap();
    assert_eq!(s.dirty_instance_count(), 100_000);
    s.take_dirty_ranges();
    s.set_custom_data_value(7, 2, 0.5).unwrap();
    assert_eq!(s.dirty_bytes(), size_of::<InstanceGpuData>() as u64 + 16);
}

#[test]
fn custom_data() {
    let mut s = store_with(&[translate(0.0, 0.0, 0.0), translate(1.0, 0.0, 0.0)]);
    s.set_num_custom_data_floats(3).unwrap();
    assert_eq!(s.custom_data(), &[0.0; 6]);
    s.set_custom_data(1, &[1.0, 2.0, 3.0]).unwrap();
    s.set_custom_data_value(0, 2, 9.0).unwrap();
    assert_eq!(s.custom_data(), &[0.0, 0.0, 9.0, 1.0, 2.0, 3.0]);
    let id = s.add_instance_with_custom_data(translate(2.0, 0.0, 0.0), &[4.0, 5.0, 6.0]).unwrap();
    assert_eq!(s.instance_custom_data(s.index_of(id).unwrap()).unwrap(), &[4.0, 5.0, 6.0]);
    // Shrinking keeps the leading floats; growing pads with zeros.
    s.set_num_custom_data_floats(2).unwrap();
    assert_eq!(s.custom_data(), &[0.0, 0.0, 1.0, 2.0, 4.0, 5.0]);
    s.set_num_custom_data_floats(3).unwrap();
    assert_eq!(s.instance_custom_data(1).unwrap(), &[1.0, 2.0, 0.0]);
    // Swap-remove moves the custom floats with the instance.
    s.remove_instance(0).unwrap();
    assert_eq!(s.custom_data(), &[4.0, 5.0, 0.0, 1.0, 2.0, 0.0]);
    let gpu = s.gpu_data_all();
    assert_eq!(gpu[1].custom_data_offset, 3);
}

#[test]
fn rejected_calls_change_nothing() {
    let mut s = store_with(&[translate(0.0, 0.0, 0.0), translate(1.0, 0.0, 0.0)]);
    s.set_num_custom_data_floats(2).unwrap();
    s.update_instance_transform(1, translate(5.0, 0.0, 0.0), TransformSpace::Component).unwrap();
    let before = s.clone();
    let nan = translate(f32::NAN, 0.0, 0.0);
    let flat = Affine3A::from_scale(Vec3::new(1.0, 0.0, 1.0));
    let stranger = store_with(&[translate(0.0, 0.0, 0.0); 5]).ids()[4];

    use InstancingError as E;
    assert_eq!(s.add_instance(nan), Err(E::NonFiniteTransform));
    assert_eq!(s.add_instance(flat), Err(E::DegenerateTransform));
    assert_eq!(s.add_instances(&[translate(9.0, 0.0, 0.0), nan]), Err(E::NonFiniteTransform));
    assert_eq!(
        s.update_instance_transform(2, translate(0.0, 0.0, 0.0), TransformSpace::Component),
        Err(E::InstanceOutOfRange { index: 2, count: 2 })
    );
    assert_eq!(s.update_instance_transform(0, nan, TransformSpace::Component), Err(E::NonFiniteTransform));
    assert_eq!(s.update_instance_transform(0, translate(0.0, 0.0, 0.0), TransformSpace::World(flat)), Err(E::DegenerateTransform));
    assert_eq!(
        s.update_instance_transforms(1, &[translate(0.0, 0.0, 0.0); 2], TransformSpace::Component),
        Err(E::InstanceOutOfRange { index: 2, count: 2 })
    );
    assert_eq!(s.update_instance_transforms(0, &[translate(0.0, 0.0, 0.0), flat], TransformSpace::Component), Err(E::DegenerateTransform));
    assert_eq!(s.remove_instance(7), Err(E::InstanceOutOfRange { index: 7, count: 2 }));
    assert_eq!(s.remove_instance_by_id(stranger), Err(E::UnknownInstanceId(stranger)));
    let id0 = s.ids()[0];
    assert_eq!(s.remove_instances_by_id(&[id0, stranger]), Err(E::UnknownInstanceId(stranger)));
    assert_eq!(s.remove_instances_by_id(&[id0, id0]), Err(E::DuplicateInstanceId(id0)));
    assert_eq!(s.set_custom_data(0, &[1.0]), Err(E::CustomDataLength { expected: 2, got: 1 }));
    assert_eq!(
        s.add_instance_with_custom_data(translate(0.0, 0.0, 0.0), &[1.0, 2.0, 3.0]),
        Err(E::CustomDataLength { expected: 2, got: 3 })
    );
    assert_eq!(s.set_custom_data_value(0, 2, 1.0), Err(E::CustomDataIndex { float_index: 2, count: 2 }));
    assert_eq!(s.set_custom_data_value(0, 1, f32::INFINITY), Err(E::NonFiniteCustomData));
    assert_eq!(s.get_instance_transform(9, TransformSpace::Component), Err(E::InstanceOutOfRange { index: 9, count: 2 }));
    assert_eq!(s, before);
}

#[test]
fn batch_removal_by_id() {
    let ts: Vec<Affine3A> = (0..6).map(|i| translate(i as f32, 0.0, 0.0)).collect();
    let mut s = store_with(&ts);
    let ids = s.ids().to_vec();
    s.remove_instances_by_id(&[ids[5], ids[0], ids[2]]).unwrap();
    assert_eq!(s.instance_count(), 3);
    for &kept in &[ids[1], ids[3], ids[4]] {
        let i = s.index_of(kept).unwrap();
        assert_eq!(s.ids()[i as usize], kept);
    }
}

#[test]
fn random_ids_deterministic_per_seed_and_stable_over_removal() {
    let ts = scattered(1000, 100.0, 1);
    let randoms = |seed: u32| {
        let mut s = store_with(&ts);
        s.set_random_seed(seed);
        (0..s.instance_count()).map(|i| s.instance_random(i).unwrap()).collect::<Vec<f32>>()
    };
    assert_eq!(randoms(42), randoms(42));
    let (a, b) = (randoms(42), randoms(43));
    let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
    assert!(same < 5, "{same} equal values across seeds");

    // Removing an instance does not re-roll anyone else's value (UE's does).
    let mut s = store_with(&ts);
    s.set_random_seed(42);
    let by_id: Vec<(InstanceId, f32)> = s.ids().iter().map(|&id| (id, a[s.index_of(id).unwrap() as usize])).collect();
    s.remove_instance(10).unwrap();
    s.remove_instance(500).unwrap();
    for (id, r) in by_id {
        if let Some(i) = s.index_of(id) {
            assert_eq!(s.instance_random(i).unwrap(), r);
            assert_eq!(s.gpu_data_all()[i as usize].random, r);
        }
    }
    // Changing the seed dirties everything.
    s.take_dirty_ranges();
    s.set_random_seed(7);
    assert_eq!(s.take_dirty_ranges(), vec![0..s.instance_count()]);
}

#[test]
fn bounds_are_the_union_and_stay_conservative() {
    let ts = scattered(500, 200.0, 3);
    let mut s = store_with(&ts);
    let mesh = cube_mesh();
    let exact = ts.iter().fold(Aabb::EMPTY, |acc, t| acc.union(mesh.bounds().aabb().transformed(t)));
    assert!(s.bounds_are_tight());
    assert!(s.bounds().min.abs_diff_eq(exact.min, 1e-4) && s.bounds().max.abs_diff_eq(exact.max, 1e-4));

    // Move the instance that defines max.x far out and back: the bounds grow,
    // then stay loose but conservative until tightened.
    let far = translate(10_000.0, 0.0, 0.0);
    s.update_instance_transform(0, far, TransformSpace::Component).unwrap();
    assert!(s.bounds().max.x >= 10_000.0);
    s.update_instance_transform(0, ts[0], TransformSpace::Component).unwrap();
    assert!(!s.bounds_are_tight());
    assert!(s.bounds().contains_box(&exact));
    let tight = s.tighten_bounds();
    assert!(tight.min.abs_diff_eq(exact.min, 1e-4) && tight.max.abs_diff_eq(exact.max, 1e-4));

    // Removal: loose, still contains the rest; tightening shrinks.
    let idx = (0..s.instance_count()).max_by(|&a, &b| ts[a as usize].translation.x.total_cmp(&ts[b as usize].translation.x)).unwrap();
    s.remove_instance(idx).unwrap();
    let rest = s.transforms().iter().fold(Aabb::EMPTY, |acc, t| acc.union(mesh.bounds().aabb().transformed(t)));
    assert!(s.bounds().contains_box(&rest));
    assert!(s.tighten_bounds().max.x < exact.max.x);

    // World bounds transform the union by the component.
    let c2w = translate(0.0, 1000.0, 0.0);
    let w = s.world_bounds(&c2w);
    assert!((w.origin.y - (s.bounds().center().y + 1000.0)).abs() < 1e-3);
}
