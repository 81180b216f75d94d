//! The `record` stage: every pass's draw list into secondaries (chunks
//! recorded on rayon's workers with `r.RHICmdList.ParallelRecord=1`, see
//! `crate::frame::submit`), then the primary: the shadow map (rendered when
//! there is a shadow view, otherwise cleared once), then scene depth (and
//! the velocity target with TAA) with every main view's depth prepass, then
//! scene color on that depth with their other passes, in list order. Each target is put in
//! the state its use needs by the frame-resource table
//! ([`crate::render_targets`]) from the accesses declared here. The
//! `post_process` stage follows (`crate::postprocess`).

use super::gpu_prepare::PreparedTargets;
use super::{FrameCommands, InitViews, PassDrawList, Uploaded};
use crate::error::Result;
use crate::frame::submit::{record_pass, PassBindings, PassResources};
use crate::mesh_pass::passes::PassTarget;
use crate::mesh_pass::{SCENE_COLOR_FORMAT, SCENE_DEPTH_FORMAT, VELOCITY_FORMAT};
use crate::render_targets::{
    scene_color_msaa, scene_depth_msaa, Access, RenderTargets, SCENE_COLOR, SCENE_DEPTH, SHADOW_ATLAS, SHADOW_MAP, VELOCITY,
};
use crate::scene::Scene;
use crate::view::ViewFamily;
use crate::view::ViewKind;
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
    /// Samples per pixel of scene color and depth (MSAA above 1).
    pub samples: u32,
    /// The depth prepass writes the velocity target (TAA).
    pub velocity: bool,
    /// The material table's GPU buffer (uploaded in `update_scene`).
    pub materials: BufferHandle,
    /// Each main view's debug lines (`crate::debug_lines`).
    pub debug: &'a super::debug_lines::DebugLinesFrame,
}

/// Records the frame's passes into `frame`.
pub(crate) fn record(
    frame: &mut Frame<'_>,
    targets: &mut RenderTargets,
    scene: &Scene,
    family: &ViewFamily,
    input: RecordInputs<'_, '_>,
) -> Result<()> {
    let recorded = record_secondaries(frame, scene, &input)?;
    let mut skies = record_skies(frame, scene, input.views, input.samples)?;
    // Debug lines go last, after every pass of their view (the sky's list
    // is executed at the end for views without translucency).
    let lines = record_debug_lines(frame, input.views, input.debug, input.samples)?;
    record_shadow_map(frame.cmd(), targets, input.views, input.lists, &recorded)?;
    record_shadow_atlas(frame.cmd(), targets, input.views, input.lists, &recorded)?;
    let main = MainTargets { samples: input.samples, velocity: input.velocity };
    record_scene_depth(frame.cmd(), targets, (family, main), input.lists, &recorded)?;
    skies.extend(lines.into_iter().map(|(view, secondary)| (view, secondary, Overlay::Lines)));
    record_scene_color(frame.cmd(), targets, (family, main), input.lists, (&recorded, skies))
}

/// A per-view secondary recorded outside the passes: the view, the
/// secondary, what it draws.
type ViewOverlay = (usize, SecondaryCommandBuffer, Overlay);

/// What a per-view secondary recorded outside the passes draws.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Overlay {
    /// The environment behind the scene: before the view's translucency.
    Sky,
    /// Debug lines: after everything of the frame.
    Lines,
}

/// Per main view with debug lines, a secondary that draws them
/// (`crate::debug_lines`) with the view's jittered view-projection.
fn record_debug_lines(
    frame: &Frame<'_>,
    views: &InitViews,
    debug: &super::debug_lines::DebugLinesFrame,
    samples: u32,
) -> Result<Vec<(usize, SecondaryCommandBuffer)>> {
    let Some(pipeline) = debug.pipeline else { return Ok(Vec::new()) };
    let layout = RenderingLayout::new(vec![SCENE_COLOR_FORMAT], Some(SCENE_DEPTH_FORMAT)).with_samples(samples);
    let mut out = Vec::with_capacity(debug.views.len());
    for lines in &debug.views {
        let view = &views.views[lines.view];
        let push = super::debug_lines::push_constants(views.temporal_of(lines.view).jittered(view.view_proj()));
        let (secondary, ()) = frame.record_secondary(&layout, |cmd| {
            cmd.set_viewport(view.viewport)?;
            cmd.set_scissor(view.viewport)?;
            cmd.bind_pipeline(pipeline)?;
            cmd.push_constants(0, bytemuck::bytes_of(&push))?;
            cmd.bind_vertex_buffers(0, &[(lines.buffer, lines.offset)])?;
            cmd.draw(lines.vertices, 1, 0, 0)
        })?;
        out.push((lines.view, secondary));
    }
    Ok(out)
}

/// Per main view, a secondary that draws the environment behind the scene
/// (`crate::environment`), when the scene's environment has a sky: one
/// triangle at the far plane where the depth is still clear.
fn record_skies(frame: &Frame<'_>, scene: &Scene, views: &InitViews, samples: u32) -> Result<Vec<ViewOverlay>> {
    let Some(sky) = scene.environment.sky(samples) else { return Ok(Vec::new()) };
    let layout = RenderingLayout::new(vec![SCENE_COLOR_FORMAT], Some(SCENE_DEPTH_FORMAT)).with_samples(samples);
    let mut out = Vec::new();
    for (i, view) in views.views.iter().enumerate().filter(|(_, v)| !v.kind.is_shadow()) {
        let r = view.viewport;
        // The source level whose texels match a pixel (perspective: the
        // angle a pixel spans at the centre; orthographic: the finest).
        let radians_per_pixel = if view.perspective { 2.0 / (view.projection.y_axis.y.abs() * r.height as f32) } else { 0.0 };
        let lod = (sky.texels_per_radian * radians_per_pixel).max(1.0).log2();
        let push = crate::environment::gpu::SkyPush {
            clip_to_world: views.temporal_of(i).jittered(view.view_proj()).inverse().to_cols_array_2d(),
            viewport: [r.x as f32, r.y as f32, r.width as f32, r.height as f32],
            intensity: sky.intensity,
            lod,
            _pad: [0.0; 2],
        };
        let (secondary, ()) = frame.record_secondary(&layout, |cmd| {
            cmd.set_viewport(r)?;
            cmd.set_scissor(r)?;
            cmd.bind_pipeline(sky.pipeline)?;
            cmd.bind_group_handle(0, sky.group)?;
            cmd.push_constants(0, bytemuck::bytes_of(&push))?;
            cmd.draw(3, 1, 0, 0)
        })?;
        out.push((i, secondary, Overlay::Sky));
    }
    Ok(out)
}

/// Each list's secondaries, in list order.
fn record_secondaries(frame: &Frame<'_>, scene: &Scene, input: &RecordInputs<'_, '_>) -> Result<Vec<Vec<SecondaryCommandBuffer>>> {
    let gpu_scene = scene.gpu_scene.buffer().expect("uploaded in update_scene");
    let materials = input.materials;
    let t = input.targets;
    let mut bind = PassBindings::new(
        frame,
        PassResources {
            uniforms: input.uploaded.view_uniforms,
            gpu_scene,
            materials,
            shadow_map: t.shadow_map,
            shadow_sampler: t.shadow_sampler,
            light_grid: input.uploaded.light_grid,
            shadow_atlas: t.shadow_atlas,
            shadow_tiles: input.uploaded.shadow_tiles,
            environment: scene.environment.bindings(),
        },
    );
    let main_layout = RenderingLayout::new(vec![SCENE_COLOR_FORMAT], Some(SCENE_DEPTH_FORMAT)).with_samples(input.samples);
    let velocity: &[Format] = if input.velocity { &[VELOCITY_FORMAT] } else { &[] };
    let depth_layout = RenderingLayout::new(velocity.to_vec(), Some(SCENE_DEPTH_FORMAT)).with_samples(input.samples);
    let shadow_layout = RenderingLayout::new(vec![], Some(SCENE_DEPTH_FORMAT));
    let mut recorded = Vec::with_capacity(input.lists.len());
    for l in input.lists {
        let layout = match l.pass.desc().target {
            PassTarget::ShadowMap => &shadow_layout,
            PassTarget::SceneDepth => &depth_layout,
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

/// The cascades' shadow pass: rendered when there are cascades; otherwise
/// the map is cleared once (the base pass always samples it).
fn record_shadow_map(
    cmd: &mut CommandList<'_>,
    targets: &mut RenderTargets,
    views: &InitViews,
    lists: &[PassDrawList],
    recorded: &[Vec<SecondaryCommandBuffer>],
) -> Result<()> {
    if !views.has_shadow() && targets.has_contents(SHADOW_MAP.name) {
        return Ok(());
    }
    let texture = targets.texture(SHADOW_MAP.name).expect("made in gpu_prepare");
    let (width, height) = targets.size(SHADOW_MAP.name).expect("made in gpu_prepare");
    targets.prepare(cmd, &[(SHADOW_MAP.name, Access::DepthWrite)])?;
    let cascade = |l: &PassDrawList| matches!(views.views[l.view].kind, ViewKind::ShadowCascade { .. });
    clear_and_draw_shadows(cmd, texture, Rect::from_size(width, height), (lists, recorded), cascade)?;
    targets.prepare(cmd, &[(SHADOW_MAP.name, Access::Sample)])
}

/// The shadow atlas's tiles rendered this frame (`crate::shadow_atlas`):
/// each cleared (the render area bounds the clear) and drawn by its view's
/// shadow lists; the other tiles keep their depth. A new atlas is cleared
/// whole first (the base pass samples it).
fn record_shadow_atlas(
    cmd: &mut CommandList<'_>,
    targets: &mut RenderTargets,
    views: &InitViews,
    lists: &[PassDrawList],
    recorded: &[Vec<SecondaryCommandBuffer>],
) -> Result<()> {
    let rendered: Vec<(usize, Rect)> =
        views.atlas.tiles.iter().zip(&views.atlas_views).filter_map(|(t, v)| v.map(|v| (v, t.view.viewport))).collect();
    let fresh = !targets.has_contents(SHADOW_ATLAS.name);
    if rendered.is_empty() && !fresh {
        return Ok(());
    }
    let texture = targets.texture(SHADOW_ATLAS.name).expect("made in gpu_prepare");
    let (width, height) = targets.size(SHADOW_ATLAS.name).expect("made in gpu_prepare");
    targets.prepare(cmd, &[(SHADOW_ATLAS.name, Access::DepthWrite)])?;
    let areas = fresh.then(|| (None, Rect::from_size(width, height))).into_iter().chain(rendered.into_iter().map(|(v, r)| (Some(v), r)));
    for (view, area) in areas {
        clear_and_draw_shadows(cmd, texture, area, (lists, recorded), |l| Some(l.view) == view)?;
    }
    targets.prepare(cmd, &[(SHADOW_ATLAS.name, Access::Sample)])
}

/// Clears `area` of the depth texture (the render area bounds the clear)
/// and draws into it the shadow lists `include` takes.
fn clear_and_draw_shadows(
    cmd: &mut CommandList<'_>,
    texture: TextureHandle,
    area: Rect,
    (lists, recorded): (&[PassDrawList], &[Vec<SecondaryCommandBuffer>]),
    include: impl Fn(&PassDrawList) -> bool,
) -> Result<()> {
    let depth = Some(DepthAttachment { texture, load: LoadOp::Clear(1.0), store: true, resolve: None });
    cmd.begin_rendering(&RenderingDesc { color: vec![], depth, area }, RenderingContents::Secondary)?;
    execute_into(cmd, PassTarget::ShadowMap, lists, recorded, include)?;
    cmd.end_rendering()?;
    Ok(())
}

/// How the main views' targets are drawn this frame.
#[derive(Clone, Copy)]
struct MainTargets {
    /// Samples per pixel of scene color and depth (MSAA above 1).
    samples: u32,
    /// The depth prepass writes the velocity target.
    velocity: bool,
}

/// The depth scene color's passes draw on: scene depth, or under MSAA
/// (`samples` above 1) the multisampled depth that resolves into it.
fn draw_depth(samples: u32) -> &'static str {
    if samples > 1 {
        scene_depth_msaa(samples).name
    } else {
        SCENE_DEPTH.name
    }
}

/// Scene depth (and, with TAA, the velocity target): cleared, then every
/// main view's scene-depth passes (the depth prepass), in a rendering of
/// their own; the scene-colour passes load the depth they leave.
fn record_scene_depth(
    cmd: &mut CommandList<'_>,
    targets: &mut RenderTargets,
    (family, main): (&ViewFamily, MainTargets),
    lists: &[PassDrawList],
    recorded: &[Vec<SecondaryCommandBuffer>],
) -> Result<()> {
    let depth_name = draw_depth(main.samples);
    targets.prepare(cmd, &[(depth_name, Access::DepthWrite)])?;
    let mut color = Vec::new();
    if main.velocity {
        targets.prepare(cmd, &[(VELOCITY.name, Access::ColorWrite)])?;
        let texture = targets.texture(VELOCITY.name).expect("made in gpu_prepare");
        color.push(ColorAttachment { texture, load: LoadOp::Clear([0.0; 4]), store: true, resolve: None });
    }
    let depth = targets.texture(depth_name).expect("made in gpu_prepare");
    let rendering = RenderingDesc {
        color,
        depth: Some(DepthAttachment { texture: depth, load: LoadOp::Clear(1.0), store: true, resolve: None }),
        area: Rect::from_size(family.width, family.height),
    };
    cmd.begin_rendering(&rendering, RenderingContents::Secondary)?;
    execute_into(cmd, PassTarget::SceneDepth, lists, recorded, |_| true)?;
    cmd.end_rendering()?;
    Ok(())
}

/// Scene color: cleared, then every main view's scene-colour passes on
/// the depth the depth prepass wrote, each view's sky (if any) after its
/// opaque passes and before its translucency.
/// Under MSAA (`samples` above 1) the passes draw into the multisampled
/// targets, which resolve into scene color (the samples' average) and
/// scene depth (the first sample) at the end.
fn record_scene_color(
    cmd: &mut CommandList<'_>,
    targets: &mut RenderTargets,
    (family, main): (&ViewFamily, MainTargets),
    lists: &[PassDrawList],
    (recorded, overlays): (&[Vec<SecondaryCommandBuffer>], Vec<ViewOverlay>),
) -> Result<()> {
    let samples = main.samples;
    let texture = |targets: &RenderTargets, name| targets.texture(name).expect("made in gpu_prepare");
    let (color, depth) = (texture(targets, SCENE_COLOR.name), texture(targets, SCENE_DEPTH.name));
    // Under MSAA the passes draw into the multisampled targets and scene
    // color and depth are their resolve targets.
    let msaa = samples > 1;
    let (draw_color, draw_depth) = if msaa {
        let (ms_color, ms_depth) = (scene_color_msaa(samples).name, scene_depth_msaa(samples).name);
        targets.prepare(cmd, &[(ms_color, Access::ColorWrite), (ms_depth, Access::DepthWrite)])?;
        (texture(targets, ms_color), texture(targets, ms_depth))
    } else {
        (color, depth)
    };
    targets.prepare(cmd, &[(SCENE_COLOR.name, Access::ColorWrite), (SCENE_DEPTH.name, Access::DepthWrite)])?;
    let clear = LoadOp::Clear(family.clear_color);
    let rendering = RenderingDesc {
        color: vec![ColorAttachment { texture: draw_color, load: clear, store: !msaa, resolve: msaa.then_some(color) }],
        depth: Some(DepthAttachment { texture: draw_depth, load: LoadOp::Load, store: !msaa, resolve: msaa.then_some(depth) }),
        area: Rect::from_size(family.width, family.height),
    };
    cmd.begin_rendering(&rendering, RenderingContents::Secondary)?;
    let mut overlays: Vec<Option<ViewOverlay>> = overlays.into_iter().map(Some).collect();
    // Executes the overlays of `kind` (of `view`, or of every view left).
    let mut draw = |cmd: &mut CommandList<'_>, kind: Overlay, view: Option<usize>| -> Result<()> {
        let of = |o: &Option<ViewOverlay>| o.as_ref().is_some_and(|(v, _, k)| *k == kind && view.is_none_or(|view| *v == view));
        for overlay in overlays.iter_mut().filter(|o| of(o)) {
            if let Some((_, secondary, _)) = overlay.take() {
                cmd.execute_secondaries(std::slice::from_ref(&secondary))?;
            }
        }
        Ok(())
    };
    for (l, secs) in lists.iter().zip(recorded) {
        if l.pass.desc().target != PassTarget::SceneColor {
            continue;
        }
        if l.pass == crate::MeshPass::Translucency {
            draw(cmd, Overlay::Sky, Some(l.view))?;
        }
        cmd.execute_secondaries(secs)?;
    }
    // The views without a translucency list, then every view's lines.
    draw(cmd, Overlay::Sky, None)?;
    draw(cmd, Overlay::Lines, None)?;
    cmd.end_rendering()?;
    Ok(())
}

/// Executes, in list order, the secondaries of the lists whose pass
/// renders into `target` and that `include` takes.
fn execute_into(
    cmd: &mut CommandList<'_>,
    target: PassTarget,
    lists: &[PassDrawList],
    recorded: &[Vec<SecondaryCommandBuffer>],
    include: impl Fn(&PassDrawList) -> bool,
) -> Result<()> {
    for (l, secs) in lists.iter().zip(recorded) {
        if l.pass.desc().target == target && include(l) {
            cmd.execute_secondaries(secs)?;
        }
    }
    Ok(())
}
