//! Bundles assembled at run time: [`EntityBuilder`] (values moved in once)
//! and [`EntityTemplate`] (values cloned on every spawn).
//!
//! A tuple bundle's types are fixed when the program is compiled. A builder
//! collects components one at a time (a level editor, a script, a network
//! message decides which), each behind a small type-erased box that knows how
//! to register its type and move (or clone) its value into a column. Spawning
//! a builder goes through the same structural core as a tuple bundle: a
//! runtime bundle of the builder's component ids, with its cached edge.

use super::core::WorldCore;
use super::World;
use crate::bundle::{Bundle, CloneBundle, CloneFieldSink, FieldSink};
use crate::component::{Component, ComponentId, Components};
use crate::entity::Entity;
use crate::error::EntityError;
use std::any::TypeId;

/// One component value of a builder, type-erased.
trait Part: Send + Sync {
    fn type_id(&self) -> TypeId;
    fn value(&self) -> &dyn std::any::Any;
    fn value_mut(&mut self) -> &mut dyn std::any::Any;
    fn register(&self, components: &mut Components) -> ComponentId;
    /// Moves the value into `dst`.
    ///
    /// # Safety
    /// `dst` must be valid for writes of the value's type and hold nothing
    /// that needs dropping.
    unsafe fn move_into(self: Box<Self>, dst: *mut u8);
}

/// One component value of a template, type-erased and clonable.
trait ClonePart: Part {
    fn clone_box(&self) -> Box<dyn ClonePart>;
}

struct Value<T>(T);

impl<T: Component> Part for Value<T> {
    fn type_id(&self) -> TypeId {
        TypeId::of::<T>()
    }
    fn value(&self) -> &dyn std::any::Any {
        &self.0
    }
    fn value_mut(&mut self) -> &mut dyn std::any::Any {
        &mut self.0
    }
    fn register(&self, components: &mut Components) -> ComponentId {
        components.register::<T>()
    }
    unsafe fn move_into(self: Box<Self>, dst: *mut u8) {
        // SAFETY: the caller gives a writable, empty slot of type `T`.
        unsafe { dst.cast::<T>().write(self.0) }
    }
}

impl<T: Component + Clone> ClonePart for Value<T> {
    fn clone_box(&self) -> Box<dyn ClonePart> {
        Box::new(Value(self.0.clone()))
    }
}

/// Where a builder's or template's value of type `T` is.
fn position<T: 'static, P: Part + ?Sized>(parts: &[Box<P>]) -> Option<usize> {
    parts
        .iter()
        .position(|p| Part::type_id(&**p) == TypeId::of::<T>())
}

/// Adds `part`, replacing the part of the same type if there is one.
fn put<P: Part + ?Sized>(parts: &mut Vec<Box<P>>, part: Box<P>) {
    let type_id = Part::type_id(&*part);
    match parts.iter().position(|p| Part::type_id(&**p) == type_id) {
        Some(i) => parts[i] = part,
        None => parts.push(part),
    }
}

/// A bundle assembled at run time; spawning it moves the values out and
/// leaves it empty, ready for the next entity.
///
/// ```
/// use doecs::{EntityBuilder, World};
/// let mut world = World::new();
/// let mut builder = EntityBuilder::new();
/// builder.add(1u32).add("name").add(2u32); // the second u32 replaces the first
/// let e = world.spawn(&mut builder);
/// assert_eq!(world.get::<u32>(e), Ok(&2));
/// assert_eq!(world.get::<&str>(e), Ok(&"name"));
/// assert!(builder.is_empty());
/// ```
#[derive(Default)]
pub struct EntityBuilder {
    parts: Vec<Box<dyn Part>>,
}

impl EntityBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `value`, replacing any value of the same type.
    pub fn add<T: Component>(&mut self, value: T) -> &mut Self {
        put(&mut self.parts, Box::new(Value(value)));
        self
    }

    /// Adds every component of `bundle`, each replacing any value of its
    /// type.
    ///
    /// ```
    /// let mut builder = doecs::EntityBuilder::new();
    /// builder.add(1u8).add_bundle((2u8, "two"));
    /// assert_eq!(builder.get::<u8>(), Some(&2));
    /// assert_eq!(builder.len(), 2);
    /// ```
    pub fn add_bundle<B: Bundle>(&mut self, bundle: B) -> &mut Self {
        struct Sink<'b>(&'b mut EntityBuilder);
        impl FieldSink for Sink<'_> {
            fn field<T: Component>(&mut self, value: T) {
                self.0.add(value);
            }
        }
        bundle.into_fields(&mut Sink(self));
        self
    }

    /// Whether it holds `T`.
    pub fn has<T: Component>(&self) -> bool {
        position::<T, _>(&self.parts).is_some()
    }

    /// Its value of type `T`.
    pub fn get<T: Component>(&self) -> Option<&T> {
        let i = position::<T, _>(&self.parts)?;
        self.parts[i].value().downcast_ref()
    }

    /// Its value of type `T`, mutably.
    pub fn get_mut<T: Component>(&mut self) -> Option<&mut T> {
        let i = position::<T, _>(&self.parts)?;
        self.parts[i].value_mut().downcast_mut()
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Drops every value.
    pub fn clear(&mut self) {
        self.parts.clear();
    }
}

/// A bundle assembled at run time whose values are cloned into every entity
/// spawned from it: build it once, spawn it many times. It is `Clone`
/// itself.
///
/// ```
/// use doecs::{EntityTemplate, World};
/// let mut world = World::new();
/// let mut template = EntityTemplate::new();
/// template.add(String::from("orc")).add(10u32);
/// let orcs: Vec<_> = (0..3).map(|_| world.spawn(&template)).collect();
/// assert_eq!(world.get::<String>(orcs[2]).unwrap(), "orc");
/// let copy = template.clone();
/// let one_more = world.spawn(&copy);
/// assert_eq!(world.get::<u32>(one_more), Ok(&10));
/// ```
#[derive(Default)]
pub struct EntityTemplate {
    parts: Vec<Box<dyn ClonePart>>,
}

impl Clone for EntityTemplate {
    fn clone(&self) -> Self {
        EntityTemplate {
            parts: self.parts.iter().map(|p| p.clone_box()).collect(),
        }
    }
}

impl EntityTemplate {
    /// An empty template.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `value`, replacing any value of the same type.
    pub fn add<T: Component + Clone>(&mut self, value: T) -> &mut Self {
        put(&mut self.parts, Box::new(Value(value)));
        self
    }

    /// Adds every component of `bundle`, each replacing any value of its
    /// type.
    pub fn add_bundle<B: CloneBundle>(&mut self, bundle: B) -> &mut Self {
        struct Sink<'t>(&'t mut EntityTemplate);
        impl CloneFieldSink for Sink<'_> {
            fn field<T: Component + Clone>(&mut self, value: T) {
                self.0.add(value);
            }
        }
        bundle.into_clone_fields(&mut Sink(self));
        self
    }

    /// Whether it holds `T`.
    pub fn has<T: Component>(&self) -> bool {
        position::<T, _>(&self.parts).is_some()
    }

    /// Its value of type `T`.
    pub fn get<T: Component>(&self) -> Option<&T> {
        let i = position::<T, _>(&self.parts)?;
        self.parts[i].value().downcast_ref()
    }

    /// Its value of type `T`, mutably (later spawns clone the new value).
    pub fn get_mut<T: Component>(&mut self) -> Option<&mut T> {
        let i = position::<T, _>(&self.parts)?;
        self.parts[i].value_mut().downcast_mut()
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
}

/// The runtime bundle of some parts and each part's value size.
fn runtime_bundle<'p, P: Part + ?Sized + 'p>(
    core: &mut WorldCore,
    parts: impl Iterator<Item = &'p P>,
) -> (crate::bundle::BundleId, Vec<usize>) {
    let ids: Vec<ComponentId> = parts.map(|p| p.register(&mut core.components)).collect();
    let sizes = ids
        .iter()
        .map(|&id| core.components.info(id).layout().size())
        .collect();
    let bundle = core
        .bundles
        .of_ids(&ids, &core.components)
        .expect("a builder holds each type once, all registered");
    (bundle, sizes)
}

/// What [`World::spawn`] accepts: a [`Bundle`] by value, an
/// [`EntityBuilder`] by `&mut` (its values are moved out, leaving it empty)
/// or an [`EntityTemplate`] by `&` (its values are cloned). Sealed: these
/// three are the ways to spawn one entity.
pub trait Spawn: sealed::Sealed {
    /// Places the new entity's row (hooks fire; their commands wait for
    /// the caller's flush).
    #[doc(hidden)]
    fn spawn_in(self, world: &mut World) -> Result<Entity, EntityError>;
}

mod sealed {
    pub trait Sealed {}
    impl<B: crate::bundle::Bundle> Sealed for B {}
    impl Sealed for &mut super::EntityBuilder {}
    impl Sealed for &super::EntityTemplate {}
}

impl<B: Bundle> Spawn for B {
    #[inline]
    fn spawn_in(self, world: &mut World) -> Result<Entity, EntityError> {
        let id = world.core.bundle_id::<B>()?;
        let entity = world.core.entities.alloc();
        // SAFETY: the entity is new, and the writer fills exactly `B`'s fields.
        unsafe {
            world
                .core
                .place_row(entity, id, super::structure::typed_writer(self))
        };
        Ok(entity)
    }
}

impl Spawn for &mut EntityBuilder {
    fn spawn_in(self, world: &mut World) -> Result<Entity, EntityError> {
        let (bundle, sizes) = runtime_bundle(&mut world.core, self.parts.iter().map(|p| &**p));
        let entity = world.core.entities.alloc();
        let parts = std::mem::take(&mut self.parts);
        // SAFETY: the entity is new; the writer moves each part into its own
        // field's slot (bases follow the bundle's field order, the parts'
        // order), filling every field.
        unsafe {
            world.core.place_row(entity, bundle, |bases, row| {
                for ((part, &base), &size) in parts.into_iter().zip(bases).zip(&sizes) {
                    part.move_into(base.add(row * size));
                }
            })
        };
        Ok(entity)
    }
}

impl Spawn for &EntityTemplate {
    fn spawn_in(self, world: &mut World) -> Result<Entity, EntityError> {
        let (bundle, sizes) = runtime_bundle(
            &mut world.core,
            self.parts.iter().map(|p| &**p as &dyn Part),
        );
        // A panicking `clone` must not leave a row unfilled: clone first.
        let clones: Vec<Box<dyn ClonePart>> = self.parts.iter().map(|p| p.clone_box()).collect();
        let entity = world.core.entities.alloc();
        // SAFETY: the entity is new; the row gets a clone of every part in
        // its field's column (bases follow the parts' order).
        unsafe {
            world.core.place_row(entity, bundle, |bases, row| {
                for ((part, &base), &size) in clones.into_iter().zip(bases).zip(&sizes) {
                    let part: Box<dyn Part> = part;
                    part.move_into(base.add(row * size));
                }
            })
        };
        Ok(entity)
    }
}

impl World {
    /// Adds (or replaces) the builder's components on `entity`, leaving the
    /// builder empty.
    pub fn insert_built(
        &mut self,
        entity: Entity,
        builder: &mut EntityBuilder,
    ) -> Result<(), EntityError> {
        let location = self.core.location(entity)?;
        let (bundle, sizes) = runtime_bundle(&mut self.core, builder.parts.iter().map(|p| &**p));
        let parts = std::mem::take(&mut builder.parts);
        // SAFETY: `location` is the entity's; the writer fills every field.
        unsafe {
            self.core
                .insert_fields(entity, location, bundle, |bases, row| {
                    for ((part, &base), &size) in parts.into_iter().zip(bases).zip(&sizes) {
                        part.move_into(base.add(row * size));
                    }
                })
        };
        self.flush_hooks();
        Ok(())
    }
}
