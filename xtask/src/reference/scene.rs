//! The scene a reference is rendered with: the `gltf` sample's
//! `--reference-scene` JSON ([`Scene`]) and the model's JSON with that
//! camera and sun added ([`inject_scene`], [`with_scene`]; a `.glb` rebuilt
//! around it).

use serde_json::{json, Value};

/// The camera and the sun, in glTF's axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    pub eye: [f64; 3],
    pub target: [f64; 3],
    pub up: [f64; 3],
    pub yfov: f64,
    pub aspect: f64,
    pub znear: f64,
    pub zfar: f64,
    /// The direction the light travels.
    pub sun_direction: [f64; 3],
    pub sun_color: [f64; 3],
    pub sun_intensity: f64,
    /// The glTF scene shown (`None`: the file's default).
    pub scene: Option<usize>,
}

impl Scene {
    pub fn from_json(v: &Value) -> std::result::Result<Scene, String> {
        let num = |v: &Value, what: &str| v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| format!("{what}: not a number"));
        let vec3 = |v: &Value, what: &str| -> std::result::Result<[f64; 3], String> {
            let a = v.as_array().filter(|a| a.len() == 3).ok_or_else(|| format!("{what}: not 3 numbers"))?;
            Ok([num(&a[0], what)?, num(&a[1], what)?, num(&a[2], what)?])
        };
        let c = &v["camera"];
        let s = &v["sun"];
        Ok(Scene {
            eye: vec3(&c["eye"], "camera.eye")?,
            target: vec3(&c["target"], "camera.target")?,
            up: vec3(&c["up"], "camera.up")?,
            yfov: num(&c["yfov"], "camera.yfov")?,
            aspect: num(&c["aspect"], "camera.aspect")?,
            znear: num(&c["znear"], "camera.znear")?,
            zfar: num(&c["zfar"], "camera.zfar")?,
            sun_direction: vec3(&s["direction"], "sun.direction")?,
            sun_color: vec3(&s["color"], "sun.color")?,
            sun_intensity: num(&s["intensity"], "sun.intensity")?,
            scene: v["scene"].as_u64().map(|n| n as usize),
        })
    }
}

type V3 = [f64; 3];

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn normalize(a: V3) -> Option<V3> {
    let len = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    (len > 1e-12 && len.is_finite()).then(|| [a[0] / len, a[1] / len, a[2] / len])
}

fn neg(a: V3) -> V3 {
    [-a[0], -a[1], -a[2]]
}

/// The unit quaternion `[x, y, z, w]` of the rotation whose matrix has
/// columns `x`, `y`, `z` (orthonormal, right-handed).
pub fn quat_from_cols(x: V3, y: V3, z: V3) -> [f64; 4] {
    // m[row][col]
    let m = [[x[0], y[0], z[0]], [x[1], y[1], z[1]], [x[2], y[2], z[2]]];
    let trace = m[0][0] + m[1][1] + m[2][2];
    let q = if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        [(m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s, 0.25 * s]
    } else if m[0][0] > m[1][1] && m[0][0] > m[2][2] {
        let s = (1.0 + m[0][0] - m[1][1] - m[2][2]).sqrt() * 2.0;
        [0.25 * s, (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s, (m[2][1] - m[1][2]) / s]
    } else if m[1][1] > m[2][2] {
        let s = (1.0 + m[1][1] - m[0][0] - m[2][2]).sqrt() * 2.0;
        [(m[0][1] + m[1][0]) / s, 0.25 * s, (m[1][2] + m[2][1]) / s, (m[0][2] - m[2][0]) / s]
    } else {
        let s = (1.0 + m[2][2] - m[0][0] - m[1][1]).sqrt() * 2.0;
        [(m[0][2] + m[2][0]) / s, (m[1][2] + m[2][1]) / s, 0.25 * s, (m[1][0] - m[0][1]) / s]
    };
    let len = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    q.map(|c| c / len)
}

/// A glTF node rotation that makes the node's -Z point along `forward`
/// with +Y as close to `up` as it can be (a camera looks down its -Z; a
/// directional light shines along it).
pub fn look_rotation(forward: V3, up: V3) -> std::result::Result<[f64; 4], String> {
    let f = normalize(forward).ok_or("a zero direction")?;
    let right = normalize(cross(f, up)).or_else(|| normalize(cross(f, [0.0, 0.0, 1.0]))).ok_or("no right vector")?;
    let true_up = cross(right, f);
    Ok(quat_from_cols(right, true_up, neg(f)))
}

/// Adds `scene`'s camera and sun to a glTF document: a perspective camera
/// and its node, one directional `KHR_lights_punctual` light and its node
/// (the file's own lights are dropped from their nodes and the list), both
/// nodes roots of the scene shown. Returns (scene index, camera index).
pub fn inject_scene(doc: &mut Value, scene: &Scene) -> std::result::Result<(usize, usize), String> {
    let obj = doc.as_object_mut().ok_or("the glTF JSON is not an object")?;
    // The scene shown: --scene, else the default, else the first; a file
    // without scenes gets one of all its root nodes (as Proxima shows it).
    let node_count = obj.get("nodes").and_then(Value::as_array).map_or(0, Vec::len);
    let scene_index = match scene.scene.or_else(|| obj.get("scene").and_then(Value::as_u64).map(|s| s as usize)) {
        Some(s) => s,
        None => {
            let scenes = obj.entry("scenes").or_insert_with(|| json!([]));
            if scenes.as_array().is_none_or(Vec::is_empty) {
                let mut is_child = vec![false; node_count];
                for node in obj.get("nodes").and_then(Value::as_array).into_iter().flatten() {
                    for c in node.get("children").and_then(Value::as_array).into_iter().flatten() {
                        if let Some(c) = c.as_u64().and_then(|c| is_child.get_mut(c as usize)) {
                            *c = true;
                        }
                    }
                }
                let roots: Vec<usize> = (0..node_count).filter(|&n| !is_child[n]).collect();
                obj.insert("scenes".into(), json!([{ "nodes": roots }]));
            }
            0
        }
    };
    // No light but ours.
    if let Some(nodes) = obj.get_mut("nodes").and_then(Value::as_array_mut) {
        for node in nodes {
            if let Some(ext) = node.get_mut("extensions").and_then(Value::as_object_mut) {
                ext.remove("KHR_lights_punctual");
            }
        }
    }
    let color = scene.sun_color;
    let light = json!({ "type": "directional", "name": "proxima-reference-sun", "color": color, "intensity": scene.sun_intensity });
    let extensions = obj.entry("extensions").or_insert_with(|| json!({}));
    extensions.as_object_mut().ok_or("extensions is not an object")?.insert("KHR_lights_punctual".into(), json!({ "lights": [light] }));
    let used = obj.entry("extensionsUsed").or_insert_with(|| json!([]));
    let used = used.as_array_mut().ok_or("extensionsUsed is not an array")?;
    if !used.iter().any(|e| e == "KHR_lights_punctual") {
        used.push(json!("KHR_lights_punctual"));
    }

    let cameras = obj.entry("cameras").or_insert_with(|| json!([]));
    let cameras = cameras.as_array_mut().ok_or("cameras is not an array")?;
    let camera_index = cameras.len();
    cameras.push(json!({
        "type": "perspective",
        "name": "proxima-reference-camera",
        "perspective": { "yfov": scene.yfov, "aspectRatio": scene.aspect, "znear": scene.znear, "zfar": scene.zfar },
    }));
    let camera_rotation = look_rotation(sub(scene.target, scene.eye), scene.up).map_err(|e| format!("the camera: {e}"))?;
    let sun_rotation = look_rotation(scene.sun_direction, [0.0, 1.0, 0.0]).map_err(|e| format!("the sun: {e}"))?;
    let nodes = obj.entry("nodes").or_insert_with(|| json!([]));
    let nodes = nodes.as_array_mut().ok_or("nodes is not an array")?;
    let camera_node = nodes.len();
    nodes
        .push(json!({ "name": "proxima-reference-camera", "camera": camera_index, "translation": scene.eye, "rotation": camera_rotation }));
    nodes.push(
        json!({ "name": "proxima-reference-sun", "rotation": sun_rotation, "extensions": { "KHR_lights_punctual": { "light": 0 } } }),
    );
    let scenes = obj.get_mut("scenes").and_then(Value::as_array_mut).ok_or("the file has no scenes")?;
    let shown = scenes.get_mut(scene_index).ok_or_else(|| format!("no scene {scene_index}"))?;
    let roots = shown.as_object_mut().ok_or("a scene is not an object")?.entry("nodes").or_insert_with(|| json!([]));
    let roots = roots.as_array_mut().ok_or("a scene's nodes is not an array")?;
    roots.extend([json!(camera_node), json!(camera_node + 1)]);
    Ok((scene_index, camera_index))
}

/// The model file as served: its JSON with the scene added (a `.glb`
/// rebuilt around the new JSON chunk). Returns it, the scene shown and the
/// camera's index.
pub fn with_scene(bytes: &[u8], scene: &Scene) -> std::result::Result<(Vec<u8>, usize, usize), String> {
    if bytes.starts_with(b"glTF") {
        let (mut doc, bin) = parse_glb(bytes)?;
        let (s, c) = inject_scene(&mut doc, scene)?;
        Ok((write_glb(&doc, bin), s, c))
    } else {
        let mut doc: Value = serde_json::from_slice(bytes).map_err(|e| format!("not glTF JSON: {e}"))?;
        let (s, c) = inject_scene(&mut doc, scene)?;
        Ok((serde_json::to_vec(&doc).expect("JSON"), s, c))
    }
}

fn u32_at(bytes: &[u8], at: usize) -> std::result::Result<usize, String> {
    let b = bytes.get(at..at + 4).ok_or("a truncated GLB")?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

/// A GLB's JSON and its BIN chunk, if any.
fn parse_glb(bytes: &[u8]) -> std::result::Result<(Value, Option<&[u8]>), String> {
    let length = u32_at(bytes, 8)?.min(bytes.len());
    let (mut at, mut json, mut bin) = (12, None, None);
    while at + 8 <= length {
        let (len, kind) = (u32_at(bytes, at)?, u32_at(bytes, at + 4)?);
        let data = bytes.get(at + 8..at + 8 + len).ok_or("a GLB chunk runs past the end")?;
        match kind {
            0x4E4F_534A if json.is_none() => json = Some(serde_json::from_slice(data).map_err(|e| format!("the GLB's JSON: {e}"))?),
            0x004E_4942 if bin.is_none() => bin = Some(data),
            _ => {}
        }
        at += 8 + len;
    }
    Ok((json.ok_or("a GLB without a JSON chunk")?, bin))
}

fn write_glb(doc: &Value, bin: Option<&[u8]>) -> Vec<u8> {
    let mut json = serde_json::to_vec(doc).expect("JSON");
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let mut chunks = vec![(0x4E4F_534Au32, json)];
    if let Some(bin) = bin {
        let mut bin = bin.to_vec();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        chunks.push((0x004E_4942, bin));
    }
    let total = 12 + chunks.iter().map(|(_, d)| 8 + d.len()).sum::<usize>();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    for (kind, data) in chunks {
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&data);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene() -> Scene {
        Scene {
            eye: [0.0, 1.0, 3.0],
            target: [0.0, 1.0, 0.0],
            up: [0.0, 1.0, 0.0],
            yfov: 1.0,
            aspect: 16.0 / 9.0,
            znear: 0.1,
            zfar: 10.0,
            sun_direction: [0.0, -1.0, 0.0],
            sun_color: [1.0, 0.9, 0.8],
            sun_intensity: 3.0,
            scene: None,
        }
    }

    fn rotate(q: [f64; 4], v: V3) -> V3 {
        // v + 2 q.xyz × (q.xyz × v + w v)
        let u = [q[0], q[1], q[2]];
        let t = cross(u, v);
        let t = [t[0] + q[3] * v[0], t[1] + q[3] * v[1], t[2] + q[3] * v[2]];
        let c = cross(u, t);
        [v[0] + 2.0 * c[0], v[1] + 2.0 * c[1], v[2] + 2.0 * c[2]]
    }

    fn close(a: V3, b: V3) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn look_rotation_points_minus_z_along_forward_and_y_up() {
        for (forward, up) in [([0.0, 0.0, -1.0], [0.0, 1.0, 0.0]), ([1.0, -0.5, 0.3], [0.0, 1.0, 0.0]), ([0.0, -1.0, 0.0], [0.0, 1.0, 0.0])]
        {
            let q = look_rotation(forward, up).unwrap();
            let f = normalize(forward).unwrap();
            assert!(close(rotate(q, [0.0, 0.0, -1.0]), f), "{forward:?}");
            let y = rotate(q, [0.0, 1.0, 0.0]);
            assert!(y[0] * f[0] + y[1] * f[1] + y[2] * f[2] < 1e-9, "up is perpendicular");
            if forward[1] == 0.0 || forward[0] != 0.0 {
                assert!(y[1] > 0.0, "{forward:?}: up stays up");
            }
        }
        assert!(look_rotation([0.0; 3], [0.0, 1.0, 0.0]).is_err());
    }

    #[test]
    fn the_scene_is_injected_as_one_camera_and_one_light() {
        let mut doc = json!({
            "asset": { "version": "2.0" },
            "scene": 0,
            "scenes": [{ "nodes": [0] }],
            "nodes": [{ "mesh": 0, "children": [1] }, { "extensions": { "KHR_lights_punctual": { "light": 0 } } }],
            "cameras": [{ "type": "perspective", "perspective": { "yfov": 0.5, "znear": 0.1 } }],
            "extensions": { "KHR_lights_punctual": { "lights": [{ "type": "point" }] } },
        });
        let (s, c) = inject_scene(&mut doc, &scene()).unwrap();
        assert_eq!((s, c), (0, 1));
        assert_eq!(doc["scenes"][0]["nodes"], json!([0, 2, 3]));
        assert_eq!(doc["nodes"][1]["extensions"], json!({}), "the file's light is gone");
        let lights = doc["extensions"]["KHR_lights_punctual"]["lights"].as_array().unwrap();
        assert_eq!(lights.len(), 1);
        assert_eq!(lights[0]["type"], "directional");
        assert_eq!(lights[0]["intensity"], 3.0);
        assert_eq!(doc["extensionsUsed"], json!(["KHR_lights_punctual"]));
        assert_eq!(doc["nodes"][2]["camera"], 1);
        assert_eq!(doc["nodes"][2]["translation"], json!([0.0, 1.0, 3.0]));
        assert_eq!(doc["cameras"][1]["perspective"]["yfov"], 1.0);
        let q: Vec<f64> = doc["nodes"][3]["rotation"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert!(close(rotate([q[0], q[1], q[2], q[3]], [0.0, 0.0, -1.0]), [0.0, -1.0, 0.0]), "the sun shines down");
    }

    #[test]
    fn a_file_without_scenes_gets_one_of_its_roots() {
        let mut doc = json!({ "asset": { "version": "2.0" }, "nodes": [{ "children": [1] }, {}, {}] });
        let (s, c) = inject_scene(&mut doc, &scene()).unwrap();
        assert_eq!((s, c), (0, 0));
        assert_eq!(doc["scenes"][0]["nodes"], json!([0, 2, 3, 4]));
    }

    #[test]
    fn a_glb_is_rebuilt_around_the_new_json() {
        let doc = json!({ "asset": { "version": "2.0" }, "scenes": [{ "nodes": [] }], "scene": 0 });
        let bin = [1u8, 2, 3, 4, 5];
        let glb = write_glb(&doc, Some(&bin));
        assert_eq!(glb.len() % 4, 0);
        let (served, _, _) = with_scene(&glb, &scene()).unwrap();
        assert_eq!(u32_at(&served, 8).unwrap(), served.len());
        let (json, bin2) = parse_glb(&served).unwrap();
        assert_eq!(&bin2.unwrap()[..5], &bin);
        assert_eq!(json["cameras"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn scene_json_parses_and_rejects_what_is_missing() {
        let v = json!({
            "camera": { "eye": [0, 1, 3], "target": [0, 1, 0], "up": [0, 1, 0], "yfov": 1.0, "aspect": 1.7777777777777777, "znear": 0.1, "zfar": 10 },
            "sun": { "direction": [0, -1, 0], "color": [1.0, 0.9, 0.8], "intensity": 3 },
            "scene": null, "width": 16, "height": 9,
        });
        assert_eq!(Scene::from_json(&v).unwrap(), scene());
        let mut bad = v.clone();
        bad["camera"]["eye"] = json!([0, 1]);
        assert!(Scene::from_json(&bad).unwrap_err().contains("camera.eye"));
    }
}
