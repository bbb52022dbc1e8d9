//! Offsets: where each token of an encoding came from in the text, for every algorithm, by the
//! reference library's rule: Hugging Face's for BPE and WordPiece, SentencePiece's for Unigram
//! and SentencePiece BPE (tests/test_decode_offsets_reference.py compares them on every line).
//!
//! An encoder that knows where its tokens come from says so itself (`Encode::encode_spans`):
//! WordPiece cuts each normalized word into its pieces (an unknown word is one span), character-
//! level BPE each word into its merged characters, Unigram and SentencePiece BPE follow
//! SentencePiece's normalized-to-original alignment (`unigram::sp_spans`). Byte-level BPE, and
//! any encoder whose own spans do not apply (a WordPiece text whose Unicode composition crosses
//! characters), use the generic rule below.
//!
//! The generic rule is the decoder's (`Deltas`): each token stands for the bytes it adds to the
//! decoded text, and those are found in the text as the encoder saw it (`Encode::aligned`: the text
//! itself, or WordPiece's normalized text with the character each byte came from). In order:
//!
//! 1. the token's bytes start exactly where the previous token ended: that is its span (for a
//!    lossless version this always holds, so the spans tile the text);
//! 2. else the token's bytes without their leading whitespace start after the whitespace there
//!    (a space the decoder adds between WordPiece words, whitespace SentencePiece collapsed):
//!    the span leaves the whitespace out, as Hugging Face's offsets do;
//! 3. else the token is unknown text (`[UNK]`, `<unk>`): it spans from there to where the next
//!    found token starts (or to the end of its segment), without surrounding whitespace.
//!
//! A token that adds nothing (a control piece, a SentencePiece dummy `▁`) has an empty span
//! where it stands. A special token spans its text. A character span covers every character the
//! byte span holds a byte of (Hugging Face's rule: each byte-level token of a split character
//! spans the whole character); an empty byte span is empty where it stands.

use std::cell::Cell;

use rustc_hash::FxHashMap;

use super::{Deltas, Rule, Tokenizer};
use crate::error::CoreError;

/// An encoding with the byte span in the text of each token.
#[derive(Debug, Default, PartialEq)]
pub struct Spans {
    pub ids: Vec<u32>,
    pub bytes: Vec<(usize, usize)>,
}

impl Spans {
    /// The character spans of `bytes` in `text` (see the module's rule).
    pub fn chars(&self, text: &str) -> Vec<(usize, usize)> {
        // chars_before[b]: characters whose first byte is below b.
        let mut chars_before = Vec::with_capacity(text.len() + 1);
        let mut n = 0;
        for (i, &b) in text.as_bytes().iter().enumerate() {
            chars_before.push(n);
            if (b & 0xC0) != 0x80 {
                n += 1;
            }
            debug_assert_eq!(chars_before.len(), i + 1);
        }
        chars_before.push(n);
        // A byte offset at b counts the character starting at b only when b is past it. A
        // non-empty span covers every character it holds a byte of (as Hugging Face's offsets
        // do: each byte-level token of a split character spans the whole character).
        let at = |b: usize| chars_before[b];
        self.bytes.iter().map(|&(s, e)| if e > s { (at(s + 1) - 1, at(e)) } else { (at(s), at(s)) }).collect()
    }
}

impl Tokenizer {
    /// `encode(text, rule)` with the byte span of each token in `text`.
    pub fn encode_with_offsets(&self, text: &str, rule: &Rule) -> Result<Spans, CoreError> {
        rule.check(text, None)?;
        let mut spans = Spans::default();
        let mut start = 0;
        if let Some(re) = rule.emit.as_deref() {
            for m in re.find_iter(text) {
                let m = m.map_err(|e| CoreError::input(format!("matching special tokens failed: {e}")))?;
                if m.start() > start {
                    self.segment_spans(text, start, m.start(), &mut spans)?;
                }
                spans.ids.push(self.specials.id(m.as_str()));
                spans.bytes.push((m.start(), m.end()));
                start = m.end();
            }
        }
        if start < text.len() {
            self.segment_spans(text, start, text.len(), &mut spans)?;
        }
        Ok(spans)
    }

    /// Encodes `text[from..to]` as a text of its own and appends its tokens' spans.
    fn segment_spans(&self, text: &str, from: usize, to: usize, spans: &mut Spans) -> Result<(), CoreError> {
        let seg = &text[from..to];
        if let Some(exact) = self.encoder.spans(seg, from) {
            for (id, span) in exact? {
                spans.ids.push(id);
                spans.bytes.push(span);
            }
            return Ok(());
        }
        let first = spans.ids.len();
        if self.encoder.encode_spans(seg, &mut spans.ids, &mut spans.bytes)? {
            for span in &mut spans.bytes[first..] {
                *span = (span.0 + from, span.1 + from);
            }
            return Ok(());
        }
        self.encoder.encode_into(seg, &mut spans.ids)?;
        let (seen, source) = self.encoder.aligned(seg);
        let seen = seen.as_bytes();
        // The original span of seen[s..e] (relative to the segment). Whitespace a normalizer
        // put there (around a CJK character) is left out.
        let original = |mut s: usize, mut e: usize| -> (usize, usize) {
            let Some(src) = &source else { return (s, e) };
            while s < e && seen[s].is_ascii_whitespace() {
                s += 1;
            }
            while e > s && seen[e - 1].is_ascii_whitespace() {
                e -= 1;
            }
            if s < e {
                (src[s].0 as usize, src[e - 1].1 as usize)
            } else {
                src.get(s).map_or((seg.len(), seg.len()), |&(a, _)| (a as usize, a as usize))
            }
        };
        // The first non-space at or after p. Positions only move forward, so the end of the
        // last whitespace run walked is kept: a long run is walked once, not once per token.
        let run = Cell::new((0usize, 0usize));
        let skip_space = |p: usize| {
            let (s, e) = run.get();
            if s <= p && p <= e {
                return e;
            }
            let mut e = p;
            while e < seen.len() && seen[e].is_ascii_whitespace() {
                e += 1;
            }
            run.set((p, e));
            e
        };
        // Token texts known to be absent from seen[from..]: a text that is not there (the unknown
        // token's own `[UNK]`) is searched for once, not once per token after it.
        let mut absent: FxHashMap<Vec<u8>, usize> = FxHashMap::default();
        let mut deltas = Deltas::default();
        let mut pos = 0;
        // Tokens not found in the text (unknown pieces) since `pos`, waiting for the next found one.
        let mut unknown: Vec<usize> = Vec::new();
        let found = |unknown: &mut Vec<usize>, at: usize, pos: usize, spans: &mut Spans| {
            // The unknown tokens share [pos, at) without its surrounding whitespace: the first
            // takes it all, as one unknown piece stands for the whole unknown run.
            let s = skip_space(pos);
            let mut e = at.max(s);
            while e > s && seen[e - 1].is_ascii_whitespace() {
                e -= 1;
            }
            for (k, &t) in unknown.iter().enumerate() {
                spans.bytes[t] = if k == 0 { original(s, e) } else { original(e, e) };
            }
            unknown.clear();
        };
        let concatenates = self.encoder.concatenates();
        for k in first..spans.ids.len() {
            let id = spans.ids[k];
            // A concatenating decoder's delta is the token's bytes: no decoding, no copy.
            let owned;
            let delta: &[u8] = match self.encoder.token_bytes(id) {
                Some(b) if concatenates => b,
                _ => {
                    owned = deltas.push(&*self.encoder, id)?;
                    &owned
                }
            };
            spans.bytes.push((0, 0));
            let core = &delta[delta.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
            let hit = if seen[pos..].starts_with(delta) {
                Some((pos, pos + delta.len()))
            } else if core.is_empty() {
                Some((pos, pos))
            } else {
                let p = skip_space(pos);
                if seen[p..].starts_with(core) {
                    Some((p, p + core.len()))
                } else if !unknown.is_empty() && absent.get(core).map_or(true, |&from| p < from) {
                    let at = find(&seen[p..], core).map(|i| (p + i, p + i + core.len()));
                    if at.is_none() {
                        absent.insert(core.to_vec(), p);
                    }
                    at
                } else {
                    None
                }
            };
            match hit {
                Some((s, e)) => {
                    if !unknown.is_empty() {
                        found(&mut unknown, s, pos, spans);
                    }
                    spans.bytes[k] = original(s, e);
                    pos = e;
                }
                None => unknown.push(k),
            }
        }
        if !unknown.is_empty() {
            found(&mut unknown, seen.len(), pos, spans);
        }
        // A character that normalizes into several tokens (`ﬁ`, `İ`) belongs to the first of them:
        // spans never overlap and never go back.
        let mut end = 0;
        for span in &mut spans.bytes[first..] {
            let s = span.0.max(end);
            let e = span.1.max(s);
            end = e;
            *span = (s + from, e + from);
        }
        Ok(())
    }
}

/// The first index of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use crate::encode::tiny_byte_level as tok;

    #[test]
    fn byte_level_spans_tile_the_text_and_split_characters_span_the_character() {
        let t = tok();
        let text = "ab<s> ab€";
        let rule = t.allowing(&["<s>".to_string()]).unwrap();
        let s = t.encode_with_offsets(text, &rule).unwrap();
        assert_eq!(s.ids, t.encode(text, &rule).unwrap());
        assert_eq!(s.bytes, [(0, 2), (2, 5), (5, 8), (8, 9), (9, 10), (10, 11)]);
        assert_eq!(s.chars(text), [(0, 2), (2, 5), (5, 8), (8, 9), (8, 9), (8, 9)]);
    }

    #[test]
    fn adjacent_unknown_words_each_span_their_own_characters() {
        use crate::encode::Tokenizer;
        use crate::normalize::BertNormalizer;
        use crate::wordpiece::{Encoder, WordPiece};

        let vocab: Vec<String> = ["[UNK]", "a", "##b"].iter().map(|s| s.to_string()).collect();
        let enc = Encoder::new(&vocab, "[UNK]", "##", 100).unwrap();
        let wp = WordPiece::new(enc, BertNormalizer::bert(), vocab, "##", ("##", true));
        let t = Tokenizer::new(Box::new(wp), Vec::new());
        let text = "ab 東京 x";
        let s = t.encode_with_offsets(text, &t.allowing(&[]).unwrap()).unwrap();
        assert_eq!(s.ids, [1, 2, 0, 0, 0]);
        assert_eq!(s.chars(text), [(0, 1), (1, 2), (3, 4), (4, 5), (6, 7)]);
    }
}
