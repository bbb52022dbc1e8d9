//! WordPiece (BERT) tokenization as plain Rust: no Python, no I/O.
//!
//! Owns: the WordPiece trainer and its objectives (`trainer.rs`, and the corpus-to-vocabulary run
//! around it in `corpus.rs`), the greedy longest-match trie encoder (`encoder.rs`), decoding
//! (`decode.rs`) and the pipeline behind the core's `Encode` interface (`pipeline.rs`). The
//! BERT normalizer and pre-tokenizer it uses are `crate::normalize`'s.
//!
//! Parity with Hugging Face is tested from Python (tests/test_wordpiece.py,
//! tests/test_hf_wordpiece_unigram.py, and every code point in tests/test_core_encoder.py); the
//! encoder and trainer timings are `cargo bench --bench wordpiece`.

mod corpus;
mod decode;
mod encoder;
mod extend;
mod pipeline;
mod trainer;

#[cfg(test)]
mod trainer_tests;

pub use corpus::{splitting, train_counts, CorpusOutput};
pub use decode::decode;
pub use encoder::Encoder;
pub use extend::{extend, ExtendConfig, ExtendOutput};
pub use pipeline::WordPiece;
pub use trainer::{train, Merge, Objective, TrainResult, TrainerConfig};
