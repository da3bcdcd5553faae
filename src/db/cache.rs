//! The probe's block cache: least recently used blocks are dropped first, in shards so that
//! threads probing different blocks rarely wait for each other.

use super::format::Block;
use crate::solve::solved::KeyMap;
use std::sync::{Arc, Mutex};

const SHARDS: usize = 16;
const NIL: u32 = u32::MAX;

struct Slot {
    key: u64,
    block: Arc<Block>,
    prev: u32,
    next: u32,
}

/// One shard: a hash map into slots kept on a doubly linked recency list.
struct Shard {
    map: KeyMap<u32>,
    slots: Vec<Slot>,
    head: u32,
    tail: u32,
    capacity: usize,
}

impl Shard {
    fn unlink(&mut self, i: u32) {
        let (p, n) = (self.slots[i as usize].prev, self.slots[i as usize].next);
        match p {
            NIL => self.head = n,
            p => self.slots[p as usize].next = n,
        }
        match n {
            NIL => self.tail = p,
            n => self.slots[n as usize].prev = p,
        }
    }

    fn push_front(&mut self, i: u32) {
        self.slots[i as usize].prev = NIL;
        self.slots[i as usize].next = self.head;
        if self.head != NIL {
            self.slots[self.head as usize].prev = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }
}

/// Blocks keyed by `(slice number, block number)` packed into a `u64`.
pub struct BlockCache {
    shards: Vec<Mutex<Shard>>,
    misses: std::sync::atomic::AtomicU64,
}

impl BlockCache {
    /// A cache of about `bytes` (at least one block per shard).
    pub fn new(bytes: usize) -> BlockCache {
        let blocks = bytes / std::mem::size_of::<Block>();
        let per_shard = (blocks / SHARDS).max(1);
        let shards = (0..SHARDS)
            .map(|_| {
                Mutex::new(Shard {
                    map: KeyMap::default(),
                    slots: Vec::new(),
                    head: NIL,
                    tail: NIL,
                    capacity: per_shard,
                })
            })
            .collect();
        BlockCache {
            shards,
            misses: Default::default(),
        }
    }

    fn shard(&self, key: u64) -> &Mutex<Shard> {
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60;
        &self.shards[h as usize % SHARDS]
    }

    /// The cached block for `key`, or the one `load` reads (then cached). A failed load is
    /// returned and nothing is cached.
    pub fn get_or_load<E>(
        &self,
        key: u64,
        load: impl FnOnce() -> Result<Box<Block>, E>,
    ) -> Result<Arc<Block>, E> {
        {
            let mut s = self.shard(key).lock().unwrap_or_else(|p| p.into_inner());
            if let Some(&i) = s.map.get(&key) {
                s.unlink(i);
                s.push_front(i);
                return Ok(s.slots[i as usize].block.clone());
            }
        }
        // Read outside the lock: other threads keep probing while this one waits on disk.
        self.misses
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let block: Arc<Block> = Arc::from(load()?);
        let mut s = self.shard(key).lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&i) = s.map.get(&key) {
            return Ok(s.slots[i as usize].block.clone());
        }
        let i = if s.slots.len() < s.capacity {
            s.slots.push(Slot {
                key,
                block: block.clone(),
                prev: NIL,
                next: NIL,
            });
            (s.slots.len() - 1) as u32
        } else {
            let victim = s.tail;
            s.unlink(victim);
            let old = s.slots[victim as usize].key;
            s.map.remove(&old);
            s.slots[victim as usize].key = key;
            s.slots[victim as usize].block = block.clone();
            victim
        };
        s.map.insert(key, i);
        s.push_front(i);
        Ok(block)
    }

    /// Blocks read from disk so far.
    pub fn misses(&self) -> u64 {
        self.misses.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(tag: u8) -> Box<Block> {
        let mut b = Box::new(Block([0; 1032]));
        b.0[0] = tag;
        b
    }

    #[test]
    fn least_recently_used_goes_first() {
        // One block per shard: keys that land in the same shard evict each other.
        let cache = BlockCache::new(0);
        let same_shard: Vec<u64> = (0..1000u64)
            .filter(|&k| std::ptr::eq(cache.shard(k), cache.shard(0)))
            .take(2)
            .collect();
        let (a, b) = (same_shard[0], same_shard[1]);
        let load = |t| move || Ok::<_, ()>(block(t));
        assert_eq!(cache.get_or_load(a, load(1)).unwrap().0[0], 1);
        assert_eq!(cache.get_or_load(a, load(9)).unwrap().0[0], 1, "hit");
        assert_eq!(cache.get_or_load(b, load(2)).unwrap().0[0], 2);
        assert_eq!(
            cache.get_or_load(a, load(3)).unwrap().0[0],
            3,
            "a was evicted"
        );
        assert_eq!(cache.misses(), 3);
        assert!(
            cache
                .get_or_load(b, || Err::<Box<Block>, _>("bad"))
                .is_err()
        );
    }
}
