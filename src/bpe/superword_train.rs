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

use super::distinct_pass::PieceSegments;
use super::superword::for_each_piece;
use super::train::{train, Merge, TrainConfig, TrainOutput, Words};
use super::RankEncoder;
use crate::count::{short, Counts, RunPieces};
use crate::error::CoreError;
use crate::pretok::Splitter;

/// Counted runs per parallel task (it changes no result: the tasks' sums are added, their
/// lists joined in order). (Small in tests, so that a small corpus spans many tasks.)
const TASK_RUNS: usize = if cfg!(test) { 64 } else { 16_384 };

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
    /// Wall and CPU seconds (every thread's, as the process counts them; 0 where /proc is not
    /// there to read) of each phase, in the order run: "runs read", "stage 1" (the two the
    /// other way round when stage 1 trains while the runs are put in order, which is then part
    /// of "stage 1"), "pieces segmented", "stage-2 words", "stage 2", so that a bench can show
    /// where the time goes.
    pub phases: Vec<(&'static str, f64, f64)>,
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
    let mut phases = Vec::with_capacity(5);
    let mut last = (t0, process_cpu());
    let mut phase = |name: &'static str| {
        let now = (Instant::now(), process_cpu());
        phases.push((name, (now.0 - last.0).as_secs_f64(), now.1 - last.1));
        last = now;
    };
    if cfg.transition < 256 || cfg.transition > cfg.max_tokens || cfg.snapshots.iter().any(|&s| s < cfg.transition) {
        return Err(CoreError::input(format!(
            "the transition point {} must lie between 256 and every vocabulary size asked for",
            cfg.transition
        )));
    }
    let n = counts.len();
    let tasks: Vec<usize> = (0..n).step_by(TASK_RUNS).collect();
    let alphabet: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let tc = TrainConfig {
        target_tokens: cfg.transition,
        min_frequency: cfg.min_frequency,
        max_token_bytes: cfg.max_token_bytes,
        snapshots: vec![],
    };
    // Stage 1 on the pieces and their counts (the merge loop's tie rule orders the pairs
    // themselves, so the order of the words changes no merge; in byte order it is faster, see
    // `count::runs::EarlyPieces`).
    let stage_one = |pieces: &mut dyn Iterator<Item = (&[u8], u64)>,
                     progress: &mut dyn FnMut(&str, u64, u64) -> bool|
     -> Result<TrainOutput, CoreError> {
        let pieces: Vec<(&[u8], u64)> = pieces.collect();
        // Room for the trainer's edges from the start (`Words::edged_capacity`), so that it
        // lays them out in place instead of copying the arena once more.
        let mut words = Words::default();
        words.arena.reserve_exact(Words::edged_capacity(pieces.iter().map(|p| p.0.len()).sum(), pieces.len()));
        words.ends.reserve_exact(pieces.len());
        words.counts.reserve_exact(pieces.len());
        for &(p, c) in &pieces {
            words.push(p.iter().map(|&b| b as u32), c);
        }
        train(alphabet.clone(), words, &tc, &mut |d, t| progress("stage 1", d, t))
    };
    // Counts the run counter finished without putting its runs in order (the order of their
    // keys, which a `Counts` promises) give their pieces and the pieces' counts at once: stage
    // 1 trains on them on this thread while the runs are put in order on another.
    let mut first = None;
    if let Some(early) = counts.early_pieces() {
        rayon::in_place_scope(|s| {
            s.spawn(|_| {
                counts.run_pieces();
            });
            let mut pieces = (0..early.counts.len()).map(|p| (early.piece(p), early.counts[p]));
            first = Some(stage_one(&mut pieces, progress));
        });
        phase("stage 1");
    }
    // 1. the runs as piece ids: each task of runs numbers the pieces it meets (local ids, in
    //    order of first sight) and sums their counts; the tasks' tables are then joined in task
    //    order into global ids (the same ids whatever the thread count: the tasks are fixed
    //    ranges of runs). A piece's bytes are hashed once per task, not once per occurrence
    //    and stage. When the run counter made the counts, the runs are there as piece ids
    //    already (`Counts::run_pieces`: pieces numbered in byte order), and only the pieces'
    //    counts are summed (unless stage 1 is trained already).
    let (runs, pieces, piece_counts) = match counts.run_pieces() {
        Some(rp) => {
            let runs: Vec<TaskRuns> =
                tasks.par_iter().map(|&a| TaskRuns::aside(rp, a..(a + TASK_RUNS).min(n))).collect();
            let mut piece_counts = vec![0u64; if first.is_some() { 0 } else { rp.pieces() }];
            if first.is_none() {
                for k in 0..n {
                    let c = counts.count(k);
                    for &p in rp.run(k) {
                        piece_counts[p as usize] += c;
                    }
                }
            }
            (runs, (0..rp.pieces() as u32).map(|p| rp.piece(p)).collect(), piece_counts)
        }
        None => {
            let mut runs: Vec<TaskRuns> = tasks
                .par_iter()
                .map(|&a| TaskRuns::read(counts, a..(a + TASK_RUNS).min(n)))
                .collect::<Result<_, CoreError>>()?;
            let mut global = PieceIds::default();
            let mut pieces: Vec<&[u8]> = Vec::new();
            let mut piece_counts: Vec<u64> = Vec::new();
            for task in runs.iter_mut() {
                let local = std::mem::take(&mut task.pieces);
                task.global.reserve_exact(local.len());
                for (p, c) in local.into_iter().zip(std::mem::take(&mut task.counts)) {
                    let g = global.get_or_insert(p, || {
                        pieces.push(p);
                        piece_counts.push(0);
                        (pieces.len() - 1) as u32
                    });
                    piece_counts[g as usize] += c;
                    task.global.push(g);
                }
            }
            (runs, pieces, piece_counts)
        }
    };
    phase("runs read");
    let first = match first {
        Some(f) => f?,
        None => {
            let f = stage_one(&mut pieces.iter().copied().zip(piece_counts), progress)?;
            phase("stage 1");
            f
        }
    };
    let transition = first.tokens.len();
    // 2. segment every distinct piece as encoding will (each once, by the rank rule without
    //    the encoder's piece cache: in parallel tasks)
    let enc = RankEncoder::new(first.tokens.iter().enumerate().map(|(i, b)| (i as u32, b)).collect(), vec![], {
        Splitter::new(pattern)?
    })?;
    let seg = PieceSegments::new(&enc, pieces.len(), |p| pieces[p as usize]);
    drop(enc);
    let distinct_pieces = pieces.len();
    drop(pieces);
    phase("pieces segmented");
    // 3. stage 2 on the runs, each a word of its pieces' ids, written by each task straight
    //    into its own range of one arena (sized first), in the counts' order. A run that is one
    //    token after stage 1 has no pair: no merge can change it, so it stays out of the merge
    //    loop and its count goes straight to its token's use counts (`alone`), as the loop
    //    would have counted it.
    let sizes: Vec<(usize, usize)> = runs.par_iter().map(|r| r.stage_two_size(&seg)).collect();
    let (cells, n): (usize, usize) = (sizes.iter().map(|s| s.0).sum(), sizes.iter().map(|s| s.1).sum());
    let mut arena = Vec::with_capacity(Words::edged_capacity(cells, n));
    arena.resize(cells, 0);
    let mut words = Words { arena, ends: vec![0; n], counts: vec![0; n] };
    let mut jobs = Vec::with_capacity(runs.len());
    {
        let (mut arena, mut ends, mut wc) = (&mut words.arena[..], &mut words.ends[..], &mut words.counts[..]);
        let mut base = 0;
        for (task, &(cells, n)) in runs.iter().zip(&sizes) {
            let (a, rest_a) = arena.split_at_mut(cells);
            let (e, rest_e) = ends.split_at_mut(n);
            let (c, rest_c) = wc.split_at_mut(n);
            (arena, ends, wc) = (rest_a, rest_e, rest_c);
            jobs.push((task, base, a, e, c));
            base += cells;
        }
    }
    let alone: Vec<Vec<(u32, u64)>> =
        jobs.into_par_iter().map(|(task, base, a, e, c)| task.write_stage_two(counts, &seg, base, a, e, c)).collect();
    drop((runs, seg, sizes));
    // The tasks' tables were freed in the worker threads' malloc arenas, which the merge loop
    // (on this thread) does not allocate from: without giving them back, stage 2's index would
    // come on top of them (about 60 MB of the peak at 20 MB of text).
    crate::memory::give_back_memory();
    phase("stage-2 words");
    let tc = TrainConfig {
        target_tokens: cfg.max_tokens,
        min_frequency: cfg.min_frequency,
        max_token_bytes: cfg.max_token_bytes,
        snapshots: cfg.snapshots.clone(),
    };
    let stage1_merges = first.merges.len();
    let mut second = train(first.tokens, words, &tc, &mut |d, t| progress("stage 2", d, t))?;
    phase("stage 2");
    for &(id, count) in alone.iter().flatten() {
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
        phases,
    })
}

/// CPU seconds of the whole process so far (user + system, from /proc/self/stat: in clock
/// ticks, 10 ms on Linux), or 0 where there is no /proc.
fn process_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let f: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0) / 100.0;
    tick(11) + tick(12)
}

/// Piece bytes -> id. A piece of at most 7 bytes (most of them) is keyed by its bytes as one
/// number (the counter's `short` key), hashed and compared in one step with the key in the
/// table; a longer one by its bytes.
#[derive(Default)]
struct PieceIds<'a> {
    short: FxHashMap<u64, u32>,
    long: FxHashMap<&'a [u8], u32>,
}

impl<'a> PieceIds<'a> {
    /// The id of `p`, given by `new` when `p` is new.
    #[inline]
    fn get_or_insert(&mut self, p: &'a [u8], new: impl FnOnce() -> u32) -> u32 {
        match short(p) {
            Some(k) => *self.short.entry(k).or_insert_with(new),
            None => *self.long.entry(p).or_insert_with(new),
        }
    }
}

/// One task's runs as piece ids (see `train_superword`, phase 1).
#[derive(Default)]
struct TaskRuns<'a> {
    /// The first run of the task (its index in the counts).
    first: usize,
    /// local id -> the piece's bytes and summed count (emptied when joined)
    pieces: Vec<&'a [u8]>,
    counts: Vec<u64>,
    /// local id -> global id (filled when joined; empty when the ids are global already)
    global: Vec<u32>,
    /// local piece ids, run after run
    ids: std::borrow::Cow<'a, [u32]>,
    /// end of each run in `ids`
    ends: Vec<u32>,
}

impl<'a> TaskRuns<'a> {
    /// The runs `range` of the counter's `RunPieces`, their ids global already.
    fn aside(rp: &'a RunPieces, range: std::ops::Range<usize>) -> TaskRuns<'a> {
        let mut ends = Vec::with_capacity(range.len());
        let mut at = 0u32;
        for k in range.clone() {
            at += rp.run(k).len() as u32;
            ends.push(at);
        }
        let ids = std::borrow::Cow::Borrowed(rp.runs(range.start, range.end));
        TaskRuns { first: range.start, ids, ends, ..Default::default() }
    }

    /// The global id of local piece `l`.
    #[inline]
    fn g(&self, l: u32) -> u32 {
        if self.global.is_empty() {
            l
        } else {
            self.global[l as usize]
        }
    }

    fn read(counts: &'a Counts, range: std::ops::Range<usize>) -> Result<TaskRuns<'a>, CoreError> {
        let mut t = TaskRuns { first: range.start, ..Default::default() };
        let mut local = PieceIds::default();
        for i in range {
            let c = counts.count(i);
            for_each_piece(counts.piece(i), |p| {
                let id = local.get_or_insert(p, || {
                    t.pieces.push(p);
                    t.counts.push(0);
                    (t.pieces.len() - 1) as u32
                });
                t.counts[id as usize] += c;
                t.ids.to_mut().push(id);
            })?;
            t.ends.push(t.ids.len() as u32);
        }
        Ok(t)
    }

    /// Calls `f` with each run's index in the counts and its pieces' local ids.
    fn each_run(&self, mut f: impl FnMut(usize, &[u32])) {
        let mut at = 0;
        for (r, &end) in self.ends.iter().enumerate() {
            f(self.first + r, &self.ids[at..end as usize]);
            at = end as usize;
        }
    }

    /// (cells, words) this task adds to stage 2: the ids of its runs of two ids or more (a run
    /// of one piece of one token is the only run of one id: every piece has at least one).
    fn stage_two_size(&self, seg: &PieceSegments) -> (usize, usize) {
        let (mut cells, mut words) = (0, 0);
        self.each_run(|_, run| {
            let len: usize = run.iter().map(|&l| seg.of(self.g(l)).len()).sum();
            if len > 1 {
                cells += len;
                words += 1;
            }
        });
        (cells, words)
    }

    /// Writes this task's stage-2 words into its ranges (`base`: where `arena` starts in the
    /// whole arena); returns its one-token runs as (token, count).
    fn write_stage_two(
        &self,
        counts: &Counts,
        seg: &PieceSegments,
        base: usize,
        arena: &mut [u32],
        ends: &mut [usize],
        word_counts: &mut [u64],
    ) -> Vec<(u32, u64)> {
        let (mut at, mut w, mut alone) = (0, 0, Vec::new());
        self.each_run(|i, run| {
            if let [only] = run {
                if let [id] = seg.of(self.g(*only)) {
                    alone.push((*id, counts.count(i)));
                    return;
                }
            }
            for &l in run {
                let ids = seg.of(self.g(l));
                arena[at..at + ids.len()].copy_from_slice(ids);
                at += ids.len();
            }
            ends[w] = base + at;
            word_counts[w] = counts.count(i);
            w += 1;
        });
        alone
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::superword::{run_key, runs, SuperwordEncoder};
    use crate::count::{count_inputs, Splitting};
    use crate::encode::Encode;
    use crate::pretok::GPT2;

    /// `lines` lines of words drawn from `list` by a seeded LCG, line i holding `least + i % spread`
    /// of them, each followed by a comma (a quarter of them) or a space.
    fn drawn_lines(list: &[&str], lines: usize, least: usize, spread: usize, seed: u64) -> String {
        let mut text = String::new();
        let mut x = seed;
        for line in 0..lines {
            for _ in 0..(least + line % spread) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                text.push_str(list[(x >> 33) as usize % list.len()]);
                text.push(if x >> 62 == 0 { ',' } else { ' ' });
            }
            text.push('\n');
        }
        text
    }

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
        // each counted run segments as its text encodes (the round trip's form)
        for (key, _) in counts.iter() {
            let (mut got, mut want) = (Vec::new(), Vec::new());
            let run = enc.segment_counted(key, &mut got).unwrap();
            enc.encode_into(std::str::from_utf8(run).unwrap(), &mut want).unwrap();
            assert_eq!(got, want);
        }
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
    /// The two stages done the plain way: stage 1 on the pieces summed in a sorted map, stage 2
    /// on every run (one-token runs included) segmented piece by piece.
    fn reference(counts: &Counts, cfg: &SuperwordConfig) -> (Vec<Merge>, usize, Vec<u64>) {
        let mut pieces: std::collections::BTreeMap<&[u8], u64> = Default::default();
        for (key, c) in counts.iter() {
            for_each_piece(key, |p| *pieces.entry(p).or_insert(0) += c).unwrap();
        }
        let mut words = Words::default();
        for (p, c) in &pieces {
            words.push(p.iter().map(|&b| b as u32), *c);
        }
        let alphabet: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let tc = TrainConfig { target_tokens: cfg.transition, ..Default::default() };
        let first = train(alphabet, words, &tc, &mut |_, _| true).unwrap();
        let toks = first.tokens.iter().enumerate().map(|(i, b)| (i as u32, b.as_slice())).collect();
        let enc = RankEncoder::new(toks, vec![], Splitter::new(GPT2).unwrap()).unwrap();
        let mut words = Words::default();
        enc.with_pieces(|segment| {
            for (key, c) in counts.iter() {
                let mut ids = Vec::new();
                for_each_piece(key, |p| segment(p, &mut ids)).unwrap();
                words.push(ids, c);
            }
        });
        let tc = TrainConfig { target_tokens: cfg.max_tokens, ..Default::default() };
        let second = train(first.tokens.clone(), words, &tc, &mut |_, _| true).unwrap();
        let stage1 = first.merges.len();
        (first.merges.into_iter().chain(second.merges).collect(), stage1, second.token_counts)
    }

    /// Counts from the run counter hold their runs as piece ids (`Counts::run_pieces`), which
    /// training reads instead of the keys: the same merges and counts as from the keys alone,
    /// on any thread count, and the round trip over them gives the same totals either way.
    #[test]
    fn the_run_counters_piece_ids_give_what_the_keys_give() {
        use crate::count::RunCounter;
        use crate::encode::Tokenizer;

        let list = ["the", "cat", "sat", "on", "a", "mat", "by", "way", "of", "elephants", "1999", "été", "  "];
        let text = drawn_lines(&list, 1200, 2, 7, 11);
        // counted afresh on `threads` threads: the runs not yet in order (`Counts::early_pieces`)
        let counted = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut c = RunCounter::new(Splitter::new(GPT2).unwrap(), 4, usize::MAX, std::env::temp_dir());
            pool.install(|| c.feed(text.as_bytes())).unwrap();
            let counts = pool.install(|| c.finish(None)).unwrap();
            assert!(counts.early_pieces().is_some());
            counts
        };
        let keys = Counts::from_bytes(&counted(2).to_bytes()).unwrap();
        assert!(keys.run_pieces().is_none() && keys.len() > 10 * TASK_RUNS, "{} runs", keys.len());
        let cfg = SuperwordConfig {
            max_tokens: 256 + 300,
            transition: 256 + 60,
            min_frequency: 0,
            max_token_bytes: 0,
            snapshots: vec![256 + 200],
        };
        let want = train_superword(&keys, GPT2, &cfg, &mut |_, _, _| true).unwrap();
        assert!(want.trained.merges.len() > want.stage1_merges + 100);
        // stage 1 trained on the early pieces while the runs are put in order (or after, on one
        // thread), and from runs already in order
        let mut aside = counted(1);
        for (threads, early) in [(1, true), (2, true), (3, true), (2, false)] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let counts = if early { counted(threads) } else { counted(2) };
            if !early {
                assert!(counts.run_pieces().is_some() && counts.early_pieces().is_none());
            }
            let got = pool.install(|| train_superword(&counts, GPT2, &cfg, &mut |_, _, _| true)).unwrap();
            assert_eq!(got.trained.merges, want.trained.merges, "{threads} threads");
            assert_eq!(got.trained.token_counts, want.trained.token_counts);
            assert_eq!(got.trained.snapshots, want.trained.snapshots);
            assert_eq!((got.stage1_merges, got.transition), (want.stage1_merges, want.transition));
            aside = counts;
        }
        let out = want.trained;
        let toks: Vec<(u32, &[u8])> = out.tokens.iter().enumerate().map(|(i, b)| (i as u32, b.as_slice())).collect();
        let stage2: Vec<(u32, u32, u32)> =
            out.merges[want.stage1_merges..].iter().map(|m| (m.left, m.right, m.result)).collect();
        let enc = SuperwordEncoder::new(toks, vec![], GPT2, want.transition as u32, &stage2, 4).unwrap();
        let tok = Tokenizer::new(Box::new(enc), vec![]);
        let lines = tok.round_trip(&[text.as_bytes()], &[], 1).unwrap();
        for threads in [1, 2, 3] {
            assert_eq!(tok.round_trip_pieces(&aside, &[], threads).unwrap(), Some(lines), "{threads} threads");
            assert_eq!(tok.round_trip_pieces(&keys, &[], threads).unwrap(), Some(lines), "{threads} threads");
        }
        // training and the round trip read the piece ids: the run counter's keys stay unwritten
        assert!(!aside.keys_written());
        // written when asked for, they are the keys
        assert_eq!(aside.to_bytes(), keys.to_bytes());
        assert!(aside.keys_written());
    }

    #[test]
    fn many_tasks_on_any_thread_count_give_the_plain_two_stages() {
        // About 3,000 distinct runs over ~50 tasks of runs, words drawn from a small list so
        // that runs repeat and pieces recur across tasks.
        // (two words of 8 bytes and more with their space: pieces found by bytes, not as one number)
        let list = [
            "the",
            "cat",
            "sat",
            "on",
            "a",
            "mat",
            "by",
            "way",
            "of",
            "it",
            "is",
            "was",
            "zebra",
            "1999",
            "tokenizer",
            "elephant",
        ];
        let text = drawn_lines(&list, 1500, 3, 9, 7);
        let counts = counted(&text, 4);
        assert!(counts.len() > 20 * TASK_RUNS, "{} runs", counts.len());
        let cfg = SuperwordConfig {
            max_tokens: 256 + 250,
            transition: 256 + 100,
            min_frequency: 0,
            max_token_bytes: 0,
            snapshots: vec![],
        };
        let (merges, stage1, token_counts) = reference(&counts, &cfg);
        // stage 1 runs out of pairs within the few words; stage 2 goes on across them
        assert!(stage1 < 100 && merges.len() > stage1 + 100, "{stage1} {}", merges.len());
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let out = pool.install(|| train_superword(&counts, GPT2, &cfg, &mut |_, _, _| true)).unwrap();
            assert_eq!(out.trained.merges, merges, "{threads} threads");
            assert_eq!(out.trained.token_counts, token_counts, "{threads} threads");
            assert_eq!(out.stage1_merges, stage1);
        }
    }
}
