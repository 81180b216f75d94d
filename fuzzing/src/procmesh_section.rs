//! The `procmesh_section` target: bytes become a sequence of calls on a
//! `ProcMeshData` and, side by side, a `ProceduralMeshComponent` (create,
//! update, clear, visibility, materials, convex collision, cooking
//! options, section copies), with section data of any shape.
//!
//! What it holds procmesh to, after every call:
//! - no panic (in procmesh, or in the collision cooking under it);
//! - the data and the component accept or reject alike, and end up with
//!   the same sections and materials;
//! - a rejected call changes nothing (the whole mesh, cooked collision and
//!   cook generation included, compared through its `Debug` text, which is
//!   exact for floats) and its error says something;
//! - an accepted call leaves a mesh the rest of the engine can take: every
//!   section's box holds its positions, triangles index real vertices, the
//!   mesh's bounds are valid renderer bounds, and the change set it
//!   returned names sections that exist (its proxy updates can be built).

use std::sync::Arc;

use engine_core::collision::ManualExecutor;
use engine_core::PrimitiveComponent;
use glam::{Vec2, Vec3};
use procmesh::{
    proxy_updates, ChangeSet, LinearColor, MaterialRef, ProcMeshData, ProcMeshError, ProcMeshTangent, ProceduralMeshComponent, SectionData,
    VertexAttributes,
};

use crate::bytes::Bytes;

/// The arrays of one create or update call, in whatever shape the bytes
/// gave them.
#[derive(Debug, Default)]
struct Arrays {
    positions: Vec<Vec3>,
    triangles: Vec<u32>,
    normals: Vec<Vec3>,
    tangents: Vec<ProcMeshTangent>,
    colors: Vec<[u8; 4]>,
    linear: Option<Vec<LinearColor>>,
    uvs: [Vec<Vec2>; 4],
}

impl Arrays {
    /// Decodes arrays for `n` vertices; `update` makes triangles rare.
    fn read(b: &mut Bytes<'_>, update: bool) -> Self {
        let n = b.u8() as usize % 12;
        let positions = (0..n).map(|_| b.vec3()).collect();
        let triangle_count = if update && !b.u8().is_multiple_of(4) { 0 } else { b.u8() as usize % 16 };
        let triangles = (0..triangle_count).map(|_| if b.u8() == 255 { u32::MAX } else { u32::from(b.u8()) % (n as u32 + 2) }).collect();
        let list = |b: &mut Bytes<'_>| b.len_for(n);
        let normals = (0..list(b)).map(|_| b.vec3()).collect();
        let tangents = (0..list(b)).map(|_| ProcMeshTangent::new(b.vec3(), b.bool())).collect();
        let (colors, linear) = match b.u8() % 3 {
            0 => (Vec::new(), None),
            1 => ((0..list(b)).map(|_| [b.u8(), b.u8(), b.u8(), b.u8()]).collect(), None),
            _ => (Vec::new(), Some((0..list(b)).map(|_| LinearColor::new(b.f32(), b.f32(), b.f32(), b.f32())).collect())),
        };
        let uvs = std::array::from_fn(|_| (0..list(b)).map(|_| b.vec2()).collect());
        Self { positions, triangles, normals, tangents, colors, linear, uvs }
    }

    /// The call's section data, with the 8-bit or the linear colors.
    fn data(&self) -> SectionData<'_> {
        let mut d = SectionData::new(&self.positions, &self.triangles).normals(&self.normals).tangents(&self.tangents).colors(&self.colors);
        if let Some(linear) = &self.linear {
            d = d.linear_colors(linear);
        }
        for (channel, uv) in self.uvs.iter().enumerate() {
            d = d.uv(channel, uv);
        }
        d
    }
}

/// One call, decoded.
#[derive(Debug)]
enum Call {
    Create(usize, Arrays, bool),
    Update(usize, Arrays),
    Clear(usize),
    ClearAll,
    Visible(usize, bool),
    Material(usize, Option<MaterialRef>),
    AddConvex(Vec<Vec3>),
    SetConvex(Vec<Vec<Vec3>>),
    ClearConvex,
    ComplexAsSimple(bool),
    UvFromHits(bool),
    AsyncCooking(bool),
    Poll,
    Copy(usize, VertexAttributes),
}

fn points(b: &mut Bytes<'_>) -> Vec<Vec3> {
    (0..b.u8() % 10).map(|_| b.vec3()).collect()
}

impl Call {
    fn read(b: &mut Bytes<'_>) -> Self {
        match b.u8() % 16 {
            0..=2 => Call::Create(b.index(), Arrays::read(b, false), b.bool()),
            3..=5 => Call::Update(b.index(), Arrays::read(b, true)),
            6 => Call::Clear(b.index()),
            7 => Call::ClearAll,
            8 => Call::Visible(b.index(), b.bool()),
            9 => Call::Material(b.index(), b.bool().then(|| MaterialRef(b.u32()))),
            10 => Call::AddConvex(points(b)),
            11 => Call::SetConvex((0..b.u8() % 3).map(|_| points(b)).collect()),
            12 => Call::ClearConvex,
            13 => match b.u8() % 2 {
                0 => Call::ComplexAsSimple(b.bool()),
                _ => Call::UvFromHits(b.bool()),
            },
            14 => match b.u8() % 2 {
                0 => Call::AsyncCooking(b.bool()),
                _ => Call::Poll,
            },
            _ => {
                let bits = b.u8();
                let all = [
                    VertexAttributes::POSITION,
                    VertexAttributes::NORMAL,
                    VertexAttributes::TANGENT,
                    VertexAttributes::COLOR,
                    VertexAttributes::UV0,
                    VertexAttributes::UV1,
                    VertexAttributes::UV2,
                    VertexAttributes::UV3,
                ];
                let attributes = all.iter().enumerate().fold(VertexAttributes::NONE, |a, (i, &x)| a.with_if(x, bits & (1 << i) != 0));
                Call::Copy(b.index(), attributes)
            }
        }
    }

    /// Runs the call on the data: `Some(result)` for calls that can be
    /// rejected, `None` for those that cannot.
    fn on_data(&self, mesh: &mut ProcMeshData, executor: &ManualExecutor) -> Option<Result<ChangeSet, ProcMeshError>> {
        Some(match self {
            Call::Create(i, a, collide) => mesh.create_mesh_section(*i, a.data(), *collide),
            Call::Update(i, a) => mesh.update_mesh_section(*i, a.data()),
            Call::Clear(i) => mesh.clear_mesh_section(*i),
            Call::ClearAll => mesh.clear_all_mesh_sections(),
            Call::Visible(i, v) => mesh.set_mesh_section_visible(*i, *v),
            Call::Material(i, m) => mesh.set_material(*i, *m),
            Call::AddConvex(p) => mesh.add_collision_convex_mesh(p),
            Call::SetConvex(m) => mesh.set_collision_convex_meshes(m),
            Call::ClearConvex => mesh.clear_collision_convex_meshes(),
            Call::ComplexAsSimple(on) => mesh.set_use_complex_as_simple_collision(*on),
            Call::UvFromHits(on) => mesh.set_support_uv_from_hit_results(*on),
            Call::AsyncCooking(on) => {
                mesh.set_use_async_cooking(*on);
                return None;
            }
            Call::Poll => {
                executor.run_all();
                mesh.poll_collision();
                return None;
            }
            Call::Copy(i, attributes) => {
                let copy = mesh.section_update(*i, *attributes);
                if let Ok(u) = &copy {
                    let section = mesh.section(*i).expect("copied from an existing section");
                    let n = u.positions.as_ref().map_or(section.vertex_count(), Vec::len);
                    assert_eq!(n, section.vertex_count(), "a section copy has the section's vertex count");
                    assert_eq!(u.local_box, section.local_box());
                }
                copy.map(|_| ChangeSet::NONE)
            }
        })
    }

    /// The same call on the component; `None` where the component has no
    /// such call or it cannot be rejected.
    fn on_component(&self, c: &mut ProceduralMeshComponent) -> Option<Result<(), ProcMeshError>> {
        Some(match self {
            Call::Create(i, a, collide) => c.create_mesh_section(*i, a.data(), *collide),
            Call::Update(i, a) => c.update_mesh_section(*i, a.data()),
            Call::Clear(i) => c.clear_mesh_section(*i),
            Call::ClearAll => c.clear_all_mesh_sections(),
            Call::Visible(i, v) => c.set_mesh_section_visible(*i, *v),
            Call::Material(i, m) => c.set_material(*i, *m),
            Call::AddConvex(p) => c.add_collision_convex_mesh(p),
            Call::SetConvex(m) => c.set_collision_convex_meshes(m),
            Call::ClearConvex => c.clear_collision_convex_meshes(),
            Call::ComplexAsSimple(on) => c.set_use_complex_as_simple_collision(*on),
            Call::UvFromHits(on) => c.set_support_uv_from_hit_results(*on),
            Call::AsyncCooking(on) => {
                c.set_use_async_cooking(*on);
                return None;
            }
            Call::Poll => {
                engine_core::Component::tick(c, 0.0);
                return None;
            }
            Call::Copy(..) => return None,
        })
    }
}

/// What an accepted call must leave behind.
fn check_mesh(mesh: &ProcMeshData, changes: &ChangeSet) {
    for (i, s) in mesh.sections() {
        let n = s.vertex_count();
        assert!(s.positions().iter().all(|p| s.local_box().contains(*p)), "section {i}'s box misses a vertex");
        assert!(s.triangles().iter().all(|&t| (t as usize) < n), "section {i} indexes past its {n} vertices");
        assert_eq!(s.triangles().len() % 3, 0, "section {i} holds a partial triangle");
        assert!(s.normals().len() == n && s.tangents().len() == n && s.colors().len() == n && (0..4).all(|c| s.uv(c).len() == n));
    }
    let bounds = renderer::Bounds::from(mesh.local_bounds());
    assert!(bounds.is_valid(), "the mesh's bounds {bounds:?} are not valid renderer bounds");
    if let Err(e) = proxy_updates(mesh, changes) {
        panic!("the change set {changes:?} of an accepted call cannot be sent: {e}");
    }
}

/// The fuzz target body: see the module doc.
pub fn procmesh_section(data: &[u8]) {
    let mut b = Bytes::new(data);
    let executor = Arc::new(ManualExecutor::new());
    let mut mesh = ProcMeshData::with_cook_executor(executor.clone());
    let mut component = ProceduralMeshComponent::from_mesh(ProcMeshData::with_cook_executor(executor.clone()));
    // Bounded: a long input is many short runs, not one slow one.
    for _ in 0..64 {
        if b.is_empty() {
            break;
        }
        let call = Call::read(&mut b);
        let before = format!("{mesh:?}");
        let component_before = component.with_mesh(|m| format!("{m:?}"));
        let result = call.on_data(&mut mesh, &executor);
        let component_result = call.on_component(&mut component);
        match &result {
            Some(Err(e)) => {
                assert!(!e.to_string().is_empty());
                assert_eq!(format!("{mesh:?}"), before, "rejected {call:?} ({e}) changed the mesh");
            }
            Some(Ok(changes)) => check_mesh(&mesh, changes),
            None => check_mesh(&mesh, &ChangeSet::NONE),
        }
        if let Some(component_result) = component_result {
            let data_rejected = result.as_ref().is_some_and(Result::is_err);
            assert_eq!(component_result.is_err(), data_rejected, "{call:?}: component {component_result:?}, data {result:?}");
            if component_result.is_err() {
                assert_eq!(component.with_mesh(|m| format!("{m:?}")), component_before, "rejected {call:?} changed the component");
            }
        }
        // The component draws what the data holds.
        component.with_mesh(|m| {
            assert!(m.sections().eq(mesh.sections()), "{call:?}: component and data sections differ");
            assert!((0..8).all(|i| m.material(i) == mesh.material(i)));
            assert_eq!(m.collision_convex_meshes(), mesh.collision_convex_meshes());
        });
        let _ = component.take_dirty();
        assert!(component.local_bounds().is_valid());
    }
}
