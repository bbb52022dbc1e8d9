//! tokreg's Rust core: pre-tokenizers, trainers and encoders for subword tokenizers.
//!
//! The core takes plain data (bytes, word counts, rank maps, piece lists) and returns plain
//! data. It knows nothing about SQL, the registry or Python: all PyO3 glue lives in `py.rs`,
//! compiled only with the `python` feature, so `cargo test` builds and tests the core alone.

pub mod bpe;
pub mod content;
pub mod pretok;
pub mod spbpe;
pub mod unigram;
pub mod wordpiece;

#[cfg(feature = "python")]
mod py;
