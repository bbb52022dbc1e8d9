// tokreg wordpiece: WordPiece (BERT) tokenization as plain Rust - no Python, no I/O.
// This module owns: the HF-compatible BERT normalizer and pre-tokenizer (`normalize.rs`, with
// character classes in the generated `tables.rs`), the score-based WordPiece trainer
// (`trainer.rs`) and the greedy longest-match trie encoder (`encoder.rs`). Tests that need the
// reference data built from Hugging Face tokenizers live in `reference_tests.rs` (#[ignore]).

mod decode;
mod encoder;
mod normalize;
mod tables;
mod trainer;

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod trainer_tests;

pub use decode::decode;
pub use encoder::Encoder;
pub use normalize::{pre_tokenize, BertNormalizer, Form};
pub use trainer::{train, Merge, TrainResult, TrainerConfig};
