//! Post-processing: full-screen passes between the mesh passes and the
//! output, reading the HDR scene color. The mesh passes light in linear
//! HDR (`SCENE_COLOR_FORMAT`, RGBA16F) so that bright lights and emissive
//! materials keep their ratios past 1.0; the post chain turns that into
//! the 8-bit sRGB image that is read back and presented ([`OUTPUT_FORMAT`]).
//!
//! A post pass is data, as a mesh pass is: a [`PostPassDesc`] names its
//! shader, the format it writes and its push constants, and the chain is
//! an ordered list of them ([`BUILTIN_POST_PASSES`]; tone mapping is its
//! first member, FXAA its second); each says whether it runs in a frame
//! (FXAA when it is the anti-aliasing method). Before it, TAA ([`taa`],
//! when it is the method) resolves scene color into its output, which
//! bloom and the chain then read instead. The stage runs those that
//! do in order, ping-ponging between
//! intermediate targets of the frame-resource table
//! (`renderer::render_targets`, private): the first reads scene color, each next one
//! what the one before wrote, and the last writes the output. Adding bloom
//! or an anti-aliasing pass is adding a description and its shader.
//!
//! Every pass draws one full-screen triangle over the whole target, then
//! one over each wireframe view's rectangle with its wireframe push
//! constants: wireframe views are shown as drawn (UE's wireframe view mode
//! turns post-processing off), so a pass gives them constants that leave
//! their pixels as they are.

pub mod bloom;
pub mod exposure;
pub mod fxaa;
pub mod taa;
pub mod tonemap;

use crate::error::{RendererError, Result};
use crate::mesh_pass::SCENE_COLOR_FORMAT;
use crate::render_targets::{Access, Lifetime, RenderTargets, TargetDesc};
use crate::settings::FrameSettings;
use rhi_vulkan::*;

pub use fxaa::FXAA;
pub use tonemap::{OUTPUT_FORMAT, TONEMAP};

/// The chain's output: what is read back and presented.
pub const OUTPUT: TargetDesc = TargetDesc { name: "output", format: OUTPUT_FORMAT, lifetime: Lifetime::Temporal, samples: 1 };

/// The post passes every renderer has, in order (each runs when its
/// settings ask for it: tone mapping always, FXAA with `r.AntiAliasingMethod=1`).
pub static BUILTIN_POST_PASSES: &[&PostPassDesc] = &[&TONEMAP, &FXAA];

/// What a post pass writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PostOutput {
    /// Linear HDR, as scene color (`SCENE_COLOR_FORMAT`): a pass before tone mapping.
    Hdr,
    /// The display's 8-bit sRGB ([`OUTPUT_FORMAT`]): tone mapping and what follows it.
    Display,
}

impl PostOutput {
    /// The texel format written.
    pub fn format(self) -> Format {
        match self {
            PostOutput::Hdr => SCENE_COLOR_FORMAT,
            PostOutput::Display => OUTPUT_FORMAT,
        }
    }

    /// The chain's intermediate targets of this format, ping and pong.
    fn intermediates(self) -> [TargetDesc; 2] {
        let target = |name| TargetDesc { name, format: self.format(), lifetime: Lifetime::Frame, samples: 1 };
        match self {
            PostOutput::Hdr => [target("post hdr a"), target("post hdr b")],
            PostOutput::Display => [target("post display a"), target("post display b")],
        }
    }
}

/// Which pixels a post pass's draw covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PostRegion {
    /// The whole target: the views drawn lit.
    Lit,
    /// A wireframe view's rectangle, drawn over the lit draw: shown as drawn.
    Wireframe,
}

/// One post pass (see the module docs).
#[derive(Debug)]
pub struct PostPassDesc {
    /// The name in timestamps, pipeline labels and stats.
    pub name: &'static str,
    /// The WGSL: `vs_main` (one full-screen triangle from three vertices)
    /// and `fs_main`; group 0 binding 0 is its input, a `texture_2d<f32>`
    /// read with `textureLoad` at the fragment's position; 16 bytes of push
    /// constants.
    pub shader: &'static str,
    /// What it writes.
    pub output: PostOutput,
    /// Its push constants for a region, from the frame's settings.
    pub push_constants: fn(&FrameSettings, PostRegion) -> [u32; 4],
    /// GPU timestamp labels written before and after it.
    pub timestamps: [&'static str; 2],
    /// Whether it runs in a frame with these settings (an anti-aliasing
    /// pass only when its method is chosen).
    pub enabled: fn(&FrameSettings) -> bool,
    /// Whether group 0 binding 1 is a linear, clamp-to-edge sampler for its
    /// input (a pass that reads between texels, as FXAA does).
    pub sampler: bool,
    /// Whether group 0 binding 2 is the frame's exposure state (a
    /// `var<storage, read>` of `auto_exposure.wgsl`'s `ExposureState`:
    /// auto exposure's, or one never adapted when it is off).
    pub exposure: bool,
}

/// The post chain a renderer runs, its pipelines and the sampler of the
/// passes that filter (made on first use and kept).
pub(crate) struct PostProcessor {
    passes: Vec<&'static PostPassDesc>,
    pipelines: Vec<(&'static str, Format, PipelineHandle)>,
    sampler: Option<SamplerHandle>,
    /// Auto exposure's compute pipelines ([`exposure`]).
    exposure: Option<exposure::AutoExposurePipelines>,
    /// TAA's pipelines ([`taa`]).
    taa: Option<taa::TaaPipelines>,
}

impl Default for PostProcessor {
    /// The built-in chain.
    fn default() -> Self {
        Self { passes: BUILTIN_POST_PASSES.to_vec(), pipelines: Vec::new(), sampler: None, exposure: None, taa: None }
    }
}

/// What one run of the chain draws into.
pub(crate) struct PostFrame<'a> {
    /// The frame's settings (the passes' push constants).
    pub settings: &'a FrameSettings,
    /// The wireframe views' rectangles.
    pub wireframe: &'a [Rect],
    /// The family's size: every target of the chain's.
    pub width: u32,
    pub height: u32,
    /// The exposure state the passes that ask for it bind
    /// ([`PostPassDesc::exposure`]).
    pub exposure: BufferHandle,
    /// What the chain (and bloom) reads: scene color, or TAA's output.
    pub input: TargetDesc,
}

impl PostProcessor {
    /// The chain, in order.
    pub fn passes(&self) -> &[&'static PostPassDesc] {
        &self.passes
    }

    /// Sets the chain; an empty one, one whose last pass does not write the
    /// output's format, or one with an HDR pass after a display pass, is
    /// [`RendererError::InvalidPostChain`] and changes nothing. (A frame in
    /// which none of its display passes runs is that error too.)
    pub fn set_passes(&mut self, passes: Vec<&'static PostPassDesc>) -> Result<()> {
        check_chain(&passes)?;
        self.passes = passes;
        Ok(())
    }

    /// The passes that run with `settings`, in order.
    fn running(&self, settings: &FrameSettings) -> Vec<&'static PostPassDesc> {
        self.passes.iter().copied().filter(|p| (p.enabled)(settings)).collect()
    }

    /// The timestamp labels of the passes that run with `settings`, in
    /// order (for the frame's GPU times).
    pub fn timestamp_labels(&self, settings: &FrameSettings) -> Vec<[&'static str; 2]> {
        let bloom = settings.bloom.enabled.then_some(bloom::DOWNSAMPLE.timestamps);
        bloom.into_iter().chain(self.running(settings).iter().map(|p| p.timestamps)).collect()
    }

    fn pipeline(&mut self, device: &Device, pass: &PostPassDesc, format: Format) -> Result<PipelineHandle> {
        if let Some(&(_, _, p)) = self.pipelines.iter().find(|(n, f, _)| *n == pass.name && *f == format) {
            return Ok(p);
        }
        let pipeline = fullscreen_pipeline(device, pass.name, pass.shader, &[format])?;
        self.pipelines.push((pass.name, format, pipeline));
        Ok(pipeline)
    }

    /// Records the chain in order into `frame`'s primary: the first pass
    /// reads scene color, the last writes [`OUTPUT`], the ones between
    /// ping-pong through the table's intermediates.
    pub fn record(&mut self, frame: &mut Frame<'_>, targets: &mut RenderTargets, at: &PostFrame<'_>) -> Result<()> {
        let device = frame.device();
        let passes = self.running(at.settings);
        check_chain(&passes)?;
        let count = passes.len();
        let mut input = at.input;
        if at.settings.bloom.enabled {
            self.record_bloom(frame, targets, at)?;
            input = bloom::COMPOSITE;
        }
        for (i, pass) in passes.into_iter().enumerate() {
            let output = if i + 1 == count { OUTPUT } else { pass.output.intermediates()[i % 2] };
            targets.ensure(device, &output, at.width, at.height)?;
            let pipeline = self.pipeline(device, pass, output.format)?;
            let source = targets.texture(input.name).expect("made by the stage that wrote it");
            let mut entries = vec![(0, BindingResource::Texture(source))];
            if pass.sampler {
                entries.push((1, BindingResource::Sampler(self.sampler(device)?)));
            }
            if pass.exposure {
                entries.push((2, BindingResource::Buffer(at.exposure)));
            }
            let group = frame.create_bind_group(pipeline, 0, &entries)?;
            let stamps = frame.timestamps_left().is_some_and(|left| left >= 2);
            let cmd = frame.cmd();
            if stamps {
                cmd.write_timestamp(pass.timestamps[0])?;
            }
            targets.prepare(cmd, &[(input.name, Access::Sample), (output.name, Access::ColorWrite)])?;
            let texture = targets.texture(output.name).expect("ensured above");
            let lit = (pass.push_constants)(at.settings, PostRegion::Lit);
            let wireframe: Vec<(Rect, [u32; 4])> =
                at.wireframe.iter().map(|&r| (r, (pass.push_constants)(at.settings, PostRegion::Wireframe))).collect();
            draw_fullscreen(cmd, pipeline, &group, texture, (at.width, at.height), lit, &wireframe)?;
            if stamps {
                cmd.write_timestamp(pass.timestamps[1])?;
            }
            input = output;
        }
        Ok(())
    }

    /// The linear, clamping sampler of the passes that filter.
    fn sampler(&mut self, device: &Device) -> Result<SamplerHandle> {
        match self.sampler {
            Some(s) => Ok(s),
            None => Ok(*self.sampler.insert(device.create_sampler(&SamplerDesc::linear_clamp())?)),
        }
    }

    /// Records bloom ([`bloom`]): from scene color into [`bloom::COMPOSITE`].
    fn record_bloom(&mut self, frame: &mut Frame<'_>, targets: &mut RenderTargets, at: &PostFrame<'_>) -> Result<()> {
        let device = frame.device();
        let sampler = self.sampler(device)?;
        let stamps = frame.timestamps_left().is_some_and(|left| left >= 2);
        if stamps {
            frame.cmd().write_timestamp(bloom::DOWNSAMPLE.timestamps[0])?;
        }
        for d in bloom::draws(at.input.name, at.width, at.height, &at.settings.bloom) {
            targets.ensure(device, &d.output, d.size.0, d.size.1)?;
            let pipeline = self.pipeline(device, d.step, d.output.format)?;
            let texture = |name| targets.texture(name).expect("made by an earlier step or stage");
            let mut entries = vec![(0, BindingResource::Texture(texture(d.inputs[0]))), (1, BindingResource::Sampler(sampler))];
            if let Some(&second) = d.inputs.get(1) {
                entries.push((2, BindingResource::Texture(texture(second))));
            }
            let group = frame.create_bind_group(pipeline, 0, &entries)?;
            let cmd = frame.cmd();
            targets.prepare(cmd, &bloom::accesses(&d))?;
            let output = targets.texture(d.output.name).expect("ensured above");
            let push = d.push.map(f32::to_bits);
            // Wireframe views keep scene color as drawn (the composite's w = 0).
            let wireframe: Vec<(Rect, [u32; 4])> = match std::ptr::eq(d.step, &bloom::COMPOSITE_STEP) {
                true => at.wireframe.iter().map(|&r| (r, [push[0], push[1], push[2], 0])).collect(),
                false => Vec::new(),
            };
            draw_fullscreen(cmd, pipeline, &group, output, d.size, push, &wireframe)?;
        }
        if stamps {
            frame.cmd().write_timestamp(bloom::DOWNSAMPLE.timestamps[1])?;
        }
        Ok(())
    }

    /// Auto exposure's pipelines, made on first use.
    pub fn exposure_pipelines(&mut self, device: &Device) -> Result<&exposure::AutoExposurePipelines> {
        if self.exposure.is_none() {
            self.exposure = Some(exposure::AutoExposurePipelines::new(device)?);
        }
        Ok(self.exposure.as_ref().expect("made above"))
    }

    /// TAA's pipelines, made on first use.
    pub fn taa_pipelines(&mut self, device: &Device) -> Result<&taa::TaaPipelines> {
        if self.taa.is_none() {
            self.taa = Some(taa::TaaPipelines::new(device)?);
        }
        Ok(self.taa.as_ref().expect("made above"))
    }

    /// Destroys the pipelines and the sampler (the RHI frees them once no frame uses them).
    pub fn release(&mut self, device: &Device) {
        if let Some(t) = self.taa.take() {
            t.release(device);
        }
        if let Some(e) = self.exposure.take() {
            e.release(device);
        }
        for (_, _, p) in self.pipelines.drain(..) {
            device.destroy_pipeline(p);
        }
        if let Some(s) = self.sampler.take() {
            device.destroy_sampler(s);
        }
    }
}

/// A chain the stage can run: not empty, its last pass writes the display
/// format, no HDR pass after a display pass (so any of its passes that run
/// end in the display format once one display pass runs).
pub(crate) fn check_chain(passes: &[&PostPassDesc]) -> Result<()> {
    if let Some(w) = passes.windows(2).find(|w| w[0].output == PostOutput::Display && w[1].output == PostOutput::Hdr) {
        return Err(RendererError::InvalidPostChain(format!("the HDR pass {:?} follows the display pass {:?}", w[1].name, w[0].name)));
    }
    match passes.last() {
        None => Err(RendererError::InvalidPostChain("no post pass: at least tone mapping writes the output".into())),
        Some(last) if last.output != PostOutput::Display => Err(RendererError::InvalidPostChain(format!(
            "the last post pass, {:?}, writes {:?}; the output is {OUTPUT_FORMAT:?}",
            last.name, last.output
        ))),
        Some(_) => Ok(()),
    }
}

/// A pipeline of `wgsl` (`vs_main` drawing one full-screen triangle,
/// `fs_main`) writing `formats`, unblended, nothing culled: every post
/// pass's (the chain's, bloom's, TAA's). The shader module goes once the
/// pipeline exists.
pub(crate) fn fullscreen_pipeline(device: &Device, label: &str, wgsl: &str, formats: &[Format]) -> Result<PipelineHandle> {
    let shader = device.create_shader(label, wgsl)?;
    let desc = GraphicsPipelineDesc {
        primitive: PrimitiveState {
            topology: PrimitiveTopology::TriangleList,
            polygon_mode: PolygonMode::Fill,
            cull_mode: CullMode::None,
            front_face: FrontFace::CounterClockwise,
        },
        color_targets: formats.iter().map(|&format| ColorTargetState { format, blend: None }).collect(),
        ..GraphicsPipelineDesc::color(shader, formats[0])
    };
    let made = device.create_graphics_pipeline(&desc);
    // The module is needed only to create the pipeline.
    device.destroy_shader(shader);
    Ok(made?)
}

/// One full-screen draw into `output` (of `size`) with the push constants
/// `lit`, then one over each wireframe rectangle with its own.
fn draw_fullscreen(
    cmd: &mut CommandList<'_>,
    pipeline: PipelineHandle,
    group: &BindGroup,
    output: TextureHandle,
    size: (u32, u32),
    lit: [u32; 4],
    wireframe: &[(Rect, [u32; 4])],
) -> Result<()> {
    let area = Rect::from_size(size.0, size.1);
    let color = vec![ColorAttachment { texture: output, load: LoadOp::DontCare, store: true, resolve: None }];
    let draws: Vec<(Rect, &[u8])> =
        std::iter::once((area, bytemuck::cast_slice(&lit))).chain(wireframe.iter().map(|(r, p)| (*r, bytemuck::cast_slice(p)))).collect();
    draw_triangles(cmd, (color, area), (pipeline, group), &draws)
}

/// A rendering over `area` into `color` with `pipeline` and its group 0
/// bound, and per entry of `draws` one full-screen triangle over its
/// rectangle with its push constants (none when empty): every post pass's
/// draw (the chain, bloom, TAA).
pub(crate) fn draw_triangles(
    cmd: &mut CommandList<'_>,
    (color, area): (Vec<ColorAttachment>, Rect),
    (pipeline, group): (PipelineHandle, &BindGroup),
    draws: &[(Rect, &[u8])],
) -> Result<()> {
    cmd.begin_rendering(&RenderingDesc { color, depth: None, area }, RenderingContents::Inline)?;
    cmd.bind_pipeline(pipeline)?;
    cmd.bind_group(0, group)?;
    for &(rect, push) in draws {
        cmd.set_viewport(rect)?;
        cmd.set_scissor(rect)?;
        if !push.is_empty() {
            cmd.push_constants(0, push)?;
        }
        cmd.draw(3, 1, 0, 0)?;
    }
    cmd.end_rendering()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_chain_starts_with_tone_mapping_and_ends_in_the_display_format() {
        assert!(std::ptr::eq(BUILTIN_POST_PASSES[0], &TONEMAP));
        assert!(check_chain(BUILTIN_POST_PASSES).is_ok());
        static HDR: PostPassDesc = PostPassDesc {
            name: "hdr",
            shader: "",
            output: PostOutput::Hdr,
            push_constants: |_, _| [0; 4],
            timestamps: ["a", "b"],
            enabled: |_| true,
            sampler: false,
            exposure: false,
        };
        assert!(matches!(check_chain(&[&TONEMAP, &HDR]), Err(RendererError::InvalidPostChain(_))));
        assert!(matches!(check_chain(&[&TONEMAP, &HDR, &TONEMAP]), Err(RendererError::InvalidPostChain(_))));
        assert!(matches!(check_chain(&[]), Err(RendererError::InvalidPostChain(_))));
        assert!(check_chain(&[&HDR, &TONEMAP]).is_ok());
    }

    #[test]
    fn every_builtin_post_shader_compiles() {
        for pass in BUILTIN_POST_PASSES {
            rhi_vulkan::compile_wgsl(pass.name, pass.shader).unwrap_or_else(|e| panic!("{}: {e}", pass.name));
        }
    }
}
