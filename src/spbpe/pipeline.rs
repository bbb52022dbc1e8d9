//! `SpBpe`: SentencePiece BPE behind the core's `Encode` interface: SentencePiece's text
//! handling (`SpNormalizer`) in front of the score-driven encoder, and decoding back through it.

use super::Encoder;
use crate::encode::{check_ids, Encode, Kind};
use crate::error::CoreError;
use crate::normalize::SpNormalizer;
use crate::unigram::{sp_decode, sp_encode_spans};

pub struct SpBpe {
    encoder: Encoder,
    normalizer: SpNormalizer,
    /// What the unknown piece decodes to (`sp_decode`).
    unk_surface: String,
}

impl SpBpe {
    pub fn new(encoder: Encoder, normalizer: SpNormalizer, unk_surface: &str) -> SpBpe {
        SpBpe { encoder, normalizer, unk_surface: unk_surface.to_string() }
    }
}

impl Encode for SpBpe {
    fn kind(&self) -> Kind {
        Kind::SpBpe
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        self.encoder.encode_into(&self.normalizer.normalize(text), out)
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
}
