//! The particle sprite vertex factory (UE's `FParticleSpriteVertexFactory`).
//!
//! A sprite is one instance of a unit quad: stream 0 holds the quad's four
//! corners (shared by every emitter, created once per proxy), stream 1 one
//! [`ParticleSpriteVertex`] per particle, stepped per instance. The vertex
//! shader (`shaders/sprite_vf.inc.wgsl`) expands each corner in world space
//! from the camera's right/up vectors in the view uniform, so one instanced
//! draw per emitter needs no per-vertex CPU work:
//!
//! ```text
//! stream 0 (vertex)   corner.xy                         8 B × 4
//! stream 1 (instance) position old_position size rotation color
//!                     relative_time sub_image alignment 64 B × particles
//! indices             0 1 2  0 2 3                      u32 × 6
//! ```
//!
//! Screen alignment (view plane, velocity, camera position) and the
//! sprite-sheet grid travel per instance in
//! [`ParticleSpriteVertex::alignment`] rather than selecting other
//! factories: an emitter's draw is uniform in them, and every alignment
//! shares one pipeline per material. Sub-UV: the shader turns
//! [`ParticleSpriteVertex::sub_image_index`] into the UVs of the particle's
//! sprite-sheet image (UV0) and of the next one (UV1), with the blend weight
//! in the material's custom float 2 ([`crate::SubUv`]); UV2 is always the
//! whole quad.
//!
//! Snapshot positions are in world space (a local-space emitter's are
//! carried there when the snapshot is built), so the factory ignores the
//! primitive's local-to-world (a component's proxy is added with the
//! component's world transform, which only places its bounds). The factory
//! reads its
//! primitive id from the draw's push constants
//! ([`VertexFactoryType::primitive_id_location`] is `None`), so the renderer
//! never merges two emitters' draws: each keeps its own instance buffer.

use renderer::VertexFactoryType;
use rhi_vulkan::{VertexAttribute, VertexBufferLayout, VertexFormat, VertexStepMode};

use crate::dynamic_data::ParticleSpriteVertex;

/// The sprite factory; use the [`SPRITE_VERTEX_FACTORY`] singleton.
#[derive(Debug)]
pub struct SpriteVertexFactory;

/// The particle sprite vertex factory.
pub static SPRITE_VERTEX_FACTORY: SpriteVertexFactory = SpriteVertexFactory;

/// The factory's WGSL (`VertexFactoryInput` and `vf_fetch`).
pub const SPRITE_VF_WGSL: &str = include_str!("../shaders/sprite_vf.inc.wgsl");

/// Stream 0: the unit quad's corners, counter-clockwise seen from the
/// camera (x along the sprite's right, y along its up).
pub const QUAD_CORNERS: [[f32; 2]; 4] = [[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]];

/// The quad's two triangles.
pub const QUAD_INDICES: [u32; 6] = [0, 1, 2, 0, 2, 3];

const STRIDE: u32 = std::mem::size_of::<ParticleSpriteVertex>() as u32;

impl VertexFactoryType for SpriteVertexFactory {
    fn name(&self) -> &'static str {
        "particle_sprite"
    }

    fn wgsl(&self) -> &'static str {
        SPRITE_VF_WGSL
    }

    fn streams(&self) -> Vec<VertexBufferLayout> {
        let attr = |location, format, offset| VertexAttribute { location, format, offset };
        vec![
            VertexBufferLayout { stride: 8, step_mode: VertexStepMode::Vertex, attributes: vec![attr(0, VertexFormat::Float32x2, 0)] },
            // Offsets follow `ParticleSpriteVertex` (checked in the tests).
            VertexBufferLayout {
                stride: STRIDE,
                step_mode: VertexStepMode::Instance,
                attributes: vec![
                    attr(1, VertexFormat::Float32x3, 0),  // position
                    attr(2, VertexFormat::Float32x3, 12), // old_position
                    attr(3, VertexFormat::Float32x2, 24), // size
                    attr(4, VertexFormat::Float32, 32),   // rotation
                    attr(5, VertexFormat::Float32x4, 36), // color
                    attr(6, VertexFormat::Float32x3, 52), // relative_time, sub_image_index, alignment
                ],
            },
        ]
    }

    fn primitive_id_location(&self) -> Option<u32> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn instance_attributes_match_the_vertex_struct() {
        let streams = SPRITE_VERTEX_FACTORY.streams();
        assert_eq!(streams.len(), 2);
        assert_eq!(streams[1].stride, 64);
        let offsets: Vec<u32> = streams[1].attributes.iter().map(|a| a.offset).collect();
        let expected = [
            offset_of!(ParticleSpriteVertex, position),
            offset_of!(ParticleSpriteVertex, old_position),
            offset_of!(ParticleSpriteVertex, size),
            offset_of!(ParticleSpriteVertex, rotation),
            offset_of!(ParticleSpriteVertex, color),
            offset_of!(ParticleSpriteVertex, relative_time),
        ];
        assert_eq!(offsets, expected.map(|o| o as u32));
        // The last attribute covers the struct's last three floats.
        assert_eq!(offset_of!(ParticleSpriteVertex, sub_image_index), 56);
        assert_eq!(offset_of!(ParticleSpriteVertex, alignment), 60);
        let last = streams[1].attributes.last().unwrap();
        assert_eq!(last.offset + last.format.size(), 64);
    }

    #[test]
    fn every_declared_location_is_in_the_wgsl_input() {
        for stream in SPRITE_VERTEX_FACTORY.streams() {
            for a in &stream.attributes {
                let decl = format!("@location({})", a.location);
                assert_eq!(SPRITE_VF_WGSL.matches(&decl).count(), 1, "{decl}");
            }
        }
        assert_eq!(SPRITE_VF_WGSL.matches("@location(").count(), 7);
    }

    /// Every pass shader the renderer composes with this factory compiles
    /// (with the default, the sprite and the sprite-sheet material), and
    /// its vertex inputs are exactly the streams' attributes: no device
    /// needed.
    #[test]
    fn composed_pass_shaders_compile_and_consume_every_attribute() {
        use renderer::mesh_pass::{PassPipelineKey, PipelineLibrary};
        use renderer::{BlendMode, MaterialShaderId, MeshPass, DEFAULT_MATERIAL_WGSL};
        let mut declared: Vec<u32> = SPRITE_VERTEX_FACTORY.streams().iter().flat_map(|s| s.attributes.iter().map(|a| a.location)).collect();
        declared.sort_unstable();
        let sheet = crate::materials::sprite_sheet_material(crate::BlendMode::Translucent, glam::Vec4::ONE, renderer::TextureId::WHITE);
        let sheet_wgsl = format!("{}\n{}", crate::materials::SPRITE_SHEET_MATERIAL_WGSL, sheet.layout().unwrap().accessors_wgsl());
        for material in [DEFAULT_MATERIAL_WGSL, crate::materials::SPRITE_MATERIAL_WGSL, &sheet_wgsl] {
            for pass in MeshPass::ALL {
                for blend in [BlendMode::Opaque, BlendMode::Masked, BlendMode::Translucent, BlendMode::Additive] {
                    let key = PassPipelineKey {
                        pass,
                        vertex_factory: SPRITE_VERTEX_FACTORY.name(),
                        material_shader: MaterialShaderId(0),
                        blend,
                        two_sided: true,
                        reverse_culling: false,
                        samples: 1,
                        velocity: false,
                        depth_write: false,
                        alpha_to_coverage: false,
                    };
                    // The constants a material's WGSL gets from the renderer's
                    // material system (default lit, the default mask clip).
                    let material = format!("{material}\nconst SHADING_MODEL: u32 = 0u;\nconst MATERIAL_MASK_CLIP: f32 = 0.5;\n");
                    let source = PipelineLibrary::compose(&key, &SPRITE_VERTEX_FACTORY, &material);
                    let compiled = rhi_vulkan::compile_wgsl("sprite test", &source).unwrap_or_else(|e| panic!("{pass:?} {blend:?}: {e}"));
                    let vs = compiled.entry_point("vs_main").expect("vertex entry point");
                    let mut used: Vec<u32> = vs.vertex_inputs.iter().map(|v| v.location).collect();
                    used.sort_unstable();
                    assert_eq!(used, declared, "{pass:?} {blend:?}");
                }
            }
        }
    }
}
