//! The merge-table encoder for classic character-level BPE (Sennrich et al.).
//!
//! Each word is split into characters, optionally followed by the end-of-word symbol; then
//! the learned merges are applied by rank (the lowest-ranked pair present is merged
//! everywhere it occurs, leftmost first) until no learned pair is left. Characters never seen
//! in training become the unknown token.

use rustc_hash::FxHashMap;

use crate::encode::{unknown_id, Encode, Kind};
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

    /// Encodes text (no special tokens: see `encode::Specials`).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, CoreError> {
        let mut out = Vec::new();
        self.encode_into(text, &mut out)?;
        Ok(out)
    }

    fn merge(&self, syms: &mut Vec<u32>) {
        loop {
            let best = syms
                .windows(2)
                .filter_map(|p| self.merges.get(&(p[0], p[1])).map(|&(rank, z)| (rank, p[0], p[1], z)))
                .min();
            let Some((_, a, b, z)) = best else { break };
            let mut w = 0;
            let mut i = 0;
            while i < syms.len() {
                if i + 1 < syms.len() && syms[i] == a && syms[i + 1] == b {
                    syms[w] = z;
                    i += 2;
                } else {
                    syms[w] = syms[i];
                    i += 1;
                }
                w += 1;
            }
            syms.truncate(w);
        }
    }
}

impl Encode for MergeEncoder {
    fn kind(&self) -> Kind {
        Kind::CharBpe
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let mut syms = Vec::new();
        self.splitter.split(text, |a, b| {
            syms.clear();
            for c in text[a..b].chars() {
                if let Some(id) = self.chars.get(&c).copied().or(self.unk) {
                    syms.push(id);
                }
            }
            if let Some((eow, _)) = &self.end_of_word {
                syms.push(*eow);
            }
            self.merge(&mut syms);
            out.extend_from_slice(&syms);
        })
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

    fn vocab_size(&self) -> usize {
        self.decoder.len()
    }
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
}
