//! [`AnimationPlayer`]: plays one clip over time (speed, looping, seeking)
//! and cross-fades to another.

use std::sync::Arc;

use super::clip::AnimationClip;
use super::error::AnimationError;
use super::pose::Pose;

/// A clip and the playhead within it.
#[derive(Debug, Clone)]
struct PlayingClip {
    clip: Arc<AnimationClip>,
    /// Seconds into the clip, always within `[0, duration]`.
    time: f32,
}

impl PlayingClip {
    /// Moves the playhead by `delta` seconds of clip time, wrapping or clamping.
    fn advance(&mut self, delta: f32, looping: bool) {
        self.time = place_time(self.time + delta, self.clip.duration(), looping);
    }
}

/// A cross-fade in progress: the clip being faded out and how far the fade has got.
#[derive(Debug, Clone)]
struct Fade {
    from: PlayingClip,
    /// Seconds of real time since the fade began.
    elapsed: f32,
    /// The fade's length in seconds, > 0.
    length: f32,
}

/// Plays an [`AnimationClip`] on the game thread: advances a playhead by
/// frame time scaled by a speed, wraps or clamps it at the clip's ends, and
/// cross-fades between clips, like UE's single-node animation instance.
///
/// Call [`AnimationPlayer::advance`] once per frame, then
/// [`AnimationPlayer::evaluate`] to get the pose. The player keeps one
/// scratch pose for cross-fades, so after the first frame evaluation
/// allocates nothing.
#[derive(Debug, Clone)]
pub struct AnimationPlayer {
    current: PlayingClip,
    fade: Option<Fade>,
    speed: f32,
    looping: bool,
    /// The faded-in clip's pose during a fade, kept between frames.
    scratch: Pose,
}

impl AnimationPlayer {
    /// A player at time 0 of `clip`, speed 1, looping (the usual case for
    /// idle and locomotion cycles; call [`AnimationPlayer::set_looping`] for
    /// one-shot clips).
    pub fn new(clip: Arc<AnimationClip>) -> Self {
        Self { current: PlayingClip { clip, time: 0.0 }, fade: None, speed: 1.0, looping: true, scratch: Pose::default() }
    }

    /// The clip playing (the one being faded in, during a cross-fade).
    pub fn clip(&self) -> &Arc<AnimationClip> {
        &self.current.clip
    }

    /// The playhead in seconds, within `[0, duration]` of the current clip.
    pub fn time(&self) -> f32 {
        self.current.time
    }

    /// The playback rate: 1 is normal, 2 double speed, negative plays backward.
    pub fn speed(&self) -> f32 {
        self.speed
    }

    /// Sets the playback rate; negative plays backward, 0 pauses. Refuses
    /// NaN and infinity, which would corrupt the playhead.
    pub fn set_speed(&mut self, speed: f32) -> Result<(), AnimationError> {
        if !speed.is_finite() {
            return Err(AnimationError::InvalidParameter { what: "speed", value: speed });
        }
        self.speed = speed;
        Ok(())
    }

    /// Whether the playhead wraps around at the clip's ends (otherwise it stops there).
    pub fn is_looping(&self) -> bool {
        self.looping
    }

    /// Turns looping on or off. Turning it on at the very end of the clip
    /// moves the playhead back to the start, since a looping playhead lies in `[0, duration)`.
    pub fn set_looping(&mut self, looping: bool) {
        self.looping = looping;
        self.current.time = place_time(self.current.time, self.current.clip.duration(), looping);
    }

    /// Jumps the playhead to `time` seconds, wrapped into `[0, duration)` when
    /// looping and clamped to `[0, duration]` otherwise. During a cross-fade
    /// only the incoming clip moves. Refuses NaN and infinity.
    pub fn seek(&mut self, time: f32) -> Result<(), AnimationError> {
        if !time.is_finite() {
            return Err(AnimationError::InvalidParameter { what: "seek time", value: time });
        }
        self.current.time = place_time(time, self.current.clip.duration(), self.looping);
        Ok(())
    }

    /// Advances by `dt` seconds of frame time: each playing clip's playhead
    /// moves by `dt * speed`, and a cross-fade progresses by `|dt|` (real time,
    /// whatever the speed) and ends once its length has passed. A non-finite
    /// `dt` is ignored rather than let it poison the playhead.
    pub fn advance(&mut self, dt: f32) {
        if !dt.is_finite() {
            return;
        }
        let delta = dt * self.speed;
        self.current.advance(delta, self.looping);
        if let Some(fade) = &mut self.fade {
            fade.from.advance(delta, self.looping);
            fade.elapsed += dt.abs();
            if fade.elapsed >= fade.length {
                self.fade = None;
            }
        }
    }

    /// Whether a non-looping clip has reached the end it is playing toward
    /// (the last key going forward, time 0 going backward) and no fade is
    /// running. A looping or paused (speed 0) player never finishes.
    pub fn is_finished(&self) -> bool {
        if self.looping || self.fade.is_some() {
            return false;
        }
        if self.speed > 0.0 {
            self.current.time >= self.current.clip.duration()
        } else if self.speed < 0.0 {
            self.current.time <= 0.0
        } else {
            false
        }
    }

    /// Switches to `clip` at once, cancelling any fade. It starts at its
    /// beginning, or at its end when the speed is negative.
    pub fn play(&mut self, clip: Arc<AnimationClip>) {
        self.fade = None;
        self.current = self.start_of(clip);
    }

    /// Cross-fades to `clip` over `fade_seconds` of real time: both clips
    /// keep advancing, and the pose is `blend(old, new, elapsed / fade_seconds)`;
    /// afterward only `clip` plays. The new clip starts as in
    /// [`AnimationPlayer::play`]; 0 seconds is a cut. Starting a fade during
    /// another drops the clip that was already fading out (the pose may
    /// jump by that clip's remaining share).
    pub fn cross_fade_to(&mut self, clip: Arc<AnimationClip>, fade_seconds: f32) -> Result<(), AnimationError> {
        if !(fade_seconds.is_finite() && fade_seconds >= 0.0) {
            return Err(AnimationError::InvalidParameter { what: "fade length", value: fade_seconds });
        }
        if fade_seconds == 0.0 {
            self.play(clip);
            return Ok(());
        }
        let next = self.start_of(clip);
        let from = std::mem::replace(&mut self.current, next);
        self.fade = Some(Fade { from, elapsed: 0.0, length: fade_seconds });
        Ok(())
    }

    /// During a cross-fade, the incoming clip's weight in `[0, 1)`; `None` when not fading.
    pub fn fade_weight(&self) -> Option<f32> {
        self.fade.as_ref().map(|f| f.elapsed / f.length)
    }

    /// Writes the current pose into `out`: `rest` overlaid with the playing
    /// clip's animated properties, or during a fade the blend of the
    /// outgoing and incoming clips (each over `rest`).
    ///
    /// `out` and the internal scratch pose keep their buffers, so after the
    /// first call this allocates nothing. Fails, leaving `out` untouched, if
    /// a clip animates a joint `rest` does not have.
    pub fn evaluate(&mut self, rest: &Pose, out: &mut Pose) -> Result<(), AnimationError> {
        self.current.clip.validate_for(rest.len())?;
        let Some(fade) = &self.fade else {
            out.copy_from(rest);
            return self.current.clip.sample_into(self.current.time, out);
        };
        fade.from.clip.validate_for(rest.len())?;
        out.copy_from(rest);
        fade.from.clip.sample_into(fade.from.time, out)?;
        self.scratch.copy_from(rest);
        self.current.clip.sample_into(self.current.time, &mut self.scratch)?;
        out.blend_toward(&self.scratch, fade.elapsed / fade.length)
    }

    /// A playhead at the start `clip` plays from at the current speed.
    fn start_of(&self, clip: Arc<AnimationClip>) -> PlayingClip {
        let time = if self.speed < 0.0 { clip.duration() } else { 0.0 };
        PlayingClip { clip, time }
    }

    /// The scratch pose's joint buffer, so tests can check it is reused.
    #[cfg(test)]
    pub(super) fn scratch_joints_ptr(&self) -> *const super::pose::JointTransform {
        self.scratch.joints.as_ptr()
    }
}

/// Puts a playhead at `time` into the clip: wrapped into `[0, duration)`
/// when looping (a zero-length clip stays at 0), clamped to `[0, duration]`
/// otherwise.
fn place_time(time: f32, duration: f32, looping: bool) -> f32 {
    if !looping {
        return time.clamp(0.0, duration);
    }
    if duration <= 0.0 {
        return 0.0;
    }
    let wrapped = time.rem_euclid(duration);
    // rem_euclid can round up to `duration` for tiny negative inputs.
    if wrapped >= duration {
        0.0
    } else {
        wrapped
    }
}
