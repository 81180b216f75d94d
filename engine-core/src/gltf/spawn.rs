//! Putting an import into a World: textures, the PBR parents and their
//! instances through the render thread, then one actor with a component per
//! node. Everything is checked before anything is created.

use super::material::{parent_material, ParentKey};
use super::*;
use crate::component::{CameraDesc, Component, SceneComponent};
use crate::light_camera::{CameraComponent, DirectionalLightComponent, PointLightComponent, SpotLightComponent};
use crate::static_mesh::StaticMeshComponent;
use crate::world::world_invalid_reason;
use crate::{ActorId, ComponentId};
use glam::Mat4;
use renderer::{MaterialId, MaterialInstance, TextureId, TextureLimits};
use std::borrow::Cow;

/// What [`GltfImport::spawn`] made.
#[derive(Clone, Debug, Default)]
pub struct SpawnedScene {
    pub actor: Option<ActorId>,
    /// The root component (rotated from glTF's axes to Proxima's).
    pub root: Option<ComponentId>,
    /// By glTF node index; `None` for nodes outside the spawned scene.
    pub nodes: Vec<Option<ComponentId>>,
    pub cameras: Vec<ComponentId>,
    pub lights: Vec<ComponentId>,
    /// The skinned meshes' components ([`crate::SkeletalMeshComponent`]),
    /// with the file's animations that move their skeletons as clips
    /// (none playing): one per node with a mesh and a skin.
    pub skeletal_meshes: Vec<ComponentId>,
    /// By [`GltfImport::textures`] index.
    pub textures: Vec<TextureId>,
    /// The PBR parents made.
    pub parents: Vec<MaterialId>,
    /// By glTF material index.
    pub materials: Vec<MaterialId>,
    /// The instance for primitives without a material, if any needed it.
    pub default_material: Option<MaterialId>,
}

impl SpawnedScene {
    /// Destroys the actor, then the material instances, parents and textures.
    pub fn destroy(&self, world: &mut World) -> Result<(), GltfError> {
        let engine = |error| GltfError::Spawn { path: String::new(), error };
        if let Some(actor) = self.actor {
            world.destroy_actor(actor).map_err(engine)?;
        }
        let rt = world.render_thread().ok_or(GltfError::NoRenderThread)?;
        for &m in self.materials.iter().chain(&self.default_material).chain(&self.parents) {
            rt.destroy_material(m).map_err(|e| engine(e.into()))?;
        }
        for &t in &self.textures {
            rt.destroy_texture(t).map_err(|e| engine(e.into()))?;
        }
        Ok(())
    }
}

/// One component to add: (node index or none, component, parent: index into the plan, relative).
struct Planned {
    node: Option<usize>,
    component: Box<dyn Component>,
    parent: Option<usize>,
    relative: Transform,
    world: Mat4,
    path: String,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Node,
    Camera,
    Light,
    /// The skeletal mesh of this node's mesh and skin.
    Skinned(usize),
}

fn camera_component(c: &GltfCamera) -> CameraComponent {
    let base = CameraComponent::default().0;
    let desc = match c.projection {
        GltfProjection::Perspective { yfov, znear, zfar, .. } => {
            CameraDesc { fov_y: yfov, near: znear, far: zfar.unwrap_or(base.far.max(znear * 2.0)), ..base }
        }
        GltfProjection::Orthographic { xmag, znear, zfar, .. } => {
            CameraDesc { near: znear, far: zfar, ortho_width: Some(2.0 * xmag), ..base }
        }
    };
    CameraComponent(desc)
}

fn light_component(l: &GltfLight) -> Box<dyn Component> {
    // Unbounded: where the light falls to `renderer::CUTOFF_ILLUMINANCE`.
    let radius = l.range.unwrap_or_else(|| renderer::range_for_intensity(l.intensity * l.color.max_element()));
    match l.kind {
        GltfLightKind::Directional => Box::new(DirectionalLightComponent { color: l.color, intensity: l.intensity, ..Default::default() }),
        GltfLightKind::Point => Box::new(PointLightComponent { color: l.color, intensity: l.intensity, radius, ..Default::default() }),
        GltfLightKind::Spot { inner_cone, outer_cone } => {
            Box::new(SpotLightComponent { color: l.color, intensity: l.intensity, radius, inner_cone, outer_cone, ..Default::default() })
        }
    }
}

pub(crate) fn spawn(import: &GltfImport, world: &mut World, scene: Option<usize>) -> Result<SpawnedScene, GltfError> {
    // Its fields are public: indices edited past their lists are an error, not a panic.
    import.check_indices()?;
    let render_err = |path: String| move |error: renderer::RendererError| GltfError::Spawn { path: path.clone(), error: error.into() };

    // The nodes to spawn.
    let (roots, name): (Vec<usize>, String) = match scene.or(import.spawned_scene_index()) {
        Some(i) => {
            let s = import.scenes.get(i).ok_or(GltfError::UnknownScene(i))?;
            (s.nodes.clone(), if s.name.is_empty() { format!("glTF scene {i}") } else { s.name.clone() })
        }
        None => ((0..import.nodes.len()).filter(|&n| import.nodes[n].parent.is_none()).collect(), "glTF scene".into()),
    };

    // ---- Plan and check everything; nothing is created yet. ----
    let rt = world.render_thread().ok_or(GltfError::NoRenderThread)?;
    let limits: TextureLimits = rt.with_context(|ctx| TextureLimits::of(&ctx.device)).map_err(render_err(String::new()))?;
    // Block-compressed (KTX2 BCn) textures on a device that does not sample
    // BC: decoded to RGBA8 here, where the device is known (the import,
    // made without it, keeps the blocks); Basis Universal ones transcoded
    // again from their file, to RGBA8 rather than through BC7.
    let textures: Vec<Cow<'_, renderer::Texture2D>> = import
        .textures
        .iter()
        .map(|t| {
            if !t.texture.format.is_block_compressed() || limits.bc_sampled {
                Ok(Cow::Borrowed(&t.texture))
            } else if let Some(rgba8) = super::transcode_basis_rgba8(t) {
                let path = format!("/images/{}", t.image);
                rgba8.map(Cow::Owned).map_err(|problem| GltfError::UndecodableImage { path, problem })
            } else {
                Ok(Cow::Owned(super::ktx::decompress_bc(&t.texture)))
            }
        })
        .collect::<Result<_, _>>()?;
    for (t, texture) in import.textures.iter().zip(&textures) {
        texture.validate(&limits).map_err(render_err(format!("/images/{}", t.image)))?;
    }
    let mut parent_keys: Vec<ParentKey> = Vec::new();
    let mut parent_of: Vec<usize> = Vec::new();
    let needs_default = import.meshes.iter().flatten().any(|m| m.slot_materials.iter().any(|s| s.is_none()));
    let default_material = GltfMaterial::default();
    let all: Vec<&GltfMaterial> = import.materials.iter().chain(needs_default.then_some(&default_material)).collect();
    for m in &all {
        let key = m.parent_key();
        let at = parent_keys.iter().position(|k| *k == key).unwrap_or_else(|| {
            parent_keys.push(key);
            parent_keys.len() - 1
        });
        parent_of.push(at);
    }
    let parents: Vec<renderer::Material> = parent_keys.iter().map(parent_material).collect();
    for (i, p) in parents.iter().enumerate() {
        let first = parent_of.iter().position(|&k| k == i).unwrap_or(0);
        let layout = renderer::mesh_pass::validate_material(p).map_err(render_err(format!("/materials/{first}")))?;
        for (m, _) in all.iter().zip(&parent_of).filter(|(_, &k)| k == i) {
            m.instance(MaterialId::DEFAULT, &[]).check(&layout).map_err(render_err(format!("/materials/{first}")))?;
        }
    }

    let plan = plan_components(import, &roots)?;

    // ---- Create: render-thread assets, then the actor. ----
    let mut out = SpawnedScene { nodes: vec![None; import.nodes.len()], ..Default::default() };
    let created = create_assets(import, &textures, world, &parents, &parent_of, &all, needs_default, &mut out);
    if let Err(e) = created.and_then(|_| create_components(import, world, plan, &name, &mut out)) {
        // Only a device failure gets here (everything was checked): undo.
        let _ = out.destroy(world);
        return Err(e);
    }
    Ok(out)
}

/// The components to spawn, parents before children, under a root that
/// turns glTF's Y-up into Proxima's Z-up: one per node of `roots`' trees,
/// plus a camera or light component under the nodes that carry one. Every
/// relative and world transform is checked; nothing is created.
fn plan_components(import: &GltfImport, roots: &[usize]) -> Result<Vec<Planned>, GltfError> {
    let root_transform = Transform::new(Vec3::ZERO, gltf_to_proxima(), Vec3::ONE);
    let mut plan: Vec<Planned> = vec![Planned {
        node: None,
        component: Box::new(SceneComponent),
        parent: None,
        relative: root_transform,
        world: root_transform.to_mat4(),
        path: String::new(),
        kind: Kind::Node,
    }];
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&n| (n, 0)).collect();
    let mut visited = vec![false; import.nodes.len()];
    let mut skinned = SkinnedMeshes::default();
    while let Some((n, parent)) = stack.pop() {
        if std::mem::replace(&mut visited[n], true) {
            continue;
        }
        let node = &import.nodes[n];
        let path = format!("/nodes/{n}");
        let mesh = node.mesh.and_then(|m| import.meshes.get(m)).and_then(|m| m.as_ref());
        // A skinned mesh is placed by its joints: its component sits at the
        // scene's root (glTF ignores the node's own transform for it).
        let skinned = match (node.skin, node.mesh, mesh) {
            (Some(skin), Some(m), Some(gm)) if gm.influences.is_some() => Some((skinned.skeletal(import, m, Some(skin))?, 0)),
            // Morph targets without a skin: a skeletal mesh of one joint, at the node.
            (_, Some(m), Some(gm)) if !gm.morph_targets.is_empty() && gm.influences.is_none() => {
                Some((skinned.skeletal(import, m, None)?, plan.len()))
            }
            _ => None,
        };
        let component: Box<dyn Component> = match (mesh, &skinned) {
            // (The node's skeletal mesh is its own component, below.)
            (Some(mesh), None) => Box::new(StaticMeshComponent::new(mesh.mesh.clone())),
            _ => Box::new(SceneComponent),
        };
        let world_m = plan[parent].world * node.transform.to_mat4();
        let at = plan.len();
        plan.push(Planned {
            node: Some(n),
            component,
            parent: Some(parent),
            relative: node.transform,
            world: world_m,
            path: path.clone(),
            kind: Kind::Node,
        });
        if let Some((c, parent)) = skinned {
            plan.push(Planned {
                node: None,
                component: Box::new(c),
                parent: Some(parent),
                relative: Transform::IDENTITY,
                world: plan[parent].world,
                path: format!("{path}/skin"),
                kind: Kind::Skinned(n),
            });
        }
        let look = Transform::new(Vec3::ZERO, gltf_look_rotation(), Vec3::ONE);
        if let Some(c) = node.camera.and_then(|c| import.cameras.get(c)) {
            plan.push(Planned {
                node: None,
                component: Box::new(camera_component(c)),
                parent: Some(at),
                relative: look,
                world: world_m * look.to_mat4(),
                path: format!("{path}/camera"),
                kind: Kind::Camera,
            });
        }
        if let Some(l) = node.light.and_then(|l| import.lights.get(l)).and_then(|l| l.as_ref()) {
            plan.push(Planned {
                node: None,
                component: light_component(l),
                parent: Some(at),
                relative: look,
                world: world_m * look.to_mat4(),
                path: format!("{path}/extensions/KHR_lights_punctual"),
                kind: Kind::Light,
            });
        }
        for &c in node.children.iter().rev() {
            stack.push((c, at));
        }
    }
    for p in &plan {
        if let Some(reason) = p.relative.invalid_reason().or_else(|| world_invalid_reason(&*p.component, &p.world)) {
            return Err(GltfError::Spawn {
                path: p.path.clone(),
                error: crate::EngineError::InvalidTransform { component: ComponentId::NONE, reason },
            });
        }
    }

    Ok(plan)
}

/// Whether node `n` is drawn by a skeletal mesh (skinned, or morphed).
fn skeletal_node(import: &GltfImport, n: usize) -> bool {
    let node = &import.nodes[n];
    let mesh = node.mesh.and_then(|m| import.meshes.get(m)).and_then(|m| m.as_ref());
    mesh.is_some_and(|m| (node.skin.is_some() && m.influences.is_some()) || (m.influences.is_none() && !m.morph_targets.is_empty()))
}

/// The skeletal meshes a spawn makes, one per (mesh, skin) pair, shared by
/// the nodes that use the same pair.
#[derive(Default)]
struct SkinnedMeshes {
    made: std::collections::HashMap<(usize, usize), SkeletalWithClips>,
}

/// A skeletal mesh and the clips that move it.
type SkeletalWithClips = (Arc<crate::SkeletalMesh>, Vec<Arc<crate::animation::AnimationClip>>);

impl SkinnedMeshes {
    /// A component of mesh `mesh` skinned by `skin` (or morphed alone:
    /// `None`), with its clips.
    fn skeletal(&mut self, import: &GltfImport, mesh: usize, skin: Option<usize>) -> Result<crate::SkeletalMeshComponent, GltfError> {
        let (m, clips) = match self.made.entry((mesh, skin.unwrap_or(usize::MAX))) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(match skin {
                Some(s) => super::skin::skeletal_mesh(import, mesh, s)?,
                None => super::skin::morphed_mesh(import, mesh)?,
            }),
        };
        let mut c = crate::SkeletalMeshComponent::new(m.clone());
        for (i, clip) in clips.iter().enumerate() {
            c.add_clip(clip.clone()).map_err(|error| GltfError::Spawn { path: format!("/meshes/{mesh} (clip {i})"), error })?;
        }
        Ok(c)
    }
}

#[expect(clippy::too_many_arguments, reason = "the plan spawn made, handed over whole")]
fn create_assets(
    import: &GltfImport,
    textures: &[Cow<'_, renderer::Texture2D>],
    world: &mut World,
    parents: &[renderer::Material],
    parent_of: &[usize],
    all: &[&GltfMaterial],
    needs_default: bool,
    out: &mut SpawnedScene,
) -> Result<(), GltfError> {
    let rt = world.render_thread().ok_or(GltfError::NoRenderThread)?;
    let err = |path: String| move |error: renderer::RendererError| GltfError::Spawn { path: path.clone(), error: error.into() };
    for (t, texture) in import.textures.iter().zip(textures) {
        out.textures.push(rt.create_texture(texture.as_ref().clone()).map_err(err(format!("/images/{}", t.image)))?);
    }
    for p in parents {
        out.parents.push(rt.create_material(p.clone()).map_err(err("/materials".into()))?);
    }
    for (i, m) in all.iter().enumerate() {
        let inst: MaterialInstance = m.instance(out.parents[parent_of[i]], &out.textures);
        let id = rt.create_material_instance(inst).map_err(err(format!("/materials/{i}")))?;
        if needs_default && i == all.len() - 1 {
            out.default_material = Some(id);
        } else {
            out.materials.push(id);
        }
    }
    Ok(())
}

fn create_components(
    import: &GltfImport,
    world: &mut World,
    plan: Vec<Planned>,
    name: &str,
    out: &mut SpawnedScene,
) -> Result<(), GltfError> {
    let mut ids: Vec<ComponentId> = Vec::with_capacity(plan.len());
    for p in plan {
        let e = |error| GltfError::Spawn { path: p.path.clone(), error };
        let id = match p.parent {
            None => {
                let (actor, id) = world.spawn_actor(name, p.component, p.relative).map_err(e)?;
                out.actor = Some(actor);
                out.root = Some(id);
                id
            }
            Some(parent) => {
                world.add_component(out.actor.expect("the root comes first"), p.component, Some(ids[parent]), p.relative).map_err(e)?
            }
        };
        ids.push(id);
        let mesh_of = |n: usize| import.nodes[n].mesh.and_then(|m| import.meshes.get(m)).and_then(|m| m.as_ref());
        let drawn = match p.kind {
            Kind::Camera => {
                out.cameras.push(id);
                None
            }
            Kind::Light => {
                out.lights.push(id);
                None
            }
            Kind::Skinned(n) => {
                out.skeletal_meshes.push(id);
                mesh_of(n)
            }
            // A skinned or morphed node's own component draws nothing.
            Kind::Node => p.node.filter(|&n| !skeletal_node(import, n)).and_then(mesh_of),
        };
        if let Some(n) = p.node {
            out.nodes[n] = Some(id);
        }
        if let Some(mesh) = drawn {
            for (slot, material) in mesh.slot_materials.iter().enumerate() {
                let id_m = match material {
                    Some(m) => out.materials.get(*m).copied(),
                    None => out.default_material,
                };
                if let Some(id_m) = id_m {
                    world.set_material(id, slot, id_m).map_err(e)?;
                }
            }
        }
    }
    Ok(())
}
