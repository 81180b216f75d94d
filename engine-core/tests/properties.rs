//! Bad input to the world: random sequences of every public mutating call
//! (spawn, add, destroy, register, attach, transforms with NaN, infinities,
//! zero and huge scales, settings, materials, component edits, ticks,
//! end-of-frame updates) never panic, every rejection is an
//! [`EngineError`], and a rejected call leaves everything a caller can
//! observe exactly as it was.
//!
//! Why a model and a snapshot: the world exposes no comparable view of
//! itself, so [`Snapshot`] gathers everything its getters show (its `Debug`
//! text compares NaN payloads and float bits exactly); and attachment is
//! only visible through world transforms, so [`Model`] tracks which
//! component hangs under which, from the calls the world accepted, and
//! checks every world transform against its parent's after every call.
//!
//! Most cases run on a world without a renderer (fast, many cases); one
//! test runs fewer cases on a real render thread (lavapipe, validation on)
//! and requires every end-of-frame update to succeed and every frame to
//! render without a failed frame or a failed scene update: whatever the
//! world accepted, the renderer must accept too.

use std::collections::HashMap;
use std::sync::Arc;

use engine_core::*;
use glam::{Mat4, Quat, Vec3, Vec4};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use renderer::{LocalVertex, MaterialId, StaticMeshLod, StaticMeshSection};

// ----- input -----

/// Mostly ordinary numbers, often the ones that break things.
fn float() -> BoxedStrategy<f32> {
    prop_oneof![
        12 => test_support::f32_in(-100.0, 100.0),
        1 => Just(0.0),
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(1e30),
        1 => Just(-3e38),
        1 => Just(1e-30),
        1 => Just(f32::MAX),
    ]
    .boxed()
}

fn vec3() -> BoxedStrategy<Vec3> {
    (float(), float(), float()).prop_map(|(x, y, z)| Vec3::new(x, y, z)).boxed()
}

fn vec4() -> BoxedStrategy<Vec4> {
    (float(), float(), float(), float()).prop_map(|(x, y, z, w)| Vec4::new(x, y, z, w)).boxed()
}

fn scale_axis() -> BoxedStrategy<f32> {
    prop_oneof![
        10 => test_support::f32_in(0.1, 10.0),
        2 => test_support::f32_in(-10.0, -0.1),
        1 => Just(0.0),
        1 => Just(1e-8),
        1 => Just(1e-5),
        1 => Just(1e-3),
        1 => Just(1e5),
        1 => Just(1e20),
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
    ]
    .boxed()
}

fn rotation() -> BoxedStrategy<Quat> {
    prop_oneof![
        4 => (test_support::f32_in(-7.0, 7.0), test_support::f32_in(-7.0, 7.0), test_support::f32_in(-7.0, 7.0))
            .prop_map(|(a, b, c)| Quat::from_euler(glam::EulerRot::XYZ, a, b, c)),
        1 => vec4().prop_map(Quat::from_vec4),
    ]
    .boxed()
}

fn transform() -> BoxedStrategy<Transform> {
    prop_oneof![
        2 => Just(Transform::IDENTITY),
        6 => (test_support::f32_in(-50.0, 50.0), test_support::f32_in(-50.0, 50.0), test_support::f32_in(-50.0, 50.0))
            .prop_map(|(x, y, z)| Transform::from_translation(Vec3::new(x, y, z))),
        6 => (vec3(), rotation(), (scale_axis(), scale_axis(), scale_axis()))
            .prop_map(|(t, r, (x, y, z))| Transform::new(t, r, Vec3::new(x, y, z))),
    ]
    .boxed()
}

/// A static mesh's single LOD, often invalid (indices out of range, a
/// section past the end or overflowing `u32`, NaN or huge positions).
#[derive(Debug, Clone)]
struct MeshSpec {
    positions: Vec<Vec3>,
    indices: Vec<u32>,
    sections: Vec<(u32, u32)>,
}

fn mesh_spec() -> BoxedStrategy<MeshSpec> {
    (1usize..6)
        .prop_flat_map(|n| {
            let index = prop_oneof![8 => 0u32..n as u32, 1 => Just(n as u32), 1 => Just(u32::MAX)];
            let bound = prop_oneof![4 => 0u32..8, 1 => Just(u32::MAX - 1), 1 => Just(u32::MAX)];
            (
                proptest::collection::vec(vec3(), n..=n),
                proptest::collection::vec(index, 0..10),
                proptest::collection::vec((bound.clone(), bound), 0..3),
            )
        })
        .prop_map(|(positions, indices, sections)| MeshSpec { positions, indices, sections })
        .boxed()
}

impl MeshSpec {
    fn build(&self) -> Result<Arc<StaticMesh>> {
        let vertices = self.positions.iter().map(|p| LocalVertex { position: p.to_array(), ..Default::default() }).collect();
        let mut lod = StaticMeshLod::single_section(vertices, self.indices.clone());
        if !self.sections.is_empty() {
            lod.sections = self
                .sections
                .iter()
                .map(|&(first_index, index_count)| StaticMeshSection { first_index, index_count, material_slot: 0 })
                .collect();
        }
        StaticMesh::new("random", vec![lod], vec!["default".into()])
    }
}

#[derive(Debug, Clone)]
enum Kind {
    Scene,
    Cube,
    Mesh(MeshSpec),
    Directional(Vec3, f32, bool),
    Point(Vec3, f32, f32),
    /// Colour, intensity, radius, inner and outer cone.
    Spot(Vec3, f32, f32, f32, f32),
    Camera(CameraDesc),
}

fn camera_desc() -> BoxedStrategy<CameraDesc> {
    (float(), float(), float(), vec4(), proptest::option::of(float()), float())
        .prop_map(|(fov_y, near, far, viewport, ortho_width, max_draw_distance)| CameraDesc {
            fov_y,
            near,
            far,
            viewport,
            ortho_width,
            max_draw_distance,
        })
        .boxed()
}

fn kind() -> BoxedStrategy<Kind> {
    prop_oneof![
        3 => Just(Kind::Scene),
        4 => Just(Kind::Cube),
        2 => mesh_spec().prop_map(Kind::Mesh),
        1 => (vec3(), float(), any::<bool>()).prop_map(|(c, i, s)| Kind::Directional(c, i, s)),
        1 => (vec3(), float(), float()).prop_map(|(c, i, r)| Kind::Point(c, i, r)),
        1 => (vec3(), float(), float(), float(), float()).prop_map(|(c, i, r, a, b)| Kind::Spot(c, i, r, a, b)),
        1 => camera_desc().prop_map(Kind::Camera),
    ]
    .boxed()
}

impl Kind {
    /// The component, or the mesh's own rejection.
    fn make(&self) -> Result<Box<dyn Component>> {
        Ok(match self {
            Kind::Scene => Box::new(SceneComponent),
            Kind::Cube => Box::new(StaticMeshComponent::new(StaticMesh::cube())),
            Kind::Mesh(spec) => Box::new(StaticMeshComponent::new(spec.build()?)),
            &Kind::Directional(color, intensity, cast_shadows) => {
                Box::new(DirectionalLightComponent { color, intensity, cast_shadows, ..Default::default() })
            }
            &Kind::Point(color, intensity, radius) => Box::new(PointLightComponent { color, intensity, radius, ..Default::default() }),
            &Kind::Spot(color, intensity, radius, inner_cone, outer_cone) => {
                Box::new(SpotLightComponent { color, intensity, radius, inner_cone, outer_cone, ..Default::default() })
            }
            &Kind::Camera(desc) => Box::new(CameraComponent(desc)),
        })
    }
}

/// One call. `usize`s pick from every id handed out so far (destroyed
/// ones included, so stale handles are exercised).
#[derive(Debug, Clone)]
enum Op {
    Spawn(Kind, Transform),
    SpawnMany(Vec<(Kind, Transform)>),
    Add {
        actor: usize,
        kind: Kind,
        parent: Option<usize>,
        relative: Transform,
    },
    Destroy(usize),
    Register(usize),
    Unregister(usize),
    SetActive(usize, bool),
    SetRelative(usize, Transform),
    SetWorldLocation(usize, Vec3),
    Attach(usize, usize),
    Visibility(usize, bool),
    HiddenInGame(usize, bool),
    CastShadow(usize, bool),
    Movable(usize, bool),
    Material(usize, usize, u32),
    CustomData(usize, Vec4),
    MarkDirty(usize, u8),
    SetMesh(usize, Option<MeshSpec>),
    EditLight(usize, Vec3, f32, f32),
    EditCamera(usize, CameraDesc),
    WrongType(usize),
    Tick(f32),
    EndOfFrame,
    Views(u32, u32),
    #[cfg(feature = "collision")]
    Raycast(Vec3, Vec3, f32),
}

fn op() -> impl Strategy<Value = Op> {
    let id = || any::<usize>();
    let slot = prop_oneof![8 => 0usize..4, 1 => Just(65_535usize), 1 => Just(65_536usize), 1 => Just(1usize << 40), 1 => Just(usize::MAX)];
    let size = prop_oneof![4 => 1u32..256, 1 => Just(0u32), 1 => Just(u32::MAX)];
    let ops = prop_oneof![
        5 => (kind(), transform()).prop_map(|(k, t)| Op::Spawn(k, t)),
        1 => proptest::collection::vec((kind(), transform()), 0..4).prop_map(Op::SpawnMany),
        6 => (id(), kind(), proptest::option::of(id()), transform()).prop_map(|(actor, kind, parent, relative)| Op::Add { actor, kind, parent, relative }),
        2 => id().prop_map(Op::Destroy),
        1 => id().prop_map(Op::Register),
        1 => id().prop_map(Op::Unregister),
        1 => (id(), any::<bool>()).prop_map(|(c, a)| Op::SetActive(c, a)),
        6 => (id(), transform()).prop_map(|(c, t)| Op::SetRelative(c, t)),
        2 => (id(), vec3()).prop_map(|(c, p)| Op::SetWorldLocation(c, p)),
        4 => (id(), id()).prop_map(|(c, p)| Op::Attach(c, p)),
        1 => (id(), any::<bool>()).prop_map(|(c, v)| Op::Visibility(c, v)),
        1 => (id(), any::<bool>()).prop_map(|(c, v)| Op::HiddenInGame(c, v)),
        1 => (id(), any::<bool>()).prop_map(|(c, v)| Op::CastShadow(c, v)),
        1 => (id(), any::<bool>()).prop_map(|(c, v)| Op::Movable(c, v)),
        2 => (id(), slot, 0u32..4).prop_map(|(c, s, m)| Op::Material(c, s, m)),
        1 => (id(), vec4()).prop_map(|(c, d)| Op::CustomData(c, d)),
        1 => (id(), any::<u8>()).prop_map(|(c, f)| Op::MarkDirty(c, f)),
        2 => (id(), proptest::option::of(mesh_spec())).prop_map(|(c, m)| Op::SetMesh(c, m)),
        2 => (id(), vec3(), float(), float()).prop_map(|(c, col, i, r)| Op::EditLight(c, col, i, r)),
        1 => (id(), camera_desc()).prop_map(|(c, d)| Op::EditCamera(c, d)),
        1 => id().prop_map(Op::WrongType),
        1 => float().prop_map(Op::Tick),
        3 => Just(Op::EndOfFrame),
        1 => (size.clone(), size).prop_map(|(w, h)| Op::Views(w, h)),
    ];
    // Ray casts (feature `collision`) keep their weight of 1 among all.
    #[cfg(feature = "collision")]
    let ops = prop_oneof![48 => ops, 1 => (vec3(), vec3(), float()).prop_map(|(o, d, m)| Op::Raycast(o, d, m))];
    ops
}

/// A component type no test spawns (asking for it is always the wrong type).
struct NeverSpawned;
impl Component for NeverSpawned {}

// ----- what a caller can observe -----

/// Everything the world's getters show, for every id ever handed out.
// Compared through its `Debug` text (exact for floats, NaN included).
#[allow(dead_code)]
#[derive(Debug)]
struct Snapshot {
    actors: usize,
    components: usize,
    dirty: usize,
    last_update: EndOfFrameStats,
    per_actor: Vec<String>,
    per_component: Vec<String>,
}

fn snapshot(w: &World, ids: &Ids) -> String {
    let per_actor = ids.actors.iter().map(|&a| format!("{:?} {:?}", w.actor_name(a), w.root_component(a))).collect();
    let per_component = ids
        .components
        .iter()
        .map(|&c| {
            let behaviour = match (
                w.component::<StaticMeshComponent>(c),
                w.component::<DirectionalLightComponent>(c),
                w.component::<PointLightComponent>(c),
                w.component::<SpotLightComponent>(c),
                w.component::<CameraComponent>(c),
            ) {
                (Ok(m), ..) => format!("mesh {:p}", Arc::as_ptr(m.mesh())),
                (_, Ok(l), ..) => format!("{l:?}"),
                (_, _, Ok(l), ..) => format!("{l:?}"),
                (_, _, _, Ok(l), _) => format!("{l:?}"),
                (.., Ok(cam)) => format!("{cam:?}"),
                _ => String::new(),
            };
            format!(
                "{:?} {:?} {:?} {:?} {:?} {:?} {behaviour}",
                w.actor_of(c),
                w.is_registered(c),
                w.relative_transform(c),
                w.world_transform(c),
                w.settings(c),
                w.primitive_id(c),
            )
        })
        .collect();
    let s = Snapshot {
        actors: w.num_actors(),
        components: w.num_components(),
        dirty: w.dirty_count(),
        last_update: w.last_update,
        per_actor,
        per_component,
    };
    format!("{s:#?}")
}

/// Every id handed out, alive or not.
#[derive(Default)]
struct Ids {
    actors: Vec<ActorId>,
    components: Vec<ComponentId>,
}

impl Ids {
    fn actor(&self, pick: usize) -> Option<ActorId> {
        (!self.actors.is_empty()).then(|| self.actors[pick % self.actors.len()])
    }
    fn component(&self, pick: usize) -> Option<ComponentId> {
        (!self.components.is_empty()).then(|| self.components[pick % self.components.len()])
    }
}

/// Which components are alive and what hangs under what, from the calls
/// the world accepted.
#[derive(Default)]
struct Model {
    actors: HashMap<ActorId, Vec<ComponentId>>,
    parent: HashMap<ComponentId, Option<ComponentId>>,
    actor_of: HashMap<ComponentId, ActorId>,
}

impl Model {
    fn spawned(&mut self, actor: ActorId, root: ComponentId) {
        self.actors.insert(actor, vec![root]);
        self.parent.insert(root, None);
        self.actor_of.insert(root, actor);
    }

    fn alive(&self, c: ComponentId) -> bool {
        self.parent.contains_key(&c)
    }

    fn is_under(&self, c: ComponentId, ancestor: ComponentId) -> bool {
        let mut up = Some(c);
        while let Some(u) = up {
            if u == ancestor {
                return true;
            }
            up = self.parent[&u];
        }
        false
    }
}

/// Matrices equal up to rounding (the world may compose in another order).
fn close(a: &Mat4, b: &Mat4) -> bool {
    a.to_cols_array().iter().zip(b.to_cols_array()).all(|(x, y)| (x - y).abs() <= 1e-3 * (1.0 + x.abs().max(y.abs())))
}

/// Checks the world against the model: counts, owners, and every world
/// transform usable by the workspace's one rule (`renderer::check_transform`:
/// finite, not flat, a finite inverse) and its parent's times its relative one.
fn check_invariants(w: &World, m: &Model) -> std::result::Result<(), TestCaseError> {
    prop_assert_eq!(w.num_actors(), m.actors.len());
    prop_assert_eq!(w.num_components(), m.parent.len());
    for (&c, &parent) in &m.parent {
        prop_assert_eq!(w.actor_of(c).unwrap(), m.actor_of[&c]);
        let world = w.world_transform(c).unwrap();
        let relative = w.relative_transform(c).unwrap();
        prop_assert!(relative.invalid_reason().is_none(), "{c:?} keeps an invalid transform {relative:?}");
        prop_assert!(renderer::check_transform(&world).is_ok(), "{c:?}: world transform {world:?}");
        let parent_world = parent.map_or(Mat4::IDENTITY, |p| w.world_transform(p).unwrap());
        let expected = parent_world * relative.to_mat4();
        prop_assert!(close(&world, &expected), "{c:?}: world {world:?}, parent * relative {expected:?}");
    }
    Ok(())
}

// ----- the calls -----

/// Applies `op`: `Ok(true)` accepted, `Ok(false)` rejected with a typed
/// error the model agrees with; the model follows accepted calls.
fn apply(w: &mut World, ids: &mut Ids, m: &mut Model, op: &Op) -> std::result::Result<bool, TestCaseError> {
    let comp = |pick: &usize| ids.component(*pick);
    let result: Result<()> = match op {
        Op::Spawn(kind, t) => kind.make().and_then(|c| w.spawn_actor("a", c, *t)).map(|(a, root)| {
            ids.actors.push(a);
            ids.components.push(root);
            m.spawned(a, root);
        }),
        Op::SpawnMany(items) => {
            items.iter().map(|(k, t)| k.make().map(|c| (c, *t))).collect::<Result<Vec<_>>>().and_then(|items| w.spawn_actors(items)).map(
                |roots| {
                    for root in roots {
                        let a = w.actor_of(root).expect("just spawned");
                        ids.actors.push(a);
                        ids.components.push(root);
                        m.spawned(a, root);
                    }
                },
            )
        }
        Op::Add { actor, kind, parent, relative } => {
            let Some(a) = ids.actor(*actor) else { return Ok(false) };
            let parent = parent.and_then(|p| ids.component(p));
            let result = kind.make().and_then(|c| w.add_component(a, c, parent, *relative));
            if let Ok(c) = result {
                prop_assert!(m.actors.contains_key(&a), "added to a destroyed actor");
                let p = parent.unwrap_or(m.actors[&a][0]);
                prop_assert_eq!(m.actor_of.get(&p), Some(&a), "attached across actors");
                ids.components.push(c);
                m.actors.get_mut(&a).unwrap().push(c);
                m.parent.insert(c, Some(p));
                m.actor_of.insert(c, a);
            }
            result.map(drop)
        }
        Op::Destroy(pick) => {
            let Some(a) = ids.actor(*pick) else { return Ok(false) };
            let result = w.destroy_actor(a);
            if result.is_ok() {
                for c in m.actors.remove(&a).unwrap_or_default() {
                    m.parent.remove(&c);
                    m.actor_of.remove(&c);
                }
            } else {
                prop_assert!(!m.actors.contains_key(&a), "destroying a live actor failed: {result:?}");
            }
            result
        }
        Op::Register(c) => comp(c).map_or(Ok(()), |c| w.register_component(c)),
        Op::Unregister(c) => comp(c).map_or(Ok(()), |c| w.unregister_component(c)),
        Op::SetActive(c, on) => comp(c).map_or(Ok(()), |c| w.set_active(c, *on)),
        Op::SetRelative(c, t) => comp(c).map_or(Ok(()), |c| w.set_relative_transform(c, *t)),
        Op::SetWorldLocation(c, p) => comp(c).map_or(Ok(()), |c| w.set_world_location(c, *p)),
        Op::Attach(c, p) => {
            let (Some(c), Some(p)) = (comp(c), comp(p)) else { return Ok(false) };
            let result = w.attach(c, p);
            if result.is_ok() {
                prop_assert!(m.alive(c) && m.alive(p));
                prop_assert_eq!(m.actor_of[&c], m.actor_of[&p], "attached across actors");
                prop_assert!(!m.is_under(p, c), "attaching {:?} under {:?} made a cycle", c, p);
                m.parent.insert(c, Some(p));
            } else if m.alive(c) && m.alive(p) && m.actor_of[&c] == m.actor_of[&p] && !m.is_under(p, c) {
                // A legal attachment may only fail because of the transform it
                // makes, or because it would move a registered component that is
                // not movable.
                prop_assert!(matches!(result, Err(EngineError::InvalidTransform { .. } | EngineError::NotMovable { .. })), "{result:?}");
            }
            result
        }
        Op::Visibility(c, v) => comp(c).map_or(Ok(()), |c| w.set_visibility(c, *v)),
        Op::HiddenInGame(c, v) => comp(c).map_or(Ok(()), |c| w.set_hidden_in_game(c, *v)),
        Op::CastShadow(c, v) => comp(c).map_or(Ok(()), |c| w.set_cast_shadow(c, *v)),
        Op::Movable(c, v) => comp(c).map_or(Ok(()), |c| w.set_mobility(c, if *v { Mobility::Movable } else { Mobility::Static })),
        Op::Material(c, slot, material) => comp(c).map_or(Ok(()), |c| w.set_material(c, *slot, MaterialId(*material))),
        Op::CustomData(c, d) => comp(c).map_or(Ok(()), |c| w.set_custom_primitive_data(c, *d)),
        Op::MarkDirty(c, f) => comp(c).map_or(Ok(()), |c| match f % 3 {
            0 => w.mark_render_state_dirty(c),
            1 => w.mark_render_transform_dirty(c),
            _ => w.mark_render_dynamic_data_dirty(c),
        }),
        Op::SetMesh(c, spec) => {
            let Some(c) = comp(c) else { return Ok(false) };
            let mesh = match spec {
                Some(spec) => spec.build(),
                None => Ok(StaticMesh::sphere(8)),
            };
            mesh.and_then(|mesh| w.with_component_mut(c, |s: &mut StaticMeshComponent| s.set_mesh(mesh)))
        }
        Op::EditLight(c, color, intensity, radius) => {
            let Some(c) = comp(c) else { return Ok(false) };
            let directional = w.with_component_mut(c, |l: &mut DirectionalLightComponent| {
                l.color = *color;
                l.intensity = *intensity;
            });
            match directional {
                Err(EngineError::WrongComponentType(..)) => match w.with_component_mut(c, |l: &mut PointLightComponent| {
                    l.color = *color;
                    l.intensity = *intensity;
                    l.radius = *radius;
                }) {
                    Err(EngineError::WrongComponentType(..)) => w.with_component_mut(c, |l: &mut SpotLightComponent| {
                        l.color = *color;
                        l.intensity = *intensity;
                        l.radius = *radius;
                    }),
                    other => other,
                },
                other => other,
            }
        }
        Op::EditCamera(c, desc) => comp(c).map_or(Ok(()), |c| w.with_component_mut(c, |cam: &mut CameraComponent| cam.0 = *desc)),
        Op::WrongType(c) => {
            let Some(c) = comp(c) else { return Ok(false) };
            let r = w.with_component_mut(c, |_: &mut NeverSpawned| unreachable!("never spawned"));
            prop_assert!(matches!(r, Err(EngineError::WrongComponentType(..) | EngineError::UnknownComponent(_))), "{r:?}");
            r
        }
        Op::Tick(dt) => {
            w.tick(*dt);
            Ok(())
        }
        Op::EndOfFrame => w.send_all_end_of_frame_updates().map(drop),
        Op::Views(width, height) => {
            // Views the renderer accepts: finite, inside the frame.
            for v in w.collect_views(*width, *height) {
                let r = v.viewport;
                prop_assert!(v.view_matrix.is_finite() && v.projection.is_finite(), "{v:?}");
                prop_assert!(r.x >= 0 && r.y >= 0 && r.width > 0 && r.height > 0, "{v:?}");
                prop_assert!(
                    r.x as u64 + r.width as u64 <= *width as u64 && r.y as u64 + r.height as u64 <= *height as u64,
                    "{v:?} in {width}x{height}"
                );
                let valid = v.validate_in(*width, *height);
                prop_assert!(valid.is_ok(), "{valid:?}");
            }
            Ok(())
        }
        #[cfg(feature = "collision")]
        Op::Raycast(o, d, max) => w.raycast(*o, *d, *max, CollisionComplexity::Complex).map(drop),
    };
    if let Err(e) = &result {
        // Stale handles are named as such.
        let stale = |c: &ComponentId| !m.alive(*c);
        match e {
            EngineError::UnknownComponent(c) => prop_assert!(stale(c), "live {c:?} reported unknown"),
            EngineError::UnknownActor(a) => prop_assert!(!m.actors.contains_key(a), "live {a:?} reported unknown"),
            _ => {}
        }
        // The message is meant for people: it says something.
        prop_assert!(!e.to_string().is_empty());
    }
    Ok(result.is_ok())
}

/// Runs `ops` on `w`, checking after each call that a rejected call
/// changed nothing and that the invariants hold. With `end_of_frame`, every
/// call is followed by the end-of-frame update, which must succeed.
fn run(w: &mut World, ops: &[Op], end_of_frame: bool, ids: &mut Ids, model: &mut Model) -> std::result::Result<(), TestCaseError> {
    for op in ops {
        let before = snapshot(w, ids);
        let accepted = apply(w, ids, model, op)?;
        if !accepted {
            prop_assert_eq!(&snapshot(w, ids), &before, "rejected {:?} changed the world", op);
        }
        check_invariants(w, model)?;
        if end_of_frame {
            let r = w.send_all_end_of_frame_updates();
            prop_assert!(r.is_ok(), "end of frame after {op:?}: {r:?}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(test_support::property_cases(384)))]

    #[test]
    fn random_calls_never_panic_and_rejections_change_nothing(ops in proptest::collection::vec(op(), 1..40)) {
        let mut w = World::new(None);
        run(&mut w, &ops, false, &mut Ids::default(), &mut Model::default())?;
    }
}

/// The same calls with a real render thread, one world for every case:
/// whatever the world accepted must reach the renderer without an error
/// and render, and the validation layer stays quiet.
#[test]
fn accepted_calls_reach_the_renderer() {
    let rt = test_support::render_thread(renderer::RenderThreadMode::Inline);
    let world = std::cell::RefCell::new(World::new(Some(rt)));
    let cases = test_support::property_cases(48);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&proptest::collection::vec(op(), 1..24), |ops| {
            let mut w = world.borrow_mut();
            let (mut ids, mut model) = (Ids::default(), Model::default());
            let result = run_and_render(&mut w, &ops, &mut ids, &mut model);
            // Leave the shared world empty for the next case, whether this
            // one passed or not: a failed case that left actors behind would
            // make every later case (and proptest's shrinking) fail on the
            // count of actors instead of on what went wrong.
            for a in ids.actors.iter().filter(|a| model.actors.contains_key(a)) {
                w.destroy_actor(*a).unwrap();
            }
            prop_assert!(w.send_all_end_of_frame_updates().is_ok());
            prop_assert_eq!(w.num_components(), 0);
            result
        })
        .unwrap();
    let mut w = world.into_inner();
    let rt = w.render_thread().unwrap();
    assert!(rt.frames_rendered() >= u64::from(cases), "{} frames rendered", rt.frames_rendered());
    assert_eq!(rt.frames_failed(), 0, "{:?}", rt.last_frame_error());
    test_support::assert_clean(w.render_thread().unwrap());
}

/// One case of [`accepted_calls_reach_the_renderer`]: the calls, then a
/// frame of what they left.
fn run_and_render(w: &mut World, ops: &[Op], ids: &mut Ids, model: &mut Model) -> std::result::Result<(), TestCaseError> {
    run(w, ops, true, ids, model)?;
    // Draw what the calls left, through the cameras' views (or one
    // fixed view): whatever the world accepted renders cleanly.
    let mut views = w.collect_views(64, 48);
    if views.is_empty() {
        views.push(
            renderer::SceneView::perspective(
                Vec3::new(-30.0, 0.0, 10.0),
                Vec3::ZERO,
                Vec3::Z,
                1.0,
                0.1,
                500.0,
                rhi_vulkan::Rect::from_size(64, 48),
            )
            .unwrap(),
        );
    }
    let rt = w.render_thread().unwrap();
    // `render_frame` only enqueues: a frame that fails on the render
    // thread is seen in `frames_failed`/`last_frame_error`, and a
    // request of its update batch that failed in `failed_updates`.
    let failed_before = rt.frames_failed();
    let frame =
        rt.render_frame(renderer::FrameRequest { family: renderer::ViewFamily::new(64, 48, views), read_back: false, execute: true });
    prop_assert!(frame.is_ok(), "{frame:?}");
    let flushed = rt.flush();
    prop_assert!(flushed.is_ok(), "{flushed:?}");
    prop_assert_eq!(rt.frames_failed(), failed_before, "the frame failed: {:?}", rt.last_frame_error());
    let stats = rt.last_stats();
    prop_assert!(matches!(&stats, Ok(Some(s)) if s.failed_updates == 0), "the frame's updates: {:?}", stats);
    Ok(())
}
