//! glTF meshes → [`StaticMesh`]es: one section per triangle primitive.

use super::accessor::{read_floats, read_indices, AccessorBudget, Buffer, Read};
use super::{GltfError, GltfLimits, GltfMaterial, GltfMesh};
use crate::static_mesh::StaticMesh;
use glam::Vec3;
use gltf::accessor::Dimensions;
use gltf::mesh::{Mode, Semantic};
use renderer::{LocalVertex, StaticMeshLod, StaticMeshSection, VertexInfluences};
use std::collections::HashMap;

/// The bytes a morph target's deltas take per vertex of its mesh (position
/// and normal deltas, three floats each), charged to the accessor budget.
const MORPH_DELTA_BYTES: u64 = 24;

/// The length of the triangle list `raw` indices of `mode` become.
fn list_len(mode: Mode, raw: u64) -> u64 {
    match mode {
        Mode::TriangleStrip | Mode::TriangleFan => raw.saturating_sub(2).saturating_mul(3),
        _ => raw,
    }
}

/// Charges everything the meshes will make against the limits before any
/// of it is read or built, from the accessors' counts: each drawn
/// primitive's vertices (a vertex per triangle corner where it is unwelded
/// — no normals: flat ones — or its tangents are generated: MikkTSpace
/// works on the corners before they weld), its triangle-list indices (a
/// strip or fan of n indices is 3(n - 2)), and its morph targets' deltas
/// per vertex (to `budget`). Errors name the primitive's POSITION, its
/// indices (POSITION without them) or its targets.
pub(crate) fn plan_meshes(
    doc: &gltf::Document,
    materials: &[GltfMaterial],
    limits: &GltfLimits,
    budget: &AccessorBudget,
) -> Result<(), GltfError> {
    let (mut vertices, mut indices) = (0u64, 0u64);
    for m in doc.meshes() {
        for p in m.primitives() {
            let (Some(position), true) =
                (p.get(&Semantic::Positions), matches!(p.mode(), Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan))
            else {
                continue; // Skipped, or refused when it is built.
            };
            let path = format!("/meshes/{}/primitives/{}", m.index(), p.index());
            let count = position.count() as u64;
            let list = list_len(p.mode(), p.indices().map_or(count, |i| i.count() as u64));
            let normal_map = p.material().index().and_then(|i| materials.get(i)).is_some_and(|m| m.normal_texture.is_some());
            let made = if p.get(&Semantic::Normals).is_none() {
                list // Flat normals: a vertex per corner.
            } else if normal_map && p.get(&Semantic::Tangents).is_none() {
                list.max(count) // Generated tangents: the corners, or the vertices kept as they are.
            } else {
                count
            };
            vertices = vertices.saturating_add(made);
            indices = indices.saturating_add(list);
            GltfError::check_limit(&format!("{path}/attributes/POSITION"), "vertices", vertices, limits.max_vertices)?;
            let list_path = if p.indices().is_some() { format!("{path}/indices") } else { format!("{path}/attributes/POSITION") };
            GltfError::check_limit(&list_path, "indices", indices, limits.max_indices)?;
            let targets = p.morph_targets().len() as u64;
            if targets > 0 {
                budget.charge(&format!("{path}/targets"), targets.saturating_mul(made).saturating_mul(MORPH_DELTA_BYTES))?;
            }
        }
    }
    Ok(())
}

/// A triangle list from `mode`'s indices (strips and fans converted as the
/// glTF spec orders their triangles, keeping the winding).
pub(crate) fn triangle_list(mode: Mode, idx: &[u32], path: &str) -> Result<Vec<u32>, GltfError> {
    Ok(match mode {
        Mode::Triangles => {
            if !idx.len().is_multiple_of(3) {
                return Err(GltfError::IndexCount { path: path.into(), count: idx.len() });
            }
            idx.to_vec()
        }
        Mode::TriangleStrip => (0..idx.len().saturating_sub(2))
            .flat_map(|i| if i % 2 == 0 { [idx[i], idx[i + 1], idx[i + 2]] } else { [idx[i], idx[i + 2], idx[i + 1]] })
            .collect(),
        Mode::TriangleFan => (1..idx.len().saturating_sub(1)).flat_map(|i| [idx[i], idx[i + 1], idx[0]]).collect(),
        _ => Vec::new(),
    })
}

struct Mikk<'a> {
    vertices: &'a [LocalVertex],
    indices: &'a [u32],
    uv_set: usize,
    tangents: Vec<[f32; 4]>,
}

impl bevy_mikktspace::Geometry for Mikk<'_> {
    fn num_faces(&self) -> usize {
        self.indices.len() / 3
    }
    fn num_vertices_of_face(&self, _face: usize) -> usize {
        3
    }
    fn position(&self, face: usize, vert: usize) -> [f32; 3] {
        finite(self.vertices[self.indices[face * 3 + vert] as usize].position)
    }
    fn normal(&self, face: usize, vert: usize) -> [f32; 3] {
        finite(self.vertices[self.indices[face * 3 + vert] as usize].normal)
    }
    fn tex_coord(&self, face: usize, vert: usize) -> [f32; 2] {
        // V flipped: MikkTSpace's bitangent follows increasing V, the
        // renderer's binormal (sign · N × T) points to the image's top.
        let uv = finite(self.vertices[self.indices[face * 3 + vert] as usize].uvs[self.uv_set]);
        [uv[0], 1.0 - uv[1]]
    }
    fn set_tangent(&mut self, tangent: Option<bevy_mikktspace::TangentSpace>, face: usize, vert: usize) {
        if let Some(t) = tangent {
            self.tangents[face * 3 + vert] = t.tangent_encoded();
        }
    }
}

/// MikkTSpace hashes positions into a grid and indexes it with what they
/// compute: non-finite or huge inputs are replaced (0, clamped) so it cannot
/// index out of its tables.
fn finite<const N: usize>(v: [f32; N]) -> [f32; N] {
    v.map(|c| if c.is_finite() { c.clamp(-1e18, 1e18) } else { 0.0 })
}

fn vertex_key(v: &LocalVertex) -> [u32; 19] {
    let mut k = [0u32; 19];
    let floats = v.position.iter().chain(&v.tangent_x).chain(&v.normal).chain(v.uvs.iter().flatten());
    for (slot, f) in k.iter_mut().zip(floats) {
        *slot = f.to_bits();
    }
    k[18] = u32::from_le_bytes(v.color);
    k
}

/// MikkTSpace tangents: per corner, then corners welded back where every
/// attribute agrees (and, for a skinned primitive, `origin`: the source
/// vertex each came from, so that corners of vertices with different
/// joints never weld). Returns the vertices, the indices and each new
/// vertex's source vertex.
pub(crate) fn generate_tangents(vertices: &[LocalVertex], indices: &[u32], uv_set: usize, origin: &[u32]) -> Welded {
    // MikkTSpace drops triangles with two equal positions and, with none
    // left, underflows a count (an out-of-bounds loop where overflow checks
    // are off); a grid over no extent leaves its hash cells empty. Such a
    // mesh keeps no tangents.
    let pos = |i: u32| finite(vertices[i as usize].position).map(f32::to_bits);
    let usable = indices.chunks_exact(3).any(|t| pos(t[0]) != pos(t[1]) && pos(t[0]) != pos(t[2]) && pos(t[1]) != pos(t[2]));
    if !usable {
        return (vertices.to_vec(), indices.to_vec(), origin.to_vec());
    }
    let mut g = Mikk { vertices, indices, uv_set, tangents: vec![[0.0, 0.0, 0.0, 1.0]; indices.len()] };
    // The error type has no variants (it is reserved): generation cannot fail.
    let _ = bevy_mikktspace::generate_tangents(&mut g);
    let mut out = Vec::with_capacity(vertices.len());
    let mut out_origin = Vec::with_capacity(vertices.len());
    let mut welded: HashMap<([u32; 19], u32), u32> = HashMap::with_capacity(vertices.len());
    let mut out_idx = Vec::with_capacity(indices.len());
    for (corner, &i) in indices.iter().enumerate() {
        let mut v = vertices[i as usize];
        let t = g.tangents[corner];
        v.tangent_x = if t.iter().all(|c| c.is_finite()) { t } else { [0.0, 0.0, 0.0, 1.0] };
        let from = origin[i as usize];
        let at = *welded.entry((vertex_key(&v), from)).or_insert_with(|| {
            out.push(v);
            out_origin.push(from);
            out.len() as u32 - 1
        });
        out_idx.push(at);
    }
    (out, out_idx, out_origin)
}

/// Vertices, indices, and each vertex's source vertex in the primitive.
pub(crate) type Welded = (Vec<LocalVertex>, Vec<u32>, Vec<u32>);

/// Whether primitive `p` (at JSON path `path`) is drawn: triangles are.
/// Notes what it brings that is not: another mode, application-specific
/// attributes (`_NAME`, ignored) and morph targets (counted).
fn note_primitive(p: &gltf::Primitive, path: &str, skipped: &mut Vec<String>, morph_targets: &mut usize) -> bool {
    if !matches!(p.mode(), Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan) {
        skipped.push(format!("{path}: {:?} primitive (only triangles are drawn)", p.mode()));
        return false;
    }
    if p.morph_targets().len() > 0 {
        *morph_targets += 1;
    }
    for (semantic, _) in p.attributes() {
        if let Semantic::Extras(name) = semantic {
            skipped.push(format!("{path}/attributes/_{name}: an application-specific attribute (ignored)"));
        }
    }
    true
}

/// Builds mesh `m` (`None`: no triangle primitive).
pub(crate) fn build_mesh(
    m: &gltf::Mesh,
    buffers: &[Buffer<'_>],
    materials: &[GltfMaterial],
    limits: &GltfLimits,
    budget: &AccessorBudget,
    skipped: &mut Vec<String>,
    morph_targets: &mut usize,
) -> Result<Option<GltfMesh>, GltfError> {
    let mesh_path = format!("/meshes/{}", m.index());
    let mut lod = StaticMeshLod { vertices: Vec::new(), indices: Vec::new(), sections: Vec::new(), screen_size: 0.0 };
    let mut slot_materials = Vec::new();
    let mut slot_names = Vec::new();
    let mut deformers = Deformers::default();
    for p in m.primitives() {
        let path = format!("{mesh_path}/primitives/{}", p.index());
        if !note_primitive(&p, &path, skipped, morph_targets) {
            continue;
        }
        let attr = |name: &str| format!("{path}/attributes/{name}");
        let pos = read_positions(&p, buffers, limits, budget, &attr("POSITION"))?;
        let count = pos.len() / 3;
        let read_attr = |sem: Semantic, dims: &[Dimensions]| -> Result<Option<(Vec<f32>, usize)>, GltfError> {
            let Some(acc) = p.get(&sem) else { return Ok(None) };
            let name = sem.to_string();
            if acc.count() != count {
                return Err(GltfError::Accessor {
                    path: attr(&name),
                    problem: format!("accessor {}: {} elements, POSITION has {count}", acc.index(), acc.count()),
                });
            }
            read_floats(&acc, buffers, &attr(&name), dims, Read { max_count: count as u64, budget }).map(Some)
        };
        let normals = read_attr(Semantic::Normals, &[Dimensions::Vec3])?;
        let tangents = read_attr(Semantic::Tangents, &[Dimensions::Vec4])?;
        let colors = read_attr(Semantic::Colors(0), &[Dimensions::Vec3, Dimensions::Vec4])?;
        let mut uvs = Vec::new();
        for set in 0..4 {
            uvs.push(read_attr(Semantic::TexCoords(set), &[Dimensions::Vec2])?);
        }
        let mut indices = primitive_triangles(&p, buffers, count, Read { max_count: limits.max_indices, budget }, &path)?;
        if indices.is_empty() {
            continue;
        }
        let skin = read_influences(&p, buffers, Read { max_count: count as u64, budget }, &attr)?;
        let targets = read_morph_targets(&p, buffers, Read { max_count: count as u64, budget }, &path)?;
        let mut vertices = assemble_vertices(count, &pos, &normals, &tangents, &colors, &uvs);
        let mut origin: Vec<u32> = (0..count as u32).collect();
        if normals.is_none() {
            (vertices, indices, origin) = flat_normals(&vertices, &indices, &origin);
        }
        let material = p.material().index();
        let normal_map = material.and_then(|i| materials.get(i)).and_then(|m| m.normal_texture.as_ref());
        if let (None, Some(nm)) = (&tangents, normal_map) {
            (vertices, indices, origin) = generate_tangents(&vertices, &indices, nm.uv_set as usize, &origin);
        }
        deformers.add(lod.sections.is_empty(), &origin, skin, targets, &path)?;
        let base = lod.vertices.len() as u32;
        let first_index = lod.indices.len() as u32;
        if lod.vertices.is_empty() {
            // The first primitive's lists become the mesh's (no copy).
            (lod.vertices, lod.indices) = (vertices, indices);
        } else {
            lod.indices.extend(indices.iter().map(|i| i + base));
            lod.vertices.extend(vertices);
        }
        lod.sections.push(StaticMeshSection {
            first_index,
            index_count: lod.indices.len() as u32 - first_index,
            material_slot: slot_materials.len() as u32,
        });
        slot_names.push(match material {
            Some(i) => materials.get(i).map(|m| m.name.clone()).filter(|n| !n.is_empty()).unwrap_or_else(|| format!("material {i}")),
            None => "default".into(),
        });
        slot_materials.push(material);
    }
    if lod.sections.is_empty() {
        return Ok(None);
    }
    let name = m.name().map(str::to_string).unwrap_or_else(|| format!("mesh {}", m.index()));
    let mesh = StaticMesh::new(&name, vec![lod], slot_names).map_err(|e| GltfError::Mesh { path: mesh_path, problem: e.to_string() })?;
    let (influences, morph_targets) = deformers.finish();
    let default_weights = m.weights().map(<[f32]>::to_vec).unwrap_or_default();
    Ok(Some(GltfMesh { name, mesh, slot_materials, influences, morph_targets, default_weights }))
}

/// A primitive's positions (`POSITION`, required; finite; counted against
/// the vertex limit before the meshes are built, [`plan_meshes`]): three
/// floats per vertex.
fn read_positions(
    p: &gltf::Primitive,
    buffers: &[Buffer<'_>],
    limits: &GltfLimits,
    budget: &AccessorBudget,
    path: &str,
) -> Result<Vec<f32>, GltfError> {
    let Some(acc) = p.get(&Semantic::Positions) else {
        return Err(GltfError::Invalid { path: path.into(), problem: "missing".into() });
    };
    let (pos, _) = read_floats(&acc, buffers, path, &[Dimensions::Vec3], Read { max_count: limits.max_vertices, budget })?;
    if let Some(bad) = pos.chunks_exact(3).position(|p| !p.iter().all(|c| c.is_finite())) {
        return Err(GltfError::NonFinitePosition { path: path.into(), vertex: bad });
    }
    Ok(pos)
}

/// What deforms a mesh's vertices, gathered primitive by primitive in the
/// order their vertices join the mesh: influences (every primitive
/// skinned, or none) and morph targets (as many in every primitive).
#[derive(Default)]
struct Deformers {
    influences: Option<Vec<VertexInfluences>>,
    morphs: Vec<renderer::MorphTarget>,
}

impl Deformers {
    /// Adds a primitive's (the mesh's first with `first`): its source
    /// vertices' influences and targets, through `origin` (each of its
    /// vertices' source vertex).
    fn add(
        &mut self,
        first: bool,
        origin: &[u32],
        skin: Option<Vec<VertexInfluences>>,
        targets: Vec<renderer::MorphTarget>,
        path: &str,
    ) -> Result<(), GltfError> {
        if first {
            self.morphs = targets.iter().map(|_| renderer::MorphTarget::default()).collect();
        } else if targets.len() != self.morphs.len() {
            return Err(GltfError::Invalid {
                path: format!("{path}/targets"),
                problem: format!("{} morph targets; the mesh's first primitive has {}", targets.len(), self.morphs.len()),
            });
        }
        for (all, t) in self.morphs.iter_mut().zip(&targets) {
            all.position_deltas.extend(origin.iter().map(|&o| t.position_deltas[o as usize]));
            if !t.normal_deltas.is_empty() || !all.normal_deltas.is_empty() {
                // Normals for every vertex of the mesh once any primitive has them.
                all.normal_deltas.resize(all.position_deltas.len() - origin.len(), [0.0; 3]);
                all.normal_deltas.extend(origin.iter().map(|&o| t.normal_deltas.get(o as usize).copied().unwrap_or([0.0; 3])));
            }
        }
        match (skin, self.influences.as_mut(), first) {
            (Some(skin), Some(all), _) => all.extend(origin.iter().map(|&o| skin[o as usize])),
            (Some(skin), None, true) => self.influences = Some(origin.iter().map(|&o| skin[o as usize]).collect()),
            (None, None, _) => {}
            _ => {
                return Err(GltfError::Invalid {
                    path: format!("{path}/attributes/JOINTS_0"),
                    problem: "some primitives of the mesh are skinned and others not".into(),
                })
            }
        }
        Ok(())
    }

    /// The influences and the targets (normal deltas for every vertex, or none).
    fn finish(mut self) -> (Option<Vec<VertexInfluences>>, Vec<renderer::MorphTarget>) {
        for t in &mut self.morphs {
            if !t.normal_deltas.is_empty() {
                t.normal_deltas.resize(t.position_deltas.len(), [0.0; 3]);
            }
        }
        (self.influences, self.morphs)
    }
}

/// A skinned primitive's influences per vertex (`JOINTS_0` and
/// `WEIGHTS_0`, and `JOINTS_1`/`WEIGHTS_1` for influences five to eight:
/// unsigned byte or short joints, float or normalized weights), or `None`
/// when it has none. A set's joints without its weights (or the reverse),
/// a second set without the first, or a count that is not the positions',
/// is an error naming the attribute. The weights are checked (and
/// renormalized) against the skeleton when the skeletal mesh is built.
fn read_influences(
    p: &gltf::Primitive,
    buffers: &[Buffer<'_>],
    read: Read<'_>,
    attr: &dyn Fn(&str) -> String,
) -> Result<Option<Vec<VertexInfluences>>, GltfError> {
    let Some((j, w)) = read_influence_set(p, 0, buffers, read, attr)? else {
        if p.get(&Semantic::Joints(1)).is_some() || p.get(&Semantic::Weights(1)).is_some() {
            let problem = "JOINTS_1/WEIGHTS_1 without JOINTS_0/WEIGHTS_0".into();
            return Err(GltfError::Invalid { path: attr("JOINTS_0"), problem });
        }
        return Ok(None);
    };
    let second = read_influence_set(p, 1, buffers, read, attr)?;
    let count = read.max_count as usize;
    Ok(Some(
        (0..count)
            .map(|i| {
                let mut inf = VertexInfluences::four([0, 1, 2, 3].map(|k| j[i * 4 + k] as u16), [0, 1, 2, 3].map(|k| w[i * 4 + k]));
                if let Some((j1, w1)) = &second {
                    for k in 0..4 {
                        inf.joints[4 + k] = j1[i * 4 + k] as u16;
                        inf.weights[4 + k] = w1[i * 4 + k];
                    }
                }
                inf
            })
            .collect(),
    ))
}

/// One set of influences: its joints and its weights as floats, four per vertex.
type InfluenceSet = (Vec<f32>, Vec<f32>);

/// One set of four influences per vertex (`JOINTS_{set}` and
/// `WEIGHTS_{set}`); `None` without either.
fn read_influence_set(
    p: &gltf::Primitive,
    set: u32,
    buffers: &[Buffer<'_>],
    read: Read<'_>,
    attr: &dyn Fn(&str) -> String,
) -> Result<Option<InfluenceSet>, GltfError> {
    let count = read.max_count as usize;
    let (joints_name, weights_name) = (format!("JOINTS_{set}"), format!("WEIGHTS_{set}"));
    let (joints, weights) = match (p.get(&Semantic::Joints(set)), p.get(&Semantic::Weights(set))) {
        (None, None) => return Ok(None),
        (Some(j), Some(w)) => (j, w),
        (j, _) => {
            let missing = if j.is_some() { &weights_name } else { &joints_name };
            let problem = format!("a skinned primitive needs {joints_name} and {weights_name}");
            return Err(GltfError::Invalid { path: attr(missing), problem });
        }
    };
    for (acc, name) in [(&joints, &joints_name), (&weights, &weights_name)] {
        if acc.count() != count {
            return Err(GltfError::Accessor {
                path: attr(name),
                problem: format!("accessor {}: {} elements, POSITION has {count}", acc.index(), acc.count()),
            });
        }
    }
    if !matches!(joints.data_type(), gltf::accessor::DataType::U8 | gltf::accessor::DataType::U16) || joints.normalized() {
        return Err(GltfError::Accessor { path: attr(&joints_name), problem: "joints must be unsigned bytes or shorts".into() });
    }
    let (j, _) = read_floats(&joints, buffers, &attr(&joints_name), &[Dimensions::Vec4], read)?;
    let (w, _) = read_floats(&weights, buffers, &attr(&weights_name), &[Dimensions::Vec4], read)?;
    Ok(Some((j, w)))
}

/// A primitive's morph targets (`targets`: POSITION deltas, and NORMAL
/// ones where given; TANGENT deltas are not read), each with a delta per
/// vertex of the primitive (`read.max_count` of them). A target without
/// POSITION has zero position deltas (charged as a read); counts that are
/// not the positions' are an error naming it.
fn read_morph_targets(
    p: &gltf::Primitive,
    buffers: &[Buffer<'_>],
    read: Read<'_>,
    path: &str,
) -> Result<Vec<renderer::MorphTarget>, GltfError> {
    let count = read.max_count as usize;
    let mut out = Vec::new();
    for (t, target) in p.morph_targets().enumerate() {
        let read_deltas = |acc: Option<gltf::Accessor>, name: &str| -> Result<Vec<[f32; 3]>, GltfError> {
            let Some(acc) = acc else { return Ok(Vec::new()) };
            let at = format!("{path}/targets/{t}/{name}");
            if acc.count() != count {
                return Err(GltfError::Accessor {
                    path: at,
                    problem: format!("accessor {}: {} elements, POSITION has {count}", acc.index(), acc.count()),
                });
            }
            let (f, _) = read_floats(&acc, buffers, &at, &[Dimensions::Vec3], read)?;
            Ok(f.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
        };
        let mut positions = read_deltas(target.positions(), "POSITION")?;
        if positions.is_empty() {
            read.budget.charge(&format!("{path}/targets/{t}"), count as u64 * 12)?;
            positions = vec![[0.0; 3]; count];
        }
        out.push(renderer::MorphTarget { position_deltas: positions, normal_deltas: read_deltas(target.normals(), "NORMAL")? });
    }
    Ok(out)
}

/// A primitive's triangle list (its indices, or `0..count` without them,
/// strips and fans converted, every index checked against `count`; its
/// length was charged by [`plan_meshes`]).
fn primitive_triangles(
    p: &gltf::Primitive,
    buffers: &[Buffer<'_>],
    count: usize,
    read: Read<'_>,
    path: &str,
) -> Result<Vec<u32>, GltfError> {
    let idx_path = format!("{path}/indices");
    let raw: Vec<u32> = match p.indices() {
        Some(acc) => {
            let idx = read_indices(&acc, buffers, &idx_path, read)?;
            if let Some(&bad) = idx.iter().find(|&&i| i as usize >= count) {
                return Err(GltfError::IndexOutOfRange { path: idx_path, index: bad, vertex_count: count });
            }
            idx
        }
        None => (0..count as u32).collect(),
    };
    let list_path = if p.indices().is_some() { idx_path } else { format!("{path}/attributes/POSITION") };
    triangle_list(p.mode(), &raw, &list_path)
}

/// Float attribute data read from accessors: the values and the component
/// count per element.
type Floats = Option<(Vec<f32>, usize)>;

/// The local vertices of a primitive's `count` elements (defaults where an
/// attribute is absent: +Z normal, +X tangent, white, UV 0).
fn assemble_vertices(count: usize, pos: &[f32], normals: &Floats, tangents: &Floats, colors: &Floats, uvs: &[Floats]) -> Vec<LocalVertex> {
    (0..count)
        .map(|i| {
            let mut v = LocalVertex {
                position: [pos[i * 3], pos[i * 3 + 1], pos[i * 3 + 2]],
                tangent_x: [0.0, 0.0, 0.0, 1.0],
                normal: [0.0, 0.0, 1.0],
                color: [255; 4],
                uvs: [[0.0; 2]; 4],
            };
            if let Some((n, _)) = &normals {
                v.normal = [n[i * 3], n[i * 3 + 1], n[i * 3 + 2]];
            }
            if let Some((t, _)) = &tangents {
                v.tangent_x = [t[i * 4], t[i * 4 + 1], t[i * 4 + 2], if t[i * 4 + 3] < 0.0 { -1.0 } else { 1.0 }];
            }
            if let Some((c, n)) = &colors {
                let ch = |k: usize| (c[i * n + k].clamp(0.0, 1.0) * 255.0).round() as u8;
                v.color = [ch(0), ch(1), ch(2), if *n == 4 { ch(3) } else { 255 }];
            }
            for (set, uv) in uvs.iter().enumerate() {
                if let Some((u, _)) = uv {
                    v.uvs[set] = [u[i * 2], u[i * 2 + 1]];
                }
            }
            v
        })
        .collect()
}

/// Flat normals: every corner its own vertex with its face's normal (and
/// its source vertex, from `origin`).
fn flat_normals(vertices: &[LocalVertex], indices: &[u32], origin: &[u32]) -> Welded {
    let mut flat = Vec::with_capacity(indices.len());
    let flat_origin = indices.iter().map(|&i| origin[i as usize]).collect();
    for t in indices.chunks_exact(3) {
        let p = |k: usize| Vec3::from(vertices[t[k] as usize].position);
        let n = (p(1) - p(0)).cross(p(2) - p(0)).normalize_or(Vec3::Z);
        for &i in t {
            let mut v = vertices[i as usize];
            v.normal = n.to_array();
            flat.push(v);
        }
    }
    let indices = (0..flat.len() as u32).collect();
    (flat, indices, flat_origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_and_fans_keep_their_winding() {
        assert_eq!(triangle_list(Mode::TriangleStrip, &[0, 1, 2, 3, 4], "").unwrap(), [0, 1, 2, 1, 3, 2, 2, 3, 4]);
        assert_eq!(triangle_list(Mode::TriangleFan, &[0, 1, 2, 3], "").unwrap(), [1, 2, 0, 2, 3, 0]);
        assert!(triangle_list(Mode::TriangleStrip, &[0, 1], "").unwrap().is_empty());
        assert!(matches!(triangle_list(Mode::Triangles, &[0, 1, 2, 3], "/x"), Err(GltfError::IndexCount { count: 4, .. })));
    }

    #[test]
    fn all_degenerate_triangles_get_no_tangents_and_no_panic() {
        let v = LocalVertex {
            position: [1.0, 2.0, 3.0],
            normal: [0.0, 0.0, 1.0],
            color: [255; 4],
            uvs: [[0.5; 2]; 4],
            tangent_x: [0.0, 0.0, 0.0, 1.0],
        };
        let mut w = v;
        w.uvs[0] = [1.0, 0.0];
        let (out, idx, _) = generate_tangents(&[v, w, v], &[0, 1, 2], 0, &[0, 1, 2]);
        assert_eq!((out.len(), idx), (3, vec![0, 1, 2]));
        assert!(out.iter().all(|v| v.tangent_x == [0.0, 0.0, 0.0, 1.0]));
    }

    #[test]
    fn generated_tangents_follow_u_with_the_binormal_up_the_image() {
        // A quad in XY facing +Z, U along +X, V (glTF: down the image) along -Y.
        let v = |x: f32, y: f32| LocalVertex {
            position: [x, y, 0.0],
            normal: [0.0, 0.0, 1.0],
            color: [255; 4],
            uvs: [[x, 1.0 - y], [0.0; 2], [0.0; 2], [0.0; 2]],
            tangent_x: [0.0; 4],
        };
        let verts = [v(0.0, 0.0), v(1.0, 0.0), v(1.0, 1.0), v(0.0, 1.0)];
        let (out, idx, origin) = generate_tangents(&verts, &[0, 1, 2, 0, 2, 3], 0, &[0, 1, 2, 3]);
        assert_eq!(origin, [0, 1, 2, 3]);
        assert_eq!(out.len(), 4, "corners weld back");
        assert_eq!(idx.len(), 6);
        for v in &out {
            let t = v.tangent_x;
            assert!((t[0] - 1.0).abs() < 1e-4 && t[1].abs() < 1e-4 && t[3] == 1.0, "{t:?}");
        }
    }
}
