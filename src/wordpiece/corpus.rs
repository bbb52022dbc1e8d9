//! From counted words to a WordPiece vocabulary, and how WordPiece counts a corpus.
//!
//! 1. count (`splitting`): every line is normalized (BERT) and pre-tokenized, and the words
//!    are counted by the core's `count::Counter`;
//! 2. merge: the trainer (`trainer.rs`) learns the vocabulary from the sorted word counts.
//!
//! The trainer's own "count" phase (a few milliseconds over the distinct words) is not
//! reported: callers see "merge" only.

use std::time::Instant;

use super::{train, TrainResult, TrainerConfig};
use crate::count::{Counts, Splitting};
use crate::error::CoreError;
use crate::normalize::{pre_tokenize, BertNormalizer};

pub struct CorpusOutput {
    pub trained: TrainResult,
    /// Distinct words trained on.
    pub distinct_words: usize,
    pub merge_seconds: f64,
}

/// How WordPiece cuts a line into the words it counts: BERT normalization, then BERT's
/// whitespace and punctuation split.
pub fn splitting(normalizer: BertNormalizer) -> Splitting {
    Splitting::Words(Box::new(move |line, emit| pre_tokenize(&normalizer.normalize(line), &mut *emit)))
}

/// Trains on counted words (UTF-8: the counter made them so). `progress(phase, done, total)` is
/// called for "merge" (tokens); returning false stops with `CoreError::Interrupted`.
pub fn train_counts(
    counts: &Counts,
    cfg: &TrainerConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<CorpusOutput, CoreError> {
    let words: Vec<(String, u64)> = counts.iter().map(|(w, c)| (String::from_utf8_lossy(w).into_owned(), c)).collect();
    let t1 = Instant::now();
    let trained = train(&words, cfg, &mut |phase, done, total| phase != "merge" || progress(phase, done, total))?;
    Ok(CorpusOutput { trained, distinct_words: words.len(), merge_seconds: t1.elapsed().as_secs_f64() })
}
