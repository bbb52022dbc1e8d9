//! Unigram encoder: Viterbi, n-best and sampled segmentation of already-normalized text, and
//! piece decoding. Owns: `Encoder` and its SentencePiece-compatibility rules.
//!
//! Compatibility with SentencePiece (`unigram_model.cc` + `sentencepiece_processor.cc`):
//! - The trie holds `Normal` and `UserDefined` pieces. `Control`, `Unknown` and `Byte` pieces
//!   are never matched from text; `Unused` pieces are left out (SP skips them when matched,
//!   which is the same thing).
//! - Scores are SP's `float`s: piece scores are rounded to `f32` once, here.
//! - A `UserDefined` piece scores `0.1 * (len - 1)` (sentencepiece 0.2.x's
//!   `GetUserDefinedScore`; older releases used `len * max_score - 0.1`): >= 0, so it beats
//!   any split into normal pieces. `encode` uses the byte length, as SP's optimized encoder
//!   does; n-best/sample use the character length, as SP's lattice does.
//! - Like SP 0.2.x, `encode` rebases the running path scores when they pass +-100000 (very
//!   long inputs), so that `f32` rounding, and thus tie outcomes, stay identical.
//! - A character with no single-character piece gets an unknown node scored
//!   `min_score - 10` (`min_score` over `Normal` pieces).
//! - `encode` follows SP's default optimized Viterbi exactly, including its arithmetic (path
//!   scores summed and compared in `f32`; checked against the installed sentencepiece, where
//!   `f64` sums gave different tie outcomes). Candidates for one end position are tried by
//!   start ascending (length descending) and replace the incumbent only when strictly better,
//!   so exact ties go to the longest last piece.
//! - `nbest(_, 1)` is `encode` (as SP's `NBestEncode`); for k >= 2 the A* search ranks paths
//!   like SP's, but the order among exactly equal scores is our own (creation order).
//! - With byte pieces present (byte fallback), every unknown piece is replaced by the byte
//!   pieces of its UTF-8 bytes; without them, a run of consecutive unknown characters gives
//!   one unk id (SP's processor merges them; verified against the installed sentencepiece).
//!
//! # Speed (`encode_text`, the path every encode call takes)
//! - Whitespace is matched as one byte. With `escape_whitespaces` (SP's default) the text is
//!   not normalized into `▁`s: a second trie, `spaced`, holds the pieces with `▁` written as a
//!   space, and the Viterbi runs over the text itself (copied once into a reused buffer, with a
//!   space in front for the dummy prefix and any literal `▁` turned into a space, since SP
//!   does not tell them apart either). A word start then costs one trie step instead of three,
//!   the table is shorter, and the normalized copy (each space grown to three bytes) is gone.
//!   Positions and character boundaries map one to one, so the search, its `f32` sums and its
//!   tie order are unchanged (`encode_text_equals_encode_of_normalized` checks it against
//!   `encode` of the normalized text). Cost: a second trie, as large as the first (12 bytes a
//!   slot; 270 KB for 8000 pieces, built in a few ms). Pieces with a real space are left out
//!   of it: escaped text never contains one.
//! - The trie slot carries the piece's score (`-inf` where no piece ends) and the path table
//!   starts at `-inf` instead of "unset", so the inner loop is: step, add, compare, maybe
//!   store, with neither an "is there a piece" nor an "is it set" test (a finite candidate
//!   beats `-inf` just as it beats "unset" in SP). The table keeps the trie slot, not the id;
//!   ids are looked up when backtracking.
//! - Buffers are reused: a `Scratch` per thread (`with_scratch` for one-text calls, one per
//!   worker for batches), and ids are appended to the caller's vector (`encode_text_into`), so
//!   a batch fills one flat buffer.
//! - Tried and dropped: branch-free updates of the table (no measurable gain: the update
//!   branch predicts well enough) and a per-thread cache of each word's trie matches (exact,
//!   as only the walk is cached, but the table lookups cost about what the walks saved: +8%
//!   on kjv.txt, nothing on dr.en.txt).

use super::lattice::{Lattice, Node, Rng};
use super::trie::{DoubleArray, NO_VALUE};
use super::{parse_byte_piece, Piece, PieceKind};
use crate::error::CoreError;
use crate::normalize::{SpNormalizer, SPACE_MARK};

const MARK_UTF8: &[u8] = "\u{2581}".as_bytes();

pub struct Encoder {
    /// Pieces by their bytes, scored as `encode` scores them (user-defined bonus applied).
    trie: DoubleArray,
    /// The same pieces with `▁` written as a space (see the module docs).
    spaced: DoubleArray,
    /// Per id: the score used in the lattice (`f32`, user-defined bonus not applied).
    scores: Vec<f32>,
    kinds: Vec<PieceKind>,
    texts: Vec<String>,
    unk_id: u32,
    unk_score: f32,
    /// Longest piece in bytes (at least 4, the longest unknown character): how far past a
    /// start position the Viterbi can have written.
    max_len: usize,
    /// Id of `<0xNN>` for each byte; `None` when the model has no byte pieces.
    byte_ids: Option<Box<[u32; 256]>>,
}

/// Length of the UTF-8 sequence from its lead byte (SP's OneCharLen; input is valid UTF-8).
#[inline(always)]
fn char_len(b: u8) -> usize {
    if b < 0x80 {
        1
    } else if b < 0xE0 {
        2
    } else if b < 0xF0 {
        3
    } else {
        4
    }
}

/// SP 0.2.x's bonus for user-defined pieces: `0.1 * (len - 1)` computed in double, kept as float.
#[inline]
fn user_defined_score(len: usize) -> f32 {
    (0.1f64 * (len as f64 - 1.0)) as f32
}

/// SP rebases path scores beyond this magnitude (keeps f32 precision on long inputs).
const SCORE_RESET: f32 = 100000.0;

/// `Best::node` of an unknown piece.
const UNK_NODE: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Best {
    /// `-inf` until some path reaches this position.
    score: f32,
    /// Byte position where the last piece of the best path ending here starts.
    start: u32,
    /// Trie slot of that piece, `UNK_NODE` for an unknown piece.
    node: u32,
}

/// Buffers `encode_text` reuses from one text to the next (one per thread): the text in the
/// form the Viterbi reads, the per-byte Viterbi table and the backtracked path. Allocating them
/// per text cost more than the Viterbi itself on short lines.
#[derive(Default)]
pub struct Scratch {
    text: Vec<u8>,
    normalized: String,
    best: Vec<Best>,
    path: Vec<(u32, u32, u32)>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's `Scratch`, for callers that encode one text per call (a fresh
/// `Scratch` would cost three allocations a call). Re-entrant calls get a fresh one.
pub fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            let r = f(&mut s);
            s.trim();
            r
        }
        Err(_) => f(&mut Scratch::default()),
    })
}

impl Scratch {
    /// Frees the buffers if one text made them large (over about 1 MB), so that a thread that
    /// once encoded a long text does not keep its tables for good.
    pub fn trim(&mut self) {
        const LIMIT: usize = 1 << 20;
        let bytes = self.text.capacity()
            + self.normalized.capacity()
            + self.best.capacity() * std::mem::size_of::<Best>()
            + self.path.capacity() * std::mem::size_of::<(u32, u32, u32)>();
        if bytes > LIMIT {
            *self = Scratch::default();
        }
    }
}

impl Encoder {
    pub fn new(pieces: &[Piece]) -> Result<Encoder, CoreError> {
        if pieces.len() >= i32::MAX as usize {
            return Err(CoreError::input(format!("a Unigram model of {} pieces is too large", pieces.len())));
        }
        let mut unk_id = None;
        let mut min_score = f32::MAX;
        let mut keys: Vec<(&[u8], i32, f32)> = Vec::new();
        let mut byte_ids = [u32::MAX; 256];
        let mut any_byte = false;
        let mut seen = rustc_hash::FxHashSet::default();
        for (i, p) in pieces.iter().enumerate() {
            if p.text.is_empty() {
                return Err(CoreError::input(format!("Unigram piece {i} is empty; remove it")));
            }
            if !seen.insert(p.text.as_str()) {
                return Err(CoreError::input(format!("the Unigram piece {:?} is defined twice; remove one", p.text)));
            }
            if !p.score.is_finite() {
                return Err(CoreError::input(format!(
                    "the Unigram piece {:?} has a non-finite score; give it a finite log probability",
                    p.text
                )));
            }
            match p.kind {
                PieceKind::Normal => {
                    let s = p.score as f32;
                    min_score = min_score.min(s);
                    keys.push((p.text.as_bytes(), i as i32, s));
                }
                PieceKind::UserDefined => keys.push((p.text.as_bytes(), i as i32, user_defined_score(p.text.len()))),
                PieceKind::Unknown => {
                    if unk_id.is_some() {
                        return Err(CoreError::input("the Unigram model has more than one unknown piece; keep one"));
                    }
                    unk_id = Some(i as u32);
                }
                PieceKind::Byte => {
                    let b = parse_byte_piece(&p.text).ok_or_else(|| {
                        CoreError::input(format!("byte piece {:?} is not spelled <0xHH> (upper-case hex)", p.text))
                    })?;
                    byte_ids[b as usize] = i as u32;
                    any_byte = true;
                }
                PieceKind::Control | PieceKind::Unused => {}
            }
        }
        let unk_id =
            unk_id.ok_or_else(|| CoreError::input("the Unigram model has no unknown piece; add one (e.g. <unk>)"))?;
        if keys.is_empty() {
            return Err(CoreError::input("the Unigram model has no normal or user-defined pieces to match text with"));
        }
        if keys.iter().any(|k| !k.2.is_finite()) {
            return Err(CoreError::input("a Unigram piece score is out of the f32 range; scale the scores down"));
        }
        let max_len = keys.iter().map(|k| k.0.len()).max().unwrap_or(0).max(4);
        // The spaced trie: `▁` <-> space is one to one once the pieces with a real space are
        // out, so its keys stay distinct and non-empty (there may be none left).
        let spaced_keys: Vec<(Vec<u8>, i32, f32)> =
            keys.iter().filter(|k| !k.0.contains(&b' ')).map(|&(k, i, s)| (spaced_piece(k), i, s)).collect();
        let spaced = DoubleArray::build(spaced_keys.iter().map(|(k, i, s)| (k.as_slice(), *i, *s)).collect())?;
        let trie = DoubleArray::build(keys)?;
        let byte_ids = if any_byte {
            // A byte without its piece falls back to unk, as SP's PieceToId does.
            for b in byte_ids.iter_mut() {
                if *b == u32::MAX {
                    *b = unk_id;
                }
            }
            Some(Box::new(byte_ids))
        } else {
            None
        };
        Ok(Encoder {
            trie,
            spaced,
            scores: pieces.iter().map(|p| p.score as f32).collect(),
            kinds: pieces.iter().map(|p| p.kind).collect(),
            texts: pieces.iter().map(|p| p.text.clone()).collect(),
            unk_id,
            unk_score: min_score - 10.0,
            max_len,
            byte_ids,
        })
    }

    pub fn unk_id(&self) -> u32 {
        self.unk_id
    }

    pub fn vocab_size(&self) -> usize {
        self.texts.len()
    }

    /// The text of piece `id` (with its `▁`), `None` past the last piece.
    pub fn piece(&self, id: u32) -> Option<&str> {
        self.texts.get(id as usize).map(String::as_str)
    }

    /// Viterbi best segmentation (SP's optimized encoder, bit-for-bit).
    pub fn encode(&self, normalized: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.viterbi(&self.trie, normalized.as_bytes(), false, &mut Scratch::default(), &mut out);
        out
    }

    /// Normalizes `text` with `norm` and encodes it, reusing `scratch`'s buffers: the path
    /// callers take for many texts (one `Scratch` per thread).
    pub fn encode_text(&self, norm: &SpNormalizer, text: &str, scratch: &mut Scratch) -> Vec<u32> {
        let mut out = Vec::new();
        self.encode_text_into(norm, text, scratch, &mut out);
        out
    }

    /// `encode_text`, appending the ids to `out`.
    pub fn encode_text_into(&self, norm: &SpNormalizer, text: &str, scratch: &mut Scratch, out: &mut Vec<u32>) {
        // The spaced fast path reproduces only the space handling; rules take the general one.
        if norm.escape_whitespaces && !norm.has_rules() {
            let mut buf = std::mem::take(&mut scratch.text);
            spaced_text(norm, text, &mut buf);
            self.viterbi(&self.spaced, &buf, true, scratch, out);
            scratch.text = buf;
        } else {
            let mut normalized = std::mem::take(&mut scratch.normalized);
            norm.normalize_into(text, &mut normalized);
            self.viterbi(&self.trie, normalized.as_bytes(), false, scratch, out);
            scratch.normalized = normalized;
        }
    }

    /// `encode` plus the best path's total score.
    fn encode_scored(&self, normalized: &str) -> (Vec<u32>, f32) {
        let mut out = Vec::new();
        let score = self.viterbi(&self.trie, normalized.as_bytes(), false, &mut Scratch::default(), &mut out);
        (out, score)
    }

    /// SP's optimized Viterbi over the bytes `s`, matched with `trie` (`spaced`: `s` and `trie`
    /// have spaces for `▁`): appends the ids to `out` and returns the best path's score.
    /// `best[p]` is the best path covering bytes `..p`; every character start `p` extends it
    /// by each piece that the trie matches from `p`.
    fn viterbi(&self, trie: &DoubleArray, s: &[u8], spaced: bool, scratch: &mut Scratch, out: &mut Vec<u32>) -> f32 {
        let n = s.len();
        if n == 0 {
            return 0.0;
        }
        let best = &mut scratch.best;
        best.clear();
        best.resize(n + 1, Best { score: f32::NEG_INFINITY, start: 0, node: UNK_NODE });
        best[0].score = 0.0;
        let mut start = 0usize;
        while start < n {
            let here = self.here(best, start);
            let mblen = char_len(s[start]).min(n - start);
            let mut has_single = false;
            let mut node = 0u32;
            let mut len = 0usize;
            // `best[start + len]` for the piece of `len` bytes; zipping the text after `start`
            // with the table after `start` keeps the bounds checks out of the walk.
            for (&b, t) in s[start..].iter().zip(best[start + 1..].iter_mut()) {
                let Some((nx, score)) = trie.step_scored(node, b) else { break };
                node = nx;
                len += 1;
                // Strictly better only: on ties the earlier start (longer piece) stays, as in
                // SP. A node without a piece scores -inf and never wins.
                let cand = score + here;
                if cand > t.score {
                    *t = Best { score: cand, start: start as u32, node: nx };
                }
                has_single |= (len == mblen) & (score != f32::NEG_INFINITY);
            }
            if !has_single {
                let cand = self.unk_score + here;
                let t = &mut best[start + mblen];
                if cand > t.score {
                    *t = Best { score: cand, start: start as u32, node: UNK_NODE };
                }
            }
            start += mblen;
        }
        // Backtrack into (byte start, byte end, id), then emit (expanding unknowns into bytes).
        let path = &mut scratch.path;
        path.clear();
        let mut end = n;
        while end > 0 {
            let b = best[end];
            let id = if b.node == UNK_NODE { self.unk_id } else { trie.value(b.node) as u32 };
            path.push((b.start, end as u32, id));
            end = b.start as usize;
        }
        out.reserve(path.len());
        let first = out.len();
        for &(bs, be, id) in path.iter().rev() {
            self.emit(&s[bs as usize..be as usize], id, spaced, first, out);
        }
        best[n].score
    }

    /// The best score at character start `start`, after SP's rebase when it has left
    /// +-SCORE_RESET: subtracted from every position a path can have reached (all before
    /// `start + max_len`; the others stay at -inf), which leaves `best[start]` at 0.
    #[inline(always)]
    fn here(&self, best: &mut [Best], start: usize) -> f32 {
        let here = best[start].score;
        if (-SCORE_RESET..=SCORE_RESET).contains(&here) {
            return here;
        }
        let end = (start + self.max_len).min(best.len() - 1);
        for b in best[start..=end].iter_mut() {
            b.score -= here;
        }
        0.0
    }

    /// Appends the id(s) of a piece (`piece`: its bytes in the text) to `out`, whose ids from
    /// `first` on are this text's (`out` may hold earlier texts of a batch).
    #[inline]
    fn emit(&self, piece: &[u8], id: u32, spaced: bool, first: usize, out: &mut Vec<u32>) {
        if id == self.unk_id {
            if let Some(bytes) = &self.byte_ids {
                for &b in piece {
                    if spaced && b == b' ' {
                        out.extend(MARK_UTF8.iter().map(|&m| bytes[m as usize]));
                    } else {
                        out.push(bytes[b as usize]);
                    }
                }
                return;
            }
            // SP's processor merges a run of unknown pieces (of one text) into one.
            if out.len() > first && out.last() == Some(&self.unk_id) {
                return;
            }
        }
        out.push(id);
    }

    /// Builds SP's lattice (PopulateNodes) for n-best and sampling.
    fn lattice(&self, normalized: &str) -> Lattice {
        let s = normalized.as_bytes();
        let n = s.len();
        // Character index of each char-start byte; positions are in characters.
        let mut char_starts: Vec<u32> = Vec::with_capacity(n + 1);
        let mut i = 0;
        while i < n {
            char_starts.push(i as u32);
            i += char_len(s[i]).min(n - i);
        }
        let nchars = char_starts.len();
        char_starts.push(n as u32);
        let mut nodes = Vec::new();
        for c in 0..nchars {
            let start = char_starts[c] as usize;
            let mut node = 0u32;
            let mut pos = start;
            let mut cend = c; // character index of `pos`
            let mut has_single = false;
            while pos < n {
                match self.trie.step(node, s[pos]) {
                    Some(nx) => node = nx,
                    None => break,
                }
                pos += 1;
                while char_starts[cend] < pos as u32 {
                    cend += 1;
                }
                let v = self.trie.value(node);
                if v == NO_VALUE || char_starts[cend] != pos as u32 {
                    continue;
                }
                let id = v as u32;
                let clen = (cend - c) as u32;
                let score = if self.kinds[id as usize] == PieceKind::UserDefined {
                    user_defined_score(clen as usize)
                } else {
                    self.scores[id as usize]
                };
                nodes.push(Node {
                    start: c as u32,
                    end: cend as u32,
                    bstart: start as u32,
                    bend: pos as u32,
                    id,
                    score,
                });
                if clen == 1 {
                    has_single = true;
                }
            }
            if !has_single {
                nodes.push(Node {
                    start: c as u32,
                    end: c as u32 + 1,
                    bstart: start as u32,
                    bend: char_starts[c + 1],
                    id: self.unk_id,
                    score: self.unk_score,
                });
            }
        }
        Lattice::new(nchars, nodes)
    }

    fn path_ids(&self, s: &str, lat: &Lattice, path: &[u32]) -> Vec<u32> {
        let mut out = Vec::with_capacity(path.len());
        for &ni in path {
            let nd = lat.nodes[ni as usize];
            self.emit(&s.as_bytes()[nd.bstart as usize..nd.bend as usize], nd.id, false, 0, &mut out);
        }
        out
    }

    /// The `k` best segmentations (k capped at 1024 like SP), best first, with their total
    /// lattice score (sum of `f32` node scores, unknown nodes at the unk penalty). Ranking
    /// and ties follow SP's A* search; equal-score hypotheses pop in creation order.
    pub fn nbest(&self, normalized: &str, k: usize) -> Vec<(Vec<u32>, f64)> {
        let k = k.min(1024);
        if k == 0 || normalized.is_empty() {
            return Vec::new();
        }
        if k == 1 {
            let (ids, sc) = self.encode_scored(normalized);
            return vec![(ids, sc as f64)];
        }
        let lat = self.lattice(normalized);
        lat.nbest(k).into_iter().map(|(p, sc)| (self.path_ids(normalized, &lat, &p), sc as f64)).collect()
    }

    /// One segmentation sampled from P(path) ∝ exp(alpha * score(path)) (SP's
    /// `SampleEncode` with `nbest_size = -1`), by forward filtering and backward sampling.
    /// The same `seed` always gives the same result.
    pub fn sample(&self, normalized: &str, alpha: f64, seed: u64) -> Vec<u32> {
        if normalized.is_empty() {
            return Vec::new();
        }
        let lat = self.lattice(normalized);
        let mut rng = Rng::new(seed);
        let path = lat.sample(alpha, &mut rng);
        self.path_ids(normalized, &lat, &path)
    }

    /// Concatenates piece texts: byte pieces give their raw byte, control pieces nothing, the
    /// unknown piece its own text; ids out of range are skipped. `▁` is left for the caller.
    pub fn decode_pieces(&self, ids: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        for &id in ids {
            let Some(kind) = self.kinds.get(id as usize) else { continue };
            match kind {
                PieceKind::Byte => {
                    if let Some(b) = super::parse_byte_piece(&self.texts[id as usize]) {
                        out.push(b);
                    }
                }
                PieceKind::Control => {}
                _ => out.extend_from_slice(self.texts[id as usize].as_bytes()),
            }
        }
        out
    }
}

impl super::SpPieces for Encoder {
    fn piece_of(&self, id: u32) -> (&str, PieceKind) {
        (&self.texts[id as usize], self.kinds[id as usize])
    }
}

/// A piece's bytes with every `▁` written as a space.
fn spaced_piece(piece: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(piece.len());
    let mut i = 0;
    while i < piece.len() {
        if piece[i..].starts_with(MARK_UTF8) {
            out.push(b' ');
            i += MARK_UTF8.len();
        } else {
            out.push(piece[i]);
            i += 1;
        }
    }
    out
}

/// `norm.normalize_into(text)` (with `escape_whitespaces`) in the spaced form the `spaced` trie
/// matches: every `▁` the normalizer would write, and every literal `▁`, is a space.
fn spaced_text(norm: &SpNormalizer, text: &str, out: &mut Vec<u8>) {
    out.clear();
    let body: &str = if norm.remove_extra_whitespaces { text.trim_matches(' ') } else { text };
    if body.is_empty() {
        return;
    }
    out.reserve(body.len() + 1);
    if norm.add_dummy_prefix {
        out.push(b' ');
    }
    if !norm.remove_extra_whitespaces {
        if !body.contains(SPACE_MARK) {
            out.extend_from_slice(body.as_bytes());
        } else {
            for (i, run) in body.split(SPACE_MARK).enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                out.extend_from_slice(run.as_bytes());
            }
        }
        return;
    }
    // Runs of real spaces collapse to one; a literal ▁ is kept (the normalizer does not
    // collapse it), then trailing marks of either kind go, as SentencePiece strips them.
    let mut prev_space = false;
    let mut utf8 = [0u8; 4];
    for c in body.chars() {
        if c == ' ' {
            if !prev_space {
                out.push(b' ');
            }
            prev_space = true;
        } else {
            let c = if c == SPACE_MARK { ' ' } else { c };
            out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            prev_space = false;
        }
    }
    while out.last() == Some(&b' ') {
        out.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str, score: f64, kind: PieceKind) -> Piece {
        Piece { text: text.to_string(), score, kind }
    }

    /// 10 pieces; scores chosen so the Viterbi can be checked by hand.
    fn vocab() -> Vec<Piece> {
        vec![
            p("<unk>", 0.0, PieceKind::Unknown), // 0
            p("<s>", 0.0, PieceKind::Control),   // 1
            p("▁", -2.0, PieceKind::Normal),     // 2
            p("a", -3.0, PieceKind::Normal),     // 3
            p("b", -3.0, PieceKind::Normal),     // 4
            p("c", -4.0, PieceKind::Normal),     // 5
            p("ab", -4.0, PieceKind::Normal),    // 6
            p("bc", -5.0, PieceKind::Normal),    // 7
            p("▁ab", -5.5, PieceKind::Normal),   // 8
            p("abc", -9.0, PieceKind::Normal),   // 9
        ]
    }

    #[test]
    fn viterbi_by_hand() {
        let e = Encoder::new(&vocab()).unwrap();
        // "▁abc": ▁ab+c = -9.5; ▁+abc = -11; ▁+ab+c = -10; ▁+a+bc = -10; ▁+a+b+c = -12.
        assert_eq!(e.encode("▁abc"), vec![8, 5]);
        // "ab": ab = -4 beats a+b = -6.
        assert_eq!(e.encode("ab"), vec![6]);
        // "bc": bc = -5 beats b+c = -7.
        assert_eq!(e.encode("bc"), vec![7]);
        // Unknown "x": min_score(-9) - 10 = -19; a run of unknowns is one unk id.
        assert_eq!(e.encode("axxa"), vec![3, 0, 3]);
        assert_eq!(e.encode("xaxx"), vec![0, 3, 0]);
        // Control pieces are never matched.
        assert_eq!(e.encode("<s>"), vec![0]);
        assert_eq!(e.encode(""), Vec::<u32>::new());
    }

    #[test]
    fn ties_go_to_longest_last_piece() {
        // "ab" (-6) ties with a+b (-3 + -3): SP keeps the earliest start for the end position.
        let mut v = vocab();
        v[6].score = -6.0;
        let e = Encoder::new(&v).unwrap();
        assert_eq!(e.encode("ab"), vec![6]);
        let nb = e.nbest("ab", 2);
        assert_eq!(nb.len(), 2);
        assert_eq!(nb[0].1, nb[1].1);
    }

    #[test]
    fn nbest_ordering() {
        let e = Encoder::new(&vocab()).unwrap();
        let nb = e.nbest("▁abc", 10);
        let got: Vec<(Vec<u32>, f64)> = nb.clone();
        assert_eq!(got[0], (vec![8, 5], -9.5));
        // All 7 segmentations: ▁ab|c, ▁|ab|c, ▁|a|bc, ▁|abc, ▁ab... enumerate and check sorted.
        assert_eq!(got.len(), 5);
        for w in got.windows(2) {
            assert!(w[0].1 >= w[1].1);
        }
        assert_eq!(got[4], (vec![2, 3, 4, 5], -12.0));
        assert_eq!(nb[0].0, e.encode("▁abc"));
        // Totals equal the sum of the piece scores.
        for (ids, sc) in &got {
            let s: f64 = ids.iter().map(|&i| vocab()[i as usize].score).sum();
            assert_eq!(s, *sc);
        }
        assert_eq!(e.nbest("▁abc", 1).len(), 1);
        assert!(e.nbest("▁abc", 0).is_empty());
    }

    #[test]
    fn user_defined_and_byte_fallback() {
        let mut v = vocab();
        v.push(p("xy", 0.0, PieceKind::UserDefined)); // 10
        for b in 0..=255u8 {
            v.push(p(&super::super::byte_piece_text(b), 0.0, PieceKind::Byte));
        }
        let e = Encoder::new(&v).unwrap();
        // "xy" is only matchable as the user-defined piece.
        assert_eq!(e.encode("axy"), vec![3, 10]);
        // Unknown "é" (C3 A9) becomes two byte pieces: 11 + 0xC3, 11 + 0xA9.
        assert_eq!(e.encode("aé"), vec![3, 11 + 0xC3, 11 + 0xA9]);
        assert_eq!(e.decode_pieces(&e.encode("▁abé")), "▁abé".as_bytes());
    }

    #[test]
    fn sample_reproducible_and_peaked() {
        let e = Encoder::new(&vocab()).unwrap();
        let text = "▁abc▁ab▁bca";
        let best = e.encode(text);
        for seed in 0..20 {
            assert_eq!(e.sample(text, 0.5, seed), e.sample(text, 0.5, seed));
            assert_eq!(e.decode_pieces(&e.sample(text, 0.1, seed)), text.as_bytes());
        }
        // Low alpha gives variety.
        let distinct: std::collections::HashSet<Vec<u32>> = (0..50).map(|s| e.sample(text, 0.1, s)).collect();
        assert!(distinct.len() > 3);
        // Large alpha: almost always the Viterbi path.
        let hits = (0..200).filter(|&s| e.sample(text, 10.0, s) == best).count();
        assert!(hits >= 190, "hits={}", hits);
    }

    /// `encode_text` (the spaced trie over the text itself when whitespace is escaped) gives
    /// what `encode` gives on the normalized text, for every normalizer setting, with pieces
    /// that hold `▁` anywhere, a piece with a real space, a user-defined piece, unknown
    /// characters (the space itself, in one vocabulary) and with or without byte fallback.
    #[test]
    fn encode_text_equals_encode_of_normalized() {
        let mut base = vocab();
        base.push(p("b▁a", -3.5, PieceKind::Normal));
        base.push(p("c▁", -4.5, PieceKind::Normal));
        base.push(p("▁▁", -3.0, PieceKind::Normal));
        base.push(p("a b", -0.5, PieceKind::Normal));
        base.push(p("xy", 0.0, PieceKind::UserDefined));
        let mut no_mark = base.clone();
        no_mark[2].text = "q".into(); // no "▁" piece: a lone space is unknown
        let alphabet = ["a", "b", "c", " ", "  ", "\u{2581}", "x", "y", "é", "\t", "ab", "▁a"];
        let mut rng = Rng::new(7);
        let mut texts: Vec<String> = (0..1500)
            .map(|_| {
                let k = (rng.next_u64() % 12) as usize;
                (0..k).map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize]).collect()
            })
            .collect();
        texts.push("abc ▁b a".repeat(20_000)); // long enough for the score rebase
        let mut scratch = Scratch::default();
        for vocab in [base, no_mark] {
            for bytes in [false, true] {
                let mut v = vocab.clone();
                if bytes {
                    v.extend((0..=255u8).map(|b| p(&super::super::byte_piece_text(b), 0.0, PieceKind::Byte)));
                }
                let e = Encoder::new(&v).unwrap();
                for flags in 0..8 {
                    let norm = SpNormalizer {
                        add_dummy_prefix: flags & 1 != 0,
                        remove_extra_whitespaces: flags & 2 != 0,
                        escape_whitespaces: flags & 4 != 0,
                        ..Default::default()
                    };
                    for t in &texts {
                        let want = e.encode(&norm.normalize(t));
                        assert_eq!(e.encode_text(&norm, t, &mut scratch), want, "{:?} {:?}", norm, t);
                        assert_eq!(with_scratch(|s| e.encode_text(&norm, t, s)), want);
                    }
                }
            }
        }
    }

    #[test]
    fn batch_buffer_keeps_texts_apart() {
        // Unknown runs merge within a text, never across the texts of one buffer.
        let e = Encoder::new(&vocab()).unwrap();
        let norm = SpNormalizer { add_dummy_prefix: false, ..Default::default() };
        let (mut scratch, mut out) = (Scratch::default(), Vec::new());
        for t in ["axx", "xxa", "x"] {
            e.encode_text_into(&norm, t, &mut scratch, &mut out);
        }
        assert_eq!(out, vec![3, 0, 0, 3, 0]);
    }

    #[test]
    fn long_input_score_rebase() {
        // Path scores pass -100000 here, exercising SP's rebasing; the result must stay a
        // valid, lossless segmentation equal to the repeated unit's segmentation.
        let e = Encoder::new(&vocab()).unwrap();
        let unit = "▁abc";
        let text = unit.repeat(30_000);
        let ids = e.encode(&text);
        assert_eq!(ids.len(), 60_000);
        assert!(ids.chunks(2).all(|c| c == [8, 5]));
        assert_eq!(e.decode_pieces(&ids), text.as_bytes());
    }

    #[test]
    fn errors() {
        let mut v = vocab();
        v.push(p("a", -1.0, PieceKind::Normal));
        assert!(Encoder::new(&v).is_err());
        assert!(Encoder::new(&vocab()[1..]).is_err());
    }
}
