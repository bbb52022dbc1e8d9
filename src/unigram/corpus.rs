//! From counted `▁`-words to a Unigram model, and how Unigram counts a corpus.
//!
//! 1. count (`splitting`): every line is normalized as SentencePiece does (spaces to `▁`, a
//!    dummy prefix) and cut into `▁`-words, counted by the core's `count::Counter`;
//! 2. train: seed pieces, EM and pruning (`trainer.rs`) on the sorted word counts.

use std::time::Instant;

use super::{train, TrainResult, TrainerConfig};
use crate::count::{Counts, Splitting};
use crate::error::CoreError;
use crate::normalize::SpNormalizer;

pub struct CorpusOutput {
    pub trained: TrainResult,
    /// Distinct `▁`-words trained on.
    pub distinct_words: usize,
    pub train_seconds: f64,
}

/// How Unigram cuts a line into the words it counts (`by_whitespace` off: whole lines).
pub fn splitting(normalizer: SpNormalizer, by_whitespace: bool) -> Splitting {
    Splitting::Words(Box::new(move |line, emit| normalizer.words(line, by_whitespace, &mut String::new(), &mut *emit)))
}

/// Trains on counted words. `progress(phase, done, total)` is called with the trainer's phases;
/// returning false stops with `CoreError::Interrupted`.
pub fn train_counts(
    counts: &Counts,
    cfg: &TrainerConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<CorpusOutput, CoreError> {
    let words: Vec<(String, u64)> = counts.iter().map(|(w, c)| (String::from_utf8_lossy(w).into_owned(), c)).collect();
    let t1 = Instant::now();
    let trained = train(&words, cfg, progress)?;
    Ok(CorpusOutput { trained, distinct_words: words.len(), train_seconds: t1.elapsed().as_secs_f64() })
}
