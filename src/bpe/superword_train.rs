//! Training superword BPE in two stages from counted runs (`superword.rs` says what a run is):
//!
//! 1. stage 1: the runs' pieces, counted with their runs' counts, trained as ordinary
//!    byte-level BPE (`train.rs`, same tie rule) up to the transition point t;
//! 2. segment: each distinct piece by stage 1's encoder (the rank rule encoding uses), so stage
//!    2 starts exactly where encoding will;
//! 3. stage 2: each distinct run, its pieces' ids side by side, is a word of the same merge
//!    loop, with stage 1's tokens as the alphabet, up to the target size. Counting runs instead
//!    of keeping documents is "Faster Superword Tokenization" (Tanner et al., arXiv 2604.05192).

use std::time::Instant;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::superword::for_each_piece;
use super::train::{train, Merge, TrainConfig, TrainOutput, Words};
use super::RankEncoder;
use crate::count::Counts;
use crate::error::CoreError;
use crate::pretok::Splitter;

/// Counted runs per parallel task, and distinct pieces per segmenting task (neither changes a
/// result: the tasks' sums are added, their lists joined in order).
const TASK_RUNS: usize = 16_384;
const TASK_PIECES: usize = 4_096;

pub struct SuperwordConfig {
    /// Tokens to reach in all (256 bytes + both stages' new tokens).
    pub max_tokens: usize,
    /// The transition point t: stage 1 stops at this many tokens.
    pub transition: usize,
    pub min_frequency: u64,
    pub max_token_bytes: usize,
    /// Smaller token counts to snapshot in stage 2 (each at least `transition`).
    pub snapshots: Vec<usize>,
}

pub struct SuperwordOutput {
    /// tokens, merges (stage 1's then stage 2's), final counts and snapshots of the whole run
    pub trained: TrainOutput,
    /// Tokens when stage 2 began (t, or fewer if stage 1 ran out of pairs).
    pub transition: usize,
    /// The first `stage1_merges` merges are stage 1's.
    pub stage1_merges: usize,
    pub distinct_runs: usize,
    pub distinct_pieces: usize,
    pub merge_seconds: f64,
}

/// Trains both stages on counted runs; `progress(phase, done, total)` with phases "stage 1"
/// and "stage 2" (merges); returning false stops with `CoreError::Interrupted`.
pub fn train_superword(
    counts: &Counts,
    pattern: &str,
    cfg: &SuperwordConfig,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<SuperwordOutput, CoreError> {
    let t0 = Instant::now();
    if cfg.transition < 256 || cfg.transition > cfg.max_tokens || cfg.snapshots.iter().any(|&s| s < cfg.transition) {
        return Err(CoreError::input(format!(
            "the transition point {} must lie between 256 and every vocabulary size asked for",
            cfg.transition
        )));
    }
    // 1. stage 1 on the pieces, each piece counted as often as the runs it is in: summed per
    //    task of runs, then over the tasks (a sum, whatever the split), sorted by bytes (the
    //    merge loop's tie rule orders the pairs themselves: the words' order changes nothing).
    let n = counts.len();
    let tasks: Vec<usize> = (0..n).step_by(TASK_RUNS).collect();
    let summed = tasks
        .par_iter()
        .map(|&a| -> Result<FxHashMap<&[u8], u64>, CoreError> {
            let mut m = FxHashMap::default();
            for i in a..(a + TASK_RUNS).min(n) {
                let c = counts.count(i);
                for_each_piece(counts.piece(i), |p| *m.entry(p).or_insert(0) += c)?;
            }
            Ok(m)
        })
        .try_reduce(FxHashMap::default, |x, y| {
            let (mut x, y) = if x.len() >= y.len() { (x, y) } else { (y, x) };
            for (p, c) in y {
                *x.entry(p).or_insert(0) += c;
            }
            Ok(x)
        })?;
    let mut pieces: Vec<(&[u8], u64)> = summed.into_iter().collect();
    pieces.par_sort_unstable_by(|x, y| x.0.cmp(y.0));
    let mut words = Words::default();
    words.arena.reserve(pieces.iter().map(|p| p.0.len()).sum());
    for &(p, c) in &pieces {
        words.push(p.iter().map(|&b| b as u32), c);
    }
    let alphabet: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let tc = TrainConfig {
        target_tokens: cfg.transition,
        min_frequency: cfg.min_frequency,
        max_token_bytes: cfg.max_token_bytes,
        snapshots: vec![],
    };
    let first = train(alphabet, words, &tc, &mut |d, t| progress("stage 1", d, t))?;
    let transition = first.tokens.len();
    // 2. segment every distinct piece as encoding will (each on its own: in parallel tasks)
    let enc = RankEncoder::new(first.tokens.iter().enumerate().map(|(i, b)| (i as u32, b)).collect(), vec![], {
        Splitter::new(pattern)?
    })?;
    let segmented: Vec<(Vec<u32>, Vec<u32>)> = pieces
        .par_chunks(TASK_PIECES)
        .map(|chunk| {
            let (mut flat, mut lens) = (Vec::new(), Vec::with_capacity(chunk.len()));
            enc.with_pieces(|segment| {
                for &(p, _) in chunk {
                    let at = flat.len();
                    segment(p, &mut flat);
                    lens.push((flat.len() - at) as u32);
                }
            });
            (flat, lens)
        })
        .collect();
    let mut flat: Vec<u32> = Vec::with_capacity(segmented.iter().map(|s| s.0.len()).sum());
    let mut starts: Vec<usize> = Vec::with_capacity(pieces.len() + 1);
    for (ids, lens) in segmented {
        let mut at = flat.len();
        for len in lens {
            starts.push(at);
            at += len as usize;
        }
        flat.extend_from_slice(&ids);
    }
    starts.push(flat.len());
    let index: FxHashMap<&[u8], u32> = pieces.iter().enumerate().map(|(i, &(p, _))| (p, i as u32)).collect();
    let distinct_pieces = pieces.len();
    // 3. stage 2 on the runs, each a word of its pieces' ids (built in parallel tasks, joined in
    //    the counts' order). A run that is one token after stage 1 has no pair: no merge can
    //    change it, so it stays out of the merge loop and its count goes straight to its
    //    token's use counts (`alone`), as the loop would have counted it.
    let parts: Vec<(Words, Vec<(u32, u64)>)> = tasks
        .par_iter()
        .map(|&a| -> Result<(Words, Vec<(u32, u64)>), CoreError> {
            let (mut words, mut alone, mut ids) = (Words::default(), Vec::new(), Vec::<u32>::new());
            for i in a..(a + TASK_RUNS).min(n) {
                let c = counts.count(i);
                ids.clear();
                for_each_piece(counts.piece(i), |p| {
                    let j = index[p] as usize;
                    ids.extend_from_slice(&flat[starts[j]..starts[j + 1]]);
                })?;
                if ids.len() == 1 {
                    alone.push((ids[0], c));
                } else {
                    words.push(ids.iter().copied(), c);
                }
            }
            Ok((words, alone))
        })
        .collect::<Result<_, CoreError>>()?;
    drop((index, pieces, flat, starts));
    let mut words = Words::default();
    words.arena.reserve(parts.iter().map(|p| p.0.arena.len()).sum());
    let mut alone: Vec<(u32, u64)> = Vec::new();
    for (w, a) in parts {
        let base = words.arena.len();
        words.arena.extend_from_slice(&w.arena);
        words.ends.extend(w.ends.iter().map(|e| e + base));
        words.counts.extend_from_slice(&w.counts);
        alone.extend_from_slice(&a);
    }
    let tc = TrainConfig {
        target_tokens: cfg.max_tokens,
        min_frequency: cfg.min_frequency,
        max_token_bytes: cfg.max_token_bytes,
        snapshots: cfg.snapshots.clone(),
    };
    let stage1_merges = first.merges.len();
    let mut second = train(first.tokens, words, &tc, &mut |d, t| progress("stage 2", d, t))?;
    for &(id, count) in &alone {
        second.token_counts[id as usize] += count;
        for s in second.snapshots.iter_mut() {
            s.token_counts[id as usize] += count;
        }
    }
    let mut merges: Vec<Merge> = first.merges;
    merges.append(&mut second.merges);
    for s in second.snapshots.iter_mut() {
        s.merges += stage1_merges;
    }
    second.merges = merges;
    Ok(SuperwordOutput {
        trained: second,
        transition,
        stage1_merges,
        distinct_runs: counts.len(),
        distinct_pieces,
        merge_seconds: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::superword::{run_key, runs, SuperwordEncoder};
    use crate::count::{count_inputs, Splitting};
    use crate::encode::Encode;
    use crate::pretok::GPT2;

    fn counted(text: &str, max_words: usize) -> Counts {
        let split = Splitting::Words(Box::new(move |line: &str, emit: &mut dyn FnMut(&str)| {
            let s = Splitter::new(GPT2).unwrap();
            let mut key = String::new();
            runs(line, &s, max_words, |r| {
                run_key(&mut key, line, r);
                emit(&key)
            })
            .unwrap();
        }));
        count_inputs(&[text.as_bytes()], split).unwrap()
    }

    #[test]
    fn stage_two_learns_across_spaces_and_the_encoder_replays_it() {
        let text = "by the way by the way by the way, by the\n".repeat(3);
        let counts = counted(&text, 4);
        let cfg = SuperwordConfig {
            max_tokens: 256 + 12,
            transition: 256 + 6,
            min_frequency: 0,
            max_token_bytes: 0,
            snapshots: vec![],
        };
        let out = train_superword(&counts, GPT2, &cfg, &mut |_, _, _| true).unwrap();
        assert_eq!(out.transition, 262);
        let tokens = &out.trained.tokens;
        // stage 1 never joins pieces: no token before t holds a space after its first byte
        assert!(tokens[256..262].iter().all(|t| !t[1..].contains(&b' ')));
        // stage 2 does
        assert!(
            tokens[262..].iter().any(|t| t[1..].contains(&b' ')),
            "{:?}",
            tokens[262..].iter().map(|t| String::from_utf8_lossy(t)).collect::<Vec<_>>()
        );
        let stage2: Vec<(u32, u32, u32)> =
            out.trained.merges[out.stage1_merges..].iter().map(|m| (m.left, m.right, m.result)).collect();
        let toks: Vec<(u32, &[u8])> = tokens.iter().enumerate().map(|(i, b)| (i as u32, b.as_slice())).collect();
        let enc = SuperwordEncoder::new(toks, vec![], GPT2, out.transition as u32, &stage2, 4).unwrap();
        let mut ids = Vec::new();
        enc.encode_into(&text, &mut ids).unwrap();
        assert_eq!(enc.decode_bytes(&ids).unwrap(), text.as_bytes());
        // the final counts of training are the encoder's on the training text
        let mut uses = vec![0u64; tokens.len()];
        for &id in &ids {
            uses[id as usize] += 1;
        }
        assert_eq!(uses, out.trained.token_counts);
        // linear on a long piece and on a long run of pieces
        let long = "a".repeat(100_000) + &" a".repeat(100_000);
        ids.clear();
        enc.encode_into(&long, &mut ids).unwrap();
        assert_eq!(enc.decode_bytes(&ids).unwrap(), long.as_bytes());
    }
}
