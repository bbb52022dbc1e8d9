//! `Unigram`: the Unigram LM behind the core's `Encode` interface: SentencePiece's text
//! handling (`SpNormalizer`) in front of the Viterbi encoder, n-best and sampling, and
//! decoding back through the normalizer.

use super::{sp_decode, sp_encode_spans, with_scratch, Encoder};
use crate::encode::{check_ids, Encode, Kind};
use crate::error::CoreError;
use crate::normalize::SpNormalizer;

pub struct Unigram {
    encoder: Encoder,
    normalizer: SpNormalizer,
    /// What the unknown piece decodes to (`sp_decode`).
    unk_surface: String,
}

impl Unigram {
    pub fn new(encoder: Encoder, normalizer: SpNormalizer, unk_surface: &str) -> Unigram {
        Unigram { encoder, normalizer, unk_surface: unk_surface.to_string() }
    }
}

impl Encode for Unigram {
    fn kind(&self) -> Kind {
        Kind::Unigram
    }

    /// Normalizes and segments in one pass, with this thread's scratch buffers (`with_scratch`),
    /// so a call allocates nothing but the growth of `out`.
    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        with_scratch(|s| self.encoder.encode_text_into(&self.normalizer, text, s, out));
        Ok(())
    }

    /// Piece texts (a byte piece gives its byte, a control piece nothing, the unknown piece the
    /// model's `unk_surface`), `▁` back to spaces (see `sp_decode`).
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        check_ids(ids, self.encoder.vocab_size())?;
        let (norm, unk) = (&self.normalizer, self.encoder.unk_id());
        Ok(sp_decode(norm, ids, unk, &self.unk_surface, |run| self.encoder.decode_pieces(run)))
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.encoder.piece(id).map(str::as_bytes)
    }

    fn vocab_size(&self) -> usize {
        self.encoder.vocab_size()
    }

    fn normalize(&self, text: &str) -> String {
        self.normalizer.normalize(text)
    }

    /// SentencePiece's offsets (`sp_spans`).
    fn encode_spans(&self, text: &str, ids: &mut Vec<u32>, spans: &mut Vec<(usize, usize)>) -> Result<bool, CoreError> {
        sp_encode_spans(self, &self.normalizer, &self.encoder, text, ids, spans)
    }

    /// The `k` best segmentations, best first, each with its total log probability.
    fn nbest(&self, text: &str, k: usize) -> Result<Vec<(Vec<u32>, f64)>, CoreError> {
        Ok(self.encoder.nbest(&self.normalizer.normalize(text), k))
    }

    /// One segmentation drawn with probability proportional to P(segmentation)^alpha.
    /// A NaN, infinite, zero or negative alpha is refused: NaN weights would draw an arbitrary
    /// path and say nothing.
    fn sample(&self, text: &str, alpha: f64, seed: u64) -> Result<Vec<u32>, CoreError> {
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(CoreError::input(format!("sampling needs a finite alpha > 0 (e.g. 0.1), not {alpha}")));
        }
        Ok(self.encoder.sample(&self.normalizer.normalize(text), alpha, seed))
    }
}
