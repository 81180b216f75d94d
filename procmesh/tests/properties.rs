//! Property: random (often invalid) calls never panic, and a rejected call
//! leaves the mesh exactly as it was; the component agrees with the data
//! it wraps, and a call it rejects marks nothing dirty.
//!
//! The arrays cover every attribute (tangents and all four UV channels
//! included), coordinates past [`procmesh::MAX_COORDINATE`], and both the
//! 8-bit and linear colors. Besides small sections they include
//! large ones (thousands of vertices, sizes on the check passes' 4096-element
//! block edges, up to two blocks of triangles) with one flaw at a random
//! place: an index equal to the vertex count, `u32::MAX`, a NaN, a
//! coordinate past the cap. Section indices reach `MAX_SECTION_INDEX` and
//! just past it. Every create's verdict is also checked against rules worked
//! out in the test (an out-of-range index or section must be rejected, a
//! clean section accepted), so a check that let one through would fail; the component test adds what only
//! the component has (draw path, shadows, mirrored transforms, proxies and
//! dynamic data built mid-sequence).

use std::sync::Arc;

use engine_core::collision::ManualExecutor;
use engine_core::{Component, DirtyFlags, PrimitiveComponent, PrimitiveSettings, ProxyCreateContext};
use glam::{Mat4, Vec2, Vec3};
use procmesh::{
    LinearColor, MaterialRef, ProcMeshData, ProcMeshError, ProcMeshTangent, ProceduralMeshComponent, SectionData, VertexAttributes,
    MAX_COORDINATE, MAX_SECTION_INDEX,
};
use proptest::prelude::*;

/// Owned arrays for one create or update call; lengths are often wrong.
#[derive(Debug, Clone)]
struct Arrays {
    positions: Vec<Vec3>,
    triangles: Vec<u32>,
    normals: Vec<Vec3>,
    tangents: Vec<ProcMeshTangent>,
    /// UV channels 0 to 3.
    uvs: [Vec<Vec2>; 4],
    colors: Vec<[u8; 4]>,
    /// Linear colors; when not empty they replace `colors`.
    linear: Vec<LinearColor>,
}

impl Arrays {
    fn data(&self) -> SectionData<'_> {
        let mut data = SectionData::new(&self.positions, &self.triangles).normals(&self.normals).tangents(&self.tangents);
        for (channel, uvs) in self.uvs.iter().enumerate() {
            data = data.uv(channel, uvs);
        }
        if self.linear.is_empty() {
            data.colors(&self.colors)
        } else {
            data.linear_colors(&self.linear)
        }
    }
}

fn coordinate() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![
        20 => test_support::f32_in(-10.0, 10.0),
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(2e18),
        1 => Just(-f32::MAX),
    ]
}

fn vec3() -> impl Strategy<Value = Vec3> + Clone {
    (coordinate(), coordinate(), coordinate()).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

/// Length 0, the vertex count `n`, or something else.
fn sized<T: std::fmt::Debug>(n: usize, item: impl Strategy<Value = T> + Clone) -> impl Strategy<Value = Vec<T>> {
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
                sized(n, (vec3(), any::<bool>()).prop_map(|(t, f)| ProcMeshTangent::new(t, f))),
                [0usize, 1, 2, 3].map(|_| {
                    prop_oneof![
                        2 => Just(Vec::new()),
                        1 => sized(n, (coordinate(), coordinate()).prop_map(|(u, v)| Vec2::new(u, v))),
                    ]
                }),
                sized(n, any::<[u8; 4]>()),
                prop_oneof![
                    3 => Just(Vec::new()),
                    1 => sized(n, (coordinate(), test_support::f32_in(0.0, 1.0))
                        .prop_map(|(r, a)| LinearColor::new(r, 0.5, 0.5, a))),
                ],
            )
        })
        .prop_map(|(positions, triangles, normals, tangents, uvs, colors, linear)| Arrays {
            positions,
            triangles,
            normals,
            tangents,
            uvs,
            colors,
            linear,
        })
}

/// What a large section gets wrong, if anything. The checks run in blocks
/// of 4096 elements, so the bad element's place matters as much as its kind.
#[derive(Debug, Clone, Copy)]
enum Flaw {
    None,
    /// A triangle index equal to the vertex count (one past the last).
    IndexAtCount,
    /// The largest index a `u32` holds.
    IndexMax,
    /// The last vertex as an index (valid).
    IndexLast,
    /// A triangle list whose length is not a multiple of 3.
    Ragged,
    NanPosition,
    /// A coordinate just past `MAX_COORDINATE`.
    FarPosition,
    NanNormal,
    InfiniteUv,
    /// One array one element short.
    ShortColors,
}

fn flaw() -> impl Strategy<Value = Flaw> {
    prop_oneof![
        4 => Just(Flaw::None),
        2 => Just(Flaw::IndexAtCount),
        2 => Just(Flaw::IndexMax),
        1 => Just(Flaw::IndexLast),
        1 => Just(Flaw::Ragged),
        1 => Just(Flaw::NanPosition),
        1 => Just(Flaw::FarPosition),
        1 => Just(Flaw::NanNormal),
        1 => Just(Flaw::InfiniteUv),
        1 => Just(Flaw::ShortColors),
    ]
}

/// A large section (thousands of vertices, sizes on and around the check
/// passes' block edges, up to two blocks of triangles), computed rather
/// than drawn value by value, with at most one flaw at a random place.
fn large_arrays() -> impl Strategy<Value = Arrays> {
    (
        prop_oneof![Just(4095usize), Just(4096), Just(4097), Just(3 * 4096 + 1), 1000usize..9000],
        prop_oneof![Just(0usize), Just(4096), Just(4097), Just(8193), 1usize..9000],
        flaw(),
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|(n, triangle_count, flaw, at, linear)| {
            let positions: Vec<Vec3> = (0..n).map(|i| Vec3::new((i % 101) as f32, (i / 101) as f32, (i as f32 * 0.37).sin())).collect();
            let mut triangles: Vec<u32> = (0..triangle_count * 3).map(|k| ((k * 7919) % n) as u32).collect();
            let mut a = Arrays {
                normals: vec![Vec3::Z; n],
                tangents: vec![ProcMeshTangent::new(Vec3::X, false); n],
                uvs: [positions.iter().map(|p| Vec2::new(p.x, p.y)).collect(), Vec::new(), Vec::new(), vec![Vec2::ONE; n]],
                colors: vec![[255, 128, 0, 255]; n],
                linear: Vec::new(),
                positions,
                triangles: Vec::new(),
            };
            match flaw {
                Flaw::None => {}
                Flaw::IndexAtCount | Flaw::IndexMax | Flaw::IndexLast => {
                    if triangles.is_empty() {
                        triangles.extend([0, 0, 0]);
                    }
                    let value = match flaw {
                        Flaw::IndexAtCount => n as u32,
                        Flaw::IndexMax => u32::MAX,
                        _ => n as u32 - 1,
                    };
                    let k = at.index(triangles.len());
                    triangles[k] = value;
                }
                Flaw::Ragged => triangles.push(0),
                Flaw::NanPosition => a.positions[at.index(n)].y = f32::NAN,
                Flaw::FarPosition => a.positions[at.index(n)].z = -MAX_COORDINATE * 1.01,
                Flaw::NanNormal => a.normals[at.index(n)].x = f32::NAN,
                Flaw::InfiniteUv => a.uvs[3][at.index(n)].y = f32::INFINITY,
                Flaw::ShortColors => {
                    a.colors.pop();
                }
            }
            if linear {
                // The colours as linear ones.
                a.linear = vec![LinearColor::new(1.0, 0.5, 0.0, 1.0); a.colors.len()];
            }
            a.triangles = triangles;
            a
        })
}

/// Section indices: a few small ones, and the cap and just past it.
fn section_index() -> impl Strategy<Value = usize> + Clone {
    prop_oneof![
        18 => 0usize..4,
        1 => Just(MAX_SECTION_INDEX),
        1 => prop_oneof![Just(MAX_SECTION_INDEX + 1), Just(usize::MAX)],
    ]
}

/// Small arrays mostly, large ones sometimes. Boxed: the nested strategy
/// types otherwise make value trees large enough to overflow a test
/// thread's stack in debug builds.
fn any_arrays() -> BoxedStrategy<Arrays> {
    prop_oneof![8 => arrays(), 1 => large_arrays()].boxed()
}

/// What a create must come to, worked out independently of the crate:
/// `Some(true)` must be rejected (section past the cap, an index at or past
/// the vertex count, a ragged triangle list), `Some(false)` must be
/// accepted (everything in range, nothing to cook), `None` when the test
/// does not judge it.
fn expected_create_rejection(index: usize, a: &Arrays, recooks: bool) -> Option<bool> {
    let n = a.positions.len();
    if index > MAX_SECTION_INDEX || !a.triangles.len().is_multiple_of(3) || a.triangles.iter().any(|&t| t as usize >= n) {
        return Some(true);
    }
    let linear_used = !a.linear.is_empty();
    let lengths_ok = [
        a.normals.len(),
        a.tangents.len(),
        a.uvs[0].len(),
        a.uvs[1].len(),
        a.uvs[2].len(),
        a.uvs[3].len(),
        if linear_used { a.linear.len() } else { a.colors.len() },
    ]
    .iter()
    .all(|&len| len == 0 || len == n);
    let finite = a.positions.iter().all(|p| p.is_finite() && p.abs().max_element() <= MAX_COORDINATE)
        && a.normals.iter().all(|v| v.is_finite())
        && a.tangents.iter().all(|t| t.tangent_x.is_finite())
        && a.uvs.iter().flatten().all(|uv| uv.is_finite())
        && (!linear_used || a.linear.iter().all(LinearColor::is_finite));
    (lengths_ok && finite && !recooks).then_some(false)
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
    SetConvex(Vec<Vec<Vec3>>),
    ClearConvex,
    ComplexAsSimple(bool),
    UvFromHits(bool),
    Async(bool),
    Poll,
    /// `section_update`: a copy of some streams of a section.
    Copy(usize, u8),
}

fn op() -> impl Strategy<Value = Op> {
    let index = section_index();
    prop_oneof![
        4 => (index.clone(), any_arrays(), any::<bool>()).prop_map(|(i, a, c)| Op::Create(i, a, c)),
        4 => (index.clone(), any_arrays()).prop_map(|(i, mut a)| {
            // Usually no triangles: an update that gives them is rejected.
            if a.triangles.len() % 2 == 0 {
                a.triangles.clear();
            }
            Op::Update(i, a)
        }),
        1 => index.clone().prop_map(Op::Clear),
        1 => Just(Op::ClearAll),
        1 => (index.clone(), any::<bool>()).prop_map(|(i, v)| Op::Visible(i, v)),
        1 => (index.clone(), proptest::option::of(0u32..3)).prop_map(|(i, m)| Op::Material(i, m)),
        1 => proptest::collection::vec(vec3(), 0..9).prop_map(Op::Convex),
        1 => proptest::collection::vec(proptest::collection::vec(vec3(), 0..6), 0..3).prop_map(Op::SetConvex),
        1 => Just(Op::ClearConvex),
        1 => any::<bool>().prop_map(Op::ComplexAsSimple),
        1 => any::<bool>().prop_map(Op::UvFromHits),
        1 => any::<bool>().prop_map(Op::Async),
        1 => Just(Op::Poll),
        1 => (index, any::<u8>()).prop_map(|(i, bits)| Op::Copy(i, bits)),
    ]
}

/// The attributes whose bits are set in `bits` (position is bit 0).
fn attributes(bits: u8) -> VertexAttributes {
    [
        VertexAttributes::POSITION,
        VertexAttributes::NORMAL,
        VertexAttributes::TANGENT,
        VertexAttributes::COLOR,
        VertexAttributes::UV0,
        VertexAttributes::UV1,
        VertexAttributes::UV2,
        VertexAttributes::UV3,
    ]
    .iter()
    .enumerate()
    .fold(VertexAttributes::NONE, |a, (i, &x)| a.with_if(x, bits & (1 << i) != 0))
}

/// Applies `op`; returns whether it was rejected. Panics where a create's
/// verdict differs from [`expected_create_rejection`].
fn apply(mesh: &mut ProcMeshData, executor: &ManualExecutor, op: &Op) -> bool {
    if let Op::Create(i, a, collide) = op {
        // Replacing a section that has collision triangles re-cooks, which
        // the expectation does not model.
        let recooks = *collide || mesh.section(*i).is_some_and(|s| s.enable_collision() && !s.triangles().is_empty());
        let rejected = apply_unchecked(mesh, executor, op);
        if let Some(expected) = expected_create_rejection(*i, a, recooks) {
            assert_eq!(
                rejected,
                expected,
                "create of section {i} with {} vertices, {} indices (max {:?}): rejected {rejected}, expected {expected}",
                a.positions.len(),
                a.triangles.len(),
                a.triangles.iter().max()
            );
        }
        return rejected;
    }
    apply_unchecked(mesh, executor, op)
}

fn apply_unchecked(mesh: &mut ProcMeshData, executor: &ManualExecutor, op: &Op) -> bool {
    let result = match op {
        Op::Create(i, a, collide) => mesh.create_mesh_section(*i, a.data(), *collide),
        Op::Update(i, a) => mesh.update_mesh_section(*i, a.data()),
        Op::Clear(i) => mesh.clear_mesh_section(*i),
        Op::ClearAll => mesh.clear_all_mesh_sections(),
        Op::Visible(i, v) => mesh.set_mesh_section_visible(*i, *v),
        Op::Material(i, m) => mesh.set_material(*i, m.map(MaterialRef)),
        Op::Convex(points) => mesh.add_collision_convex_mesh(points),
        Op::SetConvex(meshes) => mesh.set_collision_convex_meshes(meshes),
        Op::ClearConvex => mesh.clear_collision_convex_meshes(),
        Op::ComplexAsSimple(on) => mesh.set_use_complex_as_simple_collision(*on),
        Op::UvFromHits(on) => mesh.set_support_uv_from_hit_results(*on),
        Op::Copy(i, bits) => {
            return match mesh.section_update(*i, attributes(*bits)) {
                Ok(copy) => {
                    let section = mesh.section(*i).expect("copied from a section");
                    assert_eq!(copy.local_box, section.local_box());
                    if let Some(p) = &copy.positions {
                        assert_eq!(p.as_slice(), section.positions());
                    }
                    false
                }
                Err(e) => {
                    assert!(matches!(e, ProcMeshError::UnknownSection { .. }), "{e:?}");
                    true
                }
            };
        }
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
    #![proptest_config(ProptestConfig::with_cases(test_support::property_cases(256)))]

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

/// What only the component has, between the calls it forwards.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // test input, generated and dropped one at a time
enum ComponentOp {
    Forward(Op),
    StaticPath(bool),
    CastShadow(bool),
    /// End of frame: a new proxy (render state), told a transform that is
    /// mirrored or not, sometimes not even finite; or the queued messages.
    Proxy(Vec3),
    DynamicData,
}

fn component_op() -> impl Strategy<Value = ComponentOp> {
    prop_oneof![
        12 => op().prop_map(ComponentOp::Forward),
        1 => any::<bool>().prop_map(ComponentOp::StaticPath),
        1 => any::<bool>().prop_map(ComponentOp::CastShadow),
        2 => vec3().prop_map(ComponentOp::Proxy),
        2 => Just(ComponentOp::DynamicData),
    ]
}

/// Forwards `op` to the component: `Some(rejected)` for calls that can be
/// rejected, `None` otherwise.
fn apply_component(c: &mut ProceduralMeshComponent, executor: &ManualExecutor, op: &Op) -> Option<bool> {
    let result = match op {
        Op::Create(i, a, collide) => c.create_mesh_section(*i, a.data(), *collide),
        Op::Update(i, a) => c.update_mesh_section(*i, a.data()),
        Op::Clear(i) => c.clear_mesh_section(*i),
        Op::ClearAll => c.clear_all_mesh_sections(),
        Op::Visible(i, v) => c.set_mesh_section_visible(*i, *v),
        Op::Material(i, m) => c.set_material(*i, m.map(MaterialRef)),
        Op::Convex(points) => c.add_collision_convex_mesh(points),
        Op::SetConvex(meshes) => c.set_collision_convex_meshes(meshes),
        Op::ClearConvex => c.clear_collision_convex_meshes(),
        Op::ComplexAsSimple(on) => c.set_use_complex_as_simple_collision(*on),
        Op::UvFromHits(on) => c.set_support_uv_from_hit_results(*on),
        Op::Async(on) => {
            c.set_use_async_cooking(*on);
            return None;
        }
        Op::Poll => {
            executor.run_all();
            Component::tick(c, 1.0 / 60.0);
            return None;
        }
        Op::Copy(..) => return None,
    };
    Some(result.is_err())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(test_support::property_cases(192)))]

    /// The component accepts and rejects what its data does, holds the same
    /// sections and materials, keeps a rejected call's mesh unchanged and
    /// marks nothing dirty for it; building proxies and dynamic data between
    /// calls never fails or panics.
    #[test]
    fn the_component_agrees_with_its_data(ops in proptest::collection::vec(component_op(), 1..24)) {
        let executor = Arc::new(ManualExecutor::new());
        let mut mesh = ProcMeshData::with_cook_executor(executor.clone());
        let mut component = ProceduralMeshComponent::from_mesh(ProcMeshData::with_cook_executor(executor.clone()));
        let settings = PrimitiveSettings::default();
        for op in &ops {
            // What the previous calls marked is collected first, as the world does.
            let _ = component.take_dirty();
            match op {
                ComponentOp::Forward(op) => {
                    let before = component.with_mesh(|m| format!("{m:?}"));
                    let data_rejected = apply(&mut mesh, &executor, op);
                    if let Some(rejected) = apply_component(&mut component, &executor, op) {
                        prop_assert_eq!(rejected, data_rejected, "{:?}", op);
                        if rejected {
                            prop_assert_eq!(component.with_mesh(|m| format!("{m:?}")), before, "rejected {:?} changed the component", op);
                            prop_assert_eq!(component.take_dirty(), DirtyFlags::NONE, "rejected {:?} marked the component dirty", op);
                        }
                    }
                }
                ComponentOp::StaticPath(on) => component.set_static_draw_path(*on),
                ComponentOp::CastShadow(on) => component.set_cast_shadow(*on),
                ComponentOp::Proxy(scale) => {
                    let m = Mat4::from_scale(*scale);
                    let proxy = component.create_scene_proxy(&ProxyCreateContext { settings: &settings, local_to_world: m });
                    prop_assert!(proxy.is_some());
                    proxy.unwrap().on_transform_changed(m);
                }
                ComponentOp::DynamicData => {
                    let _ = component.dynamic_data();
                }
            }
            component.with_mesh(|m| {
                assert!(m.sections().eq(mesh.sections()), "sections differ after {op:?}");
                assert!((0..4).all(|i| m.material(i) == mesh.material(i)), "materials differ after {op:?}");
                assert_eq!(m.collision_convex_meshes(), mesh.collision_convex_meshes());
            });
            prop_assert!(component.local_bounds().is_valid(), "bounds {:?}", component.local_bounds());
        }
    }
}
