//! Views (UE's FSceneView) and the view family rendered in one frame.

use crate::error::{RendererError, Result};
use crate::math::Frustum;
use glam::{Mat4, Vec3};
use rhi_vulkan::Rect;

/// A camera rendering into a viewport rectangle of the family's target.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneView {
    /// World to view.
    pub view_matrix: Mat4,
    /// View to Vulkan clip space (y down, depth 0..1).
    pub projection: Mat4,
    /// The camera's world position (distance culling, translucency sort,
    /// specular).
    pub origin: Vec3,
    /// The pixels of the family's target it renders into.
    pub viewport: Rect,
    /// Draw this view in wireframe (the wireframe pass instead of the others).
    pub wireframe: bool,
    /// Primitives farther than this are culled (0: no limit).
    pub max_draw_distance: f32,
    /// Perspective (`true`) or orthographic projection.
    pub perspective: bool,
    /// What the view renders ([`ViewKind::Main`] from the constructors).
    pub kind: ViewKind,
    /// The view's stable identity across frames (UE's view state): what
    /// lives from frame to frame for it (auto exposure's adaptation, and
    /// temporal history) is kept under this id until
    /// `RenderThread::release_view_state`. `None` (the constructors'): a
    /// view without a past — auto exposure then uses the manual exposure.
    pub state: Option<crate::ViewStateId>,
    /// The camera jumped this frame (UE's `bCameraCut`): nothing of the
    /// view's earlier frames is reused — TAA's history and the previous
    /// camera of its motion vectors start again.
    pub camera_cut: bool,
    /// Draw every primitive visible in the view with its bounds: its box
    /// and its sphere as lines (UE's `ShowFlags.Bounds`;
    /// [`crate::debug_lines`]).
    pub show_bounds: bool,
}

/// What a view renders, which decides the mesh passes it draws
/// (`mesh_pass::passes::PassViews::of`) and what its culling asks of a
/// primitive. A family's views are main or capture views; the renderer
/// makes the shadow views from the lights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ViewKind {
    /// A camera of the family: what it sees drawn into scene color by the
    /// main passes (or the wireframe pass), occlusion culled.
    #[default]
    Main,
    /// A directional light's shadow cascade (0: the nearest): shadow
    /// casters' depth into the shadow map.
    ShadowCascade {
        /// The cascade's index.
        cascade: u8,
    },
    /// A local light's shadow: shadow casters' depth into a tile of the
    /// shadow atlas.
    ShadowAtlasTile {
        /// The tile's index in the atlas.
        tile: u16,
    },
    /// A scene capture into a texture of its own (a probe, a reflection
    /// capture): drawn as a main view.
    Capture,
}

impl ViewKind {
    /// A shadow view: depth of shadow casters, from a light.
    pub fn is_shadow(self) -> bool {
        matches!(self, ViewKind::ShadowCascade { .. } | ViewKind::ShadowAtlasTile { .. })
    }
}

fn check(eye: Vec3, target: Vec3, up: Vec3, viewport: Rect) -> Result<()> {
    if !eye.is_finite() || !target.is_finite() || !up.is_finite() {
        return Err(RendererError::InvalidView("non-finite camera".into()));
    }
    if (target - eye).length_squared() == 0.0 || (target - eye).cross(up).length_squared() < 1e-12 {
        return Err(RendererError::InvalidView("camera looks along its up vector or at itself".into()));
    }
    if viewport.width == 0 || viewport.height == 0 {
        return Err(RendererError::InvalidView("empty viewport".into()));
    }
    Ok(())
}

/// Converts a GL-style (y up) projection to Vulkan's y-down clip space.
fn flip_y(mut m: Mat4) -> Mat4 {
    m.y_axis.y = -m.y_axis.y;
    m
}

impl SceneView {
    /// A perspective camera at `eye` looking at `target`.
    pub fn perspective(eye: Vec3, target: Vec3, up: Vec3, fov_y: f32, near: f32, far: f32, viewport: Rect) -> Result<Self> {
        check(eye, target, up, viewport)?;
        if !(fov_y > 0.0 && fov_y < std::f32::consts::PI && near > 0.0 && far > near) {
            return Err(RendererError::InvalidView(format!("fov {fov_y}, near {near}, far {far}")));
        }
        let aspect = viewport.width as f32 / viewport.height as f32;
        Self {
            view_matrix: glam::camera::rh::view::look_at_mat4(eye, target, up),
            projection: flip_y(glam::camera::rh::proj::directx::perspective(fov_y, aspect, near, far)),
            origin: eye,
            viewport,
            wireframe: false,
            max_draw_distance: 0.0,
            perspective: true,
            kind: ViewKind::Main,
            state: None,
            camera_cut: false,
            show_bounds: false,
        }
        .finite()
    }

    /// An orthographic camera seeing `width` x `height` world units.
    #[allow(clippy::too_many_arguments)] // a camera's natural parameters, as `perspective`'s
    pub fn orthographic(eye: Vec3, target: Vec3, up: Vec3, width: f32, height: f32, near: f32, far: f32, viewport: Rect) -> Result<Self> {
        check(eye, target, up, viewport)?;
        if !(width > 0.0 && height > 0.0 && far > near) {
            return Err(RendererError::InvalidView(format!("ortho {width}x{height}, near {near}, far {far}")));
        }
        Self {
            view_matrix: glam::camera::rh::view::look_at_mat4(eye, target, up),
            projection: flip_y(glam::camera::rh::proj::directx::orthographic(
                -width / 2.0,
                width / 2.0,
                -height / 2.0,
                height / 2.0,
                near,
                far,
            )),
            origin: eye,
            viewport,
            wireframe: false,
            max_draw_distance: 0.0,
            perspective: false,
            kind: ViewKind::Main,
            state: None,
            camera_cut: false,
            show_bounds: false,
        }
        .finite()
    }

    /// The view, if its matrices came out finite: parameters that pass the
    /// constructors' range checks can still overflow (an infinite ortho
    /// width, a far plane of 1e30 next to a near of 1e-30).
    fn finite(self) -> Result<Self> {
        if self.view_matrix.is_finite() && self.projection.is_finite() {
            Ok(self)
        } else {
            Err(RendererError::InvalidView(format!("the camera's matrices overflow: projection {:?}", self.projection)))
        }
    }

    /// Checks that this view can be rendered into a `width`×`height`
    /// target, as [`ViewFamily::validate`] does for each of its views: a
    /// non-empty viewport inside the target (checked arithmetic: no
    /// overflow whatever the numbers), finite matrices and origin, and a
    /// finite, non-negative draw distance. Code that builds views from user
    /// data (the world's cameras) uses it to keep only views the renderer
    /// accepts.
    pub fn validate_in(&self, width: u32, height: u32) -> Result<()> {
        self.problem(width, height).map_or(Ok(()), |p| Err(RendererError::InvalidView(p)))
    }

    fn problem(&self, width: u32, height: u32) -> Option<String> {
        let r = self.viewport;
        let inside = |start: i32, extent: u32, limit: u32| {
            u32::try_from(start).ok().and_then(|s| s.checked_add(extent)).is_some_and(|end| end <= limit)
        };
        if r.width == 0 || r.height == 0 {
            return Some(format!("empty viewport {r:?}"));
        }
        if !inside(r.x, r.width, width) || !inside(r.y, r.height, height) {
            return Some(format!("viewport {r:?} outside the {width}x{height} target"));
        }
        if !self.view_matrix.is_finite() || !self.projection.is_finite() || !self.origin.is_finite() {
            return Some("non-finite matrices or origin".into());
        }
        if !(self.max_draw_distance.is_finite() && self.max_draw_distance >= 0.0) {
            return Some(format!("max draw distance {}", self.max_draw_distance));
        }
        None
    }

    /// The same view with a stable identity across frames ([`Self::state`]).
    pub fn with_state(self, id: crate::ViewStateId) -> Self {
        Self { state: Some(id), ..self }
    }

    /// The same view marked as a camera cut ([`Self::camera_cut`]).
    pub fn with_camera_cut(self) -> Self {
        Self { camera_cut: true, ..self }
    }

    /// World to clip space: `projection * view_matrix`.
    pub fn view_proj(&self) -> Mat4 {
        self.projection * self.view_matrix
    }

    /// The near and far depths (distances in front of the camera), from
    /// the projection.
    pub fn depth_range(&self) -> (f32, f32) {
        let inv = self.projection.inverse();
        let depth = |z: f32| -inv.project_point3(Vec3::new(0.0, 0.0, z)).z;
        (depth(0.0), depth(1.0))
    }

    /// The depth of a world point `p` in front of the camera is
    /// `dot(axis.xyz, p) + axis.w` (the view matrix's third row, negated).
    pub fn depth_axis(&self) -> glam::Vec4 {
        -self.view_matrix.row(2)
    }

    /// The view-space point (z = -depth) seen at NDC `(x, y)` at `depth` in
    /// front of the camera, for the projection whose inverse is `inv_proj`
    /// (perspective or orthographic).
    pub fn point_at_depth(inv_proj: &Mat4, x: f32, y: f32, depth: f32) -> Vec3 {
        let a = inv_proj.project_point3(Vec3::new(x, y, 0.0));
        let b = inv_proj.project_point3(Vec3::new(x, y, 1.0));
        let t = if (b.z - a.z).abs() > 1e-12 { (-depth - a.z) / (b.z - a.z) } else { 0.0 };
        a + (b - a) * t
    }

    /// The view's frustum, for culling.
    pub fn frustum(&self) -> Frustum {
        Frustum::from_view_proj(&self.view_proj())
    }

    /// The camera's right and up vectors in world space.
    pub fn right_up(&self) -> (Vec3, Vec3) {
        let inv = self.view_matrix.inverse();
        (inv.x_axis.truncate().normalize_or_zero(), inv.y_axis.truncate().normalize_or_zero())
    }

    /// UE's ComputeBoundsScreenSize: the sphere's projected diameter as a
    /// fraction of the viewport height (1 fills it).
    pub fn screen_size(&self, center: Vec3, radius: f32) -> f32 {
        let multiple = (0.5 * self.projection.x_axis.x).abs().max((0.5 * self.projection.y_axis.y).abs());
        if !self.perspective {
            return 2.0 * multiple * radius;
        }
        let dist = center.distance(self.origin).max(1.0);
        2.0 * multiple * radius / dist
    }

    /// A quick filter for [`Self::screen_size`]` >= size` without its
    /// square root and division: false only when the screen size is surely
    /// below `size` (squared sides compared with a 1% margin for rounding).
    pub(crate) fn may_reach_screen_size(&self, center: Vec3, radius: f32, size: f32) -> bool {
        if !self.perspective {
            return true;
        }
        let multiple = (0.5 * self.projection.x_axis.x).abs().max((0.5 * self.projection.y_axis.y).abs());
        let reach = 2.0 * multiple * radius;
        reach * reach * 1.01 >= size * size * center.distance_squared(self.origin).max(1.0)
    }
}

/// The views rendered together in one frame into one target (split screen).
#[derive(Clone, Debug, PartialEq)]
pub struct ViewFamily {
    /// The views, each into its viewport of the target.
    pub views: Vec<SceneView>,
    /// The target's width in pixels.
    pub width: u32,
    /// The target's height in pixels.
    pub height: u32,
    /// Linear clear color.
    pub clear_color: [f32; 4],
    /// Seconds since the family's previous frame (time-based adaptation:
    /// auto exposure); 0..=10, default 1/60. A game passes its frame time
    /// (fixed for repeatable runs).
    pub delta_seconds: f32,
}

impl ViewFamily {
    /// A `width` x `height` target with `views`, cleared to a dark grey.
    pub fn new(width: u32, height: u32, views: Vec<SceneView>) -> Self {
        Self { views, width, height, clear_color: [0.02, 0.02, 0.025, 1.0], delta_seconds: 1.0 / 60.0 }
    }

    /// Checks that the family can be rendered: a non-empty target, a finite
    /// clear colour, and every view valid in it ([`SceneView::validate_in`]). `RenderThread::render_frame`
    /// calls it before enqueuing; the render thread calls it again.
    pub fn validate(&self) -> Result<()> {
        if self.width == 0 || self.height == 0 {
            return Err(RendererError::InvalidView("empty target".into()));
        }
        if !self.clear_color.iter().all(|c| c.is_finite()) {
            return Err(RendererError::InvalidView(format!("non-finite clear color {:?}", self.clear_color)));
        }
        if !(0.0..=10.0).contains(&self.delta_seconds) {
            return Err(RendererError::InvalidView(format!("delta seconds {} outside 0..=10", self.delta_seconds)));
        }
        for (i, v) in self.views.iter().enumerate() {
            if v.kind.is_shadow() {
                return Err(RendererError::InvalidView(format!(
                    "view {i} is a {:?} view: the renderer makes shadow views from the lights; a family's views are main or capture views",
                    v.kind
                )));
            }
            if let Some(problem) = v.problem(self.width, self.height) {
                return Err(RendererError::InvalidView(format!("view {i}: {problem}")));
            }
        }
        Ok(())
    }
}

/// How a primitive takes part in a view (UE's FPrimitiveViewRelevance).
/// The scene keeps it as flags, refreshed whenever what it depends on
/// changes, and asks again per view every frame where it depends on the
/// view (see `scene`'s relevance module for when it is asked and how it decides the
/// passes a primitive enters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ViewRelevance {
    /// Drawn in the main views.
    pub draw: bool,
    /// Drawn in the shadow view (casts a shadow).
    pub shadow: bool,
    /// Draws through the cached (static) path.
    pub static_relevance: bool,
    /// Draws through `get_dynamic_mesh_elements` every frame.
    pub dynamic_relevance: bool,
    /// Has opaque materials. The scene adds the relevance of the materials
    /// the primitive's batches use (cached ones when cached, dynamic ones
    /// each frame), so a proxy need not say: what it says is added too.
    pub opaque: bool,
    /// Has masked materials (as `opaque`).
    pub masked: bool,
    /// Has translucent materials (as `opaque`).
    pub translucent: bool,
    /// Draws without a depth test (informational; not read by the renderer).
    pub disables_depth_test: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camera() -> SceneView {
        SceneView::perspective(Vec3::new(0.0, -5.0, 2.0), Vec3::ZERO, Vec3::Z, 1.0, 0.1, 100.0, Rect::from_size(64, 64)).unwrap()
    }

    #[test]
    fn a_family_holds_main_and_capture_views_and_refuses_shadow_views() {
        assert_eq!(camera().kind, ViewKind::Main);
        let capture = SceneView { kind: ViewKind::Capture, ..camera() };
        assert!(ViewFamily::new(64, 64, vec![camera(), capture]).validate().is_ok());
        for kind in [ViewKind::ShadowCascade { cascade: 0 }, ViewKind::ShadowAtlasTile { tile: 3 }] {
            assert!(kind.is_shadow());
            let family = ViewFamily::new(64, 64, vec![camera(), SceneView { kind, ..camera() }]);
            match family.validate() {
                Err(RendererError::InvalidView(why)) => assert!(why.starts_with("view 1 is a Shadow"), "{why}"),
                other => panic!("{kind:?}: {other:?}"),
            }
        }
    }
}
