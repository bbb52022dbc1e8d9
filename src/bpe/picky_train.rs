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
//! rewrites the words a merge touches, whole: simple and exact. It moves only the pair counts
//! that change: a run of CJK letters is one long piece, where a merge changes few of its pairs.
//!
//! **The residue rule** (`residue_below` R > 0; issue 28, item 3): LiteToken's residue (Sun et
//! al., arXiv 2602.04706) judged on the training words as the run goes, with Scaffold-BPE's
//! budget (Lian et al., arXiv 2404.17808: a token whose own frequency is below the pair being
//! merged is only a scaffold). Each token keeps F1, its occurrences standing alone, and F2, all it
//! lost to merges and removals over its lives (so F1 / (F1 + F2) is what `audit --residues`
//! would measure on the training text at that moment). PickyBPE's IoS judges a part against the
//! one merge just made (IoS > tau is F1 / (F1 + m) < 1 - tau); a residue is usually consumed by
//! many longer tokens, none of which alone accounts for most of it, so IoS misses it.
//!
//! 4. judge: after each merge, each token whose counts changed (the parts, the token made, the
//!    pieces of a split) is a candidate when F1 + F2 >= `residue_min_seen` and F1 / (F1 + F2) < R;
//!    a candidate stays a merge step (longer tokens are still made through it) and counts
//!    against the vocabulary only while its F1 is above `residue_cost` K times the count of
//!    the last merge: leaving costs its F1 occurrences at least one token more each, and the
//!    slot it frees buys a merge worth about that count;
//! 5. the run makes merges until the vocabulary less those candidates holds `target_tokens`;
//!    then the cheapest candidates (fewest F1, then lowest id) leave until it holds exactly
//!    that, each a removal event after the last merge, so the encoder replays them as it
//!    replays PickyBPE's (merges in order, then these splits).
//!
//! With K large every candidate leaves and no token of the vocabulary is a residue of the
//! training text by (R, N) (tested with the encoder's own count); K = 1 keeps compression level
//! with plain BPE. With R = 0 nothing of this runs and the run is PickyBPE's.

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
    /// The residue rule (0: off): R, N and K of steps 4-5 above.
    pub residue_below: f64,
    pub residue_min_seen: u64,
    pub residue_cost: f64,
    pub min_frequency: u64,
    /// Never make a token longer than this many bytes (0: no limit).
    pub max_token_bytes: usize,
}

/// One removal: after merge `after` (its rank), token `token` left the vocabulary, split into
/// `split`; `ios` was its IoS (None: it left by the residue rule), `count` its occurrences
/// then, `ratio` its F1 / (F1 + F2) when judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Removal {
    pub after: usize,
    pub token: u32,
    pub split: Vec<u32>,
    pub ios: Option<f64>,
    pub count: u64,
    pub ratio: f64,
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
    /// F2: occurrences merged into a longer token or split, over all the token's lives
    consumed: Vec<i64>,
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
    /// the pairs whose count changed go to `changed` (only those: a pair the rewrite leaves as
    /// it was keeps its heap entry, which matters for a long word, such as a run of CJK letters,
    /// where a merge changes two or three of a hundred pairs).
    fn replace(&mut self, w: u32, new: Vec<u32>, changed: &mut Vec<u64>) {
        let c = self.counts[w as usize] as i64;
        let old = std::mem::replace(&mut self.words[w as usize], new);
        let new = &self.words[w as usize];
        let sorted = |word: &[u32]| {
            let mut keys: Vec<u64> = word.windows(2).map(|p| key(p[0], p[1])).collect();
            keys.sort_unstable();
            keys
        };
        let (was, now) = (sorted(&old), sorted(new));
        // the two sorted lists side by side: each key's count moves by c x (now - was)
        let (mut i, mut j) = (0, 0);
        while i < was.len() || j < now.len() {
            let k = match (was.get(i), now.get(j)) {
                (Some(&a), Some(&b)) => a.min(b),
                (Some(&a), None) => a,
                (None, Some(&b)) => b,
                (None, None) => unreachable!(),
            };
            let (mut before, mut after) = (0i64, 0i64);
            while was.get(i) == Some(&k) {
                before += 1;
                i += 1;
            }
            while now.get(j) == Some(&k) {
                after += 1;
                j += 1;
            }
            if before != after {
                *self.pairs.entry(k).or_insert(0) += c * (after - before);
                changed.push(k);
            }
            if before == 0 {
                self.pair_words.entry(k).or_default().push(w);
            }
        }
        for &t in &old {
            self.freq[t as usize] -= c;
        }
        let mut old_tokens = old;
        old_tokens.sort_unstable();
        for &t in new {
            self.freq[t as usize] += c;
            if old_tokens.binary_search(&t).is_err() {
                self.token_words[t as usize].push(w);
            }
        }
    }

    /// F1 / (F1 + F2) of `x` (1 before it is ever seen).
    fn ratio(&self, x: u32) -> f64 {
        let seen = self.freq[x as usize] + self.consumed[x as usize];
        if seen > 0 {
            self.freq[x as usize] as f64 / seen as f64
        } else {
            1.0
        }
    }

    /// Takes `x` out of the vocabulary: every occurrence left becomes its split (its parents'
    /// walks), which is returned; the occurrences count as consumed.
    fn split_out(&mut self, x: u32, changed: &mut Vec<u64>) -> Vec<u32> {
        self.present[x as usize] = false;
        self.consumed[x as usize] += self.freq[x as usize];
        let mut split = Vec::new();
        let (a, b) = self.parents[x as usize].expect("a merged token has parents");
        self.walk(a, &mut split);
        self.walk(b, &mut split);
        let list = std::mem::take(&mut self.token_words[x as usize]);
        for w in self.fresh(&list) {
            if self.words[w as usize].contains(&x) {
                let new =
                    self.words[w as usize].iter().flat_map(|&t| if t == x { split.clone() } else { vec![t] }).collect();
                self.replace(w, new, changed);
            }
        }
        split
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
    if !(0.0..=1.0).contains(&cfg.residue_below) || cfg.residue_cost.is_nan() || cfg.residue_cost < 0.0 {
        return Err(CoreError::input(format!(
            "the residue ratio must be from 0 to 1 and the cost factor at least 0, not {} and {}",
            cfg.residue_below, cfg.residue_cost
        )));
    }
    let base = alphabet.len();
    let mut s = State {
        present: vec![true; base],
        parents: vec![None; base],
        freq: vec![0; base],
        consumed: vec![0; base],
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
    let rule = cfg.residue_below > 0.0;
    // residue candidates (ordered, so every pass over them is deterministic) and how many of
    // them are cheap enough to leave at the last merge's count
    let mut candidates: std::collections::BTreeSet<u32> = Default::default();
    let mut leaving = 0usize;
    while size < cfg.target_tokens + leaving {
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
                s.consumed.push(0);
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
        s.consumed[l as usize] += made;
        s.consumed[r as usize] += made;
        let rank = merges.len();
        merges.push(Merge { left: l, right: r, result: z, count: e.count as u64 });
        let mut touched = vec![l, r, z];
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
            size -= 1;
            let ratio = s.ratio(x);
            let split = s.split_out(x, &mut changed);
            touched.extend_from_slice(&split);
            removals.push(Removal { after: rank, token: x, split, ios: Some(ios), count: left as u64, ratio });
        }
        // 4. the residue rule: re-judge the tokens whose counts changed
        if rule {
            for x in touched {
                let seen = (s.freq[x as usize] + s.consumed[x as usize]) as u64;
                let residue = s.present[x as usize]
                    && (x as usize) >= base
                    && seen >= cfg.residue_min_seen.max(1)
                    && s.ratio(x) < cfg.residue_below;
                if residue {
                    candidates.insert(x);
                } else {
                    candidates.remove(&x);
                }
            }
            let budget = cfg.residue_cost * e.count as f64;
            leaving = candidates.iter().filter(|&&x| s.freq[x as usize] as f64 <= budget).count();
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
    // 5. the cheapest candidates leave, down to the size asked
    if let Some(last) = merges.len().checked_sub(1).filter(|_| rule) {
        // (judged now: an earlier split can still bring one more occurrences; it leaves anyway)
        let mut out: Vec<(i64, u32, f64)> = candidates.iter().map(|&x| (s.freq[x as usize], x, s.ratio(x))).collect();
        out.sort_unstable_by_key(|c| (c.0, c.1));
        for (_, x, ratio) in out.into_iter().take(size.saturating_sub(cfg.target_tokens)) {
            let left = s.freq[x as usize];
            let split = s.split_out(x, &mut changed);
            removals.push(Removal { after: last, token: x, split, ios: None, count: left as u64, ratio });
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
        PickyConfig {
            target_tokens,
            threshold,
            min_frequency: 0,
            max_token_bytes: 0,
            residue_below: 0.0,
            residue_min_seen: 0,
            residue_cost: 0.0,
        }
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

    /// Residues of `out` on `text` as `audit --residues` counts them: the tokens in the
    /// vocabulary that the encoder (replaying the run's events) forms, with F1 + F2 >= 10 and
    /// F1 / (F1 + F2) < 0.1.
    fn residues_on(out: &PickyOutput, text: &str) -> usize {
        use crate::bpe::PickyEncoder;
        use crate::encode::{Encode, Trace};
        let tokens = out.tokens.iter().enumerate().map(|(i, b)| (i as u32, &b[..], !out.present[i])).collect();
        let merges: Vec<_> = out.merges.iter().map(|m| (m.left, m.right, m.result)).collect();
        let removals: Vec<_> = out.removals.iter().map(|r| (r.after as u32, r.token)).collect();
        let enc = PickyEncoder::new(tokens, &merges, &removals, Splitter::new(GPT2).unwrap()).unwrap();
        let n = out.tokens.len();
        let mut trace = Trace { emitted: vec![0; n], formed: vec![0; n], consumed: vec![0; n] };
        let mut ids = Vec::new();
        enc.encode_traced(text, &mut trace, &mut ids).unwrap();
        for &id in &ids {
            trace.emitted[id as usize] += 1;
        }
        let residue = |i: usize| {
            let (f1, f2) = (trace.emitted[i], trace.consumed[i]);
            f1 + f2 >= 10 && (f1 as f64) < 0.1 * (f1 + f2) as f64
        };
        (0..n).filter(|&i| out.present[i] && trace.formed[i] > 0 && residue(i)).count()
    }

    #[test]
    fn the_residue_rule_keeps_the_size_and_leaves_fewer_residues() {
        let Some(text) = crate::test_data::read("kjv.txt") else { return };
        let text = &text[..text.floor_char_boundary(300_000)];
        let (a, w) = words(text.as_bytes());
        let plain = train_picky(a.clone(), w.clone(), &cfg(1200, 2.0), &mut |_, _| true).unwrap();
        let rule = |k: f64| PickyConfig { residue_below: 0.1, residue_min_seen: 10, residue_cost: k, ..cfg(1200, 2.0) };
        let level = train_picky(a.clone(), w.clone(), &rule(1.0), &mut |_, _| true).unwrap();
        let all = train_picky(a, w, &rule(1e12), &mut |_, _| true).unwrap();
        let before = residues_on(&plain, text);
        assert!(before > 20, "{before}");
        for out in [&level, &all] {
            // the size asked, every removal a residue that left after the last merge, in order
            assert_eq!(out.present.iter().filter(|&&p| p).count(), 1200);
            assert!(!out.removals.is_empty());
            for r in &out.removals {
                assert!(r.ios.is_none() && r.ratio < 0.1 && r.after + 1 == out.merges.len());
                let joined: Vec<u8> = r.split.iter().flat_map(|&t| out.tokens[t as usize].clone()).collect();
                assert_eq!(joined, out.tokens[r.token as usize]);
            }
        }
        let left = residues_on(&level, text);
        assert!(left < before, "{left} vs {before}");
        // with no budget every candidate leaves: the encoder's own count finds none left
        assert_eq!(residues_on(&all, text), 0);
    }

    #[test]
    fn a_part_that_only_lives_in_the_pair_is_removed_and_split() {
        // " abcd" five times: a+b, ab+c, abc+d... each part is wholly used by the next merge.
        let (a, w) = words(b" abcd abcd abcd abcd abcd xy");
        let out = train_picky(a, w, &cfg(256 + 3, 0.9), &mut |_, _| true).unwrap();
        let removed: Vec<&[u8]> = out.removals.iter().map(|r| &out.tokens[r.token as usize][..]).collect();
        assert!(!removed.is_empty());
        for r in &out.removals {
            assert!(!out.present[r.token as usize] && r.ios.is_some_and(|v| v > 0.9));
            let joined: Vec<u8> = r.split.iter().flat_map(|&t| out.tokens[t as usize].clone()).collect();
            assert_eq!(joined, out.tokens[r.token as usize]);
        }
        // the corpus runs out of pairs before the vocabulary is full: " abcd" and " xy" are tokens
        let kept: Vec<&[u8]> =
            (0..out.tokens.len()).filter(|&i| out.present[i] && i >= 256).map(|i| &out.tokens[i][..]).collect();
        assert!(kept.contains(&b" abcd".as_slice()) && kept.len() <= 3, "{kept:?}");
    }
}
