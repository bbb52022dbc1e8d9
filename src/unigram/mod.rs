//! Unigram LM (SentencePiece-style) tokenizer: plain data types shared by the trainer and the
//! encoder, and the module wiring. Owns: `PieceKind`, `Piece`, `TrainerConfig`, `Round`,
//! `TrainResult`, and the id layout contract documented below. The trainer is `trainer.rs`
//! (with the corpus run around it in `corpus.rs`); the encoder is `encoder.rs`, behind the
//! core's `Encode` interface in `pipeline.rs`; SentencePiece's decoding (shared with
//! SentencePiece BPE) is `decode.rs`, its offsets `spans.rs`.
//!
//! # Id layout produced by [`train`]
//! SentencePiece's default layout, so that a model trained here can be exported to (or compared
//! with) a SentencePiece model piece for piece:
//!
//! | ids | pieces | kind | score |
//! |-----|--------|------|-------|
//! | 0 | `cfg.unk_piece` | `Unknown` | 0.0 |
//! | 1 .. | `cfg.control_pieces`, in the given order | `Control` | 0.0 |
//! | next | `cfg.user_defined`, in the given order | `UserDefined` | 0.0 |
//! | next 256 (only if `byte_fallback`) | `<0x00>` .. `<0xFF>` | `Byte` | 0.0 |
//! | rest | learned pieces, score descending, ties by text bytes ascending | `Normal` | log prob |
//!
//! # Determinism
//! Every ordering decision is a total order documented where it is taken (mostly "score
//! descending, then piece text bytes ascending"). The input word list is merged and sorted by
//! text bytes first, so the input order never matters, and the parallel parts reduce
//! per-chunk results in chunk order with a chunk size that does not depend on the thread count,
//! so results are bit-identical for any rayon pool size.

// Lattice and EM code indexes several parallel arrays by position; index loops say that best.
#![allow(clippy::needless_range_loop)]

mod corpus;
mod decode;
mod encoder;
mod lattice;
mod pipeline;
mod script;
mod seeds;
mod spans;
mod trainer;
pub(crate) mod trie;

pub use corpus::{splitting, train_counts, CorpusOutput};
pub use decode::{sp_decode, DEFAULT_UNK_SURFACE};
pub use encoder::{with_scratch, Encoder, Scratch};
pub use pipeline::Unigram;
pub use spans::{sp_encode_spans, SpPieces};
pub use trainer::train;

use crate::error::CoreError;

/// Piece types, with SentencePiece's `ModelProto.SentencePiece.Type` numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PieceKind {
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
}

impl PieceKind {
    /// The kind by the name tokreg stores (`normal`, `unknown`, `control`, `user_defined`,
    /// `unused`, `byte`).
    pub fn from_name(name: &str) -> Result<PieceKind, CoreError> {
        use PieceKind::*;
        Ok(match name {
            "normal" => Normal,
            "unknown" => Unknown,
            "control" => Control,
            "user_defined" => UserDefined,
            "unused" => Unused,
            "byte" => Byte,
            k => {
                return Err(CoreError::input(format!(
                    "unknown SentencePiece piece kind {k:?}; kinds are normal, unknown, control, user_defined, \
                     unused, byte"
                )))
            }
        })
    }

    pub fn name(self) -> &'static str {
        use PieceKind::*;
        match self {
            Normal => "normal",
            Unknown => "unknown",
            Control => "control",
            UserDefined => "user_defined",
            Unused => "unused",
            Byte => "byte",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub text: String,
    pub score: f64,
    pub kind: PieceKind,
}

/// The Unigram trainer's current revision (what `TrainerConfig::revision` defaults to).
pub const REVISION: u32 = 3;

#[derive(Clone, Debug)]
pub struct TrainerConfig {
    /// Final number of pieces, including unk/control/user-defined/byte pieces.
    pub vocab_size: usize,
    /// Fraction of pieces kept per pruning round (SentencePiece's `shrinking_factor`).
    pub shrinking_factor: f64,
    /// Maximum piece length in characters.
    pub max_piece_length: usize,
    /// Number of multi-character seed substrings kept (by frequency * length).
    pub seed_size: usize,
    /// EM sub-iterations per round.
    pub em_iterations: usize,
    /// Add the 256 byte pieces `<0x00>`..`<0xFF>`.
    pub byte_fallback: bool,
    /// Text of the unknown piece; always id 0.
    pub unk_piece: String,
    /// Control pieces (never matched from text), ids 1.. in this order.
    pub control_pieces: Vec<String>,
    /// User-defined pieces (always matched as one piece), after the control pieces.
    pub user_defined: Vec<String>,
    /// Fraction of character occurrences that must be covered by single-character pieces;
    /// rarer characters become unknown for training.
    pub character_coverage: f64,
    /// Trainer revision (see `trainer.rs`, "Revisions"): 1 reproduces runs recorded before
    /// revision 2 (a word's end always counted as a branch point when choosing seeds); 2 reads a
    /// word's end as followed by the next word's `▁`, as SentencePiece does; 3, the default,
    /// follows SentencePiece 0.2 (seeds by bytes, its loop and its unreachable-piece pruning).
    pub revision: u32,
    /// Smaller vocabulary sizes to finalize on the way (several sizes from one run): each is
    /// taken at the first round whose pruning reaches its own target (see `trainer.rs`).
    pub snapshots: Vec<usize>,
    /// SentencePiece's piece-validity switches (`IsValidSentencePiece`), with its defaults: no
    /// piece mixes scripts; digits are a script of their own; `▁` only starts a piece (off: also
    /// inside one, never at its end; the counter then keeps whole lines); every digit alone.
    pub split: SplitRules,
    /// Extending a model: its learned pieces (text, log prob). They are part of the model from
    /// the start, never pruned, and keep their scores (EM estimates only the new pieces); the
    /// result's pieces are the new ones only (after the meta pieces), `vocab_size` counting
    /// meta + new. Empty: an ordinary run.
    pub base: Vec<(String, f64)>,
    /// Extending: words (with their `▁`) of a text whose segmentation must not change. No new
    /// piece may occur inside one of them: new characters of theirs get no piece, and seeds
    /// that are substrings of them are dropped, so their lattices are the base's.
    pub keep: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitRules {
    pub by_unicode_script: bool,
    pub by_number: bool,
    pub by_whitespace: bool,
    pub digits: bool,
}

impl Default for SplitRules {
    fn default() -> Self {
        SplitRules { by_unicode_script: true, by_number: true, by_whitespace: true, digits: false }
    }
}

impl Default for TrainerConfig {
    fn default() -> Self {
        TrainerConfig {
            vocab_size: 8000,
            shrinking_factor: 0.75,
            max_piece_length: 16,
            seed_size: 1_000_000,
            em_iterations: 2,
            byte_fallback: false,
            unk_piece: "<unk>".to_string(),
            control_pieces: vec!["<s>".to_string(), "</s>".to_string()],
            user_defined: Vec::new(),
            character_coverage: 1.0,
            revision: REVISION,
            snapshots: Vec::new(),
            split: SplitRules::default(),
            base: Vec::new(),
            keep: Vec::new(),
        }
    }
}

/// One EM round: `vocab_size` is the number of learned pieces after the round's last M-step,
/// `log_likelihood` the corpus log-likelihood (sum over words of count * log P(word)) computed
/// by the round's last E-step.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    pub round: u32,
    pub vocab_size: usize,
    pub log_likelihood: f64,
}

#[derive(Clone, Debug)]
pub struct TrainResult {
    pub pieces: Vec<Piece>,
    pub rounds: Vec<Round>,
    /// The smaller sizes asked for (`TrainerConfig::snapshots`), in the order asked.
    pub sized: Vec<Sized>,
}

/// One smaller vocabulary of a run: its pieces, and how many of the run's rounds led to it.
#[derive(Clone, Debug)]
pub struct Sized {
    pub vocab_size: usize,
    pub pieces: Vec<Piece>,
    pub rounds: usize,
}

/// Text of the byte piece for `b`, SentencePiece's spelling (`<0x0A>`, upper-case hex).
pub fn byte_piece_text(b: u8) -> String {
    format!("<0x{:02X}>", b)
}

/// Inverse of [`byte_piece_text`]: `Some(byte)` for exactly `<0xHH>` with upper-case hex digits.
pub(crate) fn parse_byte_piece(s: &str) -> Option<u8> {
    let b = s.as_bytes();
    if b.len() != 6 || &b[..3] != b"<0x" || b[5] != b'>' {
        return None;
    }
    let hex = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    Some(hex(b[3])? * 16 + hex(b[4])?)
}
