//! Generational handles for actors and components, and the arena behind them.
//! A stale handle (destroyed component) is an error, never another object.

use std::fmt;

macro_rules! handle {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name {
            pub(crate) index: u32,
            pub(crate) generation: u32,
        }
        impl $name {
            /// Index and generation packed in one `u64` (stable while alive).
            pub fn to_bits(self) -> u64 {
                (u64::from(self.generation) << 32) | u64::from(self.index)
            }
        }
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}#{}v{}", stringify!($name), self.index, self.generation)
            }
        }
    };
}

handle!(
    /// Names an actor of a [`crate::World`].
    ActorId
);
handle!(
    /// Names a component of a [`crate::World`].
    ComponentId
);

pub(crate) trait ArenaHandle: Copy {
    fn new(index: u32, generation: u32) -> Self;
    fn index(self) -> u32;
    fn generation(self) -> u32;
}

impl ArenaHandle for ActorId {
    fn new(index: u32, generation: u32) -> Self {
        Self { index, generation }
    }
    fn index(self) -> u32 {
        self.index
    }
    fn generation(self) -> u32 {
        self.generation
    }
}

impl ArenaHandle for ComponentId {
    fn new(index: u32, generation: u32) -> Self {
        Self { index, generation }
    }
    fn index(self) -> u32 {
        self.index
    }
    fn generation(self) -> u32 {
        self.generation
    }
}

pub(crate) struct Arena<H, T> {
    slots: Vec<(u32, Option<T>)>,
    free: Vec<u32>,
    live: usize,
    _h: std::marker::PhantomData<H>,
}

impl<H: ArenaHandle, T> Default for Arena<H, T> {
    fn default() -> Self {
        Self { slots: Vec::new(), free: Vec::new(), live: 0, _h: std::marker::PhantomData }
    }
}

impl<H: ArenaHandle, T> Arena<H, T> {
    pub fn insert(&mut self, value: T) -> H {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            let slot = &mut self.slots[i as usize];
            slot.1 = Some(value);
            return H::new(i, slot.0);
        }
        self.slots.push((0, Some(value)));
        H::new(self.slots.len() as u32 - 1, 0)
    }

    pub fn get(&self, h: H) -> Option<&T> {
        let (g, v) = self.slots.get(h.index() as usize)?;
        if *g != h.generation() {
            return None;
        }
        v.as_ref()
    }

    pub fn get_mut(&mut self, h: H) -> Option<&mut T> {
        let (g, v) = self.slots.get_mut(h.index() as usize)?;
        if *g != h.generation() {
            return None;
        }
        v.as_mut()
    }

    pub fn remove(&mut self, h: H) -> Option<T> {
        let (g, v) = self.slots.get_mut(h.index() as usize)?;
        if *g != h.generation() {
            return None;
        }
        let out = v.take()?;
        *g = g.wrapping_add(1);
        self.free.push(h.index());
        self.live -= 1;
        Some(out)
    }

    pub fn len(&self) -> usize {
        self.live
    }
}
