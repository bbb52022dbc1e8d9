//! StochasTok's expansion (Sims et al., arXiv 2506.01687): after the deterministic encoding,
//! `floor(p * n)` steps over the n ids; each step picks a position of the current sequence
//! uniformly and, when the token there splits into two vocabulary tokens that concatenate to
//! it, replaces it by one such pair picked uniformly (a step on a token without a split, a
//! special token or a single byte, changes nothing).
//!
//! `Splits` is the table of every token's splits, made once per tokenizer on first use. A
//! split (a, b) of t is kept only when bytes(a) ++ bytes(b) == bytes(t), neither is a special
//! token, and decoding [a, b] gives what decoding [t] gives, so the decoded text never changes.
//!
//! The sequence is kept as the original ids, each with the pieces it has been split into so
//! far, and a Fenwick tree of how many pieces each holds: picking a uniform position of the
//! current sequence is a walk down the tree, O(log n), where inserting into a flat list would
//! cost O(n) per step (a megabyte of text: 25,000 steps over 250,000 ids).

use rustc_hash::{FxHashMap, FxHashSet};

use super::stochastic::Rng;
use super::Encode;

pub struct Splits {
    /// the splits of token k are `pairs[starts[k]..starts[k + 1]]`
    starts: Vec<u32>,
    pairs: Vec<(u32, u32)>,
}

impl Splits {
    /// Every token's splits, in the order of the cut (shorter left part first).
    pub fn new(enc: &dyn Encode, specials: &FxHashSet<u32>) -> Splits {
        let bound = enc.id_bound() as u32;
        let ordinary = |id: u32| !specials.contains(&id);
        let mut by_bytes: FxHashMap<&[u8], u32> = FxHashMap::default();
        for id in (0..bound).filter(|&id| ordinary(id)) {
            if let Some(b) = enc.token_bytes(id).filter(|b| !b.is_empty()) {
                by_bytes.entry(b).or_insert(id);
            }
        }
        let concatenates = enc.concatenates();
        let mut starts = Vec::with_capacity(bound as usize + 1);
        let mut pairs = Vec::new();
        for t in 0..bound {
            starts.push(pairs.len() as u32);
            let Some(bytes) = enc.token_bytes(t).filter(|_| ordinary(t)) else { continue };
            for cut in 1..bytes.len() {
                let (Some(&a), Some(&b)) = (by_bytes.get(&bytes[..cut]), by_bytes.get(&bytes[cut..])) else {
                    continue;
                };
                if concatenates || same_decoding(enc, t, a, b) {
                    pairs.push((a, b));
                }
            }
        }
        starts.push(pairs.len() as u32);
        Splits { starts, pairs }
    }

    /// The splits of token `id` (none for an id past the table).
    pub fn of(&self, id: u32) -> &[(u32, u32)] {
        match (self.starts.get(id as usize), self.starts.get(id as usize + 1)) {
            (Some(&s), Some(&e)) => &self.pairs[s as usize..e as usize],
            _ => &[],
        }
    }

    /// Appends `ids` to `out` after `floor(p * ids.len())` expansion steps drawn from `rng`.
    pub fn expand(&self, ids: &[u32], p: f64, rng: &mut Rng, out: &mut Vec<u32>) {
        let steps = (p * ids.len() as f64).floor() as usize;
        if steps == 0 {
            out.extend_from_slice(ids);
            return;
        }
        // pieces[k]: what original id k has become, when it has been split (None: itself)
        let mut pieces: Vec<Option<Vec<u32>>> = vec![None; ids.len()];
        let mut tree = Fenwick::ones(ids.len());
        for _ in 0..steps {
            let (k, j) = tree.find(rng.below(tree.total));
            let t = pieces[k].as_ref().map_or(ids[k], |p| p[j]);
            let options = self.of(t);
            if options.is_empty() {
                continue;
            }
            let (a, b) = options[rng.below(options.len())];
            let list = pieces[k].get_or_insert_with(|| vec![ids[k]]);
            list[j] = a;
            list.insert(j + 1, b);
            tree.add(k);
        }
        for (k, &id) in ids.iter().enumerate() {
            match &pieces[k] {
                Some(p) => out.extend_from_slice(p),
                None => out.push(id),
            }
        }
    }
}

/// Whether decoding [a, b] gives the bytes decoding [t] gives.
fn same_decoding(enc: &dyn Encode, t: u32, a: u32, b: u32) -> bool {
    matches!((enc.decode_bytes(&[t]), enc.decode_bytes(&[a, b])), (Ok(x), Ok(y)) if x == y)
}

/// Counts per original id, with prefix sums in O(log n).
struct Fenwick {
    tree: Vec<usize>,
    total: usize,
}

impl Fenwick {
    /// n counts of 1.
    fn ones(n: usize) -> Fenwick {
        let mut tree = vec![0; n + 1];
        for i in 1..=n {
            tree[i] += 1;
            let up = i + (i & i.wrapping_neg());
            if up <= n {
                tree[up] += tree[i];
            }
        }
        Fenwick { tree, total: n }
    }

    /// One more at index k.
    fn add(&mut self, k: usize) {
        let mut i = k + 1;
        while i < self.tree.len() {
            self.tree[i] += 1;
            i += i & i.wrapping_neg();
        }
        self.total += 1;
    }

    /// The index k whose counts hold position `pos` (0-based), and `pos`'s place within it.
    fn find(&self, mut pos: usize) -> (usize, usize) {
        let n = self.tree.len() - 1;
        let mut at = 0;
        let mut step = if n == 0 { 0 } else { 1 << (usize::BITS - 1 - n.leading_zeros()) };
        while step > 0 {
            if at + step <= n && self.tree[at + step] <= pos {
                at += step;
                pos -= self.tree[at];
            }
            step >>= 1;
        }
        (at, pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tiny_byte_level;

    #[test]
    fn fenwick_finds_every_position() {
        let mut f = Fenwick::ones(5);
        f.add(1);
        f.add(1);
        f.add(4);
        let got: Vec<(usize, usize)> = (0..f.total).map(|p| f.find(p)).collect();
        assert_eq!(got, [(0, 0), (1, 0), (1, 1), (1, 2), (2, 0), (3, 0), (4, 0), (4, 1)]);
    }

    #[test]
    fn splits_concatenate_and_expansion_keeps_the_bytes() {
        let t = tiny_byte_level();
        let specials: FxHashSet<u32> = [300].into_iter().collect();
        let s = Splits::new(t.encoder(), &specials);
        assert_eq!(s.of(256), [(b'a' as u32, b'b' as u32)]);
        assert_eq!(s.of(257), [(b' ' as u32, 256)]);
        assert!(s.of(300).is_empty() && s.of(b'a' as u32).is_empty());
        let ids = [257, 256, 300, 257];
        for seed in 0..50 {
            let mut out = Vec::new();
            s.expand(&ids, 1.0, &mut Rng::new(seed), &mut out);
            assert_eq!(t.decode_bytes(&out).unwrap(), t.decode_bytes(&ids).unwrap());
            assert!(out.len() >= ids.len() && out.len() <= ids.len() * 3);
        }
        let mut out = Vec::new();
        s.expand(&ids, 0.0, &mut Rng::new(1), &mut out);
        assert_eq!(out, ids);
    }
}
