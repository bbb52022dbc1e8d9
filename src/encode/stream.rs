//! Decoding one id at a time, for every algorithm: what each id adds to the decoded text
//! (`Deltas`), and a streaming decoder (`StreamDecoder`) that emits text only once its bytes form
//! whole characters, for tokens generated one by one.
//!
//! A decoder is not a plain concatenation of token bytes (WordPiece puts a space before a word
//! but not before a `##` piece, SentencePiece drops the space of the first `▁`, a control piece
//! decodes to nothing, an end-of-word suffix becomes a space), but every decoder of the core
//! looks back one piece at most. So the bytes id `k` adds are `decode(ctx + [k])` minus
//! `decode(ctx)`, where `ctx` is the last id that decodes to something on its own (with the
//! ids after it that decode to nothing): two short decodes per id, whatever came before. An id
//! that decodes to nothing alone but to something after others (`▁`) starts a new context.

use super::Encode;
use crate::error::CoreError;

/// The bytes each id adds to the decoding of the ids before it.
#[derive(Debug, Default)]
pub struct Deltas {
    /// The context: the last id that decodes to something alone, and the silent ids after it.
    window: Vec<u32>,
    /// `decode(window)`.
    decoded: Vec<u8>,
}

impl Deltas {
    /// The bytes `id` adds after the ids pushed so far. An unknown id is an error and changes
    /// nothing.
    pub fn push(&mut self, enc: &dyn Encode, id: u32) -> Result<Vec<u8>, CoreError> {
        if enc.concatenates() {
            return Ok(enc.token_bytes(id).ok_or_else(|| super::unknown_id(id, enc.id_bound()))?.to_vec());
        }
        self.window.push(id);
        let full = match enc.decode_bytes(&self.window) {
            Ok(full) => full,
            Err(e) => {
                self.window.pop();
                return Err(e);
            }
        };
        let Some(delta) = full.strip_prefix(self.decoded.as_slice()) else {
            // Every decoder of the core keeps what it decoded when more ids follow; one that did
            // not would make streamed text differ from `decode`, so it is an error, not a guess.
            self.window.pop();
            return Err(CoreError::input(format!("{} cannot decode id {id} one id at a time", enc.kind())));
        };
        let delta = delta.to_vec();
        let alone = enc.decode_bytes(&[id])?;
        // Silent ids (nothing alone, nothing here: control pieces) stay in the context. An id
        // that says nothing alone but something after others (SentencePiece's `▁`, whose space
        // the first piece drops) is a piece like any other: it becomes the whole context, so a
        // run of them costs one short decode each, not a decode of the whole run.
        if alone.is_empty() && delta.is_empty() {
            self.decoded = full;
        } else {
            self.window.clear();
            self.window.push(id);
            self.decoded = alone;
        }
        Ok(delta)
    }
}

/// Text from ids pushed one at a time: `step` returns the text that the bytes so far complete,
/// holding back the bytes of a character not yet complete (a multi-byte character split over
/// byte-level tokens or byte-fallback pieces). Bytes that can never start a character are
/// replaced by U+FFFD once known to be invalid, as `bytes.decode("utf-8", "replace")` does, so
/// the steps of ids followed by `finish` concatenate to `decode(ids)` with `errors="replace"`.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    deltas: Deltas,
    pending: Vec<u8>,
}

impl StreamDecoder {
    pub fn step(&mut self, enc: &dyn Encode, id: u32) -> Result<String, CoreError> {
        let delta = self.deltas.push(enc, id)?;
        self.pending.extend_from_slice(&delta);
        Ok(self.take(false))
    }

    /// The rest: an incomplete character at the end becomes U+FFFD.
    pub fn finish(&mut self) -> String {
        self.take(true)
    }

    /// Bytes held back, waiting for the rest of their character.
    pub fn pending(&self) -> &[u8] {
        &self.pending
    }

    fn take(&mut self, last: bool) -> String {
        let mut out = String::new();
        let mut i = 0;
        while i < self.pending.len() {
            match std::str::from_utf8(&self.pending[i..]) {
                Ok(s) => {
                    out.push_str(s);
                    i = self.pending.len();
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    out.push_str(std::str::from_utf8(&self.pending[i..i + valid]).unwrap_or_default());
                    i += valid;
                    match e.error_len() {
                        Some(n) => {
                            out.push('\u{FFFD}');
                            i += n;
                        }
                        None if last => {
                            out.push('\u{FFFD}');
                            i = self.pending.len();
                        }
                        None => break,
                    }
                }
            }
        }
        self.pending.drain(..i);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::RankEncoder;
    use crate::pretok::{Splitter, GPT2};

    fn bytes_encoder() -> RankEncoder {
        let tokens: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
        RankEncoder::new(tokens, vec![], Splitter::new(GPT2).unwrap()).unwrap()
    }

    #[test]
    fn holds_back_split_characters_and_replaces_invalid_bytes() {
        let enc = bytes_encoder();
        let mut d = StreamDecoder::default();
        let text = "a€b".as_bytes();
        let got: Vec<String> = text.iter().map(|&b| d.step(&enc, b as u32).unwrap()).collect();
        assert_eq!(got, ["a", "", "", "€", "b"]);
        let mut d = StreamDecoder::default();
        assert_eq!(d.step(&enc, 0xE2).unwrap(), "");
        assert_eq!(d.step(&enc, b'x' as u32).unwrap(), "\u{FFFD}x");
        assert_eq!(d.step(&enc, 0xFF).unwrap(), "\u{FFFD}");
        assert_eq!(d.step(&enc, 0xE2).unwrap(), "");
        assert_eq!(d.finish(), "\u{FFFD}");
        assert!(d.step(&enc, 999).is_err());
        assert_eq!(d.step(&enc, b'y' as u32).unwrap(), "y");
    }
}
