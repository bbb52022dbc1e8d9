//! Parity-aware BPE (Foroutan et al. 2025, "Parity-aware Byte Pair Encoding: Improving
//! Cross-lingual Fairness in Tokenization", arXiv 2508.04796): byte-level BPE whose every merge
//! goes to the language that is currently compressed worst, instead of the global count.
//!
//! Input: one `Counts` per language (its training text's pieces) and, optionally, one per
//! language of a parallel development set (the same content in every language).
//!
//! 1. words: every distinct piece of every language (training and development) becomes one word
//!    of byte symbols, with a count per language for training and one for development.
//! 2. merge: pick the worst language, then the best pair of *that* language's training counts
//!    (plain BPE's tie rule, `train.rs`), and join it in every word of every language.
//!    - worst with a parallel set: the most tokens on its development text (the paper's rule;
//!      the texts say the same thing, so more tokens is a worse compression);
//!    - worst without one: the lowest ratio of its training text's bytes to its current tokens
//!      (the paper's `--ratio` rule with equal ratios; this favours scripts with more bytes per
//!      character, which is why a parallel set is the better measure);
//!    - the first `global_merges` merges use the summed counts (the paper's hybrid variant);
//!    - with a `window` W (the paper's moving-window variant), a language that won more than
//!      `alpha / L` of the last W parity merges (L languages) waits behind every other language
//!      until it has won fewer, so no one language takes a long stretch of merges;
//!    - a language without a mergeable pair (all below `min_frequency`, or too long) passes its
//!      turn to the next worst; training stops when no language has one.
//!
//!    Ties between languages go to the one given first (callers sort them by code); ties between
//!    pairs follow `train.rs`: the higher count, then the smaller left token's bytes, then the
//!    smaller right token's bytes. One thread: the result depends on nothing else.
//! 3. record: per merge, the language it went to (None for a global merge) and each language's
//!    gain (the pair's count in that language's training text, which is the number of tokens the
//!    merge removes from it); per snapshot, each language's training and development tokens.
//!
//! With one language and no development set this is plain BPE exactly (tested against `train`).
//!
//! Data structures, simple rather than lean (the per-language counts multiply memory by the
//! number of languages anyway): a `Vec<u32>` of symbols per word, a slot per pair with its count
//! per language and the words holding it (stale or repeated entries checked when used), and a
//! lazy max-heap per language (and one for the sum): a popped entry whose count is stale goes
//! back with the current count, so the first entry popped at its current count is the best pair.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use super::train::{Merge, Snapshot, TrainOutput};
use crate::count::Counts;
use crate::error::CoreError;

const REPORT_EVERY: Duration = Duration::from_millis(25);

#[derive(Clone, Debug, Default)]
pub struct ParityConfig {
    /// Tokens to reach: the 256 bytes + merge results (special tokens are the caller's).
    pub max_tokens: usize,
    pub min_frequency: u64,
    /// Never make a token longer than this many bytes (0: no limit).
    pub max_token_bytes: usize,
    /// Smaller token counts to snapshot on the way.
    pub snapshots: Vec<usize>,
    /// The first merges chosen by the summed counts (the paper's hybrid variant).
    pub global_merges: usize,
    /// The moving-window variant: the last `window` parity merges are remembered (0: off)...
    pub window: usize,
    /// ...and a language that won more than `alpha / languages` of them waits its turn.
    pub alpha: usize,
}

/// Each language's cost at one vocabulary size: tokens of its training text and of its
/// development text (0 without a parallel set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Costs {
    pub train_tokens: Vec<u64>,
    pub dev_tokens: Vec<u64>,
}

#[derive(Debug)]
pub struct ParityOutput {
    pub trained: TrainOutput,
    /// Per merge: the language it went to (its index), None when chosen by the summed counts.
    pub chosen: Vec<Option<u32>>,
    /// Per merge, per language (`merges × languages`, row by row): the pair's count in that
    /// language's training text when the merge was made.
    pub gains: Vec<u64>,
    /// Each language's training and development bytes.
    pub train_bytes: Vec<u64>,
    pub dev_bytes: Vec<u64>,
    /// One per snapshot asked for (in the order asked), then the final state.
    pub costs: Vec<Costs>,
    pub distinct_pieces: usize,
    pub merge_seconds: f64,
}

/// A heap entry: a pair's count in one language (or the sum) and its tokens' bytes for the tie
/// rule. `Ord` makes the best pair the greatest.
struct Entry {
    count: u64,
    slot: u32,
    left: Rc<[u8]>,
    right: Rc<[u8]>,
}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        self.count.cmp(&o.count).then_with(|| o.left.cmp(&self.left)).then_with(|| o.right.cmp(&self.right))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Entry {}

struct State {
    langs: usize,
    tokens: Vec<Rc<[u8]>>,
    words: Vec<Vec<u32>>,
    /// word × language training counts
    train: Vec<u64>,
    /// word × language development counts (empty without a parallel set)
    dev: Vec<u64>,
    slot_of: FxHashMap<(u32, u32), u32>,
    pairs: Vec<(u32, u32)>,
    /// slot × language counts
    counts: Vec<i64>,
    holders: Vec<Vec<u32>>,
    banned: Vec<bool>,
    /// one heap per language, then the summed counts' heap
    heaps: Vec<BinaryHeap<Entry>>,
    train_tokens: Vec<u64>,
    dev_tokens: Vec<u64>,
}

impl State {
    fn slot(&mut self, p: (u32, u32)) -> usize {
        if let Some(&s) = self.slot_of.get(&p) {
            return s as usize;
        }
        let s = self.pairs.len();
        self.pairs.push(p);
        self.counts.resize(self.counts.len() + self.langs, 0);
        self.holders.push(Vec::new());
        self.banned.push(false);
        self.slot_of.insert(p, s as u32);
        s
    }

    /// The pair's count in heap `h`'s language (the sum for the last heap).
    fn count(&self, s: usize, h: usize) -> u64 {
        let c = &self.counts[s * self.langs..(s + 1) * self.langs];
        (if h == self.langs { c.iter().sum() } else { c[h] }).max(0) as u64
    }

    fn push(&mut self, s: usize, h: usize) {
        let count = self.count(s, h);
        if count > 0 && !self.banned[s] {
            let (l, r) = self.pairs[s];
            let e = Entry {
                count,
                slot: s as u32,
                left: self.tokens[l as usize].clone(),
                right: self.tokens[r as usize].clone(),
            };
            self.heaps[h].push(e);
        }
    }

    /// The best pair of heap `h` at least `floor` times, stale entries refreshed on the way.
    fn best(&mut self, h: usize, floor: u64, max_bytes: usize) -> Option<usize> {
        while let Some(top) = self.heaps[h].peek() {
            let s = top.slot as usize;
            let now = self.count(s, h);
            if self.banned[s] || top.count != now {
                self.heaps[h].pop();
                self.push(s, h);
                continue;
            }
            if now < floor {
                return None;
            }
            let (l, r) = self.pairs[s];
            if max_bytes > 0 && self.tokens[l as usize].len() + self.tokens[r as usize].len() > max_bytes {
                self.banned[s] = true;
                self.heaps[h].pop();
                continue;
            }
            return Some(s);
        }
        None
    }

    /// Heaps in the order their turn comes: the summed counts' during the global merges, else
    /// the languages worst first (ties to the lower index), those over their share of the
    /// window (`over[l]`) after all the others.
    fn turns(&self, global: bool, train_bytes: &[u64], over: &[bool]) -> Vec<usize> {
        if global {
            return vec![self.langs];
        }
        let mut order: Vec<usize> = (0..self.langs).collect();
        if self.dev.is_empty() {
            // lowest bytes / tokens first: a/b < c/d as a*d < c*b
            let ratio = |l: usize| (train_bytes[l] as u128, self.train_tokens[l].max(1) as u128);
            order.sort_by(|&x, &y| {
                let ((a, b), (c, d)) = (ratio(x), ratio(y));
                (a * d).cmp(&(c * b)).then(x.cmp(&y))
            });
        } else {
            order.sort_by(|&x, &y| self.dev_tokens[y].cmp(&self.dev_tokens[x]).then(x.cmp(&y)));
        }
        order.sort_by_key(|&l| over[l]); // stable: the worst-first order within each group
        order
    }

    /// Joins pair slot `s` into `z` in every word holding it.
    fn join(&mut self, s: usize, z: u32) {
        let (a, b) = self.pairs[s];
        let mut holders = std::mem::take(&mut self.holders[s]);
        holders.sort_unstable();
        holders.dedup();
        let n = self.langs;
        let mut before: FxHashMap<usize, Vec<i64>> = FxHashMap::default();
        for &w in &holders {
            let w = w as usize;
            let old = &self.words[w];
            if !old.windows(2).any(|p| p[0] == a && p[1] == b) {
                continue;
            }
            let mut new = Vec::with_capacity(old.len());
            let mut i = 0;
            while i < old.len() {
                if i + 1 < old.len() && old[i] == a && old[i + 1] == b {
                    new.push(z);
                    i += 2;
                } else {
                    new.push(old[i]);
                    i += 1;
                }
            }
            let old = std::mem::replace(&mut self.words[w], new);
            let shrink = (old.len() - self.words[w].len()) as u64;
            for l in 0..n {
                self.train_tokens[l] -= shrink * self.train[w * n + l];
                if !self.dev.is_empty() {
                    self.dev_tokens[l] -= shrink * self.dev[w * n + l];
                }
            }
            let weights: Vec<i64> = self.train[w * n..(w + 1) * n].iter().map(|&c| c as i64).collect();
            if weights.iter().all(|&c| c == 0) {
                // a development-only word: it holds no counts, but must stay findable
                for p in self.words[w].clone().windows(2) {
                    if p[0] == z || p[1] == z {
                        let t = self.slot((p[0], p[1]));
                        self.holders[t].push(w as u32);
                    }
                }
                continue;
            }
            for p in old.windows(2) {
                let t = self.slot((p[0], p[1]));
                before.entry(t).or_insert_with(|| self.counts[t * n..(t + 1) * n].to_vec());
                for (c, w) in self.counts[t * n..(t + 1) * n].iter_mut().zip(&weights) {
                    *c -= w;
                }
            }
            for p in self.words[w].clone().windows(2) {
                let t = self.slot((p[0], p[1]));
                before.entry(t).or_insert_with(|| self.counts[t * n..(t + 1) * n].to_vec());
                for (c, w) in self.counts[t * n..(t + 1) * n].iter_mut().zip(&weights) {
                    *c += w;
                }
                if p[0] == z || p[1] == z {
                    self.holders[t].push(w as u32);
                }
            }
        }
        let mut grown: Vec<(usize, Vec<i64>)> = before.into_iter().collect();
        grown.sort_unstable_by_key(|(t, _)| *t);
        for (t, was) in grown {
            let now: Vec<i64> = self.counts[t * n..(t + 1) * n].to_vec();
            for l in 0..n {
                if now[l] > was[l] {
                    self.push(t, l);
                }
            }
            if now.iter().sum::<i64>() > was.iter().sum::<i64>() {
                self.push(t, n);
            }
        }
    }

    fn token_counts(&self) -> Vec<u64> {
        let n = self.langs;
        let mut out = vec![0u64; self.tokens.len()];
        for (w, syms) in self.words.iter().enumerate() {
            let c: u64 = self.train[w * n..(w + 1) * n].iter().sum();
            for &x in syms {
                out[x as usize] += c;
            }
        }
        out
    }

    fn costs(&self) -> Costs {
        Costs { train_tokens: self.train_tokens.clone(), dev_tokens: self.dev_tokens.clone() }
    }
}

/// Trains parity-aware BPE: `train[l]` is language l's counted training text, `dev[l]` its
/// development text (the same content in every language; empty: no parallel set).
/// `progress(phase, done, total)` is called for "merge"; false stops with `Interrupted`.
pub fn train_parity(
    train: &[&Counts],
    dev: &[&Counts],
    cfg: &ParityConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<ParityOutput, CoreError> {
    let t0 = Instant::now();
    let n = train.len();
    if n == 0 || (!dev.is_empty() && dev.len() != n) {
        return Err(CoreError::input(format!(
            "parity-aware BPE needs one training text per language and, with a parallel set, one development \
             text per language ({n} training, {} development)",
            dev.len()
        )));
    }
    if cfg.max_tokens < 256 || cfg.snapshots.iter().any(|&s| s < 256) {
        let requested = cfg.snapshots.iter().copied().chain([cfg.max_tokens]).min().unwrap_or(0);
        return Err(CoreError::VocabTooSmall { requested, needed: 256, base: "256 bytes".into() });
    }
    // 1. words
    let mut st = State {
        langs: n,
        tokens: (0u8..=255).map(|b| Rc::from(vec![b])).collect(),
        words: Vec::new(),
        train: Vec::new(),
        dev: Vec::new(),
        slot_of: FxHashMap::default(),
        pairs: Vec::new(),
        counts: Vec::new(),
        holders: Vec::new(),
        banned: Vec::new(),
        heaps: (0..=n).map(|_| BinaryHeap::new()).collect(),
        train_tokens: vec![0; n],
        dev_tokens: vec![0; n],
    };
    let mut word_of: FxHashMap<&[u8], usize> = FxHashMap::default();
    let (mut train_bytes, mut dev_bytes) = (vec![0u64; n], vec![0u64; n]);
    let sets: Vec<(bool, usize, &Counts)> = train
        .iter()
        .enumerate()
        .map(|(l, c)| (false, l, *c))
        .chain(dev.iter().enumerate().map(|(l, c)| (true, l, *c)))
        .collect();
    let mut train_w: Vec<u64> = Vec::new();
    let mut dev_w: Vec<u64> = Vec::new();
    for (is_dev, l, counts) in sets {
        for (piece, c) in counts.iter() {
            let w = *word_of.entry(piece).or_insert_with(|| {
                st.words.push(piece.iter().map(|&b| b as u32).collect());
                train_w.resize(train_w.len() + n, 0);
                dev_w.resize(dev_w.len() + n, 0);
                st.words.len() - 1
            });
            let len = piece.len() as u64;
            if is_dev {
                dev_w[w * n + l] += c;
                dev_bytes[l] += c * len;
            } else {
                train_w[w * n + l] += c;
                train_bytes[l] += c * len;
            }
        }
    }
    let distinct_pieces = st.words.len();
    st.train = train_w;
    st.dev = if dev.is_empty() { Vec::new() } else { dev_w };
    st.train_tokens = train_bytes.clone();
    st.dev_tokens = if dev.is_empty() { vec![0; n] } else { dev_bytes.clone() };
    for w in 0..st.words.len() {
        let weights: Vec<i64> = st.train[w * n..(w + 1) * n].iter().map(|&c| c as i64).collect();
        let syms = std::mem::take(&mut st.words[w]);
        for p in syms.windows(2) {
            let s = st.slot((p[0], p[1]));
            for (c, w) in st.counts[s * n..(s + 1) * n].iter_mut().zip(&weights) {
                *c += w;
            }
            st.holders[s].push(w as u32);
        }
        st.words[w] = syms;
    }
    for s in 0..st.pairs.len() {
        for h in 0..=n {
            st.push(s, h);
        }
    }
    // 2. merge
    let mut by_bytes: FxHashMap<Rc<[u8]>, u32> =
        st.tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
    let (mut merges, mut chosen, mut gains) = (Vec::new(), Vec::new(), Vec::new());
    let mut pending: Vec<usize> = cfg.snapshots.clone();
    pending.sort_unstable();
    pending.dedup();
    let mut taken: FxHashMap<usize, (Snapshot, Costs)> = FxHashMap::default();
    let floor = cfg.min_frequency.max(1);
    let wanted = cfg.max_tokens.saturating_sub(256) as u64;
    let mut reported = Instant::now();
    // the moving window: the languages of the last `cfg.window` parity merges, and each one's wins
    let mut recent: VecDeque<usize> = VecDeque::with_capacity(cfg.window);
    let mut wins = vec![0usize; n];
    loop {
        if pending.first() == Some(&st.tokens.len()) {
            let size = pending.remove(0);
            let snap = Snapshot { tokens: size, merges: merges.len(), token_counts: st.token_counts() };
            taken.insert(size, (snap, st.costs()));
        }
        if st.tokens.len() >= cfg.max_tokens {
            break;
        }
        let global = merges.len() < cfg.global_merges;
        // over its share: wins / window > alpha / n, compared as wins * n > alpha * window
        let over: Vec<bool> = wins.iter().map(|&w| cfg.window > 0 && w * n > cfg.alpha * cfg.window).collect();
        let mut pick = None;
        for h in st.turns(global, &train_bytes, &over) {
            if let Some(s) = st.best(h, floor, cfg.max_token_bytes) {
                pick = Some((h, s));
                break;
            }
        }
        let Some((h, s)) = pick else { break };
        let (a, b) = st.pairs[s];
        let bytes: Rc<[u8]> = [&st.tokens[a as usize][..], &st.tokens[b as usize][..]].concat().into();
        let z = match by_bytes.get(&bytes) {
            Some(&z) => z,
            None => {
                st.tokens.push(bytes.clone());
                by_bytes.insert(bytes, (st.tokens.len() - 1) as u32);
                (st.tokens.len() - 1) as u32
            }
        };
        merges.push(Merge { left: a, right: b, result: z, count: st.count(s, n) });
        chosen.push(if h == n { None } else { Some(h as u32) });
        if h < n && cfg.window > 0 {
            if recent.len() == cfg.window {
                if let Some(l) = recent.pop_front() {
                    wins[l] -= 1;
                }
            }
            recent.push_back(h);
            wins[h] += 1;
        }
        gains.extend((0..n).map(|l| st.count(s, l)));
        st.join(s, z);
        let done = merges.len() as u64;
        if done % 64 == 0 && reported.elapsed() >= REPORT_EVERY {
            reported = Instant::now();
            if !progress("merge", done, wanted) {
                return Err(CoreError::Interrupted);
            }
        }
    }
    if !progress("merge", merges.len() as u64, wanted) {
        return Err(CoreError::Interrupted);
    }
    // 3. record
    let token_counts = st.token_counts();
    let last = st.costs();
    let mut costs = Vec::new();
    let snapshots = cfg
        .snapshots
        .iter()
        .map(|size| {
            let (snap, c) = taken.get(size).cloned().unwrap_or_else(|| {
                let snap =
                    Snapshot { tokens: st.tokens.len(), merges: merges.len(), token_counts: token_counts.clone() };
                (snap, last.clone())
            });
            costs.push(c);
            snap
        })
        .collect();
    costs.push(last);
    let tokens = st.tokens.iter().map(|t| t.to_vec()).collect();
    Ok(ParityOutput {
        trained: TrainOutput { tokens, token_counts, merges, snapshots },
        chosen,
        gains,
        train_bytes,
        dev_bytes: if dev.is_empty() { vec![0; n] } else { dev_bytes },
        costs,
        distinct_pieces,
        merge_seconds: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::{train_counts, CorpusConfig};
    use crate::count::{count_inputs, Splitting};
    use crate::pretok::{Splitter, GPT2};

    fn counts(text: &str) -> Counts {
        count_inputs(&[text.as_bytes()], Splitting::Pieces(Splitter::new(GPT2).unwrap())).unwrap()
    }

    fn cfg(max_tokens: usize) -> ParityConfig {
        ParityConfig { max_tokens, ..Default::default() }
    }

    const EN: &str = "the cat sat on the mat and the rat ate the hat; the cat and the rat are friends\n";
    const DE: &str = "die Katze sass auf der Matte und die Ratte ass den Hut; die Katze und die Ratte\n";

    #[test]
    fn one_language_is_plain_bpe() {
        let c = counts(&EN.repeat(3));
        let plain = train_counts(
            &c,
            &CorpusConfig { snapshots: vec![270], ..CorpusConfig::byte_level(300) },
            &mut |_, _, _| true,
        )
        .unwrap();
        let cf = ParityConfig { snapshots: vec![270], ..cfg(300) };
        let parity = train_parity(&[&c], &[], &cf, &mut |_, _, _| true).unwrap();
        assert_eq!(parity.trained.merges, plain.trained.merges);
        assert_eq!(parity.trained.token_counts, plain.trained.token_counts);
        assert_eq!(parity.trained.snapshots, plain.trained.snapshots);
        assert!(parity.chosen.iter().all(|&c| c == Some(0)));
    }

    #[test]
    fn global_merges_are_plain_bpe_on_the_summed_counts() {
        let (en, de) = (counts(&EN.repeat(4)), counts(DE));
        let sum = counts(&(EN.repeat(4) + DE));
        let plain = train_parity(&[&sum], &[], &cfg(290), &mut |_, _, _| true).unwrap();
        let cf = ParityConfig { global_merges: 1000, ..cfg(290) };
        let hybrid = train_parity(&[&en, &de], &[], &cf, &mut |_, _, _| true).unwrap();
        assert_eq!(hybrid.trained.merges, plain.trained.merges);
        assert!(hybrid.chosen.iter().all(|c| c.is_none()));
    }

    #[test]
    fn the_worst_language_gets_the_merge_and_gains_are_its_counts() {
        // English dominates the counts, so plain BPE would merge English pairs first; German
        // is compressed worse (nothing merged yet, ties go to the first language: English),
        // so after English's first merge the next goes to German.
        let (en, de) = (counts(&EN.repeat(10)), counts(DE));
        let out = train_parity(&[&en, &de], &[], &cfg(262), &mut |_, _, _| true).unwrap();
        assert_eq!(out.chosen[..2], [Some(0), Some(1)]);
        let g = &out.gains[2..4]; // merge 1's gains: English, German
        assert!(g[1] > 0);
        assert_eq!(out.trained.merges[1].count, g[0] + g[1]);
        // every language's tokens went down by what it gained
        let gained: Vec<u64> = (0..2).map(|l| out.gains.iter().skip(l).step_by(2).sum()).collect();
        let last = out.costs.last().unwrap();
        assert_eq!(last.train_tokens[1], out.train_bytes[1] - gained[1]);
        assert_eq!(last.train_tokens[0], out.train_bytes[0] - gained[0]);
    }

    #[test]
    fn the_moving_window_keeps_one_language_from_a_long_stretch_of_merges() {
        // German starts far behind its parallel text, so plain parity gives it a long stretch;
        // with a window of 4 and alpha 1 (a share of 1/2), no 4 merges in a row go to one
        // language while the other has a pair to merge.
        let (en, de) = (counts(&EN.repeat(10)), counts(&DE.repeat(10)));
        let (den, dde) = (counts("the cat"), counts(&DE.repeat(3)));
        let longest = |c: &[Option<u32>]| c.chunk_by(|a, b| a == b).map(|r| r.len()).max().unwrap_or(0);
        let base = train_parity(&[&en, &de], &[&den, &dde], &cfg(300), &mut |_, _, _| true).unwrap();
        assert!(longest(&base.chosen) >= 4, "{:?}", base.chosen);
        let cf = ParityConfig { window: 4, alpha: 1, ..cfg(300) };
        let win = train_parity(&[&en, &de], &[&den, &dde], &cf, &mut |_, _, _| true).unwrap();
        assert!(longest(&win.chosen) <= 3, "{:?}", win.chosen);
        assert!(win.chosen.contains(&Some(0)) && win.chosen.contains(&Some(1)));
        // alpha 2 of 2 languages allows every merge: the plain parity run
        let cf = ParityConfig { window: 4, alpha: 2, ..cfg(300) };
        let loose = train_parity(&[&en, &de], &[&den, &dde], &cf, &mut |_, _, _| true).unwrap();
        assert_eq!(loose.trained.merges, base.trained.merges);
    }

    #[test]
    fn with_a_parallel_set_the_language_with_more_development_tokens_goes_first() {
        let (en, de) = (counts(&EN.repeat(10)), counts(&DE.repeat(10)));
        // German's development text is longer: German goes first.
        let (den, dde) = (counts("the cat"), counts("die Katze und die Ratte"));
        let out = train_parity(&[&en, &de], &[&den, &dde], &cfg(257), &mut |_, _, _| true).unwrap();
        assert_eq!(out.chosen, [Some(1)]);
        assert_eq!(out.dev_bytes, [7, 23]);
        assert!(out.costs[0].dev_tokens[1] < 23);
    }
}
