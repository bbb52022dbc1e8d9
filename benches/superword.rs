//! Superword BPE's phases timed apart, beside plain byte-level BPE on the same corpus:
//! `TOKREG_TRAIN_CORPUS=FILE cargo bench --bench superword` (TOKREG_TRAIN_VOCAB, default
//! 32000; TOKREG_SW_T, default 90% of it; TOKREG_SW_K, default 4; TOKREG_SW_ONLY=superbpe|bpe
//! to run one of the two; TOKREG_SW_SHARED=1 to count runs with the shared counter;
//! TOKREG_SW_COUNT_ONLY=1 to stop SuperBPE after counting). Prints wall seconds per phase:
//! counting, training (and SuperBPE's training phase by phase), and the round trip of the
//! trained version over its counted pieces or runs (what `tokreg train` does after training),
//! and the process's CPU seconds.

use std::time::Instant;

use _core::bpe::{train_counts, train_superword, CorpusConfig, RankEncoder, SuperwordConfig, SuperwordEncoder};
use _core::count::{Counter, Counts, RunCounter, Splitting};
use _core::encode::{Encode, Tokenizer};
use _core::pretok::{Splitter, CL100K};

fn cpu() -> f64 {
    // utime + stime of the whole process, from /proc (no libc dependency).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0) / 100.0;
    tick(11) + tick(12)
}

/// Tokens over every counted piece/run, each encoded once as encoding segments it and checked
/// to decode back: the round trip `tokreg train` runs after training (`Tokenizer::round_trip_pieces`,
/// on every core), so that its time here is the one the CLI pays.
fn round_trip(enc: Box<dyn Encode>, counts: &Counts) -> u64 {
    let tok = Tokenizer::new(enc, vec![]);
    let rt = tok.round_trip_pieces(counts, &[], 0).unwrap().expect("the counts stand for the lines");
    assert_eq!(rt.lost_lines, 0);
    rt.tokens
}

/// Tokens numbered by their position, as the encoders take them.
fn numbered(tokens: &[Vec<u8>]) -> Vec<(u32, &[u8])> {
    tokens.iter().enumerate().map(|(i, b)| (i as u32, b.as_slice())).collect()
}

/// Wall and CPU seconds of counting, training and the round trip, and in all, from the
/// (wall, CPU) readings at the start and after each phase.
fn phases(at: [(Instant, f64); 4]) -> String {
    let span = |a: usize, b: usize| ((at[b].0 - at[a].0).as_secs_f64(), at[b].1 - at[a].1);
    let [(cw, cc), (tw, tc), (rw, rc), (w, c)] = [span(0, 1), span(1, 2), span(2, 3), span(0, 3)];
    format!(
        "count {cw:.2} s (CPU {cc:.2}), train {tw:.2} s (CPU {tc:.2}), round trip {rw:.2} s (CPU {rc:.2}); wall {w:.2} s, CPU {c:.2} s"
    )
}

fn main() {
    let path = std::env::var("TOKREG_TRAIN_CORPUS").unwrap_or_else(|_| "../shared/data/kjv.txt".into());
    let num = |k: &str, d: usize| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let vocab = num("TOKREG_TRAIN_VOCAB", 32_000);
    let t = num("TOKREG_SW_T", vocab * 9 / 10);
    let k = num("TOKREG_SW_K", 4);
    let only = std::env::var("TOKREG_SW_ONLY").unwrap_or_default();
    let data = std::fs::read(&path).expect("corpus");
    let count = |split: Splitting| {
        let mut c = Counter::new(split, 0, usize::MAX, std::env::temp_dir());
        for chunk in data.chunks(16 << 20) {
            c.feed(chunk).unwrap();
        }
        c.finish(None).unwrap()
    };
    if only != "superbpe" {
        let (c0, t0) = (cpu(), Instant::now());
        let counts = count(Splitting::Pieces(Splitter::new(CL100K).unwrap()));
        let (t1, c1) = (Instant::now(), cpu());
        let cfg = CorpusConfig::byte_level(vocab);
        let out = train_counts(&counts, &cfg, &mut |_, _, _| true).unwrap();
        let (t2, c2) = (Instant::now(), cpu());
        let toks = numbered(&out.trained.tokens);
        let enc = RankEncoder::new(toks, vec![], Splitter::new(CL100K).unwrap()).unwrap();
        let tokens = round_trip(Box::new(enc), &counts);
        let t3 = Instant::now();
        let phases = phases([(t0, c0), (t1, c1), (t2, c2), (t3, cpu())]);
        println!("bpe      {:.1} MB, {} pieces: {phases}; {tokens} tokens", data.len() as f64 / 1e6, counts.len());
    }
    if only != "bpe" {
        let (c0, t0) = (cpu(), Instant::now());
        let counts = if std::env::var_os("TOKREG_SW_SHARED").is_some() {
            let split = Splitter::new(CL100K).unwrap();
            count(Splitting::Words(Box::new(move |line: &str, emit: &mut dyn FnMut(&str)| {
                let _ = _core::bpe::superword::count_runs(line, &split, k, emit);
            })))
        } else {
            let mut c = RunCounter::new(Splitter::new(CL100K).unwrap(), k, usize::MAX, std::env::temp_dir());
            for chunk in data.chunks(16 << 20) {
                c.feed(chunk).unwrap();
            }
            c.finish(None).unwrap()
        };
        let (t1, c1) = (Instant::now(), cpu());
        if std::env::var_os("TOKREG_SW_COUNT_ONLY").is_some() {
            let (w, c) = ((t1 - t0).as_secs_f64(), c1 - c0);
            println!("superbpe counting {} runs: {w:.2} s (CPU {c:.2})", counts.len());
            return;
        }
        let cfg = SuperwordConfig {
            max_tokens: vocab,
            transition: t,
            min_frequency: 0,
            max_token_bytes: 0,
            snapshots: vec![],
        };
        let out = train_superword(&counts, CL100K, &cfg, &mut |_, _, _| true).unwrap();
        let (t2, c2) = (Instant::now(), cpu());
        let toks = numbered(&out.trained.tokens);
        let stage2: Vec<(u32, u32, u32)> =
            out.trained.merges[out.stage1_merges..].iter().map(|m| (m.left, m.right, m.result)).collect();
        let enc = SuperwordEncoder::new(toks, vec![], CL100K, out.transition as u32, &stage2, k).unwrap();
        let tokens = round_trip(Box::new(enc), &counts);
        let t3 = Instant::now();
        let phases = phases([(t0, c0), (t1, c1), (t2, c2), (t3, cpu())]);
        let within: Vec<String> =
            out.phases.iter().map(|(name, s, c)| format!("{name} {s:.2} s (CPU {c:.2})")).collect();
        println!(
            "superbpe {:.1} MB, {} runs, {} pieces: {phases}; {tokens} tokens\n  training's phases (wall, CPU): {}",
            data.len() as f64 / 1e6,
            counts.len(),
            out.distinct_pieces,
            within.join(", ")
        );
    }
}
