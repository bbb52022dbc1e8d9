//! Counting and BPE merging on a corpus, timed apart: `TOKREG_TRAIN_CORPUS=FILE cargo bench
//! --bench train` (default: the shared kjv.txt; TOKREG_TRAIN_PATTERN: gpt2, cl100k (default)
//! or o200k; TOKREG_TRAIN_VOCAB). Prints seconds per phase and distinct pieces.

use std::time::Instant;

use _core::bpe::{train_counts, CorpusConfig};
use _core::count::{Counter, Splitting};
use _core::pretok::{Splitter, CL100K, GPT2, O200K};

fn main() {
    let path = std::env::var("TOKREG_TRAIN_CORPUS").unwrap_or_else(|_| "../shared/data/kjv.txt".into());
    let vocab: usize = std::env::var("TOKREG_TRAIN_VOCAB").ok().and_then(|v| v.parse().ok()).unwrap_or(32_000);
    let pattern = match std::env::var("TOKREG_TRAIN_PATTERN").as_deref() {
        Ok("gpt2") => GPT2,
        Ok("o200k") => O200K,
        _ => CL100K,
    };
    let data = std::fs::read(&path).expect("corpus");
    let t0 = Instant::now();
    let mut c = Counter::new(Splitting::Pieces(Splitter::new(pattern).unwrap()), 0, usize::MAX, std::env::temp_dir());
    for chunk in data.chunks(16 << 20) {
        c.feed(chunk).unwrap();
    }
    let counts = c.finish(None).unwrap();
    let t1 = Instant::now();
    let cfg = CorpusConfig::byte_level(vocab);
    let out = train_counts(&counts, &cfg, &mut |_, _, _| true).unwrap();
    let t2 = Instant::now();
    println!(
        "{path}: {:.1} MB, {} distinct pieces, count {:.3} s, merge {:.3} s, {} merges",
        data.len() as f64 / 1e6,
        counts.len(),
        (t1 - t0).as_secs_f64(),
        (t2 - t1).as_secs_f64(),
        out.trained.merges.len()
    );
}
