//! From counted pieces to BPE merges: the training run after counting, with its timing.
//!
//! 1. base alphabet: the 256 bytes (byte-level), or the corpus' characters plus the optional
//!    end-of-word symbol (character-level); the vocabulary must hold it;
//! 2. merge: learn merges until `max_tokens` tokens (`train.rs`), snapshotting the smaller
//!    sizes asked for on the way.

use std::time::Instant;

use super::train::{byte_words, char_words, TrainConfig};
use super::{train, TrainOutput};
use crate::count::Counts;
use crate::error::CoreError;

pub struct CorpusConfig {
    /// Tokens to reach: base alphabet + merge results (special tokens are the caller's).
    pub max_tokens: usize,
    /// Pairs seen fewer times than this are never merged.
    pub min_frequency: u64,
    /// Characters, not bytes, as the base alphabet.
    pub char_level: bool,
    /// Character-level only: a symbol closing every word (e.g. `</w>`).
    pub end_of_word: Option<String>,
    /// Never make a token longer than this many bytes (0: no limit).
    pub max_token_bytes: usize,
    /// Smaller token counts to snapshot on the way (several sizes from one run).
    pub snapshots: Vec<usize>,
}

impl CorpusConfig {
    /// Byte-level BPE to `max_tokens`, with no frequency floor, length limit or snapshots.
    pub fn byte_level(max_tokens: usize) -> CorpusConfig {
        CorpusConfig {
            max_tokens,
            min_frequency: 0,
            char_level: false,
            end_of_word: None,
            max_token_bytes: 0,
            snapshots: vec![],
        }
    }
}

pub struct CorpusOutput {
    pub trained: TrainOutput,
    /// The first `alphabet_size` tokens are the base alphabet.
    pub alphabet_size: usize,
    /// Distinct pieces trained on.
    pub distinct_pieces: usize,
    pub merge_seconds: f64,
}

/// Trains on counted pieces. `progress(phase, done, total)` is called for "merge" (merges);
/// returning false stops with `CoreError::Interrupted`.
pub fn train_counts(
    counts: &Counts,
    cfg: &CorpusConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<CorpusOutput, CoreError> {
    let t1 = Instant::now();
    crate::memory::map_large_blocks();
    let (alphabet, words) =
        if cfg.char_level { char_words(counts, cfg.end_of_word.as_deref())? } else { byte_words(counts) };
    let alphabet_size = alphabet.len();
    let smallest = cfg.snapshots.iter().copied().chain([cfg.max_tokens]).min().unwrap_or(cfg.max_tokens);
    if alphabet_size > smallest {
        let base = if !cfg.char_level {
            "256 bytes".to_string()
        } else if cfg.end_of_word.is_some() {
            format!("{} characters of the corpus + the end-of-word symbol", alphabet_size - 1)
        } else {
            format!("{alphabet_size} characters of the corpus")
        };
        return Err(CoreError::VocabTooSmall { requested: smallest, needed: alphabet_size, base });
    }
    let tc = TrainConfig {
        target_tokens: cfg.max_tokens,
        min_frequency: cfg.min_frequency,
        max_token_bytes: cfg.max_token_bytes,
        snapshots: cfg.snapshots.clone(),
    };
    let trained = train(alphabet, words, &tc, &mut |done, total| progress("merge", done, total))?;
    Ok(CorpusOutput {
        trained,
        alphabet_size,
        distinct_pieces: counts.len(),
        merge_seconds: t1.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count::{count_inputs, Splitting};
    use crate::pretok::{Splitter, GPT2, WHITESPACE};

    fn cfg(max_tokens: usize, char_level: bool) -> CorpusConfig {
        CorpusConfig { char_level, ..CorpusConfig::byte_level(max_tokens) }
    }

    fn train_corpus(
        inputs: &[&[u8]],
        cfg: &CorpusConfig,
        progress: &mut dyn FnMut(&str, u64, u64) -> bool,
    ) -> Result<CorpusOutput, CoreError> {
        let pattern = if cfg.char_level { WHITESPACE } else { GPT2 };
        let counts = count_inputs(inputs, Splitting::Pieces(Splitter::new(pattern)?))?;
        train_counts(&counts, cfg, progress)
    }

    #[test]
    fn the_cat_the_car_the_rat_from_bytes() {
        let text = b"the cat the car the rat\n".as_slice();
        let out = train_corpus(&[text], &cfg(256 + 3, false), &mut |_, _, _| true).unwrap();
        // pieces: "the", " cat", " the" (twice), " car", " rat", "\n"
        assert_eq!((out.alphabet_size, out.distinct_pieces), (256, 6));
        // h+e and t+h both occur 3 times; "h" < "t" goes first. Then t+he (3), then among the
        // pairs seen twice the smallest left bytes (" "), then the smallest right bytes ("c").
        let t = &out.trained.tokens;
        assert_eq!([&t[256][..], &t[257][..], &t[258][..]], [b"he".as_slice(), b"the", b" c"]);
    }

    #[test]
    fn a_vocabulary_below_the_alphabet_is_refused_with_its_numbers() {
        let text = b"low lower newest widest\n".as_slice();
        let err = train_corpus(&[text], &cfg(5, true), &mut |_, _, _| true).err().unwrap();
        assert_eq!(
            err,
            CoreError::VocabTooSmall { requested: 5, needed: 10, base: "10 characters of the corpus".into() }
        );
        let err = train_corpus(&[text], &cfg(10, false), &mut |_, _, _| true).err().unwrap();
        assert!(matches!(err, CoreError::VocabTooSmall { needed: 256, .. }));
    }

    #[test]
    fn progress_can_stop_each_phase() {
        let text = b"aaabdaaabac\n".as_slice();
        let r = train_corpus(&[text], &cfg(260, false), &mut |phase, _, _| phase != "merge");
        assert_eq!(r.err(), Some(CoreError::Interrupted));
        assert!(matches!(Splitter::new("("), Err(CoreError::Pattern(_))));
    }
}
