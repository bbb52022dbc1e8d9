//! The merge-table encoder for classic character-level BPE (Sennrich et al.).
//!
//! Each word is split into characters, optionally followed by the end-of-word symbol; then
//! the learned merges are applied by rank (the lowest-ranked pair present is merged, the
//! leftmost first, one at a time, as Hugging Face does; for a merge table in training order
//! that is every occurrence of the best pair, left to right) until no learned pair is left.
//! Characters never seen in training become the unknown token.
//!
//! Cost: words shorter than `LONG_WORD` symbols rescan an array of pair ranks after each
//! merge; longer ones (a whitespace-free line is one word) keep their candidate merges in a
//! heap over a linked list, O(n log n).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use crate::encode::{unknown_id, Encode, Kind, Rng, Trace};
use crate::error::CoreError;
use crate::pretok::Splitter;

pub struct MergeEncoder {
    chars: FxHashMap<char, u32>,
    /// (left, right) -> (rank, result)
    merges: FxHashMap<(u32, u32), (u32, u32)>,
    decoder: Vec<Vec<u8>>,
    end_of_word: Option<(u32, Vec<u8>)>,
    unk: Option<u32>,
    splitter: Splitter,
}

impl MergeEncoder {
    /// `tokens`: bytes in id order. `alphabet_size`: the first ids that are base characters.
    /// `merges`: (left, right, result) in rank order.
    pub fn new(
        tokens: Vec<Vec<u8>>,
        alphabet_size: usize,
        merges: &[(u32, u32, u32)],
        end_of_word: Option<&str>,
        unk: Option<u32>,
        splitter: Splitter,
    ) -> Result<Self, CoreError> {
        let mut chars = FxHashMap::default();
        let mut eow = None;
        for (id, t) in tokens.iter().enumerate().take(alphabet_size) {
            let s = std::str::from_utf8(t)
                .map_err(|_| CoreError::input(format!("base token {id} is not UTF-8 text; fix the alphabet")))?;
            if Some(s) == end_of_word {
                eow = Some((id as u32, t.clone()));
                continue;
            }
            let mut it = s.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => {
                    chars.insert(c, id as u32);
                }
                _ => {
                    let why = "the alphabet of character-level BPE is single characters";
                    return Err(CoreError::input(format!("base token {id} ({s:?}) is not one character; {why}")));
                }
            }
        }
        if let (Some(e), None) = (end_of_word, &eow) {
            return Err(CoreError::input(format!(
                "the end-of-word symbol {e:?} is not in the alphabet; name the one the vocabulary was trained with"
            )));
        }
        let n = tokens.len() as u32;
        let mut table = FxHashMap::default();
        for (rank, &(l, r, z)) in merges.iter().enumerate() {
            if l >= n || r >= n || z >= n {
                return Err(CoreError::input(format!(
                    "merge {rank} ({l} + {r} -> {z}) names a token that does not exist; fix the merge table"
                )));
            }
            table.entry((l, r)).or_insert((rank as u32, z));
        }
        Ok(MergeEncoder { chars, merges: table, decoder: tokens, end_of_word: eow, unk, splitter })
    }

    /// Characters beyond the leading alphabet (an extended version appends the new corpus'
    /// characters after the base's ids): `(id, character)`.
    pub fn add_chars(&mut self, extra: &[(u32, char)]) {
        for &(id, c) in extra {
            self.chars.entry(c).or_insert(id);
        }
    }

    /// Encodes text (no special tokens: see `encode::Specials`).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, CoreError> {
        let mut out = Vec::new();
        self.encode_into(text, &mut out)?;
        Ok(out)
    }

    /// The tokens of one word into `syms`: its characters (unknown ones as the unknown token,
    /// or dropped without one), the end-of-word symbol, then the merges.
    fn word(&self, word: &str, syms: &mut Vec<u32>, long: &mut LongWord) {
        self.symbols(word, syms);
        self.merge(syms, long);
    }

    /// One word's symbols before any merge: its characters and the end-of-word symbol.
    fn symbols(&self, word: &str, syms: &mut Vec<u32>) {
        syms.clear();
        for c in word.chars() {
            if let Some(id) = self.chars.get(&c).copied().or(self.unk) {
                syms.push(id);
            }
        }
        if let Some((eow, _)) = &self.end_of_word {
            syms.push(*eow);
        }
    }

    /// The rank and result of merging `a` then `b`, if that is a learned merge.
    #[inline]
    fn pair(&self, a: u32, b: u32) -> Option<(u32, u32)> {
        self.merges.get(&(a, b)).copied()
    }

    /// Merges one word's symbols in place: the lowest-ranked learned pair first, the leftmost
    /// on ties, one occurrence at a time (Hugging Face's `Word::merge_all`; for a merge table
    /// in training order that is also "every occurrence of the best pair, left to right").
    fn merge(&self, syms: &mut Vec<u32>, long: &mut LongWord) {
        if syms.len() >= LONG_WORD {
            long.merge(self, syms);
            return;
        }
        // Short words: the rank of each adjacent pair in an array, rescanned after each merge.
        let mut ranks: Vec<(u32, u32)> =
            syms.windows(2).map(|p| self.pair(p[0], p[1]).unwrap_or((u32::MAX, 0))).collect();
        let best = |ranks: &[(u32, u32)]| {
            ranks
                .iter()
                .enumerate()
                .filter(|(_, r)| r.0 != u32::MAX)
                .min_by_key(|(i, r)| (r.0, *i))
                .map(|(i, r)| (i, r.1))
        };
        while let Some((i, z)) = best(&ranks) {
            syms[i] = z;
            syms.remove(i + 1);
            ranks.remove(i);
            if i + 1 < syms.len() {
                ranks[i] = self.pair(z, syms[i + 1]).unwrap_or((u32::MAX, 0));
            }
            if i > 0 {
                ranks[i - 1] = self.pair(syms[i - 1], z).unwrap_or((u32::MAX, 0));
            }
        }
    }
}

/// Words of at least this many symbols merge through a heap (`LongWord`): the array rescans of
/// short words cost O(n²), which a whitespace-free megabyte would turn into hours.
const LONG_WORD: usize = 64;

/// A heap of candidate merges over a linked list of symbols, for long words: O(n log n).
#[derive(Default)]
struct LongWord {
    /// (rank, position of the left symbol), smallest first
    heap: BinaryHeap<Reverse<(u32, u32)>>,
    next: Vec<u32>,
    prev: Vec<u32>,
    alive: Vec<bool>,
}

impl LongWord {
    fn merge(&mut self, enc: &MergeEncoder, syms: &mut Vec<u32>) {
        const NONE: u32 = u32::MAX;
        let n = syms.len();
        self.heap.clear();
        self.next.clear();
        self.next.extend((1..=n as u32).map(|i| if i as usize == n { NONE } else { i }));
        self.prev.clear();
        self.prev.extend((0..n as u32).map(|i| if i == 0 { NONE } else { i - 1 }));
        self.alive.clear();
        self.alive.resize(n, true);
        for i in 0..n - 1 {
            if let Some((rank, _)) = enc.pair(syms[i], syms[i + 1]) {
                self.heap.push(Reverse((rank, i as u32)));
            }
        }
        while let Some(Reverse((rank, i))) = self.heap.pop() {
            let j = self.next[i as usize];
            // Stale unless the pair at i is still the one pushed (a rank names one pair).
            if !self.alive[i as usize] || j == NONE {
                continue;
            }
            let Some((r, z)) = enc.pair(syms[i as usize], syms[j as usize]) else { continue };
            if r != rank {
                continue;
            }
            syms[i as usize] = z;
            self.alive[j as usize] = false;
            let after = self.next[j as usize];
            self.next[i as usize] = after;
            if after != NONE {
                self.prev[after as usize] = i;
                if let Some((r, _)) = enc.pair(z, syms[after as usize]) {
                    self.heap.push(Reverse((r, i)));
                }
            }
            let before = self.prev[i as usize];
            if before != NONE {
                if let Some((r, _)) = enc.pair(syms[before as usize], z) {
                    self.heap.push(Reverse((r, before)));
                }
            }
        }
        let mut w = 0;
        for i in 0..n {
            if self.alive[i] {
                syms[w] = syms[i];
                w += 1;
            }
        }
        syms.truncate(w);
    }
}

impl Encode for MergeEncoder {
    fn kind(&self) -> Kind {
        Kind::CharBpe
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let mut syms = Vec::new();
        let mut long = LongWord::default();
        self.splitter.split(text, |a, b| {
            self.word(&text[a..b], &mut syms, &mut long);
            out.extend_from_slice(&syms);
        })
    }

    /// Hugging Face's offsets: a token spans the characters it was merged from (an unknown
    /// token the one character it replaced; the end-of-word symbol adds nothing, alone it is
    /// empty at the word's end); characters dropped for want of an unknown token belong to no
    /// token.
    fn encode_spans(&self, text: &str, ids: &mut Vec<u32>, spans: &mut Vec<(usize, usize)>) -> Result<bool, CoreError> {
        let mut syms = Vec::new();
        let mut long = LongWord::default();
        let eow: &[u8] = self.end_of_word.as_ref().map_or(&[], |(_, b)| b.as_slice());
        self.splitter.split(text, |a, b| {
            self.word(&text[a..b], &mut syms, &mut long);
            let mut pos = a;
            let last = syms.len().saturating_sub(1);
            for (k, &id) in syms.iter().enumerate() {
                // Characters the word dropped (no unknown token) are skipped.
                while pos < b && self.unk.is_none() && !self.chars.contains_key(&char_at(text, pos)) {
                    pos += char_at(text, pos).len_utf8();
                }
                let len = if Some(id) == self.unk && !self.chars.contains_key(&char_at(text, pos)) {
                    char_at(text, pos).len_utf8()
                } else {
                    let token = &self.decoder[id as usize];
                    let body = if k == last && !eow.is_empty() { token.strip_suffix(eow) } else { None };
                    body.unwrap_or(token).len()
                };
                let end = (pos + len).min(b);
                spans.push((pos, end));
                pos = end;
            }
            ids.extend_from_slice(&syms);
        })?;
        Ok(true)
    }

    /// BPE-dropout (`dropout.rs`), word by word.
    fn encode_dropout(&self, text: &str, p: f64, rng: &mut Rng, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let mut syms = Vec::new();
        self.splitter.split(text, |a, b| {
            self.symbols(&text[a..b], &mut syms);
            super::dropout::merge(&mut syms, p, rng, |x, y| self.pair(x, y), |_, _, _| {});
            out.extend_from_slice(&syms);
        })
    }

    /// BPE's merge loop, each merge's two tokens counted (`encode::trace`).
    fn encode_traced(&self, text: &str, trace: &mut Trace, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let mut syms = Vec::new();
        let mut rng = Rng::new(0); // p = 0 draws nothing
        self.splitter.split(text, |a, b| {
            self.symbols(&text[a..b], &mut syms);
            super::dropout::merge(&mut syms, 0.0, &mut rng, |x, y| self.pair(x, y), |x, y, z| trace.merged(x, y, z));
            out.extend_from_slice(&syms);
        })
    }

    /// A piece is one word: its characters (unknown ones as the unknown token, or dropped as
    /// `encode_into` drops them), the end-of-word symbol, then the merges.
    fn segment_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), CoreError> {
        let word = std::str::from_utf8(piece).map_err(|_| CoreError::input("character-level BPE needs UTF-8 text"))?;
        let mut syms = Vec::new();
        self.word(word, &mut syms, &mut LongWord::default());
        out.extend_from_slice(&syms);
        Ok(())
    }

    /// Concatenates the tokens; the end-of-word symbol becomes a space between words.
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        let mut out = Vec::new();
        for &id in ids {
            out.extend_from_slice(self.decoder.get(id as usize).ok_or_else(|| unknown_id(id, self.decoder.len()))?);
        }
        if let Some((_, eow)) = &self.end_of_word {
            out = replace_all(&out, eow, b" ");
            if out.last() == Some(&b' ') {
                out.pop();
            }
        }
        Ok(out)
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.decoder.get(id as usize).map(|t| t.as_slice())
    }

    /// Without an end-of-word suffix, which decoding turns into spaces.
    fn concatenates(&self) -> bool {
        self.end_of_word.is_none()
    }

    fn vocab_size(&self) -> usize {
        self.decoder.len()
    }
}

/// The character starting at byte `pos` of `text` (NUL at the end).
fn char_at(text: &str, pos: usize) -> char {
    text[pos..].chars().next().unwrap_or('\0')
}

fn replace_all(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::WHITESPACE;

    #[test]
    fn applies_merges_by_rank_with_end_of_word() {
        // alphabet: </w> e l o s t w ; merges: e+s, es+t, est+</w>, l+o, lo+w
        let mut tokens: Vec<Vec<u8>> =
            ["</w>", "e", "l", "o", "s", "t", "w"].iter().map(|s| s.as_bytes().to_vec()).collect();
        for t in ["es", "est", "est</w>", "lo", "low"] {
            tokens.push(t.as_bytes().to_vec());
        }
        let merges = [(1, 4, 7), (7, 5, 8), (8, 0, 9), (2, 3, 10), (10, 6, 11)];
        let e = MergeEncoder::new(tokens, 7, &merges, Some("</w>"), None, Splitter::new(WHITESPACE).unwrap()).unwrap();
        let ids = e.encode("lowest low").unwrap();
        assert_eq!(ids, vec![11, 9, 11, 0]);
        assert_eq!(e.decode_bytes(&ids).unwrap(), b"lowest low");
    }

    /// The merge rule spelled out the slow way: every occurrence of the best pair present,
    /// left to right, again and again.
    fn merge_everywhere(e: &MergeEncoder, mut syms: Vec<u32>) -> Vec<u32> {
        loop {
            let best = syms.windows(2).filter_map(|p| e.pair(p[0], p[1]).map(|(r, z)| (r, p[0], p[1], z))).min();
            let Some((_, a, b, z)) = best else { return syms };
            let mut out = Vec::new();
            let mut i = 0;
            while i < syms.len() {
                if i + 1 < syms.len() && syms[i] == a && syms[i + 1] == b {
                    out.push(z);
                    i += 2;
                } else {
                    out.push(syms[i]);
                    i += 1;
                }
            }
            syms = out;
        }
    }

    #[test]
    fn short_and_long_words_merge_alike() {
        // a b c, then merges in training order: ab, abc, aa, aab, ca, cab... over words of every
        // length around LONG_WORD, random but fixed.
        let mut tokens: Vec<Vec<u8>> = ["a", "b", "c"].iter().map(|s| s.as_bytes().to_vec()).collect();
        let mut merges = Vec::new();
        for (l, r) in [(0, 1), (3, 2), (0, 0), (5, 1), (2, 0), (7, 1), (4, 4), (6, 3), (9, 9)] {
            let mut t = tokens[l as usize].clone();
            t.extend_from_slice(&tokens[r as usize]);
            merges.push((l, r, tokens.len() as u32));
            tokens.push(t);
        }
        let e = MergeEncoder::new(tokens, 3, &merges, None, None, Splitter::new(WHITESPACE).unwrap()).unwrap();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut long = LongWord::default();
        for len in (0..200).chain([1000, 5000]) {
            for _ in 0..5 {
                let syms: Vec<u32> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state % 3) as u32
                    })
                    .collect();
                let mut got = syms.clone();
                e.merge(&mut got, &mut long);
                assert_eq!(got, merge_everywhere(&e, syms), "length {len}");
            }
        }
    }
}
