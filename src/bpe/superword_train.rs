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

use super::superword::for_each_piece;
use super::train::{train, Merge, TrainConfig, TrainOutput, Words};
use super::RankEncoder;
use crate::count::Counts;
use crate::error::CoreError;
use crate::pretok::Splitter;

#[inline]
fn hash(p: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(p)
}

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
    // 1. stage 1 on the pieces, each piece counted as often as the runs it is in; each run
    //    kept as its pieces' indices (`runs`, `ends`), so keys are parsed once. The index is a
    //    table of piece numbers whose bytes are read from `pieces` (no key stored twice).
    let mut index: hashbrown::HashTable<u32> = hashbrown::HashTable::new();
    let mut pieces: Vec<(&[u8], u64)> = Vec::new();
    let mut runs: Vec<u32> = Vec::new();
    let mut ends: Vec<usize> = Vec::with_capacity(counts.len());
    for (key, count) in counts.iter() {
        for_each_piece(key, |p| {
            let h = hash(p);
            let i = match index.find(h, |&i| pieces[i as usize].0 == p) {
                Some(&i) => i,
                None => {
                    let i = pieces.len() as u32;
                    pieces.push((p, 0));
                    index.insert_unique(h, i, |&j| hash(pieces[j as usize].0));
                    i
                }
            };
            pieces[i as usize].1 += count;
            runs.push(i);
        })?;
        ends.push(runs.len());
    }
    drop(index);
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
    // 2. segment every distinct piece as encoding will
    let enc = RankEncoder::new(first.tokens.iter().enumerate().map(|(i, b)| (i as u32, b)).collect(), vec![], {
        Splitter::new(pattern)?
    })?;
    let mut starts: Vec<usize> = Vec::with_capacity(pieces.len() + 1);
    let mut flat: Vec<u32> = Vec::new();
    enc.with_pieces(|segment| {
        for &(p, _) in &pieces {
            starts.push(flat.len());
            segment(p, &mut flat);
        }
    });
    starts.push(flat.len());
    let distinct_pieces = pieces.len();
    drop(pieces);
    // 3. stage 2 on the runs. A run that is one token after stage 1 has no pair: no merge can
    //    change it, so it stays out of the merge loop and its count goes straight to its
    //    token's use counts (`alone`), as the loop would have counted it.
    let mut words = Words::default();
    let mut alone: Vec<(u32, u64)> = Vec::new();
    let mut at = 0;
    for ((_, count), &end) in counts.iter().zip(&ends) {
        let run = &runs[at..end];
        at = end;
        let (a, b) = (starts[run[0] as usize], starts[run[0] as usize + 1]);
        if run.len() == 1 && b - a == 1 {
            alone.push((flat[a], count));
            continue;
        }
        let segs = run.iter().flat_map(|&i| flat[starts[i as usize]..starts[i as usize + 1]].iter().copied());
        words.push(segs, count);
    }
    drop((runs, ends, flat, starts));
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
