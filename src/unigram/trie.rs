//! Double-array trie over piece bytes, used by the encoder for common-prefix search.
//! Owns: building the double array from (key bytes, id, score) triples and the one-byte
//! transition.
//!
//! Why a double array: a transition is one add and one compare on a flat array (the root's
//! 256 children sit at `base(root) + byte`, so the first level is a direct byte-indexed
//! lookup), no pointer chasing and no allocation while matching.
//!
//! Layout (8 bytes a slot, for the Viterbi's inner loop, which is bound by one dependent load
//! per byte):
//! - `word = base << 8 | (label + 1)`: the slot's own label (the byte that leads to it) instead
//!   of its parent's index, darts-clone style. That is only sound if no two nodes with children
//!   share a `base`, which `build` guarantees; leaves keep `base` 0, which no node with children
//!   has. A free slot is `0`, whose label field matches no byte (`label + 1` is never 0).
//! - `score`: the encoder's score of the key ending here (`-inf` when none), so that the
//!   Viterbi reads the transition and the candidate score in one load, where it used to follow
//!   the id to a score array. The id is only needed when backtracking, so it sits in a
//!   separate array.
//!
//! Cost: none in memory (12 bytes a slot with the ids, as before; unique bases left the slot
//! count of an 8000-piece model at 22426 against 22416). Bases are 24 bits, which bounds the
//! array at 16M slots (a few million pieces).
//!
//! Building walks a linked list of the free slots to place each node's children (scanning
//! every slot from the first free one took 100 ms for 8000 pieces; the list, 4 ms).

use crate::error::CoreError;

#[derive(Clone, Copy)]
struct Unit {
    word: u32,
    score: f32,
}

pub(crate) const NO_VALUE: i32 = -1;

/// Bases are 24 bits; with 256 slots past the last base that bounds the array at 2^24 + 256.
const MAX_BASE: usize = (1 << 24) - 1;

pub(crate) struct DoubleArray {
    units: Vec<Unit>,
    /// Id of the key ending at each slot, `NO_VALUE` if none.
    ids: Vec<i32>,
}

const EMPTY: Unit = Unit { word: 0, score: f32::NEG_INFINITY };

/// The free slots of the array being built, as a doubly linked list in slot order;
/// `len()` stands for "none" (and for the end of the list).
struct FreeList {
    next: Vec<u32>,
    prev: Vec<u32>,
    free: Vec<bool>,
}

impl FreeList {
    fn new(len: usize) -> FreeList {
        let mut f = FreeList { next: Vec::new(), prev: Vec::new(), free: Vec::new() };
        f.grow(len);
        f
    }

    fn len(&self) -> usize {
        self.free.len()
    }

    /// The first free slot (`len()` if none).
    fn first(&self) -> usize {
        self.next[self.len()] as usize
    }

    fn next(&self, i: usize) -> usize {
        self.next[i] as usize
    }

    fn is_free(&self, i: usize) -> bool {
        self.free[i]
    }

    /// Appends free slots up to `len`. The list is circular through a sentinel at index
    /// `len()`: `next[len()]` is the first free slot, `prev[len()]` the last.
    fn grow(&mut self, len: usize) {
        let old = self.free.len();
        let ends = if old == 0 || self.next[old] as usize == old {
            None
        } else {
            Some((self.next[old] as usize, self.prev[old] as usize))
        };
        self.next.resize(len + 1, 0);
        self.prev.resize(len + 1, 0);
        self.free.resize(len, true);
        let sentinel = len;
        let mut last = ends.map_or(sentinel, |(_, tail)| tail);
        for i in old..len {
            self.next[last] = i as u32;
            self.prev[i] = last as u32;
            last = i;
        }
        self.next[last] = sentinel as u32;
        self.prev[sentinel] = last as u32;
        if let Some((head, _)) = ends {
            self.next[sentinel] = head as u32;
            self.prev[head] = sentinel as u32;
        }
    }

    fn take(&mut self, i: usize) {
        debug_assert!(self.free[i]);
        self.free[i] = false;
        let (p, n) = (self.prev[i] as usize, self.next[i] as usize);
        self.next[p] = n as u32;
        self.prev[n] = p as u32;
    }
}

impl DoubleArray {
    /// Builds from keys with ids >= 0 and their scores. Keys must be non-empty and distinct.
    pub(crate) fn build(mut keys: Vec<(&[u8], i32, f32)>) -> Result<DoubleArray, CoreError> {
        keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for w in keys.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(CoreError::input(format!(
                    "the piece {:?} is defined twice; remove one",
                    String::from_utf8_lossy(w[0].0)
                )));
            }
        }
        if keys.iter().any(|k| k.0.is_empty()) {
            return Err(CoreError::input("a piece is empty; remove it"));
        }
        let mut units = vec![EMPTY; 512];
        let mut ids = vec![NO_VALUE; 512];
        // Free slots, in order, as a linked list: the search for a base visits only those
        // (walking every slot made a vocabulary of 8000 pieces take 100 ms).
        let mut free = FreeList::new(512);
        // Slot 0 is the root; mark it used (label 0 matches no byte) so no child is placed there.
        free.take(0);
        // `base_used[b]`: some node already has its children at `b`.
        let mut base_used: Vec<bool> = vec![false; 512];
        // Work stack of (node slot, key range, depth); children are placed when popped.
        let mut stack: Vec<(u32, usize, usize, usize)> = vec![(0, 0, keys.len(), 0)];
        let mut labels: Vec<(u8, usize, usize)> = Vec::new();
        while let Some((node, lo, hi, depth)) = stack.pop() {
            labels.clear();
            let mut i = lo;
            while i < hi {
                let k = keys[i].0;
                if k.len() == depth {
                    ids[node as usize] = keys[i].1;
                    units[node as usize].score = keys[i].2;
                    i += 1;
                    continue;
                }
                let c = k[depth];
                let start = i;
                while i < hi && keys[i].0.len() > depth && keys[i].0[depth] == c {
                    i += 1;
                }
                labels.push((c, start, i));
            }
            if labels.is_empty() {
                continue;
            }
            // The first free slot `pos` (for the first label) with an unused base so that every
            // child slot base+c is free; base >= 1, so that no child lands on the root slot and
            // leaves' base 0 stays unique.
            let c0 = labels[0].0 as usize;
            let mut pos = free.first();
            let base = loop {
                if pos == free.len() {
                    // Past the last slot: grow; the new slots are free.
                    let len = (free.len() * 2).max(pos + 256);
                    free.grow(len);
                    units.resize(len, EMPTY);
                    ids.resize(len, NO_VALUE);
                    base_used.resize(len, false);
                }
                if pos > c0 {
                    let base = pos - c0;
                    if base + 256 > free.len() {
                        let len = (free.len() * 2).max(base + 256);
                        free.grow(len);
                        units.resize(len, EMPTY);
                        ids.resize(len, NO_VALUE);
                        base_used.resize(len, false);
                    }
                    if !base_used[base] && labels.iter().all(|&(c, _, _)| free.is_free(base + c as usize)) {
                        break base;
                    }
                }
                pos = free.next(pos);
            };
            if base > MAX_BASE {
                return Err(CoreError::input("too many pieces for the Unigram encoder's trie; use fewer pieces"));
            }
            base_used[base] = true;
            units[node as usize].word |= (base as u32) << 8;
            for &(c, _, _) in labels.iter() {
                free.take(base + c as usize);
                units[base + c as usize].word = c as u32 + 1;
            }
            for &(c, s, e) in labels.iter().rev() {
                stack.push(((base + c as usize) as u32, s, e, depth + 1));
            }
        }
        // Trim the tail but keep 256 slots after the largest base so that `step` never
        // indexes out of bounds from any node.
        let last = (0..units.len()).rposition(|i| !free.is_free(i)).unwrap_or(0);
        let max_base = units.iter().map(|u| (u.word >> 8) as usize).max().unwrap_or(0);
        let keep = (last + 1).max(max_base + 256);
        units.truncate(keep);
        ids.truncate(keep);
        Ok(DoubleArray { units, ids })
    }

    /// Child of `node` by byte `c`, if any.
    #[inline(always)]
    pub(crate) fn step(&self, node: u32, c: u8) -> Option<u32> {
        // build() guarantees base + 255 < len for every node.
        let t = (self.units[node as usize].word >> 8) as usize + c as usize;
        if self.units[t].word & 0xFF == c as u32 + 1 {
            Some(t as u32)
        } else {
            None
        }
    }

    /// Child of `node` by byte `c` with the score of the key ending there (`-inf` if none).
    #[inline(always)]
    pub(crate) fn step_scored(&self, node: u32, c: u8) -> Option<(u32, f32)> {
        let t = (self.units[node as usize].word >> 8) as usize + c as usize;
        let u = self.units[t];
        if u.word & 0xFF == c as u32 + 1 {
            Some((t as u32, u.score))
        } else {
            None
        }
    }

    /// Id of the key ending at `node`, `NO_VALUE` if none.
    #[inline(always)]
    pub(crate) fn value(&self, node: u32) -> i32 {
        self.ids[node as usize]
    }

    /// All (byte length, value) of keys that are prefixes of `s`, shortest first.
    #[cfg(test)]
    pub(crate) fn common_prefixes(&self, s: &[u8]) -> Vec<(usize, i32)> {
        let mut out = Vec::new();
        let mut node = 0u32;
        for (i, &c) in s.iter().enumerate() {
            match self.step(node, c) {
                Some(n) => node = n,
                None => break,
            }
            let v = self.value(node);
            if v != NO_VALUE {
                out.push((i + 1, v));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(keys: Vec<(&[u8], i32)>) -> Result<DoubleArray, CoreError> {
        DoubleArray::build(keys.into_iter().map(|(k, v)| (k, v, -(v as f32))).collect())
    }

    #[test]
    fn prefixes_and_misses() {
        let keys: Vec<(&[u8], i32)> = vec![
            (b"a", 0),
            (b"ab", 1),
            (b"abc", 2),
            (b"b", 3),
            ("▁the".as_bytes(), 4),
            ("▁t".as_bytes(), 5),
            (&[0xFEu8], 6),
            (&[0u8, 1], 7),
        ];
        let da = build(keys).unwrap();
        assert_eq!(da.common_prefixes(b"abcd"), vec![(1, 0), (2, 1), (3, 2)]);
        assert_eq!(da.common_prefixes(b"ba"), vec![(1, 3)]);
        assert_eq!(da.common_prefixes(b"c"), vec![]);
        assert_eq!(da.common_prefixes("▁them".as_bytes()), vec![(4, 5), (6, 4)]);
        assert_eq!(da.common_prefixes(&[0xFE, 0]), vec![(1, 6)]);
        assert_eq!(da.common_prefixes(&[0, 1, 2]), vec![(2, 7)]);
        assert_eq!(da.common_prefixes(&[0, 0]), vec![]);
        assert_eq!(da.common_prefixes(&[0xFF]), vec![]);
        // Scores ride along with the transition; nodes without a key score -inf.
        let (n, s) = da.step_scored(0, b'a').unwrap();
        assert_eq!(s, -0.0);
        assert_eq!(da.step_scored(n, b'b').unwrap().1, -1.0);
        let t = da.step(0, 0xE2).unwrap();
        assert_eq!(da.step_scored(t, 0x96).unwrap().1, f32::NEG_INFINITY);
        assert!(build(vec![(b"x", 0), (b"x", 1)]).is_err());
    }

    #[test]
    fn many_keys_roundtrip() {
        let words: Vec<String> = (0..5000u32).map(|i| format!("k{}x{}", i * 7919 % 10007, i)).collect();
        let keys: Vec<(&[u8], i32)> = words.iter().enumerate().map(|(i, w)| (w.as_bytes(), i as i32)).collect();
        let da = build(keys).unwrap();
        for (i, w) in words.iter().enumerate() {
            let p = da.common_prefixes(w.as_bytes());
            assert_eq!(p.last(), Some(&(w.len(), i as i32)));
            // No key is a proper extension that was not inserted.
            let mut longer = w.clone().into_bytes();
            longer.push(b'#');
            assert_eq!(da.common_prefixes(&longer).last(), Some(&(w.len(), i as i32)));
        }
        // Every byte from every node: a transition exists only for inserted labels.
        let set: std::collections::HashSet<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        let prefixes: std::collections::HashSet<Vec<u8>> =
            words.iter().flat_map(|w| (1..=w.len()).map(move |i| w.as_bytes()[..i].to_vec())).collect();
        for p in prefixes.iter().take(3000) {
            let mut node = 0;
            for &c in p {
                node = da.step(node, c).unwrap();
            }
            for c in 0..=255u8 {
                let mut q = p.clone();
                q.push(c);
                assert_eq!(da.step(node, c).is_some(), prefixes.contains(&q), "{:?}", q);
            }
            assert_eq!(da.value(node) != NO_VALUE, set.contains(p.as_slice()));
        }
    }
}
