//! Unigram LM trainer (SentencePiece's `unigram_model_trainer.cc` algorithm, own code).
//! Owns: input preparation, seed pieces, EM (E-step forward-backward, Bayesian M-step),
//! loss-based pruning, final trim, and the id layout of the returned pieces (see `mod.rs`).
//!
//! Outline, as in SentencePiece (0.2's, since revision 3):
//! 1. Merge and sort the words; rare characters beyond `character_coverage` become unknown.
//! 2. Seed: every kept character, plus the `seed_size` best multi-character substrings by
//!    frequency * length (substrings that repeat and are right-branching: what SP's suffix
//!    array over running text enumerates, where a word's end is followed by the next word's
//!    `▁` or by the end of its line), each valid by SP's rules; scores = log of those weights,
//!    normalized. Revision 3 finds them as SP 0.2 does, by bytes (`seeds.rs`).
//! 3. Rounds: `em_iterations` times (E-step, M-step), then prune to
//!    `max(vocab_size * 1.1, shrinking_factor * size)` pieces by the likelihood loss of
//!    replacing each piece by its second-best segmentation; stop when at most `vocab_size * 1.1`
//!    pieces remain (revision 3: after that prune, and then drop the pieces that a split of
//!    their own text outscores; before: at the start of a round, after its EM).
//! 4. Finalize: all kept characters, then the best-scoring pieces up to `vocab_size`.
//!
//! Revisions (`TrainerConfig::revision`; a run records its own, so `reproduce` retrains it the
//! same way): 1 counted every word end as a branch point, which seeded the tails of rare
//! words and whole rare words that SP's suffix array never offers (a substring followed only
//! by `▁` does not branch); they won EM as whole words and generalised worse beyond the
//! corpus (English -> German held-out text: 3.3% more tokens than SP at 8,000 pieces). 2
//! follows SP: a word's end is followed by `▁` inside a line and by the line's end after its
//! last word, which the counter marks (`corpus::LINE_END`); without those marks (a counts file
//! made before them) every word end reads as inside a line. English -> German: -0.02%. 3, the
//! default, follows SentencePiece 0.2 (its `unigram_model_trainer.cc`, read to learn the
//! rule): (a) followers are compared by their first UTF-8 byte, as its byte-level suffix
//! array does, so a substring whose followers differ only after their first byte (all kana
//! start with 0xE3) is no seed: revision 2 offered about 60% more seeds on Japanese, and
//! needed 1.3% more tokens than SP at 32,000 there; (b) seeds tie by length in bytes
//! (longer first) before their bytes; (c) each round prunes after its EM and the run stops
//! once the pruned model fits, with no EM after that prune, then drops unreachable pieces
//! (SP's `PruneUnreachableSentencePieces`); revision 2's extra EM on the pruned model shifted
//! the last scores (German -> English at 32,000: 1.2% more tokens than SP); (d) a character
//! Viterbi never uses is pruned like any piece (finalization puts it back with the lowest
//! score, as SP). docs/benchmarks.md has every setting.
//!
//! Determinism: words are sorted by bytes; seeds ordered by (weight desc, text asc; revision 3:
//! weight desc, byte length desc, text asc); pruning
//! candidates by (loss desc, text asc); final pieces by (score desc, text asc). The parallel
//! passes split the words into fixed chunks of `CHUNK` words, return per-chunk results and
//! fold them in chunk order, so floating-point sums never depend on the thread count.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::corpus::LINE_END;
use super::script::{script_of, Script};
use super::seeds;
use super::{byte_piece_text, Piece, PieceKind, Round, Sized, SplitRules, TrainResult, TrainerConfig};
use crate::error::CoreError;

/// Placeholder for characters outside `character_coverage` (SP's kUNKChar); never in a piece.
const UNK_CHAR: char = '\u{2585}';
const WS: char = '\u{2581}';
/// Words per parallel work unit. Fixed (not derived from the thread count) for determinism.
const CHUNK: usize = 512;
/// Chunks whose per-chunk results are alive at once (bounds memory; folded in chunk order).
const GROUP: usize = 64;
/// SP's kExpectedFrequencyThreshold: pieces expected less often are dropped by the M-step.
const MIN_EXPECTED: f64 = 0.5;
const UNK_PENALTY: f64 = 10.0;

/// SP's asymptotic digamma (shifts x above 7, then the series), used by the Bayesian M-step.
fn digamma(mut x: f64) -> f64 {
    let mut r = 0.0;
    while x < 7.0 {
        r -= 1.0 / x;
        x += 1.0;
    }
    x -= 0.5;
    let xx = 1.0 / x;
    let xx2 = xx * xx;
    let xx4 = xx2 * xx2;
    r + x.ln() + xx2 / 24.0 - 7.0 / 960.0 * xx4 + 31.0 / 8064.0 * xx4 * xx2 - 127.0 / 30720.0 * xx4 * xx4
}

#[inline]
fn log_add(a: f64, b: f64) -> f64 {
    super::lattice::log_add(a, b)
}

/// One training word: its text, count, how many of those ended a line, and the byte offset of
/// every character boundary.
pub(super) struct Word {
    pub(super) text: String,
    pub(super) count: u64,
    pub(super) line_end: u64,
    pub(super) bounds: Vec<u32>,
}

impl Word {
    pub(super) fn nchars(&self) -> usize {
        self.bounds.len() - 1
    }
}

/// Lattice edge of a word: characters [start, end) match seed piece `piece`.
#[derive(Clone, Copy)]
struct Edge {
    start: u32,
    end: u32,
    piece: u32,
}

/// Splits `s` around occurrences of `meta` strings (leftmost, longest), returning the pieces
/// in between. SP removes meta pieces from training text so they never end up inside pieces.
fn split_meta<'a>(s: &'a str, meta: &[&str]) -> Vec<&'a str> {
    if meta.is_empty() {
        return vec![s];
    }
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut last = 0;
    let mut i = 0;
    while i < b.len() {
        let mut m = 0;
        for t in meta {
            if t.len() > m && b[i..].starts_with(t.as_bytes()) {
                m = t.len();
            }
        }
        if m > 0 {
            if i > last {
                out.push(&s[last..i]);
            }
            i += m;
            last = i;
        } else {
            i += 1;
        }
    }
    if last < b.len() {
        out.push(&s[last..]);
    }
    out
}

/// Validity of a piece as SP's `IsValidSentencePiece`, tracked incrementally: feed characters
/// left to right; `push` says whether the piece so far is valid, and whether any extension can
/// still be (`Step::Stop` means no extension is valid either).
pub(super) struct Validity {
    rules: SplitRules,
    /// The script so far; `None` is SentencePiece's "any" (nothing yet, or after a digit when
    /// digits do not split).
    prev: Option<Script>,
    n: usize,
    digit: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// The piece so far is valid.
    Piece,
    /// Not a piece, but a longer one may be (a `▁` inside, when whitespace does not split).
    Skip,
    /// Neither this piece nor any extension of it is valid.
    Stop,
}

impl Validity {
    pub(super) fn new(rules: SplitRules) -> Self {
        Validity { rules, prev: None, n: 0, digit: false }
    }
    pub(super) fn push(&mut self, c: char) -> Step {
        let pos = self.n;
        self.n += 1;
        // Tabs are ordinary characters (script Common), as in SentencePiece: runs of them, as
        // code indents, are pieces.
        if c == UNK_CHAR || c == '\0' || c == ' ' {
            return Step::Stop;
        }
        if c == WS {
            // Whitespace starts a piece; with split_by_whitespace off it may also sit inside one,
            // never at its end.
            return match (pos, self.rules.by_whitespace) {
                (0, _) => Step::Piece,
                (_, true) => Step::Stop,
                (_, false) => Step::Skip,
            };
        }
        let is_digit = c.is_ascii_digit();
        // split_digits: a digit is a piece of its own, in no longer piece.
        if self.rules.digits && (self.digit || (is_digit && pos > 0)) {
            return Step::Stop;
        }
        self.digit |= is_digit;
        let s = match script_of(c) {
            _ if is_digit && !self.rules.by_number => None,
            // Unicode gives digits the script Common, as punctuation: "(0" and "1," may be
            // pieces, "a1" may not (SentencePiece's GetScript).
            Script::Digit => Some(Script::Common),
            Script::Inherited => self.prev,
            s => Some(s),
        };
        if self.rules.by_unicode_script {
            if let (Some(p), Some(s)) = (self.prev, s) {
                if p != s {
                    return Step::Stop;
                }
            }
        }
        self.prev = s;
        Step::Piece
    }
}

struct Model {
    /// Seed pieces (fixed for the whole run; ids into this list are "seed ids").
    texts: Vec<String>,
    nchars: Vec<u32>,
    active: Vec<bool>,
    score: Vec<f64>,
    /// Seed ids from here on are a base model's pieces (extension): always active, scores fixed.
    frozen_from: usize,
}

impl Model {
    fn active_count(&self) -> usize {
        self.active.iter().filter(|&&a| a).count()
    }
    fn min_score(&self) -> f64 {
        let mut m = f64::INFINITY;
        for (i, &a) in self.active.iter().enumerate() {
            if a {
                m = m.min(self.score[i]);
            }
        }
        m
    }
}

/// Per-word forward-backward over active edges. Pushes (seed id, expected count) in edge
/// order into `out` and returns count * log Z.
fn forward_backward(
    w: &Word,
    edges: &[Edge],
    m: &Model,
    unk_score: f64,
    alpha: &mut Vec<f64>,
    beta: &mut Vec<f64>,
    out: &mut Vec<(u32, f64)>,
) -> f64 {
    let n = w.nchars();
    alpha.clear();
    alpha.resize(n + 1, f64::NEG_INFINITY);
    beta.clear();
    beta.resize(n + 1, f64::NEG_INFINITY);
    alpha[0] = 0.0;
    beta[n] = 0.0;
    // Edges are sorted by start; the unknown edge (start, start+1) is implied where a
    // position has no active single-character edge.
    let mut i = 0;
    for pos in 0..n {
        let a = alpha[pos];
        let mut single = false;
        while i < edges.len() && edges[i].start as usize == pos {
            let e = edges[i];
            i += 1;
            if !m.active[e.piece as usize] {
                continue;
            }
            single |= e.end as usize == pos + 1;
            let t = &mut alpha[e.end as usize];
            *t = log_add(*t, a + m.score[e.piece as usize]);
        }
        if !single {
            let t = &mut alpha[pos + 1];
            *t = log_add(*t, a + unk_score);
        }
    }
    let mut i = edges.len();
    for pos in (0..n).rev() {
        let mut b = f64::NEG_INFINITY;
        let mut single = false;
        while i > 0 && edges[i - 1].start as usize == pos {
            i -= 1;
            let e = edges[i];
            if !m.active[e.piece as usize] {
                continue;
            }
            single |= e.end as usize == pos + 1;
            b = log_add(b, m.score[e.piece as usize] + beta[e.end as usize]);
        }
        if !single {
            b = log_add(b, unk_score + beta[pos + 1]);
        }
        beta[pos] = b;
    }
    let z = alpha[n];
    let c = w.count as f64;
    for e in edges {
        if !m.active[e.piece as usize] {
            continue;
        }
        let p = (alpha[e.start as usize] + m.score[e.piece as usize] + beta[e.end as usize] - z).exp();
        out.push((e.piece, c * p));
    }
    c * z
}

/// Viterbi over active edges (+ implied unknown edges). Returns the path as seed ids
/// (`u32::MAX` = unknown) and its score. Ties: the first candidate in (start asc) order wins
/// for each end position, i.e. the longest last piece, like SP.
/// `skip` excludes one edge (start 0, end n, that seed id) to get the best alternative.
fn viterbi(
    n: usize,
    edges: &[Edge],
    m: &Model,
    unk_score: f64,
    skip: Option<u32>,
    best: &mut Vec<(f64, u32, u32)>,
) -> (Vec<u32>, f64) {
    best.clear();
    best.resize(n + 1, (f64::NEG_INFINITY, u32::MAX, u32::MAX));
    best[0].0 = 0.0;
    let mut i = 0;
    for pos in 0..n {
        let a = best[pos].0;
        let mut single = false;
        while i < edges.len() && edges[i].start as usize == pos {
            let e = edges[i];
            i += 1;
            if !m.active[e.piece as usize] {
                continue;
            }
            single |= e.end as usize == pos + 1;
            if pos == 0 && e.end as usize == n && skip == Some(e.piece) {
                continue;
            }
            let s = a + m.score[e.piece as usize];
            let t = &mut best[e.end as usize];
            if t.1 == u32::MAX || s > t.0 {
                *t = (s, pos as u32, e.piece);
            }
        }
        if !single {
            let s = a + unk_score;
            let t = &mut best[pos + 1];
            if t.1 == u32::MAX || s > t.0 {
                *t = (s, pos as u32, u32::MAX);
            }
        }
    }
    let mut path = Vec::new();
    let mut p = n;
    if best[n].1 == u32::MAX && n > 0 {
        return (path, f64::NEG_INFINITY);
    }
    while p > 0 {
        let (_, s, id) = best[p];
        path.push(id);
        p = s as usize;
    }
    path.reverse();
    (path, best[n].0)
}

/// The best segmentation of piece `p`'s own text without the piece itself, over the active
/// pieces (and unknown edges): its seed ids (`u32::MAX` = unknown) and score.
fn alternative(
    m: &Model,
    p: u32,
    maxlen: usize,
    index: &FxHashMap<&str, u32>,
    unk_score: f64,
    edges: &mut Vec<Edge>,
    best: &mut Vec<(f64, u32, u32)>,
) -> (Vec<u32>, f64) {
    let t = &m.texts[p as usize];
    let mut bounds: Vec<u32> = t.char_indices().map(|(i, _)| i as u32).collect();
    bounds.push(t.len() as u32);
    edges.clear();
    let n = bounds.len() - 1;
    for i in 0..n {
        for j in i + 1..=(i + maxlen).min(n) {
            if let Some(&id) = index.get(&t[bounds[i] as usize..bounds[j] as usize]) {
                edges.push(Edge { start: i as u32, end: j as u32, piece: id });
            }
        }
    }
    viterbi(n, edges, m, unk_score, Some(p), best)
}

/// SentencePiece 0.2's last step before finalizing (`PruneUnreachableSentencePieces`, revision
/// 3): the pieces that Viterbi never picks, because a split of their own text scores higher
/// than they do, to be dropped. Every decision is taken on the model as it stands.
fn unreachable(model: &Model, maxlen: usize, index: &FxHashMap<&str, u32>) -> Vec<u32> {
    let unk_score = model.min_score() - UNK_PENALTY;
    let act: Vec<u32> =
        (0..model.frozen_from as u32).filter(|&i| model.active[i as usize] && model.nchars[i as usize] > 1).collect();
    let m = model;
    act.par_chunks(CHUNK)
        .map(|ch| {
            let (mut best, mut edges) = (Vec::new(), Vec::new());
            ch.iter()
                .copied()
                .filter(|&p| alternative(m, p, maxlen, index, unk_score, &mut edges, &mut best).1 > m.score[p as usize])
                .collect::<Vec<u32>>()
        })
        .flatten()
        .collect()
}

/// Trains a unigram model on distinct words with counts (each word already carrying its `▁`).
///
/// `progress(phase, done, total)` is called between units of work, with phases "prepare",
/// "seed" (words scanned), "lattice", "em" (done = round, total = 0: the number of rounds is not
/// known in advance), "prune" (step of 3) and "done"; returning false stops with
/// `CoreError::Interrupted`. Errors also for invalid settings, a vocab_size that cannot hold the
/// meta pieces and required characters, or one larger than the corpus supports.
pub fn train(
    words: &[(String, u64)],
    cfg: &TrainerConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<TrainResult, CoreError> {
    macro_rules! tick {
        ($phase:expr, $done:expr, $total:expr) => {
            if !progress($phase, $done as u64, $total as u64) {
                return Err(CoreError::Interrupted);
            }
        };
    }
    if !(cfg.shrinking_factor > 0.0 && cfg.shrinking_factor < 1.0) {
        return Err(CoreError::input(format!(
            "the shrinking factor {} is not between 0 and 1; use e.g. 0.75",
            cfg.shrinking_factor
        )));
    }
    if cfg.max_piece_length == 0 {
        return Err(CoreError::input("the maximum piece length is 0; it must be at least 1 (e.g. 16)"));
    }
    if cfg.em_iterations == 0 {
        return Err(CoreError::input("the number of EM iterations is 0; it must be at least 1 (e.g. 2)"));
    }
    if !(cfg.character_coverage > 0.0 && cfg.character_coverage <= 1.0) {
        return Err(CoreError::input(format!(
            "the character coverage {} is not in (0, 1]; use e.g. 1.0 or 0.9995",
            cfg.character_coverage
        )));
    }

    // ---- Meta pieces and id layout ----
    let mut meta: Vec<Piece> = Vec::new();
    let mk = |t: &str, k| Piece { text: t.to_string(), score: 0.0, kind: k };
    meta.push(mk(&cfg.unk_piece, PieceKind::Unknown));
    for c in &cfg.control_pieces {
        meta.push(mk(c, PieceKind::Control));
    }
    for u in &cfg.user_defined {
        meta.push(mk(u, PieceKind::UserDefined));
    }
    if cfg.byte_fallback {
        for b in 0..=255u8 {
            meta.push(mk(&byte_piece_text(b), PieceKind::Byte));
        }
    }
    {
        let mut seen = rustc_hash::FxHashSet::default();
        for p in &meta {
            if p.text.is_empty() {
                return Err(CoreError::input("an unknown, control or user-defined piece is empty; name it"));
            }
            if !seen.insert(p.text.as_str()) {
                return Err(CoreError::input(format!("the piece {:?} is given twice; give it once", p.text)));
            }
        }
    }
    // Every size asked for, largest first: the run ends at the smallest.
    let mut sizes: Vec<usize> = cfg.snapshots.iter().copied().chain([cfg.vocab_size]).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    let smallest = *sizes.last().unwrap_or(&cfg.vocab_size);
    if smallest <= meta.len() {
        return Err(CoreError::VocabTooSmall {
            requested: smallest,
            needed: meta.len() + 1,
            base: meta_description(meta.len(), 0),
        });
    }
    let budget = smallest - meta.len();

    // ---- 1. Words: strip meta texts, merge, sort ----
    let meta_texts: Vec<&str> = meta.iter().filter(|p| p.kind != PieceKind::Byte).map(|p| p.text.as_str()).collect();
    // word -> (count, of which at a line end)
    let mut merged: FxHashMap<&str, (u64, u64)> = FxHashMap::default();
    for (w, c) in words {
        if *c == 0 {
            continue;
        }
        // The counter marks the last word of a line (`corpus::LINE_END`), when asked to.
        let (w, line_end) = match w.strip_suffix(LINE_END) {
            Some(s) => (s, *c),
            None => (w.as_str(), 0),
        };
        let end = w.as_ptr() as usize + w.len();
        for part in split_meta(w, &meta_texts) {
            let e = merged.entry(part).or_insert((0, 0));
            e.0 += *c;
            if part.as_ptr() as usize + part.len() == end {
                e.1 += line_end;
            }
        }
    }
    // Character counts and coverage (SP: count desc, then character asc).
    let mut char_count: FxHashMap<char, u64> = FxHashMap::default();
    for (w, (c, _)) in &merged {
        for ch in w.chars() {
            *char_count.entry(ch).or_insert(0) += *c;
        }
    }
    // Extending: the base's pieces, and its characters, which need no new piece.
    let base_texts: rustc_hash::FxHashSet<&str> = cfg.base.iter().map(|(t, _)| t.as_str()).collect();
    let base_chars: rustc_hash::FxHashSet<char> =
        cfg.base.iter().filter_map(|(t, _)| if t.chars().count() == 1 { t.chars().next() } else { None }).collect();
    // Extending while keeping a text: its characters, and every substring of its words up to
    // the longest piece.
    let kept_chars: rustc_hash::FxHashSet<char> = cfg.keep.iter().flat_map(|k| k.chars()).collect();
    let mut kept: rustc_hash::FxHashSet<&str> = rustc_hash::FxHashSet::default();
    for k in &cfg.keep {
        let starts: Vec<usize> = k.char_indices().map(|(i, _)| i).chain([k.len()]).collect();
        for i in 0..starts.len() {
            for j in i + 2..starts.len().min(i + cfg.max_piece_length + 1) {
                kept.insert(&k[starts[i]..starts[j]]);
            }
        }
    }
    let mut chars: Vec<(char, u64)> = char_count
        .into_iter()
        .filter(|&(ch, _)| ch != UNK_CHAR && ch != ' ' && !base_chars.contains(&ch) && !kept_chars.contains(&ch))
        .collect();
    chars.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let total_chars: u64 = chars.iter().map(|c| c.1).sum();
    let mut required: Vec<(char, u64)> = Vec::new();
    let mut acc = 0u64;
    for &(ch, n) in &chars {
        if total_chars > 0 && (acc as f64 / total_chars as f64) >= cfg.character_coverage {
            break;
        }
        acc += n;
        required.push((ch, n));
    }
    if required.is_empty() && cfg.base.is_empty() {
        return Err(CoreError::input("the corpus has no text to train on; give files that contain text"));
    }
    if !cfg.base.is_empty() {
        // Extending: the most frequent new characters that fit (the others stay unknown, or
        // bytes with byte fallback), so a new script never asks for more pieces than allowed.
        required.truncate(budget);
    }
    if required.len() > budget {
        return Err(CoreError::VocabTooSmall {
            requested: smallest,
            needed: meta.len() + required.len(),
            base: meta_description(meta.len(), required.len()),
        });
    }
    let required_set: rustc_hash::FxHashSet<char> = required.iter().map(|c| c.0).chain(base_chars).collect();
    let mut words2: FxHashMap<String, (u64, u64)> = FxHashMap::default();
    for (w, (c, ends)) in merged {
        let t: String = if w.chars().all(|ch| required_set.contains(&ch)) {
            w.to_string()
        } else {
            w.chars().map(|ch| if required_set.contains(&ch) { ch } else { UNK_CHAR }).collect()
        };
        let e = words2.entry(t).or_insert((0, 0));
        e.0 += c;
        e.1 += ends;
    }
    let mut wl: Vec<(String, (u64, u64))> = words2.into_iter().collect();
    wl.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let words: Vec<Word> = wl
        .into_iter()
        .map(|(text, (count, line_end))| {
            let mut bounds: Vec<u32> = text.char_indices().map(|(i, _)| i as u32).collect();
            bounds.push(text.len() as u32);
            Word { text, count, line_end, bounds }
        })
        .collect();
    let nwords = words.len();
    tick!("prepare", nwords, nwords);

    // ---- 2. Seed pieces ----
    let maxlen = cfg.max_piece_length;
    let allow = |s: &str| !base_texts.contains(s) && !kept.contains(s);
    let mut seeds: Vec<(&str, u64)> = if cfg.revision >= 3 {
        // SentencePiece 0.2's byte-level suffix array (seeds.rs).
        tick!("seed", 0, nwords);
        seeds::candidates(&words, cfg.split, maxlen, allow)
    } else {
        let word_end_branches = cfg.revision < 2;
        // (weighted frequency, first follower, right-branching)
        let mut subs: FxHashMap<&str, (u64, u32, bool)> = FxHashMap::default();
        const END: u32 = u32::MAX;
        for (wi, w) in words.iter().enumerate() {
            if wi % 4096 == 0 {
                tick!("seed", wi, nwords);
            }
            let n = w.nchars();
            let t = &w.text;
            for i in 0..n {
                let mut v = Validity::new(cfg.split);
                let c0 = t[w.bounds[i] as usize..].chars().next().unwrap();
                if v.push(c0) == Step::Stop {
                    continue;
                }
                for j in i + 2..=(i + maxlen).min(n) {
                    let cj = t[w.bounds[j - 1] as usize..].chars().next().unwrap();
                    match v.push(cj) {
                        Step::Stop => break,
                        Step::Skip => continue,
                        Step::Piece => {}
                    }
                    let s = &t[w.bounds[i] as usize..w.bounds[j] as usize];
                    // What follows the substring, as in SentencePiece's suffix array over running
                    // text: the next character; at a word's end, the next word's `▁`, or the end of
                    // the line (both, when the word occurs mid-line and at a line end). So a
                    // substring seen only at word ends inside lines (a rare whole word, a word's
                    // tail) is no branch point. Revision 1 counted every word end as one.
                    let followers: [Option<u32>; 2] = if j < n {
                        [Some(t[w.bounds[j] as usize..].chars().next().unwrap() as u32), None]
                    } else if word_end_branches {
                        [Some(END), None]
                    } else {
                        [(w.count > w.line_end).then_some(WS as u32), (w.line_end > 0).then_some(LINE_END as u32)]
                    };
                    let first = followers[0].or(followers[1]).unwrap_or(END);
                    let e = subs.entry(s).or_insert((0, first, false));
                    e.0 += w.count;
                    for f in followers.into_iter().flatten() {
                        if f == END || e.1 != f {
                            e.2 = true;
                        }
                    }
                }
            }
        }
        subs.into_iter()
            .filter(|&(s, (f, _, branching))| f >= 2 && branching && allow(s))
            .map(|(s, (f, _, _))| (s, f * s.chars().count() as u64))
            .collect()
    };
    if cfg.revision >= 3 {
        // SentencePiece's order: weight, then longer in bytes, then bytes.
        seeds.sort_unstable_by(|a, b| {
            b.1.cmp(&a.1).then(b.0.len().cmp(&a.0.len())).then(a.0.as_bytes().cmp(b.0.as_bytes()))
        });
    } else {
        seeds.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.as_bytes().cmp(b.0.as_bytes())));
    }
    seeds.truncate(cfg.seed_size);
    let mut model =
        Model { texts: Vec::new(), nchars: Vec::new(), active: Vec::new(), score: Vec::new(), frozen_from: 0 };
    let mut weights: Vec<f64> = Vec::new();
    for &(ch, n) in &required {
        model.texts.push(ch.to_string());
        model.nchars.push(1);
        weights.push(n as f64);
    }
    for &(s, sc) in &seeds {
        model.texts.push(s.to_string());
        model.nchars.push(s.chars().count() as u32);
        weights.push(sc as f64);
    }
    drop(seeds);
    let wsum: f64 = weights.iter().sum();
    let lsum = wsum.ln();
    model.score = weights.iter().map(|w| w.ln() - lsum).collect();
    model.frozen_from = model.texts.len();
    for (t, score) in &cfg.base {
        model.texts.push(t.clone());
        model.nchars.push(t.chars().count() as u32);
        model.score.push(*score);
    }
    let nfrozen = cfg.base.len();
    model.active = vec![true; model.texts.len()];
    let nseed = model.texts.len();
    let index: FxHashMap<&str, u32> = model.texts.iter().enumerate().map(|(i, t)| (t.as_str(), i as u32)).collect();

    // Static lattices: every (start, end, seed id) match per word, sorted by (start, end).
    let lookup_edges = |w: &Word, out: &mut Vec<Edge>| {
        let n = w.nchars();
        for i in 0..n {
            for j in i + 1..=(i + maxlen).min(n) {
                let s = &w.text[w.bounds[i] as usize..w.bounds[j] as usize];
                if let Some(&id) = index.get(s) {
                    out.push(Edge { start: i as u32, end: j as u32, piece: id });
                }
            }
        }
    };
    let chunk_edges: Vec<(Vec<Edge>, Vec<u32>)> = words
        .par_chunks(CHUNK)
        .map(|ch| {
            let mut edges = Vec::new();
            let mut offs = vec![0u32];
            for w in ch {
                lookup_edges(w, &mut edges);
                offs.push(edges.len() as u32);
            }
            // The lattices live through all rounds: drop the slack that growing left.
            edges.shrink_to_fit();
            (edges, offs)
        })
        .collect();
    tick!("lattice", nwords, nwords);

    // SP compares the learned-piece count (no meta pieces) with vocab_size * 1.1. With several
    // sizes, the largest one not yet taken sets the target: each size is finalized at the first
    // round that reaches its own target, exactly as a run for that size alone would be.
    let desired = |size: usize| (size as f64 * 1.1) as usize;
    let mut pending = sizes.clone();
    let mut finished: Vec<(usize, Vec<Piece>, usize)> = Vec::new();
    let mut rounds: Vec<Round> = Vec::new();
    let mut round = 0u32;
    let mut expected = vec![0f64; nseed];
    // Revision 3 follows SentencePiece 0.2's loop: EM, prune, and stop once the pruned model
    // fits (its last scores are the EM's before that prune), then drop unreachable pieces;
    // before, EM ran once more on the pruned model, and chars were never pruned.
    let prune_last = cfg.revision >= 3;
    loop {
        let mut ll = 0.0;
        for _ in 0..cfg.em_iterations {
            // ---- E-step ----
            let unk_score = model.min_score() - UNK_PENALTY;
            let m = &model;
            expected.iter_mut().for_each(|x| *x = 0.0);
            ll = 0.0;
            // A group of chunks at a time, folded in chunk order: the same sums as folding all
            // chunks at once, with only one group's (piece, expectation) lists alive.
            for (words, chunk_edges) in words.chunks(CHUNK * GROUP).zip(chunk_edges.chunks(GROUP)) {
                let parts: Vec<(Vec<(u32, f64)>, f64)> = words
                    .par_chunks(CHUNK)
                    .zip(chunk_edges.par_iter())
                    .map(|(ch, (edges, offs))| {
                        let (mut a, mut b) = (Vec::new(), Vec::new());
                        let mut out = Vec::new();
                        let mut z = 0.0;
                        for (k, w) in ch.iter().enumerate() {
                            let e = &edges[offs[k] as usize..offs[k + 1] as usize];
                            z += forward_backward(w, e, m, unk_score, &mut a, &mut b, &mut out);
                        }
                        (out, z)
                    })
                    .collect();
                for (out, z) in parts {
                    for (id, v) in out {
                        expected[id as usize] += v;
                    }
                    ll += z;
                }
            }
            // ---- M-step (Bayesian: digamma instead of log, SP's sparse prior) ----
            let mut sum = 0.0;
            for i in 0..nseed {
                if !model.active[i] {
                    continue;
                }
                if i >= model.frozen_from {
                    sum += expected[i]; // a base piece: its share counts, its score stays
                    continue;
                }
                if expected[i] < MIN_EXPECTED {
                    model.active[i] = false;
                    continue;
                }
                sum += expected[i];
            }
            let dsum = digamma(sum);
            for i in 0..model.frozen_from {
                if model.active[i] {
                    model.score[i] = digamma(expected[i]) - dsum;
                }
            }
            tick!("em", round, model.active_count());
        }
        let size = model.active_count() - nfrozen;
        rounds.push(Round { round, vocab_size: size, log_likelihood: ll });
        round += 1;
        while let Some(&next) = pending.first().filter(|_| !prune_last) {
            if size > desired(next) {
                break;
            }
            finished.push((next, finalize(&model, &required, &meta, next)?, rounds.len()));
            pending.remove(0);
        }
        if pending.is_empty() {
            break;
        }

        // ---- Pruning ----
        let unk_score = model.min_score() - UNK_PENALTY;
        // Alternatives: the best segmentation of each piece without the piece itself.
        let act: Vec<u32> = (0..nseed as u32).filter(|&i| model.active[i as usize]).collect();
        let m = &model;
        let alts: Vec<(bool, Option<Vec<u32>>)> = act
            .par_chunks(CHUNK)
            .map(|ch| {
                let mut best = Vec::new();
                let mut edges = Vec::new();
                ch.iter()
                    .map(|&p| {
                        if m.nchars[p as usize] == 1 || p as usize >= m.frozen_from {
                            return (true, None); // single characters and base pieces are never pruned
                        }
                        let (path, sc) = alternative(m, p, maxlen, &index, unk_score, &mut edges, &mut best);
                        if sc > m.score[p as usize] {
                            (false, None) // its Viterbi path is already split: removable
                        } else if path.contains(&u32::MAX) {
                            (true, None) // no alternative made of pieces: keep
                        } else {
                            (true, Some(path))
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<Vec<_>>>()
            .into_iter()
            .flatten()
            .collect();
        tick!("prune", 1, 3);
        // Viterbi frequencies over the corpus.
        let parts: Vec<Vec<u32>> = words
            .par_chunks(CHUNK)
            .zip(chunk_edges.par_iter())
            .map(|(ch, (edges, offs))| {
                let mut best = Vec::new();
                let mut out = Vec::new();
                for (k, w) in ch.iter().enumerate() {
                    let e = &edges[offs[k] as usize..offs[k + 1] as usize];
                    let (path, _) = viterbi(w.nchars(), e, m, unk_score, None, &mut best);
                    out.extend(path.into_iter().filter(|&x| x != u32::MAX));
                    out.push(u32::MAX - 1); // word separator
                }
                out
            })
            .collect();
        let mut freq = vec![0f64; nseed];
        let mut vsum = 0f64;
        for (ci, out) in parts.iter().enumerate() {
            let mut k = ci * CHUNK;
            for &x in out {
                if x == u32::MAX - 1 {
                    vsum += words[k].count as f64;
                    k += 1;
                } else {
                    freq[x as usize] += words[k].count as f64;
                }
            }
        }
        drop(parts);
        tick!("prune", 2, 3);
        let sum: f64 = act.iter().map(|&p| freq[p as usize]).sum();
        let logsum = sum.ln();
        let mut keep: Vec<u32> = Vec::new();
        let mut cands: Vec<(u32, f64)> = Vec::new();
        for (k, &p) in act.iter().enumerate() {
            let (always, ref alt) = alts[k];
            let f = freq[p as usize];
            if p as usize >= model.frozen_from || (model.nchars[p as usize] == 1 && !prune_last) {
                keep.push(p);
                continue;
            }
            if f == 0.0 || !always {
                continue;
            }
            match alt {
                None => keep.push(p),
                Some(alt) => {
                    let big_f = f / vsum;
                    let lp = f.ln() - logsum;
                    let logsum_alt = (sum + f * (alt.len() as f64 - 1.0)).ln();
                    let lp_alt: f64 = alt.iter().map(|&a| (freq[a as usize] + f).ln() - logsum_alt).sum();
                    cands.push((p, big_f * (lp - lp_alt)));
                }
            }
        }
        cands.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| model.texts[a.0 as usize].as_bytes().cmp(model.texts[b.0 as usize].as_bytes()))
        });
        let pruned = |size: usize| {
            let target = desired(size).max((cfg.shrinking_factor * (act.len() - nfrozen) as f64) as usize) + nfrozen;
            let mut kept = keep.clone();
            kept.extend(cands.iter().map(|c| c.0).take(target.saturating_sub(keep.len())));
            let mut active = vec![false; nseed];
            for &p in &kept {
                active[p as usize] = true;
            }
            (kept.len(), active)
        };
        if prune_last {
            // Each size whose pruned model fits is finalized from it, as a run to that size
            // alone stops here (a smaller size prunes the same candidates to its own target).
            while let Some(&next) = pending.first() {
                let (n, active) = pruned(next);
                if n - nfrozen > desired(next) {
                    break;
                }
                let saved = std::mem::replace(&mut model.active, active);
                for p in unreachable(&model, maxlen, &index) {
                    model.active[p as usize] = false;
                }
                finished.push((next, finalize(&model, &required, &meta, next)?, rounds.len()));
                model.active = saved;
                pending.remove(0);
            }
        }
        let Some(&next) = pending.first() else { break };
        let (kept, new_active) = pruned(next);
        // Nothing could go (every piece left is a character, a base piece or has no
        // alternative): another round would loop forever (small texts at small sizes do).
        let stalled = kept >= act.len();
        model.active = new_active;
        tick!("prune", 3, 3);
        if stalled {
            // The vocabularies still to come are taken from the model as it stands, as
            // SentencePiece's finalization takes them (the best-scoring pieces).
            if prune_last {
                for p in unreachable(&model, maxlen, &index) {
                    model.active[p as usize] = false;
                }
            }
            for next in pending.drain(..) {
                finished.push((next, finalize(&model, &required, &meta, next)?, rounds.len()));
            }
            break;
        }
    }

    // ---- 4. Finalize: each size as asked ----
    tick!("done", 1, 1);
    let mut out: Option<TrainResult> = None;
    let mut sized = Vec::new();
    for &size in cfg.snapshots.iter().chain([&cfg.vocab_size]) {
        let Some((_, pieces, n)) = finished.iter().find(|f| f.0 == size) else { continue };
        sized.push(Sized { vocab_size: size, pieces: pieces.clone(), rounds: *n });
    }
    if let Some(main) = sized.pop() {
        out = Some(TrainResult { pieces: main.pieces, rounds, sized });
    }
    out.ok_or_else(|| CoreError::input("the Unigram trainer ended without a vocabulary; report this"))
}

/// The vocabulary of `size` pieces from the model as it stands: every kept character, then the
/// best-scoring pieces (SentencePiece's finalization), sorted by score descending, then bytes.
fn finalize(model: &Model, required: &[(char, u64)], meta: &[Piece], size: usize) -> Result<Vec<Piece>, CoreError> {
    let budget = size - meta.len();
    let nseed = model.texts.len();
    let mut final_pieces: Vec<(String, f64)> = Vec::with_capacity(budget);
    let mut in_final = vec![false; nseed];
    let min_score = model.min_score();
    let mut penalty = 0.0;
    for (i, _) in required.iter().enumerate() {
        // Required characters are seed ids 0..required.len(), in (count desc, char asc) order.
        if model.active[i] {
            final_pieces.push((model.texts[i].clone(), model.score[i]));
        } else {
            // SP: rarest missing characters get the lowest scores, all distinct.
            final_pieces.push((model.texts[i].clone(), min_score + penalty));
            penalty += 0.0001;
        }
        in_final[i] = true;
    }
    let mut rest: Vec<u32> =
        (0..model.frozen_from as u32).filter(|&i| model.active[i as usize] && !in_final[i as usize]).collect();
    rest.sort_by(|&a, &b| {
        model.score[b as usize]
            .total_cmp(&model.score[a as usize])
            .then_with(|| model.texts[a as usize].as_bytes().cmp(model.texts[b as usize].as_bytes()))
    });
    for p in rest {
        if final_pieces.len() >= budget {
            break;
        }
        final_pieces.push((model.texts[p as usize].clone(), model.score[p as usize]));
    }
    if final_pieces.len() < budget {
        return Err(CoreError::VocabTooLarge { requested: size, reachable: final_pieces.len() + meta.len() });
    }
    final_pieces.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.as_bytes().cmp(b.0.as_bytes())));
    let mut pieces = meta.to_vec();
    pieces.extend(final_pieces.into_iter().map(|(text, score)| Piece { text, score, kind: PieceKind::Normal }));
    Ok(pieces)
}

/// The base alphabet of a Unigram model in words: its meta pieces (unknown, control,
/// user-defined, bytes) and the characters that must each have a piece.
fn meta_description(meta: usize, chars: usize) -> String {
    let pieces = if meta == 1 { "1 meta piece".to_string() } else { format!("{meta} meta pieces") };
    match chars {
        0 => format!("{pieces} + at least 1 learned piece"),
        1 => format!("{pieces} + 1 character of the corpus"),
        n => format!("{pieces} + {n} characters of the corpus"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unigram::Encoder;

    fn corpus_words(text: &str) -> Vec<(String, u64)> {
        let mut m: std::collections::BTreeMap<String, u64> = Default::default();
        for line in text.lines() {
            if line.is_empty() {
                continue;
            }
            let s = format!("▁{}", line.replace(' ', "▁"));
            let mut cur = String::new();
            for ch in s.chars() {
                if ch == '▁' && !cur.is_empty() {
                    *m.entry(std::mem::take(&mut cur)).or_insert(0) += 1;
                }
                cur.push(ch);
            }
            if !cur.is_empty() {
                *m.entry(cur).or_insert(0) += 1;
            }
        }
        m.into_iter().collect()
    }

    fn small_corpus() -> String {
        // A real corpus slice when available, else a synthetic text varied enough to fill the
        // tests' vocabularies: words of one to four syllables, so that there are thousands of
        // distinct words and far more than 1000 candidate pieces.
        if let Some(t) = crate::test_data::read("kjv.txt") {
            return t.lines().take(3000).collect::<Vec<_>>().join("\n");
        }
        let syllables = [
            "the", "of", "and", "un", "to", "lo", "rd", "sa", "id", "peo", "ple", "hou", "se", "chil", "dren", "is",
            "ra", "el", "king", "land", "day", "god", "man", "ka", "mi", "ren", "tu", "sha", "vel", "dor", "pri",
            "nes",
        ];
        let mut s = String::new();
        let mut x = 12345u64;
        let mut next = |n: usize| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize % n
        };
        for _ in 0..3000 {
            for _ in 0..10 {
                for _ in 0..1 + next(4) {
                    s.push_str(syllables[next(syllables.len())]);
                }
                s.push(' ');
            }
            s.push('\n');
        }
        s
    }

    fn cfg(vocab: usize) -> TrainerConfig {
        TrainerConfig { vocab_size: vocab, ..Default::default() }
    }

    #[test]
    fn digamma_values() {
        // digamma(1) = -euler_gamma, digamma(10) = 2.251752589066721
        assert!((digamma(1.0) + 0.5772156649015329).abs() < 1e-9);
        assert!((digamma(10.0) - 2.251752589066721).abs() < 1e-9);
    }

    #[test]
    fn split_meta_parts() {
        assert_eq!(split_meta("a<s>b<s>", &["<s>", "</s>"]), vec!["a", "b"]);
        assert_eq!(split_meta("ab", &[]), vec!["ab"]);
    }

    #[test]
    fn validity_rules() {
        let ok = |s: &str| {
            let mut v = Validity::new(SplitRules::default());
            s.chars().map(|c| v.push(c)).last() == Some(Step::Piece) && {
                let mut v = Validity::new(SplitRules::default());
                s.chars().all(|c| v.push(c) != Step::Stop)
            }
        };
        assert!(ok("▁the"));
        assert!(!ok("the▁"));
        assert!(!ok("s,"));
        assert!(ok(".,"));
        assert!(!ok("a1"));
        assert!(ok("(0") && ok("1,"));
        assert!(ok("中文"));
        let with = |rules: SplitRules, s: &str| {
            let mut v = Validity::new(rules);
            s.chars().map(|c| v.push(c)).collect::<Vec<_>>()
        };
        use Step::*;
        let d = SplitRules::default();
        assert_eq!(with(SplitRules { by_number: false, ..d }, "a1b"), [Piece, Piece, Piece]);
        assert_eq!(with(SplitRules { by_unicode_script: false, ..d }, "s,"), [Piece, Piece]);
        assert_eq!(with(SplitRules { by_whitespace: false, ..d }, "▁a▁b"), [Piece, Piece, Skip, Piece]);
        assert_eq!(with(SplitRules { digits: true, ..d }, "12")[1], Stop);
        assert_eq!(with(SplitRules { digits: true, by_number: false, ..d }, "1a")[1], Stop);
    }

    #[test]
    fn trains_exact_vocab_size_keeping_all_chars() {
        let text = small_corpus();
        let words = corpus_words(&text);
        let c = cfg(1000);
        let r = train(&words, &c, &mut |_, _, _| true).unwrap();
        assert_eq!(r.pieces.len(), 1000);
        assert_eq!(r.pieces[0].kind, PieceKind::Unknown);
        assert_eq!(r.pieces[1].text, "<s>");
        assert_eq!(r.pieces[2].text, "</s>");
        let texts: std::collections::HashSet<&str> = r.pieces.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts.len(), 1000);
        for (w, _) in &words {
            for ch in w.chars() {
                assert!(texts.contains(ch.to_string().as_str()), "missing char {:?}", ch);
            }
        }
        // Scores of normal pieces are sorted descending.
        for w in r.pieces[3..].windows(2) {
            assert!(w[0].score >= w[1].score);
        }
        assert!(r.rounds.len() >= 2);
        // The trained model encodes the training text losslessly.
        let e = Encoder::new(&r.pieces).unwrap();
        for line in text.lines().take(50) {
            let s = format!("▁{}", line.replace(' ', "▁"));
            assert_eq!(e.decode_pieces(&e.encode(&s)), s.as_bytes());
        }
    }

    #[test]
    fn deterministic_across_threads_and_input_order() {
        let text = small_corpus();
        let words = corpus_words(&text);
        let c = TrainerConfig { byte_fallback: true, user_defined: vec!["LORD".into()], ..cfg(900) };
        let run = |n: usize, w: &[(String, u64)]| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
                .install(|| train(w, &c, &mut |_, _, _| true).unwrap())
        };
        let a = run(1, &words);
        let b = run(2, &words);
        let mut shuffled = words.clone();
        let mut x = 7u64;
        for i in (1..shuffled.len()).rev() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (x >> 33) as usize % (i + 1));
        }
        // Also split one word's count over two entries: merging must make it irrelevant.
        let (w0, c0) = shuffled[0].clone();
        if c0 >= 2 {
            shuffled[0].1 = 1;
            shuffled.push((w0, c0 - 1));
        }
        let s = run(2, &shuffled);
        assert_eq!(a.pieces, b.pieces);
        assert_eq!(a.pieces, s.pieces);
        assert_eq!(a.rounds, b.rounds);
        assert_eq!(a.pieces.len(), 900);
        assert_eq!(a.pieces[3].kind, PieceKind::UserDefined);
        assert_eq!(a.pieces[4].text, "<0x00>");
        assert!(!a.pieces.iter().skip(4).any(|p| p.text.contains("LORD")));
    }

    #[test]
    fn revision_two_seeds_no_word_tail_seen_only_inside_lines() {
        // "▁zork" is always followed by another word inside its line: no branch point in
        // revision 2 (SentencePiece's suffix array), a seed in revision 1. Once it also ends a
        // line (marked by the counter), it branches again.
        let mut words = corpus_words(&small_corpus());
        words.push(("▁zork".into(), 40));
        let has = |words: &[(String, u64)], revision: u32| {
            let c = TrainerConfig { revision, ..cfg(1000) };
            train(words, &c, &mut |_, _, _| true).unwrap().pieces.iter().any(|p| p.text == "▁zork")
        };
        assert!(has(&words, 1));
        assert!(!has(&words, 2));
        words.push(("▁zork\n".into(), 40));
        assert!(has(&words, 2));
    }

    #[test]
    fn interrupt_and_errors() {
        let words = corpus_words(&small_corpus());
        let r = train(&words, &cfg(1000), &mut |ph, _, _| ph != "em");
        assert_eq!(r.unwrap_err(), CoreError::Interrupted);
        assert!(train(&words, &cfg(3), &mut |_, _, _| true).is_err());
        assert!(train(&[], &cfg(100), &mut |_, _, _| true).is_err());
        assert!(train(&corpus_words("ab ab ab"), &cfg(1000), &mut |_, _, _| true).is_err());
    }
}
