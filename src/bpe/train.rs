//! The BPE merge loop: from counted words to an ordered list of merges.
//!
//! Phases:
//! 1. index: every distinct word is a sequence of symbol ids; count every adjacent pair
//!    (weighted by word count) and remember which words contain it.
//! 2. merge: pop the best pair from a lazy max-heap, rewrite only the words that contain it,
//!    and apply the pair-count changes those rewrites cause. No full recount.
//! 3. finish: count how often each token is used in the final segmentation of the corpus.
//!
//! Tie rule (a total order over the pairs themselves, so the result depends on neither thread
//! count nor input order): the higher pair count wins; on equal counts the pair whose left
//! token's bytes are lexicographically smaller wins; then the smaller right token's bytes.
//! When the merged bytes already exist as a token (the same string reached by another split)
//! the merge is recorded with that token as its result and no new token is added.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::CoreError;

/// One learned merge: `left + right -> result`, chosen when the pair occurred `count` times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merge {
    pub left: u32,
    pub right: u32,
    pub result: u32,
    pub count: u64,
}

#[derive(Debug)]
pub struct TrainOutput {
    /// token id -> bytes (the alphabet first, then merge results in the order they appeared)
    pub tokens: Vec<Vec<u8>>,
    /// token id -> number of uses in the final segmentation of the training words
    pub token_counts: Vec<u64>,
    /// merges in rank order
    pub merges: Vec<Merge>,
}

type Pair = (u32, u32);

/// (base alphabet as bytes, distinct words as (symbol ids, count)): the trainer's input.
pub type Words = (Vec<Vec<u8>>, Vec<(Vec<u32>, u64)>);

struct Candidate {
    count: u64,
    pair: Pair,
    left: Arc<[u8]>,
    right: Arc<[u8]>,
}

impl Ord for Candidate {
    fn cmp(&self, o: &Self) -> Ordering {
        // Max-heap: a higher count is better; on ties the smaller bytes are "greater".
        self.count.cmp(&o.count).then_with(|| o.left.cmp(&self.left)).then_with(|| o.right.cmp(&self.right))
    }
}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for Candidate {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Candidate {}

/// Learns merges until there are `target_tokens` tokens, no pair is left, or the best pair
/// occurs fewer than `min_frequency` times.
///
/// `alphabet`: bytes of the base tokens (ids 0..alphabet.len()).
/// `words`: (symbol ids, count) for every distinct word.
/// `progress(done, total)` is called every few merges; `false` stops with `CoreError::Interrupted`.
pub fn train(
    alphabet: Vec<Vec<u8>>,
    mut words: Vec<(Vec<u32>, u64)>,
    target_tokens: usize,
    min_frequency: u64,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<TrainOutput, CoreError> {
    let mut tokens: Vec<Arc<[u8]>> = alphabet.into_iter().map(Arc::from).collect();
    let mut by_bytes: FxHashMap<Arc<[u8]>, u32> =
        tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
    let mut merges = Vec::new();

    // 1. index
    let mut pair_counts: FxHashMap<Pair, u64> = FxHashMap::default();
    let mut where_: FxHashMap<Pair, FxHashSet<u32>> = FxHashMap::default();
    for (wi, (syms, c)) in words.iter().enumerate() {
        for p in syms.windows(2) {
            let pair = (p[0], p[1]);
            *pair_counts.entry(pair).or_insert(0) += c;
            where_.entry(pair).or_default().insert(wi as u32);
        }
    }
    let candidate = |pair: Pair, count: u64, tokens: &[Arc<[u8]>]| Candidate {
        count,
        pair,
        left: tokens[pair.0 as usize].clone(),
        right: tokens[pair.1 as usize].clone(),
    };
    let mut heap: BinaryHeap<Candidate> = pair_counts.iter().map(|(&p, &c)| candidate(p, c, &tokens)).collect();

    // 2. merge
    let wanted = target_tokens.saturating_sub(tokens.len()) as u64;
    let mut deltas: Vec<(Pair, i64)> = Vec::new();
    let mut grown: FxHashMap<Pair, ()> = FxHashMap::default();
    while tokens.len() < target_tokens {
        let Some(top) = heap.pop() else { break };
        let current = pair_counts.get(&top.pair).copied().unwrap_or(0);
        if current != top.count {
            if current > 0 {
                heap.push(candidate(top.pair, current, &tokens));
            }
            continue;
        }
        if current == 0 || current < min_frequency {
            break;
        }
        let (a, b) = top.pair;
        let mut joined = tokens[a as usize].to_vec();
        joined.extend_from_slice(&tokens[b as usize]);
        let joined: Arc<[u8]> = Arc::from(joined);
        let z = match by_bytes.get(&joined) {
            Some(&id) => id,
            None => {
                let id = tokens.len() as u32;
                tokens.push(joined.clone());
                by_bytes.insert(joined, id);
                id
            }
        };
        merges.push(Merge { left: a, right: b, result: z, count: current });

        let mut affected: Vec<u32> = where_.remove(&top.pair).unwrap_or_default().into_iter().collect();
        affected.sort_unstable();
        grown.clear();
        for wi in affected {
            let (syms, c) = &mut words[wi as usize];
            if !merge_word(syms, a, b, z, &mut deltas) {
                continue;
            }
            for &(pair, d) in &deltas {
                let e = pair_counts.entry(pair).or_insert(0);
                *e = (*e as i64 + d * *c as i64) as u64;
                if d > 0 {
                    where_.entry(pair).or_default().insert(wi);
                    grown.insert(pair, ());
                }
            }
        }
        pair_counts.remove(&top.pair);
        let mut grown: Vec<Pair> = grown.keys().copied().collect();
        grown.sort_unstable();
        for pair in grown {
            if let Some(&c) = pair_counts.get(&pair) {
                if c > 0 {
                    heap.push(candidate(pair, c, &tokens));
                }
            }
        }
        let done = merges.len() as u64;
        if done % 64 == 0 && !progress(done, wanted) {
            return Err(CoreError::Interrupted);
        }
    }
    if !progress(merges.len() as u64, wanted) {
        return Err(CoreError::Interrupted);
    }

    // 3. finish
    let mut token_counts = vec![0u64; tokens.len()];
    for (syms, c) in &words {
        for &s in syms {
            token_counts[s as usize] += c;
        }
    }
    Ok(TrainOutput { tokens: tokens.iter().map(|t| t.to_vec()).collect(), token_counts, merges })
}

/// Byte-level words: the alphabet is the 256 bytes (id = byte value); words are sorted by
/// bytes so nothing downstream depends on hash-map order.
pub fn byte_words(counts: crate::pretok::count::PieceCounts) -> Words {
    let alphabet: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).collect();
    let mut words: Vec<(Vec<u32>, u64)> =
        counts.into_iter().map(|(w, c)| (w.iter().map(|&b| b as u32).collect(), c)).collect();
    words.sort_unstable();
    (alphabet, words)
}

/// Character-level words: the alphabet is every character of the corpus plus the optional
/// end-of-word symbol, sorted by their UTF-8 bytes; each word ends with that symbol.
pub fn char_words(counts: crate::pretok::count::PieceCounts, end_of_word: Option<&str>) -> Result<Words, CoreError> {
    let mut words: Vec<(String, u64)> = Vec::with_capacity(counts.len());
    for (w, c) in counts {
        let s = String::from_utf8(w).map_err(|e| {
            CoreError::input(format!("character-level BPE needs UTF-8 text, and the corpus is not ({e}); convert it"))
        })?;
        words.push((s, c));
    }
    words.sort_unstable();
    let mut alphabet: Vec<String> = words.iter().flat_map(|(w, _)| w.chars().map(String::from)).collect();
    if let Some(e) = end_of_word {
        alphabet.push(e.to_string());
    }
    alphabet.sort_unstable();
    alphabet.dedup();
    let ids: FxHashMap<&str, u32> = alphabet.iter().enumerate().map(|(i, s)| (s.as_str(), i as u32)).collect();
    let eow = end_of_word.map(|e| ids[e]);
    let mut out = Vec::with_capacity(words.len());
    let mut buf = [0u8; 4];
    for (w, c) in &words {
        let mut syms: Vec<u32> = w.chars().map(|ch| ids[&*ch.encode_utf8(&mut buf)]).collect();
        syms.extend(eow);
        out.push((syms, *c));
    }
    let alphabet = alphabet.into_iter().map(String::into_bytes).collect();
    Ok((alphabet, out))
}

/// Rewrites `syms`, replacing every non-overlapping `a b` (left to right) with `z`.
/// Fills `deltas` with the net change of each adjacent pair of this word (per occurrence of
/// the word) and returns whether anything changed.
fn merge_word(syms: &mut Vec<u32>, a: u32, b: u32, z: u32, deltas: &mut Vec<(Pair, i64)>) -> bool {
    deltas.clear();
    if !syms.windows(2).any(|p| p[0] == a && p[1] == b) {
        return false;
    }
    let mut out = Vec::with_capacity(syms.len());
    let mut i = 0;
    while i < syms.len() {
        if i + 1 < syms.len() && syms[i] == a && syms[i + 1] == b {
            out.push(z);
            i += 2;
        } else {
            out.push(syms[i]);
            i += 1;
        }
    }
    for p in syms.windows(2) {
        deltas.push(((p[0], p[1]), -1));
    }
    for p in out.windows(2) {
        deltas.push(((p[0], p[1]), 1));
    }
    // Net the changes so a pair that is merely carried over costs nothing downstream.
    deltas.sort_unstable_by_key(|d| d.0);
    let mut w = 0;
    for r in 0..deltas.len() {
        if w > 0 && deltas[w - 1].0 == deltas[r].0 {
            deltas[w - 1].1 += deltas[r].1;
        } else {
            deltas[w] = deltas[r];
            w += 1;
        }
    }
    deltas.truncate(w);
    deltas.retain(|d| d.1 != 0);
    *syms = out;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Character-level words with an end-of-word symbol, as in the classic examples.
    fn char_words(table: &[(&str, u64)], eow: &str) -> Words {
        let mut alphabet: Vec<Vec<u8>> = vec![eow.as_bytes().to_vec()];
        for (w, _) in table {
            for ch in w.chars() {
                let b = ch.to_string().into_bytes();
                if !alphabet.contains(&b) {
                    alphabet.push(b);
                }
            }
        }
        alphabet.sort();
        let id = |b: &[u8]| alphabet.iter().position(|a| a == b).unwrap() as u32;
        let words = table
            .iter()
            .map(|(w, c)| {
                let mut s: Vec<u32> = w.chars().map(|ch| id(ch.to_string().as_bytes())).collect();
                if !eow.is_empty() {
                    s.push(id(eow.as_bytes()));
                }
                (s, *c)
            })
            .collect();
        (alphabet, words)
    }

    fn merge_strings(out: &TrainOutput) -> Vec<String> {
        let t = |i: u32| String::from_utf8(out.tokens[i as usize].clone()).unwrap();
        out.merges.iter().map(|m| format!("{}+{}", t(m.left), t(m.right))).collect()
    }

    #[test]
    fn low_lower_newest_widest() {
        let (alphabet, words) = char_words(&[("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)], "</w>");
        let n = alphabet.len();
        let out = train(alphabet, words, n + 5, 0, &mut |_, _| true).unwrap();
        assert_eq!(merge_strings(&out), ["e+s", "es+t", "est+</w>", "l+o", "lo+w"]);
        assert_eq!(out.merges.iter().map(|m| m.count).collect::<Vec<_>>(), [9, 9, 9, 7, 7]);
    }

    #[test]
    fn the_cat_the_car_the_rat() {
        let (alphabet, words) = char_words(&[("the", 3), ("cat", 1), ("car", 1), ("rat", 1)], "");
        let n = alphabet.len();
        let out = train(alphabet, words, n + 3, 0, &mut |_, _| true).unwrap();
        // h+e beats t+h (both 3) because "h" < "t"; then a+t (2) beats c+a (2) as "a" < "c".
        assert_eq!(merge_strings(&out), ["h+e", "t+he", "a+t"]);
    }

    #[test]
    fn aaabdaaabac() {
        // The Wikipedia example as one word of bytes: Z=aa, then Y=ab (the tie between a+b
        // and aa+a, both 2, goes to the smaller left bytes "a"), then X=ZY.
        let alphabet: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).collect();
        let word: Vec<u32> = b"aaabdaaabac".iter().map(|&b| b as u32).collect();
        let out = train(alphabet, vec![(word, 1)], 259, 0, &mut |_, _| true).unwrap();
        assert_eq!(merge_strings(&out), ["a+a", "a+b", "aa+ab"]);
    }

    #[test]
    fn overlapping_pairs_are_counted_once_per_merge() {
        let alphabet: Vec<Vec<u8>> = vec![b"a".to_vec()];
        let out = train(alphabet, vec![(vec![0; 5], 1)], 3, 0, &mut |_, _| true).unwrap();
        assert_eq!(out.merges[0].count, 4);
        // After a+a: [aa, aa, a] -> pairs (aa,aa)=1, (aa,a)=1; the tie goes to "aa"+"a" < "aa"+"aa".
        assert_eq!(merge_strings(&out), ["a+a", "aa+a"]);
        assert_eq!(out.token_counts, vec![0, 1, 1]);
    }

    #[test]
    fn existing_result_is_reused_not_duplicated() {
        // The alphabet already spells "ab": merging a+b records a merge onto that token.
        let alphabet: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"ab".to_vec()];
        let words = vec![(vec![0, 1], 5), (vec![2], 1)];
        let out = train(alphabet, words, 10, 0, &mut |_, _| true).unwrap();
        assert_eq!(out.merges, vec![Merge { left: 0, right: 1, result: 2, count: 5 }]);
        assert_eq!(out.tokens.len(), 3);
        assert_eq!(out.token_counts, vec![0, 0, 6]);
    }

    #[test]
    fn min_frequency_stops_training() {
        let (alphabet, words) = char_words(&[("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)], "</w>");
        let out = train(alphabet, words, 100, 8, &mut |_, _| true).unwrap();
        assert_eq!(out.merges.len(), 3);
    }
}
