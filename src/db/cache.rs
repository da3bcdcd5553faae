//! The probe's block cache: a fixed number of blocks in shards, so that threads probing
//! different blocks rarely wait for each other.
//!
//! Replacement is the CLOCK rule, the usual approximation of least-recently-used: a hit
//! only marks its slot as used, and a miss sweeps a hand over the shard's slots, giving
//! each used one a second chance (clearing the mark) and replacing the first unused one.
//! Exact LRU would relink two neighbouring slots on every hit, two more cache misses on a
//! probe's critical path.
//!
//! A block is found without hashing: its slice keeps, per block, a hint of the slot that
//! last held it ([`SlotHint`]). The hint is checked against the slot's key under the
//! shard's lock, so a stale hint (the block was replaced since) is just a miss.

use super::container::Block;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};

const SHARDS: usize = 16;
/// Slot numbers in a hint: shard in the top bits, slot within the shard below.
const SLOT_BITS: u32 = 27;
const NO_SLOT: u32 = u32::MAX;

/// The slot within its shard that a hint's slot number names.
#[inline(always)]
fn slot_in_shard(hint: u32) -> usize {
    (hint & ((1 << SLOT_BITS) - 1)) as usize
}

/// Where a block was last cached (one per block of an open slice).
pub struct SlotHint(AtomicU32);

impl Default for SlotHint {
    fn default() -> SlotHint {
        SlotHint(AtomicU32::new(NO_SLOT))
    }
}

/// The block is kept inline, beside its key: a hit touches one place.
struct Slot {
    key: u64,
    used: bool,
    block: Block,
}

struct Shard {
    slots: Vec<Slot>,
    hand: usize,
    capacity: usize,
    /// Probes answered from this shard (counted under its lock, which a hit holds anyway:
    /// a shared counter would be one more contended cache line per probe).
    hits: u64,
}

impl Shard {
    /// The slot that slot number `hint` names, if it holds `key` (a hint may be stale).
    fn hinted(&mut self, hint: u32, key: u64) -> Option<&mut Slot> {
        self.slots
            .get_mut(slot_in_shard(hint))
            .filter(|slot| slot.key == key)
    }

    /// The slot for a new block: a free one while the shard fills, then CLOCK's victim.
    fn victim(&mut self) -> Option<usize> {
        if self.slots.len() < self.capacity {
            return None;
        }
        loop {
            let i = self.hand;
            self.hand = (self.hand + 1) % self.slots.len();
            let slot = &mut self.slots[i];
            if !slot.used {
                return Some(i);
            }
            slot.used = false;
        }
    }
}

/// Asks for every cache line of `block` at once: a probe reads the sync points, then the
/// payload where its sync point says, and fetching those lines one after the other would
/// cost a memory round trip each.
#[inline(always)]
fn prefetch(block: &Block) {
    for line in block.bytes.chunks(64) {
        prefetch_line(line.as_ptr());
    }
}

/// Asks the memory for the cache line holding `byte`, without waiting for it: a hint that
/// reads nothing, so any address is safe (the solver's walks use it too).
#[inline(always)]
pub fn prefetch_line(byte: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(byte.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = byte;
}

/// Blocks keyed by `(slice number, block number)` packed into a `u64`.
pub struct BlockCache {
    shards: Vec<Mutex<Shard>>,
    misses: AtomicU64,
}

impl BlockCache {
    /// A cache of about `bytes` (at least one block per shard).
    pub fn new(bytes: usize) -> BlockCache {
        let blocks = bytes / std::mem::size_of::<Slot>();
        let per_shard = (blocks / SHARDS).clamp(1, (1 << SLOT_BITS) - 1);
        let shards = (0..SHARDS)
            .map(|_| {
                // Room for every slot at once (address space only until used), so that the
                // slots never move and can live in huge pages.
                let mut slots = Vec::new();
                if slots.try_reserve_exact(per_shard).is_ok() {
                    crate::mem::advise_huge_pages(&slots);
                }
                Mutex::new(Shard {
                    slots,
                    hand: 0,
                    capacity: per_shard,
                    hits: 0,
                })
            })
            .collect();
        BlockCache {
            shards,
            misses: Default::default(),
        }
    }

    fn shard_of(key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % SHARDS
    }

    /// `f` of the cached block for `key` (whose slot `hint` remembers), or of the one `load`
    /// reads (then cached). `f` runs under the shard's lock: a probe decodes a few dozen
    /// bytes, and sharing no reference to the block saves two atomic counts per probe. A
    /// failed load is returned and nothing is cached.
    #[inline]
    pub fn with_block<R, E>(
        &self,
        key: u64,
        hint: &SlotHint,
        load: impl FnOnce() -> Result<Box<Block>, E>,
        f: impl FnOnce(&Block) -> Result<R, E>,
    ) -> Result<R, E> {
        if let Some((s, i)) = self.cached_slot(key, hint) {
            return f(&s.slots[i].block);
        }
        self.load_and_use(key, hint, load, f)
    }

    /// The locked shard and slot holding the block for `key`, marked used and counted as a
    /// hit; `None` when it is not cached. A cached block's hint always names its slot (set
    /// when it was cached), so a missing or stale hint means the block is not cached.
    #[inline(always)]
    fn cached_slot(&self, key: u64, hint: &SlotHint) -> Option<(MutexGuard<'_, Shard>, usize)> {
        let h = hint.0.load(Relaxed);
        if h == NO_SLOT {
            return None;
        }
        let mut s = self.shards[(h >> SLOT_BITS) as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let slot = s.hinted(h, key)?;
        slot.used = true;
        prefetch(&slot.block);
        s.hits += 1;
        Some((s, slot_in_shard(h)))
    }

    /// `f` of the cached block for `key`, or `None` when it is not cached (nothing is read):
    /// an engine's conditional lookup, which must not wait on the disk.
    #[inline]
    pub fn with_cached_block<R>(
        &self,
        key: u64,
        hint: &SlotHint,
        f: impl FnOnce(&Block) -> R,
    ) -> Option<R> {
        self.cached_slot(key, hint)
            .map(|(s, i)| f(&s.slots[i].block))
    }

    #[cold]
    fn load_and_use<R, E>(
        &self,
        key: u64,
        hint: &SlotHint,
        load: impl FnOnce() -> Result<Box<Block>, E>,
        f: impl FnOnce(&Block) -> Result<R, E>,
    ) -> Result<R, E> {
        // Read outside the lock: other threads keep probing while this one waits on disk.
        self.misses.fetch_add(1, Relaxed);
        let block = load()?;
        let shard = Self::shard_of(key);
        let mut s = self.shards[shard].lock().unwrap_or_else(|p| p.into_inner());
        // Another thread may have cached the same block meanwhile (always in this shard,
        // the key's): use its copy rather than keep two.
        let h = hint.0.load(Relaxed);
        if h != NO_SLOT
            && (h >> SLOT_BITS) as usize == shard
            && let Some(slot) = s.hinted(h, key)
        {
            return f(&slot.block);
        }
        let slot = Slot {
            key,
            used: true,
            block: *block,
        };
        let i = match s.victim() {
            Some(i) => {
                s.slots[i] = slot;
                i
            }
            None => {
                s.slots.push(slot);
                s.slots.len() - 1
            }
        };
        hint.0
            .store((shard as u32) << SLOT_BITS | i as u32, Relaxed);
        f(&s.slots[i].block)
    }

    /// Blocks read from disk so far.
    pub fn misses(&self) -> u64 {
        self.misses.load(Relaxed)
    }

    /// Probes answered by a cached block so far.
    pub fn hits(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).hits)
            .sum()
    }

    /// The most memory the cache takes when full, in bytes.
    pub fn capacity_bytes(&self) -> usize {
        self.shards.len()
            * (std::mem::size_of::<Mutex<Shard>>()
                + self.shards[0]
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .capacity
                    * std::mem::size_of::<Slot>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(tag: u8) -> Box<Block> {
        let mut b = Box::new(Block {
            bytes: [0; 1032],
            first: 0,
        });
        b.bytes[0] = tag;
        b
    }

    #[test]
    fn a_block_not_used_since_the_hand_passed_goes_first() {
        // One block per shard: keys of the same shard replace each other.
        let cache = BlockCache::new(0);
        let same_shard: Vec<u64> = (0..1000u64)
            .filter(|&k| BlockCache::shard_of(k) == BlockCache::shard_of(0))
            .take(2)
            .collect();
        let (a, b) = (same_shard[0], same_shard[1]);
        let (ha, hb) = (SlotHint::default(), SlotHint::default());
        let load = |t| move || Ok::<_, ()>(block(t));
        let tag = |b: &Block| Ok(b.bytes[0]);
        assert_eq!(cache.with_block(a, &ha, load(1), tag).unwrap(), 1);
        assert_eq!(cache.with_block(a, &ha, load(9), tag).unwrap(), 1, "hit");
        assert_eq!(cache.with_block(b, &hb, load(2), tag).unwrap(), 2);
        assert_eq!(
            cache.with_block(a, &ha, load(3), tag).unwrap(),
            3,
            "a was replaced: its hint is stale"
        );
        assert_eq!(cache.misses(), 3);
        assert!(
            cache
                .with_block(b, &hb, || Err::<Box<Block>, _>(()), tag)
                .is_err()
        );

        // Four slots in the shard: the used ones get a second chance.
        let mut s = Shard {
            slots: Vec::new(),
            hand: 0,
            capacity: 4,
            hits: 0,
        };
        for key in 0..4 {
            assert_eq!(s.victim(), None);
            s.slots.push(Slot {
                key,
                used: key != 2,
                block: *block(0),
            });
        }
        assert_eq!(s.victim(), Some(2), "the only slot not used");
        s.slots[2].used = true;
        assert_eq!(s.victim(), Some(0), "all were used: the hand came round");
    }
}
