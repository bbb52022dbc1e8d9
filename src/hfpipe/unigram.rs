//! Hugging Face's Unigram model (tokenizers' `models/unigram/model.rs`, `encode_optimized`),
//! which differs from SentencePiece's (and tokreg's own `unigram::Encoder`) in ways that change
//! ids, so an imported HF file runs this one:
//!
//! - Every vocabulary entry is matched from text, control and byte pieces included.
//! - Scores are `f64` and path scores are summed in `f64`.
//! - A character with no single-character piece gets an unknown node scored
//!   `min_score - 10`, `min_score` over the whole vocabulary.
//! - For one end position, candidates come by start ascending and replace the incumbent only
//!   when strictly better: ties go to the earliest start (the longest last piece).
//! - Consecutive unknown nodes are fused into one token (`fuse_unk`); that token's text is
//!   looked up in the vocabulary again, and with `byte_fallback` it becomes the byte pieces of
//!   its UTF-8 bytes when all of them exist (else the unknown id). All of them span the fused
//!   text.

use rustc_hash::FxHashMap;

use crate::error::CoreError;
use crate::unigram::trie::DoubleArray;

const UNK_PENALTY: f64 = 10.0;

pub struct Model {
    trie: DoubleArray,
    scores: Vec<f64>,
    ids: FxHashMap<String, u32>,
    unk_id: u32,
    unk_score: f64,
    /// With byte fallback, the id of `<0xNN>` for each byte that has one.
    byte_ids: Option<Box<[Option<u32>; 256]>>,
}

#[derive(Clone, Copy)]
struct Best {
    score: f64,
    start: u32,
    /// Piece id, `u32::MAX` for unknown; `start == u32::MAX`: not reached yet.
    id: u32,
}

impl Model {
    pub fn new(pieces: &[(String, f64)], unk_id: u32, byte_fallback: bool) -> Result<Model, CoreError> {
        if unk_id as usize >= pieces.len() {
            return Err(CoreError::input("the Unigram unk_id is not in the vocabulary"));
        }
        let mut ids = FxHashMap::default();
        let mut min_score = f64::INFINITY;
        let mut keys = Vec::with_capacity(pieces.len());
        for (i, (text, score)) in pieces.iter().enumerate() {
            if text.is_empty() {
                return Err(CoreError::input(format!("Unigram piece {i} is empty; remove it")));
            }
            if !score.is_finite() {
                return Err(CoreError::input(format!("the Unigram piece {text:?} has a non-finite score")));
            }
            if ids.insert(text.clone(), i as u32).is_some() {
                return Err(CoreError::input(format!("the Unigram piece {text:?} is defined twice; remove one")));
            }
            min_score = min_score.min(*score);
            keys.push((text.as_bytes(), i as i32, 0f32));
        }
        let trie = DoubleArray::build(keys)?;
        let byte_ids = byte_fallback.then(|| {
            let mut table = [None; 256];
            for (b, slot) in table.iter_mut().enumerate() {
                *slot = ids.get(&format!("<0x{b:02X}>")).copied();
            }
            Box::new(table)
        });
        Ok(Model {
            trie,
            scores: pieces.iter().map(|p| p.1).collect(),
            ids,
            unk_id,
            unk_score: min_score - UNK_PENALTY,
            byte_ids,
        })
    }

    /// Appends (id, start, end) of `s`'s tokens, spans in bytes of `s`.
    pub fn encode(&self, s: &str, out: &mut Vec<(u32, usize, usize)>) {
        let n = s.len();
        if n == 0 {
            return;
        }
        let bytes = s.as_bytes();
        let mut best = vec![Best { score: 0.0, start: u32::MAX, id: 0 }; n + 1];
        let mut start = 0;
        while start < n {
            let here = best[start].score;
            let mblen = s[start..].chars().next().map_or(1, char::len_utf8);
            let mut has_single = false;
            let mut node = 0u32;
            for (k, &b) in bytes[start..].iter().enumerate() {
                let Some(next) = self.trie.step(node, b) else { break };
                node = next;
                let id = self.trie.value(node);
                if id < 0 {
                    continue;
                }
                let end = start + k + 1;
                let cand = self.scores[id as usize] + here;
                let t = &mut best[end];
                if t.start == u32::MAX || cand > t.score {
                    *t = Best { score: cand, start: start as u32, id: id as u32 };
                }
                has_single |= k + 1 == mblen;
            }
            if !has_single {
                let cand = self.unk_score + here;
                let t = &mut best[start + mblen];
                if t.start == u32::MAX || cand > t.score {
                    *t = Best { score: cand, start: start as u32, id: self.unk_id };
                }
            }
            start += mblen;
        }
        // Backtrack, fusing runs of unknown nodes.
        let mut path: Vec<(u32, usize, usize)> = Vec::new();
        let mut end = n;
        while end > 0 {
            let b = best[end];
            let s0 = b.start as usize;
            match path.last_mut() {
                Some(last) if b.id == self.unk_id && last.0 == self.unk_id && last.1 == end => last.1 = s0,
                _ => path.push((b.id, s0, end)),
            }
            end = s0;
        }
        for &(id, a, z) in path.iter().rev() {
            if id != self.unk_id {
                out.push((id, a, z));
                continue;
            }
            let text = &s[a..z];
            if let Some(&found) = self.ids.get(text) {
                out.push((found, a, z));
                continue;
            }
            let bytes: Option<Vec<u32>> =
                self.byte_ids.as_ref().and_then(|t| text.bytes().map(|b| t[b as usize]).collect());
            match bytes {
                Some(bytes) => out.extend(bytes.into_iter().map(|id| (id, a, z))),
                None => out.push((self.unk_id, a, z)),
            }
        }
    }
}
