//! tiktoken's byte-level BPE encoder over a rank map.
//!
//! Rule (identical to tiktoken's): pre-tokenize; a piece that is itself a token is one id;
//! otherwise start from single bytes and repeatedly merge the adjacent pair whose
//! concatenation has the lowest rank, the leftmost on ties, until no pair is a token.
//! A token's rank is its id. Trained and imported vocabularies share this encoder.
//!
//! Cost: short pieces use a flat scan (cheapest for the usual 2–20 bytes). Long pieces use a
//! min-heap of (rank, position) over a linked list of parts, so a piece of n bytes costs
//! O(n log n) instead of tiktoken's O(n²): a megabyte of one repeated character stays linear.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fancy_regex::Regex;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::pretok::Splitter;

const NONE: u32 = u32::MAX;
/// Pieces at least this long take the heap path.
const HEAP_FROM: usize = 128;

pub struct RankEncoder {
    ranks: FxHashMap<Vec<u8>, u32>,
    /// id -> bytes, for ordinary and special tokens (None for ids that are unused)
    decoder: Vec<Option<Vec<u8>>>,
    specials: FxHashMap<String, u32>,
    splitter: Splitter,
}

impl RankEncoder {
    /// `tokens`: (id, bytes) of the ordinary tokens; every single byte must be one of them.
    pub fn new(tokens: Vec<(u32, Vec<u8>)>, specials: Vec<(String, u32)>, splitter: Splitter) -> Result<Self, String> {
        let max_id = tokens.iter().map(|t| t.0).chain(specials.iter().map(|s| s.1)).max().unwrap_or(0);
        let mut decoder: Vec<Option<Vec<u8>>> = vec![None; max_id as usize + 1];
        let mut ranks = FxHashMap::default();
        ranks.reserve(tokens.len());
        for (id, bytes) in tokens {
            if decoder[id as usize].is_some() {
                return Err(format!("token id {id} appears twice"));
            }
            decoder[id as usize] = Some(bytes.clone());
            if ranks.insert(bytes, id).is_some() {
                return Err(format!("two tokens have the bytes of token {id}"));
            }
        }
        for b in 0..=255u8 {
            if !ranks.contains_key(&[b][..]) {
                return Err(format!("byte 0x{b:02x} has no token: a byte-level vocabulary needs all 256"));
            }
        }
        for (s, id) in &specials {
            if decoder[*id as usize].is_some() {
                return Err(format!("special token {s:?} reuses id {id}"));
            }
            decoder[*id as usize] = Some(s.as_bytes().to_vec());
        }
        Ok(RankEncoder { ranks, decoder, specials: specials.into_iter().collect(), splitter })
    }

    pub fn vocab_size(&self) -> usize {
        self.decoder.iter().filter(|d| d.is_some()).count()
    }

    pub fn specials(&self) -> Vec<(String, u32)> {
        let mut v: Vec<(String, u32)> = self.specials.iter().map(|(s, &i)| (s.clone(), i)).collect();
        v.sort_by_key(|x| x.1);
        v
    }

    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.ranks.get(bytes).copied()
    }

    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.decoder.get(id as usize).and_then(|d| d.as_deref())
    }

    /// Encodes text with no special-token handling (tiktoken's `encode_ordinary`).
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>, String> {
        let mut out = Vec::with_capacity(text.len() / 3);
        self.encode_into(text, &mut out)?;
        Ok(out)
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), String> {
        let bytes = text.as_bytes();
        self.splitter.split(text, |a, b| self.encode_piece(&bytes[a..b], out))
    }

    /// Encodes text, turning occurrences of the `allowed` special tokens into their ids.
    pub fn encode(&self, text: &str, allowed: &[String]) -> Result<Vec<u32>, String> {
        let Some(re) = self.special_regex(allowed)? else { return self.encode_ordinary(text) };
        let mut out = Vec::with_capacity(text.len() / 3);
        let mut start = 0;
        for m in re.find_iter(text) {
            let m = m.map_err(|e| e.to_string())?;
            self.encode_into(&text[start..m.start()], &mut out)?;
            out.push(self.specials[m.as_str()]);
            start = m.end();
        }
        self.encode_into(&text[start..], &mut out)?;
        Ok(out)
    }

    /// The first of `names` (special tokens) that occurs in `text`, by position.
    pub fn find_special(&self, text: &str, names: &[String]) -> Result<Option<String>, String> {
        match self.special_regex(names)? {
            Some(re) => Ok(re.find(text).map_err(|e| e.to_string())?.map(|m| m.as_str().to_string())),
            None => Ok(None),
        }
    }

    /// Leftmost match; at one position the longest special token wins.
    fn special_regex(&self, names: &[String]) -> Result<Option<Regex>, String> {
        let mut names: Vec<&String> = names.iter().filter(|n| self.specials.contains_key(*n)).collect();
        if names.is_empty() {
            return Ok(None);
        }
        names.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        let alt: Vec<String> = names.iter().map(|n| fancy_regex::escape(n).into_owned()).collect();
        Regex::new(&alt.join("|")).map(Some).map_err(|e| e.to_string())
    }

    pub fn encode_batch(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, String> {
        texts.par_iter().map(|t| self.encode_ordinary(t)).collect()
    }

    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, u32> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id).ok_or(id)?);
        }
        Ok(out)
    }

    /// Appends the ids of one pre-tokenized piece.
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) {
        if let Some(&id) = self.ranks.get(piece) {
            out.push(id);
            return;
        }
        let bounds = self.merge_bounds(piece, NONE);
        for w in bounds.windows(2) {
            out.push(self.ranks[&piece[w[0]..w[1]]]);
        }
    }

    /// Recovers the merge that made each multi-byte token, in rank order: the token's bytes,
    /// merged with only the ranks below its own, split into exactly two tokens (left, right).
    /// Tokens that do not split in two (possible in hand-made vocabularies) have no merge.
    pub fn merges_from_ranks(&self) -> Vec<(u32, u32, u32)> {
        let mut out = Vec::new();
        for (id, bytes) in self.decoder.iter().enumerate() {
            let Some(bytes) = bytes else { continue };
            let id = id as u32;
            if bytes.len() < 2 || self.ranks.get(bytes.as_slice()) != Some(&id) {
                continue;
            }
            let b = self.merge_bounds(bytes, id);
            if b.len() == 3 {
                out.push((self.ranks[&bytes[..b[1]]], self.ranks[&bytes[b[1]..]], id));
            }
        }
        out
    }

    /// Part boundaries (0 = first, piece.len() = last) after merging with ranks < `max_rank`.
    pub fn merge_bounds(&self, piece: &[u8], max_rank: u32) -> Vec<usize> {
        if piece.len() >= HEAP_FROM {
            self.merge_heap(piece, max_rank)
        } else {
            self.merge_flat(piece, max_rank)
        }
    }

    fn pair_rank(&self, piece: &[u8], a: usize, b: usize, max_rank: u32) -> u32 {
        match self.ranks.get(&piece[a..b]) {
            Some(&r) if r < max_rank => r,
            _ => NONE,
        }
    }

    /// tiktoken's loop: parts[i] = (start, rank of parts i and i+1 joined).
    fn merge_flat(&self, piece: &[u8], max_rank: u32) -> Vec<usize> {
        let n = piece.len();
        let mut parts: Vec<(usize, u32)> = Vec::with_capacity(n + 1);
        for i in 0..n {
            let r = if i + 2 <= n { self.pair_rank(piece, i, i + 2, max_rank) } else { NONE };
            parts.push((i, r));
        }
        parts.push((n, NONE));
        loop {
            let mut best = (NONE, 0usize);
            for (i, p) in parts[..parts.len() - 1].iter().enumerate() {
                if p.1 < best.0 {
                    best = (p.1, i);
                }
            }
            if best.0 == NONE {
                break;
            }
            let i = best.1;
            parts.remove(i + 1);
            // parts[i] now spans to parts[i+1].0; its pair reaches to parts[i+2].0.
            parts[i].1 = if i + 2 < parts.len() { self.pair_rank(piece, parts[i].0, parts[i + 2].0, max_rank) } else { NONE };
            if i > 0 {
                parts[i - 1].1 = self.pair_rank(piece, parts[i - 1].0, parts[i + 1].0, max_rank);
            }
        }
        parts.into_iter().map(|p| p.0).collect()
    }

    /// The same merges in O(n log n): a heap of (rank, start) with stale entries skipped.
    fn merge_heap(&self, piece: &[u8], max_rank: u32) -> Vec<usize> {
        let n = piece.len();
        // Parts are identified by their start byte; next[i] is the next part's start (n = end).
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut rank: Vec<u32> = vec![NONE; n];
        let mut alive = vec![true; n];
        let mut heap = BinaryHeap::with_capacity(n);
        for (i, r) in rank.iter_mut().enumerate().take(n.saturating_sub(1)) {
            *r = self.pair_rank(piece, i, i + 2, max_rank);
            if *r != NONE {
                heap.push(Reverse((*r, i)));
            }
        }
        let end_of = |next: &Vec<usize>, i: usize| if i < n { next[i] } else { n };
        while let Some(Reverse((r, i))) = heap.pop() {
            if !alive[i] || rank[i] != r {
                continue;
            }
            let j = next[i];
            alive[j] = false;
            next[i] = next[j];
            if next[i] < n {
                prev[next[i]] = i;
            }
            let k = next[i];
            rank[i] = if k < n { self.pair_rank(piece, i, end_of(&next, k), max_rank) } else { NONE };
            if rank[i] != NONE {
                heap.push(Reverse((rank[i], i)));
            }
            let p = prev[i];
            if p != usize::MAX {
                rank[p] = self.pair_rank(piece, p, k, max_rank);
                if rank[p] != NONE {
                    heap.push(Reverse((rank[p], p)));
                }
            }
        }
        let mut out = Vec::new();
        let mut i = 0;
        while i < n {
            out.push(i);
            i = next[i];
        }
        out.push(n);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::GPT2;

    fn encoder(extra: &[&[u8]]) -> RankEncoder {
        let mut tokens: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
        for (i, t) in extra.iter().enumerate() {
            tokens.push((256 + i as u32, t.to_vec()));
        }
        RankEncoder::new(tokens, vec![("<|end|>".into(), 1000)], Splitter::new(GPT2).unwrap()).unwrap()
    }

    #[test]
    fn lowest_rank_first_leftmost_on_ties() {
        let e = encoder(&[b"aa", b"ab", b"aab"]);
        // "aab": pairs aa(256) ab(257) -> aa first -> [aa, b] -> aab(258)
        assert_eq!(e.encode_ordinary("aab").unwrap(), vec![258]);
        // "aaa": aa at 0 and 1, leftmost wins -> [aa, a]
        assert_eq!(e.encode_ordinary("aaa").unwrap(), vec![256, 97]);
    }

    #[test]
    fn heap_path_equals_flat_path() {
        let e = encoder(&[b"aa", b"aaaa", b"ab", b"ba", b"aba", b"bab", b"abab"]);
        let mut seed = 0x9e3779b97f4a7c15u64;
        for len in [130usize, 200, 517] {
            for _ in 0..50 {
                let piece: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        if seed % 3 == 0 { b'b' } else { b'a' }
                    })
                    .collect();
                assert_eq!(e.merge_heap(&piece, NONE), e.merge_flat(&piece, NONE));
            }
        }
    }

    #[test]
    fn specials_only_when_allowed() {
        let e = encoder(&[]);
        let all = vec!["<|end|>".to_string()];
        assert_eq!(e.encode("a<|end|>", &all).unwrap(), vec![97, 1000]);
        assert_eq!(e.encode("a<|end|>", &[]).unwrap().len(), 8);
        assert_eq!(e.find_special("x <|end|>", &all).unwrap().as_deref(), Some("<|end|>"));
        assert_eq!(e.decode_bytes(&[97, 1000]).unwrap(), b"a<|end|>");
        assert_eq!(e.decode_bytes(&[5000]), Err(5000));
    }
}
