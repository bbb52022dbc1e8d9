//! Pair key -> slot: the merge loop's table of pairs, open-addressed (linear probing) with the
//! key stored beside its slot, 12 bytes an entry.
//!
//! A lookup reads one entry (with its neighbours, one cache line most often) and never the
//! slots' own key array, and the place it will read is known from the key's hash alone, so that
//! a caller with many keys to look up asks for their entries ahead (`prefetch`) and the cache
//! misses overlap. On a large alphabet (SuperBPE's stage 2 when every pair had a slot: 0.8-1.1M
//! pairs, tables of tens of MB; a character-level CJK alphabet) most lookups miss the caches: with this table in place of a `hashbrown` table of slot
//! indices (4 bytes and a control byte a pair, the key read from the slots' array), stage 2's
//! merge loop at 32k on 19.5 MB of English went from about 0.14 to 0.09 s. The price is memory:
//! 12 bytes a place, at most three entries per four places (the index's tables at 32k: 24 MB
//! where `hashbrown`'s took 5).

use crate::memory::prefetch;

/// The hash of a pair key (FxHash, as the rest of the trainer): its low bits choose the place.
#[inline]
pub(super) fn pair_hash(k: u64) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(k)
}

/// No slot: an empty place.
const EMPTY: u32 = u32::MAX;

#[derive(Clone, Copy)]
#[repr(C)]
struct Entry {
    lo: u32,
    hi: u32,
    slot: u32,
}

const FREE: Entry = Entry { lo: 0, hi: 0, slot: EMPTY };

impl Entry {
    #[inline]
    fn key(&self) -> u64 {
        (self.hi as u64) << 32 | self.lo as u64
    }
}

#[derive(Default)]
pub(super) struct PairTable {
    e: Vec<Entry>,
    len: usize,
}

impl PairTable {
    /// A table that holds `n` keys without growing.
    pub fn with_capacity(n: usize) -> PairTable {
        let places = (n + n.div_ceil(3)).next_power_of_two().max(16);
        PairTable { e: vec![FREE; places], len: 0 }
    }

    #[inline]
    fn mask(&self) -> usize {
        self.e.len().wrapping_sub(1)
    }

    /// The slot of key `k` (`h`: its `pair_hash`).
    #[inline]
    pub fn get(&self, k: u64, h: u64) -> Option<u32> {
        if self.e.is_empty() {
            return None;
        }
        let mask = self.mask();
        let mut i = h as usize & mask;
        loop {
            let e = &self.e[i];
            if e.slot == EMPTY {
                return None;
            }
            if e.key() == k {
                return Some(e.slot);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds key `k` (`h`: its `pair_hash`), which is not in the table, with its slot.
    #[inline]
    pub fn insert_unique(&mut self, k: u64, h: u64, slot: u32) {
        debug_assert!(slot != EMPTY);
        if 4 * (self.len + 1) > 3 * self.e.len() {
            self.grow();
        }
        self.place(Entry { lo: k as u32, hi: (k >> 32) as u32, slot }, h);
        self.len += 1;
    }

    #[inline]
    fn place(&mut self, entry: Entry, h: u64) {
        let mask = self.mask();
        let mut i = h as usize & mask;
        while self.e[i].slot != EMPTY {
            i = (i + 1) & mask;
        }
        self.e[i] = entry;
    }

    fn grow(&mut self) {
        let places = (2 * self.e.len()).max(16);
        debug_assert!(4 * self.len <= 3 * places);
        let old = std::mem::replace(&mut self.e, vec![FREE; places]);
        for e in old.into_iter().filter(|e| e.slot != EMPTY) {
            self.place(e, pair_hash(e.key()));
        }
    }

    /// Asks for the place where key of hash `h` would be found, without waiting for it.
    #[inline]
    pub fn prefetch(&self, h: u64) {
        if !self.e.is_empty() {
            prefetch(&self.e[h as usize & self.mask()]);
        }
    }

    /// Every slot in the table.
    pub fn slots_mut(&mut self) -> impl Iterator<Item = &mut u32> {
        self.e.iter_mut().filter(|e| e.slot != EMPTY).map(|e| &mut e.slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_it_holds_across_growth_and_collisions() {
        let mut t = PairTable::default();
        assert_eq!(t.get(7, pair_hash(7)), None);
        // sized for 100: grows past it, as from nothing
        let mut t100 = PairTable::with_capacity(100);
        assert_eq!(t100.e.len(), 256);
        for k in 0..1000u64 {
            t100.insert_unique(k, pair_hash(k), k as u32);
        }
        assert!((0..1000u64).all(|k| t100.get(k, pair_hash(k)) == Some(k as u32)));
        // keys that share their low hash bits (the same place) probe past each other
        let keys: Vec<u64> = (0..5000u64).map(|i| ((i % 97) << 32) | (i * 3)).collect();
        for (s, &k) in keys.iter().enumerate() {
            assert_eq!(t.get(k, pair_hash(k)), None);
            t.insert_unique(k, pair_hash(k), s as u32);
        }
        for (s, &k) in keys.iter().enumerate() {
            assert_eq!(t.get(k, pair_hash(k)), Some(s as u32));
        }
        assert_eq!(t.len, 5000);
        for s in t.slots_mut() {
            *s += 1;
        }
        assert_eq!(t.get(keys[10], pair_hash(keys[10])), Some(11));
    }
}
