//! The one encoder interface of the core, and what sits in front of it.
//!
//! - `Encode` (here): what every algorithm's encoder does (encode ordinary text, decode, look up
//!   tokens), implemented by byte-level BPE (`bpe::RankEncoder`), character-level BPE
//!   (`bpe::MergeEncoder`), WordPiece (`wordpiece::WordPiece`), Unigram (`unigram::Unigram`) and
//!   SentencePiece BPE (`spbpe::SpBpe`).
//! - `Specials` and `Rule` (`specials.rs`): the one special-token rule (tiktoken's: allowed
//!   specials become ids, refused strings fail the call), the same for every algorithm.
//! - `Tokenizer` (`tokenizer.rs`): an encoder with its special tokens; its batch path
//!   (`batch.rs`); its constructors from canonical content, one per algorithm (`load.rs`).
//!
//! Adding an algorithm: implement `Encode` in its module, add its `Kind` and its constructor.

mod batch;
pub mod frozen;
mod load;
mod offsets;
mod round_trip;
mod specials;
pub mod stochastic;
mod stochastok;
mod stream;
// Views tables in place in a frozen encoder's bytes: the one module of the core besides the
// binding that needs `unsafe` (each use says why it holds).
#[allow(unsafe_code)]
pub mod table;
mod tokenizer;
mod trace;

pub use batch::Flat;
pub use offsets::Spans;
pub use round_trip::RoundTrip;
pub use specials::{Rule, Specials};
pub use stochastic::{Draw, Method, Rng};
pub use stream::{Deltas, StreamDecoder};
pub use tokenizer::Tokenizer;
pub use trace::Trace;

use std::borrow::Cow;
use std::fmt;

use crate::error::CoreError;

/// Which algorithm an encoder implements, by the name the binding and the registry use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    ByteBpe,
    CharBpe,
    WordPiece,
    Unigram,
    SpBpe,
    SuperwordBpe,
    PickyBpe,
}

impl Kind {
    /// The identifier Python sees (`Encoder.kind`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::ByteBpe => "byte_bpe",
            Kind::CharBpe => "char_bpe",
            Kind::WordPiece => "wordpiece",
            Kind::Unigram => "unigram",
            Kind::SpBpe => "sp_bpe",
            Kind::SuperwordBpe => "superword_bpe",
            Kind::PickyBpe => "picky_bpe",
        }
    }
}

impl fmt::Display for Kind {
    /// The algorithm in words, for messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::ByteBpe => "byte-level BPE",
            Kind::CharBpe => "character-level BPE",
            Kind::WordPiece => "WordPiece",
            Kind::Unigram => "Unigram",
            Kind::SpBpe => "SentencePiece BPE",
            Kind::SuperwordBpe => "superword BPE",
            Kind::PickyBpe => "PickyBPE",
        })
    }
}

/// An algorithm's encoder: normalization, pre-tokenization and segmentation of ordinary text
/// (special tokens are `Specials`' business, in front of it), and decoding.
///
/// Ids are `u32`. An implementation is shared by every thread of a batch (`Send + Sync`); the
/// scratch buffers it reuses are its own, per thread. New capabilities come as methods with a
/// default here (token counting without a list, offsets, streaming decode), so that existing
/// encoders keep compiling and callers can ask any encoder.
pub trait Encode: Send + Sync {
    fn kind(&self) -> Kind;

    /// Appends the ids of `text` to `out` (which may hold earlier texts' ids: nothing of this
    /// text's segmentation may depend on them).
    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError>;

    /// `encode_into` for a segment that starts at byte `at` of the text the caller was given
    /// (the special-token rule cuts texts at special tokens). Only an encoder that treats the
    /// start of the whole text apart (HF's Metaspace `first` scheme) needs to know.
    fn encode_segment(&self, text: &str, _at: usize, out: &mut Vec<u32>) -> Result<(), CoreError> {
        self.encode_into(text, out)
    }

    /// The ids of a segment (as `encode_segment`) with each token's byte span in the whole
    /// text, for an encoder that knows them exactly (`hfpipe`); `None`: offsets are found by
    /// the decoder's rule (`offsets.rs`).
    #[allow(clippy::type_complexity)]
    fn spans(&self, _text: &str, _at: usize) -> Option<Result<Vec<(u32, (usize, usize))>, CoreError>> {
        None
    }

    /// The bytes that `ids` stand for, in this algorithm's decoding (WordPiece joins words with
    /// spaces, SentencePiece turns `▁` back into spaces, ...). An unknown id is an error.
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError>;

    /// The bytes of one token as stored (a SentencePiece piece keeps its `▁`), `None` for an id
    /// that is no token.
    fn token_bytes(&self, id: u32) -> Option<&[u8]>;

    /// The number of tokens, special tokens included.
    fn vocab_size(&self) -> usize;

    /// The highest id + 1: above `vocab_size` when ids have gaps (tiktoken's specials).
    fn id_bound(&self) -> usize {
        self.vocab_size()
    }

    /// The text as the encoder sees it before segmentation.
    fn normalize(&self, text: &str) -> String {
        text.to_string()
    }

    /// Whether `decode_bytes(ids)` is always the concatenation of each id's `token_bytes`:
    /// offsets and streaming decode then take token bytes as they are, without decoding.
    fn concatenates(&self) -> bool {
        false
    }

    /// The text as decoding spells it, for offsets (`offsets.rs`): the text itself by default;
    /// an encoder that normalizes text returns its normalized text with, for each byte of it,
    /// the byte span in `text` of the character it came from.
    fn aligned<'t>(&self, text: &'t str) -> (Cow<'t, str>, Option<Vec<(u32, u32)>>) {
        (Cow::Borrowed(text), None)
    }

    /// Appends the ids of `text` to `ids` and the byte span in `text` of each to `spans`, when
    /// the encoder knows where its tokens came from (Hugging Face's rule: each token spans the
    /// characters it was cut from, an unknown token the characters it replaced); `false` (and
    /// nothing appended): offsets.rs finds the spans from the decoded tokens.
    fn encode_spans(
        &self,
        _text: &str,
        _ids: &mut Vec<u32>,
        _spans: &mut Vec<(usize, usize)>,
    ) -> Result<bool, CoreError> {
        Ok(false)
    }

    /// Appends the ids of one pre-tokenized piece (a counted piece of the corpus, as the
    /// trainer's counter made it) exactly as encoding would segment it. Continued training
    /// starts from these segmentations, so that it learns only what the base left unmerged.
    fn segment_piece(&self, _piece: &[u8], _out: &mut Vec<u32>) -> Result<(), CoreError> {
        Err(CoreError::Unsupported { operation: "continued BPE training", kind: self.kind() })
    }

    /// Appends the ids of one counted key of a corpus, as this encoder's trainer counts it,
    /// exactly as encoding its text would segment it, and returns that text: by default the key
    /// is a piece (`segment_piece`); a superword run's key holds its pieces' lengths before the
    /// text. What the round trip over counted pieces (`round_trip.rs`) is measured with.
    fn segment_counted<'k>(&self, key: &'k [u8], out: &mut Vec<u32>) -> Result<&'k [u8], CoreError> {
        self.segment_piece(key, out)?;
        Ok(key)
    }

    /// This encoder taken apart for one pass over counted keys that are all distinct (the round
    /// trip over a corpus's pieces, `bpe::distinct_pass`); None: the pass calls `segment_counted`.
    fn distinct(&self) -> Option<crate::bpe::Distinct<'_>> {
        None
    }

    /// The `k` best segmentations, best first, with their scores.
    fn nbest(&self, _text: &str, _k: usize) -> Result<Vec<(Vec<u32>, f64)>, CoreError> {
        Err(CoreError::Unsupported { operation: "n-best segmentation", kind: self.kind() })
    }

    /// BPE-dropout (`stochastic.rs`): appends the ids of `text` merged with each candidate
    /// merge skipped with probability `p` at every step, drawing from `rng`. BPE encoders only.
    fn encode_dropout(&self, _text: &str, p: f64, _rng: &mut Rng, _out: &mut Vec<u32>) -> Result<(), CoreError> {
        Err(stochastic::refuse(self.kind(), Draw { method: Method::BpeDropout, p, seed: 0 }))
    }

    /// Appends the ids of `text` (special tokens as text), telling `trace` of every merge BPE's
    /// merge loop makes: LiteToken's residue measure (`trace.rs`). BPE only.
    fn encode_traced(&self, _text: &str, _trace: &mut Trace, _out: &mut Vec<u32>) -> Result<(), CoreError> {
        Err(CoreError::input(format!(
            "{} tokenizers are not merged by tokreg's BPE merge loop, so they have no residues to measure \
             (LiteToken's residues are BPE's)",
            self.kind()
        )))
    }

    /// One segmentation drawn at random (subword regularization); the same seed, the same draw.
    fn sample(&self, _text: &str, _alpha: f64, _seed: u64) -> Result<Vec<u32>, CoreError> {
        Err(CoreError::Unsupported { operation: "sampled segmentation", kind: self.kind() })
    }

    /// Writes this encoder's built tables for `frozen::thaw` to read back without building them
    /// (`frozen.rs`); `false` (nothing written) for an encoder that builds fast enough anyway.
    fn freeze(&self, _w: &mut frozen::Writer) -> bool {
        false
    }

    /// Whether every table of this encoder is read in place from frozen bytes (`table.rs`)
    /// rather than owned: true only for one thawed from an aligned mapping.
    fn tables_in_place(&self) -> bool {
        false
    }
}

/// `CoreError::UnknownId` for `id` in a vocabulary of ids below `bound`.
pub(crate) fn unknown_id(id: u32, bound: usize) -> CoreError {
    CoreError::UnknownId { id: id.into(), bound }
}

/// Refuses ids that leave more room than a vocabulary of `count` tokens can explain. Ids may
/// have gaps (tiktoken's specials sit past a few unused ids), but an encoder keeps a table
/// indexed by id, so a file with a few tokens at ids near 2^32 would ask for gigabytes: memory
/// must follow the vocabulary's real size. The highest id must stay below twice the number of
/// tokens plus `ID_SLACK`.
pub(crate) fn check_id_span(max_id: u32, count: usize) -> Result<(), CoreError> {
    let limit = count.saturating_mul(2).saturating_add(ID_SLACK);
    if max_id as usize >= limit {
        return Err(CoreError::input(format!(
            "the highest token id is {max_id}, but there are only {count} tokens; tokreg allows at most {} unused \
             ids below the highest (its tables are indexed by id): renumber the tokens",
            limit - count
        )));
    }
    Ok(())
}

/// Unused ids a vocabulary may leave beyond one per token (see `check_id_span`).
pub(crate) const ID_SLACK: usize = 1024;

/// The first id of `ids` that is `bound` or more, as an error.
pub(crate) fn check_ids(ids: &[u32], bound: usize) -> Result<(), CoreError> {
    match ids.iter().find(|&&i| i as usize >= bound) {
        Some(&bad) => Err(unknown_id(bad, bound)),
        None => Ok(()),
    }
}

/// A small byte-level tokenizer for the tests of this module: the 256 bytes, `ab` (256),
/// ` ab` (257) and the special token `<s>` (300), split by GPT-2's pattern.
#[cfg(test)]
pub(crate) fn tiny_byte_level() -> Tokenizer {
    use crate::bpe::RankEncoder;
    use crate::pretok::{Splitter, GPT2};

    let mut tokens: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
    tokens.extend([(256, b"ab".to_vec()), (257, b" ab".to_vec())]);
    let specials = vec![("<s>".to_string(), 300)];
    let enc = RankEncoder::new(tokens, specials.clone(), Splitter::new(GPT2).unwrap()).unwrap();
    Tokenizer::new(Box::new(enc), specials)
}
