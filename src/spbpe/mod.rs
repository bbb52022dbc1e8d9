//! SentencePiece BPE (`model_type: BPE` models such as Llama's): the score-driven encoder
//! (`encoder.rs`) and the pipeline behind the core's `Encode` interface (`pipeline.rs`).
//!
//! This is not tokreg's other BPE: a SentencePiece BPE model keeps no merge list, only pieces
//! with scores, and merges the highest-scored pair first (see `encoder.rs`). Its text handling
//! is `crate::normalize::SpNormalizer`, as Unigram's is; its pieces are Unigram's `Piece`s.

mod encoder;
mod pipeline;

pub use encoder::Encoder;
pub use pipeline::SpBpe;
