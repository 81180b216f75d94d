//! A small, reusable instanced-quad renderer used by rhi-vulkan's tests,
//! benchmark and example and by the `hello` sample: it exercises vertex
//! streams (per vertex and per instance), push constants, pipelines and both
//! recording paths. It lives here, not in the RHI's public API, because it
//! is a test fixture built on that API (issue 19).

use rhi_vulkan::*;

/// WGSL of the quad grid (also validated by `cargo xtask shaders`).
pub const QUAD_GRID_WGSL: &str = include_str!("../shaders/quad_grid.wgsl");

/// GPU resources for drawing a grid of colored quads.
pub struct QuadGrid {
    /// The pipeline the quads are drawn with.
    pub pipeline: PipelineHandle,
    /// The per-vertex stream: one quad's corners.
    pub corners: BufferHandle,
    /// The per-instance stream: each quad's position and colour.
    pub instances: BufferHandle,
    /// Quads in the grid.
    pub instance_count: u32,
    /// Half-size of one quad in clip space.
    pub scale: [f32; 2],
}

fn bytes_of_f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

impl QuadGrid {
    /// The grid's pipeline for `shader` (a module of [`QUAD_GRID_WGSL`]): two
    /// vertex streams, a quad's corners per vertex and each quad's offset and
    /// colour per instance.
    pub fn pipeline_desc(shader: ShaderHandle, color_format: Format) -> GraphicsPipelineDesc {
        GraphicsPipelineDesc {
            vertex_buffers: vec![
                VertexBufferLayout {
                    stride: 8,
                    step_mode: VertexStepMode::Vertex,
                    attributes: vec![VertexAttribute { location: 0, format: VertexFormat::Float32x2, offset: 0 }],
                },
                VertexBufferLayout {
                    stride: 24,
                    step_mode: VertexStepMode::Instance,
                    attributes: vec![
                        VertexAttribute { location: 1, format: VertexFormat::Float32x2, offset: 0 },
                        VertexAttribute { location: 2, format: VertexFormat::Float32x4, offset: 8 },
                    ],
                },
            ],
            ..GraphicsPipelineDesc::color(shader, color_format)
        }
    }

    /// A `cols` x `rows` grid covering clip space, colored by position.
    pub fn new(device: &Device, color_format: Format, cols: u32, rows: u32) -> Result<Self> {
        for (what, value) in [("columns", cols), ("rows", rows)] {
            if value == 0 {
                return Err(RhiError::OutOfLimits { what, resource: "the quad grid".into(), value: 0, min: 1, max: u64::from(u32::MAX) });
            }
        }
        let shader = device.create_shader("quad_grid.wgsl", QUAD_GRID_WGSL)?;
        let pipeline = device.create_graphics_pipeline(&Self::pipeline_desc(shader, color_format))?;
        // Two triangles, six vertices.
        let corners: [f32; 12] = [-1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0];
        let corners =
            device.create_buffer_init(&BufferDesc::gpu_only("quad corners", 48, BufferUsage::VERTEX), &bytes_of_f32s(&corners))?;
        let mut data = Vec::with_capacity((cols * rows) as usize * 6);
        for y in 0..rows {
            for x in 0..cols {
                let (u, v) = ((x as f32 + 0.5) / cols as f32, (y as f32 + 0.5) / rows as f32);
                data.extend_from_slice(&[u * 2.0 - 1.0, v * 2.0 - 1.0, u, v, 1.0 - u, 1.0]);
            }
        }
        let instances = match device
            .create_buffer_init(&BufferDesc::gpu_only("quad instances", data.len() as u64 * 4, BufferUsage::VERTEX), &bytes_of_f32s(&data))
        {
            Ok(b) => b,
            Err(e) => {
                device.destroy_buffer(corners);
                return Err(e);
            }
        };
        Ok(Self { pipeline, corners, instances, instance_count: cols * rows, scale: [0.8 / cols as f32, 0.8 / rows as f32] })
    }

    /// Binds pipeline, streams and push constants and draws instances
    /// `first..first + count` in `draws` equal draw calls.
    pub fn record(&self, cmd: &mut CommandList<'_>, viewport: Rect, first: u32, count: u32, draws: u32) -> Result<()> {
        cmd.bind_pipeline(self.pipeline)?;
        cmd.set_viewport(viewport)?;
        cmd.set_scissor(viewport)?;
        cmd.bind_vertex_buffers(0, &[(self.corners, 0), (self.instances, 0)])?;
        let push = bytes_of_f32s(&[self.scale[0], self.scale[1], 0.0, 0.0]);
        cmd.push_constants(0, &push)?;
        let per_draw = count.div_ceil(draws.max(1));
        let mut i = first;
        while i < first + count {
            let n = per_draw.min(first + count - i);
            cmd.draw(6, n, 0, i)?;
            i += n;
        }
        Ok(())
    }

    /// Destroys the two buffers (the pipeline stays in the device's cache).
    pub fn destroy(self, device: &Device) {
        device.destroy_buffer(self.corners);
        device.destroy_buffer(self.instances);
    }
}
