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

/// How Unigram cuts a line into the words it counts (`by_whitespace` off: whole lines). With
/// `line_ends`, the last word of each line is counted with a `\n` after it (LINE_END), so that
/// the trainer knows which word ends are line ends, as SentencePiece's seed search does (a
/// newline is never part of a word: lines are cut at it).
pub fn splitting(normalizer: SpNormalizer, by_whitespace: bool, line_ends: bool) -> Splitting {
    if !line_ends {
        return Splitting::Words(Box::new(move |line, emit| {
            normalizer.words(line, by_whitespace, &mut String::new(), &mut *emit)
        }));
    }
    Splitting::Words(Box::new(move |line, emit| {
        let mut last = String::new();
        normalizer.words(line, by_whitespace, &mut String::new(), |w| {
            if !last.is_empty() {
                emit(&last);
            }
            last.clear();
            last.push_str(w);
        });
        if !last.is_empty() {
            last.push(LINE_END);
            emit(&last);
        }
    }))
}

/// Marks a counted word as the last of its line (see `splitting`).
pub const LINE_END: char = '\n';

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count::Counter;

    fn count(text: &str, line_ends: bool) -> Vec<(String, u64)> {
        let split = splitting(SpNormalizer::default(), true, line_ends);
        let mut c = Counter::new(split, 0, usize::MAX, std::env::temp_dir());
        c.feed(text.as_bytes()).unwrap();
        let mut out: Vec<(String, u64)> =
            c.finish(None).unwrap().iter().map(|(w, n)| (String::from_utf8_lossy(w).into_owned(), n)).collect();
        out.sort();
        out
    }

    #[test]
    fn line_ends_mark_the_last_word_of_each_line() {
        let text = "the cat\nthe cat sat\n";
        let plain: Vec<(String, u64)> = vec![("▁cat".into(), 2), ("▁sat".into(), 1), ("▁the".into(), 2)];
        assert_eq!(count(text, false), plain);
        let marked: Vec<(String, u64)> =
            vec![("▁cat".into(), 1), ("▁cat\n".into(), 1), ("▁sat\n".into(), 1), ("▁the".into(), 2)];
        assert_eq!(count(text, true), marked);
    }
}
