//! The probe's block cache: least recently used blocks are dropped first, in shards so that
//! threads probing different blocks rarely wait for each other.

use super::format::Block;
use crate::solve::solved::KeyMap;
use std::sync::Mutex;

const SHARDS: usize = 16;
const NIL: u32 = u32::MAX;

struct Slot {
    key: u64,
    block: Box<Block>,
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

    /// `f` of the cached block for `key`, or of the one `load` reads (then cached). `f` runs
    /// under the shard's lock: a probe decodes a few dozen bytes, and sharing no reference
    /// to the block saves two atomic counts per probe. A failed load is returned and nothing
    /// is cached.
    #[inline]
    pub fn with_block<R, E>(
        &self,
        key: u64,
        load: impl FnOnce() -> Result<Box<Block>, E>,
        f: impl FnOnce(&Block) -> Result<R, E>,
    ) -> Result<R, E> {
        {
            let mut s = self.shard(key).lock().unwrap_or_else(|p| p.into_inner());
            if let Some(&i) = s.map.get(&key) {
                if s.head != i {
                    s.unlink(i);
                    s.push_front(i);
                }
                return f(&s.slots[i as usize].block);
            }
        }
        self.load_and_use(key, load, f)
    }

    #[cold]
    fn load_and_use<R, E>(
        &self,
        key: u64,
        load: impl FnOnce() -> Result<Box<Block>, E>,
        f: impl FnOnce(&Block) -> Result<R, E>,
    ) -> Result<R, E> {
        // Read outside the lock: other threads keep probing while this one waits on disk.
        self.misses
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let block = load()?;
        let mut s = self.shard(key).lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&i) = s.map.get(&key) {
            return f(&s.slots[i as usize].block);
        }
        let i = if s.slots.len() < s.capacity {
            s.slots.push(Slot {
                key,
                block,
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
            s.slots[victim as usize].block = block;
            victim
        };
        s.map.insert(key, i);
        s.push_front(i);
        f(&s.slots[i as usize].block)
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
        let tag = |b: &Block| Ok(b.0[0]);
        assert_eq!(cache.with_block(a, load(1), tag).unwrap(), 1);
        assert_eq!(cache.with_block(a, load(9), tag).unwrap(), 1, "hit");
        assert_eq!(cache.with_block(b, load(2), tag).unwrap(), 2);
        assert_eq!(
            cache.with_block(a, load(3), tag).unwrap(),
            3,
            "a was evicted"
        );
        assert_eq!(cache.misses(), 3);
        assert!(
            cache
                .with_block(b, || Err::<Box<Block>, _>(()), tag)
                .is_err()
        );
    }
}
