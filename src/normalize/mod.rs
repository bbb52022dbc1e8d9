//! The normalizers two algorithms share, kept out of any one algorithm's folder.
//!
//! Owns: SentencePiece's text handling (`sentencepiece.rs`: ▁ for spaces, the dummy prefix,
//! whitespace collapsing, the denormalizer) with its precompiled rules (`charsmap.rs`), used by
//! the Unigram and SentencePiece BPE encoders and by the SentencePiece-style corpus counting;
//! and BERT's normalizer and pre-tokenizer (`bert.rs`, character classes in the generated
//! `bert_tables.rs`), used by WordPiece's encoder, trainer and counting.

pub(crate) mod bert;
mod bert_tables;
mod charsmap;
mod sentencepiece;

pub(crate) use bert::is_pretok_punct as is_hf_punctuation;
pub use bert::{pre_tokenize, BertNormalizer, Form};
pub use charsmap::CharsMap;
pub use sentencepiece::{SpNormalizer, SPACE_MARK};
