//! Events: messages between systems, read by every reader exactly once.
//!
//! An [`Events<T>`] is a world resource holding two buffers. Writers append
//! to the current one; every event gets a sequence number. Each reader keeps
//! its own cursor, the number of the next event it has not read, and moves
//! it past an event only when it yields that event, so each reader sees each
//! event once, in the order sent, however it consumes its iterator and
//! whatever other readers do.
//!
//! **An event can be read from the moment it is sent until the second
//! [`WorldCore::update_events`] after that**, which turns over every event
//! type's buffers: the older buffer is dropped and the current one becomes
//! the older (the double buffering of bevy_ecs's events). Call it once per
//! frame, after all of the frame's schedules: an event then lives through
//! the rest of the frame it was sent in and the whole next frame, so every
//! reader that runs once per frame reads it, in whichever schedule it runs.
//! Running a schedule never turns the buffers over. A reader that skips two
//! frames misses what was dropped meanwhile, and [`EventReader::missed`]
//! says how many. A world whose loop never calls `update_events` keeps
//! every event it is sent.
//!
//! In a schedule, [`EventWriter<T>`] and [`EventReader<T>`] are system
//! parameters. A system that writes `T` events runs before the systems that
//! read them unless a `before`/`after` constraint says otherwise, so a
//! reader sees the same frame's events. The schedule adds the `Events<T>`
//! resource when a system first needs it. A reader's place is part of its
//! system's state, which is kept per world: one schedule run on worlds `a`
//! and `b` in turn reads each world's events once. Outside a schedule:
//! [`WorldCore::send_event`], [`World::event_cursor`] and
//! [`WorldCore::add_event`].

use crate::system::param::{ParamAccess, SystemParam, SystemRun};
use crate::world::{World, WorldCore};
use std::marker::PhantomData;
use std::ops::Deref;

/// The event buffers of one event type. See the module docs.
#[derive(Debug)]
pub struct Events<T> {
    /// The older buffer and the number of its first event.
    older: (Vec<T>, u64),
    /// The current buffer and the number of its first event.
    current: (Vec<T>, u64),
}

impl<T> Default for Events<T> {
    fn default() -> Self {
        Events {
            older: (Vec::new(), 0),
            current: (Vec::new(), 0),
        }
    }
}

impl<T> Events<T> {
    /// Sends `event`.
    pub fn send(&mut self, event: T) {
        self.current.0.push(event);
    }

    /// Sends every event of `events`, in order.
    pub fn send_batch(&mut self, events: impl IntoIterator<Item = T>) {
        self.current.0.extend(events);
    }

    /// The number the next event sent will get.
    pub fn next_number(&self) -> u64 {
        self.current.1 + self.current.0.len() as u64
    }

    /// The number of the oldest event still kept.
    pub fn oldest_number(&self) -> u64 {
        self.older.1
    }

    /// Events kept in both buffers.
    pub fn len(&self) -> usize {
        self.older.0.len() + self.current.0.len()
    }

    /// Whether no event is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Turns the buffers over: drops the older one's events, and the current
    /// one becomes the older.
    pub fn update(&mut self) {
        let next = self.next_number();
        let mut older = std::mem::replace(&mut self.current, (Vec::new(), next));
        std::mem::swap(&mut self.older, &mut older);
        // Reuse the dropped buffer's allocation for the new current one.
        older.0.clear();
        self.current.0 = older.0;
        self.current.1 = next;
    }

    /// How many kept events are numbered `from` or later.
    fn count_from(&self, from: u64) -> usize {
        let from = from.max(self.oldest_number());
        usize::try_from(self.next_number().saturating_sub(from)).unwrap_or(usize::MAX)
    }

    /// The event numbered `number`, if it is still kept.
    pub fn get(&self, number: u64) -> Option<&T> {
        let buffer = if number >= self.current.1 {
            &self.current
        } else {
            &self.older
        };
        let offset = number.checked_sub(buffer.1)?;
        buffer.0.get(usize::try_from(offset).ok()?)
    }

    /// The events numbered `from` and later, oldest first, with their numbers.
    pub fn since(&self, from: u64) -> impl Iterator<Item = (u64, &T)> + '_ {
        fn part<T>(buffer: &(Vec<T>, u64), from: u64) -> impl Iterator<Item = (u64, &T)> + '_ {
            let (events, first) = (&buffer.0, buffer.1);
            let skip = from.saturating_sub(first).min(events.len() as u64) as usize;
            events[skip..]
                .iter()
                .enumerate()
                .map(move |(i, e)| (first + (skip + i) as u64, e))
        }
        part(&self.older, from).chain(part(&self.current, from))
    }
}

/// Turns over the `Events<T>` resource, if the world has one.
fn update_events_of<T: Send + Sync + 'static>(world: &mut WorldCore) {
    if let Some(events) = world.resource_mut::<Events<T>>() {
        events.update();
    }
}

impl WorldCore {
    /// Adds the `Events<T>` resource (if missing) and has
    /// [`WorldCore::update_events`] turn it over.
    pub fn add_event<T: Send + Sync + 'static>(&mut self) {
        if self.resource::<Events<T>>().is_none() {
            self.insert_resource(Events::<T>::default());
        }
        // Keyed by type, not by the function pointer: one function can have
        // several addresses (one per codegen unit, and under Miri), which
        // would register it twice and turn the buffers over twice per run.
        let key = std::any::TypeId::of::<Events<T>>();
        if !self.event_updaters.iter().any(|&(k, _)| k == key) {
            self.event_updaters
                .push((key, update_events_of::<T> as fn(&mut WorldCore)));
        }
    }

    /// Turns over every event type added with [`WorldCore::add_event`]:
    /// call it once per frame, after the frame's schedules (see
    /// [`Events`](crate::Events) for an event's lifetime). No schedule run does it.
    pub fn update_events(&mut self) {
        for i in 0..self.event_updaters.len() {
            (self.event_updaters[i].1)(self);
        }
    }

    /// Sends `event` (the `Events<T>` resource is added if missing).
    pub fn send_event<T: Send + Sync + 'static>(&mut self, event: T) {
        self.add_event::<T>();
        self.resource_mut::<Events<T>>()
            .expect("just added")
            .send(event);
    }
}

impl World {
    /// A reader of `T` events for use outside a schedule, starting after
    /// the events sent so far.
    pub fn event_cursor<T: Send + Sync + 'static>(&mut self) -> EventCursor<T> {
        self.add_event::<T>();
        EventCursor {
            next: self.resource::<Events<T>>().map_or(0, Events::next_number),
            _marker: PhantomData,
        }
    }
}

/// A reader's position in an event stream: the number of the next event it
/// has not read.
#[derive(Debug)]
pub struct EventCursor<T> {
    next: u64,
    _marker: PhantomData<fn() -> T>,
}

impl<T> Default for EventCursor<T> {
    fn default() -> Self {
        EventCursor {
            next: 0,
            _marker: PhantomData,
        }
    }
}

impl<T> Clone for EventCursor<T> {
    fn clone(&self) -> Self {
        EventCursor {
            next: self.next,
            _marker: PhantomData,
        }
    }
}

impl<T: 'static> EventCursor<T> {
    /// The events not read yet, oldest first. The cursor moves past each
    /// event as the iterator yields it: an event the iterator does not
    /// reach stays unread. Events dropped before this cursor read them are
    /// skipped (and no longer counted by [`EventCursor::missed`]).
    pub fn read<'c, 'e>(&'c mut self, events: &'e Events<T>) -> EventIter<'c, 'e, T> {
        self.next = self.next.max(events.oldest_number());
        EventIter {
            next: &mut self.next,
            events,
        }
    }

    /// How many events were dropped before this cursor read them.
    pub fn missed(&self, events: &Events<T>) -> u64 {
        events.oldest_number().saturating_sub(self.next)
    }
}

/// The unread events of one reader, oldest first; see [`EventCursor::read`].
#[derive(Debug)]
pub struct EventIter<'c, 'e, T> {
    /// The reader's cursor, moved past each event yielded.
    next: &'c mut u64,
    events: &'e Events<T>,
}

impl<'e, T> Iterator for EventIter<'_, 'e, T> {
    type Item = &'e T;

    fn next(&mut self) -> Option<&'e T> {
        let number = (*self.next).max(self.events.oldest_number());
        let event = self.events.get(number)?;
        *self.next = number + 1;
        Some(event)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.events.count_from(*self.next);
        (left, Some(left))
    }
}

impl<T> ExactSizeIterator for EventIter<'_, '_, T> {}

impl<T> std::iter::FusedIterator for EventIter<'_, '_, T> {}

/// Sends `T` events (a system parameter).
pub struct EventWriter<'a, T: 'static> {
    events: &'a mut Events<T>,
}

impl<T> EventWriter<'_, T> {
    /// Sends `event`.
    pub fn send(&mut self, event: T) {
        self.events.send(event);
    }

    /// Sends every event of `events`, in order.
    pub fn send_batch(&mut self, events: impl IntoIterator<Item = T>) {
        self.events.send_batch(events);
    }
}

/// Reads `T` events, each once (a system parameter). See the module docs.
pub struct EventReader<'a, T: 'static> {
    events: &'a Events<T>,
    cursor: &'a mut EventCursor<T>,
}

impl<'a, T: 'static> EventReader<'a, T> {
    /// The events this system has not read yet, oldest first. The reader
    /// moves past each event as the iterator yields it, so an event the
    /// iterator does not reach is read by the next call (this run's or a
    /// later one's).
    pub fn read(&mut self) -> EventIter<'_, 'a, T> {
        self.cursor.read(self.events)
    }

    /// How many events were dropped before this system read them.
    pub fn missed(&self) -> u64 {
        self.cursor.missed(self.events)
    }

    /// How many events this system has not read yet.
    pub fn len(&self) -> usize {
        self.events.count_from(self.cursor.next)
    }

    /// Whether there is nothing new to read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Deref for EventWriter<'_, T> {
    type Target = Events<T>;
    fn deref(&self) -> &Events<T> {
        self.events
    }
}

/// Adds the `Events<T>` resource before the system first runs.
fn setup_events<T: Send + Sync + 'static>(world: &mut WorldCore) {
    world.add_event::<T>();
}

// SAFETY: writes exactly the `Events<T>` resource, recorded as a resource
// write, required, and added by the setup before the first run.
unsafe impl<T: Send + Sync + 'static> SystemParam for EventWriter<'_, T> {
    type State = ();
    type Item<'a>
        = EventWriter<'a, T>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) {
        let key = crate::query::AccessKey::of::<Events<T>>();
        access.resources.add_write(key);
        access.required_resources.push(key);
        access.event_writes.push(key);
        access.setup.push(setup_events::<T>);
    }

    unsafe fn fetch<'a>(_: &'a mut (), run: &'a SystemRun<'a>) -> EventWriter<'a, T>
    where
        Self: 'a,
    {
        // SAFETY: the schedule checked that the resource exists and runs no
        // other system touching it meanwhile (the write is recorded).
        let events = unsafe { run.world().resources().get_mut_unchecked::<Events<T>>() }
            .expect("checked before the run")
            .value;
        EventWriter { events }
    }
}

// SAFETY: reads exactly the `Events<T>` resource (recorded as a read,
// required, added by the setup) and its own cursor.
unsafe impl<T: Send + Sync + 'static> SystemParam for EventReader<'_, T> {
    type State = EventCursor<T>;
    type Item<'a>
        = EventReader<'a, T>
    where
        Self: 'a;

    fn describe(access: &mut ParamAccess) -> EventCursor<T> {
        let key = crate::query::AccessKey::of::<Events<T>>();
        access.resources.add_read(key);
        access.required_resources.push(key);
        access.event_reads.push(key);
        access.setup.push(setup_events::<T>);
        EventCursor::default()
    }

    unsafe fn fetch<'a>(
        cursor: &'a mut EventCursor<T>,
        run: &'a SystemRun<'a>,
    ) -> EventReader<'a, T>
    where
        Self: 'a,
    {
        let events = run
            .world()
            .resource::<Events<T>>()
            .expect("checked before the run");
        EventReader { events, cursor }
    }
}

/// The run condition of an event type: holds when events of type `T` were
/// sent that this condition has not seen yet (each instance keeps its own
/// place, as a reader does). See [`SystemConfig::run_if`](crate::SystemConfig::run_if).
pub fn on_event<T: Send + Sync + 'static>() -> crate::system::condition::ConditionDesc {
    use crate::system::condition::IntoCondition;
    (|mut events: EventReader<T>| events.read().count() > 0).into_condition()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_updates_drop_an_event_and_cursors_see_each_once() {
        let mut events = Events::default();
        let mut a = EventCursor::default();
        let mut b = EventCursor::default();
        events.send(1);
        events.send(2);
        assert_eq!(a.read(&events).copied().collect::<Vec<_>>(), [1, 2]);
        events.update();
        events.send(3);
        assert_eq!(a.read(&events).copied().collect::<Vec<_>>(), [3]);
        assert_eq!(b.read(&events).copied().collect::<Vec<_>>(), [1, 2, 3]);
        events.update();
        events.update();
        events.send(4);
        let mut late = EventCursor::<i32>::default();
        assert_eq!(late.missed(&events), 3);
        assert_eq!(late.read(&events).copied().collect::<Vec<_>>(), [4]);
        assert_eq!(a.read(&events).count(), 1);
        assert_eq!(events.len(), 1);
    }

    #[test]
    fn a_cursor_moves_only_past_the_events_yielded() {
        let mut events = Events::default();
        events.send_batch([0, 1, 2]);
        let mut cursor = EventCursor::default();
        assert_eq!(cursor.read(&events).len(), 3);
        assert_eq!(cursor.read(&events).next(), Some(&0));
        assert_eq!(cursor.read(&events).next(), Some(&1));
        events.update();
        events.send(3);
        let mut rest = cursor.read(&events);
        assert_eq!(rest.size_hint(), (2, Some(2)));
        assert_eq!(rest.by_ref().copied().collect::<Vec<_>>(), [2, 3]);
        assert_eq!(rest.next(), None);
        assert_eq!(cursor.missed(&events), 0);
        assert_eq!(events.get(0), Some(&0), "kept through one turnover");
        assert_eq!(events.get(3), Some(&3));
        assert_eq!(events.get(4), None);
        events.update();
        assert_eq!(events.get(0), None, "dropped by the second");
        assert_eq!(events.get(3), Some(&3));
    }
}
