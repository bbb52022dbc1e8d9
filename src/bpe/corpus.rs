//! From corpus bytes to BPE merges: the whole training run, with its timings.
//!
//! 1. count: pre-tokenize every line with the pattern and count the distinct pieces, in
//!    parallel (`pretok::count_pieces`);
//! 2. base alphabet: the 256 bytes (byte-level), or the corpus' characters plus the optional
//!    end-of-word symbol (character-level); the vocabulary must hold it;
//! 3. merge: learn merges until `max_tokens` tokens (`train.rs`).

use std::time::Instant;

use super::train::{byte_words, char_words};
use super::{train, TrainOutput};
use crate::error::CoreError;
use crate::pretok::{count_pieces, Splitter};

pub struct CorpusConfig {
    /// The pre-tokenizer pattern (a regex, or the spelling of a built-in).
    pub pattern: String,
    /// Tokens to reach: base alphabet + merge results (special tokens are the caller's).
    pub max_tokens: usize,
    /// Pairs seen fewer times than this are never merged.
    pub min_frequency: u64,
    /// Characters, not bytes, as the base alphabet.
    pub char_level: bool,
    /// Character-level only: a symbol closing every word (e.g. `</w>`).
    pub end_of_word: Option<String>,
}

pub struct CorpusOutput {
    pub trained: TrainOutput,
    /// The first `alphabet_size` tokens are the base alphabet.
    pub alphabet_size: usize,
    /// Distinct pieces counted in the corpus.
    pub distinct_pieces: usize,
    pub count_seconds: f64,
    pub merge_seconds: f64,
}

/// Trains on `inputs`. `progress(phase, done, total)` is called for "count" (bytes) and
/// "merge" (merges); returning false stops with `CoreError::Interrupted`.
pub fn train_corpus(
    inputs: &[&[u8]],
    cfg: &CorpusConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<CorpusOutput, CoreError> {
    let splitter = Splitter::new(&cfg.pattern)?;
    let t0 = Instant::now();
    let counts = count_pieces(inputs, &splitter, &mut |done, total| progress("count", done, total))?;
    let count_seconds = t0.elapsed().as_secs_f64();
    let distinct_pieces = counts.len();
    let (alphabet, words) =
        if cfg.char_level { char_words(counts, cfg.end_of_word.as_deref())? } else { byte_words(counts) };
    let alphabet_size = alphabet.len();
    if alphabet_size > cfg.max_tokens {
        let base = if !cfg.char_level {
            "256 bytes".to_string()
        } else if cfg.end_of_word.is_some() {
            format!("{} characters of the corpus + the end-of-word symbol", alphabet_size - 1)
        } else {
            format!("{alphabet_size} characters of the corpus")
        };
        return Err(CoreError::VocabTooSmall { requested: cfg.max_tokens, needed: alphabet_size, base });
    }
    let t1 = Instant::now();
    let trained =
        train(alphabet, words, cfg.max_tokens, cfg.min_frequency, &mut |done, total| progress("merge", done, total))?;
    Ok(CorpusOutput {
        trained,
        alphabet_size,
        distinct_pieces,
        count_seconds,
        merge_seconds: t1.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::WHITESPACE;

    fn cfg(max_tokens: usize, char_level: bool) -> CorpusConfig {
        let pattern = if char_level { WHITESPACE } else { crate::pretok::GPT2 }.to_string();
        CorpusConfig { pattern, max_tokens, min_frequency: 0, char_level, end_of_word: None }
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
        for stop in ["count", "merge"] {
            let r = train_corpus(&[text], &cfg(260, false), &mut |phase, _, _| phase != stop);
            assert_eq!(r.err(), Some(CoreError::Interrupted));
        }
        assert!(matches!(
            train_corpus(&[text], &CorpusConfig { pattern: "(".into(), ..cfg(260, false) }, &mut |_, _, _| true),
            Err(CoreError::Pattern(_))
        ));
    }
}
