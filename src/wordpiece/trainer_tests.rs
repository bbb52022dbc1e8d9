//! Unit tests of the WordPiece trainer: hand-computed worked example, id layout, options,
//! determinism (input order, rayon thread count) and agreement with a naive full-recount trainer.

use super::trainer::{likelihood_gain, train, Objective, TrainResult, TrainerConfig};
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
    for objective in [Objective::Ratio, Objective::Frequency, Objective::Likelihood] {
        deterministic(objective);
    }
}

fn deterministic(objective: Objective) {
    let words = synthetic(3000, 0x9E3779B97F4A7C15);
    let c = TrainerConfig {
        objective,
        vocab_size: 400,
        special_tokens: vec!["[UNK]".into(), "[PAD]".into()],
        ..Default::default()
    };
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

/// Words as the naive trainers start them: the first character bare, the others `##`-prefixed.
fn naive_words(words: &[(String, u64)]) -> Vec<(Vec<String>, u64)> {
    words
        .iter()
        .map(|(w, c)| {
            let syms =
                w.chars().enumerate().map(|(i, ch)| if i == 0 { ch.to_string() } else { format!("##{ch}") }).collect();
            (syms, *c)
        })
        .collect()
}

/// Every leftmost, non-overlapping `l r` in every word becomes `res`.
fn naive_merge(ws: &mut [(Vec<String>, u64)], l: &str, r: &str, res: &str) {
    for (s, _) in ws.iter_mut() {
        let mut n = Vec::new();
        let mut i = 0;
        while i < s.len() {
            if i + 1 < s.len() && s[i] == l && s[i + 1] == r {
                n.push(res.to_string());
                i += 2;
            } else {
                n.push(s[i].clone());
                i += 1;
            }
        }
        *s = n;
    }
}

/// Naive trainer: full recount of every pair and symbol before each merge, same selection order.
/// Returns merges as (left, right, result, pair_count, left_count, right_count).
fn naive(words: &[(String, u64)], vocab_size: usize, specials: usize) -> Vec<(String, String, String, u64, u64, u64)> {
    let mut ws = naive_words(words);
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
        naive_merge(&mut ws, &l, &r, &res);
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

#[test]
fn hf_layout_for_frequency_and_likelihood() {
    // Bare characters by code point (b and c only ever start a word, a never does: all bare),
    // then the continuation pieces; merges after them.
    let words = w(&[("ba", 3), ("ab", 1), ("c", 2)]);
    for objective in [Objective::Frequency, Objective::Likelihood] {
        let c = TrainerConfig { objective, ..cfg(8) };
        let r = train(&words, &c, &mut no_progress()).unwrap();
        let names: Vec<&str> = r.tokens.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(names, ["[UNK]", "a", "b", "c", "##a", "##b", "ba", "ab"], "{objective:?}");
        let counts: Vec<u64> = r.tokens.iter().map(|t| t.1).collect();
        assert_eq!(counts, [0, 1, 3, 2, 3, 1, 3, 1]);
    }
    // As HF, a character limit_alphabet drops is left out and its word stays whole: the z of
    // "abzab" goes, "abab" is learned across it.
    let c = TrainerConfig { objective: Objective::Frequency, limit_alphabet: Some(2), ..cfg(100) };
    let r = train(&w(&[("abzab", 3), ("xy", 1)]), &c, &mut no_progress()).unwrap();
    let names: Vec<&str> = r.tokens.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(names, ["[UNK]", "a", "b", "##a", "##b", "ab", "##ab", "abab"]);
}

/// Frequency on the HF course corpus, by hand. Ids: [UNK] 0, bare b g h n p s u 1-7,
/// ##g ##n ##s ##u 8-11. ##u+##g 20 -> ##ug; ##u+##n 16 -> ##un; h+##ug 15 -> hug;
/// p+##un 12 -> pun; then p+##ug (5, 12) and hug+##s (14, 10) tie at 5: the smaller left id
/// wins -> pug, then hugs; b+##un 4 -> bun.
#[test]
fn frequency_worked_example_ties_to_smaller_ids() {
    let words = w(&[("hug", 10), ("pug", 5), ("pun", 12), ("bun", 4), ("hugs", 5)]);
    let c = TrainerConfig { objective: Objective::Frequency, ..cfg(100) };
    let r = train(&words, &c, &mut no_progress()).unwrap();
    assert_eq!(r.tokens.len(), 12 + 7);
    let got: Vec<(&str, f64, u64)> = r.merges.iter().map(|m| (tok(&r, m.result), m.score, m.pair_count)).collect();
    assert_eq!(
        got,
        [
            ("##ug", 20.0, 20),
            ("##un", 16.0, 16),
            ("hug", 15.0, 15),
            ("pun", 12.0, 12),
            ("pug", 5.0, 5),
            ("hugs", 5.0, 5),
            ("bun", 4.0, 4)
        ]
    );
}

/// The likelihood gain (trainer.rs header) term by term. The HF course corpus starts with
/// N = h 15 + p 17 + b 4 + ##u 36 + ##g 20 + ##n 16 + ##s 5 = 113 symbols; merging ##u+##g
/// (20 times) leaves ##u 16, ##g 0 and N 93.
#[test]
fn likelihood_gain_formula() {
    let xlx = |x: f64| if x == 0.0 { 0.0 } else { x * x.ln() };
    // a != b: pc 20, c(a) 36, c(b) 20, N 113
    let want = xlx(20.0) + xlx(16.0) + xlx(0.0) - xlx(36.0) - xlx(20.0) + xlx(113.0) - xlx(93.0);
    assert!((likelihood_gain(false, 20, 36, 20, 113) - want).abs() < 1e-9);
    // a == b ("aaaa" x 3: pc 9 windows, c(a) 12): c(a) - 2 pc clamps at 0
    let want = xlx(9.0) + 0.0 - xlx(12.0) + xlx(12.0) - xlx(3.0);
    assert!((likelihood_gain(true, 9, 12, 12, 12) - want).abs() < 1e-9);
    // A merge that makes the text shorter and keeps the parts' mass gains; one of a rare pair
    // whose parts are common loses.
    assert!(likelihood_gain(false, 100, 100, 100, 1000) > 0.0);
    assert!(likelihood_gain(false, 1, 500, 500, 1000) < 0.0);
}

/// Naive trainer for `Frequency` and `Likelihood`: full recount before each merge, HF's id
/// layout, the documented order. Merges as (left, right, result, pair_count, score).
fn naive_hf(
    words: &[(String, u64)],
    vocab_size: usize,
    objective: Objective,
) -> Vec<(String, String, String, u64, f64)> {
    let mut ws = naive_words(words);
    let chars: BTreeSet<char> = words.iter().flat_map(|(w, _)| w.chars()).collect();
    let conts: BTreeSet<String> = words.iter().flat_map(|(w, _)| w.chars().skip(1).map(|c| format!("##{c}"))).collect();
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    ids.insert("[UNK]".into(), 0);
    for s in chars.iter().map(|c| c.to_string()).chain(conts) {
        let n = ids.len();
        ids.insert(s, n);
    }
    let mut out = Vec::new();
    while ids.len() < vocab_size {
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
        let n: u64 = sym.values().sum();
        let score = |(l, r): (&str, &str), pc: u64| match objective {
            Objective::Likelihood => likelihood_gain(l == r, pc, sym[l], sym[r], n),
            _ => pc as f64,
        };
        let mut best: Option<((&str, &str), u64, f64)> = None;
        for (&(l, r), &pc) in &pairs {
            let sc = score((l, r), pc);
            let better = match best {
                None => true,
                Some(((bl, br), bpc, bsc)) => {
                    sc > bsc || (sc == bsc && (pc > bpc || (pc == bpc && (ids[l], ids[r]) < (ids[bl], ids[br]))))
                }
            };
            if better {
                best = Some(((l, r), pc, sc));
            }
        }
        let Some(((l, r), pc, sc)) = best else { break };
        let (l, r) = (l.to_string(), r.to_string());
        let res = format!("{}{}", l, r.strip_prefix("##").unwrap());
        out.push((l.clone(), r.clone(), res.clone(), pc, sc));
        if !ids.contains_key(&res) {
            let n = ids.len();
            ids.insert(res.clone(), n);
        }
        naive_merge(&mut ws, &l, &r, &res);
    }
    out
}

#[test]
fn frequency_and_likelihood_equal_naive_recount() {
    for objective in [Objective::Frequency, Objective::Likelihood] {
        for (n, seed, vocab) in [(400, 7u64, 200usize), (1500, 12345, 450)] {
            let words = synthetic(n, seed);
            let c = TrainerConfig { objective, ..cfg(vocab) };
            let r = train(&words, &c, &mut no_progress()).unwrap();
            let got: Vec<_> = r
                .merges
                .iter()
                .map(|m| {
                    let t = |id| tok(&r, id).to_string();
                    (t(m.left), t(m.right), t(m.result), m.pair_count, m.score)
                })
                .collect();
            let want = naive_hf(&words, vocab, objective);
            assert!(want.len() > 100);
            assert_eq!(got.len(), want.len(), "{objective:?}");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{objective:?}: merge {i} differs");
            }
        }
    }
}
