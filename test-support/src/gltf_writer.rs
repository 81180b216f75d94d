//! A small glTF 2.0 writer for tests: the JSON as a `serde_json::Value`
//! (tests edit it freely, e.g. to break a file on purpose) and one binary
//! buffer, written as a `.gltf` with a data URI, a `.gltf` beside an
//! external `.bin`, or a `.glb`.

use serde_json::{json, Map, Value};

/// glTF component types.
pub const BYTE: u32 = 5120;
pub const UNSIGNED_BYTE: u32 = 5121;
pub const SHORT: u32 = 5122;
pub const UNSIGNED_SHORT: u32 = 5123;
pub const UNSIGNED_INT: u32 = 5125;
pub const FLOAT: u32 = 5126;

/// A glTF document being built.
#[derive(Clone, Debug)]
pub struct GltfWriter {
    /// The document (`asset` and arrays as they are added).
    pub json: Value,
    /// Buffer 0's bytes.
    pub bin: Vec<u8>,
}

impl Default for GltfWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl GltfWriter {
    pub fn new() -> Self {
        Self { json: json!({ "asset": { "version": "2.0", "generator": "proxima test-support" } }), bin: Vec::new() }
    }

    /// Appends `value` to the top-level array `array` and returns its index.
    pub fn push(&mut self, array: &str, value: Value) -> usize {
        let obj = self.json.as_object_mut().expect("an object");
        let list = obj.entry(array).or_insert_with(|| Value::Array(Vec::new())).as_array_mut().expect("an array");
        list.push(value);
        list.len() - 1
    }

    /// Sets a top-level property (`scene`, `extensionsUsed`…).
    pub fn set(&mut self, key: &str, value: Value) {
        self.json.as_object_mut().expect("an object").insert(key.into(), value);
    }

    /// Appends `bytes` to the buffer (4-byte aligned) as a new buffer view.
    pub fn view(&mut self, bytes: &[u8], stride: Option<usize>) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut v = Map::new();
        v.insert("buffer".into(), json!(0));
        v.insert("byteOffset".into(), json!(self.bin.len()));
        v.insert("byteLength".into(), json!(bytes.len()));
        if let Some(s) = stride {
            v.insert("byteStride".into(), json!(s));
        }
        self.bin.extend_from_slice(bytes);
        self.push("bufferViews", Value::Object(v))
    }

    /// An accessor over `view`.
    pub fn accessor(&mut self, view: usize, component_type: u32, count: usize, ty: &str, normalized: bool) -> usize {
        let mut a = json!({ "bufferView": view, "componentType": component_type, "count": count, "type": ty });
        if normalized {
            a["normalized"] = json!(true);
        }
        self.push("accessors", a)
    }

    /// A float accessor of `ty` (`"VEC3"`…) over `data`.
    pub fn floats(&mut self, data: &[f32], ty: &str) -> usize {
        let n = components(ty);
        let view = self.view(&data.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<_>>(), None);
        self.accessor(view, FLOAT, data.len() / n, ty, false)
    }

    /// A `POSITION` accessor (with the `min`/`max` glTF requires).
    pub fn positions(&mut self, p: &[[f32; 3]]) -> usize {
        let flat: Vec<f32> = p.iter().flatten().copied().collect();
        let a = self.floats(&flat, "VEC3");
        self.set_min_max(a, p);
        a
    }

    /// Sets an accessor's `min`/`max` from positions.
    pub fn set_min_max(&mut self, accessor: usize, p: &[[f32; 3]]) {
        let (mut min, mut max) = ([f32::MAX; 3], [f32::MIN; 3]);
        for v in p {
            for k in 0..3 {
                min[k] = min[k].min(v[k]);
                max[k] = max[k].max(v[k]);
            }
        }
        let a = &mut self.json["accessors"][accessor];
        a["min"] = json!(min);
        a["max"] = json!(max);
    }

    /// An integer accessor (`component_type` one of the integer types) of
    /// `ty` over `values` (each converted to the component type).
    pub fn ints(&mut self, values: &[i64], component_type: u32, ty: &str, normalized: bool) -> usize {
        let bytes: Vec<u8> = values
            .iter()
            .flat_map(|&v| match component_type {
                BYTE | UNSIGNED_BYTE => vec![v as u8],
                SHORT | UNSIGNED_SHORT => (v as u16).to_le_bytes().to_vec(),
                _ => (v as u32).to_le_bytes().to_vec(),
            })
            .collect();
        // Vertex attributes' elements are 4-byte aligned: pad each with a stride.
        let n = components(ty);
        let elem = n * component_size(component_type);
        let (bytes, stride) = if !elem.is_multiple_of(4) && ty != "SCALAR" {
            let padded = elem.div_ceil(4) * 4;
            let mut out = Vec::new();
            for chunk in bytes.chunks(elem) {
                out.extend_from_slice(chunk);
                out.resize(out.len() + padded - elem, 0);
            }
            (out, Some(padded))
        } else {
            (bytes, None)
        };
        let view = self.view(&bytes, stride);
        self.accessor(view, component_type, values.len() / n, ty, normalized)
    }

    /// An index accessor of `component_type` (u8/u16/u32).
    pub fn indices(&mut self, idx: &[u32], component_type: u32) -> usize {
        let values: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
        self.ints(&values, component_type, "SCALAR", false)
    }

    /// A PNG image stored in the buffer; returns the image index.
    pub fn image_png(&mut self, width: u32, height: u32, rgba: &[u8]) -> usize {
        let png = encode_png(width, height, rgba);
        let view = self.view(&png, None);
        self.push("images", json!({ "bufferView": view, "mimeType": "image/png" }))
    }

    /// A texture of `image` with a new sampler (`wrap_s`, `wrap_t`, `mag`, `min` as glTF numbers).
    pub fn texture(&mut self, image: usize, sampler: Value) -> usize {
        let s = self.push("samplers", sampler);
        self.push("textures", json!({ "source": image, "sampler": s }))
    }

    fn buffer_entry(&self, uri: Option<String>) -> Value {
        let mut b = json!({ "byteLength": self.bin.len() });
        if let Some(uri) = uri {
            b["uri"] = json!(uri);
        }
        b
    }

    fn with_buffer(&self, uri: Option<String>) -> Value {
        let mut j = self.json.clone();
        if !self.bin.is_empty() {
            j["buffers"] = json!([self.buffer_entry(uri)]);
        }
        j
    }

    /// A `.gltf` with the buffer as a base64 data URI.
    pub fn to_gltf(&self) -> Vec<u8> {
        let uri = format!("data:application/octet-stream;base64,{}", base64(&self.bin));
        serde_json::to_vec_pretty(&self.with_buffer(Some(uri))).expect("JSON")
    }

    /// A `.gltf` naming `bin_name` for its buffer, and the buffer's bytes.
    pub fn to_gltf_external(&self, bin_name: &str) -> (Vec<u8>, Vec<u8>) {
        (serde_json::to_vec_pretty(&self.with_buffer(Some(bin_name.into()))).expect("JSON"), self.bin.clone())
    }

    /// A `.glb`: the JSON chunk and the buffer as its BIN chunk.
    pub fn to_glb(&self) -> Vec<u8> {
        let mut json = serde_json::to_vec(&self.with_buffer(None)).expect("JSON");
        while !json.len().is_multiple_of(4) {
            json.push(b' ');
        }
        let mut bin = self.bin.clone();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let total = 12 + 8 + json.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json);
        if !bin.is_empty() {
            out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
            out.extend_from_slice(b"BIN\0");
            out.extend_from_slice(&bin);
        }
        out
    }
}

fn components(ty: &str) -> usize {
    match ty {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" | "MAT2" => 4,
        "MAT3" => 9,
        _ => 16,
    }
}

fn component_size(component_type: u32) -> usize {
    match component_type {
        BYTE | UNSIGNED_BYTE => 1,
        SHORT | UNSIGNED_SHORT => 2,
        _ => 4,
    }
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// An RGBA8 PNG's bytes.
pub fn encode_png(width: u32, height: u32, rgba: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        enc.write_header().and_then(|mut w| w.write_image_data(rgba)).expect("PNG encoding");
    }
    out
}

/// A document of `meshes` unit quads side by side along +X, each a node of
/// the default scene with positions, UVs and indices, and `images` PNG
/// textures with a material each (quad `m` uses material `m % images`;
/// none without images): what the async-load and level tests load.
pub fn textured_quads(meshes: usize, images: usize) -> GltfWriter {
    let mut w = GltfWriter::new();
    for i in 0..images {
        let rgba: Vec<u8> = (0..32 * 32).flat_map(|p| [(p * 7 + i * 40) as u8, (p / 3) as u8, 200, 255]).collect();
        let image = w.image_png(32, 32, &rgba);
        let t = w.texture(image, json!({}));
        w.push("materials", json!({ "pbrMetallicRoughness": { "baseColorTexture": { "index": t } } }));
    }
    let mut nodes = Vec::new();
    for m in 0..meshes {
        let o = m as f32;
        let p = w.positions(&[[o, 0.0, 0.0], [o + 1.0, 0.0, 0.0], [o, 1.0, 0.0], [o + 1.0, 1.0, 0.0]]);
        let uv = w.floats(&[0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0], "VEC2");
        let i = w.indices(&[0, 1, 2, 2, 1, 3], UNSIGNED_SHORT);
        let mut prim = json!({ "attributes": { "POSITION": p, "TEXCOORD_0": uv }, "indices": i });
        if images > 0 {
            prim["material"] = json!(m % images);
        }
        let mesh = w.push("meshes", json!({ "primitives": [prim] }));
        nodes.push(w.push("nodes", json!({ "mesh": mesh })));
    }
    w.push("scenes", json!({ "nodes": nodes }));
    w.set("scene", json!(0));
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b"hello"), "aGVsbG8=");
        assert_eq!(base64(b"hi"), "aGk=");
        assert_eq!(base64(b"abc"), "YWJj");
    }

    #[test]
    fn a_glb_has_its_header_and_chunks() {
        let mut w = GltfWriter::new();
        w.positions(&[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        let glb = w.to_glb();
        assert_eq!(&glb[..4], b"glTF");
        assert_eq!(u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize, glb.len());
        assert_eq!(glb.len() % 4, 0);
    }
}
