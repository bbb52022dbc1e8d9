//! The WordPiece trainer: start from characters (first char of a word as is, the others as
//! `prefix + char`) and repeatedly merge the adjacent pair that the chosen `Objective` ranks
//! highest. Three objectives (counts are of the current segmentation of the corpus: c(ab) the
//! pair's adjacent occurrences, c(a), c(b) its parts', N all symbols; `xlx(x) = x ln x`):
//!
//! - `Frequency`: c(ab), as Hugging Face's `WordPieceTrainer` (its BPE trainer with a `##`
//!   continuing prefix); ties: smaller left id, then smaller right id, HF's own rule.
//! - `Ratio`: c(ab) / (c(a) c(b)), the score the HF course gives for WordPiece; ties: higher
//!   c(ab), then the left token's string bytewise ascending, then the right's. Compared exactly,
//!   as fractions.
//! - `Likelihood`: the gain in log-likelihood of the corpus under a unigram model of the current
//!   symbols (maximum-likelihood probabilities c(t)/N) when every occurrence of (a, b) becomes
//!   one symbol - Schuster & Nakajima 2012 ("Japanese and Korean voice search", section 3.1,
//!   step 4: "choose the new word unit ... that increases the likelihood on the training data
//!   the most"), with the segmentation held fixed rather than re-decoded: gain =
//!   `xlx(c(ab)) + xlx(c(a) - c(ab)) + xlx(c(b) - c(ab)) - xlx(c(a)) - xlx(c(b)) + xlx(N) - xlx(N - c(ab))`
//!   (a == b: xlx(c(ab)) + xlx(c(a) - 2 c(ab)) - xlx(c(a)) + the same N terms, clamped at 0;
//!   the result is scored as a new symbol even when another pair made its string before). In
//!   nats, as f64 (`f64::ln`, so equal on every platform whose libm rounds `ln` the same way);
//!   ties: higher c(ab), then smaller left id, then smaller right id.
//!
//! Incremental: each pair keeps a count and a superset list of the words that contain it; a merge
//! only rewrites those words and applies the resulting pair-count deltas. Under `Ratio` and
//! `Likelihood` a pair's score also depends on the counts of its two parts, and a merge lowers
//! c(a) and c(b) (and raises the result's), so the scores of *all* live pairs touching a, b or the
//! result change - pairs in words the merge never touched. We therefore keep, per symbol, the set
//! of live pairs it takes part in and re-push every pair whose own count or whose parts' counts
//! changed. Heap entries are snapshots (pair count, left count, right count); a popped entry whose
//! snapshot differs from the current counts is stale and is dropped. Because a fresh entry is
//! pushed on every change, the newest snapshot of every live pair is always in the heap, so the
//! first valid pop is the true best. `Likelihood` also depends on N, which every merge lowers:
//! its N terms only shrink as N falls, so an entry scored with an older N is an upper bound and
//! is re-scored and pushed back when it reaches the top (lazy evaluation); the first entry on top
//! scored with the current N is the true best.
//!
//! Id layout. `Ratio` (tokreg's first trainer, kept as it was so its versions reproduce):
//! specials, then the symbols seen sorted bytewise (so "##x" pieces come before bare letters);
//! a character dropped by `limit_alphabet` splits its word. `Frequency` and `Likelihood` use
//! HF's layout: specials, then every kept character bare (by code point, whether or not it ever
//! starts a word), then the "##x" pieces by code point (HF adds these in the order it meets them
//! in a hash map, which changes from run to run: tokenizers #1794); a dropped character is left
//! out of its word, which stays whole. Merged tokens follow in creation order.
//!
//! Nothing depends on input order, hash order or thread count: every order above is total.

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Ordering;

use crate::error::CoreError;

/// Which pair a merge step picks (see the module header for the formulas and tie rules).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Objective {
    /// c(ab) / (c(a) c(b)).
    #[default]
    Ratio,
    /// c(ab), as Hugging Face's WordPieceTrainer.
    Frequency,
    /// The unigram log-likelihood gain of the merge (Schuster & Nakajima 2012).
    Likelihood,
}

impl Objective {
    /// The objective named `ratio`, `frequency` or `likelihood`.
    pub fn from_name(name: &str) -> Result<Objective, CoreError> {
        match name {
            "ratio" => Ok(Objective::Ratio),
            "frequency" => Ok(Objective::Frequency),
            "likelihood" => Ok(Objective::Likelihood),
            _ => Err(CoreError::input(format!(
                "unknown WordPiece objective {name:?}; use one of frequency, likelihood or ratio"
            ))),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrainerConfig {
    /// What a merge maximises; also picks the id layout (module header).
    pub objective: Objective,
    /// Stop once the vocabulary (specials + alphabet + merged tokens) reaches this size. The
    /// specials and the alphabet are always kept whole, even if they already exceed it.
    pub vocab_size: usize,
    /// Pairs seen fewer times than this are never merged.
    pub min_frequency: u64,
    /// Marks a non-initial piece, "##" for BERT.
    pub continuing_prefix: String,
    /// Placed first, in this order (duplicates dropped).
    pub special_tokens: Vec<String>,
    /// Keep only this many distinct characters (most frequent first; ties by code point). A
    /// dropped character splits its word: no merge can cross it.
    pub limit_alphabet: Option<usize>,
    /// Never create a token longer than this many chars (not counting the prefix).
    pub max_token_len: Option<usize>,
}

impl Default for TrainerConfig {
    fn default() -> Self {
        TrainerConfig {
            objective: Objective::default(),
            vocab_size: 30000,
            min_frequency: 0,
            continuing_prefix: "##".to_string(),
            special_tokens: Vec::new(),
            limit_alphabet: None,
            max_token_len: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Merge {
    pub left: u32,
    pub right: u32,
    /// Id of the merged token (an existing id when the string was already in the vocabulary).
    pub result: u32,
    /// The objective's value when chosen: pair_count / (left_count * right_count) (`Ratio`),
    /// pair_count (`Frequency`), or the log-likelihood gain in nats (`Likelihood`).
    pub score: f64,
    /// Adjacent occurrences of (left, right), weighted by word counts, when chosen.
    pub pair_count: u64,
    /// Current occurrences of left / right when chosen.
    pub left_count: u64,
    pub right_count: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrainResult {
    /// Id order. Counts: specials 0; alphabet = occurrences in the initial segmentation; merged
    /// token = occurrences created by the merge that introduced it.
    pub tokens: Vec<(String, u64)>,
    /// Rank order.
    pub merges: Vec<Merge>,
}

/// One heap entry: a snapshot of a pair's key inputs.
#[derive(Clone, Copy, Debug)]
struct Entry {
    slot: u32,
    left: u32,
    right: u32,
    pc: u64,
    lc: u64,
    rc: u64,
    /// `Likelihood` only: N when scored, and the gain it gave (0 otherwise).
    n: u64,
    gain: f64,
}

/// score(x) vs score(y), exactly: x.pc/(x.lc*x.rc) vs y.pc/(y.lc*y.rc).
fn cmp_score(x: &Entry, y: &Entry) -> Ordering {
    let dx = x.lc as u128 * x.rc as u128;
    let dy = y.lc as u128 * y.rc as u128;
    match ((x.pc as u128).checked_mul(dy), (y.pc as u128).checked_mul(dx)) {
        (Some(a), Some(b)) => a.cmp(&b),
        // Only with astronomically large counts; still a deterministic comparison.
        _ => (x.pc as f64 / (x.lc as f64 * x.rc as f64)).total_cmp(&(y.pc as f64 / (y.lc as f64 * y.rc as f64))),
    }
}

/// x ln x, with 0 ln 0 = 0.
fn xlx(x: u64) -> f64 {
    if x == 0 {
        0.0
    } else {
        let f = x as f64;
        f * f.ln()
    }
}

/// The `Likelihood` objective (module header): the gain in corpus log-likelihood, in nats.
pub(super) fn likelihood_gain(same: bool, pc: u64, lc: u64, rc: u64, n: u64) -> f64 {
    let parts = if same {
        xlx(lc.saturating_sub(2 * pc)) - xlx(lc)
    } else {
        xlx(lc.saturating_sub(pc)) + xlx(rc.saturating_sub(pc)) - xlx(lc) - xlx(rc)
    };
    xlx(pc) + parts + xlx(n) - xlx(n.saturating_sub(pc))
}

/// What the heap order needs beside the entries.
struct Cx<'a> {
    objective: Objective,
    strs: &'a [String],
}

/// Greater = x is the better merge (see the header for the order of each objective).
fn cmp_entries(x: &Entry, y: &Entry, cx: &Cx) -> Ordering {
    let by_ids = || y.left.cmp(&x.left).then(y.right.cmp(&x.right));
    match cx.objective {
        Objective::Ratio => cmp_score(x, y)
            .then(x.pc.cmp(&y.pc))
            .then_with(|| cx.strs[y.left as usize].as_bytes().cmp(cx.strs[x.left as usize].as_bytes()))
            .then_with(|| cx.strs[y.right as usize].as_bytes().cmp(cx.strs[x.right as usize].as_bytes())),
        Objective::Frequency => x.pc.cmp(&y.pc).then_with(by_ids),
        Objective::Likelihood => x.gain.total_cmp(&y.gain).then(x.pc.cmp(&y.pc)).then_with(by_ids),
    }
}

/// A binary max-heap whose order needs the token strings (std's BinaryHeap can't take context).
struct Heap {
    v: Vec<Entry>,
}

impl Heap {
    fn sift_up(&mut self, mut i: usize, cx: &Cx) {
        while i > 0 {
            let p = (i - 1) / 2;
            if cmp_entries(&self.v[i], &self.v[p], cx) == Ordering::Greater {
                self.v.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
    }
    fn sift_down(&mut self, mut i: usize, cx: &Cx) {
        let n = self.v.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let mut c = l;
            if l + 1 < n && cmp_entries(&self.v[l + 1], &self.v[l], cx) == Ordering::Greater {
                c = l + 1;
            }
            if cmp_entries(&self.v[c], &self.v[i], cx) == Ordering::Greater {
                self.v.swap(c, i);
                i = c;
            } else {
                break;
            }
        }
    }
    fn push(&mut self, e: Entry, cx: &Cx) {
        self.v.push(e);
        let i = self.v.len() - 1;
        self.sift_up(i, cx);
    }
    fn pop(&mut self, cx: &Cx) -> Option<Entry> {
        if self.v.is_empty() {
            return None;
        }
        let top = self.v.swap_remove(0);
        if !self.v.is_empty() {
            self.sift_down(0, cx);
        }
        Some(top)
    }
    fn heapify(&mut self, cx: &Cx) {
        for i in (0..self.v.len() / 2).rev() {
            self.sift_down(i, cx);
        }
    }
}

struct Word {
    syms: Vec<u32>,
    count: u64,
}

/// All state of a training run.
struct State<'c> {
    cfg: &'c TrainerConfig,
    strs: Vec<String>,
    tok_counts: Vec<u64>,
    /// Current number of occurrences of each symbol in the corpus segmentation.
    sym_count: Vec<u64>,
    /// Their sum, N (kept for `Likelihood`).
    total: u64,
    /// Length in chars, without the continuing prefix (for max_token_len).
    sym_len: Vec<usize>,
    by_str: FxHashMap<String, u32>,
    words: Vec<Word>,
    pair_index: FxHashMap<(u32, u32), u32>,
    pair_left: Vec<u32>,
    pair_right: Vec<u32>,
    pair_count: Vec<u64>,
    /// Superset of the words containing the pair (may hold duplicates and stale words).
    pair_words: Vec<Vec<u32>>,
    /// Live pairs (count > 0) in which each symbol takes part, either side (empty under
    /// `Frequency`, which never needs them).
    partners: Vec<FxHashSet<u32>>,
    live_pairs: usize,
    heap: Heap,
    /// Pairs never to merge: their token is refused (continued training keeping a text).
    banned: FxHashSet<u32>,
}

impl<'c> State<'c> {
    /// An empty trainer state: no symbols, words or pairs yet.
    fn new(cfg: &'c TrainerConfig) -> Self {
        State {
            cfg,
            strs: Vec::new(),
            tok_counts: Vec::new(),
            sym_count: Vec::new(),
            total: 0,
            sym_len: Vec::new(),
            by_str: FxHashMap::default(),
            words: Vec::new(),
            pair_index: FxHashMap::default(),
            pair_left: Vec::new(),
            pair_right: Vec::new(),
            pair_count: Vec::new(),
            pair_words: Vec::new(),
            partners: Vec::new(),
            live_pairs: 0,
            heap: Heap { v: Vec::new() },
            banned: FxHashSet::default(),
        }
    }

    fn add_token(&mut self, s: String, count: u64, len: usize) -> u32 {
        let id = self.strs.len() as u32;
        self.by_str.insert(s.clone(), id);
        self.strs.push(s);
        self.tok_counts.push(count);
        self.sym_count.push(0);
        self.sym_len.push(len);
        self.partners.push(FxHashSet::default());
        id
    }

    fn slot(&mut self, l: u32, r: u32) -> u32 {
        if let Some(&s) = self.pair_index.get(&(l, r)) {
            return s;
        }
        let s = self.pair_left.len() as u32;
        self.pair_index.insert((l, r), s);
        self.pair_left.push(l);
        self.pair_right.push(r);
        self.pair_count.push(0);
        self.pair_words.push(Vec::new());
        s
    }

    fn set_pair_count(&mut self, s: u32, new: u64) {
        let old = self.pair_count[s as usize];
        self.pair_count[s as usize] = new;
        let (l, r) = (self.pair_left[s as usize], self.pair_right[s as usize]);
        // A pair's rank by frequency depends on its own count only: no partners to track.
        let track = self.cfg.objective != Objective::Frequency;
        if old == 0 && new > 0 {
            if track {
                self.partners[l as usize].insert(s);
                self.partners[r as usize].insert(s);
            }
            self.live_pairs += 1;
        } else if old > 0 && new == 0 {
            if track {
                self.partners[l as usize].remove(&s);
                self.partners[r as usize].remove(&s);
            }
            self.live_pairs -= 1;
        }
    }

    fn eligible(&self, s: u32) -> bool {
        let pc = self.pair_count[s as usize];
        if pc == 0 || pc < self.cfg.min_frequency || self.banned.contains(&s) {
            return false;
        }
        match self.cfg.max_token_len {
            Some(m) => {
                self.sym_len[self.pair_left[s as usize] as usize] + self.sym_len[self.pair_right[s as usize] as usize]
                    <= m
            }
            None => true,
        }
    }

    fn snapshot(&self, s: u32) -> Entry {
        let (l, r) = (self.pair_left[s as usize], self.pair_right[s as usize]);
        let (pc, lc, rc) = (self.pair_count[s as usize], self.sym_count[l as usize], self.sym_count[r as usize]);
        let (n, gain) = match self.cfg.objective {
            Objective::Likelihood => (self.total, likelihood_gain(l == r, pc, lc, rc, self.total)),
            _ => (0, 0.0),
        };
        Entry { slot: s, left: l, right: r, pc, lc, rc, n, gain }
    }

    /// The entry's pair has not changed since it was pushed (its N aside, see `run_merges`).
    fn is_current(&self, e: &Entry) -> bool {
        self.pair_count[e.slot as usize] == e.pc
            && (self.cfg.objective == Objective::Frequency
                || (self.sym_count[e.left as usize] == e.lc && self.sym_count[e.right as usize] == e.rc))
    }

    fn push_entry(&mut self, e: Entry) {
        let cx = Cx { objective: self.cfg.objective, strs: &self.strs };
        self.heap.push(e, &cx);
    }

    fn push_pair(&mut self, s: u32) {
        if self.eligible(s) {
            let e = self.snapshot(s);
            self.push_entry(e);
        }
    }

    /// Drop stale entries once they dominate the heap, to bound memory.
    fn maybe_compact(&mut self) {
        if self.heap.v.len() > 2 * self.live_pairs + (1 << 16) {
            let mut v = std::mem::take(&mut self.heap.v);
            v.retain(|e| self.is_current(e));
            self.heap.v = v;
            let cx = Cx { objective: self.cfg.objective, strs: &self.strs };
            self.heap.heapify(&cx);
        }
    }

    /// Applies the merge of pair slot `s` into token `r` everywhere; returns the number of
    /// occurrences created (weighted by word counts).
    fn apply_merge(&mut self, s: u32, r: u32) -> u64 {
        let (a, b) = (self.pair_left[s as usize], self.pair_right[s as usize]);
        let mut touched = std::mem::take(&mut self.pair_words[s as usize]);
        touched.sort_unstable();
        touched.dedup();
        let mut delta: FxHashMap<(u32, u32), i64> = FxHashMap::default();
        let mut new_occ: Vec<((u32, u32), u32)> = Vec::new();
        let mut merged: u64 = 0;
        for &wi in &touched {
            let w = &mut self.words[wi as usize];
            if !w.syms.windows(2).any(|p| p[0] == a && p[1] == b) {
                continue; // stale membership
            }
            let wc = w.count as i64;
            for p in w.syms.windows(2) {
                *delta.entry((p[0], p[1])).or_default() -= wc;
            }
            // Leftmost, non-overlapping replacement, in place.
            let n = w.syms.len();
            let (mut i, mut o, mut occ) = (0, 0, 0u64);
            while i < n {
                if i + 1 < n && w.syms[i] == a && w.syms[i + 1] == b {
                    w.syms[o] = r;
                    i += 2;
                    occ += 1;
                } else {
                    w.syms[o] = w.syms[i];
                    i += 1;
                }
                o += 1;
            }
            w.syms.truncate(o);
            merged += occ * w.count;
            for p in w.syms.windows(2) {
                *delta.entry((p[0], p[1])).or_default() += wc;
                if p[0] == r || p[1] == r {
                    new_occ.push(((p[0], p[1]), wi));
                }
            }
        }
        self.sym_count[a as usize] -= merged;
        self.sym_count[b as usize] -= merged;
        self.sym_count[r as usize] += merged;
        self.total -= merged;

        let mut affected: Vec<u32> = Vec::new();
        for (&(l, rr), &d) in &delta {
            if d == 0 {
                continue;
            }
            let slot = self.slot(l, rr);
            let new = (self.pair_count[slot as usize] as i64 + d) as u64;
            self.set_pair_count(slot, new);
            affected.push(slot);
        }
        for (p, wi) in new_occ {
            let slot = self.pair_index[&p];
            self.pair_words[slot as usize].push(wi);
        }
        // Pairs elsewhere whose parts' counts changed (their scores did, unless by frequency).
        if self.cfg.objective != Objective::Frequency {
            for sym in [a, b, r] {
                affected.extend(self.partners[sym as usize].iter().copied());
            }
        }
        affected.sort_unstable();
        affected.dedup();
        for slot in affected {
            self.push_pair(slot);
        }
        self.maybe_compact();
        merged
    }
}

fn merge_counts<K: std::hash::Hash + Eq>(mut a: FxHashMap<K, u64>, b: FxHashMap<K, u64>) -> FxHashMap<K, u64> {
    if a.len() < b.len() {
        return merge_counts(b, a);
    }
    for (k, v) in b {
        *a.entry(k).or_default() += v;
    }
    a
}

/// Trains a WordPiece vocabulary. `words`: distinct pre-tokenized, normalized words with counts
/// (order irrelevant; words with count 0 and empty words are ignored). `progress(phase, done,
/// total)` is called for phases "count" and "merge"; returning false stops with
/// `CoreError::Interrupted`.
///
/// Id layout: special tokens (config order), then the alphabet sorted bytewise by token string
/// (so "##x" pieces come before bare letters), then merged tokens in creation order.
pub fn train(
    words: &[(String, u64)],
    cfg: &TrainerConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<TrainResult, CoreError> {
    let prefix = cfg.continuing_prefix.as_str();
    let nwords = words.len() as u64;
    if !progress("count", 0, nwords) {
        return Err(CoreError::Interrupted);
    }

    // 1. Character frequencies (for limit_alphabet).
    let char_counts: FxHashMap<char, u64> = words
        .par_iter()
        .fold(FxHashMap::default, |mut m, (w, c)| {
            if *c > 0 {
                for ch in w.chars() {
                    *m.entry(ch).or_default() += *c;
                }
            }
            m
        })
        .reduce(FxHashMap::default, merge_counts);
    let kept: Option<FxHashSet<char>> = cfg.limit_alphabet.map(|limit| {
        let mut v: Vec<(char, u64)> = char_counts.iter().map(|(&c, &n)| (c, n)).collect();
        v.sort_unstable_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        v.into_iter().take(limit).map(|(c, _)| c).collect()
    });
    let keep = |c: char| match &kept {
        None => true,
        Some(k) => k.contains(&c),
    };

    // 2. Initial symbols: (char, is_word_initial) -> occurrences.
    let sym_occ: FxHashMap<(char, bool), u64> = words
        .par_iter()
        .fold(FxHashMap::default, |mut m, (w, c)| {
            if *c > 0 {
                for (i, ch) in w.chars().enumerate() {
                    if keep(ch) {
                        *m.entry((ch, i == 0)).or_default() += *c;
                    }
                }
            }
            m
        })
        .reduce(FxHashMap::default, merge_counts);
    let sym_string = |ch: char, initial: bool| {
        if initial {
            ch.to_string()
        } else {
            format!("{prefix}{ch}")
        }
    };
    // Merge keys that give the same string (only when the prefix is empty).
    let mut alphabet: FxHashMap<String, u64> = FxHashMap::default();
    for (&(ch, initial), &n) in &sym_occ {
        *alphabet.entry(sym_string(ch, initial)).or_default() += n;
    }
    let hf_layout = cfg.objective != Objective::Ratio;
    if hf_layout {
        // Every kept character bare, even one that never starts a word.
        for &(ch, _) in sym_occ.keys() {
            alphabet.entry(ch.to_string()).or_default();
        }
    }
    let mut alphabet: Vec<(String, u64)> = alphabet.into_iter().collect();
    if hf_layout {
        // Bare characters by code point, then the continuation pieces by code point (UTF-8 byte
        // order is code point order); a prefix-less string is never a continuation piece.
        let cont = |t: &str| !prefix.is_empty() && t.starts_with(prefix) && t.len() > prefix.len();
        alphabet.sort_unstable_by(|x, y| cont(&x.0).cmp(&cont(&y.0)).then(x.0.as_bytes().cmp(y.0.as_bytes())));
    } else {
        alphabet.sort_unstable_by(|x, y| x.0.as_bytes().cmp(y.0.as_bytes()));
    }

    let mut st = State::new(cfg);
    for s in &cfg.special_tokens {
        if !st.by_str.contains_key(s) {
            let len = s.chars().count();
            st.add_token(s.clone(), 0, len);
        }
    }
    for (s, n) in alphabet {
        let id = match st.by_str.get(&s) {
            Some(&id) => id, // a special token spelled like a character: share the id
            None => st.add_token(s, 0, 1),
        };
        st.tok_counts[id as usize] += n;
        st.sym_count[id as usize] += n;
        st.sym_len[id as usize] = 1;
    }

    // 3. Words as symbol ids; a dropped character splits the word into segments (`Ratio`) or is
    // left out of it (HF's layout).
    let by_key: FxHashMap<(char, bool), u32> =
        sym_occ.keys().map(|&(ch, ini)| ((ch, ini), st.by_str[&sym_string(ch, ini)])).collect();
    st.words = words
        .par_iter()
        .flat_map_iter(|(w, c)| {
            let mut segs: Vec<Word> = Vec::new();
            if *c == 0 {
                return segs.into_iter();
            }
            let mut cur: Vec<u32> = Vec::new();
            for (i, ch) in w.chars().enumerate() {
                match by_key.get(&(ch, i == 0)) {
                    Some(&id) => cur.push(id),
                    None if hf_layout => {}
                    None => {
                        if cur.len() >= 2 {
                            segs.push(Word { syms: std::mem::take(&mut cur), count: *c });
                        }
                        cur.clear();
                    }
                }
            }
            if cur.len() >= 2 {
                segs.push(Word { syms: cur, count: *c });
            }
            segs.into_iter()
        })
        .collect();
    if !progress("count", nwords, nwords) {
        return Err(CoreError::Interrupted);
    }

    let merges = run_merges(&mut st, &|_| false, progress)?;
    let tokens = st.strs.into_iter().zip(st.tok_counts).collect();
    Ok(TrainResult { tokens, merges })
}

/// Steps 4 and 5 of a run, from words as symbol ids: index the pairs, then merge the best
/// until the vocabulary holds `cfg.vocab_size` tokens. A pair whose new token `refused` says
/// no to is never merged.
fn run_merges(
    st: &mut State,
    refused: &dyn Fn(&str) -> bool,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<Vec<Merge>, CoreError> {
    let cfg = st.cfg;
    let prefix = cfg.continuing_prefix.as_str();
    // 4. Initial pair counts and word lists (sequential: cheap next to the merges, and simple).
    for wi in 0..st.words.len() {
        let wc = st.words[wi].count;
        for j in 0..st.words[wi].syms.len() - 1 {
            let (l, r) = (st.words[wi].syms[j], st.words[wi].syms[j + 1]);
            let s = st.slot(l, r);
            st.pair_count[s as usize] += wc;
            st.pair_words[s as usize].push(wi as u32);
        }
    }
    st.total = st.sym_count.iter().sum();
    for s in 0..st.pair_left.len() as u32 {
        let n = std::mem::take(&mut st.pair_count[s as usize]);
        st.set_pair_count(s, n);
        if st.eligible(s) {
            let e = st.snapshot(s);
            st.heap.v.push(e);
        }
    }
    let cx = Cx { objective: cfg.objective, strs: &st.strs };
    st.heap.heapify(&cx);

    // 5. Merge loop.
    let start_len = st.strs.len();
    let total = cfg.vocab_size.saturating_sub(start_len) as u64;
    let mut merges = Vec::new();
    while st.strs.len() < cfg.vocab_size {
        let cx = Cx { objective: cfg.objective, strs: &st.strs };
        let e = match st.heap.pop(&cx) {
            Some(e) => e,
            None => break,
        };
        if !st.is_current(&e) {
            continue;
        }
        if cfg.objective == Objective::Likelihood && e.n != st.total {
            // Scored with an older, larger N: an upper bound. Score it again and push it back.
            let fresh = st.snapshot(e.slot);
            st.push_entry(fresh);
            continue;
        }
        let left = &st.strs[e.left as usize];
        let right = &st.strs[e.right as usize];
        let merged_str = format!("{}{}", left, right.strip_prefix(prefix).unwrap_or(right));
        let len = st.sym_len[e.left as usize] + st.sym_len[e.right as usize];
        if !st.by_str.contains_key(&merged_str) && refused(&merged_str) {
            st.banned.insert(e.slot);
            continue;
        }
        let r = match st.by_str.get(&merged_str) {
            Some(&id) => id,
            None => st.add_token(merged_str, 0, len),
        };
        let (lc, rc) = (st.sym_count[e.left as usize], st.sym_count[e.right as usize]);
        let score = match cfg.objective {
            Objective::Ratio => e.pc as f64 / (e.lc as f64 * e.rc as f64),
            Objective::Frequency => e.pc as f64,
            Objective::Likelihood => e.gain,
        };
        let created = st.apply_merge(e.slot, r);
        if st.tok_counts[r as usize] == 0 && r as usize >= start_len {
            st.tok_counts[r as usize] = created;
        }
        merges.push(Merge {
            left: e.left,
            right: e.right,
            result: r,
            score,
            pair_count: e.pc,
            left_count: lc,
            right_count: rc,
        });
        if merges.len() % 64 == 0 && !progress("merge", (st.strs.len() - start_len) as u64, total) {
            return Err(CoreError::Interrupted);
        }
    }
    if !progress("merge", (st.strs.len() - start_len) as u64, total) {
        return Err(CoreError::Interrupted);
    }
    Ok(merges)
}

/// Continued training: `base` (id order; an empty string for an id that is no ordinary token)
/// stays as it is, and merges are learned from `words` (symbol ids over `base`, as the base
/// segments them) until there are `cfg.vocab_size` tokens, never making a token `refused` says
/// no to. The result's tokens are the base's followed by the new ones.
pub fn train_from(
    base: Vec<String>,
    words: Vec<(Vec<u32>, u64)>,
    cfg: &TrainerConfig,
    refused: &dyn Fn(&str) -> bool,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<TrainResult, CoreError> {
    let prefix = cfg.continuing_prefix.as_str();
    let mut st = State::new(cfg);
    for s in base {
        let len = s.strip_prefix(prefix).filter(|b| !b.is_empty()).unwrap_or(&s).chars().count();
        let id = st.strs.len() as u32;
        if s.is_empty() {
            // no ordinary token at this id: a slot nothing can be found by or merged into
            st.strs.push(s);
            st.tok_counts.push(0);
            st.sym_count.push(0);
            st.sym_len.push(0);
            st.partners.push(FxHashSet::default());
        } else if st.add_token(s, 0, len) != id {
            unreachable!("ids are positions");
        }
    }
    for (syms, count) in words {
        if count == 0 || syms.is_empty() {
            continue;
        }
        for &id in &syms {
            st.sym_count[id as usize] += count;
            st.tok_counts[id as usize] += count;
        }
        if syms.len() >= 2 {
            st.words.push(Word { syms, count });
        }
    }
    let merges = run_merges(&mut st, refused, progress)?;
    let tokens = st.strs.into_iter().zip(st.tok_counts).collect();
    Ok(TrainResult { tokens, merges })
}
