//! The scene's lights as the render thread keeps them (UE's
//! FLightSceneInfo array): the directional lights by id (at most
//! [`MAX_DIRECTIONAL_LIGHTS`]), and the point and spot lights in dense
//! arrays — each one's id, its light, its bounding sphere and its GPU form
//! ([`LocalLightData`]) — kept in step as lights are set and removed, so a
//! frame's light grid culls a flat array of spheres and uploads the GPU
//! forms of the visible ones without converting 100,000 lights again.
//!
//! Removal swaps the last light into the hole: the arrays' order depends
//! only on the order of the scene's requests, the same on every path.

use super::light::{Light, LightId, LocalLightData, MAX_DIRECTIONAL_LIGHTS, TOO_MANY_DIRECTIONAL_LIGHTS};
use crate::error::{RendererError, Result};
use glam::{Mat4, Vec4};
use std::collections::HashMap;

/// The scene's lights (module docs).
#[derive(Default)]
pub struct SceneLights {
    /// Directional lights, by id.
    directional: Vec<(LightId, Light)>,
    local_ids: Vec<LightId>,
    local: Vec<Light>,
    /// Per local light: its center and radius.
    spheres: Vec<Vec4>,
    gpu: Vec<LocalLightData>,
    /// Where each local light is in the arrays.
    index: HashMap<LightId, usize>,
    /// The lights by kind (`LightStats` without `visible`).
    counts: LightCounts,
    /// The point and spot lights that cast shadows, by id.
    shadowed: std::collections::BTreeSet<LightId>,
}

/// The scene's lights by kind, and those asking for shadows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LightCounts {
    pub directional: u64,
    pub point: u64,
    pub spot: u64,
    pub shadowed: u64,
}

impl LightCounts {
    fn tally(&mut self, light: &Light, add: bool) {
        let step = |n: &mut u64| *n = if add { *n + 1 } else { *n - 1 };
        match light {
            Light::Directional(_) => step(&mut self.directional),
            Light::Point(_) => step(&mut self.point),
            Light::Spot(_) => step(&mut self.spot),
        }
        if light.cast_shadows() {
            step(&mut self.shadowed);
        }
    }
}

impl SceneLights {
    /// Sets the light `id`: an invalid light, a fifth directional light,
    /// or a change the light's mobility forbids ([`Light::change_problem`])
    /// is [`RendererError::InvalidLight`] and changes nothing.
    pub fn set(&mut self, id: LightId, light: Light) -> Result<()> {
        self.check(id, &light)?;
        let old = self.get(id).copied();
        self.place(id, light);
        if let Some(old) = old {
            self.counts.tally(&old, false);
        }
        self.counts.tally(&light, true);
        Ok(())
    }

    /// Whether [`Self::set`] would take `light` for `id`; changes nothing.
    pub fn check(&self, id: LightId, light: &Light) -> Result<()> {
        let old = self.get(id);
        let too_many =
            light.is_directional() && !old.is_some_and(Light::is_directional) && self.directional.len() >= MAX_DIRECTIONAL_LIGHTS;
        let reason =
            light.problem().or_else(|| old.and_then(|o| o.change_problem(light))).or(too_many.then_some(TOO_MANY_DIRECTIONAL_LIGHTS));
        reason.map_or(Ok(()), |reason| Err(RendererError::InvalidLight { light: Some(id), reason }))
    }

    /// Whether [`Self::set_transform`] would move light `id` to
    /// `transform` (its mobility may forbid it); changes nothing.
    pub fn check_transform(&self, id: LightId, transform: &Mat4) -> Result<()> {
        let problem = self.get(id).and_then(|old| old.change_problem(&old.with_transform(transform)));
        problem.map_or(Ok(()), |reason| Err(RendererError::InvalidLight { light: Some(id), reason }))
    }

    /// The light `id`, if there is one.
    pub fn get(&self, id: LightId) -> Option<&Light> {
        match self.index.get(&id) {
            Some(&i) => Some(&self.local[i]),
            None => self.directional.iter().find(|(i, _)| *i == id).map(|(_, l)| l),
        }
    }

    /// Puts `light` (checked: [`Self::check`]) in the arrays for `id`, out of the others.
    fn place(&mut self, id: LightId, light: Light) {
        match light {
            Light::Directional(_) => {
                match self.directional.binary_search_by_key(&id, |(i, _)| *i) {
                    Ok(i) => self.directional[i].1 = light,
                    Err(i) => self.directional.insert(i, (id, light)),
                }
                self.remove_local(id);
            }
            Light::Point(_) | Light::Spot(_) => {
                self.directional.retain(|(i, _)| *i != id);
                if light.cast_shadows() {
                    self.shadowed.insert(id);
                } else {
                    self.shadowed.remove(&id);
                }
                let (sphere, gpu) = (light.bounding_sphere().expect("local"), LocalLightData::of(&light).expect("local"));
                match self.index.get(&id) {
                    Some(&i) => (self.local[i], self.spheres[i], self.gpu[i]) = (light, sphere, gpu),
                    None => {
                        self.index.insert(id, self.local.len());
                        self.local_ids.push(id);
                        self.local.push(light);
                        self.spheres.push(sphere);
                        self.gpu.push(gpu);
                    }
                }
            }
        }
    }

    /// The lights by kind.
    pub(crate) fn counts(&self) -> LightCounts {
        self.counts
    }

    /// Places the light `id` by `transform` ([`Light::with_transform`]);
    /// an unknown id is ignored. A light that may not move (its
    /// mobility) is [`RendererError::InvalidLight`] and stays.
    pub fn set_transform(&mut self, id: LightId, transform: &Mat4) -> Result<()> {
        self.check_transform(id, transform)?;
        let Some(old) = self.get(id) else { return Ok(()) };
        let light = old.with_transform(transform);
        // Placement changes neither kind nor shadows: the counts stay.
        if let Some(&i) = self.index.get(&id) {
            (self.local[i], self.spheres[i]) = (light, light.bounding_sphere().expect("local"));
            self.gpu[i] = LocalLightData::of(&light).expect("local");
        } else if let Some((_, l)) = self.directional.iter_mut().find(|(i, _)| *i == id) {
            *l = light;
        }
        Ok(())
    }

    /// Removes the light `id` (an unknown id is ignored).
    pub fn remove(&mut self, id: LightId) {
        if let Some(old) = self.get(id).copied() {
            self.counts.tally(&old, false);
        }
        self.directional.retain(|(i, _)| *i != id);
        self.remove_local(id);
    }

    fn remove_local(&mut self, id: LightId) {
        let Some(i) = self.index.remove(&id) else { return };
        self.shadowed.remove(&id);
        self.local_ids.swap_remove(i);
        self.local.swap_remove(i);
        self.spheres.swap_remove(i);
        self.gpu.swap_remove(i);
        if let Some(moved) = self.local_ids.get(i) {
            self.index.insert(*moved, i);
        }
    }

    /// Every light: the directional ones by id, then the point and spot ones.
    pub fn iter(&self) -> impl Iterator<Item = (LightId, &Light)> {
        self.directional.iter().map(|(i, l)| (*i, l)).chain(self.local_ids.iter().copied().zip(&self.local))
    }

    /// How many lights there are.
    pub fn len(&self) -> usize {
        self.directional.len() + self.local.len()
    }

    /// Whether there is no light.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The directional lights, by id.
    pub fn directional(&self) -> impl Iterator<Item = &Light> {
        self.directional.iter().map(|(_, l)| l)
    }

    /// The point and spot lights that cast shadows, by id.
    pub fn shadowed_local(&self) -> impl Iterator<Item = (LightId, &Light)> {
        self.shadowed.iter().map(|id| (*id, &self.local[self.index[id]]))
    }

    /// The point and spot lights' ids, as [`Self::local`].
    pub fn local_ids(&self) -> &[LightId] {
        &self.local_ids
    }

    /// The point and spot lights.
    pub fn local(&self) -> &[Light] {
        &self.local
    }

    /// Per point or spot light (as [`Self::local`]), its center and radius.
    pub fn spheres(&self) -> &[Vec4] {
        &self.spheres
    }

    /// Per point or spot light (as [`Self::local`]), its GPU form.
    pub(crate) fn gpu(&self) -> &[LocalLightData] {
        &self.gpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{DirectionalLight, PointLight, SpotLight};
    use glam::Vec3;

    #[test]
    fn the_arrays_stay_in_step_through_sets_moves_and_removes() {
        let mut s = SceneLights::default();
        let point = |x: f32| Light::Point(PointLight { position: Vec3::new(x, 0.0, 0.0), cast_shadows: x > 5.0, ..Default::default() });
        for i in 0..10u64 {
            s.set(LightId(i), point(i as f32)).unwrap();
        }
        s.set(
            LightId(20),
            Light::Directional(DirectionalLight {
                direction: Vec3::NEG_Z,
                color: Vec3::ONE,
                intensity: 1.0,
                cast_shadows: true,
                ..Default::default()
            }),
        )
        .unwrap();
        s.remove(LightId(2));
        s.remove(LightId(0));
        s.set(LightId(5), Light::Spot(SpotLight { position: Vec3::new(50.0, 0.0, 0.0), ..Default::default() })).unwrap();
        s.set_transform(LightId(7), &Mat4::from_translation(Vec3::new(70.0, 1.0, 0.0))).unwrap();
        // Every array agrees with the light at its place.
        for (i, l) in s.local().iter().enumerate() {
            assert_eq!(s.spheres()[i], l.bounding_sphere().unwrap());
            assert_eq!(s.gpu()[i], LocalLightData::of(l).unwrap());
            assert_eq!(s.get(s.local_ids[i]), Some(l));
        }
        assert_eq!(s.len(), 9);
        assert!(matches!(s.get(LightId(7)), Some(Light::Point(p)) if p.position == Vec3::new(70.0, 1.0, 0.0)));
        // 1, 3, 4, 6, 8, 9 points (6..9 shadowed: 6, 7, 8, 9), 5 a spot, the sun shadowed.
        assert_eq!(s.counts(), LightCounts { directional: 1, point: 7, spot: 1, shadowed: 5 });
        // A point turned directional leaves the local arrays.
        s.set(
            LightId(3),
            Light::Directional(DirectionalLight {
                direction: Vec3::X,
                color: Vec3::ONE,
                intensity: 1.0,
                cast_shadows: false,
                ..Default::default()
            }),
        )
        .unwrap();
        assert_eq!((s.local().len(), s.directional().count()), (7, 2));
        assert_eq!(s.counts(), LightCounts { directional: 2, point: 6, spot: 1, shadowed: 5 });
    }
}
