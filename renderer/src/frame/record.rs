//! The `record` stage: every pass's draw list into secondaries (chunks
//! recorded on rayon's workers with `r.RHICmdList.ParallelRecord=1`, see
//! `crate::frame::submit`), then the primary: the shadow map (rendered when there is
//! a shadow view, otherwise cleared once), then scene color and depth with
//! every main view's passes in list order, then the tone-mapping pass from
//! the HDR scene color into the 8-bit output (`crate::postprocess`).

use super::gpu_prepare::PreparedTargets;
use super::{FrameCommands, InitViews, PassDrawList, Uploaded};
use crate::error::Result;
use crate::frame::scene_renderer::SceneRenderer;
use crate::frame::submit::{record_pass, PassBindings, PassResources};
use crate::mesh_pass::passes::PassTarget;
use crate::mesh_pass::{SCENE_COLOR_FORMAT, SCENE_DEPTH_FORMAT};
use crate::postprocess::tonemap::TonemapSettings;
use crate::scene::Scene;
use crate::view::ViewFamily;
use rhi_vulkan::*;

/// What the record stage records from.
pub(crate) struct RecordInputs<'a, 's> {
    pub views: &'a InitViews,
    pub commands: &'a FrameCommands<'s>,
    pub lists: &'a [PassDrawList],
    pub uploaded: &'a Uploaded,
    pub targets: PreparedTargets,
    /// `r.RHICmdList.ParallelRecord`.
    pub parallel: bool,
    /// `r.Tonemapper` and `r.Exposure`.
    pub tonemap: TonemapSettings,
}

impl SceneRenderer {
    /// Records the frame's passes into `frame`.
    pub(crate) fn record_stage(
        &mut self,
        frame: &mut Frame<'_>,
        scene: &Scene,
        family: &ViewFamily,
        input: RecordInputs<'_, '_>,
    ) -> Result<()> {
        let recorded = self.record_secondaries(frame, scene, &input)?;
        self.record_shadow_map(frame.cmd(), input.views.has_shadow(), input.lists, &recorded)?;
        self.record_scene_color(frame.cmd(), family, input.lists, &recorded)?;
        let views = &input.views.views;
        let wireframe: Vec<Rect> = input.views.main_views().map(|i| &views[i]).filter(|v| v.wireframe).map(|v| v.viewport).collect();
        self.record_tonemap(frame, input.tonemap, &wireframe)
    }

    /// The tone-mapping pass: scene color (left `ShaderRead`) into the
    /// output (left `ColorAttachment`); `as_drawn` (the wireframe views) is
    /// not tone mapped.
    fn record_tonemap(&mut self, frame: &mut Frame<'_>, settings: TonemapSettings, as_drawn: &[Rect]) -> Result<()> {
        let targets = self.targets.as_mut().expect("targets");
        let device = frame.device();
        self.tonemapper.record(
            device,
            frame,
            targets.color,
            targets.output,
            targets.output_state,
            targets.width,
            targets.height,
            settings,
            as_drawn,
        )?;
        targets.color_state = TextureState::ShaderRead;
        targets.output_state = TextureState::ColorAttachment;
        Ok(())
    }

    /// Each list's secondaries, in list order.
    fn record_secondaries(
        &self,
        frame: &Frame<'_>,
        scene: &Scene,
        input: &RecordInputs<'_, '_>,
    ) -> Result<Vec<Vec<SecondaryCommandBuffer>>> {
        let gpu_scene = scene.gpu_scene.buffer().expect("uploaded in update_scene");
        let materials = self.materials.expect("uploaded in update_scene").0;
        let t = input.targets;
        let mut bind = PassBindings::new(
            frame,
            PassResources {
                uniforms: input.uploaded.view_uniforms,
                gpu_scene,
                materials,
                shadow_map: t.shadow_map,
                shadow_sampler: t.shadow_sampler,
            },
        );
        let main_layout = RenderingLayout { color_formats: vec![SCENE_COLOR_FORMAT], depth_format: Some(SCENE_DEPTH_FORMAT) };
        let shadow_layout = RenderingLayout { color_formats: vec![], depth_format: Some(SCENE_DEPTH_FORMAT) };
        let mut recorded = Vec::with_capacity(input.lists.len());
        for l in input.lists {
            let layout = match l.pass.desc().target {
                PassTarget::ShadowMap => &shadow_layout,
                PassTarget::SceneColor => &main_layout,
            };
            recorded.push(record_pass(
                frame,
                layout,
                l,
                &input.views.views[l.view],
                input.commands,
                input.uploaded.id_buffer,
                &mut bind,
                input.parallel,
            )?);
        }
        Ok(recorded)
    }

    /// The shadow pass: rendered when there is a shadow view; otherwise
    /// the map is cleared once (the base pass always samples it).
    fn record_shadow_map(
        &mut self,
        cmd: &mut CommandList<'_>,
        has_shadow: bool,
        lists: &[PassDrawList],
        recorded: &[Vec<SecondaryCommandBuffer>],
    ) -> Result<()> {
        let shadow = self.shadow.as_mut().expect("shadow map");
        if !has_shadow && shadow.initialized {
            return Ok(());
        }
        let before = if shadow.initialized { TextureState::ShaderRead } else { TextureState::Undefined };
        cmd.texture_barrier(shadow.texture, before, TextureState::DepthAttachment)?;
        cmd.begin_rendering(
            &RenderingDesc {
                color: vec![],
                depth: Some(DepthAttachment { texture: shadow.texture, load: LoadOp::Clear(1.0), store: true }),
                area: Rect::from_size(shadow.size, shadow.size),
            },
            RenderingContents::Secondary,
        )?;
        for (l, secs) in lists.iter().zip(recorded) {
            if l.pass.desc().target == PassTarget::ShadowMap {
                cmd.execute_secondaries(secs)?;
            }
        }
        cmd.end_rendering()?;
        cmd.texture_barrier(shadow.texture, TextureState::DepthAttachment, TextureState::ShaderRead)?;
        shadow.initialized = true;
        Ok(())
    }

    /// Scene color and depth: cleared, then every main view's passes.
    fn record_scene_color(
        &mut self,
        cmd: &mut CommandList<'_>,
        family: &ViewFamily,
        lists: &[PassDrawList],
        recorded: &[Vec<SecondaryCommandBuffer>],
    ) -> Result<()> {
        let targets = self.targets.as_mut().expect("targets");
        cmd.texture_barrier(targets.color, targets.color_state, TextureState::ColorAttachment)?;
        cmd.texture_barrier(targets.depth, TextureState::Undefined, TextureState::DepthAttachment)?;
        targets.color_state = TextureState::ColorAttachment;
        cmd.begin_rendering(
            &RenderingDesc {
                color: vec![ColorAttachment { texture: targets.color, load: LoadOp::Clear(family.clear_color), store: true }],
                depth: Some(DepthAttachment { texture: targets.depth, load: LoadOp::Clear(1.0), store: false }),
                area: Rect::from_size(family.width, family.height),
            },
            RenderingContents::Secondary,
        )?;
        for (l, secs) in lists.iter().zip(recorded) {
            if l.pass.desc().target == PassTarget::SceneColor {
                cmd.execute_secondaries(secs)?;
            }
        }
        cmd.end_rendering()?;
        Ok(())
    }
}
