//! From corpus bytes to a WordPiece vocabulary: the whole training run, with its timings.
//!
//! 1. count: every line is normalized (BERT) and pre-tokenized, and the words are counted in
//!    parallel (`pretok::count_words`);
//! 2. merge: the trainer (`trainer.rs`) learns the vocabulary from the sorted word counts.
//!
//! The trainer's own "count" phase (a few milliseconds over the distinct words) is not
//! reported: callers see one "count" phase, the corpus one, then "merge".

use std::time::Instant;

use super::{pre_tokenize, train, BertNormalizer, TrainResult, TrainerConfig};
use crate::error::CoreError;
use crate::pretok::count_words;

pub struct CorpusOutput {
    pub trained: TrainResult,
    /// Distinct words counted in the corpus.
    pub distinct_words: usize,
    pub count_seconds: f64,
    pub merge_seconds: f64,
}

/// Trains on `inputs` (UTF-8 text; invalid bytes become U+FFFD). `progress(phase, done, total)`
/// is called for "count" (bytes) and "merge" (tokens); returning false stops with
/// `CoreError::Interrupted`.
pub fn train_corpus(
    inputs: &[&[u8]],
    normalizer: &BertNormalizer,
    cfg: &TrainerConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<CorpusOutput, CoreError> {
    let t0 = Instant::now();
    let counts = count_words(inputs, &mut |done, total| progress("count", done, total), |line, emit| {
        pre_tokenize(&normalizer.normalize(line), &mut *emit);
    })?;
    let count_seconds = t0.elapsed().as_secs_f64();
    let mut words: Vec<(String, u64)> = counts.into_iter().collect();
    words.sort_unstable();
    let t1 = Instant::now();
    let trained = train(&words, cfg, &mut |phase, done, total| phase != "merge" || progress(phase, done, total))?;
    Ok(CorpusOutput { trained, distinct_words: words.len(), count_seconds, merge_seconds: t1.elapsed().as_secs_f64() })
}
