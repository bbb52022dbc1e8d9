//! The WordPiece trainer (likelihood-style score, as in the HF course /
//! Google's WordPiece description): start from characters (first char of a word as is, the
//! others as `prefix + char`) and repeatedly merge the adjacent pair with the highest
//!     score(a, b) = count(ab) / (count(a) * count(b)).
//!
//! Incremental: each pair keeps a count and a superset list of the words that contain it; a merge
//! only rewrites those words and applies the resulting pair-count deltas. A pair's score also
//! depends on the counts of its two parts, and a merge lowers count(a) and count(b) (and raises
//! the result's), so the scores of *all* live pairs touching a, b or the result change - pairs in
//! words the merge never touched. We therefore keep, per symbol, the set of live pairs it takes
//! part in and re-push every pair whose own count or whose parts' counts changed. Heap entries are
//! snapshots (pair count, left count, right count); a popped entry whose snapshot differs from the
//! current counts is stale and is dropped. Because a fresh entry is pushed on every change, the
//! newest snapshot of every live pair is always in the heap, so the first valid pop is the true best.
//!
//! Order of selection (a total order, so results never depend on input order, hash order or thread
//! count): higher score (compared exactly, as fractions); then higher pair count; then the left
//! token's string, bytewise ascending; then the right token's string, bytewise ascending.

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Ordering;

use crate::error::CoreError;

#[derive(Clone, Debug, PartialEq)]
pub struct TrainerConfig {
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
    /// pair_count / (left_count * right_count), as f64.
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

/// Greater = x is the better merge (see the header for the order).
fn cmp_entries(x: &Entry, y: &Entry, strs: &[String]) -> Ordering {
    cmp_score(x, y)
        .then(x.pc.cmp(&y.pc))
        .then_with(|| strs[y.left as usize].as_bytes().cmp(strs[x.left as usize].as_bytes()))
        .then_with(|| strs[y.right as usize].as_bytes().cmp(strs[x.right as usize].as_bytes()))
}

/// A binary max-heap whose order needs the token strings (std's BinaryHeap can't take context).
struct Heap {
    v: Vec<Entry>,
}

impl Heap {
    fn sift_up(&mut self, mut i: usize, strs: &[String]) {
        while i > 0 {
            let p = (i - 1) / 2;
            if cmp_entries(&self.v[i], &self.v[p], strs) == Ordering::Greater {
                self.v.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
    }
    fn sift_down(&mut self, mut i: usize, strs: &[String]) {
        let n = self.v.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let mut c = l;
            if l + 1 < n && cmp_entries(&self.v[l + 1], &self.v[l], strs) == Ordering::Greater {
                c = l + 1;
            }
            if cmp_entries(&self.v[c], &self.v[i], strs) == Ordering::Greater {
                self.v.swap(c, i);
                i = c;
            } else {
                break;
            }
        }
    }
    fn push(&mut self, e: Entry, strs: &[String]) {
        self.v.push(e);
        let i = self.v.len() - 1;
        self.sift_up(i, strs);
    }
    fn pop(&mut self, strs: &[String]) -> Option<Entry> {
        if self.v.is_empty() {
            return None;
        }
        let top = self.v.swap_remove(0);
        if !self.v.is_empty() {
            self.sift_down(0, strs);
        }
        Some(top)
    }
    fn heapify(&mut self, strs: &[String]) {
        for i in (0..self.v.len() / 2).rev() {
            self.sift_down(i, strs);
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
    /// Live pairs (count > 0) in which each symbol takes part, either side.
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
        if old == 0 && new > 0 {
            self.partners[l as usize].insert(s);
            self.partners[r as usize].insert(s);
            self.live_pairs += 1;
        } else if old > 0 && new == 0 {
            self.partners[l as usize].remove(&s);
            self.partners[r as usize].remove(&s);
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
        Entry {
            slot: s,
            left: l,
            right: r,
            pc: self.pair_count[s as usize],
            lc: self.sym_count[l as usize],
            rc: self.sym_count[r as usize],
        }
    }

    fn is_current(&self, e: &Entry) -> bool {
        self.pair_count[e.slot as usize] == e.pc
            && self.sym_count[e.left as usize] == e.lc
            && self.sym_count[e.right as usize] == e.rc
    }

    fn push_pair(&mut self, s: u32) {
        if self.eligible(s) {
            let e = self.snapshot(s);
            self.heap.push(e, &self.strs);
        }
    }

    /// Drop stale entries once they dominate the heap, to bound memory.
    fn maybe_compact(&mut self) {
        if self.heap.v.len() > 2 * self.live_pairs + (1 << 16) {
            let mut v = std::mem::take(&mut self.heap.v);
            v.retain(|e| self.is_current(e));
            self.heap.v = v;
            self.heap.heapify(&self.strs);
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
        // Pairs elsewhere whose parts' counts changed.
        for sym in [a, b, r] {
            affected.extend(self.partners[sym as usize].iter().copied());
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
    let mut alphabet: Vec<(String, u64)> = alphabet.into_iter().collect();
    alphabet.sort_unstable_by(|x, y| x.0.as_bytes().cmp(y.0.as_bytes()));

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

    // 3. Words as symbol ids; a dropped character splits the word into segments.
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
    for s in 0..st.pair_left.len() as u32 {
        let n = std::mem::take(&mut st.pair_count[s as usize]);
        st.set_pair_count(s, n);
        if st.eligible(s) {
            let e = st.snapshot(s);
            st.heap.v.push(e);
        }
    }
    st.heap.heapify(&st.strs);

    // 5. Merge loop.
    let start_len = st.strs.len();
    let total = cfg.vocab_size.saturating_sub(start_len) as u64;
    let mut merges = Vec::new();
    while st.strs.len() < cfg.vocab_size {
        let e = match st.heap.pop(&st.strs) {
            Some(e) => e,
            None => break,
        };
        if !st.is_current(&e) {
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
        let created = st.apply_merge(e.slot, r);
        if st.tok_counts[r as usize] == 0 && r as usize >= start_len {
            st.tok_counts[r as usize] = created;
        }
        merges.push(Merge {
            left: e.left,
            right: e.right,
            result: r,
            score: e.pc as f64 / (e.lc as f64 * e.rc as f64),
            pair_count: e.pc,
            left_count: e.lc,
            right_count: e.rc,
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
