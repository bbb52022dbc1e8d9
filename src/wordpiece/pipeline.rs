//! `WordPiece`: the whole WordPiece pipeline behind the core's `Encode` interface: BERT
//! normalizer, BERT pre-tokenizer, greedy longest match (`Encoder`), and the vocabulary that
//! decoding and token lookups need.

use std::borrow::Cow;
use std::cell::RefCell;

use super::{decode, Encoder};
use crate::encode::{Encode, Kind};
use crate::error::CoreError;
use crate::normalize::{pre_tokenize, BertNormalizer};

pub struct WordPiece {
    encoder: Encoder,
    normalizer: BertNormalizer,
    /// Token strings in id order.
    vocab: Vec<String>,
    /// The model's continuing prefix.
    prefix: String,
    /// The decoder's continuing prefix (the model's, or empty: no decoder, tokens joined by
    /// spaces) and its clean-up of tokenization artifacts (`decode`; BERT's default is on).
    decode_prefix: String,
    cleanup: bool,
}

/// Scratch capacity above which a thread's normalized-text buffer is dropped after a call, so
/// that one long text does not pin its memory for good.
const SCRATCH_LIMIT: usize = 1 << 20;

thread_local! {
    /// The normalized text of the current call, reused from call to call on each thread.
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

impl WordPiece {
    /// `vocab`: the token strings the encoder was built from, in id order; `prefix`: the
    /// continuing prefix; `decoder`: the
    /// decoder's prefix and whether it cleans up (see `decode`).
    pub fn new(
        encoder: Encoder,
        normalizer: BertNormalizer,
        vocab: Vec<String>,
        prefix: &str,
        decoder: (&str, bool),
    ) -> WordPiece {
        let (decode_prefix, cleanup) = decoder;
        let (prefix, decode_prefix) = (prefix.to_string(), decode_prefix.to_string());
        WordPiece { encoder, normalizer, vocab, prefix, decode_prefix, cleanup }
    }
}

impl Encode for WordPiece {
    fn kind(&self) -> Kind {
        Kind::WordPiece
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => {
                self.encoder.encode_into(&self.normalizer, text, &mut scratch, out);
                if scratch.capacity() > SCRATCH_LIMIT {
                    *scratch = String::new();
                }
            }
            Err(_) => self.encoder.encode_into(&self.normalizer, text, &mut String::new(), out),
        });
        Ok(())
    }

    /// Pieces joined by spaces, continuation pieces glued to the previous one, cleaned up when
    /// the version says so (see `decode`).
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        Ok(decode(&self.vocab, ids, &self.decode_prefix, self.cleanup)?.into_bytes())
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.vocab.get(id as usize).map(|t| t.as_bytes())
    }

    fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    fn normalize(&self, text: &str) -> String {
        self.normalizer.normalize(text)
    }

    /// The normalized text, character by character, so that each of its bytes knows the
    /// character it came from (BERT's steps are per character; an extra Unicode composition
    /// across characters can make a token unfindable, and it then spans like an unknown one).
    fn aligned<'t>(&self, text: &'t str) -> (Cow<'t, str>, Option<Vec<(u32, u32)>>) {
        let mut out = String::with_capacity(text.len());
        let mut source = Vec::with_capacity(text.len());
        let mut buf = [0u8; 4];
        for (i, c) in text.char_indices() {
            let before = out.len();
            self.normalizer.normalize_into(c.encode_utf8(&mut buf), &mut out);
            let span = (i as u32, (i + c.len_utf8()) as u32);
            source.resize(source.len() + out.len() - before, span);
        }
        (Cow::Owned(out), Some(source))
    }

    /// Hugging Face's offsets: each word of the normalized text is cut into its pieces (a
    /// continuation piece spans its bytes without the prefix), an unknown word is one span,
    /// and each span maps back to the characters its first and last bytes came from (`aligned`).
    /// Where normalizing character by character would not give the text encoding sees (a
    /// Unicode composition across characters), the generic rule of offsets.rs is used.
    fn encode_spans(&self, text: &str, ids: &mut Vec<u32>, spans: &mut Vec<(usize, usize)>) -> Result<bool, CoreError> {
        let (seen, source) = self.aligned(text);
        let Some(source) = source else { return Ok(false) };
        if *seen != self.normalizer.normalize(text) {
            return Ok(false);
        }
        let base = seen.as_ptr() as usize;
        let unk = self.encoder.unk_id();
        let original = |s: usize, e: usize| (source[s].0 as usize, source[e - 1].1 as usize);
        pre_tokenize(&seen, |word| {
            let start = word.as_ptr() as usize - base;
            let mark = ids.len();
            self.encoder.encode_word(word, ids);
            if ids.len() == mark + 1 && ids[mark] == unk {
                spans.push(original(start, start + word.len()));
                return;
            }
            let mut pos = start;
            for (k, &id) in ids[mark..].iter().enumerate() {
                let token = &self.vocab[id as usize];
                let len = if k == 0 { token.len() } else { token.len() - self.prefix.len() };
                spans.push(original(pos, pos + len));
                pos += len;
            }
        });
        Ok(true)
    }
}
