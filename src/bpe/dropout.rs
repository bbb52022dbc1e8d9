//! BPE-dropout (Provilkov, Emelianenko and Voita, "BPE-Dropout: Simple and Effective Subword
//! Regularization", ACL 2020): a piece is merged as BPE merges it, the lowest-ranked
//! adjacent pair first (the leftmost on ties), except that at every step each candidate
//! merge is skipped with probability `p`, drawn afresh at the next step; when every candidate
//! of a step is skipped, the piece stays as it is. p = 0 gives exactly BPE's segmentation
//! (tested against the encoders' own), p = 1 the single symbols. Unlike the encoders' fast
//! path, a piece that is itself a token is merged too, as the paper does.
//!
//! One merge loop for both BPE encoders, over any symbol type: byte ranges of a piece for the
//! rank-map encoder (`RankEncoder`), token ids for the merge-table encoder (`MergeEncoder`).
//! A heap of candidates over a linked list keeps it O(n log n) per piece (a piece may be a
//! megabyte of one letter): the candidates skipped at a step go back into the heap after the
//! step's merge, so a step draws each candidate once, in rank order, until one is kept.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::encode::Rng;

const NONE: u32 = u32::MAX;

/// Merges `syms` in place with dropout `p`. `pair(a, b)`: the rank and the result of merging
/// `a` then `b`, if that is a merge; a rank names one pair for a given left symbol.
/// `merged(a, b, z)` is told of every merge made (`encode/trace.rs` counts them).
pub(crate) fn merge<S: Copy>(
    syms: &mut Vec<S>,
    p: f64,
    rng: &mut Rng,
    pair: impl Fn(S, S) -> Option<(u32, S)>,
    mut merged: impl FnMut(S, S, S),
) {
    let n = syms.len();
    if n < 2 {
        return;
    }
    let mut next: Vec<u32> = (1..=n as u32).map(|i| if i as usize == n { NONE } else { i }).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect(); // 0 -> NONE
    let mut alive = vec![true; n];
    // (rank, position of the left symbol), smallest first
    let mut heap: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::with_capacity(n);
    for i in 0..n - 1 {
        if let Some((rank, _)) = pair(syms[i], syms[i + 1]) {
            heap.push(Reverse((rank, i as u32)));
        }
    }
    let mut skipped: Vec<Reverse<(u32, u32)>> = Vec::new();
    while let Some(Reverse((rank, i))) = heap.pop() {
        let j = next[i as usize];
        if !alive[i as usize] || j == NONE {
            continue;
        }
        let Some((r, z)) = pair(syms[i as usize], syms[j as usize]) else { continue };
        if r != rank {
            continue; // stale: the pair at i changed since it was pushed
        }
        if rng.next_f64() < p {
            skipped.push(Reverse((rank, i)));
            continue;
        }
        merged(syms[i as usize], syms[j as usize], z);
        syms[i as usize] = z;
        alive[j as usize] = false;
        let after = next[j as usize];
        next[i as usize] = after;
        if after != NONE {
            prev[after as usize] = i;
            if let Some((r, _)) = pair(z, syms[after as usize]) {
                heap.push(Reverse((r, i)));
            }
        }
        let before = prev[i as usize];
        if before != NONE {
            if let Some((r, _)) = pair(syms[before as usize], z) {
                heap.push(Reverse((r, before)));
            }
        }
        heap.extend(skipped.drain(..));
    }
    let mut w = 0;
    for i in 0..n {
        if alive[i] {
            syms[w] = syms[i];
            w += 1;
        }
    }
    syms.truncate(w);
}

/// Appends the ids of one byte-level piece merged with dropout: symbols are byte ranges, and a
/// pair merges when its bytes are a token (`rank`: bytes -> rank, which is the token's id).
/// `merged(a, b, z)` gets the ids of the two tokens and the result of every merge made.
pub(crate) fn byte_piece(
    rank: impl Fn(&[u8]) -> Option<u32>,
    piece: &[u8],
    p: f64,
    rng: &mut Rng,
    out: &mut Vec<u32>,
    mut merged: impl FnMut(u32, u32, u32),
) {
    let id = |s: (u32, u32)| rank(&piece[s.0 as usize..s.1 as usize]).expect("every byte and merge is a token");
    let mut syms: Vec<(u32, u32)> = (0..piece.len() as u32).map(|i| (i, i + 1)).collect();
    merge(
        &mut syms,
        p,
        rng,
        |a, b| rank(&piece[a.0 as usize..b.1 as usize]).map(|r| (r, (a.0, b.1))),
        |a, b, z| merged(id(a), id(b), id(z)),
    );
    out.extend(syms.iter().map(|&s| id(s)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::RankEncoder;
    use crate::encode::Encode;
    use crate::pretok::{Splitter, GPT2};

    /// Bytes, then "ab", "abc", "bc", "abcabc", " ab" as ranks 256.. (ids = ranks).
    fn enc() -> RankEncoder {
        let mut tokens: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
        for (k, t) in ["ab", "abc", "bc", "abcabc", " ab", "aa", "aaaa"].iter().enumerate() {
            tokens.push((256 + k as u32, t.as_bytes().to_vec()));
        }
        RankEncoder::new(tokens, vec![], Splitter::new(GPT2).unwrap()).unwrap()
    }

    #[test]
    fn p_zero_is_bpe_and_p_one_is_bytes() {
        let e = enc();
        let texts = ["abcabc ab abc", "aaaaaaaaa bcab", "", "x", &"a".repeat(5000)];
        for t in texts {
            let mut got = Vec::new();
            e.encode_dropout(t, 0.0, &mut Rng::new(3), &mut got).unwrap();
            assert_eq!(got, e.encode_ordinary(t).unwrap(), "{t:.20}");
            got.clear();
            e.encode_dropout(t, 1.0, &mut Rng::new(3), &mut got).unwrap();
            assert_eq!(got, t.bytes().map(u32::from).collect::<Vec<_>>());
        }
    }

    #[test]
    fn dropout_varies_keeps_bytes_and_repeats_by_seed() {
        let e = enc();
        let t = "abcabc abcabc aaaaaaa";
        let draw = |seed| {
            let mut out = Vec::new();
            e.encode_dropout(t, 0.3, &mut Rng::new(seed), &mut out).unwrap();
            out
        };
        let seen: std::collections::HashSet<Vec<u32>> = (0..40).map(draw).collect();
        assert!(seen.len() > 5);
        for s in &seen {
            assert_eq!(e.decode_bytes(s).unwrap(), t.as_bytes());
        }
        assert_eq!(draw(7), draw(7));
    }
}
