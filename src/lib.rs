//! tokreg's Rust core: pre-tokenizers, trainers and encoders for subword tokenizers.
//!
//! The core takes plain data (bytes, word counts, rank maps, piece lists) and returns plain
//! data, and typed errors (`error::CoreError`). It knows nothing about SQL, the registry or
//! Python: all PyO3 glue lives in `py.rs`, compiled only with the `python` feature, so
//! `cargo test` builds and tests the core alone.
//!
//! Every algorithm is reached through the same seams: an encoder behind the `encode::Encode`
//! trait (with the one special-token rule in front of it, `encode::Tokenizer`), and, for the
//! trained ones, a `corpus::train_counts` function in its module that turns the words counted by
//! the shared counter (`count::Counts`) into its plain result.

// `unsafe` is denied everywhere except where an `#[allow(unsafe_code)]` says why it holds, next
// to the code: the binding (py.rs, which pauses Python's garbage collector); encode/table.rs,
// which reads a frozen encoder's tables in place, and the layouts it may view (`Plain`: rank
// table slots, seam spans; `Backing` in frozen.rs's tests); the piece cache's zero-filled
// tables (`Zeroable`); the pre-tokenizer's SSE2 loads (pretok/fast/window.rs); memory.rs,
// which hands freed memory back to the system and holds the cache prefetch the merge loop, its
// pair table and the run counter use; documents/json.rs, which takes a JSON string whose bytes
// are all ASCII as text without checking its UTF-8 again; and bus_error.rs, which installs a
// SIGBUS handler.
#![deny(unsafe_code)]

pub mod bpe;
pub mod bus_error;
pub mod content;
pub mod count;
pub mod documents;
pub mod encode;
pub mod error;
pub mod hfpipe;
pub mod memory;
pub mod normalize;
pub mod pool;
pub mod pretok;
pub mod spbpe;
pub mod tokreg_file;
pub mod unigram;
pub mod wordpiece;

#[cfg(test)]
mod test_data;

#[cfg(feature = "python")]
#[allow(unsafe_code)]
mod py;
