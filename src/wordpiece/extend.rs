//! Continued WordPiece training: new tokens learned on a new corpus on top of a base
//! vocabulary, whose ids stay exactly as they are.
//!
//! 1. symbols: the new corpus' characters the base has no token for (a word's first character
//!    as is, the others with the continuing prefix) become new tokens first, sorted by bytes
//!    (as a fresh run sorts its alphabet), unless a kept text holds them; the most frequent
//!    ones when there are more than `max_new`;
//! 2. words: each counted word segmented greedily, longest match first, over the base's
//!    ordinary tokens and those symbols: exactly as the encoder segments it (a word it cannot
//!    cover, or longer than `max_chars`, is skipped: the encoder makes it the unknown token);
//! 3. merge: the WordPiece merge loop (`trainer::train_from`, ranked by `objective` with its tie
//!    rule) until `max_new` tokens are added. With `keep` (a text's words), no token is made whose text
//!    (without the prefix) occurs inside one of those words, so that text's encoding (greedy
//!    longest match) cannot change.

use rustc_hash::{FxHashMap, FxHashSet};

use super::trainer::{train_from, Objective, TrainResult, TrainerConfig};
use crate::count::Counts;
use crate::error::CoreError;

pub struct ExtendConfig {
    /// What the new merges are ranked by (the caller passes the base's own objective).
    pub objective: Objective,
    pub max_new: usize,
    pub continuing_prefix: String,
    pub max_chars: usize,
    pub min_frequency: u64,
    pub keep: Vec<String>,
}

pub struct ExtendOutput {
    /// Tokens in id order, base and new; new ones from `first_new`.
    pub trained: TrainResult,
    pub first_new: usize,
    /// How many of the new tokens are characters (step 1).
    pub new_symbols: usize,
}

/// `base`: the base's tokens in id order, with an empty string at ids that are not ordinary
/// tokens (specials, the unknown token).
pub fn extend(
    base: Vec<String>,
    counts: &Counts,
    cfg: &ExtendConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<ExtendOutput, CoreError> {
    let prefix = cfg.continuing_prefix.as_str();
    let first_new = base.len();
    let kept_chars: FxHashSet<char> = cfg.keep.iter().flat_map(|k| k.chars()).collect();
    let mut vocab: FxHashMap<String, u32> = FxHashMap::default();
    for (i, s) in base.iter().enumerate() {
        if !s.is_empty() {
            vocab.entry(s.clone()).or_insert(i as u32);
        }
    }
    let words: Vec<(Vec<char>, u64)> = counts
        .iter()
        .filter_map(|(w, c)| std::str::from_utf8(w).ok().map(|w| (w.chars().collect::<Vec<char>>(), c)))
        .filter(|(w, _)| !w.is_empty() && w.len() <= cfg.max_chars)
        .collect();
    // 1. symbols
    let sym = |i: usize, ch: char| if i == 0 { ch.to_string() } else { format!("{prefix}{ch}") };
    let mut freq: FxHashMap<String, u64> = FxHashMap::default();
    for (w, c) in &words {
        for (i, &ch) in w.iter().enumerate() {
            let s = sym(i, ch);
            if !kept_chars.contains(&ch) && !vocab.contains_key(&s) {
                *freq.entry(s).or_default() += c;
            }
        }
    }
    // The most frequent when there are more than `max_new` (ties by bytes), then by bytes.
    let mut symbols: Vec<(String, u64)> = freq.into_iter().collect();
    symbols.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.as_bytes().cmp(b.0.as_bytes())));
    symbols.truncate(cfg.max_new);
    let mut symbols: Vec<String> = symbols.into_iter().map(|(s, _)| s).collect();
    symbols.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let new_symbols = symbols.len();
    let mut tokens = base;
    for s in symbols {
        vocab.insert(s.clone(), tokens.len() as u32);
        tokens.push(s);
    }
    // 2. words
    let mut segmented: Vec<(Vec<u32>, u64)> = Vec::with_capacity(words.len());
    let mut buf = String::new();
    'words: for (w, c) in &words {
        let mut ids = Vec::new();
        let mut start = 0;
        while start < w.len() {
            let mut end = w.len();
            loop {
                if end == start {
                    continue 'words; // not coverable: the unknown token
                }
                buf.clear();
                if start > 0 {
                    buf.push_str(prefix);
                }
                buf.extend(&w[start..end]);
                if let Some(&id) = vocab.get(buf.as_str()) {
                    ids.push(id);
                    start = end;
                    break;
                }
                end -= 1;
            }
        }
        segmented.push((ids, *c));
    }
    // 3. merge
    let kept: FxHashSet<&str> = {
        let mut set = FxHashSet::default();
        for k in &cfg.keep {
            let starts: Vec<usize> = k.char_indices().map(|(i, _)| i).chain([k.len()]).collect();
            for i in 0..starts.len() {
                for j in i + 1..starts.len() {
                    set.insert(&k[starts[i]..starts[j]]);
                }
            }
        }
        set
    };
    let refused = |t: &str| kept.contains(t.strip_prefix(prefix).filter(|b| !b.is_empty()).unwrap_or(t));
    let tc = TrainerConfig {
        objective: cfg.objective,
        vocab_size: first_new + cfg.max_new,
        min_frequency: cfg.min_frequency,
        continuing_prefix: cfg.continuing_prefix.clone(),
        special_tokens: vec![],
        limit_alphabet: None,
        max_token_len: None,
    };
    let trained = train_from(tokens, segmented, &tc, &refused, progress)?;
    Ok(ExtendOutput { trained, first_new, new_symbols })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count::Counts;

    #[test]
    fn base_ids_stay_and_new_tokens_follow() {
        let base: Vec<String> = ["", "a", "b", "##a", "##b"].iter().map(|s| s.to_string()).collect();
        let pairs: Vec<(&[u8], u64)> = vec![(b"ab", 5), (b"abc", 2)];
        let counts = Counts::from_sorted(pairs.into_iter(), Default::default());
        for objective in [Objective::Ratio, Objective::Frequency, Objective::Likelihood] {
            let cfg = ExtendConfig {
                objective,
                max_new: 3,
                continuing_prefix: "##".into(),
                max_chars: 100,
                min_frequency: 0,
                keep: vec![],
            };
            let out = extend(base.clone(), &counts, &cfg, &mut |_, _, _| true).unwrap();
            let toks: Vec<&str> = out.trained.tokens.iter().map(|t| t.0.as_str()).collect();
            assert_eq!(&toks[..5], &["", "a", "b", "##a", "##b"]);
            assert_eq!(out.first_new, 5);
            assert_eq!(toks[5], "##c"); // the new symbol first
            assert!(toks.contains(&"ab"));
        }
    }

    #[test]
    fn the_objective_ranks_the_new_merges() {
        // "ab" is frequent and its parts are common; "xy" is rare and its parts occur only in it:
        // the frequency objective merges "ab" first, the ratio objective "xy".
        let base: Vec<String> =
            ["", "a", "b", "x", "y", "##a", "##b", "##x", "##y"].iter().map(|s| s.to_string()).collect();
        let pairs: Vec<(&[u8], u64)> = vec![(b"aa", 40), (b"ab", 50), (b"bb", 40), (b"xy", 3)];
        let counts = Counts::from_sorted(pairs.into_iter(), Default::default());
        let first = |objective| {
            let cfg = ExtendConfig {
                objective,
                max_new: 1,
                continuing_prefix: "##".into(),
                max_chars: 100,
                min_frequency: 0,
                keep: vec![],
            };
            let out = extend(base.clone(), &counts, &cfg, &mut |_, _, _| true).unwrap();
            out.trained.tokens[9].0.clone()
        };
        assert_eq!(first(Objective::Frequency), "ab");
        assert_eq!(first(Objective::Ratio), "xy");
    }
}
