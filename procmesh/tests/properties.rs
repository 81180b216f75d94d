//! Property: random (often invalid) calls never panic, and a rejected call
//! leaves the mesh exactly as it was.

use std::sync::Arc;

use engine_core::collision::ManualExecutor;
use glam::{Vec2, Vec3};
use procmesh::{LinearColor, MaterialRef, ProcMeshData, SectionData};
use proptest::prelude::*;

/// Owned arrays for one create or update call; lengths are often wrong.
#[derive(Debug, Clone)]
struct Arrays {
    positions: Vec<Vec3>,
    triangles: Vec<u32>,
    normals: Vec<Vec3>,
    uv1: Vec<Vec2>,
    colors: Vec<[u8; 4]>,
    linear: Vec<LinearColor>,
}

impl Arrays {
    fn data(&self) -> SectionData<'_> {
        let data = SectionData::new(&self.positions, &self.triangles)
            .normals(&self.normals)
            .uv(1, &self.uv1);
        if self.linear.is_empty() {
            data.colors(&self.colors)
        } else {
            data.linear_colors(&self.linear)
        }
    }
}

fn coordinate() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![
        20 => -10.0f32..10.0,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
    ]
}

fn vec3() -> impl Strategy<Value = Vec3> + Clone {
    (coordinate(), coordinate(), coordinate()).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

/// Length 0, the vertex count `n`, or something else.
fn sized<T: std::fmt::Debug>(
    n: usize,
    item: impl Strategy<Value = T> + Clone,
) -> impl Strategy<Value = Vec<T>> {
    prop_oneof![
        3 => Just(0usize),
        6 => Just(n),
        1 => 0..n + 2,
    ]
    .prop_flat_map(move |len| proptest::collection::vec(item.clone(), len))
}

fn arrays() -> impl Strategy<Value = Arrays> {
    (0usize..6)
        .prop_flat_map(|n| {
            (
                proptest::collection::vec(vec3(), n),
                proptest::collection::vec(0u32..(n as u32 + 2), 0..9),
                sized(n, vec3()),
                sized(
                    n,
                    (coordinate(), coordinate()).prop_map(|(u, v)| Vec2::new(u, v)),
                ),
                sized(n, any::<[u8; 4]>()),
                prop_oneof![
                    3 => Just(Vec::new()),
                    1 => sized(n, (coordinate(), 0.0f32..1.0)
                        .prop_map(|(r, a)| LinearColor::new(r, 0.5, 0.5, a))),
                ],
            )
        })
        .prop_map(
            |(positions, triangles, normals, uv1, colors, linear)| Arrays {
                positions,
                triangles,
                normals,
                uv1,
                colors,
                linear,
            },
        )
}

#[derive(Debug, Clone)]
enum Op {
    Create(usize, Arrays, bool),
    Update(usize, Arrays),
    Clear(usize),
    ClearAll,
    Visible(usize, bool),
    Material(usize, Option<u32>),
    Convex(Vec<Vec3>),
    ClearConvex,
    ComplexAsSimple(bool),
    Async(bool),
    Poll,
}

fn op() -> impl Strategy<Value = Op> {
    let index = prop_oneof![9 => 0usize..4, 1 => Just(usize::MAX)];
    prop_oneof![
        4 => (index.clone(), arrays(), any::<bool>()).prop_map(|(i, a, c)| Op::Create(i, a, c)),
        4 => (index.clone(), arrays()).prop_map(|(i, mut a, )| {
            // Usually no triangles: an update that gives them is rejected.
            if a.triangles.len() % 2 == 0 {
                a.triangles.clear();
            }
            Op::Update(i, a)
        }),
        1 => index.clone().prop_map(Op::Clear),
        1 => Just(Op::ClearAll),
        1 => (index.clone(), any::<bool>()).prop_map(|(i, v)| Op::Visible(i, v)),
        1 => (index, proptest::option::of(0u32..3)).prop_map(|(i, m)| Op::Material(i, m)),
        1 => proptest::collection::vec(vec3(), 0..9).prop_map(Op::Convex),
        1 => Just(Op::ClearConvex),
        1 => any::<bool>().prop_map(Op::ComplexAsSimple),
        1 => any::<bool>().prop_map(Op::Async),
        1 => Just(Op::Poll),
    ]
}

/// Applies `op`; returns whether it was rejected.
fn apply(mesh: &mut ProcMeshData, executor: &ManualExecutor, op: &Op) -> bool {
    let result = match op {
        Op::Create(i, a, collide) => mesh.create_mesh_section(*i, a.data(), *collide),
        Op::Update(i, a) => {
            let data = a.data();
            let data = SectionData {
                triangles: &a.triangles,
                ..data
            };
            mesh.update_mesh_section(*i, data)
        }
        Op::Clear(i) => mesh.clear_mesh_section(*i),
        Op::ClearAll => mesh.clear_all_mesh_sections(),
        Op::Visible(i, v) => mesh.set_mesh_section_visible(*i, *v),
        Op::Material(i, m) => mesh.set_material(*i, m.map(MaterialRef)),
        Op::Convex(points) => mesh.add_collision_convex_mesh(points),
        Op::ClearConvex => mesh.clear_collision_convex_meshes(),
        Op::ComplexAsSimple(on) => mesh.set_use_complex_as_simple_collision(*on),
        Op::Async(on) => {
            mesh.set_use_async_cooking(*on);
            return false;
        }
        Op::Poll => {
            executor.run_all();
            mesh.poll_collision();
            return false;
        }
    };
    result.is_err()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn rejected_calls_change_nothing(ops in proptest::collection::vec(op(), 1..24)) {
        let executor = Arc::new(ManualExecutor::new());
        let mut mesh = ProcMeshData::with_cook_executor(executor.clone());
        // A shadow mesh that only ever receives the accepted calls.
        let shadow_executor = Arc::new(ManualExecutor::new());
        let mut shadow = ProcMeshData::with_cook_executor(shadow_executor.clone());
        for op in &ops {
            let before_sections: Vec<_> = mesh.sections().map(|(i, s)| (i, s.clone())).collect();
            let before_bounds = mesh.local_bounds();
            let cooked_before = mesh.cooked_collision().cloned();
            let rejected = apply(&mut mesh, &executor, op);
            if rejected {
                let after: Vec<_> = mesh.sections().map(|(i, s)| (i, s.clone())).collect();
                prop_assert_eq!(&after, &before_sections, "{:?}", op);
                prop_assert_eq!(mesh.local_bounds(), before_bounds);
                prop_assert_eq!(
                    mesh.cooked_collision().map(Arc::as_ptr),
                    cooked_before.as_ref().map(Arc::as_ptr)
                );
            } else {
                prop_assert!(!apply(&mut shadow, &shadow_executor, op), "shadow rejected {:?}", op);
            }
            // Geometry and configuration match the shadow (cooked results
            // are separate objects, so compare what they hold).
            prop_assert_eq!(
                mesh.sections().map(|(i, s)| (i, s.clone())).collect::<Vec<_>>(),
                shadow.sections().map(|(i, s)| (i, s.clone())).collect::<Vec<_>>()
            );
            prop_assert_eq!(mesh.num_sections(), shadow.num_sections());
            prop_assert_eq!(mesh.collision_convex_meshes(), shadow.collision_convex_meshes());
            prop_assert_eq!(
                mesh.cooked_collision().map(|c| (c.triangle_count(), c.convex_count())),
                shadow.cooked_collision().map(|c| (c.triangle_count(), c.convex_count()))
            );
            // Every section's box holds its vertices.
            for (_, section) in mesh.sections() {
                for &p in section.positions() {
                    prop_assert!(section.local_box().contains(p));
                }
            }
        }
    }

    #[test]
    fn a_rejected_call_leaves_the_mesh_equal(ops in proptest::collection::vec(op(), 1..16), last in op()) {
        let executor = Arc::new(ManualExecutor::new());
        let mut mesh = ProcMeshData::with_cook_executor(executor.clone());
        for op in &ops {
            apply(&mut mesh, &executor, op);
        }
        // Full equality, cooked collision and cook generation included: a
        // rejected call does not even bump the cook generation.
        let generation = mesh.body_setup().cooker().newest_generation();
        let snapshot_sections: Vec<_> = mesh.sections().map(|(i, s)| (i, s.clone())).collect();
        let was = format!("{mesh:?}");
        let rejected = apply(&mut mesh, &executor, &last);
        if rejected {
            prop_assert_eq!(mesh.body_setup().cooker().newest_generation(), generation);
            let now: Vec<_> = mesh.sections().map(|(i, s)| (i, s.clone())).collect();
            prop_assert_eq!(now, snapshot_sections);
            prop_assert_eq!(format!("{mesh:?}"), was);
        }
    }
}
