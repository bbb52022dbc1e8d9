//! The byte-string → rank table that the BPE encoder probes millions of times per megabyte.
//!
//! Why not `FxHashMap<Vec<u8>, u32>`: a probe there hashes the slice byte by byte and then
//! follows the stored `Vec`'s pointer to compare, so a hit costs two cache misses, and most
//! probes made while merging are for pairs that are *not* tokens. Here a key is read as at
//! most two overlapping 8-byte words (the trick of wyhash-style short-input hashing), which
//! for a key of known length up to 16 bytes identify it exactly. The slot stores those words,
//! the length and the rank inline, so a probe for a short key touches one cache line: hash
//! two words, compare three fields. Keys longer than 16 bytes (a few percent of a GPT
//! vocabulary, and rarely probed: only whole pieces are that long) keep their first word
//! inline and their bytes in an arena, compared only when length and first word agree.
//!
//! Open addressing with linear probing, at most 50% full (cl100k: 6 MB, o200k: 12 MB), so a
//! miss usually stops at the first or second slot.
//!
//! In front of the slots sits a one-bit-per-slot filter of about 16 bits per key (cl100k: 256 KB,
//! o200k: 512 KB), indexed by other bits of the same hash. It fits in L2 cache, while the slots
//! (several MB) live in L3: two thirds of the probes a merge loop makes on Chinese text are for
//! pairs that are not tokens, and the filter turns about 95% of those into one L2 read.
//!
//! Two-byte keys skip the hash table: they are 40% of the probes a merge loop makes (every
//! piece starts as single bytes, and UTF-8 text merges byte pairs first), and all 65,536 of
//! them fit a direct array of 256 KB whose hot part stays in L1/L2 cache.

use crate::encode::frozen::{Reader, Writer};
use crate::encode::table::{Plain, Table};

/// One slot: `len == 0` marks it empty (no key is empty: an empty token is not looked up).
/// `repr(C)`: the frozen layout (`freeze`) is these fields in this order, which a thawed table
/// is read as in place.
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Slot {
    /// First word of the key.
    a: u64,
    /// Second word of the key (len <= 16), or the key's offset in `arena` (len > 16).
    b: u64,
    len: u32,
    rank: u32,
}

#[allow(unsafe_code)]
// SAFETY: four integers (8 + 8 + 4 + 4 bytes, `repr(C)`, alignment 8): no padding, and every
// bit pattern is some slot (a slot that names no real key only makes a lookup miss).
unsafe impl Plain for Slot {}

/// The tables are owned when built here, read in place when thawed (`encode/table.rs`).
pub struct RankTable {
    /// rank of each two-byte key (b0 << 8 | b1), or u32::MAX
    pairs: Table<u32>,
    slots: Table<Slot>,
    mask: usize,
    /// bit (h >> 32) & filter_mask is set for every key's hash h
    filter: Table<u64>,
    filter_mask: usize,
    arena: Table<u8>,
    max_len: usize,
}

const INLINE: usize = 16;

#[inline(always)]
fn read8(k: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(k[at..at + 8].try_into().unwrap())
}

#[inline(always)]
fn read4(k: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(k[at..at + 4].try_into().unwrap()) as u64
}

/// Two words that, together with the length, identify a key of up to 16 bytes (overlapping
/// reads: bytes 0..8 and len-8..len, or 0..4 and len-4..len, or first/middle/last byte).
/// For longer keys they are the first and last 8 bytes, used for hashing only.
#[inline(always)]
fn words(k: &[u8]) -> (u64, u64) {
    let n = k.len();
    if n >= 8 {
        (read8(k, 0), read8(k, n - 8))
    } else if n >= 4 {
        (read4(k, 0) | (read4(k, n - 4) << 32), 0)
    } else if n > 0 {
        (((k[0] as u64) << 16) | ((k[n / 2] as u64) << 8) | k[n - 1] as u64, 0)
    } else {
        (0, 0)
    }
}

/// Folded 64×64→128 multiply (as in wyhash): cheap, and mixes every input bit into the low bits.
#[inline(always)]
fn hash(a: u64, b: u64, n: usize) -> usize {
    let x = a ^ 0x243f_6a88_85a3_08d3;
    let y = b ^ 0x1319_8a2e_0370_7344 ^ ((n as u64) << 56);
    let r = (x as u128).wrapping_mul(y as u128);
    ((r as u64) ^ ((r >> 64) as u64)) as usize
}

impl RankTable {
    /// An empty table sized for `n` keys.
    pub fn with_capacity(n: usize) -> RankTable {
        let cap = (n.max(8) * 2).next_power_of_two();
        let bits = (n.max(8) * 16).next_power_of_two();
        RankTable {
            pairs: vec![u32::MAX; 1 << 16].into(),
            slots: vec![Slot::default(); cap].into(),
            mask: cap - 1,
            filter: vec![0; bits / 64].into(),
            filter_mask: bits - 1,
            arena: Vec::new().into(),
            max_len: 0,
        }
    }

    /// Inserts `key` → `rank`; returns false (and changes nothing) if `key` is already present.
    pub fn insert(&mut self, key: &[u8], rank: u32) -> bool {
        assert!(!key.is_empty() && key.len() < u32::MAX as usize, "token keys are 1..4G bytes");
        if self.get(key).is_some() {
            return false;
        }
        if key.len() == 2 {
            assert!(rank != u32::MAX, "rank u32::MAX is reserved");
            self.pairs.edit()[(key[0] as usize) << 8 | key[1] as usize] = rank;
            self.max_len = self.max_len.max(2);
            return true;
        }
        let (a, mut b) = words(key);
        let h = hash(a, b, key.len());
        let bit = (h >> 32) & self.filter_mask;
        self.filter.edit()[bit / 64] |= 1 << (bit % 64);
        let mut i = h & self.mask;
        while self.slots[i].len != 0 {
            i = (i + 1) & self.mask;
        }
        if key.len() > INLINE {
            b = self.arena.len() as u64;
            self.arena.edit().extend_from_slice(key);
        }
        self.slots.edit()[i] = Slot { a, b, len: key.len() as u32, rank };
        self.max_len = self.max_len.max(key.len());
        true
    }

    /// The rank of `key`, if it is a token.
    #[inline(always)]
    pub fn get(&self, key: &[u8]) -> Option<u32> {
        let n = key.len();
        if n == 2 {
            let r = self.pairs[(key[0] as usize) << 8 | key[1] as usize];
            return if r == u32::MAX { None } else { Some(r) };
        }
        if n == 0 || n > self.max_len {
            return None;
        }
        let (a, b) = words(key);
        let h = hash(a, b, n);
        let bit = (h >> 32) & self.filter_mask;
        if self.filter[bit / 64] & (1 << (bit % 64)) == 0 {
            return None;
        }
        let mut i = h & self.mask;
        // At most one pass over the slots: a table read in place from a file that something
        // changed after its checksum (`encode::table`) may have no empty slot left.
        let mut left = self.mask;
        loop {
            let s = &self.slots[i];
            if s.len == n as u32 && s.a == a {
                let same = if n <= INLINE {
                    s.b == b
                } else {
                    // `get`, not indexing: a slot read from frozen bytes is not trusted to
                    // point inside the arena (one that does not is a miss, never a panic).
                    let at = s.b as usize;
                    at.checked_add(n).and_then(|end| self.arena.get(at..end)) == Some(key)
                };
                if same {
                    return Some(s.rank);
                }
            }
            if s.len == 0 || left == 0 {
                return None;
            }
            left -= 1;
            i = (i + 1) & self.mask;
        }
    }
}

/// The table as `encode::frozen` writes and reads it: every field, the slots whole. (The
/// destructuring names every field, so a field added to the table fails to compile here until
/// it is written and read too.)
impl RankTable {
    pub(crate) fn freeze(&self, w: &mut Writer) {
        let RankTable { pairs, slots, mask, filter, filter_mask, arena, max_len } = self;
        w.u32s(pairs);
        w.records(slots, |s| {
            let mut b = [0u8; 24];
            b[..8].copy_from_slice(&s.a.to_le_bytes());
            b[8..16].copy_from_slice(&s.b.to_le_bytes());
            b[16..20].copy_from_slice(&s.len.to_le_bytes());
            b[20..].copy_from_slice(&s.rank.to_le_bytes());
            b
        });
        w.u64(*mask as u64);
        w.u64s(filter);
        w.u64(*filter_mask as u64);
        w.byte_table(arena);
        w.u64(*max_len as u64);
    }

    /// The table `freeze` wrote, if its shape is one `with_capacity` makes (a long key's
    /// offset into the arena is checked where it is read: `get`).
    pub(crate) fn thaw(r: &mut Reader) -> Option<RankTable> {
        let pairs = r.u32s()?;
        let slots = r.table(|b: [u8; 24]| Slot {
            a: u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
            b: u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
            len: u32::from_le_bytes(b[16..20].try_into().expect("4 bytes")),
            rank: u32::from_le_bytes(b[20..].try_into().expect("4 bytes")),
        })?;
        let mask = r.usize()?;
        let filter = r.u64s()?;
        let filter_mask = r.usize()?;
        let arena = r.byte_table()?;
        let max_len = r.usize()?;
        let shaped = pairs.len() == 1 << 16
            && slots.len().is_power_of_two()
            && mask == slots.len() - 1
            && filter.len().checked_mul(64).is_some_and(|n| n.is_power_of_two() && filter_mask == n - 1);
        shaped.then_some(RankTable { pairs, slots, mask, filter, filter_mask, arena, max_len })
    }

    /// Whether every table is read in place from frozen bytes.
    pub(crate) fn in_place(&self) -> bool {
        self.pairs.is_borrowed() && self.slots.is_borrowed() && self.filter.is_borrowed() && self.arena.is_borrowed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_and_prefix_is_told_apart() {
        // Keys that share prefixes, suffixes and overlapping words, at every length 1..40.
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for n in 1..40usize {
            keys.push(vec![b'a'; n]);
            let mut k = vec![b'a'; n];
            k[n / 2] = b'b';
            keys.push(k);
            let mut k = vec![b'a'; n];
            k[n - 1] = 0;
            keys.push(k);
        }
        keys.sort();
        keys.dedup();
        let mut t = RankTable::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            assert!(t.insert(k, i as u32));
        }
        assert!(!t.insert(&keys[3], 99));
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(t.get(k), Some(i as u32), "{k:?}");
        }
        assert_eq!(t.get(b""), None);
        assert_eq!(t.get(b"ca"), None);
        assert_eq!(t.get(&[b'a'; 41]), None);
        let mut k = vec![b'a'; 30];
        k[10] = b'c';
        assert_eq!(t.get(&k), None);
    }
}
