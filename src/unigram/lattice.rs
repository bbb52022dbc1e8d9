//! Encoder-side lattice: all piece matches of one normalized string, with k-best (A*) and
//! forward-filtering backward-sampling. Owns: `Lattice`, `nbest`, `sample`, the small RNG.
//!
//! Scores are `f32` and accumulated in `f32`, in SentencePiece's node order, because the
//! n-best list must rank paths exactly as SentencePiece's `Lattice::NBest` does; sampling uses
//! `f64` (it is random anyway, and `f64` keeps large `alpha` stable).
//!
//! Node order (it decides ties): nodes are created by start character ascending, and for one
//! start by length ascending (the trie's common-prefix order), the unknown node last. The
//! Viterbi keeps, for each node, the first left neighbour with a strictly greater score, like
//! SentencePiece, so on ties the left neighbour that starts earliest (the longer piece) wins.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    /// Start and end in characters.
    pub start: u32,
    pub end: u32,
    /// Start and end in bytes of the normalized string.
    pub bstart: u32,
    pub bend: u32,
    /// Piece id; the encoder's unk id for unknown nodes.
    pub id: u32,
    pub score: f32,
}

pub(crate) struct Lattice {
    /// Number of characters.
    pub len: usize,
    pub nodes: Vec<Node>,
    /// `ends[p]` = indices of nodes ending at character `p`, in creation order.
    pub ends: Vec<Vec<u32>>,
}

impl Lattice {
    pub(crate) fn new(len: usize, nodes: Vec<Node>) -> Lattice {
        let mut ends = vec![Vec::new(); len + 1];
        for (i, n) in nodes.iter().enumerate() {
            ends[n.end as usize].push(i as u32);
        }
        Lattice { len, nodes, ends }
    }

    /// Viterbi: per node, best score of a path from BOS through the node (inclusive) and the
    /// best predecessor; returns (per-node best, per-node prev, best total score at EOS).
    fn viterbi_scores(&self) -> (Vec<f32>, Vec<u32>, f32) {
        const NONE: u32 = u32::MAX;
        let mut best = vec![0f32; self.nodes.len()];
        let mut prev = vec![NONE; self.nodes.len()];
        // Nodes are sorted by start, so a node's left neighbours are all finished first.
        for i in 0..self.nodes.len() {
            let n = self.nodes[i];
            if n.start == 0 {
                best[i] = n.score; // BOS has backtrace score 0.
                continue;
            }
            let mut found = false;
            let mut bs = 0f32;
            let mut bp = NONE;
            for &l in &self.ends[n.start as usize] {
                let s = best[l as usize] + n.score;
                if !found || s > bs {
                    found = true;
                    bs = s;
                    bp = l;
                }
            }
            best[i] = bs;
            prev[i] = bp;
        }
        let mut eos = 0f32;
        let mut found = false;
        for &l in &self.ends[self.len] {
            let s = best[l as usize];
            if !found || s > eos {
                found = true;
                eos = s;
            }
        }
        (best, prev, eos)
    }

    /// The k best paths (node index sequences) with their total scores, best first.
    /// A* from EOS towards BOS with the exact Viterbi heuristic, as SentencePiece does; heap
    /// ties are broken by creation order (earlier hypothesis first) so results are stable.
    pub(crate) fn nbest(&self, k: usize) -> Vec<(Vec<u32>, f32)> {
        if k == 0 || self.len == 0 {
            return Vec::new();
        }
        let (best, _, _) = self.viterbi_scores();
        #[derive(Clone, Copy)]
        struct Hyp {
            node: u32, // node index, or EOS/BOS markers
            next: u32, // hypothesis index towards EOS
            gx: f32,
        }
        struct Item {
            fx: f32,
            seq: u64,
            hyp: u32,
        }
        impl PartialEq for Item {
            fn eq(&self, o: &Self) -> bool {
                self.cmp(o) == Ordering::Equal
            }
        }
        impl Eq for Item {}
        impl PartialOrd for Item {
            fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
                Some(self.cmp(o))
            }
        }
        impl Ord for Item {
            fn cmp(&self, o: &Self) -> Ordering {
                // Max-heap on fx; on ties the older (smaller seq) item is "greater".
                self.fx.total_cmp(&o.fx).then(o.seq.cmp(&self.seq))
            }
        }
        const EOS: u32 = u32::MAX;
        const BOS: u32 = u32::MAX - 1;
        let mut hyps: Vec<Hyp> = vec![Hyp { node: EOS, next: u32::MAX, gx: 0.0 }];
        let mut heap = BinaryHeap::new();
        let mut seq = 0u64;
        let eos_fx = self.ends[self.len].iter().map(|&l| best[l as usize]).fold(f32::NEG_INFINITY, f32::max);
        heap.push(Item { fx: eos_fx, seq, hyp: 0 });
        let mut results = Vec::new();
        while let Some(top) = heap.pop() {
            let h = hyps[top.hyp as usize];
            if h.node == BOS {
                let mut path = Vec::new();
                let mut j = h.next;
                while hyps[j as usize].node != EOS {
                    path.push(hyps[j as usize].node);
                    j = hyps[j as usize].next;
                }
                results.push((path, top.fx));
                if results.len() == k {
                    break;
                }
                continue;
            }
            let pos = if h.node == EOS { self.len } else { self.nodes[h.node as usize].start as usize };
            if pos == 0 {
                hyps.push(Hyp { node: BOS, next: top.hyp, gx: h.gx });
                seq += 1;
                heap.push(Item { fx: h.gx, seq, hyp: hyps.len() as u32 - 1 });
            } else {
                for &l in &self.ends[pos] {
                    let ln = self.nodes[l as usize];
                    let gx = ln.score + h.gx;
                    // best[l] includes l's own score: it is h(l) + score(l), as in SP's fx.
                    let fx = best[l as usize] + h.gx;
                    hyps.push(Hyp { node: l, next: top.hyp, gx });
                    seq += 1;
                    heap.push(Item { fx, seq, hyp: hyps.len() as u32 - 1 });
                }
            }
            // Same guard as SentencePiece against exponential agendas on repetitive input.
            if heap.len() >= 10_000 {
                let keep = 512.min(k * 10);
                let mut kept = BinaryHeap::new();
                for _ in 0..keep {
                    if let Some(it) = heap.pop() {
                        kept.push(it);
                    }
                }
                heap = kept;
            }
        }
        results
    }

    /// Forward-filtering backward-sampling with scores scaled by `theta`.
    pub(crate) fn sample(&self, theta: f64, rng: &mut Rng) -> Vec<u32> {
        if self.len == 0 {
            return Vec::new();
        }
        // alpha[p] = log of the total (scaled) weight of all paths from BOS to character p.
        let mut alpha = vec![f64::NEG_INFINITY; self.len + 1];
        alpha[0] = 0.0;
        for p in 1..=self.len {
            let mut acc = f64::NEG_INFINITY;
            for &l in &self.ends[p] {
                let n = self.nodes[l as usize];
                acc = log_add(acc, alpha[n.start as usize] + theta * n.score as f64);
            }
            alpha[p] = acc;
        }
        let mut out = Vec::new();
        let mut pos = self.len;
        while pos > 0 {
            let z = alpha[pos];
            let r = rng.next_f64();
            let cands = &self.ends[pos];
            let mut acc = 0.0;
            let mut pick = *cands.last().unwrap();
            for &l in cands {
                let n = self.nodes[l as usize];
                acc += (alpha[n.start as usize] + theta * n.score as f64 - z).exp();
                if r < acc {
                    pick = l;
                    break;
                }
            }
            out.push(pick);
            pos = self.nodes[pick as usize].start as usize;
        }
        out.reverse();
        out
    }
}

#[inline]
pub(crate) fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    // Beyond e^-50 the smaller term cannot change the sum at double precision that matters.
    if hi > lo + 50.0 {
        hi
    } else {
        hi + (lo - hi).exp().ln_1p()
    }
}

/// SplitMix64: tiny, seedable and good enough for sampling segmentations.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}
