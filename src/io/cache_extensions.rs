//! [`CacheExtensions`]: caches a higher layer hangs on a lower layer's session without the
//! lower layer knowing their types (the dataset session holds the index layer's caches this
//! way, so `lance/` imports nothing from `index/`).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A type map of shared caches, each created on first use.
#[derive(Debug, Clone, Default)]
pub(crate) struct CacheExtensions {
    slots: Arc<Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
}

impl CacheExtensions {
    /// The `T` of this session, created by `init` on first use.
    pub(crate) fn get_or_init<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Arc<T> {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(Ok(typed)) = slots
            .get(&TypeId::of::<T>())
            .cloned()
            .map(|s| s.downcast::<T>())
        {
            return typed;
        }
        let typed = Arc::new(init());
        slots.insert(TypeId::of::<T>(), Arc::<T>::clone(&typed));
        typed
    }

    /// Install `value` as this session's `T`, replacing any earlier one.
    #[cfg(test)]
    pub(crate) fn insert<T: Any + Send + Sync>(&self, value: T) {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        slots.insert(TypeId::of::<T>(), Arc::new(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_per_type_shared_by_clones() {
        let ext = CacheExtensions::default();
        let a = ext.get_or_init(|| 7u32);
        let b = ext.clone().get_or_init(|| 9u32);
        assert_eq!((*a, *b), (7, 7));
        ext.insert(11u32);
        assert_eq!(*ext.get_or_init(|| 0u32), 11);
        assert_eq!(*ext.get_or_init(|| "s"), "s");
    }
}
