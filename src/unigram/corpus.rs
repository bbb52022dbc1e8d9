//! From corpus bytes to a Unigram model: the whole training run, with its timings.
//!
//! 1. count: every line is normalized as SentencePiece does (spaces to `▁`, a dummy prefix)
//!    and cut into `▁`-words, counted in parallel (`pretok::count_words`);
//! 2. train: seed pieces, EM and pruning (`trainer.rs`) on the sorted word counts.

use std::time::Instant;

use super::{train, SpNormalizer, TrainResult, TrainerConfig};
use crate::error::CoreError;
use crate::pretok::count_words;

pub struct CorpusOutput {
    pub trained: TrainResult,
    /// Distinct `▁`-words counted in the corpus.
    pub distinct_words: usize,
    pub count_seconds: f64,
    pub train_seconds: f64,
}

/// Trains on `inputs` (UTF-8 text; invalid bytes become U+FFFD). `progress(phase, done, total)`
/// is called for "count" (bytes), then the trainer's phases; returning false stops with
/// `CoreError::Interrupted`.
pub fn train_corpus(
    inputs: &[&[u8]],
    normalizer: &SpNormalizer,
    cfg: &TrainerConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<CorpusOutput, CoreError> {
    let t0 = Instant::now();
    let counts = count_words(inputs, &mut |done, total| progress("count", done, total), |line, emit| {
        normalizer.words(line, &mut String::new(), &mut *emit)
    })?;
    let count_seconds = t0.elapsed().as_secs_f64();
    let mut words: Vec<(String, u64)> = counts.into_iter().collect();
    words.sort_unstable();
    let t1 = Instant::now();
    let trained = train(&words, cfg, progress)?;
    Ok(CorpusOutput { trained, distinct_words: words.len(), count_seconds, train_seconds: t1.elapsed().as_secs_f64() })
}
