//! Small values of any type, compared by type and value: the common core
//! of schedule labels and system sets.
//!
//! A [`DynValue`] boxes a `Clone + Eq + Hash + Debug` value and compares
//! equal to another only when both have the same type and equal values.
//! Schedules hold a handful of them and compare them linearly.

use std::any::{Any, TypeId};
use std::fmt::Debug;
use std::hash::{Hash, Hasher};

/// A value usable as a key: what [`DynValue`] boxes.
pub trait KeyValue: Send + Sync + Debug + 'static {
    /// A boxed copy.
    fn boxed_key(&self) -> DynValue;
    /// Whether `other` is the same type with an equal value.
    fn same_as(&self, other: &dyn KeyValue) -> bool;
    /// The value as `Any`.
    fn as_any(&self) -> &dyn Any;
}

impl<T: Clone + Eq + Hash + Debug + Send + Sync + 'static> KeyValue for T {
    fn boxed_key(&self) -> DynValue {
        DynValue(Box::new(self.clone()))
    }
    fn same_as(&self, other: &dyn KeyValue) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A boxed value of any [`KeyValue`] type.
pub struct DynValue(Box<dyn KeyValue>);

impl DynValue {
    /// Whether this is `value` (same type, equal value).
    pub fn is(&self, value: &dyn KeyValue) -> bool {
        self.0.same_as(value)
    }

    /// The boxed value's type.
    pub fn value_type(&self) -> TypeId {
        self.0.as_any().type_id()
    }
}

impl Debug for DynValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for DynValue {
    fn eq(&self, other: &Self) -> bool {
        self.0.same_as(&*other.0)
    }
}

impl Eq for DynValue {}

impl Hash for DynValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value_type().hash(state);
        format!("{:?}", self.0).hash(state);
    }
}

impl Clone for DynValue {
    fn clone(&self) -> Self {
        self.0.boxed_key()
    }
}
