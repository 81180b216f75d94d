//! Levels (UE's `ULevel` in a `UWorld`): a group of actors loaded and
//! unloaded as one unit.
//!
//! [`Levels`] keeps which actors belong to which level, beside the
//! [`World`] that owns them. A level is made whole or not at all: from
//! actors to spawn (every transform is checked before any actor exists),
//! from actors already in the world, or from a glTF file loaded on a
//! background thread while the game ticks ([`Levels::load_gltf`], feature
//! `gltf`; [`Levels::poll`] spawns a finished import as one level, and a
//! file that fails to load or spawn adds nothing and reports why).
//! [`Levels::unload`] destroys every actor of the level, and what a glTF
//! level made on the render thread (textures, materials) with them.

use crate::component::Component;
use crate::error::EngineError;
use crate::handle::ActorId;
use crate::transform::Transform;
use crate::world::World;
use rhi_vulkan::Slots;

rhi_vulkan::slot_key!(
    /// Names a level of [`Levels`].
    pub struct LevelId
);

/// Why a level could not be made, loaded or unloaded; nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum LevelError {
    /// No level has this id (never made, or unloaded).
    #[error("no level {0:?}")]
    UnknownLevel(LevelId),
    /// An actor named for a level is not in the world, or is already in
    /// another level.
    #[error("actor {0:?} is not in the world or already belongs to a level")]
    ActorNotFree(ActorId),
    /// The world refused (an invalid transform, an unknown id).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The glTF file could not be imported or spawned.
    #[cfg(feature = "gltf")]
    #[error(transparent)]
    Gltf(#[from] crate::gltf::GltfError),
}

/// One level: its name, its actors and what a glTF level made.
struct Level {
    name: String,
    actors: Vec<ActorId>,
    #[cfg(feature = "gltf")]
    scene: Option<crate::gltf::SpawnedScene>,
}

/// What [`Levels::poll`] saw land.
#[derive(Debug)]
pub enum LevelEvent {
    /// The level named `name` is in the world.
    Loaded { level: LevelId, name: String },
    /// The level named `name` failed to load; nothing of it was added.
    Failed { name: String, error: LevelError },
}

/// The levels of a world (see the module doc).
#[derive(Default)]
pub struct Levels {
    levels: Slots<LevelId, Level>,
    /// Every actor that belongs to a level.
    owned: std::collections::HashSet<ActorId>,
    #[cfg(feature = "gltf")]
    loading: Vec<(String, crate::gltf::GltfLoad)>,
}

impl Levels {
    /// No levels.
    pub fn new() -> Self {
        Self::default()
    }

    /// Spawns one actor per item (a root component at its transform) as
    /// the level `name`. Every item is checked before any actor is
    /// spawned: one bad transform adds nothing.
    pub fn spawn(&mut self, world: &mut World, name: &str, items: Vec<(Box<dyn Component>, Transform)>) -> Result<LevelId, LevelError> {
        let roots = world.spawn_actors(items)?;
        let actors = roots.into_iter().map(|root| world.actor_of(root)).collect::<Result<Vec<_>, _>>()?;
        Ok(self.insert(name, actors))
    }

    /// Makes the actors `actors`, already in `world`, the level `name`;
    /// an actor not in the world or already in a level is
    /// [`LevelError::ActorNotFree`] and nothing changes.
    pub fn adopt(&mut self, world: &World, name: &str, actors: Vec<ActorId>) -> Result<LevelId, LevelError> {
        let mut seen = std::collections::HashSet::with_capacity(actors.len());
        if let Some(&a) = actors.iter().find(|&&a| !world.actors.contains(a) || self.owned.contains(&a) || !seen.insert(a)) {
            return Err(LevelError::ActorNotFree(a));
        }
        Ok(self.insert(name, actors))
    }

    fn insert(&mut self, name: &str, actors: Vec<ActorId>) -> LevelId {
        self.owned.extend(actors.iter().copied());
        #[cfg(feature = "gltf")]
        let level = Level { name: name.to_string(), actors, scene: None };
        #[cfg(not(feature = "gltf"))]
        let level = Level { name: name.to_string(), actors };
        self.levels.insert(level)
    }

    /// Destroys every actor of the level (and what a glTF level made on the
    /// render thread), then forgets it. An unknown id is
    /// [`LevelError::UnknownLevel`].
    pub fn unload(&mut self, world: &mut World, level: LevelId) -> Result<(), LevelError> {
        let l = self.levels.remove(level).ok_or(LevelError::UnknownLevel(level))?;
        for a in &l.actors {
            self.owned.remove(a);
        }
        #[cfg(feature = "gltf")]
        if let Some(scene) = &l.scene {
            // Its actor is among the level's: the scene's destroy takes it
            // and the textures and materials; the others go below.
            scene.destroy(world)?;
        }
        for a in l.actors {
            if world.actors.contains(a) {
                world.destroy_actor(a)?;
            }
        }
        Ok(())
    }

    /// The level's name, if it exists.
    pub fn name(&self, level: LevelId) -> Option<&str> {
        self.levels.get(level).map(|l| l.name.as_str())
    }

    /// The level's actors, if it exists.
    pub fn actors(&self, level: LevelId) -> Option<&[ActorId]> {
        self.levels.get(level).map(|l| l.actors.as_slice())
    }

    /// The level an actor belongs to, if any (a walk over the levels).
    pub fn level_of(&self, actor: ActorId) -> Option<LevelId> {
        if !self.owned.contains(&actor) {
            return None;
        }
        self.levels.iter().find(|(_, l)| l.actors.contains(&actor)).map(|(id, _)| id)
    }

    /// Levels in the world.
    pub fn len(&self) -> usize {
        self.levels.len()
    }

    /// Whether no level is in the world.
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }
}

#[cfg(feature = "gltf")]
impl Levels {
    /// Starts importing the glTF file at `path` on a background thread
    /// ([`crate::gltf::load_async`]); [`Self::poll`] spawns it as the level
    /// `name` once it is imported.
    pub fn load_gltf(&mut self, name: &str, path: impl AsRef<std::path::Path>, limits: &crate::gltf::GltfLimits) {
        self.loading.push((name.to_string(), crate::gltf::load_async(path, limits)));
    }

    /// Loads still running.
    pub fn loads_in_flight(&self) -> usize {
        self.loading.len()
    }

    /// Spawns every import that finished since the last call as a level
    /// (its default scene: one actor, with its textures and materials),
    /// in the order the loads were started; a file that failed to import
    /// or to spawn adds nothing and is reported. Call once per frame on
    /// the game thread.
    pub fn poll(&mut self, world: &mut World) -> Vec<LevelEvent> {
        let mut events = Vec::new();
        let mut still = Vec::with_capacity(self.loading.len());
        for (name, mut load) in std::mem::take(&mut self.loading) {
            let Some(result) = load.poll() else {
                still.push((name, load));
                continue;
            };
            let spawned = result.and_then(|import| import.spawn(world));
            match spawned {
                Ok(scene) => {
                    let actors: Vec<ActorId> = scene.actor.into_iter().collect();
                    let level = self.insert(&name, actors);
                    if let Some(l) = self.levels.get_mut(level) {
                        l.scene = Some(scene);
                    }
                    events.push(LevelEvent::Loaded { level, name });
                }
                Err(error) => events.push(LevelEvent::Failed { name, error: error.into() }),
            }
        }
        self.loading = still;
        events
    }
}
