//! Unit tests of the WordPiece trainer: hand-computed worked example, id layout, options,
//! determinism (input order, rayon thread count) and agreement with a naive full-recount trainer.

use super::trainer::{train, TrainResult, TrainerConfig};
use std::collections::{BTreeMap, BTreeSet};

fn no_progress() -> impl FnMut(&str, u64, u64) -> bool {
    |_, _, _| true
}

fn w(v: &[(&str, u64)]) -> Vec<(String, u64)> {
    v.iter().map(|&(s, c)| (s.to_string(), c)).collect()
}

fn cfg(vocab_size: usize) -> TrainerConfig {
    TrainerConfig { vocab_size, special_tokens: vec!["[UNK]".into()], ..Default::default() }
}

fn tok(r: &TrainResult, id: u32) -> &str {
    &r.tokens[id as usize].0
}

/// The HF course corpus. Hand computation (counts in the current segmentation):
///  1. ##g+##s: 5/(20*5) = 1/20, the unique best           -> "##gs"
///  2. every remaining pair scores 1/36 (h##u, ##u##g, p##u, ##u##n, b##u, ##u##gs);
///     tie -> higher pair count: p+##u (17)                -> "pu"
///  3. ##u is now 19: h+##u 15/(15*19), b+##u 4/(4*19), ##u+##gs 5/(19*5) tie at 1/19;
///     pair count 15 wins                                  -> "hu"
///  4. ##u is now 4, so b+##u = 4/(4*4) = 1/4 - a pair in "bun", a word merge 3 never touched:
///     this is the invalidation case                       -> "bu"
///  5. hu+##gs 5/(15*5) = 1/15 beats bu+##n 4/(4*16)     -> "hugs"
#[test]
fn worked_example_hug_pug_pun_bun_hugs() {
    let words = w(&[("hug", 10), ("pug", 5), ("pun", 12), ("bun", 4), ("hugs", 5)]);
    let r = train(&words, &cfg(13), &mut no_progress()).unwrap();
    let names: Vec<&str> = r.tokens.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(names, ["[UNK]", "##g", "##n", "##s", "##u", "b", "h", "p", "##gs", "pu", "hu", "bu", "hugs"]);
    let counts: Vec<u64> = r.tokens.iter().map(|t| t.1).collect();
    assert_eq!(counts, [0, 20, 16, 5, 36, 4, 15, 17, 5, 17, 15, 4, 5]);
    let got: Vec<(&str, &str, &str, u64, u64, u64)> = r
        .merges
        .iter()
        .map(|m| (tok(&r, m.left), tok(&r, m.right), tok(&r, m.result), m.pair_count, m.left_count, m.right_count))
        .collect();
    assert_eq!(
        got,
        [
            ("##g", "##s", "##gs", 5, 20, 5),
            ("p", "##u", "pu", 17, 17, 36),
            ("h", "##u", "hu", 15, 15, 19),
            ("b", "##u", "bu", 4, 4, 4),
            ("hu", "##gs", "hugs", 5, 15, 5),
        ]
    );
    let scores: Vec<f64> = r.merges.iter().map(|m| m.score).collect();
    assert_eq!(scores, [1.0 / 20.0, 1.0 / 36.0, 1.0 / 19.0, 0.25, 1.0 / 15.0]);
}

#[test]
fn id_layout_specials_then_sorted_alphabet() {
    let mut c = cfg(0);
    c.special_tokens = vec!["[UNK]".into(), "[CLS]".into(), "[UNK]".into(), "a".into()];
    let r = train(&w(&[("ba", 3), ("ab", 1), ("c", 2)]), &c, &mut no_progress()).unwrap();
    let names: Vec<&str> = r.tokens.iter().map(|t| t.0.as_str()).collect();
    // duplicate special dropped; the special "a" doubles as the alphabet symbol "a"
    assert_eq!(names, ["[UNK]", "[CLS]", "a", "##a", "##b", "b", "c"]);
    assert_eq!(r.tokens[2].1, 1);
    assert!(r.merges.is_empty()); // vocab_size below the alphabet: alphabet kept whole, no merges
}

#[test]
fn options_min_frequency_max_len_limit_alphabet() {
    let words = w(&[("abab", 5), ("xy", 1)]);
    // min_frequency 2: the count-1 pair x+##y (score 1) is never merged
    let mut c = cfg(100);
    c.min_frequency = 2;
    let r = train(&words, &c, &mut no_progress()).unwrap();
    assert!(r.tokens.iter().all(|t| t.0 != "xy"));
    assert!(r.tokens.iter().any(|t| t.0 == "abab"));
    // max_token_len 2: nothing longer than two chars
    let mut c = cfg(100);
    c.max_token_len = Some(2);
    let r = train(&words, &c, &mut no_progress()).unwrap();
    assert!(r.tokens.iter().skip(1).all(|t| t.0.trim_start_matches("##").chars().count() <= 2));
    assert!(r.tokens.iter().any(|t| t.0 == "xy"));
    // limit_alphabet 2 keeps a, b (most frequent); "xy" disappears, no merge crosses a dropped char
    let mut c = cfg(100);
    c.limit_alphabet = Some(2);
    let r = train(&w(&[("abab", 5), ("xy", 1), ("abzab", 1)]), &c, &mut no_progress()).unwrap();
    let names: BTreeSet<&str> = r.tokens.iter().map(|t| t.0.as_str()).collect();
    assert!(!names.contains("x") && !names.contains("##z") && !names.contains("abzab"));
    assert!(names.contains("abab"));
}

#[test]
fn progress_can_interrupt() {
    let words = w(&[("hug", 10), ("pug", 5), ("pun", 12)]);
    let r = train(&words, &cfg(100), &mut |phase: &str, _, _| phase != "merge");
    assert_eq!(r, Err(crate::error::CoreError::Interrupted));
    let mut phases = Vec::new();
    train(&words, &cfg(100), &mut |p: &str, d, t| {
        phases.push((p.to_string(), d, t));
        true
    })
    .unwrap();
    assert_eq!(phases.first().unwrap().0, "count");
    assert_eq!(phases.last().unwrap().0, "merge");
}

/// Small deterministic pseudo-random corpus (xorshift), skewed so counts differ a lot.
fn synthetic(n: usize, seed: u64) -> Vec<(String, u64)> {
    let mut s = seed;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let letters: Vec<char> = "eeetaaoinshrdluébc".chars().collect();
    let mut m: BTreeMap<String, u64> = BTreeMap::new();
    for _ in 0..n {
        let len = 1 + (next() % 7) as usize;
        let word: String = (0..len).map(|_| letters[(next() % letters.len() as u64) as usize]).collect();
        *m.entry(word).or_default() += 1 + next() % 40;
    }
    m.into_iter().collect()
}

#[test]
fn deterministic_over_input_order_and_threads() {
    let words = synthetic(3000, 0x9E3779B97F4A7C15);
    let c =
        TrainerConfig { vocab_size: 400, special_tokens: vec!["[UNK]".into(), "[PAD]".into()], ..Default::default() };
    let run = |threads: usize, ws: &[(String, u64)]| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| train(ws, &c, &mut no_progress()).unwrap())
    };
    let base = run(1, &words);
    assert!(base.merges.len() > 100);
    assert_eq!(base, run(2, &words));
    let mut rev = words.clone();
    rev.reverse();
    assert_eq!(base, run(2, &rev));
    // A fixed shuffle (by a hash of the word) as well.
    let mut shuf = words.clone();
    shuf.sort_by_key(|(s, _)| s.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3)));
    assert_eq!(base, run(1, &shuf));
    assert_eq!(base, run(2, &shuf));
}

/// Naive trainer: full recount of every pair and symbol before each merge, same selection order.
/// Returns merges as (left, right, result, pair_count, left_count, right_count).
fn naive(words: &[(String, u64)], vocab_size: usize, specials: usize) -> Vec<(String, String, String, u64, u64, u64)> {
    let mut ws: Vec<(Vec<String>, u64)> = words
        .iter()
        .map(|(w, c)| {
            let syms =
                w.chars().enumerate().map(|(i, ch)| if i == 0 { ch.to_string() } else { format!("##{ch}") }).collect();
            (syms, *c)
        })
        .collect();
    let mut vocab: BTreeSet<String> = ws.iter().flat_map(|(s, _)| s.iter().cloned()).collect();
    let mut out = Vec::new();
    while vocab.len() + specials < vocab_size {
        let mut sym: BTreeMap<&str, u64> = BTreeMap::new();
        let mut pairs: BTreeMap<(&str, &str), u64> = BTreeMap::new();
        for (s, c) in &ws {
            for x in s {
                *sym.entry(x).or_default() += c;
            }
            for p in s.windows(2) {
                *pairs.entry((&p[0], &p[1])).or_default() += c;
            }
        }
        // best: max score (exact, cross-multiplied), then count, then min left, then min right
        let mut best: Option<((&str, &str), u64)> = None;
        for (&(l, r), &pc) in &pairs {
            let better = match best {
                None => true,
                Some(((bl, br), bpc)) => {
                    let lhs = pc as u128 * sym[bl] as u128 * sym[br] as u128;
                    let rhs = bpc as u128 * sym[l] as u128 * sym[r] as u128;
                    lhs > rhs || (lhs == rhs && (pc > bpc || (pc == bpc && (l, r) < (bl, br))))
                }
            };
            if better {
                best = Some(((l, r), pc));
            }
        }
        let Some(((l, r), pc)) = best else { break };
        let (l, r) = (l.to_string(), r.to_string());
        let res = format!("{}{}", l, r.strip_prefix("##").unwrap());
        out.push((l.clone(), r.clone(), res.clone(), pc, sym[l.as_str()], sym[r.as_str()]));
        vocab.insert(res.clone());
        for (s, _) in ws.iter_mut() {
            let mut n = Vec::new();
            let mut i = 0;
            while i < s.len() {
                if i + 1 < s.len() && s[i] == l && s[i + 1] == r {
                    n.push(res.clone());
                    i += 2;
                } else {
                    n.push(s[i].clone());
                    i += 1;
                }
            }
            *s = n;
        }
    }
    out
}

#[test]
fn incremental_equals_naive_recount() {
    for (n, seed, vocab) in [(400, 7u64, 200usize), (1500, 12345, 450)] {
        let words = synthetic(n, seed);
        let c = TrainerConfig { vocab_size: vocab, special_tokens: vec!["[UNK]".into()], ..Default::default() };
        let r = train(&words, &c, &mut no_progress()).unwrap();
        let got: Vec<_> = r
            .merges
            .iter()
            .map(|m| {
                (
                    tok(&r, m.left).to_string(),
                    tok(&r, m.right).to_string(),
                    tok(&r, m.result).to_string(),
                    m.pair_count,
                    m.left_count,
                    m.right_count,
                )
            })
            .collect();
        let want = naive(&words, vocab, 1);
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "merge {i} differs");
        }
    }
}
