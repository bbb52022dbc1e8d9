//! PickyBPE training (Chizhov, Arnett, Korotkova and Yamshchikov, "BPE Gets Picky: Efficient
//! Vocabulary Refinement During Tokenizer Training", EMNLP 2024, arXiv 2409.04599): BPE's merge
//! loop, and after each merge a check of its two parts.
//!
//! 1. merge: the best pair by `train.rs`'s tie rule (higher count; then the smaller left bytes;
//!    then the smaller right bytes) is joined in every word, left to right;
//! 2. check: for each part x of the pair (the left one first; once when both are the same;
//!    never a base byte), its Intersection over Self IoS(x) = m / (f(x) + m), m the merges just
//!    made and f(x) the occurrences of x left after them; when IoS(x) > tau, x is removed: every
//!    occurrence left is split into x's walk (its two parents, each replaced by its own walk
//!    when it is no longer in the vocabulary), and the removal is recorded after the merge;
//! 3. stop when the vocabulary (the tokens present) holds `target_tokens`: a removal frees a
//!    slot, so a picky run makes more merges than plain BPE. A merge whose result was removed
//!    before brings that token back (same bytes, same place), as the paper's code does.
//!
//! With tau above 1 nothing is ever removed and the merges are `train.rs`'s (tested). This loop
//! rewrites the words a merge touches, whole: simple and exact; byte-level pieces are short.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::Instant;

use rustc_hash::FxHashMap;

use super::train::{Merge, Words};
use crate::error::CoreError;

pub struct PickyConfig {
    /// Stop when this many tokens (base alphabet included) are in the vocabulary.
    pub target_tokens: usize,
    /// tau: a part whose IoS is above it is removed (the paper's runs: 0.6 to 0.9).
    pub threshold: f64,
    pub min_frequency: u64,
    /// Never make a token longer than this many bytes (0: no limit).
    pub max_token_bytes: usize,
}

/// One removal: after merge `after` (its rank), token `token` left the vocabulary, split into
/// `split`; `ios` was its IoS, `count` its occurrences then.
#[derive(Clone, Debug, PartialEq)]
pub struct Removal {
    pub after: usize,
    pub token: u32,
    pub split: Vec<u32>,
    pub ios: f64,
    pub count: u64,
}

#[derive(Debug)]
pub struct PickyOutput {
    /// token id -> bytes: every token ever made, in the order made (ids are those the merges
    /// and removals name); `present[i]`: in the final vocabulary.
    pub tokens: Vec<Vec<u8>>,
    pub present: Vec<bool>,
    /// uses in the final segmentation of the training words
    pub token_counts: Vec<u64>,
    pub merges: Vec<Merge>,
    pub removals: Vec<Removal>,
    pub merge_seconds: f64,
}

#[inline]
fn key(l: u32, r: u32) -> u64 {
    (l as u64) << 32 | r as u64
}

/// A heap entry: the best pair is the greatest (count, then smaller bytes).
#[derive(PartialEq, Eq)]
struct Entry {
    count: i64,
    left: Reverse<Vec<u8>>,
    right: Reverse<Vec<u8>>,
    pair: u64,
}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.count, &self.left, &self.right).cmp(&(o.count, &o.left, &o.right))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

struct State {
    tokens: Vec<Vec<u8>>,
    present: Vec<bool>,
    parents: Vec<Option<(u32, u32)>>,
    freq: Vec<i64>,
    words: Vec<Vec<u32>>,
    counts: Vec<u64>,
    pairs: FxHashMap<u64, i64>,
    /// pair -> words that may hold it; token -> words that may hold it (stale entries allowed)
    pair_words: FxHashMap<u64, Vec<u32>>,
    token_words: Vec<Vec<u32>>,
    heap: BinaryHeap<Entry>,
    /// last word-visit stamp per word, to visit each word once per step
    seen: Vec<u32>,
    stamp: u32,
}

impl State {
    fn push(&mut self, pair: u64) {
        let count = self.pairs.get(&pair).copied().unwrap_or(0);
        if count > 0 {
            let (l, r) = ((pair >> 32) as usize, (pair & 0xffff_ffff) as usize);
            let (left, right) = (Reverse(self.tokens[l].clone()), Reverse(self.tokens[r].clone()));
            self.heap.push(Entry { count, left, right, pair });
        }
    }

    /// The words that may hold `list`'s key, each once (this step's stamp).
    fn fresh(&mut self, list: &[u32]) -> Vec<u32> {
        self.stamp += 1;
        let mut out = Vec::new();
        for &w in list {
            if self.seen[w as usize] != self.stamp {
                self.seen[w as usize] = self.stamp;
                out.push(w);
            }
        }
        out
    }

    /// Puts `new` in place of word `w`, moving pair and token counts and indexing what is new;
    /// the pairs whose count changed go to `changed`.
    fn replace(&mut self, w: u32, new: Vec<u32>, changed: &mut Vec<u64>) {
        let c = self.counts[w as usize] as i64;
        let old = std::mem::replace(&mut self.words[w as usize], new);
        for p in old.windows(2) {
            let k = key(p[0], p[1]);
            *self.pairs.entry(k).or_insert(0) -= c;
            changed.push(k);
        }
        for &t in &old {
            self.freq[t as usize] -= c;
        }
        let new = &self.words[w as usize];
        for p in new.windows(2) {
            let k = key(p[0], p[1]);
            *self.pairs.entry(k).or_insert(0) += c;
            changed.push(k);
            if !old.windows(2).any(|q| q == p) {
                self.pair_words.entry(k).or_default().push(w);
            }
        }
        for &t in new {
            self.freq[t as usize] += c;
            if !old.contains(&t) {
                self.token_words[t as usize].push(w);
            }
        }
    }

    /// The tokens present that `t` stands for: itself, or its parents' walks.
    fn walk(&self, t: u32, out: &mut Vec<u32>) {
        match self.parents[t as usize] {
            Some((l, r)) if !self.present[t as usize] => {
                self.walk(l, out);
                self.walk(r, out);
            }
            _ => out.push(t),
        }
    }
}

/// Trains PickyBPE on `words` over `alphabet`; `progress(done, total)` with tokens in the
/// vocabulary; returning false stops with `CoreError::Interrupted`.
pub fn train_picky(
    alphabet: Vec<Vec<u8>>,
    words: Words,
    cfg: &PickyConfig,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<PickyOutput, CoreError> {
    let t0 = Instant::now();
    if cfg.threshold.is_nan() || cfg.threshold <= 0.0 {
        return Err(CoreError::input(format!("the IoS threshold must be above 0, not {}", cfg.threshold)));
    }
    let base = alphabet.len();
    let mut s = State {
        present: vec![true; base],
        parents: vec![None; base],
        freq: vec![0; base],
        token_words: vec![Vec::new(); base],
        tokens: alphabet,
        words: Vec::with_capacity(words.len()),
        counts: words.counts.clone(),
        pairs: FxHashMap::default(),
        pair_words: FxHashMap::default(),
        heap: BinaryHeap::new(),
        seen: vec![0; words.len()],
        stamp: 0,
    };
    // 1. index every word's pairs and tokens
    let mut start = 0;
    for (w, &end) in words.ends.iter().enumerate() {
        s.words.push(Vec::new());
        let syms = words.arena[start..end].to_vec();
        start = end;
        s.replace(w as u32, syms, &mut Vec::new());
    }
    drop(words);
    let mut by_bytes: FxHashMap<Vec<u8>, u32> =
        s.tokens.iter().enumerate().map(|(i, b)| (b.clone(), i as u32)).collect();
    let keys: Vec<u64> = s.pairs.keys().copied().collect();
    for k in keys {
        s.push(k);
    }
    let mut size = base;
    let mut merges: Vec<Merge> = Vec::new();
    let mut removals: Vec<Removal> = Vec::new();
    let mut changed: Vec<u64> = Vec::new();
    let floor = cfg.min_frequency.max(1) as i64;
    while size < cfg.target_tokens {
        // 2. the best pair whose heap entry holds its current count
        let Some(e) = s.heap.pop() else { break };
        if s.pairs.get(&e.pair).copied().unwrap_or(0) != e.count {
            continue;
        }
        if e.count < floor {
            break;
        }
        let (l, r) = ((e.pair >> 32) as u32, (e.pair & 0xffff_ffff) as u32);
        let bytes = [&s.tokens[l as usize][..], &s.tokens[r as usize][..]].concat();
        if cfg.max_token_bytes > 0 && bytes.len() > cfg.max_token_bytes {
            continue;
        }
        let z = match by_bytes.get(&bytes) {
            Some(&z) => {
                if !s.present[z as usize] {
                    s.present[z as usize] = true;
                    size += 1;
                }
                z
            }
            None => {
                let z = s.tokens.len() as u32;
                by_bytes.insert(bytes.clone(), z);
                s.tokens.push(bytes);
                s.present.push(true);
                s.parents.push(Some((l, r)));
                s.freq.push(0);
                s.token_words.push(Vec::new());
                size += 1;
                z
            }
        };
        let list = s.pair_words.remove(&e.pair).unwrap_or_default();
        let mut made = 0i64;
        for w in s.fresh(&list) {
            let old = &s.words[w as usize];
            let mut new = Vec::with_capacity(old.len());
            let mut i = 0;
            while i < old.len() {
                if i + 1 < old.len() && old[i] == l && old[i + 1] == r {
                    new.push(z);
                    i += 2;
                } else {
                    new.push(old[i]);
                    i += 1;
                }
            }
            if new.len() != old.len() {
                made += (old.len() - new.len()) as i64 * s.counts[w as usize] as i64;
                s.replace(w, new, &mut changed);
            }
        }
        let rank = merges.len();
        merges.push(Merge { left: l, right: r, result: z, count: e.count as u64 });
        // 3. the parts' IoS, the left part first
        let parts: &[u32] = if l == r { &[l] } else { &[l, r] };
        for &x in parts {
            if (x as usize) < base || !s.present[x as usize] {
                continue;
            }
            let left = s.freq[x as usize];
            let ios = made as f64 / (left + made) as f64;
            if ios <= cfg.threshold {
                continue;
            }
            s.present[x as usize] = false;
            size -= 1;
            let mut split = Vec::new();
            let (a, b) = s.parents[x as usize].expect("a merged token has parents");
            s.walk(a, &mut split);
            s.walk(b, &mut split);
            let list = std::mem::take(&mut s.token_words[x as usize]);
            for w in s.fresh(&list) {
                if s.words[w as usize].contains(&x) {
                    let new = s.words[w as usize]
                        .iter()
                        .flat_map(|&t| if t == x { split.clone() } else { vec![t] })
                        .collect();
                    s.replace(w, new, &mut changed);
                }
            }
            removals.push(Removal { after: rank, token: x, split, ios, count: left as u64 });
        }
        changed.sort_unstable();
        changed.dedup();
        for k in std::mem::take(&mut changed) {
            s.push(k);
        }
        if merges.len() % 64 == 0 && !progress(size as u64, cfg.target_tokens as u64) {
            return Err(CoreError::Interrupted);
        }
    }
    Ok(PickyOutput {
        token_counts: s.freq.iter().map(|&f| f.max(0) as u64).collect(),
        tokens: s.tokens,
        present: s.present,
        merges,
        removals,
        merge_seconds: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::train::{byte_words, train, TrainConfig};
    use crate::count::{count_inputs, Splitting};
    use crate::pretok::{Splitter, GPT2};

    fn words(text: &[u8]) -> (Vec<Vec<u8>>, Words) {
        byte_words(&count_inputs(&[text], Splitting::Pieces(Splitter::new(GPT2).unwrap())).unwrap())
    }

    fn cfg(target_tokens: usize, threshold: f64) -> PickyConfig {
        PickyConfig { target_tokens, threshold, min_frequency: 0, max_token_bytes: 0 }
    }

    #[test]
    fn without_removals_the_merges_are_plain_bpe() {
        let Some(text) = crate::test_data::read("kjv.txt") else { return };
        let (a, w) = words(&text.as_bytes()[..200_000]);
        let plain =
            train(a.clone(), w.clone(), &TrainConfig { target_tokens: 700, ..Default::default() }, &mut |_, _| true)
                .unwrap();
        let picky = train_picky(a, w, &cfg(700, 2.0), &mut |_, _| true).unwrap();
        assert!(picky.removals.is_empty());
        assert_eq!(picky.merges, plain.merges);
        assert_eq!(picky.tokens, plain.tokens);
        assert_eq!(picky.token_counts, plain.token_counts);
    }

    #[test]
    fn a_part_that_only_lives_in_the_pair_is_removed_and_split() {
        // " abcd" five times: a+b, ab+c, abc+d... each part is wholly used by the next merge.
        let (a, w) = words(b" abcd abcd abcd abcd abcd xy");
        let out = train_picky(a, w, &cfg(256 + 3, 0.9), &mut |_, _| true).unwrap();
        let removed: Vec<&[u8]> = out.removals.iter().map(|r| &out.tokens[r.token as usize][..]).collect();
        assert!(!removed.is_empty());
        for r in &out.removals {
            assert!(!out.present[r.token as usize] && r.ios > 0.9);
            let joined: Vec<u8> = r.split.iter().flat_map(|&t| out.tokens[t as usize].clone()).collect();
            assert_eq!(joined, out.tokens[r.token as usize]);
        }
        // the corpus runs out of pairs before the vocabulary is full: " abcd" and " xy" are tokens
        let kept: Vec<&[u8]> =
            (0..out.tokens.len()).filter(|&i| out.present[i] && i >= 256).map(|i| &out.tokens[i][..]).collect();
        assert!(kept.contains(&b" abcd".as_slice()) && kept.len() <= 3, "{kept:?}");
    }
}
