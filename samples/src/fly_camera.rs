//! The window mode's free camera: WASD (+ Q/E down/up, Shift faster) moves,
//! dragging with the left or right mouse button turns. A sample names the
//! camera component it lets the user fly with [`control_camera`]; the first
//! key or drag takes the camera over from the sample's own animation.
//! With [`orbit_camera`] a drag orbits the camera about a point instead (the
//! keys move the point with it).

use engine_core::{ComponentId, Engine, Transform};
use glam::{Quat, Vec3};
use std::cell::Cell;
use std::collections::HashSet;

thread_local! {
    static CAMERA: Cell<Option<ComponentId>> = const { Cell::new(None) };
    static PIVOT: Cell<Option<Vec3>> = const { Cell::new(None) };
}

/// Lets the user fly the camera component `id` in window mode (a root
/// component: its relative transform is its world transform).
pub fn control_camera(id: ComponentId) {
    CAMERA.with(|c| c.set(Some(id)));
}

/// As [`control_camera`], but a drag orbits the camera about `pivot`
/// (keeping its distance and looking at it); the keys move both.
pub fn orbit_camera(id: ComponentId, pivot: Vec3) {
    CAMERA.with(|c| c.set(Some(id)));
    PIVOT.with(|p| p.set(Some(pivot)));
}

pub(crate) fn controlled_camera() -> Option<ComponentId> {
    CAMERA.with(|c| c.get())
}

/// Movement keys, independent of the windowing library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Forward,
    Back,
    Left,
    Right,
    Down,
    Up,
    Fast,
}

#[derive(Default)]
pub(crate) struct FlyCamera {
    held: HashSet<Key>,
    dragging: bool,
    last_cursor: Option<(f64, f64)>,
    pending_turn: (f32, f32),
    /// Set by the first input: from then on the user owns the camera.
    pose: Option<(Vec3, f32, f32)>,
    /// World units per second (grows with the scene: 10% of the camera's
    /// height, at least 5; when orbiting, half the distance to the pivot).
    speed: f32,
    /// When orbiting: the pivot and the camera's distance from it.
    orbit: Option<(Vec3, f32)>,
}

const TURN_PER_PIXEL: f32 = 0.004;

impl FlyCamera {
    pub fn key(&mut self, key: Key, pressed: bool) {
        if pressed {
            self.held.insert(key);
        } else {
            self.held.remove(&key);
        }
    }

    pub fn button(&mut self, pressed: bool) {
        self.dragging = pressed;
        if !pressed {
            self.last_cursor = None;
        }
    }

    pub fn cursor(&mut self, x: f64, y: f64) {
        if self.dragging {
            if let Some((lx, ly)) = self.last_cursor {
                self.pending_turn.0 += (x - lx) as f32 * TURN_PER_PIXEL;
                self.pending_turn.1 += (y - ly) as f32 * TURN_PER_PIXEL;
            }
            self.last_cursor = Some((x, y));
        }
    }

    fn has_input(&self) -> bool {
        self.held.iter().any(|k| *k != Key::Fast) || self.pending_turn != (0.0, 0.0)
    }

    /// Applies this frame's input to the controlled camera (after the
    /// sample's update, so the user wins once they have taken over).
    pub fn apply(&mut self, engine: &mut Engine, dt: f32) -> anyhow::Result<()> {
        let Some(id) = controlled_camera() else { return Ok(()) };
        if self.pose.is_none() {
            if !self.has_input() {
                return Ok(());
            }
            let world = engine.world.world_transform(id)?;
            let eye = world.w_axis.truncate();
            let forward = world.x_axis.truncate().normalize_or(Vec3::X);
            let yaw = forward.y.atan2(forward.x);
            let pitch = forward.z.clamp(-1.0, 1.0).asin();
            self.speed = (eye.z.abs() * 0.1).max(5.0);
            self.orbit = PIVOT.with(|p| p.get()).map(|pivot| (pivot, eye.distance(pivot)));
            if let Some((_, distance)) = self.orbit {
                self.speed = distance * 0.5;
            }
            self.pose = Some((eye, yaw, pitch));
        }
        let (mut eye, mut yaw, mut pitch) = self.pose.expect("set above");
        yaw -= self.pending_turn.0;
        pitch = (pitch - self.pending_turn.1).clamp(-1.5, 1.5);
        self.pending_turn = (0.0, 0.0);
        let rotation = Quat::from_rotation_z(yaw) * Quat::from_rotation_y(-pitch);
        let forward = rotation * Vec3::X;
        let right = forward.cross(Vec3::Z).normalize_or(Vec3::Y);
        let mut dir = Vec3::ZERO;
        for (key, v) in [
            (Key::Forward, forward),
            (Key::Back, -forward),
            (Key::Right, right),
            (Key::Left, -right),
            (Key::Up, Vec3::Z),
            (Key::Down, -Vec3::Z),
        ] {
            if self.held.contains(&key) {
                dir += v;
            }
        }
        let speed = self.speed * if self.held.contains(&Key::Fast) { 4.0 } else { 1.0 };
        let step = dir.normalize_or_zero() * speed * dt;
        eye += step;
        if let Some((pivot, distance)) = &mut self.orbit {
            *pivot += step;
            eye = *pivot - forward * *distance;
        }
        self.pose = Some((eye, yaw, pitch));
        engine.world.set_relative_transform(id, Transform::new(eye, rotation, Vec3::ONE))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drags_turn_and_keys_move_only_after_input() {
        let mut f = FlyCamera::default();
        assert!(!f.has_input());
        f.cursor(10.0, 10.0);
        assert!(!f.has_input(), "moving without a button held does not turn");
        f.button(true);
        f.cursor(10.0, 10.0);
        f.cursor(60.0, 10.0);
        assert!(f.has_input());
        assert!((f.pending_turn.0 - 50.0 * TURN_PER_PIXEL).abs() < 1e-6);
        f.button(false);
        f.key(Key::Fast, true);
        f.pending_turn = (0.0, 0.0);
        assert!(!f.has_input(), "Shift alone is not movement");
        f.key(Key::Forward, true);
        assert!(f.has_input());
    }

    #[test]
    fn a_drag_orbits_about_the_pivot_and_the_keys_move_both() {
        use engine_core::{look_rotation, CameraComponent, EngineDesc};
        let desc = EngineDesc { width: 32, height: 32, mode: renderer::RenderThreadMode::Inline, device: test_support::device_desc() };
        let mut engine = Engine::new(&desc).unwrap();
        let pivot = Vec3::new(1.0, 2.0, 0.5);
        let eye = pivot + Vec3::new(4.0, 1.0, 1.0);
        let (_, id) = engine
            .world
            .spawn_actor("camera", Box::new(CameraComponent::default()), Transform::new(eye, look_rotation(eye, pivot), Vec3::ONE))
            .unwrap();
        orbit_camera(id, pivot);
        let mut f = FlyCamera::default();
        f.button(true);
        f.cursor(0.0, 0.0);
        f.cursor(200.0, 60.0);
        f.apply(&mut engine, 0.016).unwrap();
        let m = engine.world.world_transform(id).unwrap();
        let (orbited, forward) = (m.w_axis.truncate(), m.x_axis.truncate());
        assert!((orbited.distance(pivot) - eye.distance(pivot)).abs() < 1e-3, "the distance is kept: {orbited}");
        assert!(orbited.distance(eye) > 0.5, "the camera moved round: {orbited}");
        assert!(forward.dot((pivot - orbited).normalize()) > 0.9999, "it looks at the pivot");
        // W for half a second: eye and pivot move forward together.
        f.button(false);
        f.key(Key::Forward, true);
        f.apply(&mut engine, 0.5).unwrap();
        let moved = engine.world.world_transform(id).unwrap().w_axis.truncate();
        let step = moved - orbited;
        assert!(step.length() > 0.1 && step.normalize().dot(forward) > 0.9999, "{step}");
        f.key(Key::Forward, false);
        f.button(true);
        f.cursor(0.0, 0.0);
        f.cursor(-150.0, 0.0);
        f.apply(&mut engine, 0.016).unwrap();
        let again = engine.world.world_transform(id).unwrap().w_axis.truncate();
        assert!((again.distance(pivot + step) - eye.distance(pivot)).abs() < 1e-3, "it orbits the moved pivot");
    }
}
