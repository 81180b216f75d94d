//! The frame-resource table: the renderer's render targets by name, each
//! with its size, format, tracked state and lifetime.
//!
//! A pass does not transition a target itself: it declares how it uses each
//! target ([`Access`]: sampled, written as colour, written as depth), and
//! `RenderTargets::prepare` puts each one in the state that use needs,
//! with one barrier from the state the table tracked. So a target's state
//! lives in one place, whoever used it last (a mesh pass, a post pass, the
//! read-back copy), and adding a pass cannot leave a stale state behind.
//!
//! Targets are made on first use (`RenderTargets::ensure`) and kept;
//! one whose size or format changes is made again (the old texture is
//! destroyed once no frame in flight uses it). Their lifetime says what a
//! frame may expect of their contents:
//!
//! * [`Lifetime::Frame`]: written and read within a frame (scene color and
//!   depth, the post chain's intermediates); what a frame finds in it is
//!   not the previous frame's to use (`RenderTargets::has_contents` is
//!   false until the frame writes it).
//! * [`Lifetime::Temporal`]: kept across frames — history a later frame
//!   reads (TAA's), the shadow map the base pass binds in frames that do
//!   not render it, the output that is read back and presented after the
//!   frame; `RenderTargets::has_contents` says whether it was ever written.
//!
//! Either way the state is tracked across frames and every transition is
//! from the state of the target's last use, so a write is ordered after
//! the previous frame's reads and writes of the same texture; a write in
//! the state the target is already in still gets its barrier (write after
//! write), a read in the state it is in does not.

use crate::error::Result;
use rhi_vulkan::{CommandList, Device, Format, TextureDesc, TextureHandle, TextureState};

/// What a target's contents are kept for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lifetime {
    /// Only within the frame that writes them.
    Frame,
    /// Across frames (history, the output, maps bound before they are drawn).
    Temporal,
}

/// A named render target: what it holds and how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetDesc {
    /// The target's name in the table (and its debug label).
    pub name: &'static str,
    /// Its texel format (a depth format makes a depth target).
    pub format: Format,
    /// How long its contents live.
    pub lifetime: Lifetime,
    /// Samples per pixel: more than 1 makes a multisampled attachment
    /// (MSAA), drawn into and resolved, never sampled.
    pub samples: u32,
}

impl TargetDesc {
    fn texture_desc(&self, width: u32, height: u32) -> TextureDesc {
        if self.samples > 1 {
            TextureDesc::multisampled(self.name, width, height, self.format, self.samples)
        } else if self.format == Format::Depth32Float {
            TextureDesc::depth(self.name, width, height)
        } else {
            TextureDesc::render_target(self.name, width, height, self.format)
        }
    }
}

/// How a pass uses a target, and so the state it needs it in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Sampled by shaders.
    Sample,
    /// Written (and blended) as a colour attachment.
    ColorWrite,
    /// Tested and written as the depth attachment.
    DepthWrite,
    /// Read by a copy (a read-back).
    CopySource,
}

impl Access {
    /// The state the access needs.
    pub fn state(self) -> TextureState {
        match self {
            Access::Sample => TextureState::ShaderRead,
            Access::ColorWrite => TextureState::ColorAttachment,
            Access::DepthWrite => TextureState::DepthAttachment,
            Access::CopySource => TextureState::TransferSrc,
        }
    }

    fn writes(self) -> bool {
        matches!(self, Access::ColorWrite | Access::DepthWrite)
    }
}

/// One target of the table.
#[derive(Debug)]
struct Entry {
    desc: TargetDesc,
    texture: TextureHandle,
    width: u32,
    height: u32,
    state: TextureState,
    /// Written since it was made (a `Frame` target: since the frame began).
    has_contents: bool,
}

/// The table (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct RenderTargets {
    entries: Vec<Entry>,
}

impl RenderTargets {
    fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.desc.name == name)
    }

    /// `desc`'s texture at `width`×`height`: made on first use, made again
    /// when its size or format changed (its state then `Undefined`, its
    /// contents gone).
    pub fn ensure(&mut self, device: &Device, desc: &TargetDesc, width: u32, height: u32) -> Result<TextureHandle> {
        let at = self.entries.iter().position(|e| e.desc.name == desc.name);
        if let Some(e) = at.map(|i| &self.entries[i]).filter(|e| e.desc == *desc && (e.width, e.height) == (width, height)) {
            return Ok(e.texture);
        }
        let texture = device.create_texture(&desc.texture_desc(width, height))?;
        let entry = Entry { desc: *desc, texture, width, height, state: TextureState::Undefined, has_contents: false };
        match at {
            Some(i) => device.destroy_texture(std::mem::replace(&mut self.entries[i], entry).texture),
            None => self.entries.push(entry),
        }
        Ok(texture)
    }

    /// The texture of the target `name`, once made.
    pub fn texture(&self, name: &str) -> Option<TextureHandle> {
        self.entry(name).map(|e| e.texture)
    }

    /// The texture of the target `name` and the state the table tracks for it.
    pub fn texture_and_state(&self, name: &str) -> Option<(TextureHandle, TextureState)> {
        self.entry(name).map(|e| (e.texture, e.state))
    }

    /// The size of the target `name`, once made.
    pub fn size(&self, name: &str) -> Option<(u32, u32)> {
        self.entry(name).map(|e| (e.width, e.height))
    }

    /// Whether the target `name` holds something written: since it was made
    /// (a `Temporal` target) or since the frame began (a `Frame` one).
    pub fn has_contents(&self, name: &str) -> bool {
        self.entry(name).is_some_and(|e| e.has_contents)
    }

    /// A new frame begins: `Frame` targets hold nothing it may use.
    pub fn begin_frame(&mut self) {
        for e in self.entries.iter_mut().filter(|e| e.desc.lifetime == Lifetime::Frame) {
            e.has_contents = false;
        }
    }

    /// Puts each target `accesses` names in the state its access needs: one
    /// barrier from its tracked state, none for a read in the state it is
    /// in already.
    /// Errors: a name the table does not hold (a pass declared a target no
    /// stage made) is the RHI's `InvalidState`.
    pub fn prepare(&mut self, cmd: &mut CommandList<'_>, accesses: &[(&'static str, Access)]) -> Result<()> {
        for &(name, access) in accesses {
            let e =
                self.entries.iter_mut().find(|e| e.desc.name == name).ok_or_else(|| {
                    rhi_vulkan::RhiError::InvalidState(format!("render target {name:?} is used before any stage made it"))
                })?;
            let (from, to) = (e.state, access.state());
            if from != to || access.writes() {
                cmd.texture_barrier(e.texture, from, to)?;
            }
            e.state = to;
            e.has_contents |= access.writes();
        }
        Ok(())
    }

    /// Destroys every target (the RHI frees each once no frame uses it).
    pub fn destroy_all(&mut self, device: &Device) {
        for e in self.entries.drain(..) {
            device.destroy_texture(e.texture);
        }
    }
}

/// The HDR colour the mesh passes draw: linear, `SCENE_COLOR_FORMAT`.
pub const SCENE_COLOR: TargetDesc =
    TargetDesc { name: "scene color", format: crate::mesh_pass::SCENE_COLOR_FORMAT, lifetime: Lifetime::Frame, samples: 1 };
/// The main views' depth.
pub const SCENE_DEPTH: TargetDesc =
    TargetDesc { name: "scene depth", format: crate::mesh_pass::SCENE_DEPTH_FORMAT, lifetime: Lifetime::Frame, samples: 1 };
/// Scene color with `samples` samples per pixel under MSAA: the main
/// passes draw into it and it resolves into [`SCENE_COLOR`].
pub const fn scene_color_msaa(samples: u32) -> TargetDesc {
    TargetDesc { name: "scene color msaa", samples, ..SCENE_COLOR }
}

/// Scene depth under MSAA, resolved (its first sample) into [`SCENE_DEPTH`].
pub const fn scene_depth_msaa(samples: u32) -> TargetDesc {
    TargetDesc { name: "scene depth msaa", samples, ..SCENE_DEPTH }
}

/// Each pixel's motion since the previous frame (TAA's; written by the
/// depth prepass, `velocity.inc.wgsl`).
pub const VELOCITY: TargetDesc =
    TargetDesc { name: "velocity", format: crate::mesh_pass::VELOCITY_FORMAT, lifetime: Lifetime::Frame, samples: 1 };

/// The directional light's shadow map: kept, since the base pass binds it
/// in frames without a shadow view too (it is then cleared once).
pub const SHADOW_MAP: TargetDesc =
    TargetDesc { name: "shadow map", format: Format::Depth32Float, lifetime: Lifetime::Temporal, samples: 1 };
/// The point and spot lights' shadow atlas (`crate::shadow_atlas`): its
/// tiles are kept from frame to frame and rendered only when their shadow changed.
pub const SHADOW_ATLAS: TargetDesc =
    TargetDesc { name: "shadow atlas", format: Format::Depth32Float, lifetime: Lifetime::Temporal, samples: 1 };
