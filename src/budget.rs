//! Large values loaded on first use, shared by the threads of a process and kept within a
//! byte budget: beyond it the least recently loaded-or-asked-for one is dropped (holders of
//! an `Arc` keep theirs). The solver's finished slices (`solve::solved::SolvedStore`) and
//! the probe's decoded slices (`db::decoded::DecodedStore`) are such caches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A value's size in the budget.
pub trait Bytes {
    fn bytes(&self) -> usize;
}

pub struct BudgetCache<V> {
    budget: usize,
    inner: Mutex<Inner<V>>,
}

struct Inner<V> {
    /// By key: the value and when it was last asked for.
    values: HashMap<u64, (Arc<V>, u64)>,
    clock: u64,
    bytes: usize,
}

impl<V: Bytes> BudgetCache<V> {
    pub fn new(budget: usize) -> BudgetCache<V> {
        BudgetCache {
            budget,
            inner: Mutex::new(Inner {
                values: HashMap::new(),
                clock: 0,
                bytes: 0,
            }),
        }
    }

    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The value of `key`, loading it with `load` if it is not held.
    pub fn get_or_load<E>(
        &self,
        key: u64,
        load: impl FnOnce() -> Result<V, E>,
    ) -> Result<Arc<V>, E> {
        {
            let mut g = self.inner.lock().expect("budget cache lock");
            g.clock += 1;
            let now = g.clock;
            if let Some((v, stamp)) = g.values.get_mut(&key) {
                *stamp = now;
                return Ok(v.clone());
            }
        }
        // Loaded outside the lock; two threads may both load a value, which is harmless.
        let loaded = Arc::new(load()?);
        let mut g = self.inner.lock().expect("budget cache lock");
        g.clock += 1;
        let now = g.clock;
        if !g.values.contains_key(&key) {
            g.bytes += loaded.bytes();
            g.values.insert(key, (loaded.clone(), now));
        }
        while g.bytes > self.budget && g.values.len() > 1 {
            let (&old, _) = g
                .values
                .iter()
                .filter(|(k, _)| **k != key)
                .min_by_key(|(_, (_, stamp))| *stamp)
                .expect("another value");
            let (v, _) = g.values.remove(&old).expect("present");
            g.bytes -= v.bytes();
        }
        Ok(loaded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Block(usize);
    impl Bytes for Block {
        fn bytes(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn the_least_recently_asked_for_goes_first_and_holders_keep_theirs() {
        let cache = BudgetCache::new(10);
        let load = |n| move || Ok::<_, ()>(Block(n));
        let a = cache.get_or_load(1, load(4)).unwrap();
        cache.get_or_load(2, load(4)).unwrap();
        // Asking for 1 again makes 2 the oldest: loading 3 drops 2.
        assert!(Arc::ptr_eq(&a, &cache.get_or_load(1, load(4)).unwrap()));
        cache.get_or_load(3, load(4)).unwrap();
        let mut loaded = false;
        cache
            .get_or_load(2, || {
                loaded = true;
                Ok::<_, ()>(Block(4))
            })
            .unwrap();
        assert!(loaded, "2 was dropped");
        // A failed load keeps nothing; a value over the budget is kept alone.
        assert!(cache.get_or_load(9, || Err::<Block, _>("gone")).is_err());
        let big = cache.get_or_load(4, load(50)).unwrap();
        assert_eq!(big.bytes(), 50);
        assert!(Arc::ptr_eq(&big, &cache.get_or_load(4, load(1)).unwrap()));
        assert_eq!(a.bytes(), 4, "a holder keeps its value");
    }
}
